// Home: find an entity by name or alias; the namespace's counts and its entities.
import { api, entityPath, link } from "../api.js";
import { clear, facts, h, put } from "../dom.js";

const PAGE = 60;

function entityLink(e) {
  const aliases = (e.aliases || []).filter((a) => a !== e.key);
  return h("li", {}, h("a", { href: link(entityPath(e.name)), "data-nav": true }, e.name),
    aliases.length ? h("span", { class: "muted" }, ` (also ${aliases.join(", ")})`) : null,
    e.type && e.type !== "thing" ? h("span", { class: "tag" }, e.type) : null);
}

export async function render(main, { params, setQuery }) {
  document.title = "Entities · Palimpsest";
  const q = params.get("q") || "";
  const input = h("input", { id: "q", type: "search", name: "q", value: q, autocomplete: "off",
    "aria-describedby": "q-help" });
  const results = h("div", { id: "results", "aria-live": "polite" });
  let timer = null;
  let latest = 0;
  async function search(text) {
    // Enter must not leave the typing debounce pending: it would clear the answer shown
    clearTimeout(timer);
    const mine = ++latest;
    setQuery({ q: text });
    clear(results);
    if (!text.trim()) return;
    const found = await api("/v1/entities:search", { params: { q: text, limit: 20 } });
    if (mine !== latest) return; // a newer search owns the results
    put(results, found.length
      ? h("ul", { class: "links", "aria-label": "Matching entities" }, found.map(entityLink))
      : h("p", { class: "muted" }, `No entity whose name or alias contains “${text}”.`));
  }
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => search(input.value).catch(() => {}), 200);
  });
  const form = h("form", { role: "search", class: "search", onsubmit: (ev) => {
    ev.preventDefault();
    search(input.value);
  } },
  h("label", { for: "q" }, "Find an entity"), input, h("button", { type: "submit" }, "Search"),
  h("p", { id: "q-help", class: "muted" }, "By name or alias, case-insensitive; names that start with it come first."));
  put(main, h("h1", { tabindex: "-1" }, "Entities"), form, results);
  if (q) await search(q);

  const [stats, first] = await Promise.all([
    api("/v1/stats"),
    api("/v1/entities", { params: { limit: PAGE } }),
  ]);
  put(main, h("section", { "aria-labelledby": "counts-h" }, h("h2", { id: "counts-h" }, `Namespace ${stats.namespace}`),
    facts([["Episodes", stats.episodes], ["Entities", stats.entities], ["Assertions", stats.assertions],
      ["Versions", stats.versions], ["Tombstones", stats.tombstones], ["Predicates", stats.predicates]])));
  const list = h("ul", { class: "links columns", "aria-label": "Entities" }, first.items.map(entityLink));
  const section = h("section", { "aria-labelledby": "all-h" }, h("h2", { id: "all-h" }, "All entities"), list);
  let next = first.next_offset;
  const more = h("button", { type: "button", onclick: async () => {
    const page = await api("/v1/entities", { params: { limit: PAGE, offset: next } });
    put(list, ...page.items.map(entityLink));
    next = page.next_offset;
    if (next === null) more.remove();
  } }, "Show more");
  if (next !== null) put(section, more);
  if (!first.items.length) put(section, h("p", { class: "muted" }, "This namespace holds no entities."));
  put(main, section);
}
