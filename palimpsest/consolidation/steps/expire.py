"""Step 5, expire: facts whose window closed since the last run read as `ended`.

>>> Expire(cs).run(run)          # run.changes: "ended", nothing removed
"""

from __future__ import annotations

from ...storage import Consolidation
from .._run import LISTED, Run


class Expire:
    def __init__(self, cs: Consolidation) -> None:
        self._cs = cs

    def run(self, run: Run) -> None:
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
