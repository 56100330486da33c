// The dashboard: one page, a view per URL (`#/traffic`, `#/trace/12`, …), every figure read from the control
// API, what is new pushed over its one event stream.

import { api, canChange, subscribe } from "./api.js";
import { clear, h } from "./dom.js";
import * as chaos from "./views/chaos.js";
import * as expectations from "./views/expectations.js";
import * as misses from "./views/misses.js";
import * as optimise from "./views/optimise.js";
import * as sessions from "./views/sessions.js";
import * as trace from "./views/trace.js";
import * as traffic from "./views/traffic.js";

const VIEWS = { traffic, trace, sessions, optimise, misses, chaos, expectations };

/** What the page knows of the run: the journal's summaries (oldest first) and the counters, kept up to date
 * from the event stream; views listen for changes. */
export const store = {
  entries: [],
  seqs: new Set(),
  counters: null,
  counts: null,
  dropped: 0,
  listeners: new Set(),
  add(entries) {
    const added = [];
    for (const entry of entries) {
      if (this.seqs.has(entry.seq)) continue;
      this.seqs.add(entry.seq);
      added.push(entry);
    }
    if (!added.length) return;
    const last = this.entries.at(-1);
    this.entries.push(...added);
    if (last && added[0].seq < last.seq) this.entries.sort((a, b) => a.seq - b.seq);
    this.emit("entries", added);
  },
  emit(kind, data) {
    for (const listener of this.listeners) listener(kind, data);
  },
};

const root = document.getElementById("view");
const status = document.querySelector("[data-testid=status]");
let current = null;

function route() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [name, ...rest] = path.split("/");
  const view = VIEWS[name] ? name : "traffic";
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.view === view);
  }
  if (current?.dispose) current.dispose();
  if (current?.listener) store.listeners.delete(current.listener);
  clear(root);
  root.dataset.view = view;
  current = VIEWS[view].render(root, { args: rest.map(decodeURIComponent), query: new URLSearchParams(query) }, store) ?? {};
  if (current.update) {
    current.listener = current.update;
    store.listeners.add(current.listener);
  }
}

let listed = null; // the first listing, asked for at once: it need not wait for the stream to open

async function listJournal(since = 0) {
  try {
    const page = await api(`/journal${since ? `?since=${since}` : ""}`);
    store.counts = page.counts;
    store.add(page.entries);
  } catch (error) {
    store.emit("error", error.message);
  }
}

function showState(state) {
  status.replaceChildren(
    h("span", { class: `dot ${state}`, "data-state": state }),
    `${state}${canChange ? "" : " · read-only"}${store.dropped ? ` · ${store.dropped} updates dropped` : ""}`,
  );
}

listed = listJournal();
subscribe(
  async (name, data) => {
    if (name === "hello") {
      store.counts = data.counts ?? null;
      await listed; // entries pushed while it loads are added as they come: `add` keeps order, once each
      await listJournal(store.entries.at(-1)?.seq ?? 0); // what came before the stream opened, or while it was away
    } else if (name === "entry") {
      store.add([data]);
    } else if (name === "counters") {
      store.counters = data;
      if (data.counts) store.counts = data.counts;
      store.emit("counters", data);
    } else if (name === "dropped") {
      store.dropped = data.dropped;
      showState("live");
      await listJournal(store.entries.at(-1)?.seq ?? 0); // what was dropped is in the journal still
    }
  },
  showState,
);

window.addEventListener("hashchange", route);
route();
