// Misses: each request nothing answered, beside the closest recording or expectation, the JSON paths where
// they differ highlighted.

import { api } from "../api.js";
import { h, line } from "../dom.js";

export function render(root, _params, store) {
  const list = h("section", { class: "misses", "data-testid": "misses" }, h("p", { class: "loading" }, "Loading…"));
  root.append(list);
  let seen = -1;
  const load = async () => {
    try {
      const { misses } = await api("/misses");
      list.replaceChildren(...(misses.length ? misses.slice().reverse().map(missView) : [h("p", { class: "empty", "data-testid": "no-misses" }, "No miss: every request was answered.")]));
    } catch (error) {
      list.replaceChildren(h("p", { class: "error", "data-testid": "error" }, error.message));
    }
  };
  load();
  return {
    update(kind, added) {
      if (kind === "entries" && added.some((entry) => entry.source === "missed" && entry.seq > seen)) {
        seen = added.at(-1).seq;
        load();
      }
    },
  };
}

function missView(miss) {
  const recording = miss.recording;
  const expectation = miss.expectations[0];
  return h(
    "article",
    { class: "miss", "data-testid": "miss", "data-seq": miss.seq },
    h("h2", {}, h("a", { href: `#/trace/${miss.seq}` }, `#${miss.seq}`), ` ${miss.method} ${line(miss.url, 200)}`, miss.model ? ` · ${miss.model}` : "", miss.testId ? ` · test ${miss.testId}` : ""),
    recording
      ? h(
          "div",
          { class: "closest" },
          h("h3", {}, recording.answers ? `recording ${recording.exchange} would answer it now` : `closest recording: ${recording.exchange ?? "none"}${recording.cassette ? ` in ${recording.cassette}` : ""}`),
          recording.reason ? h("p", {}, recording.reason) : null,
          recording.differences.length
            ? h(
                "table",
                { class: "differences", "data-testid": "differences" },
                h("thead", {}, h("tr", {}, h("th", {}, "JSON path"), h("th", {}, "recorded"), h("th", {}, "this request"))),
                h("tbody", {}, recording.differences.map((d) => h("tr", { class: "differs" }, h("td", { class: "path", "data-testid": "difference-path" }, d.path), h("td", { class: "recorded" }, line(d.recorded, 400)), h("td", { class: "received" }, line(d.received, 400))))),
              )
            : null,
        )
      : null,
    miss.expectations.length
      ? h(
          "div",
          { class: "closest" },
          h("h3", {}, `closest expectation: ${expectation.name}${expectation.answers ? " (would answer now)" : ""}`),
          h("ul", { class: "failed", "data-testid": "expectation-failed" }, expectation.failed.map((reason) => h("li", { class: "differs" }, reason))),
          miss.expectations.length > 1 ? h("p", { class: "facts" }, `then ${miss.expectations.slice(1).map((e) => e.name).join(", ")}`) : null,
        )
      : null,
  );
}
