// A modal confirmation (the native <dialog>: focus stays inside, Escape cancels).
import { h, put } from "./dom.js";

/**
 * Ask before a change: resolves {ok, reason}. `reason` asks for a text when given
 * ({label, required}).
 */
export function confirmDialog({ title, body, confirm, danger = false, reason = null }) {
  return new Promise((resolve) => {
    const id = "dlg-" + Math.random().toString(36).slice(2);
    const input = reason
      ? h("textarea", { id: id + "-reason", name: "reason", rows: 2, required: reason.required || false })
      : null;
    const cancel = h("button", { type: "button", class: "quiet", onclick: () => done(false) }, "Cancel");
    const ok = h("button", { type: "submit", class: danger ? "danger" : "primary" }, confirm);
    const form = h("form", { method: "dialog", onsubmit: (ev) => {
      ev.preventDefault();
      if (input && reason.required && !input.value.trim()) {
        input.focus();
        return;
      }
      done(true);
    } },
    h("h2", { id: id + "-title" }, title),
    [body].flat().map((p) => (p instanceof Node ? p : h("p", {}, p))),
    input ? [h("label", { for: input.id }, reason.label), input] : null,
    h("div", { class: "actions" }, cancel, ok));
    const dlg = h("dialog", { "aria-labelledby": id + "-title", class: danger ? "danger" : "" }, form);
    function done(confirmed) {
      const text = input ? input.value.trim() : "";
      dlg.close();
      dlg.remove();
      resolve({ ok: confirmed, reason: text });
    }
    dlg.addEventListener("cancel", (ev) => {
      ev.preventDefault();
      done(false);
    });
    put(document.body, dlg);
    dlg.showModal();
    (input || cancel).focus();
  });
}
