// Building the page: elements from data, never HTML from data (no innerHTML with values).

const SVG = "http://www.w3.org/2000/svg";

function fill(el, attrs, children, svg) {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.setAttribute("class", v);
    else if (k === "style") Object.assign(el.style, v); // CSSOM: allowed by the CSP
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (!svg && k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** An HTML element: h("a", {href: "/ui/"}, "home"). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children, false);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children, true);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** A definition list from [term, value] pairs (values may be nodes). */
export function facts(pairs) {
  return h("dl", { class: "pairs" }, pairs.filter((p) => p[1] !== undefined && p[1] !== null && p[1] !== "")
    .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** Announce something to screen readers and show it briefly. */
export function say(text) {
  const el = document.getElementById("status");
  if (el) el.textContent = text;
}

export function errorBox(err) {
  const code = err && err.code ? ` [${err.code}]` : "";
  return h("div", { class: "error", role: "alert" }, h("strong", {}, "Error" + code + ": "),
    err && err.detail ? err.detail : String(err));
}

/** Append children to `el`, skipping null/false and flattening arrays (unlike el.append). */
export function put(el, ...children) {
  return fill(el, {}, children, el instanceof SVGElement);
}
