// The control API, read with the page's cookie (set when the page was opened with its token): the page holds
// no token of its own.

export const BASE = "/llmproxy/api/v1";
export const CHAOS = "/llmproxy/chaos";
export const access = document.querySelector('meta[name="llmproxy-access"]')?.content ?? "read";
export const canChange = access === "mutate";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** JSON from the API (`path` under its base, or the chaos endpoint); raises ApiError with the API's line. */
export async function api(path, { method = "GET", body } = {}) {
  const url = path.startsWith("/llmproxy/") ? path : BASE + path;
  const init = { method, credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["content-type"] = "application/json";
  }
  const response = await fetch(url, init);
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = text;
  }
  if (!response.ok) throw new ApiError(response.status, data?.error ?? `${response.status} ${url}`);
  return data;
}

/** The event stream: `on(name, data)` for each event; reconnects as EventSource does. */
export function subscribe(on, onState) {
  const source = new EventSource(BASE + "/events");
  for (const name of ["hello", "entry", "counters", "dropped"]) {
    source.addEventListener(name, (event) => on(name, JSON.parse(event.data)));
  }
  source.addEventListener("open", () => onState("live"));
  source.addEventListener("error", () => onState(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting"));
  return source;
}
