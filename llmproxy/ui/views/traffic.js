// Traffic: every exchange as it comes, newest at the bottom, filtered; a virtual list (only the rows in view
// are in the page), so ten thousand exchanges scroll as ten.

import { clear, dollars, h, line, ms, tokens } from "../dom.js";

const ROW = 28; // pixels: every row is one line
const SPARE = 10; // rows drawn above and below what shows

const COLUMNS = [
  ["seq", "#"],
  ["at", "time"],
  ["door", "door"],
  ["source", "source"],
  ["provider", "provider"],
  ["model", "model"],
  ["status", "status"],
  ["stream", "stream"],
  ["input", "input"],
  ["cached", "cached"],
  ["output", "output"],
  ["cost", "cost"],
  ["latency", "latency"],
  ["ttft", "first token"],
  ["url", "request"],
];

function cells(entry) {
  const usage = entry.usage ?? {};
  return {
    seq: String(entry.seq),
    at: new Date(entry.at).toLocaleTimeString(),
    door: entry.door ?? "",
    source: entry.source + (entry.injected?.length ? ` (${entry.injected.join(", ")})` : ""),
    provider: entry.provider ?? "",
    model: line(entry.model ?? "", 40),
    status: entry.status === undefined || entry.status === null ? (entry.error ? "failed" : "") : String(entry.status),
    stream: entry.streaming ? "stream" : "",
    input: tokens(usage.inputTokens),
    cached: tokens(usage.cacheReadTokens),
    output: tokens(usage.outputTokens),
    cost: dollars(entry.costUsd),
    latency: timed(entry.latencyMs, entry.latencyRecorded),
    ttft: entry.streaming ? timed(entry.ttfbMs, entry.latencyRecorded) : "",
    url: `${entry.method} ${line(entry.url, 200)}`,
  };
}

// A replay answers at once: its row shows the time the recorded answer took, said to be the recording's.
function timed(value, recorded) {
  const shown = ms(value);
  return recorded && shown ? `${shown} (recorded)` : shown;
}

function matches(entry, filter) {
  if (filter.source && entry.source !== filter.source) return false;
  if (filter.provider && entry.provider !== filter.provider) return false;
  if (filter.model && entry.model !== filter.model) return false;
  if (filter.llm && !entry.provider) return false;
  if (filter.text) {
    const haystack = `${entry.url} ${entry.model ?? ""} ${entry.testId ?? ""} ${entry.error ?? ""}`.toLowerCase();
    if (!haystack.includes(filter.text.toLowerCase())) return false;
  }
  return true;
}

export function render(root, { query }, store) {
  const filter = {
    source: query.get("source") ?? "",
    provider: query.get("provider") ?? "",
    model: query.get("model") ?? "",
    text: query.get("q") ?? "",
    llm: query.get("llm") === "1",
  };
  let shown = [];
  let follow = true; // keep the newest in view while the reader is at the bottom

  const choices = (name, label) => {
    const select = h("select", { name, "data-testid": `filter-${name}`, "aria-label": label }, h("option", { value: "" }, `every ${label}`));
    return select;
  };
  const source = choices("source", "source");
  const provider = choices("provider", "provider");
  const model = choices("model", "model");
  const text = h("input", { type: "search", placeholder: "filter: URL, model, test id", "data-testid": "filter-text", value: filter.text });
  const llm = h("input", { type: "checkbox", "data-testid": "filter-llm" });
  llm.checked = filter.llm;
  const count = h("span", { class: "count", "data-testid": "traffic-count" });
  const bar = h("div", { class: "filters" }, source, provider, model, text, h("label", {}, llm, " LLM calls only"), count);

  const head = h("div", { class: "row head" }, COLUMNS.map(([key, label]) => h("span", { class: `c-${key}` }, label)));
  const spacer = h("div", { class: "spacer" });
  const rows = h("div", { class: "rows" });
  const scroller = h("div", { class: "scroller", "data-testid": "traffic" }, spacer, rows);
  root.append(h("section", { class: "traffic" }, bar, head, scroller));

  function options(select, values, chosen) {
    const have = new Set([...select.options].map((option) => option.value));
    for (const value of [...values].sort()) {
      if (!have.has(value)) select.append(h("option", { value }, value));
    }
    select.value = chosen;
  }

  function refreshChoices() {
    options(source, new Set(store.entries.map((e) => e.source)), filter.source);
    options(provider, new Set(store.entries.map((e) => e.provider).filter(Boolean)), filter.provider);
    options(model, new Set(store.entries.map((e) => e.model).filter(Boolean)), filter.model);
  }

  function rowOf(entry, index) {
    const values = cells(entry);
    const row = h(
      "a",
      {
        class: `row ${entry.provider ? "" : "muted"} ${entry.status >= 400 || entry.error ? "bad" : ""} src-${entry.source}`,
        href: `#/trace/${entry.seq}`,
        "data-seq": entry.seq,
        "data-testid": "traffic-row",
      },
      COLUMNS.map(([key]) => h("span", { class: `c-${key}`, title: key === "url" ? line(entry.url, 2000) : null }, values[key])),
    );
    row.style.top = `${index * ROW}px`; // through the CSSOM: the policy allows no style attribute
    return row;
  }

  function draw() {
    const top = scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW) - SPARE);
    const last = Math.min(shown.length, Math.ceil((top + scroller.clientHeight) / ROW) + SPARE);
    spacer.style.height = `${shown.length * ROW}px`;
    clear(rows);
    for (let index = first; index < last; index++) rows.append(rowOf(shown[index], index));
    count.textContent = `${shown.length.toLocaleString()} of ${store.entries.length.toLocaleString()} exchanges`;
  }

  function refilter() {
    shown = store.entries.filter((entry) => matches(entry, filter));
    draw();
    if (follow) scroller.scrollTop = scroller.scrollHeight;
  }

  function remember() {
    const params = new URLSearchParams();
    if (filter.source) params.set("source", filter.source);
    if (filter.provider) params.set("provider", filter.provider);
    if (filter.model) params.set("model", filter.model);
    if (filter.text) params.set("q", filter.text);
    if (filter.llm) params.set("llm", "1");
    const hash = `#/traffic${params.size ? `?${params}` : ""}`;
    history.replaceState(null, "", hash); // shareable, without a view change
  }

  for (const [select, key] of [[source, "source"], [provider, "provider"], [model, "model"]]) {
    select.addEventListener("change", () => {
      filter[key] = select.value;
      remember();
      refilter();
    });
  }
  text.addEventListener("input", () => {
    filter.text = text.value;
    remember();
    refilter();
  });
  llm.addEventListener("change", () => {
    filter.llm = llm.checked;
    remember();
    refilter();
  });
  let pending = false;
  scroller.addEventListener("scroll", () => {
    follow = scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - ROW;
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  });

  refreshChoices();
  refilter();

  let queued = false;
  return {
    update(kind, added) {
      if (kind !== "entries") return;
      let unordered = false;
      for (const entry of added) {
        if (!matches(entry, filter)) continue;
        unordered ||= shown.length > 0 && shown.at(-1).seq > entry.seq;
        shown.push(entry);
      }
      if (unordered) shown.sort((a, b) => a.seq - b.seq);
      if (queued) return; // a burst of entries is drawn once per frame
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        refreshChoices();
        draw();
        if (follow) scroller.scrollTop = scroller.scrollHeight;
      });
    },
  };
}
