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
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ._db import Database

if TYPE_CHECKING:  # imported by the first bulk write: a cold remember never loads it
    import pyarrow as pa

# each column's Arrow type by name (the rest are strings): "time" is naive UTC
_KINDS: dict[str, str] = {
    **{
        c: "time"
        for c in (
            "valid_from",
            "valid_to",
            "recorded_at",
            "expired_at",
            "retracted_at",
            "created_at",
            "occurred_at",
            "erased_at",
            "changed_at",
        )
    },
    "pages": "int64",
    "tail_n": "int64",
    "confidence": "float64",
    "importance": "float64",
    "seq": "int64",
    "quarantined": "bool",
    "archived": "bool",
    "evidence": "strings",
    "aliases": "strings",
}


@cache
def _types() -> dict[str, Any]:
    import pyarrow as pa

    return {
        "string": pa.string(),
        "time": pa.timestamp("us"),
        "utc": pa.timestamp("us", "UTC"),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "strings": pa.list_(pa.string()),
    }


# every table that bulk writes may target; names are never taken from input
_NODE_TABLES = {"Entity", "EntityKey", "Slot", "Line", "Assertion", "Fact", "Episode"}
_REL_TABLES = {"SUBJ", "OBJ"}


def _naive_utc(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).replace(tzinfo=None)
    return v


def _column(name: str, values: list[Any], fill: bool) -> pa.Array:
    import pyarrow as pa

    types, kind = _types(), _KINDS.get(name, "string")
    if kind == "time":
        # aware datetimes converted to UTC by Arrow itself: no Python call per value
        try:
            return pa.array(values, type=types["utc"]).cast(types["time"])
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            values = [_naive_utc(v) for v in values]
    elif fill and kind == "strings":
        values = [[] if v is None else v for v in values]
    elif fill and kind == "bool":
        values = [bool(v) for v in values]
    return pa.array(values, type=types[kind])


def arrow_table(
    columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, fill: bool = False
) -> pa.Table:
    """A typed Arrow table of `rows` (naive UTC times), columns in the given order.

    `fill`: a missing list is stored as [] and a missing flag as False (as the
    single-row writes store them), not as NULL.
    """
    rows = rows if isinstance(rows, list) else list(rows)
    if len(columns) > 1 and rows:
        try:
            # one C-level fetch per row, then a transpose: about half the time of
            # a dict lookup per cell (6,000 Fact rows: 10-15 ms, was 20-37 ms)
            values = [list(v) for v in zip(*map(itemgetter(*columns), rows), strict=True)]
        except KeyError:  # rows without some optional column
            values = [[r.get(c) for r in rows] for c in columns]
    else:
        values = [[r.get(c) for r in rows] for c in columns]
    import pyarrow as pa

    arrays = [_column(c, v, fill) for c, v in zip(columns, values, strict=True)]
    return pa.table(arrays, names=list(columns))


@dataclass(frozen=True)
class Bulk:
    """Rows with their Arrow table already built: a writer can have another thread
    build the next statement's table while Kùzu runs the current one.

        >>> b = Bulk.of(FACT_COLUMNS, rows, fill=True)   # any thread, no database
        >>> store.create_versions(b)                     # the writer
    """

    columns: tuple[str, ...]
    table: pa.Table

    @classmethod
    def of(
        cls, columns: Sequence[str], rows: Iterable[Mapping[str, Any]], *, fill: bool = False
    ) -> Bulk:
        return cls(tuple(columns), arrow_table(columns, list(rows), fill=fill))


def load_rows(
    db: Database,
    cypher: str,
    columns: Sequence[str],
    rows: Iterable[Mapping[str, Any]] | Bulk,
    *,
    fill: bool = False,
) -> None:
    """`LOAD FROM $t <cypher>` over `rows`; `cypher` names the columns as variables.

    A MATCH on a column plans as a hash join over a scan of that node table:
    match one node per MATCH clause (chain them with `WITH *`), since two
    patterns in one MATCH plan as a cross product that exhausts the buffer pool.
    """
    if isinstance(rows, Bulk):
        if rows.columns != tuple(columns):
            raise ValueError("internal: a bulk table built for other columns")
        if rows.table.num_rows:
            db.load(f"LOAD FROM $t {cypher}", rows.table)
        return
    rows = list(rows)
    if rows:
        db.load(f"LOAD FROM $t {cypher}", arrow_table(columns, rows, fill=fill))


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
    import pyarrow as pa

    src, dst = zip(*pairs, strict=True)
    db.copy(table, pa.table([pa.array(src), pa.array(dst)], names=["from", "to"]))
