"""Episode use (reinforcement): the Cypher behind recording which episodes recall returned.

    >>> us = UseStore(store.db)
    >>> us.record([{"id": "ep_1", "namespace": "default", "at": now, "n": 2}])
    >>> us.uses("default")   # -> {"ep_1": (last_used_at, use_count)}

One `EpisodeUse` node per episode ever returned (migration 4), so the
`Episode` table is never SET for a read and a namespace's uses load in one
small scan. Only the TIMESTAMP and INT64 columns change after creation (an
in-place STRING SET would bloat the file); a batch is one `LOAD FROM` Arrow
upsert, whatever its size.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from ._db import Database

# the later of the stored and the new time; counts add up
_UPSERT = (
    "LOAD FROM $t MERGE (u:EpisodeUse {id: id})"
    " ON CREATE SET u.namespace = namespace, u.last_used_at = at, u.use_count = n"
    " ON MATCH SET u.last_used_at = CASE WHEN at > u.last_used_at THEN at"
    " ELSE u.last_used_at END, u.use_count = u.use_count + n"
)


def _naive(at: datetime) -> datetime:
    return at.astimezone(UTC).replace(tzinfo=None)


class UseStore:
    """Reads and writes of episode uses (one per open `Database`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, at (aware), n (uses since the last record); one statement."""
        if not rows:
            return
        import pyarrow as pa  # here, not at import: a cold remember never loads it

        table = pa.table(
            [
                pa.array([r["id"] for r in rows], pa.string()),
                pa.array([r["namespace"] for r in rows], pa.string()),
                pa.array([_naive(r["at"]) for r in rows], pa.timestamp("us")),
                pa.array([int(r["n"]) for r in rows], pa.int64()),
            ],
            names=["id", "namespace", "at", "n"],
        )
        self.db.load(_UPSERT, table)

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
        as columns: what recall's index loads (a Python row each would cost ~10 µs)."""
        t = self.db.arrow(
            "MATCH (u:EpisodeUse) WHERE u.namespace = $ns"
            " RETURN u.id AS id, u.last_used_at AS at, u.use_count AS n",
            ns=namespace,
        )
        import pyarrow as pa  # already loaded by the read

        ids = [str(x) for x in t.column("id").to_pylist()]
        us = t.column("at").cast(pa.timestamp("us")).cast(pa.int64())
        times = np.asarray(us.to_numpy(zero_copy_only=False), dtype=np.float64) / 1e6
        counts = np.asarray(t.column("n").to_numpy(zero_copy_only=False), dtype=np.int64)
        return ids, times, counts

    def delete(self, episode_ids: Sequence[str]) -> None:
        """Forget the uses of erased episodes (inside the erase transaction)."""
        for eid in episode_ids:
            self.db.query("MATCH (u:EpisodeUse {id: $id}) DELETE u", id=eid)
