// Review: what waits in quarantine (promote or reject, with a reason), consolidation's
// reports, entity merges (unmerge), and what changed since a date.
import { api, canWrite, entityPath, link } from "../api.js";
import { confirmDialog } from "../confirm.js";
import { badge, statement } from "../detail.js";
import { clear, errorBox, facts, h, put, say } from "../dom.js";
import { dateToIso, fmt, isoToDate, windowText } from "../time.js";

function quarantineItem(q, reload) {
  const f = q.fact;
  const rid = "reason-" + f.id;
  const reason = h("input", { id: rid, type: "text", required: true, maxlength: 2000 });
  const act = async (verb) => {
    if (!reason.value.trim()) {
      reason.focus();
      say("Say why first: the reason is kept with the decision.");
      return;
    }
    try {
      await api(`/v1/facts/${encodeURIComponent(f.id)}:${verb}`, { method: "POST", body: { reason: reason.value.trim() } });
      say(`${verb === "promote" ? "Promoted" : "Rejected"}: ${f.subject} ${f.predicate} ${f.object}.`);
      await reload();
    } catch (err) {
      put(li, errorBox(err));
    }
  };
  const li = h("li", { class: "card quarantined", dataset: { fact: f.id } },
    h("p", { class: "statement" }, statement(f), " ", badge("quarantined")),
    facts([["Valid", windowText(f.valid_from, f.valid_to)], ["Author", f.author_kind],
      ["Confidence", f.confidence.toFixed(2)], ["Recorded", fmt(f.recorded_at)]]),
    h("p", { class: "why-h" }, "Why it waits:"), h("ul", { class: "why" }, q.why.map((w) => h("li", {}, w))),
    q.pending ? h("p", { class: "pending" }, q.pending) : null,
    q.evidence.length ? h("ul", { class: "evidence" }, q.evidence.map((ep) => h("li", {},
      h("blockquote", {}, ep.text), h("p", { class: "muted" }, `${ep.speaker} (${ep.author_kind}), ${fmt(ep.occurred_at)}, session ${ep.session ?? "–"}`))))
      : h("p", { class: "muted" }, "No stored evidence."));
  if (canWrite()) {
    put(li, h("div", { class: "review-actions" }, h("label", { for: rid }, "Reason"), reason,
      h("button", { type: "button", class: "primary", onclick: () => act("promote") }, "Promote"),
      h("button", { type: "button", class: "danger", onclick: () => act("reject") }, "Reject")));
  }
  return li;
}

async function quarantine(section) {
  const page = await api("/v1/quarantine", { params: { limit: 50 } });
  put(clear(section), h("h2", { id: "q-h" }, "Waiting in quarantine"),
    h("p", { class: "hint" }, "Claims from other authors, weak readings and instruction-like text wait here, visible but not believed, until corroborated or reviewed."),
    page.items.length ? h("ul", { class: "cards", id: "quarantine-list" }, page.items.map((q) => quarantineItem(q, () => quarantine(section))))
      : h("p", { class: "muted", id: "quarantine-empty" }, "Nothing waits in quarantine."),
    !canWrite() ? h("p", { class: "muted" }, "This token is read-only: promoting and rejecting need write rights.") : null);
}

