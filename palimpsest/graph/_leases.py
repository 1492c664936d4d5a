"""Nightly leases on Kùzu: one `NightLease` node per (namespace, night) (migration 10).

>>> leases = LeaseStore(store.db)
>>> leases.claim("default", "2026-12-07", "host:42", now, now + timedelta(minutes=15))
'claimed'
"""

from __future__ import annotations

from datetime import datetime

from ..storage.leases import decide
from ..storage.rows import SEP, Row
from ._db import Database


class LeaseStore:
    """Claims, renewals and ends of nightly leases."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _row(self, namespace: str, night: str) -> Row | None:
        rows = self.db.query(
            "MATCH (l:NightLease {id: $id}) RETURN l.holder AS holder,"
            " l.expires_at AS expires_at, l.done_at AS done_at",
            id=f"{namespace}{SEP}{night}",
        )
        return rows[0] if rows else None

    def claim(self, namespace: str, night: str, holder: str, now: datetime, until: datetime) -> str:
        with self.db.write():
            row = self._row(namespace, night)
            verdict = decide(row, holder, now)
            if verdict == "claimed":
                self.db.query(
                    "MERGE (l:NightLease {id: $id}) SET l.namespace = $ns, l.night = $night,"
                    " l.holder = $holder, l.expires_at = $until",
                    id=f"{namespace}{SEP}{night}",
                    ns=namespace,
                    night=night,
                    holder=holder,
                    until=until,
                )
            return verdict

    def renew(self, namespace: str, night: str, holder: str, until: datetime) -> bool:
        with self.db.write():
            row = self._row(namespace, night)
            if row is None or row["holder"] != holder or row["done_at"] is not None:
                return False
            self.db.query(
                "MATCH (l:NightLease {id: $id}) SET l.expires_at = $until",
                id=f"{namespace}{SEP}{night}",
                until=until,
            )
            return True

    def finish(self, namespace: str, night: str, holder: str, at: datetime) -> bool:
        with self.db.write():
            row = self._row(namespace, night)
            if row is None or row["holder"] != holder or row["done_at"] is not None:
                return False
            self.db.query(
                "MATCH (l:NightLease {id: $id}) SET l.done_at = $at",
                id=f"{namespace}{SEP}{night}",
                at=at,
            )
            return True
