// Building the page from data: every text is a text node (textContent), never HTML, so model output, tool
// arguments and prompts show as written, whatever they hold.

const LIMIT = 2000; // characters of one text shown before "show all"

/** An element: `attrs` as attributes or properties (never an event handler given as text), then children. */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) {
      if (typeof value === "function") element.addEventListener(name.slice(2), value); // never a handler as text
    } else if (name === "class") {
      element.className = value;
    } else if (name === "dataset") {
      Object.assign(element.dataset, value);
    } else if (name === "href") {
      element.setAttribute("href", safeHref(value));
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/** An SVG element, for the charts. */
export function svg(tag, attrs = {}, ...children) {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value !== undefined && value !== null) element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Only the page's own links and its API: a link from the data (a `javascript:` one) is never followed. */
function safeHref(value) {
  const text = String(value);
  if (text.startsWith("#") || text.startsWith("/llmproxy/")) return text;
  return "#";
}

/** A long text cut to `limit` characters, with a button that shows the rest when asked (a 5 MB line stays a
 * few thousand characters in the page until then). */
export function clipped(text, limit = LIMIT) {
  const value = String(text ?? "");
  if (value.length <= limit) return h("span", { class: "text" }, value);
  const shown = h("span", { class: "text" }, value.slice(0, limit));
  const more = h(
    "button",
    {
      class: "more",
      type: "button",
      onclick: () => {
        shown.textContent = value;
        more.remove();
      },
    },
    `… show all ${value.length.toLocaleString()} characters`,
  );
  return h("span", {}, shown, more);
}

/** One line of a list: at most `limit` characters, no line breaks. */
export function line(text, limit = 160) {
  const value = String(text ?? "").replace(/\s+/g, " ");
  return value.length > limit ? value.slice(0, limit) + "…" : value;
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

/** A button that copies `text()` to the clipboard. */
export function copyButton(text, label = "Copy") {
  const button = h("button", { type: "button", class: "copy" }, label);
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Copy failed";
    }
    setTimeout(() => (button.textContent = label), 1500);
  });
  return button;
}

export function tokens(value) {
  return value === undefined || value === null ? "" : Number(value).toLocaleString();
}

export function dollars(value) {
  if (value === undefined || value === null) return "";
  const number = Number(value);
  return number >= 0.01 ? `$${number.toFixed(2)}` : `$${number.toPrecision(2)}`;
}

export function ms(value) {
  if (value === undefined || value === null) return "";
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}
