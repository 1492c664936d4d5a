"""Nightly leases on PostgreSQL: one row per (namespace, night).

    >>> leases = LeaseStore(db)
    >>> leases.claim("default", "2026-12-07", "host:42", now, now + timedelta(minutes=15))
    'claimed'

Each call is a write transaction: it takes the store's write lock, so two workers
claiming at once are decided one after the other by `consolidation.lease.decide`.
"""

from __future__ import annotations

from datetime import datetime

from ..storage.leases import decide
from ..storage.rows import Row
from ._db import Database

DDL = (
    'CREATE TABLE IF NOT EXISTS night_lease (namespace text COLLATE "C" NOT NULL,'
    ' night text COLLATE "C" NOT NULL, holder text NOT NULL, expires_at timestamptz NOT NULL,'
    " done_at timestamptz, PRIMARY KEY (namespace, night))",
)


class LeaseStore:
    """Claims, renewals and ends of nightly leases."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _row(self, namespace: str, night: str) -> Row | None:
        rows = self.db.query(
            "SELECT holder, expires_at, done_at FROM night_lease"
            " WHERE namespace = %s AND night = %s",
            (namespace, night),
        )
        return rows[0] if rows else None

    def claim(self, namespace: str, night: str, holder: str, now: datetime, until: datetime) -> str:
        with self.db.write():
            verdict = decide(self._row(namespace, night), holder, now)
            if verdict == "claimed":
                self.db.execute(
                    "INSERT INTO night_lease (namespace, night, holder, expires_at)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT (namespace, night) DO UPDATE"
                    " SET holder = excluded.holder, expires_at = excluded.expires_at",
                    (namespace, night, holder, until),
                )
            return verdict

    def renew(self, namespace: str, night: str, holder: str, until: datetime) -> bool:
        with self.db.write():
            done = self.db.query(
                "UPDATE night_lease SET expires_at = %s WHERE namespace = %s AND night = %s"
                " AND holder = %s AND done_at IS NULL RETURNING night",
                (until, namespace, night, holder),
            )
            return bool(done)

    def finish(self, namespace: str, night: str, holder: str, at: datetime) -> bool:
        with self.db.write():
            done = self.db.query(
                "UPDATE night_lease SET done_at = %s WHERE namespace = %s AND night = %s"
                " AND holder = %s AND done_at IS NULL RETURNING night",
                (at, namespace, night, holder),
            )
            return bool(done)
