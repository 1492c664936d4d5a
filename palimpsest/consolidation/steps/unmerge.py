"""`unmerge`: undo an entity merge by new assertions, or refuse naming what rests on it.

    >>> mem.unmerge("mg_0f3a…")      # -> ConsolidationChange(action="unmerged", ...)
    >>> mem.unmerge("mg_1")          # a later merge moved its copies: Conflict naming mg_2

An unmerge retracts the copies the merge made (wherever they stand now),
asserts the originals again on the loser and points the loser's names back at
it. Later work can rest on a merge: a later merge that moved its copies or its
names on (chained merges, A←B then C←AB), a promotion that retracted a moved
quarantined copy, or a promotion or reconciliation that cites a copy's
evidence. Undoing the merge under them would leave facts on both entities, so
`unmerge` refuses (`Conflict`, listing them) until they are undone: unmerge
later merges newest first, retract what consolidation wrote. A copy that a
later merge moved and that merge's unmerge brought back is followed to where
it stands (each restoration is recorded as "unmerged <id>: restores <copy>").
A copy someone retracted stays retracted: its original is not restored.
"""

from __future__ import annotations

import re
from typing import Any

from ...engine.events import Events
from ...engine.rows import entity_model
from ...errors import Conflict, NotFound, ValidationError
from ...models import ConsolidationChange
from .tools import Tools, copy_of

_PROMOTED = re.compile(r"promoted as (\S+)")
# consolidation's verdicts on a quarantined copy (confirmed, rejected): the original
# goes back to quarantine on the loser and is judged again there
_VERDICT = "consolidation: "
_BUILT_ON = ("promote", "reconcile")


def _restores(merge_id: str, copy_id: str) -> str:
    return f"unmerged {merge_id}: restores {copy_id}"


