"""Step 3, reconcile: conflicting claims about a one-valued slot at one valid time.

    >>> Reconcile(ctx, cs, writer=writer, ...).run(run)   # "reconciled", "contested"

Where the sources disagree, `consolidation.outcome` decides: a winner (asserted
again, by consolidation and trusted, citing every winning claim's evidence) or a
standing contest (reads mark the covered versions `contested` until it is
resolved). A contest whose conflict is gone is closed.
"""

from __future__ import annotations

from typing import Any

from ...engine.events import Events
from ...engine.materialise import Materialiser
from ...engine.vocabulary import Vocabulary
from .._reconcile import conflicts, outcome, settled
from .._run import Run
from .tools import Tools, copy_of


class Reconcile:
    def __init__(
        self,
        tools: Tools,
        *,
        vocab: Vocabulary,
        materialiser: Materialiser,
        events: Events,
    ) -> None:
        self._ctx, self._cs, self._writer = tools.ctx, tools.cs, tools.writer
        self._entities, self._decisions = tools.entities, tools.decisions
        self._vocab = vocab
        self._mat = materialiser
        self._events = events

    def run(self, run: Run) -> None:
        ns = run.namespace
        slots = run.slots
        if run.since is None:  # a full pass: only slots with a conflict or a contest
            marked = {c["slot_id"] for c in self._cs.contests(ns) if c["resolved_at"] is None}
            slots = self._cs.conflicting_slots(ns) | marked
        one = {s for s in slots if self._vocab.cardinality(ns, s) == "one"}
        if not one:
            return
        open_contests: dict[tuple[str, Any], dict[str, Any]] = {
            (c["slot_id"], c["valid_from"]): c
            for c in self._cs.contests(ns)
            if c["resolved_at"] is None and c["slot_id"] in one
        }
        copies = self._cs.duplicates(ns)
        writes: list[tuple[dict[str, Any], str, Any]] = []
        contests: list[dict[str, Any]] = []
        resolve: list[str] = []
        states = self._mat.states({s: {"id": s} for s in sorted(one)})
        for sid, st in states.items():
            if st.new:
                continue
            for start, group in conflicts(st.log).items():
                standing = open_contests.pop((sid, start), None)
                if settled(group):
                    if standing is not None:
                        resolve.append(standing["id"])
                    continue
                prints = self._fingerprints(group, copies)
                names = {a["object_id"]: self._entities.name_of(a["object_id"]) for a in group}
                out = outcome(group, fingerprint=prints, names=names)
                label = f"{st.row['subject']} {st.row['predicate']}"
                when = "always" if start is None else start.isoformat()
                if out.winner is None:
                    if standing is not None and set(standing["objects"]) == set(out.contested):
                        continue  # already marked, nothing new
                    if standing is not None:
                        resolve.append(standing["id"])
                    run.add(
                        "reconcile",
                        "contested",
                        [a["id"] for a in group],
                        f"{label} from {when}: {out.reason}",
                    )
                    contests.append(
                        {
                            "id": f"{sid}\x1f{when}\x1f{run.now.isoformat()}",
                            "namespace": ns,
                            "slot_id": sid,
                            "valid_from": start,
                            "objects": list(out.contested),
                            "reason": out.reason,
                            "recorded_at": run.now,
                        }
                    )
                    continue
                if standing is not None:
                    resolve.append(standing["id"])
                reason = f"{label} from {when}: {names[out.winner]} wins: {out.reason}"
                change = run.add("reconcile", "reconciled", [a["id"] for a in group], reason)
                winners = [a for a in group if a["id"] in out.supporters]
                # the latest winning claim sets the window; every winning claim's evidence counts
                cited = list(dict.fromkeys(e for a in winners for e in a["evidence"] or []))
                writes.append(({**winners[-1], "evidence": cited}, reason, change))
        for c in open_contests.values():
            # the conflict is gone (a claim was retracted or corrected): close the marker
            resolve.append(c["id"])
            run.add("reconcile", "resolved", [c["slot_id"]], f"no longer contested: {c['reason']}")
        if run.dry_run or not (writes or contests or resolve):
            return
        with self._ctx.store.write(ns):
            parsed = [self._reconciled(a) for a, _, _ in writes]
            written = self._writer.write_assertions(ns, parsed)
            for f, (_, reason, change) in zip(written, writes, strict=True):
                change.targets.append(f.id)
                self._decisions.note(ns, f.id, "reconcile", reason)
            k = self._ctx.tick()  # the contests' transaction time: now, not the last write
            for cid in resolve:
                self._cs.resolve_contest(cid, k)
            for c in contests:
                self._cs.create_contest({**c, "recorded_at": k})
        self._events.consolidated()

    def _fingerprints(self, group: list[Any], copies: dict[str, str]) -> dict[str, str]:
        out = {}
        for a in group:
            for e in a["evidence"] or []:
                ep = self._ctx.store.names.episode(copies.get(e, e))
                out[e] = ep["fingerprint"] if ep else e
        return out

    def _reconciled(self, a: dict[str, Any]) -> dict[str, Any]:
        """The winning claim asserted again, by consolidation and trusted."""
        copy = copy_of(a, {}, origin="reconcile", name_of=self._entities.name_of)
        return {**copy, "op": "assert", "quarantined": False}
