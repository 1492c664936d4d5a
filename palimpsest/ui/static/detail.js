// One version up close: its assertion, its evidence, what replaced it, and the privacy verb.
import { api, canWrite, entityPath, link } from "./api.js";
import { confirmDialog } from "./confirm.js";
import { clear, errorBox, facts, h, put, say } from "./dom.js";
import { fmt, windowText } from "./time.js";

export const STATUS = {
  current: { icon: "●", text: "current" },
  ended: { icon: "◼", text: "ended" },
  superseded: { icon: "↷", text: "superseded" },
  retracted: { icon: "✕", text: "retracted" },
  quarantined: { icon: "⚠", text: "quarantined" },
  contested: { icon: "⁇", text: "contested" },
  erased: { icon: "∅", text: "erased" },
};

/** A status shown by icon, word and pattern (never by colour alone). */
export function badge(status) {
  const st = STATUS[status] || { icon: "?", text: status };
  return h("span", { class: `badge s-${status}` }, h("span", { class: "icon", "aria-hidden": "true" }, st.icon),
    " ", st.text);
}

export function statement(f) {
  return [h("a", { href: link(entityPath(f.subject)), "data-nav": true }, f.subject), " ",
    h("span", { class: "pred" }, f.predicate), " ",
    f.object === null ? h("em", {}, "(no object)")
      : h("a", { href: link(entityPath(f.object)), "data-nav": true }, f.object)];
}

function episodeCard(ep) {
  return h("li", { class: "episode" },
    h("blockquote", {}, ep.text),
    facts([["Speaker", ep.speaker], ["Author", ep.author_kind], ["Occurred", fmt(ep.occurred_at)],
      ["Recorded", fmt(ep.recorded_at)], ["Session", ep.session], ["Source", ep.source]]),
    h("a", { href: link("/ui/episode/" + encodeURIComponent(ep.id)), "data-nav": true }, "Open this episode"));
}

/** Fill `panel` with the explanation of version `f`; `changed()` after an erase. */
export async function showVersion(panel, f, { changed } = {}) {
  clear(panel);
  put(panel, h("h2", { id: "detail-h", tabindex: "-1" }, "Version details"));
  if (f.status === "erased") {
    put(panel, h("p", {}, badge("erased"), ` on ${fmt(f.recorded_at)}: its content is gone from every view.`),
      facts([["Assertion", h("code", {}, f.id)], ["Reason", f.reason]]));
    panel.querySelector("h2").focus();
    return;
  }
  let x;
  try {
    x = await api(`/v1/facts/${encodeURIComponent(f.id)}/explanation`, { params: { version_id: f.version_id } });
  } catch (err) {
    put(panel, errorBox(err));
    return;
  }
  const v = x.fact;
  const a = x.assertion;
  put(panel, 
    h("p", { class: "statement" }, statement(v)),
    facts([["Status", badge(v.status)], ["Valid", windowText(v.valid_from, v.valid_to)],
      ["Believed from", fmt(v.recorded_at)], ["Believed until", v.expired_at ? fmt(v.expired_at) : "still believed"],
      ["Confidence", v.confidence.toFixed(2)]]),
    h("h3", {}, "The assertion that made it"),
    facts([["Id", h("code", {}, a.id)], ["Operation", a.op], ["Origin", a.origin], ["Author", a.author_kind],
      ["Recorded", fmt(a.recorded_at)], ["Window asserted", windowText(a.valid_from, a.valid_to)],
      ["Quarantined", a.quarantined ? "yes" : "no"],
      ["Retracted", a.retracted_at ? `${fmt(a.retracted_at)}${a.retract_reason ? ": " + a.retract_reason : ""}` : null],
      ["Decided by", a.decided_by ? `${a.decided_by}: ${a.decision_reason}` : null]]),
    h("h3", {}, "Evidence"),
    x.evidence.length ? h("ul", { class: "evidence" }, x.evidence.map(episodeCard))
      : h("p", { class: "muted" }, "No stored episode supports it (asserted directly)."),
    x.missing_evidence.length ? h("p", { class: "muted" }, `Cited but gone (erased): ${x.missing_evidence.join(", ")}`) : null,
    h("h3", {}, "What replaced it"),
    x.superseded_by.length
      ? h("ul", { class: "plain" }, x.superseded_by.map((r) => h("li", {}, statement(r), " ",
        h("span", { class: "muted" }, windowText(r.valid_from, r.valid_to)), " ", badge(r.status))))
      : h("p", { class: "muted" }, v.expired_at ? "It was withdrawn, not replaced." : "Nothing: it is still believed."),
  );
  if (canWrite()) {
    put(panel, h("h3", {}, "Forget"), h("button", { type: "button", class: "danger", onclick: () => eraseFact(v, changed) },
      "Erase this fact…"));
  }
  panel.querySelector("h2").focus();
}

export async function eraseFact(v, changed) {
  const answer = await confirmDialog({
    title: "Erase this fact?",
    danger: true,
    body: [
      h("p", {}, h("strong", {}, "Erase is the privacy verb. "),
        "“", statement(v), "” and every version it made leave every view, at every known-at time, and the memory's files when it closes. Only a content-free tombstone (id, time, reason) stays."),
      "To correct a belief instead (keeping its history), retract or assert again.",
    ],
    confirm: "Erase for good",
    reason: { label: "Reason (kept in the tombstone, optional)" },
  });
  if (!answer.ok) return;
  const tombs = await api(`/v1/items/${encodeURIComponent(v.id)}`, { method: "DELETE", params: { reason: answer.reason } });
  say(`Erased ${tombs.length} item(s); tombstones kept.`);
  if (changed) await changed();
}
