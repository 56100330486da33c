// Chaos: the active profile, quota and budget counters and the faults injected, moving live; a host's profile
// put from the page, for a time (TTL).

import { CHAOS, api, canChange } from "../api.js";
import { h } from "../dom.js";

export function render(root, _params, store) {
  const state = h("pre", { class: "state", "data-testid": "chaos-state" }, "Loading…");
  const injected = h("div", { class: "counters", "data-testid": "chaos-injected" });
  const message = h("p", { class: "notice", "data-testid": "chaos-message" });
  const host = h("input", { name: "host", placeholder: "api.openai.com", "data-testid": "chaos-host" });
  const profile = h("textarea", { name: "chaos", rows: 6, "data-testid": "chaos-profile", placeholder: '{"errorStatus": 529}' });
  const ttl = h("input", { name: "ttl", type: "number", min: 1, placeholder: "seconds (empty: until removed)", "data-testid": "chaos-ttl" });
  const apply = h("button", { type: "submit", "data-testid": "chaos-apply", disabled: !canChange }, "Put");
  const clearAll = h("button", { type: "button", "data-testid": "chaos-clear", disabled: !canChange }, "Remove every host's");
  const form = h(
    "form",
    { class: "edit", "data-testid": "chaos-form" },
    h("label", {}, "Host ", host),
    h("label", {}, "Profile (JSON, docs/chaos.md) ", profile),
    h("label", {}, "For ", ttl),
    h("div", {}, apply, " ", clearAll),
    canChange ? null : h("p", { class: "facts" }, "Read-only: this page's token cannot change the run."),
    message,
  );
  root.append(h("section", { class: "chaos" }, h("h2", {}, "Faults injected"), injected, h("h2", {}, "Change it"), form, h("h2", {}, "Active"), state));

  const show = (snapshot) => {
    if (!snapshot) {
      state.textContent = "This run has no chaos stage.";
      return;
    }
    state.textContent = JSON.stringify(snapshot, null, 2);
    const counts = Object.entries(snapshot.injected ?? {});
    injected.replaceChildren(...(counts.length ? counts.map(([kind, n]) => h("span", { class: "counter", "data-kind": kind }, h("strong", {}, String(n)), ` ${kind}`)) : [h("span", { class: "empty" }, "none yet")]));
  };
  const load = () => api(CHAOS).then(show, (error) => (state.textContent = error.message));
  load();
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const body = { host: host.value.trim(), chaos: JSON.parse(profile.value || "{}") };
      if (ttl.value) body.ttlMillis = Math.round(Number(ttl.value) * 1000);
      await api(CHAOS, { method: "PUT", body });
      message.textContent = `Put for ${body.host}${ttl.value ? ` for ${ttl.value} s` : ""}: the next request to it meets it.`;
      load();
    } catch (error) {
      message.textContent = error.message;
    }
  });
  clearAll.addEventListener("click", async () => {
    try {
      await api(CHAOS, { method: "DELETE" });
      message.textContent = "Every host's chaos removed.";
      load();
    } catch (error) {
      message.textContent = error.message;
    }
  });
  return {
    update(kind, counters) {
      if (kind === "counters") show(counters.chaos);
    },
  };
}
