// The dashboard's shell: who is asking, which namespace, and which page the URL names.
import { api, ApiError, session, setToken } from "./api.js";
import { clear, errorBox, h, put } from "./dom.js";
import * as entity from "./pages/entity.js";
import * as episode from "./pages/episode.js";
import * as graph from "./pages/graph.js";
import * as home from "./pages/home.js";
import * as recall from "./pages/recall.js";
import * as review from "./pages/review.js";

const ROUTES = [
  [/^\/ui\/?$/, home, "home"],
  [/^\/ui\/entity\/(.+)$/, entity, "home"],
  [/^\/ui\/graph\/(.+)$/, graph, "home"],
  [/^\/ui\/recall\/?$/, recall, "recall"],
  [/^\/ui\/review\/?$/, review, "review"],
  [/^\/ui\/episode\/(.+)$/, episode, "home"],
];

const main = () => document.getElementById("main");

export function navigate(url, { replace = false } = {}) {
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  return route();
}

/** Change the query string of this page without a new history entry or a re-render. */
export function setQuery(params) {
  const url = new URL(location.href);
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === "") url.searchParams.delete(k);
    else url.searchParams.set(k, String(v));
  }
  history.replaceState(null, "", url.pathname + url.search);
}

function signIn(message) {
  const el = clear(main());
  document.title = "Sign in · Palimpsest";
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "off",
    required: true, spellcheck: "false" });
  const form = h("form", { class: "card signin", onsubmit: async (ev) => {
    ev.preventDefault();
    setToken(input.value.trim());
    await start();
  } },
  h("h1", { tabindex: "-1" }, "Sign in"),
  h("p", {}, "This server asks for an API token (from ", h("code", {}, "palimpsest token create"),
    "). It is kept in this tab only and sent with each request; closing the tab forgets it."),
  message ? h("p", { class: "error", role: "alert" }, message) : null,
  h("label", { for: "token" }, "API token"), input,
  h("button", { type: "submit" }, "Sign in"));
  put(el, form);
  input.focus();
}

function renderWho() {
  const who = clear(document.getElementById("who"));
  const a = session.access;
  if (!a) return;
  const select = h("select", { id: "ns-select", onchange: () => {
    const url = new URL(location.href);
    url.searchParams.set("ns", select.value);
    navigate(url.pathname + url.search);
  } }, a.namespaces.map((n) => h("option", { value: n, selected: n === session.ns }, n)));
  put(who, h("label", { for: "ns-select" }, "Namespace"), select,
    h("span", { class: "rights" }, a.can_write ? "read & write" : "read only"));
  if (session.auth === "tokens") {
    put(who, h("button", { type: "button", class: "quiet", onclick: () => {
      setToken(null);
      session.access = null;
      clear(document.getElementById("who"));
      signIn("Signed out.");
    } }, "Sign out"));
  }
}

async function route() {
  const path = location.pathname;
  const params = new URLSearchParams(location.search);
  session.ns = params.get("ns") || (session.access ? session.access.namespace : null);
  renderWho();
  for (const [re, page, section] of ROUTES) {
    const m = path.match(re);
    if (!m) continue;
    document.querySelectorAll("nav a[data-section]").forEach((a) => {
      if (a.dataset.section === section) a.setAttribute("aria-current", "page");
      else a.removeAttribute("aria-current");
    });
    const el = clear(main());
    try {
      await page.render(el, { match: m.slice(1).map(decodeURIComponent), params, navigate, setQuery });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      put(el, errorBox(err));
    }
    const heading = el.querySelector("h1");
    if (heading && document.activeElement === document.body) heading.focus({ preventScroll: true });
    return;
  }
  const el = clear(main());
  put(el, h("h1", { tabindex: "-1" }, "Not found"), h("p", {}, "No dashboard page here. ",
    h("a", { href: "/ui/", "data-nav": true }, "Back to the entities.")));
}

async function start() {
  try {
    const health = await api("/v1/health", { namespace: false });
    session.auth = health.auth;
    if (health.auth === "tokens" && !session.token) return signIn();
    session.access = await api("/v1/access", { namespace: false });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return signIn("That token was not accepted.");
    put(clear(main()), errorBox(err));
    return;
  }
  await route();
}

session.onUnauthorized = () => {
  setToken(null);
  session.access = null;
  signIn("The server did not accept the token (revoked?). Sign in again.");
};

document.addEventListener("click", (ev) => {
  const a = ev.target.closest && ev.target.closest("a[data-nav]");
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey) return;
  const href = typeof a.href === "string" ? a.href : a.href.baseVal; // SVG links too
  const url = new URL(href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith("/ui")) return;
  ev.preventDefault();
  const el = main();
  navigate(url.pathname + url.search).then(() => {
    const heading = el.querySelector("h1");
    if (heading) heading.focus({ preventScroll: false });
  });
});
window.addEventListener("popstate", () => route());
start();
