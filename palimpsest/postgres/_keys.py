"""Idempotency keys on PostgreSQL: one row per (namespace, key).

    >>> keys = KeyStore(db)
    >>> keys.get("default", "k1")        # None until a keyed write stored it

The row is inserted in the transaction of the write it keys, under the write lock, so
a retry on any worker either finds it (the first outcome) or finds no trace of the
first attempt at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..storage.rows import Row
from ._db import Database

DDL = (
    'CREATE TABLE IF NOT EXISTS idempotency (namespace text COLLATE "C" NOT NULL,'
    ' key text COLLATE "C" NOT NULL, verb text NOT NULL, fingerprint text NOT NULL,'
    " outcome text NOT NULL, recorded_at timestamptz NOT NULL, PRIMARY KEY (namespace, key))",
)


class KeyStore:
    """Reads and writes of idempotency keys."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, namespace: str, key: str) -> Row | None:
        rows = self.db.query(
            "SELECT key, verb, fingerprint, outcome, recorded_at FROM idempotency"
            " WHERE namespace = %s AND key = %s",
            (namespace, key),
        )
        return rows[0] if rows else None

    def put(self, row: Mapping[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO idempotency (namespace, key, verb, fingerprint, outcome, recorded_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            (row["namespace"], row["key"], row["verb"], row["fingerprint"], row["outcome"],
             row["recorded_at"]),
        )  # fmt: skip
