// Optimise: the report over what the run saw so far (the API's `report`), refreshed as calls come: its
// verdict, hero cards, charts, signals with their fixes, and the report to download.

import { BASE, api } from "../api.js";
import { copyButton, dollars, h, line, ms, svg, tokens } from "../dom.js";

const REFRESH = 2000; // at most one report per this many milliseconds while calls come

export function render(root, _params, store) {
  const section = h("section", { class: "optimise", "data-testid": "optimise" }, h("p", { class: "loading" }, "Loading the report…"));
  root.append(section);
  let timer = null;
  let last = 0;
  const load = async () => {
    last = Date.now();
    try {
      section.replaceChildren(...view(await api("/report?format=json")));
    } catch (error) {
      section.replaceChildren(h("p", { class: "error", "data-testid": "error" }, error.message));
    }
  };
  load();
  return {
    update(kind) {
      if (kind !== "entries" || timer) return;
      timer = setTimeout(() => {
        timer = null;
        load();
      }, Math.max(0, REFRESH - (Date.now() - last)));
    },
    dispose() {
      clearTimeout(timer);
    },
  };
}

function view(report) {
  const totals = report.totals;
  const verdict = report.verdict;
  const banner = h(
    "div",
    { class: `banner grade-${verdict.grade}`, "data-testid": "verdict", "data-grade": verdict.grade },
    h("span", { class: "grade" }, verdict.grade),
    h("div", {}, h("strong", {}, `${dollars(verdict.totalEstimatedSavingUsd) || "$0"} recoverable`, verdict.costIsEstimated ? " (estimated)" : ""), h("p", {}, verdict.rationale)),
  );
  const cards = h(
    "div",
    { class: "cards", "data-testid": "cards" },
    card("calls", tokens(totals.callCount), totals.failedCallCount ? `${totals.failedCallCount} failed` : ""),
    card("cost", dollars(totals.estimatedCostUsd) || "$0", totals.unpricedCallCount ? `${totals.unpricedCallCount} unpriced` : ""),
    card("input tokens", tokens(totals.inputTokens), `${tokens(totals.cachedInputTokens)} cached`),
    card("output tokens", tokens(totals.outputTokens), totals.reasoningTokens ? `${tokens(totals.reasoningTokens)} reasoning` : ""),
    card("cache hits", `${Math.round(totals.cacheHitRatio * 100)}%`, ""),
    card("tool calls", tokens(totals.toolCallCount), `${totals.retryCallCount} retries`),
  );
  const calls = report.calls;
  const charts = h(
    "div",
    { class: "charts" },
    chart("Cost per call", "chart-cost", calls, (c) => Number(c.estimatedCostUsd ?? 0), dollars),
    chart("Tokens per call", "chart-tokens", calls, (c) => c.inputTokens + c.outputTokens, tokens),
    chart("Cached input per call", "chart-cache", calls, (c) => c.cachedInputTokens, tokens),
    chart("Latency per call", "chart-latency", calls, (c) => c.latencyMs ?? 0, ms),
  );
  const signals = h(
    "div",
    { class: "signals", "data-testid": "signals" },
    report.signals.length ? report.signals.map(signalView) : h("p", { class: "empty" }, "No signal: nothing to fix."),
  );
  const downloads = h(
    "p",
    { class: "downloads", "data-testid": "downloads" },
    "Download the report: ",
    [
      ["markdown", "Markdown brief", "report.md"],
      ["json", "JSON", "report.json"],
      ["csv", "CSV", "report.csv"],
      ["html", "HTML", "report.html"],
    ].map(([format, label, name]) => [h("a", { href: `${BASE}/report?format=${format}`, download: name, "data-format": format }, label), " "]),
  );
  return [banner, cards, h("h2", {}, "Charts"), charts, h("h2", {}, "Signals"), signals, downloads];
}

function card(title, value, note) {
  return h("div", { class: "card" }, h("div", { class: "title" }, title), h("div", { class: "value" }, value), h("div", { class: "note" }, note));
}

function chart(title, testid, calls, value, format) {
  const width = 420;
  const height = 120;
  const values = calls.map(value);
  const top = Math.max(...values, 0) || 1;
  const step = calls.length ? width / calls.length : width;
  const bars = calls.map((call, i) => {
    const barHeight = (values[i] / top) * (height - 10);
    const bar = svg("rect", { class: "bar", x: i * step, y: height - barHeight, width: Math.max(step - 1, 1), height: barHeight, "data-call": call.index, "data-value": values[i] });
    bar.append(svg("title", {}, `call ${call.index}: ${format(values[i])} · ${call.model ?? ""}`));
    return bar;
  });
  return h("figure", { class: "chart", "data-testid": testid }, h("figcaption", {}, title, ` (max ${format(top)})`), svg("svg", { viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "none" }, bars));
}

function signalView(signal) {
  const fix = signal.fix;
  const snippet = fix.configSnippet ?? fix.exampleExpectation;
  return h(
    "article",
    { class: `signal ${signal.severity}`, "data-testid": "signal", "data-id": signal.id },
    h("h3", {}, `${signal.severity}: ${signal.title}`),
    h("p", {}, signal.detail),
    h("p", { class: "facts" }, `calls ${line(signal.affectedCalls.join(", "), 120)}`, signal.estimatedSavingUsd ? ` · saves ${dollars(signal.estimatedSavingUsd)}` : ""),
    h("p", {}, h("strong", {}, "Fix: "), fix.summary, " — ", fix.action, " ", copyButton(() => `${fix.summary}\n${fix.action}${snippet ? `\n\n${snippet}` : ""}`, "Copy the fix")),
    snippet ? h("pre", {}, snippet) : null,
  );
}
