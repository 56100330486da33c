// Trace: one exchange as a conversation — system prompt, tools, messages with their tool calls and results,
// reasoning, images, the answer — with what this turn added to the request before it in its session, a
// stream's timeline, and the raw request and response, redacted as a cassette stores them.

import { api } from "../api.js";
import { added, answerOf, conversationOf } from "../conversation.js";
import { clipped, copyButton, h, line, ms, svg } from "../dom.js";

const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export function render(root, { args }, store) {
  const wanted = Number(args[0]) || store.entries.filter((e) => e.provider).at(-1)?.seq || store.entries.at(-1)?.seq;
  if (!wanted) {
    root.append(h("p", { class: "empty", "data-testid": "trace-empty" }, "Nothing yet: choose an exchange in Traffic once one comes."));
    return {};
  }
  const section = h("section", { class: "trace", "data-testid": "trace", "data-seq": wanted }, h("p", { class: "loading" }, `Loading exchange ${wanted}…`));
  root.append(section);
  show(section, wanted).catch((error) => section.replaceChildren(h("p", { class: "error", "data-testid": "error" }, error.message)));
  return {};
}

async function show(section, seq) {
  const { exchange, source, testId } = await api(`/journal/${seq}`);
  const body = exchange.request.body?.json;
  const conversation = conversationOf(exchange.provider, exchange.operation, body);
  const answer = answerOf(exchange.provider, exchange.operation, exchange.response);
  const parts = [heading(seq, exchange, source, testId)];
  if (conversation) {
    const turn = h("div", { class: "added", "data-testid": "added" }, h("p", { class: "loading" }, "Comparing with the request before it…"));
    parts.push(h("h2", {}, "What this turn added"), turn);
    addedBy(seq, conversation, exchange).then(
      (found) => turn.replaceChildren(...found),
      (error) => turn.replaceChildren(h("p", { class: "error" }, error.message)),
    );
    parts.push(h("h2", {}, "Conversation"), conversationView(conversation));
  }
  parts.push(h("h2", {}, "Answer"), h("div", { class: "answer", "data-testid": "answer" }, answer.length ? answer.map(partView) : h("p", { class: "empty" }, exchange.error ?? "no answer text")));
  if (exchange.response?.events) parts.push(h("h2", {}, "Stream"), timeline(exchange.response.events, exchange.timings));
  parts.push(h("h2", {}, "Raw, redacted"), raw("Request", "raw-request", exchange.request), raw("Response", "raw-response", exchange.response ?? { error: exchange.error }));
  section.replaceChildren(...parts);
}

function heading(seq, exchange, source, testId) {
  const response = exchange.response;
  return h(
    "div",
    { class: "heading" },
    h("h1", {}, `#${seq} ${exchange.request.method} `, h("span", { class: "url" }, line(exchange.request.url, 300))),
    h(
      "p",
      { class: "facts" },
      [
        source,
        exchange.provider,
        exchange.model,
        response ? `status ${response.status}` : exchange.error,
        exchange.streaming ? "streamed" : "whole",
        testId ? `test ${testId}` : null,
        `${ms(exchange.timings.total_ms)}`,
      ]
        .filter(Boolean)
        .join(" · "),
    ),
    h("p", { class: "nav" }, h("a", { href: `#/trace/${seq - 1}` }, "← previous"), " ", h("a", { href: `#/trace/${seq + 1}` }, "next →")),
  );
}

function conversationView(conversation) {
  return h(
    "div",
    { class: "conversation", "data-testid": "conversation" },
    conversation.system.length ? h("div", { class: "message system", "data-role": "system" }, h("div", { class: "role" }, "system"), conversation.system.map((text) => h("div", { class: "part text" }, clipped(text)))) : null,
    conversation.tools.length
      ? h(
          "details",
          { class: "tools", "data-testid": "tools" },
          h("summary", {}, `${conversation.tools.length} tools: ${line(conversation.tools.map((t) => t.name).join(", "), 300)}`),
          conversation.tools.map((tool) => h("div", { class: "tool" }, h("strong", {}, tool.name), " ", clipped(tool.definition, 600))),
        )
      : null,
    conversation.messages.map((message, index) => messageView(message, index)),
  );
}

function messageView(message, index) {
  return h("div", { class: `message ${message.role}`, "data-role": message.role, "data-index": index }, h("div", { class: "role" }, message.role), message.parts.map(partView));
}

function partView(part) {
  switch (part.kind) {
    case "text":
      return h("div", { class: "part text" }, clipped(part.text));
    case "reasoning":
      return h("details", { class: "part reasoning" }, h("summary", {}, "reasoning"), clipped(part.text));
    case "tool_call":
      return h("div", { class: "part tool-call", "data-testid": "tool-call" }, h("span", { class: "label" }, `→ ${part.name ?? "tool"}`), part.id ? h("span", { class: "id" }, ` ${part.id}`) : null, h("pre", {}, clipped(pretty(part.args))));
    case "tool_result":
      return h("div", { class: "part tool-result" }, h("span", { class: "label" }, `← result${part.id ? ` of ${part.id}` : ""}`), h("pre", {}, clipped(part.text)));
    case "image":
      if (part.data && IMAGES.has(part.media)) {
        return h("div", { class: "part image" }, h("img", { class: "thumb", alt: "an image the request carries", src: `data:${part.media};base64,${part.data}` }));
      }
      return h("div", { class: "part image" }, `an image${part.url ? ` at ${line(part.url, 200)} (not loaded: the page fetches nothing from elsewhere)` : ""}`);
    default:
      return h("div", { class: "part other" }, h("pre", {}, clipped(part.text)));
  }
}

