"""PostgreSQL: predicate-definition history, the SQL behind when each definition changed.

    >>> log = PredicateLog(store.db)
    >>> log.record("default", {"name": "plays", "cardinality": "one", ...}, previous="many", at=k)
    >>> log.history("default", "plays")   # -> [{"changed_at": k, "cardinality": "one", ...}]

One `predicate_change` row per change (Kùzu's `PredicateChange`, graph/_predicate_log.py),
written once and never updated. `previous` is the cardinality in force just before
(None for a name first defined then); `n` numbers a name's changes, so two changes at
one transaction time keep their recording order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..storage.rows import Row
from ._db import Database

DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS predicate_change (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, name text COLLATE "C", n bigint,'
    ' changed_at timestamptz, cardinality text COLLATE "C", previous text COLLATE "C",'
    ' aliases text[], inverse text COLLATE "C", object_kind text COLLATE "C",'
    ' origin text COLLATE "C", PRIMARY KEY (namespace, id))',
    "CREATE INDEX IF NOT EXISTS predicate_change_id ON predicate_change (id)",
    "CREATE INDEX IF NOT EXISTS predicate_change_name"
    " ON predicate_change (namespace, name, changed_at, n)",
    # latest(): the newest change of any namespace, one index probe
    "CREATE INDEX IF NOT EXISTS predicate_change_at ON predicate_change (changed_at)",
)

_COLUMNS = "changed_at, n, cardinality, previous, aliases, inverse, object_kind, origin"


class PredicateLog:
    """Reads and writes of predicate-definition changes (a slice of the `Store`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self, namespace: str, row: Mapping[str, Any], *, previous: str | None, at: datetime
    ) -> None:
        """One change of `row` (a Predicate's fields) at transaction time `at`; call it
        inside the write transaction that stores the definition."""
        with self.db.write():
            n = int(
                self.db.scalar(
                    "SELECT count(*) FROM predicate_change WHERE namespace = %s AND name = %s",
                    (namespace, row["name"]),
                )
            )
            self.db.execute(
                "INSERT INTO predicate_change (id, namespace, name, n, changed_at, cardinality,"
                " previous, aliases, inverse, object_kind, origin)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    f"{namespace}\x1f{row['name']}\x1f{n}",
                    namespace,
                    row["name"],
                    n,
                    at,
                    row["cardinality"],
                    previous,
                    list(row["aliases"]),
                    row["inverse"],
                    row["object_kind"],
                    row["origin"],
                ),
            )

    def history(self, namespace: str, name: str) -> list[Row]:
        """A predicate's changes, oldest first (ties in recording order)."""
        return self.db.query(
            f"SELECT {_COLUMNS} FROM predicate_change WHERE namespace = %s AND name = %s"
            " ORDER BY changed_at, n",
            (namespace, name),
        )

    def latest(self) -> datetime | None:
        """The latest change time stored (a transaction time like any other)."""
        at: datetime | None = self.db.scalar("SELECT max(changed_at) FROM predicate_change")
        return at
