"""PostgreSQL: fact versions as of (valid time, known time), tombstones, counts.

    >>> facts = FactStore(db)
    >>> facts.facts_asof(namespace="default", valid_at=v, known_at=k, slot_id=slot)
    [{'id': 'fa_…', 'namespace': 'default', 'slot_id': 'default\\x1fen_1\\x1flives_in', …}]

The `facts` slice of the store seam (`storage.Facts`), mirroring the Kùzu one
(graph/_store_reads.py) row for row: the same dict keys in the same order, the same
as-of rule, the same order of rows. It reads the `fact` table (the slots slice
writes it and its indexes) and owns `tombstone`. Every read names its namespace
first, so each one runs on a namespace-leading B-tree index: a point query is an
index scan of one slot's versions.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..storage.columns import FACT_COLUMNS, TOMBSTONE_COLUMNS
from ..storage.rows import Row, fact_order
from ._db import Database

DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS tombstone (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, kind text COLLATE "C",'
    ' slot_id text COLLATE "C", erased_at timestamptz, reason text COLLATE "C",'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS tombstone_id ON tombstone (id)",
    "CREATE INDEX IF NOT EXISTS tombstone_slot ON tombstone (namespace, slot_id)",
)

# the Fact columns in Kùzu's declaration order (graph/_columns.py FACT_COLUMNS): rows
# come out as dicts keyed in this order, as Kùzu's do (a copy: importing graph/ would
# load Kùzu)
_FACTS = ", ".join(FACT_COLUMNS)
_TOMBS = ", ".join(TOMBSTONE_COLUMNS)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SEP = "\x1f"  # a slot id is namespace SEP subject id SEP predicate (palimpsest/_core.py)

# --- the as-of filter; %(k)s = known_at, %(v)s = valid_at (graph/_store_reads.py) --------
_BELIEVED = "recorded_at <= %(k)s AND (expired_at IS NULL OR expired_at > %(k)s)"
_VALID = "(valid_from IS NULL OR valid_from <= %(v)s) AND (valid_to IS NULL OR valid_to > %(v)s)"
_ACTIVE = "quarantined = false"
# Kùzu's ORDER BY for a limited read: ascending, NULLs last (a NULL valid_from sorts
# after every time), text by bytes (COLLATE "C"). Kùzu breaks the remaining ties
# arbitrarily; recording order (then id) is what its scan order mostly is.
_LIMIT_ORDER = " ORDER BY subject, predicate, valid_from, object, recorded_at, id"
_CHANGED_FIELDS = ("valid_from", "valid_to", "recorded_at", "expired_at")
# which tables `counts` counts, under the Kùzu labels the engine reads them by
_COUNTED = (
    ("Episode", "episode"),
    ("Entity", "entity"),
    ("Assertion", "assertion"),
    ("Fact", "fact"),
    ("Tombstone", "tombstone"),
    ("Predicate", "predicate"),
)
# each table's count is a scan of its (namespace, id) primary key's namespace range
_COUNTS = "SELECT " + ", ".join(
    f'(SELECT count(*) FROM {table} WHERE namespace = %(ns)s) AS "{label}"'
    for label, table in _COUNTED
)


def _distinct(cte: str, table: str) -> str:
    """A CTE of the distinct namespaces of `table` by a loose index scan of its primary
    key (one seek per namespace, not a scan of the rows: PostgreSQL 15 has no skip scan);
    its last row is NULL."""
    return (
        f"{cte}(ns) AS (SELECT min(namespace) FROM {table}"
        f" UNION ALL SELECT (SELECT min(namespace) FROM {table} WHERE namespace > {cte}.ns)"
        f" FROM {cte} WHERE {cte}.ns IS NOT NULL)"
    )


_NAMESPACES = (
    f"WITH RECURSIVE {_distinct('s', 'slot')}, {_distinct('e', 'episode')}"
    " SELECT ns FROM s WHERE ns IS NOT NULL UNION SELECT ns FROM e WHERE ns IS NOT NULL"
)


def _tied_fact_order(r: Row) -> tuple[Any, ...]:
    at = r["recorded_at"]
    return (*fact_order(r), at is not None, at or _EPOCH, r["id"])


class FactStore:
    """Fact versions as of (V, K), changes between two times, tombstones, counts."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def facts_asof(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None,
        slot_id: str | None = None,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[Row]:
        """Versions believed at `known_at` (and valid at `valid_at`, unless it is None);
        with `known_at` None, every version ever recorded (recall filters a cached copy).

        The anchor is Kùzu's: a slot id, else a subject, else an object, else the whole
        namespace; `predicate` narrows all but a slot, `object_id` narrows the others.
        The namespace leads every filter (the indexes' first column): Kùzu's anchored
        reads do not name it, but an entity, and so its slots and versions, belongs
        to one namespace, the one every caller passes.
        """
        params: dict[str, Any] = {"ns": namespace}
        where = ["namespace = %(ns)s"]
        if slot_id is not None:
            where.append("slot_id = %(slot)s")  # index (namespace, slot_id)
            params["slot"] = slot_id
        elif subject_id is not None:
            where.append("subject_id = %(sid)s")  # index (namespace, subject_id, predicate)
            params["sid"] = subject_id
        if predicate is not None and slot_id is None:
            where.append("predicate = %(p)s")
            params["p"] = predicate
        if object_id is not None:
            where.append("object_id = %(oid)s")  # index (namespace, object_id)
            params["oid"] = object_id
        if known_at is not None:
            where.append(_BELIEVED)
            params["k"] = known_at
        if valid_at is not None:
            where.append(_VALID)
            params["v"] = valid_at
        if not include_quarantined:
            where.append(_ACTIVE)
        sql = f"SELECT {_FACTS} FROM fact WHERE {' AND '.join(where)}"
        if limit is not None:
            sql += _LIMIT_ORDER + " LIMIT %(limit)s"
            params["limit"] = limit
        if explain:
            plan = self.db.query("EXPLAIN " + sql, params)
            return [{"plan": "\n".join(str(next(iter(r.values()))) for r in plan)}]
        rows = self.db.query(sql, params)
        if limit is None:
            # in Python, as Kùzu's store does (a NULL start first); ties in recording
            # order, which is what Kùzu's scan order mostly is
            rows.sort(key=_tied_fact_order)
        return rows

    def changed_versions(
        self, namespace: str, field: str, since: datetime, until: datetime
    ) -> list[Row]:
        """Versions whose `field` (a fixed column name) falls in [since, until)."""
        if field not in _CHANGED_FIELDS:
            raise ValueError(field)
        # `field` is one of our constants, never input; the ties past Kùzu's ORDER BY
        # in recording order (as `_LIMIT_ORDER`)
        return self.db.query(
            f"SELECT {_FACTS} FROM fact WHERE namespace = %s AND {field} >= %s"
            f" AND {field} < %s ORDER BY {field}, subject, predicate, recorded_at, id",
            (namespace, since, until),
        )

    def entity_slots(self, entity_id: str, *, incoming: bool, limit: int) -> list[str]:
        """Slots with a version (believed or not) whose subject (or, `incoming`, object)
        is the entity, at most `limit`, in id order. The entity's row names its
        namespace, so the versions are read on a namespace-leading index (Kùzu walks
        the entity's SUBJ or OBJ edges: no entity row, no versions, here too)."""
        column = "object_id" if incoming else "subject_id"
        rows = self.db.query(
            f"SELECT DISTINCT f.slot_id AS s FROM entity e JOIN fact f"
            f" ON f.namespace = e.namespace AND f.{column} = e.id"
            " WHERE e.id = %s ORDER BY s LIMIT %s",
            (entity_id, limit),
        )
        return [r["s"] for r in rows]

    # --- tombstones -------------------------------------------------------------------------
    def create_tombstone(self, row: dict[str, Any]) -> None:
        self.db.execute(
            f"INSERT INTO tombstone ({_TOMBS}) VALUES (%s, %s, %s, %s, %s, %s)",
            tuple(row.get(c) for c in TOMBSTONE_COLUMNS),
        )

    def tombstone(self, tomb_id: str) -> Row | None:
        rows = self.db.query(
            f"SELECT {_TOMBS} FROM tombstone WHERE id = %s ORDER BY namespace LIMIT 1",
            (tomb_id,),
        )
        return rows[0] if rows else None

    def slot_tombstones(self, slot_id: str) -> list[Row]:
        """The slot's tombstones, found by their `slot_id` in the slot's namespace (the
        id's first part), on the (namespace, slot_id) index."""
        parts = slot_id.split(SEP)
        if len(parts) == 3:
            return self.db.query(
                f"SELECT {_TOMBS} FROM tombstone WHERE namespace = %s AND slot_id = %s"
                " ORDER BY erased_at, id",
                (parts[0], slot_id),
            )
        # no slot id: no index to use, as in Kùzu (never asked by the engine)
        return self.db.query(
            f"SELECT {_TOMBS} FROM tombstone WHERE slot_id = %s ORDER BY erased_at, id",
            (slot_id,),
        )

    # --- counts ------------------------------------------------------------------------------
    def counts(self, namespace: str) -> dict[str, int]:
        """Rows of each kind in the namespace (by Kùzu's labels), in one statement."""
        row = self.db.query(_COUNTS, {"ns": namespace})[0]
        return {label: int(row[label]) for label, _ in _COUNTED}

    def version_count(self, namespace: str) -> int:
        return int(self.db.scalar("SELECT count(*) FROM fact WHERE namespace = %s", (namespace,)))

    def namespaces(self) -> list[str]:
        """Namespaces with a slot or an episode, sorted."""
        return sorted({r["ns"] for r in self.db.query(_NAMESPACES)})
