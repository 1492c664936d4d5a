"""Bulk writes as Arrow tables: `LOAD FROM $t ... CREATE` on the write path, `COPY` for loads.

    >>> load_rows(db, "CREATE (:EntityKey {id: id, entity_id: entity_id})", cols, rows)
    >>> copy_nodes(db, "Entity", ENTITY_COLUMNS, rows)

Both read an Arrow table about as fast, ~10x faster than UNWIND + CREATE
(notes/kuzu-0.11.3.md §5.8). But every `COPY` forces a full checkpoint when
its transaction commits (Kùzu does not log COPYed rows to the WAL), and a
checkpoint costs in proportion to the whole database: measured 0.5-1.5 s per
commit at 1M rows, the cause of bulk writes slowing as the memory grows.
`LOAD FROM $t CREATE` is logged to the WAL like any insert (commit ~40 ms), so
routine writes use it; `COPY` stays for imports and rebuilds. Columns are
typed explicitly so a column that is NULL in every row still has its real type.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from ._db import Database

_STRING_LIST = pa.list_(pa.string())
_NAIVE, _UTC = pa.timestamp("us"), pa.timestamp("us", "UTC")
_TYPES: dict[str, Any] = {
    **{
        c: _NAIVE
        for c in (
            "valid_from",
            "valid_to",
            "recorded_at",
            "expired_at",
            "retracted_at",
            "created_at",
            "occurred_at",
            "erased_at",
        )
    },
    "confidence": pa.float64(),
    "importance": pa.float64(),
    "seq": pa.int64(),
    "quarantined": pa.bool_(),
    "archived": pa.bool_(),
    "evidence": _STRING_LIST,
    "aliases": _STRING_LIST,
}
# every table that bulk writes may target; names are never taken from input
_NODE_TABLES = {"Entity", "EntityKey", "Slot", "SlotState", "Assertion", "Fact", "Episode"}
_REL_TABLES = {"LOGS", "HAS_VERSION", "SUBJ", "OBJ"}


def _naive_utc(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).replace(tzinfo=None)
    return v


def _column(name: str, values: list[Any]) -> pa.Array:
    kind = _TYPES.get(name, pa.string())
    if kind == _NAIVE:
        # aware datetimes converted to UTC by Arrow itself: no Python call per value
        try:
            return pa.array(values, type=_UTC).cast(_NAIVE)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            values = [_naive_utc(v) for v in values]
    return pa.array(values, type=kind)


def arrow_table(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """A typed Arrow table of `rows` (naive UTC times), columns in the given order."""
    rows = list(rows)
    arrays = [_column(c, [r.get(c) for r in rows]) for c in columns]
    return pa.table(arrays, names=list(columns))


def load_rows(
    db: Database, cypher: str, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]
) -> None:
    """`LOAD FROM $t <cypher>` over `rows`; `cypher` names the columns as variables.

    A MATCH on a column plans as a hash join over a scan of that node table:
    match one node per MATCH clause (chain them with `WITH *`), since two
    patterns in one MATCH plan as a cross product that exhausts the buffer pool.
    """
    rows = list(rows)
    if rows:
        db.load(f"LOAD FROM $t {cypher}", arrow_table(columns, rows))


def copy_nodes(
    db: Database, table: str, columns: Sequence[str], rows: Iterable[Mapping[str, Any]]
) -> None:
    if table not in _NODE_TABLES:
        raise ValueError(table)
    rows = list(rows)
    if not rows:
        return
    db.copy(table, arrow_table(columns, rows))


def copy_rels(db: Database, table: str, pairs: Iterable[tuple[str, str]]) -> None:
    if table not in _REL_TABLES:
        raise ValueError(table)
    pairs = list(pairs)
    if not pairs:
        return
    src, dst = zip(*pairs, strict=True)
    db.copy(table, pa.table([pa.array(src), pa.array(dst)], names=["from", "to"]))
