"""Episode use (reinforcement) on PostgreSQL: which episodes recall returned, when, how often.

    >>> us = UseStore(store.db)
    >>> us.record([{"id": "ep_1", "namespace": "default", "at": now, "n": 2}])
    >>> us.uses("default")   # -> {"ep_1": (last_used_at, use_count)}

One `episode_use` row per episode ever returned, as the Kùzu store's `EpisodeUse`
(`graph/_use.py`), so the `episode` table is never updated for a read. A batch is
one upsert statement run for every row (pipelined): the later of the stored and
the new time is kept, counts add up, and the same episode twice in a batch adds
twice, as Kùzu's row-by-row MERGE does.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ._db import Database

DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS episode_use (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, last_used_at timestamptz, use_count bigint,'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS episode_use_id ON episode_use (id)",
)

_UPSERT = (
    "INSERT INTO episode_use (id, namespace, last_used_at, use_count) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (namespace, id) DO UPDATE SET"
    " last_used_at = CASE WHEN excluded.last_used_at > episode_use.last_used_at"
    " THEN excluded.last_used_at ELSE episode_use.last_used_at END,"
    " use_count = episode_use.use_count + excluded.use_count"
)


class UseStore:
    """Reads and writes of episode uses (one per open `Database`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, at (aware), n (uses since the last record); one statement."""
        if not rows:
            return
        params = [(r["id"], r["namespace"], _utc(r["at"]), int(r["n"])) for r in rows]
        with self.db.write():
            self.db.execute_many(_UPSERT, params)

    def uses(self, namespace: str) -> dict[str, tuple[datetime, int]]:
        """Every used episode of a namespace: id -> (last used, how many times)."""
        ids, times, counts = self.columns(namespace)
        return {
            e: (datetime.fromtimestamp(float(t), UTC), int(n))
            for e, t, n in zip(ids, times, counts, strict=True)
        }

    def columns(
        self, namespace: str
    ) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """(ids, last use as POSIX seconds, use counts) of a namespace's used episodes,
        as columns: what recall's index loads."""
        # whole microseconds, divided in numpy as the Kùzu store does (the same floats)
        rows = self.db.query(
            "SELECT id, (extract(epoch FROM last_used_at) * 1000000)::bigint AS us,"
            " use_count AS n FROM episode_use WHERE namespace = %s",
            (namespace,),
        )
        ids = [str(r["id"]) for r in rows]
        us = np.array([r["us"] for r in rows], dtype=np.int64)
        times = us.astype(np.float64) / 1e6
        counts = np.array([r["n"] for r in rows], dtype=np.int64)
        return ids, times, counts

    def delete(self, episode_ids: Sequence[str]) -> None:
        """Forget the uses of erased episodes (inside the erase transaction)."""
        ids = sorted(set(episode_ids))
        if ids:
            self.db.execute("DELETE FROM episode_use WHERE id = ANY(%s)", (ids,))


def _utc(at: datetime) -> datetime:
    """Stored to the microsecond, as Kùzu's TIMESTAMP keeps it."""
    return at.astimezone(UTC)
