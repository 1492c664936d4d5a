"""Consolidation steps 1, 3, 5, 6 and 7: dedupe, reconcile, expire, decay, index.

    >>> self._dedupe_step(run); self._reconcile_step(run)   # inside Memory.consolidate

Each step reads only what changed since the watermark (`run.since`), decides
with the pure rules of `consolidation/`, and writes in its own transaction, so
a crash between steps leaves finished steps done and the next run redoes the
rest (every decision is recomputed from the stored state, so redoing is safe).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from ._consolidate_base import _Base
from ._consolidate_reads import forget
from .consolidation import Run, cold, conflicts, duplicates, idle_days, outcome, settled
from .consolidation._decay import LOW_IMPORTANCE, MIN_AGE_DAYS
from .consolidation._run import LISTED
from .models import ConsolidationChange
from .recall._vectors import DEFAULT_VECTOR_THRESHOLD, stale

_DAY = timedelta(days=1)


class _Steps(_Base):
    # --- 1. dedupe ------------------------------------------------------------------------
    def _dedupe_step(self, run: Run) -> None:
        ns = run.namespace
        if run.since is not None and not self._cs.new_episode_count(ns, run.since):
            return
        rows = self._cs.episode_digest(ns)
        new = None
        if run.since is not None:
            new = {r["id"] for r in rows if r["recorded_at"] >= run.since}
        known = self._cs.duplicates(ns)
        found = duplicates(rows, new=new, known=known, vectors=self._episode_vectors(ns))
        for d in found:
            how = "the same text" if d.similarity >= 1.0 else f"cosine {d.similarity:.3f}"
            run.add(
                "dedupe",
                "deduplicated",
                [d.id, d.canonical],
                f"{d.id} repeats {d.canonical} ({how}, same speaker); kept as evidence, archived",
            )
        if run.dry_run or not found:
            return
        with self._store.write():
            self._cs.record_duplicates(
                [
                    {
                        "id": d.id,
                        "namespace": ns,
                        "canonical": d.canonical,
                        "similarity": d.similarity,
                        "recorded_at": run.now,
                    }
                    for d in found
                ]
            )

    def _episode_vectors(self, ns: str) -> dict[str, Any] | None:
        if self._embedder is None:
            return None  # without an embedder: normalised-text equality only
        ids, emb, _ = self._rs_embeddings(ns)
        return {i: emb[n] for n, i in enumerate(ids)} if ids else None

    def _rs_embeddings(self, ns: str) -> tuple[list[str], Any, Any]:
        from .graph import RecallStore

        try:
            return RecallStore(self._store.db).embeddings(ns)
        except Exception:  # no vectors stored (recall never ran): fall back to text
            return [], np.zeros((0, 0), np.float32), None

    # --- 3. reconcile ---------------------------------------------------------------------
    def _reconcile_step(self, run: Run) -> None:
        ns = run.namespace
        slots = run.slots
        if run.since is None:  # a full pass: only slots with a conflict or a contest
            marked = {c["slot_id"] for c in self._cs.contests(ns) if c["resolved_at"] is None}
            slots = self._cs.conflicting_slots(ns) | marked
        one = {s for s in slots if self._cardinality(ns, s) == "one"}
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
        states = self._states({s: {"id": s} for s in sorted(one)})
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
                names = {a["object_id"]: self._name_of(a["object_id"]) for a in group}
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
        with self._store.write():
            parsed = [self._reconciled(a) for a, _, _ in writes]
            written = self._write_assertions(ns, parsed)
            for f, (_, reason, change) in zip(written, writes, strict=True):
                change.targets.append(f.id)
                self._note_decision(ns, f.id, "reconcile", reason)
            k = self._tick()  # the contests' transaction time: now, not the last write
            for cid in resolve:
                self._cs.resolve_contest(cid, k)
            for c in contests:
                self._cs.create_contest({**c, "recorded_at": k})
        forget(self._store)

    def _fingerprints(self, group: list[Any], copies: dict[str, str]) -> dict[str, str]:
        out = {}
        for a in group:
            for e in a["evidence"] or []:
                ep = self._store.episode(copies.get(e, e))
                out[e] = ep["fingerprint"] if ep else e
        return out

    def _reconciled(self, a: dict[str, Any]) -> dict[str, Any]:
        """The winning claim asserted again, by consolidation and trusted."""
        return {**self._copy_of(a, {}, origin="reconcile"), "op": "assert", "quarantined": False}

    # --- 5. expire ------------------------------------------------------------------------
    def _expire_step(self, run: Run) -> None:
        """Facts whose window closed since the last run read as `ended`; nothing is removed."""
        lo = run.window_start
        total, rows = self._cs.ended_between(run.namespace, lo, run.now, limit=LISTED)
        run.add_unlisted("ended", total - len(rows))
        for r in rows:
            run.add(
                "expire",
                "ended",
                [r["id"]],
                f"{r['statement']}: its window closed at {r['valid_to'].isoformat()}",
            )

    # --- 6. decay and archive -------------------------------------------------------------
    def _decay_step(self, run: Run) -> None:
        """Cold, low-importance episodes leave the hot recall set (archived, never deleted).

        Age counts from the last reinforcement: recorded, or last returned by
        recall. An episode that only a use since the last run kept out of the
        archive is reported as `reinforced` (once: later runs see no new use)."""
        ns = run.namespace
        rows = self._cs.cold_candidates(
            ns, below=LOW_IMPORTANCE, before=run.now - MIN_AGE_DAYS * _DAY
        )
        uses = self._episode_uses([r["id"] for r in rows], namespace=ns) if rows else {}
        gone = []
        for r in rows:
            imp = r["importance"]
            age = (run.now - r["recorded_at"]) / _DAY
            used = uses.get(r["id"])
            used_days = None if used is None else (run.now - used[0]) / _DAY
            idle = idle_days(age_days=age, used_days=used_days)
            if cold(imp, age_days=idle):
                gone.append(r["id"])
                last = "" if used is None else f" (used {used[1]} times, last {idle:.0f} days ago)"
                reason = f"importance {imp:.2f}, unused for {idle:.0f} days{last}"
                run.add("decay", "archived", [r["id"]], reason)
            elif (
                used is not None
                and cold(imp, age_days=age)
                and (run.window_start is None or used[0] > run.window_start)
            ):
                run.add(
                    "decay",
                    "reinforced",
                    [r["id"]],
                    f"importance {imp:.2f}, {age:.0f} days old, but recall used it"
                    f" {used[1]} times, last {idle:.0f} days ago: stays in the hot recall set",
                )
        if gone and not run.dry_run:
            with self._store.write():
                self._cs.archive(gone)

    # --- 7. index -------------------------------------------------------------------------
    def _index_step(self, run: Run) -> ConsolidationChange | None:
        """Does recall need a new HNSW generation (`recall._vectors.stale`)? The change
        to build for, or None. Two counts; `_index_build` builds, without the lock."""
        if self._embedder is None:
            return None  # recall reads no vectors without an embedder
        from .graph import RecallStore

        threshold = getattr(self, "_vector_threshold", DEFAULT_VECTOR_THRESHOLD)
        n, indexed = RecallStore(self._store.db).vector_counts(run.namespace)
        why = stale(n, indexed, threshold)
        if why is None:
            return None
        change = run.add(
            "index",
            "indexed",
            [run.namespace],
            f"{n} vectors, above the vector threshold {threshold}, and {why}: recall"
            " searches a new HNSW generation (the delta since it exactly)",
        )
        return None if run.dry_run else change

    def _index_build(self, run: Run, change: ConsolidationChange) -> None:
        """Build the generation while recall goes on (exact meanwhile), then publish it
        under the lock, unless the vectors changed model meanwhile (reindex)."""
        from .graph import RecallStore

        rs = RecallStore(self._store.db)
        before = (rs.vector_generation(), rs.embedder_identity())
        g = rs.build_vector_generation(publish=False)
        with self._lock:
            if (rs.vector_generation(), rs.embedder_identity()) != before or (
                rs.last_vector_generation() != g
            ):
                rs.empty_generation(g)  # built from vectors replaced meanwhile
                run.redo(change, "abandoned", "the vectors were rebuilt while it was built")
                return
            rs.publish_vector_generation(g)
            # cached HNSW paths search the emptied generation, and exact ones above the
            # threshold can drop their matrix: both reload at their next recall
            cached = getattr(self, "_recall_indexes", None) or {}
            threshold = getattr(self, "_vector_threshold", DEFAULT_VECTOR_THRESHOLD)
            for ns, ix in list(cached.items()):
                if ix.vectors.kind == "hnsw" or len(ix.ids) > threshold:
                    del cached[ns]
        change.targets.append(f"generation {g}")
