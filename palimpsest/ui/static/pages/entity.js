// An entity: its facts as timelines over valid time, replayed through transaction time by
// the known-at slider; click a version for its evidence. URL: /ui/entity/<name>?valid_at=&known_at=
import { api, ApiError, link, session } from "../api.js";
import { badge, showVersion, STATUS, statement } from "../detail.js";
import { clear, h, put, say } from "../dom.js";
import { dateToIso, fmt, isoToDate, ms, windowText } from "../time.js";

const DAY = 86400000;

function axisRange(versions, validAt) {
  const times = [ms(validAt), Date.now()];
  for (const v of versions) {
    if (v.valid_from) times.push(ms(v.valid_from));
    if (v.valid_to) times.push(ms(v.valid_to));
  }
  let lo = Math.min(...times);
  let hi = Math.max(...times);
  if (hi - lo < 60 * DAY) {
    lo -= 30 * DAY;
    hi += 30 * DAY;
  }
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

function ticks(lo, hi) {
  const out = [];
  const first = new Date(lo).getUTCFullYear();
  const last = new Date(hi).getUTCFullYear();
  const step = Math.max(1, Math.ceil((last - first + 1) / 10));
  for (let y = first; y <= last + 1; y += step) {
    const t = Date.UTC(y, 0, 1);
    if (t >= lo && t <= hi) out.push([t, String(y)]);
  }
  return out;
}

function chart(versions, [lo, hi], validAt, pick) {
  const pct = (t) => Math.min(100, Math.max(0, ((t - lo) / (hi - lo)) * 100));
  const marker = () => h("div", { class: "valid-marker", style: { left: pct(ms(validAt)) + "%" }, "aria-hidden": "true" });
  const axis = h("div", { class: "axis", "aria-hidden": "true" },
    h("div", { class: "label" }),
    h("div", { class: "track" }, ticks(lo, hi).map(([t, text]) =>
      h("span", { class: "tick", style: { left: pct(t) + "%" } }, text)), marker()));
  const rows = versions.map((v) => {
    const st = STATUS[v.status] || { text: v.status };
    const row = h("li", { class: "row", dataset: { status: v.status, object: v.object ?? "", window: windowText(v.valid_from, v.valid_to) } });
    const label = h("div", { class: "label" },
      h("span", { class: "obj" }, v.object ?? "(erased)"), " ", badge(v.status));
    const track = h("div", { class: "track" }, marker());
    if (v.status === "erased") {
      put(track, h("span", { class: "erased-note" }, `content erased ${fmt(v.recorded_at)}`));
    } else {
      const left = v.valid_from ? pct(ms(v.valid_from)) : 0;
      const right = v.valid_to ? pct(ms(v.valid_to)) : 100;
      const name = `${v.object}, valid ${windowText(v.valid_from, v.valid_to)}, ${st.text}, recorded ${fmt(v.recorded_at)}`;
      put(track, h("button", {
        type: "button",
        class: `bar s-${v.status}${v.valid_from ? "" : " open-start"}${v.valid_to ? "" : " open-end"}`,
        style: { left: left + "%", width: Math.max(right - left, 0.8) + "%" },
        "aria-label": name,
        title: name,
        onclick: (ev) => pick(v, ev.currentTarget),
      }));
    }
    put(row, label, track);
    return row;
  });
  return h("div", { class: "chart" }, axis, h("ul", { class: "rows" }, rows));
}

function legend() {
  return h("ul", { class: "legend", "aria-label": "Version statuses" }, Object.keys(STATUS).map((s) =>
    h("li", {}, h("span", { class: `swatch s-${s}`, "aria-hidden": "true" }), badge(s))));
}

export async function render(main, { match, params, setQuery }) {
  const name = match[0];
  document.title = `${name} · Palimpsest`;
  let validAt = params.get("valid_at") || "";
  let knownAt = params.get("known_at") || "";
  const heading = h("h1", { tabindex: "-1" }, name);
  const sub = h("p", { class: "muted" });
  put(main, h("div", { class: "page-head" }, heading, sub,
    h("p", { class: "actions" },
      h("a", { href: link("/ui/graph/" + encodeURIComponent(name)), "data-nav": true, id: "to-graph" }, "Graph around it"),
      h("a", { href: link("/ui/recall", { q: name }), "data-nav": true }, "Recall about it"))));

  // --- the two time controls -------------------------------------------------------------
  const dateInput = h("input", { type: "date", id: "valid-at", value: isoToDate(validAt) });
  const slider = h("input", { type: "range", id: "known-at", min: 0, max: 0, step: 1, value: 0 });
  const sliderOut = h("output", { id: "known-at-out", for: "known-at" });
  const latest = h("button", { type: "button", class: "quiet", id: "known-now" }, "Latest");
  const today = h("button", { type: "button", class: "quiet" }, "Today");
  put(main, h("form", { class: "controls", "aria-label": "Time", onsubmit: (e) => e.preventDefault() },
    h("div", { class: "control" }, h("label", { for: "valid-at" }, "Valid at (UTC)"), dateInput, today,
      h("p", { class: "hint" }, "When it is true in the world: the dashed line.")),
    h("div", { class: "control wide" }, h("label", { for: "known-at" }, "Known at"), slider, sliderOut, latest,
      h("p", { class: "hint" }, "Replay what the memory believed, one recorded change at a time (arrow keys step)."))));

  const believed = h("section", { "aria-labelledby": "believed-h", id: "believed" });
  const timelines = h("section", { "aria-labelledby": "timelines-h", id: "timelines" });
  const incoming = h("section", { "aria-labelledby": "incoming-h", id: "incoming" });
  const panel = h("aside", { class: "detail", id: "detail", "aria-labelledby": "detail-h" },
    h("h2", { id: "detail-h", tabindex: "-1" }, "Version details"),
    h("p", { class: "muted" }, "Choose a version (a bar) to see its evidence, the assertion that made it and what replaced it."));
  put(main, h("div", { class: "split" }, h("div", {}, believed, timelines, incoming), panel));

  let moments = [];
  let pinned = Boolean(knownAt); // a known_at in the URL, or the slider moved off the latest

  async function load() {
    const q = { subject: name, valid_at: validAt, known_at: knownAt };
    const [tl, profile] = await Promise.all([
      api("/v1/timeline", { params: q }),
      api("/v1/entities/" + encodeURIComponent(name), { params: { valid_at: validAt, known_at: knownAt } }),
    ]);
    moments = tl.moments;
    main.querySelector("#to-graph").setAttribute("href", link("/ui/graph/" + encodeURIComponent(name), { valid_at: validAt, known_at: knownAt }));
    const e = tl.entity;
    const aliases = (e.aliases || []).filter((a) => a !== e.key);
    sub.textContent = `${e.type}${aliases.length ? " · also " + aliases.join(", ") : ""} · ${tl.versions.length} version(s) known at ${fmt(tl.known_at)}`;
    slider.max = String(Math.max(0, moments.length - 1));
    let i = moments.length - 1;
    if (pinned && knownAt) {
      const k = ms(knownAt);
      i = -1;
      moments.forEach((m, n) => { if (ms(m) <= k) i = n; });
    }
    slider.value = String(Math.max(0, i));
    const label = !pinned ? `now (latest change ${fmt(moments[moments.length - 1])})`
      : i < 0 ? `${fmt(knownAt)}: before anything was recorded` : fmt(knownAt);
    sliderOut.textContent = label;
    slider.setAttribute("aria-valuetext", label);

    put(clear(believed), h("h2", { id: "believed-h" }, `Believed at ${fmt(profile.valid_at)}, as known at ${fmt(profile.known_at)}`),
      profile.outgoing.length
        ? h("ul", { class: "plain believed" }, profile.outgoing.map((f) => h("li", { dataset: { predicate: f.predicate, object: f.object ?? "" } },
          statement(f), " ", h("span", { class: "muted" }, windowText(f.valid_from, f.valid_to)), " ", badge(f.status))))
        : h("p", { class: "muted" }, "Nothing about it was believed to hold then."));

    put(clear(timelines), h("h2", { id: "timelines-h" }, "Timelines over valid time"), legend());
    const groups = new Map();
    for (const v of tl.versions) {
      if (!groups.has(v.predicate)) groups.set(v.predicate, []);
      groups.get(v.predicate).push(v);
    }
    if (!groups.size) put(timelines, h("p", { class: "muted" }, "No facts about it were recorded by then."));
    const range = axisRange(tl.versions, tl.valid_at);
    for (const [pred, vs] of groups) {
      const hid = "p-" + pred.replace(/[^A-Za-z0-9_-]/g, "_");
      put(timelines, h("section", { class: "predicate", "aria-labelledby": hid, dataset: { predicate: pred } },
        h("h3", { id: hid }, pred), chart(vs, range, tl.valid_at, pick)));
    }

    put(clear(incoming), h("h2", { id: "incoming-h" }, `Facts pointing at ${e.name}`),
      profile.incoming.length
        ? h("ul", { class: "plain" }, profile.incoming.map((f) => h("li", {}, statement(f), " ",
          h("span", { class: "muted" }, windowText(f.valid_from, f.valid_to)), " ", badge(f.status))))
        : h("p", { class: "muted" }, "None at this valid and known time."));
  }

  let selected = null;
  async function pick(v, button) {
    if (selected) selected.removeAttribute("aria-pressed");
    selected = button;
    if (button) button.setAttribute("aria-pressed", "true");
    await showVersion(panel, v, { changed: load });
  }

  let timer = null;
  slider.addEventListener("input", () => {
    const i = Number(slider.value);
    pinned = i < moments.length - 1;
    knownAt = pinned ? moments[i] : "";
    sliderOut.textContent = pinned ? fmt(knownAt) : "now";
    setQuery({ known_at: knownAt });
    clearTimeout(timer);
    timer = setTimeout(() => load().then(() => say(`Known at ${sliderOut.textContent}`)), 120);
  });
  latest.addEventListener("click", async () => {
    pinned = false;
    knownAt = "";
    setQuery({ known_at: "" });
    await load();
  });
  dateInput.addEventListener("change", async () => {
    validAt = dateToIso(dateInput.value);
    setQuery({ valid_at: validAt });
    await load();
  });
  today.addEventListener("click", async () => {
    validAt = "";
    dateInput.value = "";
    setQuery({ valid_at: "" });
    await load();
  });
  try {
    await load();
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "not_found") throw err;
    main.querySelector(".controls").remove();
    main.querySelector(".split").remove();
    sub.textContent = "";
    put(main, h("p", { id: "not-found" }, `No entity named “${name}” in namespace ${session.ns ?? "default"}. `,
      h("a", { href: link("/ui/", { q: name }), "data-nav": true }, "Search for it")));
  }
}
