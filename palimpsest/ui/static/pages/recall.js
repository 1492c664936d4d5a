// Recall explorer: a question in; the hits out with their calibrated score, each channel's
// part and provenance; or the abstention, with the best score it saw.
import { api, link } from "../api.js";
import { badge } from "../detail.js";
import { clear, facts, h, put } from "../dom.js";
import { fmt, isoToLocal, localToIso, windowText } from "../time.js";

function channels(hit) {
  const rows = Object.entries(hit.channels || {});
  if (!rows.length) return null;
  return h("table", { class: "channels" }, h("caption", {}, "Channel scores"),
    h("tbody", {}, rows.map(([k, v]) => h("tr", {}, h("th", { scope: "row" }, k), h("td", {}, Number(v).toFixed(3))))));
}

function hitCard(hit, { missed = false } = {}) {
  const pct = Math.round(Math.min(1, Math.max(0, hit.score)) * 100);
  return h("li", { class: `hit${missed ? " missed" : ""}`, dataset: { kind: hit.kind, score: hit.score.toFixed(3) } },
    h("div", { class: "score" },
      h("span", { class: "num" }, hit.score.toFixed(2)),
      h("span", { class: "meter", "aria-hidden": "true" }, h("span", { style: { width: pct + "%" } }))),
    h("div", { class: "body" },
      h("p", { class: "kind" }, hit.kind, " ", hit.status && hit.status !== "current" ? badge(hit.status) : null),
      hit.warning ? h("p", { class: "warning", role: "note" }, h("span", { "aria-hidden": "true" }, "⚠ "), hit.warning) : null,
      h("blockquote", {}, hit.text),
      facts([["Speaker", hit.speaker], ["Author", hit.author_kind], ["Occurred", hit.occurred_at ? fmt(hit.occurred_at) : null],
        ["Recorded", hit.recorded_at ? fmt(hit.recorded_at) : null],
        ["Valid", hit.kind === "fact" ? windowText(hit.valid_from, hit.valid_to) : null],
        ["Episode", hit.episode_id ? h("a", { href: link("/ui/episode/" + encodeURIComponent(hit.episode_id)), "data-nav": true }, hit.episode_id) : null],
        ["Evidence", hit.evidence && hit.evidence.length ? hit.evidence.join(", ") : null]]),
      channels(hit)));
}

export async function render(main, { params, setQuery }) {
  document.title = "Recall · Palimpsest";
  const q = h("input", { id: "rq", type: "search", name: "q", value: params.get("q") || "", required: true });
  const k = h("input", { id: "rk", type: "number", min: 1, max: 100, value: params.get("k") || "5" });
  const valid = h("input", { id: "rv", type: "datetime-local", step: 1, value: isoToLocal(params.get("valid_at")) });
  const known = h("input", { id: "rkn", type: "datetime-local", step: 1, value: isoToLocal(params.get("known_at")) });
  const out = h("div", { id: "recall-out", "aria-live": "polite" });
  async function ask() {
    const query = { q: q.value, k: k.value, valid_at: localToIso(valid.value), known_at: localToIso(known.value) };
    setQuery(query);
    put(clear(out), h("p", { class: "muted" }, "Recalling…"));
    const r = await api("/v1/recall:explain", { params: { query: query.q, k: query.k, valid_at: query.valid_at, known_at: query.known_at } });
    clear(out);
    if (r.abstained) {
      put(out, h("div", { class: "abstained", id: "abstained" },
        h("h2", {}, "The memory abstained"),
        h("p", {}, `Nothing reached the relevance floor (${r.floor.toFixed(2)}), so recall returns nothing. `,
          r.best_score === null ? "It found no candidate at all."
            : `The best it saw scored ${r.best_score.toFixed(2)}.`)),
      r.near_misses.length ? h("section", { "aria-labelledby": "missed-h" }, h("h3", { id: "missed-h" }, "Below the floor (not returned)"),
        h("ol", { class: "hits" }, r.near_misses.map((x) => hitCard(x, { missed: true })))) : "");
    } else {
      put(out, h("h2", { id: "hits-h" }, `${r.hits.length} hit(s) above the floor (${r.floor.toFixed(2)})`),
        h("ol", { class: "hits", "aria-labelledby": "hits-h" }, r.hits.map((x) => hitCard(x))));
    }
  }
  put(main, h("h1", { tabindex: "-1" }, "Recall explorer"),
    h("form", { class: "controls", role: "search", onsubmit: (ev) => {
      ev.preventDefault();
      ask();
    } },
    h("div", { class: "control wide" }, h("label", { for: "rq" }, "Question"), q),
    h("div", { class: "control" }, h("label", { for: "rk" }, "Hits at most"), k),
    h("div", { class: "control" }, h("label", { for: "rv" }, "Valid at (UTC, empty: now)"), valid),
    h("div", { class: "control" }, h("label", { for: "rkn" }, "Known at (UTC, empty: now)"), known),
    h("div", { class: "control" }, h("button", { type: "submit" }, "Recall"))),
    h("p", { class: "hint" }, "Scores are calibrated relevance from 0 to 1 (words and meaning on one scale); a quarantined memory comes with a warning."),
    out);
  if (q.value) await ask();
}
