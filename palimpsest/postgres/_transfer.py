"""PostgreSQL: raw reads and writes of a whole namespace, for export and lossless restore.

    >>> ts = store.transfer
    >>> rows = ts.assertions("default")        # the log, in recording order

The rows are Kùzu's (graph/_transfer.py): every stored column under its Kùzu property
name, in the same order, so an export is the same file from either store. The column
types `aux_columns` reports are Kùzu's type names too (an export's header names them);
`restore_aux` converts. Whole-namespace reads stream through a server-side cursor, so
an export never holds a namespace in Python. Table names arrive as Kùzu's ("Episode")
and are looked up in fixed maps: nothing a caller passes is ever part of the SQL.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from ..errors import StoreUnavailable
from ..storage.columns import (
    ASSERTION_COLUMNS,
    ENTITY_COLUMNS,
    EPISODE_COLUMNS,
    FACT_COLUMNS,
    PREDICATE_COLUMNS,
    SLOT_COLUMNS,
    TOMBSTONE_COLUMNS,
)
from ..storage.rows import Row
from ._db import Database, _unavailable

# Consolidation's records, recall's episode uses and the predicate-definition history:
# Kùzu table -> (our table, {column: Kùzu type}), columns in Kùzu's declared order
AUX: dict[str, tuple[str, dict[str, str]]] = {
    "EntityMerge": (
        "entity_merge",
        {
            "id": "STRING",
            "namespace": "STRING",
            "winner": "STRING",
            "loser": "STRING",
            "keys": "STRING[]",
            "moved": "STRING[]",
            "reason": "STRING",
            "merged_at": "TIMESTAMP",
            "unmerged_at": "TIMESTAMP",
        },
    ),
    "Contest": (
        "contest",
        {
            "id": "STRING",
            "namespace": "STRING",
            "slot_id": "STRING",
            "valid_from": "TIMESTAMP",
            "objects": "STRING[]",
            "reason": "STRING",
            "recorded_at": "TIMESTAMP",
            "resolved_at": "TIMESTAMP",
        },
    ),
    "EpisodeDup": (
        "episode_dup",
        {
            "id": "STRING",
            "namespace": "STRING",
            "canonical": "STRING",
            "similarity": "DOUBLE",
            "recorded_at": "TIMESTAMP",
        },
    ),
    "Decision": (
        "decision",
        {
            "id": "STRING",
            "namespace": "STRING",
            "step": "STRING",
            "reason": "STRING",
            "recorded_at": "TIMESTAMP",
        },
    ),
    "EpisodeUse": (
        "episode_use",
        {
            "id": "STRING",
            "namespace": "STRING",
            "last_used_at": "TIMESTAMP",
            "use_count": "INT64",
        },
    ),
    "PredicateChange": (
        "predicate_change",
        {
            "id": "STRING",
            "namespace": "STRING",
            "name": "STRING",
            "n": "INT64",
            "changed_at": "TIMESTAMP",
            "cardinality": "STRING",
            "previous": "STRING",
            "aliases": "STRING[]",
            "inverse": "STRING",
            "object_kind": "STRING",
            "origin": "STRING",
        },
    ),
}
# export record kind -> (table, columns, order): the order Kùzu exports them in
_KINDS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "entity": ("entity", ENTITY_COLUMNS, "created_at, id"),
    "episode": ("episode", EPISODE_COLUMNS, "recorded_at, id"),
    "slot": ("slot", SLOT_COLUMNS, "id"),
    "assertion": ("assertion", ASSERTION_COLUMNS, "seq, id"),
    "version": ("fact", FACT_COLUMNS, "recorded_at, id"),
    "tombstone": ("tombstone", TOMBSTONE_COLUMNS, "erased_at, id"),
}
# Kùzu tables whose primary keys an import may collide with -> ours (EntityKey apart)
_ID_TABLES = {
    "Entity": "entity",
    "Episode": "episode",
    "Slot": "slot",
    "Assertion": "assertion",
    "Fact": "fact",
    "Tombstone": "tombstone",
    "Predicate": "predicate",
    **{label: table for label, (table, _) in AUX.items()},
}
# occupied(): Kùzu's keys, in its order
_COUNTED = (
    ("Episode", "episode"),
    ("Entity", "entity"),
    ("Assertion", "assertion"),
    ("Fact", "fact"),
    ("Tombstone", "tombstone"),
    ("Predicate", "predicate"),
    ("Slot", "slot"),
    ("EntityKey", "entity_key"),
)
_SCAN = 20_000
_cursors = itertools.count()


def _table(kind: str) -> tuple[str, tuple[str, ...], str]:
    """(table, columns, order) of an export record kind or an aux table."""
    if kind in _KINDS:
        return _KINDS[kind]
    if kind in AUX:
        table, columns = AUX[kind]
        return table, tuple(columns), "id"
    raise ValueError(kind)


def _select(table: str, columns: Sequence[str], order: str) -> str:
    # table, columns and order are our constants, never input
    return f"SELECT {', '.join(columns)} FROM {table} WHERE namespace = %s ORDER BY {order}"


def _namespaces_of(table: str) -> str:
    """The distinct namespaces of a table, one index probe each (a loose index scan)."""
    # the table is one of our constants, never input
    return (
        f"(WITH RECURSIVE t AS (SELECT min(namespace) AS ns FROM {table} UNION ALL"
        f" SELECT (SELECT min(namespace) FROM {table} WHERE namespace > t.ns) FROM t"
        " WHERE t.ns IS NOT NULL) SELECT ns FROM t WHERE ns IS NOT NULL)"
    )


class TransferStore:
    """Whole-namespace reads and raw restores (a slice of the `Store`)."""

    def __init__(self, db: Database, names: Any, facts: Any) -> None:
        self.db = db
        self._names = names
        self._facts = facts

    # --- reads ---------------------------------------------------------------------------
    def predicates(self, namespace: str) -> list[Row]:
        return self.db.query(_select("predicate", PREDICATE_COLUMNS, "name"), (namespace,))

    def entities(self, namespace: str) -> list[Row]:
        return list(self.stream("entity", namespace))

    def entity_keys(self, namespace: str) -> list[Row]:
        """Name and alias keys of the namespace: {key, entity_id}."""
        return list(self.stream("entity_key", namespace))

    def episodes(self, namespace: str) -> list[Row]:
        return list(self.stream("episode", namespace))

    def slots(self, namespace: str) -> list[Row]:
        return list(self.stream("slot", namespace))

    def assertions(self, namespace: str) -> list[Row]:
        """The log, in recording order."""
        return list(self.stream("assertion", namespace))

    def versions(self, namespace: str) -> list[Row]:
        return list(self.stream("version", namespace))

    def tombstones(self, namespace: str) -> list[Row]:
        return list(self.stream("tombstone", namespace))

    def namespaces(self) -> list[str]:
        """Every namespace holding a row of its own (a predicate definition counts)."""
        tables = ("episode", "entity", "slot", "tombstone", "predicate")
        sql = " UNION ".join(_namespaces_of(t) for t in tables)
        return sorted({r["ns"] for r in self.db.query(sql)})

    # --- streamed reads (export) ---------------------------------------------------------
    def count(self, kind: str, namespace: str) -> int:
        """How many rows `stream(kind, namespace)` yields."""
        table = "entity_key" if kind == "entity_key" else _table(kind)[0]
        # the table is one of our constants, never input
        sql = f"SELECT count(*) FROM {table} WHERE namespace = %s"
        return int(self.db.scalar(sql, (namespace,)))

    def stream(self, kind: str, namespace: str) -> Iterator[Row]:
        """Every row of `kind` (an export record kind, or an aux table) in the namespace,
        in a stable order, one at a time."""
        if kind == "predicate":
            yield from self.predicates(namespace)
            return
        if kind == "entity_key":
            yield from self._cursor(
                "SELECT key, entity_id FROM entity_key WHERE namespace = %s ORDER BY key",
                (namespace,),
            )
            return
        yield from self._cursor(_select(*_table(kind)), (namespace,))

    def _cursor(self, sql: str, params: Sequence[Any]) -> Iterator[Row]:
        """`db.query`, a batch at a time from a server-side cursor (inside a write: the
        writer's transaction, so it sees the writer's rows)."""
        if self.db.observer is not None:
            self.db.observer(sql, params)
        try:
            with self.db._conn() as conn:
                if self.db.in_transaction():
                    yield from _fetch(conn, sql, params)
                else:
                    with conn.transaction():
                        yield from _fetch(conn, sql, params)
        except _unavailable() as e:
            raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e

    def aux_columns(self) -> dict[str, dict[str, str]]:
        """{table: {column: Kùzu type}} of the auxiliary tables this store has."""
        present = {
            r["t"]
            for r in self.db.query(
                "SELECT t FROM unnest(%s::text[]) AS t WHERE to_regclass(t) IS NOT NULL",
                ([table for table, _ in AUX.values()],),
            )
        }
        return {label: dict(cols) for label, (table, cols) in AUX.items() if table in present}

    def aux_rows(self, table: str, namespace: str) -> list[Row]:
        if table not in AUX:
            raise ValueError(table)
        return list(self.stream(table, namespace))

    def occupied(self, namespace: str) -> dict[str, int]:
        """How many rows of each kind the namespace holds (slots and keys included)."""
        aux = self.aux_columns()
        counted = [*_COUNTED, *((label, AUX[label][0]) for label in aux)]
        # table names are our constants, never input; one read for all of them
        sql = "SELECT " + ", ".join(
            f"(SELECT count(*) FROM {table} WHERE namespace = %(ns)s) AS {table}"
            for _, table in counted
        )
        row = self.db.query(sql, {"ns": namespace})[0]
        return {label: int(row[table]) for label, table in counted}

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        """Those of `ids` already used as primary keys of `table` (any namespace)."""
        if table == "EntityKey":  # Kùzu's key ids are namespace \x1f key
            return self._existing_keys(ids)
        if table not in _ID_TABLES:
            raise ValueError(table)
        found: set[str] = set()
        ids = list(ids)
        for i in range(0, len(ids), _SCAN):
            # the table is one of our constants, never input
            rows = self.db.query(
                f"SELECT DISTINCT id FROM {_ID_TABLES[table]} WHERE id = ANY(%s)",
                (ids[i : i + _SCAN],),
            )
            found |= {r["id"] for r in rows}
        return found

    def _existing_keys(self, ids: Sequence[str]) -> set[str]:
        pairs = [i.split("\x1f", 1) for i in ids if "\x1f" in i]
        found: set[str] = set()
        for i in range(0, len(pairs), _SCAN):
            chunk = pairs[i : i + _SCAN]
            rows = self.db.query(
                "SELECT k.namespace, k.key FROM entity_key k"
                " JOIN unnest(%s::text[], %s::text[]) AS x(ns, key)"
                " ON k.namespace = x.ns AND k.key = x.key",
                ([p[0] for p in chunk], [p[1] for p in chunk]),
            )
            found |= {f"{r['namespace']}\x1f{r['key']}" for r in rows}
        return found

    # --- raw writes (inside the caller's transaction) ------------------------------------
    def restore_entities(self, rows: Sequence[dict[str, Any]], keys: Sequence[Row]) -> None:
        """Entities exactly as given, and their name and alias keys: {id, entity_id}."""
        with self.db.write():
            _insert(self.db, "entity", ENTITY_COLUMNS, rows)
            key_rows = []
            for k in keys:
                ns, key = k["id"].split("\x1f", 1)
                key_rows.append({"namespace": ns, "key": key, "entity_id": k["entity_id"]})
            _insert(self.db, "entity_key", ("namespace", "key", "entity_id"), key_rows)

    def restore_episodes(self, rows: Sequence[dict[str, Any]]) -> None:
        with self.db.write():
            _insert(self.db, "episode", EPISODE_COLUMNS, rows)

    def restore_aux(
        self, table: str, columns: dict[str, str], rows: Sequence[dict[str, Any]]
    ) -> None:
        """Rows of an auxiliary table, typed by `columns` ({name: Kùzu type})."""
        if table not in AUX:
            raise ValueError(table)
        ours, known = AUX[table]
        unknown = set(columns) - set(known)
        if unknown:
            raise ValueError(f"{table} has no columns {sorted(unknown)}")
        if not rows:
            return
        names = [c for c in known if c in columns]  # our constants, in our order
        typed = [{c: _typed(r.get(c), columns[c]) for c in names} for r in rows]
        with self.db.write():
            _insert(self.db, ours, names, typed)


def _fetch(conn: Any, sql: str, params: Sequence[Any]) -> Iterator[Row]:
    with conn.cursor(name=f"palimpsest_stream_{next(_cursors)}") as cur:
        cur.itersize = _SCAN
        cur.execute(sql, params)
        yield from cur


def _insert(
    db: Database, table: str, columns: Sequence[str], rows: Sequence[dict[str, Any]]
) -> None:
    if not rows:
        return
    # table and columns are our constants, never input
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)})"
        f" VALUES ({', '.join(f'%({c})s' for c in columns)})"
    )
    db.execute_many(sql, [{c: r.get(c) for c in columns} for r in rows])


def _typed(v: Any, kind: str) -> Any:
    """A value as its Kùzu column type stores it (naive times are UTC, as Kùzu's are)."""
    if v is None:
        return None
    if kind == "TIMESTAMP" and isinstance(v, datetime):
        return v.replace(tzinfo=UTC) if v.tzinfo is None else v.astimezone(UTC)
    if kind == "STRING[]":
        return list(v)
    if kind == "DOUBLE":
        return float(v)
    if kind == "INT64":
        return int(v)
    return v
