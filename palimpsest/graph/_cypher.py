"""What the store's slices share: batching thresholds, Cypher fragments, keyed lookups.

    >>> keys = Keys(db)
    >>> keys.by_keys(ids, one_cypher, many_cypher)

Statements are constants or are composed from constant fragments: user text
only ever travels as a parameter.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ._columns import CASTS
from ._db import Database, Row

# A slot read anchored on one primary key walks one hop; UNWIND over many keys makes
# the planner scan and hash-join instead, which only pays off for large batches.
FEW = 128  # up to this many keys, index seeks (per key or 8 a statement) beat a scan
# from this many rows, one LOAD FROM an Arrow table beats a prepared statement per row
# (LOAD is planned afresh each time, and its MATCHes scan the node table once)
LOAD_MIN = 32
SCAN_BATCH = 20_000  # keys per scan-and-join statement: each statement scans the table once
BATCH = 2000  # rows per UNWIND statement: big enough to amortise, small enough for memory
# keys per chained seek statement (MATCH ... MATCH ... SET): Kùzu re-binds and re-plans
# a prepared statement at every execution, so a long chain costs more per key (8 keys
# 0.12 ms a key, 32 keys 0.22, 64 keys 0.31); a remainder takes the next smaller size
SEEK_SIZES = (8, 4, 2, 1)
# keys per UNION ALL read (`Keys.seek`): flat per key from 8 to 64 keys (1,400 keys
# of 600k slot states: 0.21 ms a key), but every statement takes the GIL twice, and the
# read-ahead thread's seeks wait for it while the writer runs Python: 1,400 keys took
# 1,250 ms in 8-key statements beside a busy Python thread, 320 ms in 64-key ones
READ_SIZES = (64, 32, 16, 8, 4, 2, 1)
# rows of a node table one primary-key seek costs as much as scanning (see Keys.seek_pays_in)
SCAN_ROWS_PER_SEEK = 250
RECOUNT = 16  # asks between two counts of a table's rows (see _rows_about)
_COUNTED = {
    "Slot",
    "SlotPage",
    "Line",
    "LinePage",
    "Entity",
    "EntityKey",
    "Fact",
    "Assertion",
    "EntityNameEmb",
    "StatementEmb",
}


# A slot's Fact rows, one hop from its subject (`$sid`, see `slot_subject`): nothing
# links a slot to its rows (migration 7), a subject holds few of the table's rows (~10
# in bench/core.py's mix), and a match on the unindexed `slot_id` alone scans them all.
SLOT_FACTS = "MATCH (e:Entity {id: $sid})-[:SUBJ]->(f:Fact) WITH f WHERE f.slot_id = $slot"


def slot_subject(slot_id: str) -> str | None:
    """The subject entity id a slot id holds (`namespace \\x1f subject id \\x1f
    predicate`, as palimpsest/_core.py builds it); None if it is no slot id.

        >>> slot_subject("default\\x1fen_1\\x1flikes")
        'en_1'
    """
    parts = slot_id.split("\x1f")
    return parts[1] if len(parts) == 3 and parts[1] else None


def props(columns: Sequence[str], var: str = "r") -> str:
    """Properties from the fields of an UNWIND-ed struct `var`, cast where NULL may occur."""
    return ", ".join(
        f"{c}: CAST({var}.{c} AS {CASTS[c]})" if c in CASTS else f"{c}: {var}.{c}" for c in columns
    )


def cols(columns: Sequence[str]) -> str:
    """Properties from the same-named columns of a `LOAD FROM` table (typed by Arrow)."""
    return ", ".join(f"{c}: {c}" for c in columns)


def returns(var: str, columns: Sequence[str]) -> str:
    """`RETURN` items naming each column: cheaper than returning the node."""
    return ", ".join(f"{var}.{c} AS {c}" for c in columns)


def chunks(rows: Sequence[Any], n: int = BATCH) -> Iterator[Sequence[Any]]:
    for i in range(0, len(rows), n):
        yield rows[i : i + n]


def seek_statement(table: str, columns: Sequence[str], k: int) -> str:
    """One statement looking up `k` primary keys `$k0..` of `table`: a UNION ALL of
    index seeks, one row per key found. (A chain of OPTIONAL MATCHes measured ~2x
    the CPU, and mixing tables in one UNION ~30% more than a statement per table.)"""
    ret = ", ".join(f"x.{c} AS {c}" for c in ("id", *columns))
    return " UNION ALL ".join(f"MATCH (x:{table} {{id: $k{j}}}) RETURN {ret}" for j in range(k))


def seek_chunks(ids: Sequence[str], sizes: Sequence[int] = SEEK_SIZES) -> Iterator[list[str]]:
    """Distinct keys in chunks of the given sizes (few statement shapes to prepare)."""
    todo = list(dict.fromkeys(ids))
    while todo:
        k = next(n for n in sizes if n <= len(todo))
        yield todo[:k]
        todo = todo[k:]


class Keys:
    """Rows of a node table by primary key, however many keys: index seeks for a few,
    scans joined with the keys for a batch. Every slice of a store shares one (its
    row-count estimates are per table, not per slice).

        >>> keys = Keys(db)
        >>> keys.read("Slot", ids, ("tail",))   # {id: {"id": ..., "tail": ...}}
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        self._row_counts: dict[str, tuple[int, int]] = {}  # table -> (rows, asks since)

    def seek(self, table: str, ids: Sequence[str], columns: Sequence[str]) -> dict[str, Row]:
        """{id: row} of `table` (id and `columns`) for the keys that exist.

        Kùzu plans a MATCH on keys from UNWIND or LOAD FROM as a hash join that scans
        and hashes the whole table (0.3-1.5 s for 600k packed slot states at 1M
        versions); a MATCH on a parameter is an index seek, so a few keys cost what
        they cost, and up to 64 in one statement save round trips.
        """
        out: dict[str, Row] = {}
        for chunk in seek_chunks(ids, READ_SIZES):
            params = {f"k{j}": i for j, i in enumerate(chunk)}
            for row in self.db.query(seek_statement(table, columns, len(chunk)), **params):
                out[row["id"]] = row
        return out

    def read(self, table: str, ids: Sequence[str], columns: Sequence[str]) -> dict[str, Row]:
        """`seek`, or for a batch big enough, scans of `table` joined with the keys
        (whichever `seek_pays_in` says costs less)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        if self.seek_pays_in(table, len(ids)):
            return self.seek(table, ids, columns)
        ret = ", ".join(f"x.{c} AS {c}" for c in ("id", *columns))
        out: dict[str, Row] = {}
        for part in chunks(ids, SCAN_BATCH):
            for row in self.db.query(
                f"UNWIND $ids AS i MATCH (x:{table} {{id: i}}) RETURN {ret}", ids=list(part)
            ):
                out[row["id"]] = row
        return out

    def seek_pays_in(self, table: str, n_keys: int) -> bool:
        """`seek_pays`, and beyond FEW keys, seeks while they cost less than one
        scan-and-join of `table`: a join hashes every row of the table, so its cost
        grows with the memory, and it is dearest for wide rows (packed states).
        Measured at 1M versions (1,440 keys of 600k packed states, load ~3, median
        of 4): seeks 200 ms, scan-and-join 310 ms; ~0.14 ms a key against ~0.5 us
        a row, hence SCAN_ROWS_PER_SEEK."""
        if self.seek_pays(n_keys):
            return True
        if table not in _COUNTED:
            raise ValueError(table)
        return n_keys * SCAN_ROWS_PER_SEEK <= self.rows_about(table)

    def rows_about(self, table: str) -> int:
        """About how many rows `table` has: counted afresh every `RECOUNT` asks (a count
        scans the table, 12 ms for 600k slot states, and the choice it feeds is coarse)."""
        counts = self._row_counts
        cached = counts.get(table)
        if cached is None or cached[1] >= RECOUNT:
            rows = int(self.db.query(f"MATCH (x:{table}) RETURN count(*) AS n")[0]["n"])
            counts[table] = (rows, 1)
            return rows
        counts[table] = (cached[0], cached[1] + 1)
        return cached[0]

    @staticmethod
    def seek_pays(n_keys: int) -> bool:
        """Seeks for a few keys; one scan-and-join for a batch. Measured at 1M versions
        (1,400 keys, 600k rows): equal when idle, but every statement waits for a free
        core, so on a loaded box (load 7 on 2 cores) 175 seek statements lost to one
        join by 20%; with a page cache that holds the file the join stays warm."""
        return n_keys <= FEW

    def by_keys(self, ids: Sequence[str], one: str, many: str) -> list[Row]:
        """Rows for many primary keys: per-key lookups for a few (UNWIND over keys
        plans as a full scan plus hash join), one scan for many."""
        if len(ids) <= FEW:
            return [row for i in ids for row in self.db.query(one, id=i)]
        out: list[Row] = []
        for chunk in chunks(list(ids), SCAN_BATCH):
            out += self.db.query(many, ids=list(chunk))
        return out
