// Sessions: each session of the run and the call graph `explain` builds of it — a node per message and per
// tool call, read top to bottom, so fifty turns stay readable.

import { api } from "../api.js";
import { dollars, h, line, tokens } from "../dom.js";

export function render(root, { query }) {
  const chosen = query.get("session");
  const list = h("aside", { class: "session-list", "data-testid": "sessions" }, h("p", { class: "loading" }, "Loading…"));
  const graph = h("div", { class: "graph", "data-testid": "graph" });
  root.append(h("section", { class: "sessions" }, list, graph));
  load(list, graph, chosen).catch((error) => list.replaceChildren(h("p", { class: "error", "data-testid": "error" }, error.message)));
  return {};
}

async function load(list, graph, chosen) {
  const report = await api("/report?format=json&groupBy=conversation");
  if (!report.sessions.length) {
    list.replaceChildren(h("p", { class: "empty", "data-testid": "no-sessions" }, "No session yet: no chat API call was answered."));
    return;
  }
  const session = chosen ?? report.sessions.at(-1).id;
  list.replaceChildren(
    h("h2", {}, "Sessions"),
    h(
      "ul",
      {},
      report.sessions.map((s) =>
        h(
          "li",
          { class: s.id === session ? "active" : "" },
          h("a", { href: `#/sessions?session=${encodeURIComponent(s.id)}`, "data-testid": "session" }, line(s.id, 60)),
          h("span", { class: "facts" }, ` ${s.callCount} calls · ${tokens(s.inputTokens)} in · ${dollars(s.estimatedCostUsd)}`),
        ),
      ),
    ),
  );
  const explained = await api(`/explain?format=json&groupBy=conversation&session=${encodeURIComponent(session)}`);
  const explanation = explained.explanation;
  if (!explanation) {
    graph.replaceChildren(h("p", { class: "empty" }, "Nothing to explain in this session."));
    return;
  }
  const calls = report.calls.filter((c) => c.session === session);
  const edges = explanation.callGraph.edges;
  const results = new Map(edges.filter((e) => e.kind === "RESULT").map((e) => [e.from, e.to]));
  graph.replaceChildren(
    h("h2", {}, `Session ${line(session, 80)}: ${calls.length} calls, ${explanation.messageCount} messages, ${explanation.assistantTurns} assistant turns`),
    h("p", { class: "facts" }, `tools called in order: ${line(explanation.toolCallSequence.join(" → "), 600) || "none"}`),
    h(
      "ol",
      { class: "nodes", "data-testid": "call-graph" },
      explanation.callGraph.nodes.map((node) =>
        h(
          "li",
          { class: `node ${node.kind.toLowerCase()}`, "data-kind": node.kind, "data-node": node.id },
          h("span", { class: "kind" }, node.kind.replace("_", " ").toLowerCase()),
          " ",
          h("span", { class: "label" }, node.label),
          results.has(node.id) ? h("span", { class: "facts" }, ` → its result is ${results.get(node.id)}`) : null,
        ),
      ),
    ),
    h("h3", {}, "Calls"),
    h(
      "ol",
      { class: "calls" },
      calls.map((c) => h("li", {}, h("a", { href: `#/trace/${c.exchangeId}` }, `#${c.exchangeId}`), ` ${c.model ?? ""} · ${tokens(c.inputTokens)} in · ${tokens(c.outputTokens)} out · ${dollars(c.estimatedCostUsd)}${c.toolCalls.length ? ` · tools ${c.toolCalls.map((t) => t.name).join(", ")}` : ""}`)),
    ),
  );
}
