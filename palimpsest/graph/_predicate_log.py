"""Predicate-definition history: the Cypher behind when each definition changed.

    >>> log = PredicateLog(store.db)
    >>> log.record("default", {"name": "plays", "cardinality": "one", ...}, previous="many", at=k)
    >>> log.history("default", "plays")   # -> [{"changed_at": k, "cardinality": "one", ...}]

One `PredicateChange` node per change (migration 5), written once and never SET.
`previous` is the cardinality in force just before (None for a name first defined
then): a memory older than the table starts its history at its first change, with
the definition it had until then counting since always.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._db import Database, Row

_COLUMNS = (
    "c.changed_at AS changed_at, c.n AS n, c.cardinality AS cardinality,"
    " c.previous AS previous, c.aliases AS aliases, c.inverse AS inverse,"
    " c.object_kind AS object_kind, c.origin AS origin"
)


class PredicateLog:
    """Reads and writes of predicate-definition changes (one per open `Database`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self, namespace: str, row: Mapping[str, Any], *, previous: str | None, at: datetime
    ) -> None:
        """One change of `row` (a Predicate's fields) at transaction time `at`; call it
        inside the write transaction that stores the definition."""
        n = len(self.history(namespace, row["name"]))
        self.db.query(
            "CREATE (:PredicateChange {id: $id, namespace: $ns, name: $name, n: $n,"
            " changed_at: $at, cardinality: $cardinality, previous: $previous,"
            " aliases: $aliases, inverse: $inverse, object_kind: $object_kind,"
            " origin: $origin})",
            id=f"{namespace}\x1f{row['name']}\x1f{n}",
            ns=namespace,
            name=row["name"],
            n=n,
            at=at,
            cardinality=row["cardinality"],
            previous=previous,
            aliases=list(row["aliases"]),
            inverse=row["inverse"],
            object_kind=row["object_kind"],
            origin=row["origin"],
        )

    def history(self, namespace: str, name: str) -> list[Row]:
        """A predicate's changes, oldest first (ties in recording order)."""
        return self.db.query(
            "MATCH (c:PredicateChange) WHERE c.namespace = $ns AND c.name = $name"
            f" RETURN {_COLUMNS} ORDER BY c.changed_at, c.n",
            ns=namespace,
            name=name,
        )

    def latest(self) -> datetime | None:
        """The latest change time stored (a transaction time like any other)."""
        rows = self.db.query("MATCH (c:PredicateChange) RETURN max(c.changed_at) AS t")
        at: datetime | None = rows[0]["t"]
        return at