function reportCard(r) {
  const counts = Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(", ") || "nothing to consolidate";
  return h("li", { class: "report" }, h("details", {},
    h("summary", {}, `${fmt(r.finished_at)}${r.dry_run ? " (dry run)" : ""}: ${counts}`),
    r.changes.length ? h("table", { class: "facts" },
      h("thead", {}, h("tr", {}, ["Step", "Action", "Reason", "Targets"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, r.changes.map((c) => h("tr", {}, h("td", {}, c.step), h("td", {}, c.action), h("td", {}, c.reason),
        h("td", {}, h("code", {}, c.targets.join(" ")))))))
      : h("p", { class: "muted" }, "No changes."),
    Object.keys(r.omitted || {}).length ? h("p", { class: "muted" }, "Counted, not listed: " +
      Object.entries(r.omitted).map(([k, v]) => `${v} ${k}`).join(", ")) : null));
}

async function reports(section) {
  const page = await api("/v1/consolidation/reports", { params: { limit: 20 } });
  const list = h("ul", { class: "plain", id: "report-list" }, page.items.map(reportCard));
  put(clear(section), h("h2", { id: "r-h" }, "Consolidation reports"),
    page.items.length ? list : h("p", { class: "muted" }, "No consolidation has run in this namespace yet."));
  if (canWrite()) {
    put(section, h("button", { type: "button", onclick: async () => {
      const r = await api("/v1/consolidation", { method: "POST", params: { dry_run: true } });
      put(section, h("h3", {}, "What a run now would change (dry run, nothing written)"), h("ul", { class: "plain" }, reportCard(r)));
      say("Dry run done.");
    } }, "Preview a consolidation run (dry run)"));
  }
}

async function merges(section) {
  const all = await api("/v1/merges");
  const rows = all.slice().reverse().map((m) => {
    const row = h("tr", { dataset: { merge: m.id } },
      h("td", {}, h("a", { href: link(entityPath(m.loser)), "data-nav": true }, m.loser), " → ",
        h("a", { href: link(entityPath(m.winner)), "data-nav": true }, m.winner)),
      h("td", {}, m.reason), h("td", {}, fmt(m.merged_at)),
      h("td", {}, m.unmerged_at ? `unmerged ${fmt(m.unmerged_at)}` : "merged"));
    const cell = h("td", {});
    if (!m.unmerged_at && canWrite()) {
      put(cell, h("button", { type: "button", onclick: async () => {
        const answer = await confirmDialog({ title: `Unmerge ${m.loser} from ${m.winner}?`,
          body: [`The facts the merge moved go back to ${m.loser}, by new assertions (nothing is deleted); the merge is not proposed again.`],
          confirm: "Unmerge" });
        if (!answer.ok) return;
        try {
          const change = await api(`/v1/merges/${encodeURIComponent(m.id)}:unmerge`, { method: "POST" });
          say(change.reason);
          await merges(section);
        } catch (err) {
          put(section, errorBox(err));
        }
      } }, "Unmerge…"));
    }
    put(row, cell);
    return row;
  });
  put(clear(section), h("h2", { id: "m-h" }, "Entity merges"),
    rows.length ? h("table", { class: "facts" }, h("thead", {}, h("tr", {},
      ["Merged", "Why", "When", "State", "Undo"].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, rows))
      : h("p", { class: "muted" }, "No merges."));
}

async function changes(section, since, setQuery) {
  const input = h("input", { id: "since", type: "date", value: isoToDate(since) });
  const out = h("div", { id: "changes-out" });
  const show = async () => {
    const iso = dateToIso(input.value);
    setQuery({ since: iso });
    const c = await api("/v1/changes", { params: { since: iso } });
    const group = (title, items) => h("section", { class: "change-group", dataset: { group: title } }, h("h3", {}, `${title} (${items.length})`),
      items.length ? h("ul", { class: "plain" }, items.map((f) => h("li", {}, statement(f), " ",
        h("span", { class: "muted" }, `${windowText(f.valid_from, f.valid_to)}, recorded ${fmt(f.recorded_at)}`), " ", badge(f.status))))
        : h("p", { class: "muted" }, "None."));
    put(clear(out), h("p", {}, `From ${fmt(c.since)} to ${fmt(c.until)}, as known at ${fmt(c.known_at)}:`),
      group("learned", c.learned), group("revised", c.revised), group("started", c.started), group("ended", c.ended));
  };
  put(clear(section), h("h2", { id: "c-h" }, "Changes since"),
    h("form", { class: "controls", onsubmit: (ev) => {
      ev.preventDefault();
      show().catch((err) => put(out, errorBox(err)));
    } }, h("div", { class: "control" }, h("label", { for: "since" }, "Since (UTC date)"), input),
    h("div", { class: "control" }, h("button", { type: "submit" }, "Show changes"))), out);
  await show();
}

export async function render(main, { params, setQuery }) {
  document.title = "Review · Palimpsest";
  const since = params.get("since") || new Date(Date.now() - 30 * 86400000).toISOString().slice(0, 10) + "T00:00:00Z";
  const sections = ["quarantine", "reports", "merges", "changes"].map((id) =>
    h("section", { id, class: "review-section", "aria-labelledby": id[0] + "-h" }, h("h2", { id: id[0] + "-h" }, id)));
  put(main, h("h1", { tabindex: "-1" }, "Review"),
    h("nav", { "aria-label": "On this page", class: "toc" }, h("ul", {},
      [["quarantine", "Quarantine"], ["reports", "Consolidation reports"], ["merges", "Merges"], ["changes", "Changes since"]]
        .map(([id, t]) => h("li", {}, h("a", { href: "#" + id }, t))))),
    ...sections);
  const [q, r, m, c] = sections;
  const guard = (p, el) => p.catch((err) => put(el, errorBox(err)));
  await Promise.all([guard(quarantine(q), q), guard(reports(r), r), guard(merges(m), m), guard(changes(c, since, setQuery), c)]);
}
