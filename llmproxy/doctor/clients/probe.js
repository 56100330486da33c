// Node's own TLS (its bundled roots plus NODE_EXTRA_CA_CERTS) fetches URL through PROXY with CONNECT.
//     node probe.js PROXY URL TOKEN
// Run by `llmproxy doctor` with the environment under test; prints one JSON line.
const http = require("http");
const tls = require("tls");

const [proxy, target] = process.argv.slice(2, 4).map((u) => new URL(u));
const token = process.argv[4];
const UNTRUSTED = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
]);

function say(outcome, detail) {
  console.log(JSON.stringify({ outcome, detail }));
  process.exit(0);
}

setTimeout(() => say("failed", "no answer in 30 s"), 30000);
const tunnel = { host: proxy.hostname, port: proxy.port, method: "CONNECT", path: `${target.hostname}:443` };
const connect = http.request(tunnel);
connect.on("error", (e) => say("failed", e.message));
connect.on("connect", (res, socket) => {
  if (res.statusCode !== 200) say("failed", `CONNECT answered ${res.statusCode}`);
  const secure = tls.connect({ socket, servername: target.hostname }, () => {
    secure.write(`GET ${target.pathname} HTTP/1.1\r\nHost: ${target.hostname}\r\nConnection: close\r\n\r\n`);
  });
  let body = "";
  secure.on("data", (d) => (body += d));
  secure.on("end", () => say(body.includes(token) ? "trusted" : "failed", body.slice(0, 200)));
  secure.on("error", (e) => say(UNTRUSTED.has(e.code) ? "untrusted" : "failed", `${e.code}: ${e.message}`));
});
connect.end();