function pretty(args) {
  try {
    return JSON.stringify(JSON.parse(args), null, 2);
  } catch {
    return String(args ?? "");
  }
}

async function addedBy(seq, conversation, exchange) {
  const report = await api("/report?format=json&groupBy=conversation");
  const call = report.calls.find((c) => c.exchangeId === seq);
  if (!call) return [h("p", { class: "empty" }, "This exchange is no call of a session (not a chat API's, or not answered).")];
  const before = report.calls.filter((c) => c.session === call.session && c.index < call.index).at(-1);
  if (!before) return [h("p", { "data-testid": "first-turn" }, `The first request of its session: ${conversation.messages.length} messages, ${conversation.tools.length} tools.`)];
  const previous = await api(`/journal/${before.exchangeId}`);
  const was = conversationOf(previous.exchange.provider, previous.exchange.operation, previous.exchange.request.body?.json);
  if (!was) return [h("p", {}, `The request before it (#${before.exchangeId}) cannot be read as a conversation.`)];
  const diff = added(was, conversation);
  const facts = [h("p", {}, "Against ", h("a", { href: `#/trace/${before.exchangeId}` }, `#${before.exchangeId}`), `, the request before it in session ${line(call.session, 80)}:`)];
  const list = h("ul", { class: "changes" });
  if (diff.rewritten !== null) list.append(h("li", { class: "warn", "data-change": "rewritten" }, `history rewritten from message ${diff.rewritten + 1}: ${diff.removed} earlier messages replaced`));
  list.append(h("li", { "data-change": "messages" }, `${diff.newMessages.length} new messages (from message ${diff.from + 1})`));
  if (diff.systemChanged) list.append(h("li", { class: "warn", "data-change": "system" }, "system prompt changed"));
  if (diff.toolsAdded.length) list.append(h("li", { "data-change": "tools-added" }, `tools added: ${diff.toolsAdded.join(", ")}`));
  if (diff.toolsRemoved.length) list.append(h("li", { "data-change": "tools-removed" }, `tools removed: ${diff.toolsRemoved.join(", ")}`));
  if (diff.toolsChanged.length) list.append(h("li", { "data-change": "tools-changed" }, `tools changed: ${diff.toolsChanged.join(", ")}`));
  if (diff.cacheMoved) list.append(h("li", { "data-change": "cache" }, `cache breakpoints moved: ${diff.cacheBefore.join(", ") || "none"} → ${diff.cacheAfter.join(", ") || "none"}`));
  facts.push(list, h("div", { class: "new-messages" }, diff.newMessages.map((message, index) => messageView(message, diff.from + index))));
  return facts;
}

function timeline(events, timings) {
  const times = events.map((event) => event.t_ms);
  const end = Math.max(timings.total_ms ?? 0, ...times, 1);
  const width = 900;
  const x = (t) => 10 + (t / end) * (width - 20);
  const first = events.find((event) => carriesText(event.data ?? event.json));
  const gaps = times.slice(1).map((t, i) => ({ at: times[i], gap: t - times[i] })).sort((a, b) => b.gap - a.gap).slice(0, 3);
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${width} 40`, class: "timeline", "data-testid": "timeline", "data-events": events.length },
    svg("line", { x1: 10, x2: width - 10, y1: 20, y2: 20, class: "axis" }),
    times.map((t) => svg("line", { x1: x(t), x2: x(t), y1: 10, y2: 30, class: "tick" })),
    first ? svg("circle", { cx: x(first.t_ms), cy: 20, r: 5, class: "first" }) : null,
  );
  return h(
    "div",
    {},
    chart,
    h(
      "p",
      { class: "facts" },
      `${events.length} events over ${ms(end)}`,
      first ? ` · first token at ${ms(first.t_ms)}` : "",
      gaps.length && gaps[0].gap > 0 ? ` · longest gaps: ${gaps.map((g) => `${ms(g.gap)} after ${ms(g.at)}`).join(", ")}` : "",
    ),
  );
}

function carriesText(data) {
  if (!data || typeof data !== "object") return false;
  return Boolean(data.delta?.text || data.choices?.[0]?.delta?.content || data.type === "response.output_text.delta" || data.candidates?.[0]?.content?.parts?.some((p) => p.text));
}

function raw(title, testid, value) {
  const text = JSON.stringify(value, null, 2);
  return h("details", { class: "raw", "data-testid": testid }, h("summary", {}, title, " ", copyButton(() => text)), h("pre", {}, clipped(text, 20000)));
}

