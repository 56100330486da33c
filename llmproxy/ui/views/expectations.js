// Expectations: what the mock serves, in the order it tries them, each with its hits and a script's or a
// conversation's next turn, moving live.

import { api } from "../api.js";
import { clipped, h } from "../dom.js";

export function render(root, _params, store) {
  const list = h("section", { class: "expectations", "data-testid": "expectations" }, h("p", { class: "loading" }, "Loading…"));
  root.append(list);
  const show = (expectations) => {
    if (!expectations) {
      list.replaceChildren(h("p", { class: "empty" }, "This run has no mock stage."));
      return;
    }
    if (!expectations.length) {
      list.replaceChildren(h("p", { class: "empty", "data-testid": "no-expectations" }, "No expectation stands."));
      return;
    }
    list.replaceChildren(
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, ["id", "priority", "served", "remaining", "next turn", "test", "definition"].map((t) => h("th", {}, t)))),
        h(
          "tbody",
          {},
          expectations.map((e) =>
            h(
              "tr",
              { "data-testid": "expectation", "data-id": e.id },
              h("td", {}, String(e.id)),
              h("td", {}, String(e.priority)),
              h("td", { "data-testid": "served" }, String(e.served)),
              h("td", {}, e.remaining ?? "∞"),
              h("td", { "data-testid": "next-turn" }, e.nextTurn ? Object.entries(e.nextTurn).map(([key, turn]) => `${key || "every session"}: turn ${turn}`).join("; ") : ""),
              h("td", {}, e.testId ?? ""),
              h("td", {}, h("pre", {}, clipped(JSON.stringify(e.definition, null, 2), 1200))),
            ),
          ),
        ),
      ),
    );
  };
  api("/expectations").then(
    (answer) => show(answer.expectations),
    (error) => list.replaceChildren(h("p", { class: error.status === 404 ? "empty" : "error" }, error.message)),
  );
  return {
    update(kind, counters) {
      if (kind === "counters" && counters.expectations) show(counters.expectations);
    },
  };
}
