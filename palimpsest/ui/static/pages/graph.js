// The believed graph around an entity at (valid_at, known_at): one or two hops, bounded.
// Drawn as SVG links (each node a link to its entity page), with the same facts as a table.
import { api, entityPath, link } from "../api.js";
import { statement } from "../detail.js";
import { clear, h, put, s } from "../dom.js";
import { fmt, isoToLocal, localToIso, windowText } from "../time.js";

const W = 900;
const H = 620;

function layout(g) {
  const cx = W / 2;
  const cy = H / 2;
  const pos = new Map();
  const byHop = [[], [], []];
  for (const n of g.nodes) byHop[n.hops].push(n);
  pos.set(g.center.id, [cx, cy]);
  const radius = [0, g.hops === 1 ? 230 : 150, 270];
  const angle = new Map();
  byHop[1].forEach((n, i) => {
    const a = (2 * Math.PI * i) / Math.max(1, byHop[1].length) - Math.PI / 2;
    angle.set(n.id, a);
    pos.set(n.id, [cx + radius[1] * Math.cos(a), cy + radius[1] * Math.sin(a)]);
  });
  // a second-hop node sits on the outer ring, ordered by the angle of the node that reached it
  const parent = new Map();
  for (const e of g.edges) {
    for (const [a, b] of [[e.subject_id, e.object_id], [e.object_id, e.subject_id]]) {
      if (angle.has(a) && !parent.has(b)) parent.set(b, angle.get(a));
    }
  }
  const outer = byHop[2].slice().sort((a, b) => (parent.get(a.id) ?? 0) - (parent.get(b.id) ?? 0));
  outer.forEach((n, i) => {
    const a = (2 * Math.PI * i) / Math.max(1, outer.length) - Math.PI / 2;
    pos.set(n.id, [cx + radius[2] * Math.cos(a), cy + radius[2] * Math.sin(a)]);
  });
  return pos;
}

function picture(g, params) {
  const pos = layout(g);
  const labels = g.edges.length <= 40;
  const edges = g.edges.map((e) => {
    const [x1, y1] = pos.get(e.subject_id) || [0, 0];
    const [x2, y2] = pos.get(e.object_id) || [0, 0];
    return s("g", { class: "edge" },
      s("line", { x1, y1, x2, y2, "marker-end": "url(#arrow)" }),
      labels ? s("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle" }, e.predicate) : null);
  });
  const nodes = g.nodes.map((n) => {
    const [x, y] = pos.get(n.id);
    const href = link(entityPath(n.name), params);
    return s("a", { href, class: `node hop-${n.hops}`, "data-nav": "", "aria-label": `${n.name} (${n.hops === 0 ? "centre" : n.hops + " hop" + (n.hops > 1 ? "s" : "")})` },
      s("circle", { cx: x, cy: y, r: n.hops === 0 ? 14 : 9 }),
      s("text", { x, y: y + (n.hops === 0 ? 30 : 22), "text-anchor": "middle" }, n.name));
  });
  return s("svg", { viewBox: `0 0 ${W} ${H}`, class: "graph", role: "group", "aria-label": `Graph of ${g.nodes.length} entities around ${g.center.name}` },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 20, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z" }))),
    s("g", { "aria-hidden": "true" }, edges), nodes);
}

export async function render(main, { match, params, setQuery }) {
  const name = match[0];
  document.title = `Graph: ${name} · Palimpsest`;
  const state = {
    hops: params.get("hops") || "1",
    limit: params.get("limit") || "50",
    valid_at: params.get("valid_at") || "",
    known_at: params.get("known_at") || "",
  };
  const hops = h("select", { id: "hops" }, ["1", "2"].map((n) => h("option", { value: n, selected: n === state.hops }, n)));
  const limit = h("input", { id: "limit", type: "number", min: 1, max: 500, value: state.limit });
  const valid = h("input", { id: "g-valid", type: "datetime-local", step: 1, value: isoToLocal(state.valid_at) });
  const known = h("input", { id: "g-known", type: "datetime-local", step: 1, value: isoToLocal(state.known_at) });
  const out = h("div", { id: "graph-out" });
  put(main, h("h1", { tabindex: "-1" }, `Graph around ${name}`),
    h("p", {}, h("a", { href: link(entityPath(name), { valid_at: state.valid_at, known_at: state.known_at }), "data-nav": true }, `Back to ${name}`)),
    h("form", { class: "controls", "aria-label": "Graph options", onsubmit: async (ev) => {
      ev.preventDefault();
      state.hops = hops.value;
      state.limit = limit.value;
      state.valid_at = localToIso(valid.value);
      state.known_at = localToIso(known.value);
      setQuery(state);
      await load();
    } },
    h("div", { class: "control" }, h("label", { for: "hops" }, "Hops"), hops),
    h("div", { class: "control" }, h("label", { for: "limit" }, "At most nodes"), limit),
    h("div", { class: "control" }, h("label", { for: "g-valid" }, "Valid at (UTC, empty: now)"), valid),
    h("div", { class: "control" }, h("label", { for: "g-known" }, "Known at (UTC, empty: now)"), known),
    h("div", { class: "control" }, h("button", { type: "submit" }, "Show"))),
    out);

  async function load() {
    const g = await api("/v1/neighbourhood", { params: { entity: name, ...state } });
    const keep = { valid_at: state.valid_at, known_at: state.known_at };
    put(clear(out), 
      h("p", { id: "graph-count" }, `${g.nodes.length} node(s) and ${g.edges.length} fact(s) within ${g.hops} hop(s), at most ${g.limit} nodes; valid at ${fmt(g.valid_at)}, known at ${fmt(g.known_at)}.`,
        g.truncated ? h("strong", { class: "warn" }, " More lay within reach: raise the limit to see them.") : null),
      picture(g, keep),
      h("h2", {}, "The facts drawn"),
      g.edges.length ? h("table", { class: "facts" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Fact"), h("th", { scope: "col" }, "Valid"), h("th", { scope: "col" }, "Recorded"))),
        h("tbody", {}, g.edges.map((e) => h("tr", {}, h("td", {}, statement(e)), h("td", {}, windowText(e.valid_from, e.valid_to)), h("td", {}, fmt(e.recorded_at))))))
        : h("p", { class: "muted" }, "No believed facts touch it at this valid and known time."));
  }
  await load();
}