class Unmerge:
    def __init__(
        self,
        tools: Tools,
        *,
        events: Events,
    ) -> None:
        self._ctx, self._cs, self._writer = tools.ctx, tools.cs, tools.writer
        self._entities, self._decisions = tools.entities, tools.decisions
        self._events = events

    def unmerge(self, ns: str, merge_id: str) -> ConsolidationChange:
        """Reverse a merge by new assertions (nothing is deleted); it is not proposed again.

        >>> mem.unmerge("mg_0f3a…")

        Raises Conflict when later work rests on the merge (its message and
        `details["blockers"]` name each piece).
        """
        if not isinstance(merge_id, str) or not merge_id:
            raise ValidationError("merge id: a non-empty string", field="id")
        ctx, store = self._ctx, self._ctx.store
        with ctx.lock:
            m = self._cs.merge(merge_id)
            if m is None or m["namespace"] != ns:
                raise NotFound(f"no merge {merge_id[:80]!r}", id=merge_id[:80])
            if m["unmerged_at"] is not None:
                raise Conflict(f"{merge_id} was already unmerged", id=merge_id)
            loser = store.names.entity(m["loser"])
            winner = store.names.entity(m["winner"])
            if loser is None or winner is None:
                raise NotFound(f"an entity of {merge_id} was erased", id=merge_id)
            plan = self._unmerge_plan(ns, m)
            why = f"unmerged {merge_id}"
            with store.write(ns):
                store.names.add_entity_keys((ns, key, loser["id"]) for key in m["keys"])
                keep = [a for a in winner["aliases"] or [] if a not in set(m["keys"])]
                self._cs.set_aliases(winner["id"], keep)
                self._events.names_changed()
                copies, sources = [], []
                name_of = self._entities.name_of
                for old, standing, restore in plan:
                    if standing is not None:
                        self._writer.retract(ns, standing, reason=why)
                    orig = store.slots.assertion(old) if restore else None
                    if orig is not None:
                        copies.append(copy_of(orig, {}, origin="unmerge", name_of=name_of))
                        sources.append(old)
                restored = [f.id for f in self._writer.write_assertions(ns, copies)]
                for rid, old in zip(restored, sources, strict=True):
                    self._decisions.note(ns, rid, "unmerge", _restores(merge_id, old))
                self._cs.set_unmerged(merge_id, ctx.tick())
            self._events.names_changed()
            self._events.consolidated()
            name = entity_model(loser).name
            return ConsolidationChange(
                step="unmerge",
                action="unmerged",
                targets=[merge_id, *restored],
                reason=f"{name!r} separated again from {winner['name']!r}",
            )

    def _unmerge_plan(self, ns: str, m: dict[str, Any]) -> list[tuple[str, str | None, bool]]:
        """Per moved assertion: (original, its copy standing now or None, restore the
        original?). Raises Conflict naming the later work that rests on the merge."""
        merges = self._cs.merges(ns)
        later = [x for x in merges if x["id"] != m["id"] and x["merged_at"] >= m["merged_at"]]
        moved_by = {p.split(">", 1)[0]: x for x in later for p in x["moved"] or []}
        blockers: dict[str, str] = {}
        keys = set(m["keys"] or [])
        for x in later:
            if x["unmerged_at"] is None and (
                x["loser"] == m["winner"] or keys & set(x["keys"] or [])
            ):
                blockers[x["id"]] = self._merge_label(x)
        plan: list[tuple[str, str | None, bool]] = []
        seen: list[dict[str, Any]] = []  # every copy row on the way, for the evidence check
        for pair in m["moved"] or []:
            old, new = pair.split(">", 1)
            standing, restore = self._follow(ns, new, moved_by, blockers, seen)
            plan.append((old, standing, restore))
        self._built_on(ns, m, seen, blockers)
        if blockers:
            listed = "; ".join(blockers[k] for k in sorted(blockers))
            raise Conflict(
                f"cannot unmerge {m['id']}: later work rests on it: {listed}. Unmerge later"
                " merges first (newest first) and retract what rests on it, then unmerge again",
                id=m["id"],
                blockers=sorted(blockers),
            )
        return plan

    def _follow(
        self,
        ns: str,
        aid: str,
        moved_by: dict[str, dict[str, Any]],
        blockers: dict[str, str],
        seen: list[dict[str, Any]],
    ) -> tuple[str | None, bool]:
        """Where a moved copy stands now: (standing id or None, restore the original?)."""
        visited: set[str] = set()
        while aid not in visited:
            visited.add(aid)
            row = self._ctx.store.slots.assertion(aid)
            if row is None:
                return None, False  # erased: its content must not come back
            seen.append(row)
            if row["retracted_at"] is None:
                return aid, True
            x = moved_by.get(aid)
            if x is None:
                reason = row["retract_reason"] or ""
                if found := _PROMOTED.search(reason):
                    pid = found.group(1).rstrip(".;,)")
                    blockers[pid] = f"promotion {pid}, which retracted the moved copy {aid}"
                    return None, False
                return None, reason.startswith(_VERDICT)
            if x["unmerged_at"] is None:
                blockers[x["id"]] = self._merge_label(x)
                return None, False
            back = self._cs.decided_by(ns, "unmerge", _restores(x["id"], aid))
            if not back:
                return None, True  # restored before restorations were recorded
            aid = back[0]
        return None, False

    def _built_on(
        self,
        ns: str,
        m: dict[str, Any],
        seen: list[dict[str, Any]],
        blockers: dict[str, str],
    ) -> None:
        """Standing promotions and reconciliations since the merge, in a copy's slot,
        citing a copy's evidence."""
        cited: dict[str, set[str]] = {}
        for row in seen:
            cited.setdefault(row["slot_id"], set()).update(row["evidence"] or [])
        if not any(cited.values()):
            return
        for d in self._cs.decisions_since(ns, m["merged_at"], _BUILT_ON):
            a = self._ctx.store.slots.assertion(d["id"])
            if (
                a is not None
                and a["retracted_at"] is None
                and set(a["evidence"] or []) & cited.get(a["slot_id"], set())
            ):
                label = "promotion" if d["step"] == "promote" else "reconciliation"
                blockers[d["id"]] = f"{label} {d['id']}, which cites the moved facts' evidence"

    def _merge_label(self, x: dict[str, Any]) -> str:
        loser, winner = self._entities.name_of(x["loser"]), self._entities.name_of(x["winner"])
        return f"merge {x['id']} ({loser!r} into {winner!r})"
