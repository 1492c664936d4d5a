"""Idempotency keys on Kùzu: one `IdempotencyKey` node per key (migration 10).

>>> keys = KeyStore(store.db)
>>> keys.put({"namespace": "default", "key": "k1", "verb": "assert_fact",
...           "fingerprint": "ab12", "outcome": "{...}", "recorded_at": now})
>>> keys.get("default", "k1")["verb"]
'assert_fact'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..storage.rows import SEP, Row
from ._db import Database


class KeyStore:
    """Reads and writes of idempotency keys."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, namespace: str, key: str) -> Row | None:
        rows = self.db.query(
            "MATCH (k:IdempotencyKey {id: $id}) RETURN k.key AS key, k.verb AS verb,"
            " k.fingerprint AS fingerprint, k.outcome AS outcome, k.recorded_at AS recorded_at",
            id=f"{namespace}{SEP}{key}",
        )
        return rows[0] if rows else None

    def put(self, row: Mapping[str, Any]) -> None:
        self.db.query(
            "CREATE (:IdempotencyKey {id: $id, namespace: $ns, key: $key, verb: $verb,"
            " fingerprint: $fp, outcome: $outcome, recorded_at: $at})",
            id=f"{row['namespace']}{SEP}{row['key']}",
            ns=row["namespace"],
            key=row["key"],
            verb=row["verb"],
            fp=row["fingerprint"],
            outcome=row["outcome"],
            at=row["recorded_at"],
        )
