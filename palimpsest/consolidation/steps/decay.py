"""Step 6, decay: cold, low-importance episodes leave the hot recall set (archived).

    >>> Decay(store, cs, uses).run(run)    # run.changes: "archived", "reinforced"

Age counts from the last reinforcement: recorded, or last returned by recall
(`engine.uses`); the rule is `consolidation.cold`. Nothing is deleted.
"""

from __future__ import annotations

from datetime import timedelta

from ...engine.uses import UseLog
from ...storage import Consolidation, Store
from .._decay import LOW_IMPORTANCE, MIN_AGE_DAYS, cold, idle_days
from .._run import Run

_DAY = timedelta(days=1)


class Decay:
    def __init__(self, store: Store, cs: Consolidation, uses: UseLog) -> None:
        self._store = store
        self._cs = cs
        self._uses = uses

    def run(self, run: Run) -> None:
        """Cold, low-importance episodes leave the hot recall set (archived, never deleted).

        Age counts from the last reinforcement: recorded, or last returned by
        recall. An episode that only a use since the last run kept out of the
        archive is reported as `reinforced` (once: later runs see no new use)."""
        ns = run.namespace
        rows = self._cs.cold_candidates(
            ns, below=LOW_IMPORTANCE, before=run.now - MIN_AGE_DAYS * _DAY
        )
        uses = self._uses.episode_uses([r["id"] for r in rows], namespace=ns) if rows else {}
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
            with self._store.write(ns):
                self._cs.archive(gone)
