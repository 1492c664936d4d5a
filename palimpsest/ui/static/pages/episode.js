// One episode as it arrived, and the privacy verb for it.
import { api, canWrite } from "../api.js";
import { confirmDialog } from "../confirm.js";
import { clear, errorBox, facts, h, put, say } from "../dom.js";
import { fmt } from "../time.js";

export async function render(main, { match }) {
  const id = match[0];
  document.title = `Episode ${id} · Palimpsest`;
  put(main, h("h1", { tabindex: "-1" }, "Episode"));
  const body = h("div", { id: "episode" });
  put(main, body);
  let ep;
  try {
    ep = await api("/v1/episodes/" + encodeURIComponent(id));
  } catch (err) {
    put(body, errorBox(err));
    return;
  }
  put(body, h("blockquote", { class: "big" }, ep.text),
    facts([["Id", h("code", {}, ep.id)], ["Speaker", ep.speaker], ["Author", ep.author_kind],
      ["Occurred", fmt(ep.occurred_at)], ["Recorded", fmt(ep.recorded_at)], ["Session", ep.session],
      ["Source", ep.source], ["Importance", ep.importance.toFixed(2)], ["Kind", ep.kind],
      ["Quarantined", ep.quarantined ? "yes" : "no"], ["Archived", ep.archived ? "yes" : "no"]]));
  if (!canWrite()) return;
  put(body, h("h2", {}, "Forget"), h("button", { type: "button", class: "danger", id: "erase-episode", onclick: async () => {
    const answer = await confirmDialog({
      title: "Erase this episode?",
      danger: true,
      body: [h("p", {}, h("strong", {}, "Erase is the privacy verb. "),
        "The text, its search entries and vectors leave every view at every known-at time, and the memory's files when it closes; facts that rest on this episode alone are erased with it. A content-free tombstone (id, time, reason) stays.")],
      confirm: "Erase for good",
      reason: { label: "Reason (kept in the tombstone, optional)" },
    });
    if (!answer.ok) return;
    try {
      const tombs = await api("/v1/items/" + encodeURIComponent(ep.id), { method: "DELETE", params: { reason: answer.reason } });
      put(clear(body), h("p", { class: "done", id: "erased" }, `Erased: ${tombs.length} tombstone(s) kept (`,
        tombs.map((t) => `${t.kind} ${t.id}`).join(", "), `) at ${fmt(tombs[0]?.erased_at)}.`));
      say("Episode erased.");
    } catch (err) {
      put(body, errorBox(err));
    }
  } }, "Erase this episode…"));
}
