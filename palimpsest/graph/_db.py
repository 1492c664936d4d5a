"""The one place that talks to Kùzu: a checked `execute`, one writer, UTC times.

    >>> db = Database.open(Path("mem/graph.kuzu"))
    >>> db.query("MATCH (m:Meta {key: $key}) RETURN m.value", key="schema")

Three Kùzu 0.11.3 traps are closed here (see notes/kuzu-0.11.3.md §5-6):
an unbound `$param` in a primary-key match selects *every* row, so parameter
names must match the statement exactly; an aware datetime loses its offset
when bound, so times are converted to naive UTC on the way in and marked UTC
on the way out; a second write transaction fails instead of waiting, so all
writes go through one lock. Statements anchored on primary keys run on one
thread (`serial`), scans on all of them.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kuzu

from ..errors import MemoryLocked, StoreError
from ._changes import FactChanges, table_touches_facts, touches_facts

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_TX_CONTROL = {"BEGIN TRANSACTION", "COMMIT", "ROLLBACK"}
_WRITES = re.compile(r"\b(?:CREATE|MERGE|SET|DELETE|REMOVE|COPY|DROP|ALTER|INSTALL|LOAD)\b", re.I)
_ANCHORED = re.compile(r"MATCH \(\w+:\w+ \{id: \$\w+\}\)")
_PATTERNS = re.compile(r"(?:MATCH|,) \(\w*:\w+([^)]*)\)")  # labelled node patterns
# WAL size that triggers a checkpoint at commit; bulk writes amortise it over batches
_CHECKPOINT_BYTES = 256 << 20
# Kùzu's page cache. The write path seeks keys all over a 2 GB file at 1M versions;
# with 1 GiB every batch re-read evicted pages (its slot-state reads took 1.3-1.5 s
# instead of 0.3 s). Frames are allocated as pages are touched, so a large limit
# costs memory only on a large database.
_POOL_MIN, _POOL_MAX = 1 << 30, 8 << 30
_OPEN: dict[Path, Database] = {}  # Kùzu does not stop a second Database on one file per process
_OPEN_LOCK = threading.Lock()

Row = dict[str, Any]


def _to_db(value: Any) -> Any:
    if isinstance(value, datetime):
        if value.tzinfo is None:  # the facade rejects these; guard against internal slips
            raise StoreError("internal: naive datetime reached the store")
        return value.astimezone(UTC).replace(tzinfo=None)
    if isinstance(value, list):
        return [_to_db(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_db(v) for k, v in value.items()}
    return value


_PLAIN = (str, int, float, bool, type(None))


def _from_db(value: Any) -> Any:
    if type(value) in _PLAIN:  # the common case first: rows are mostly strings and numbers
        return value
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC)
    if isinstance(value, list):
        return [_from_db(v) for v in value]
    if isinstance(value, dict):
        return {k: _from_db(v) for k, v in value.items() if k[0] != "_"}
    return value


_PROBED = ("pandas", "polars")  # what Kùzu's binding looks for beside an Arrow parameter
_RELOOK_S = 60.0  # a module found missing is looked for again after this long
_memo_lock = threading.Lock()
_memo_on = False


def quiet_module_probes() -> None:
    """Kùzu's binding asks `importlib.util.find_spec` for pandas and polars whenever a
    statement binds an Arrow table (every bulk write: two lookups per prepare and per
    execute). Missing, each searches sys.path again, a stat per entry, and each stat
    lets go of the GIL: beside another busy Python thread (an owner loading its models,
    the embedding worker) every one cost a switch interval (5 ms) to win back, and a
    100-entity MCP write ran 2-4x longer. Once per process, a module found missing is
    answered from memory for `_RELOOK_S` (a pandas installed meanwhile is seen then).
    It patches `importlib.util.find_spec` for the whole process: only a process the
    project owns calls it (the owner, `palimpsest mcp` and `serve`), never a library
    user's by opening a memory.

    >>> quiet_module_probes()     # doctest: +SKIP
    """
    global _memo_on
    import importlib.util
    import time

    with _memo_lock:
        if _memo_on:
            return
        _memo_on = True
        find = importlib.util.find_spec
        missing: dict[str, float] = {}  # name -> when it was found missing

        def find_spec(name: str, package: str | None = None) -> Any:
            if name in _PROBED:
                at = missing.get(name)
                if at is not None and time.monotonic() - at < _RELOOK_S:
                    return None
                spec = find(name, package)
                if spec is None:
                    missing[name] = time.monotonic()
                return spec
            return find(name, package)

        importlib.util.find_spec = find_spec


def _default_pool() -> int:
    """A quarter of physical memory, between 1 and 8 GiB."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        return _POOL_MIN
    return max(_POOL_MIN, min(_POOL_MAX, ram // 4))


def check_params(cypher: str, params: Mapping[str, Any]) -> None:
    """Refuse a statement whose `$names` differ from the given parameters."""
    need, have = set(_PARAM.findall(cypher)), set(params)
    if need != have:
        raise StoreError(
            f"internal: parameter mismatch (missing {sorted(need - have)}, "
            f"extra {sorted(have - need)})"
        )


def serial(cypher: str) -> bool:
    """Whether a statement only touches rows it reaches from primary keys (or only
    creates): no UNWIND, LOAD FROM or CALL, and every MATCH anchored on `{id: $p}`.

    Such a statement runs on one thread. Kùzu otherwise hands even a one-row
    statement to its worker threads, and on a busy machine waiting for a second
    core costs more than the work: a single assert_fact at 1M versions (load ~5
    on 2 cores) measured 6.8 ms p50 with all threads, 5.4 ms with one, at the same
    CPU time; a point query 0.67 -> 0.61 ms. Scans keep every thread.
    """
    if "UNWIND" in cypher or "LOAD FROM" in cypher or "CALL " in cypher:
        return False
    if cypher.count("MATCH ") != len(_ANCHORED.findall(cypher)):
        return False
    # a second pattern of a MATCH (after a comma) must be anchored too
    return all(rest.startswith(" {id: $") for rest in _PATTERNS.findall(cypher))


class _Conn:
    """A connection with its own prepared-statement cache (statements are per connection)."""

    def __init__(self, db: kuzu.Database) -> None:
        self.conn = kuzu.Connection(db)
        self.prepared: dict[str, tuple[Any, int]] = {}
        self.threads = 0  # Kùzu's default: every thread of the database

    def use_threads(self, n: int) -> None:
        """At most `n` threads for the next statements (0: all of them)."""
        if n != self.threads:
            self.conn.set_max_threads_for_exec(n)
            self.threads = n

    def run(self, cypher: str, params: Mapping[str, Any]) -> list[Row]:
        cached = self.prepared.get(cypher)
        if cached is None:
            with warnings.catch_warnings():
                # prepare() is deprecated in 0.11 but measured ~2x faster for hot lookups
                warnings.simplefilter("ignore", DeprecationWarning)
                stmt = self.conn.prepare(cypher)
            if not stmt.is_success():
                raise StoreError(f"internal: bad statement: {stmt.get_error_message()}")
            cached = self.prepared[cypher] = (stmt, 1 if serial(cypher) else 0)
        stmt, threads = cached
        self.use_threads(threads)
        result = self.conn.execute(stmt, {k: _to_db(v) for k, v in params.items()})
        assert not isinstance(result, list)
        names = result.get_column_names()
        rows = [dict(zip(names, (_from_db(v) for v in r), strict=True)) for r in result.get_all()]
        result.close()
        return rows

    def raw(self, cypher: str) -> None:
        """DDL and transaction control: no parameters, never user text."""
        if cypher not in _TX_CONTROL:
            self.use_threads(0)  # checkpoints, index builds, exports: every thread
        self.conn.execute(cypher)


class Database:
    """A Kùzu database file, opened once per process."""

    def __init__(self, path: Path, db: kuzu.Database) -> None:
        self.path = path
        self._db = db
        self._local = threading.local()
        self._write_lock = threading.RLock()
        self._writer = _Conn(db)
        self._tx_owner: int | None = None  # thread inside a write transaction
        self.rollbacks = 0  # write transactions undone: in-process caches of rows check it
        # Moved before and after every statement that may write and every transaction
        # (`_changing`): a copy of rows read at generation g is current while it is still g.
        self.generation = 0
        # Moved only by writes that may change a fact version, with what the fact
        # writer reported it did (graph/_changes.py)
        self.facts = FactChanges()
        self._writes: dict[str, tuple[bool, bool]] = {}  # cypher -> (writes, touches facts)
        self.closed = False

    @classmethod
    def open(cls, path: Path, *, buffer_pool_size: int | None = None) -> Database:
        path = path.resolve()
        if buffer_pool_size is None:
            buffer_pool_size = _default_pool()
        with _OPEN_LOCK:
            if path in _OPEN:
                raise MemoryLocked(f"{path.parent} is already open in this process", path=str(path))
            try:
                # an explicit max_db_size: the default reserves 8 TiB of address space
                db = kuzu.Database(
                    str(path),
                    buffer_pool_size=buffer_pool_size,
                    max_db_size=1 << 40,
                    checkpoint_threshold=_CHECKPOINT_BYTES,
                )
            except RuntimeError as e:
                if "lock" in str(e).lower():
                    raise MemoryLocked(
                        f"{path.parent} is held by another process (a running server?)",
                        path=str(path),
                    ) from None
                raise StoreError(f"cannot open the database: {e}") from e
            out = cls(path, db)
            _OPEN[path] = out
            return out

    def close(self) -> None:
        with self._write_lock, _OPEN_LOCK:
            if self.closed:
                return
            self.closed = True
            _OPEN.pop(self.path, None)
            self._db.close()

    def _reader(self) -> _Conn:
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = _Conn(self._db)
        return conn

    def in_transaction(self) -> bool:
        """Whether the calling thread is inside a write transaction (a nested writer
        waits for the outermost before doing what must follow the commit)."""
        return self._tx_owner == threading.get_ident()

    def _conn(self) -> _Conn:
        # inside a write transaction, reads must see its own uncommitted writes
        if self._tx_owner == threading.get_ident():
            return self._writer
        return self._reader()

    def query(self, cypher: str, /, **params: Any) -> list[Row]:
        """Run a statement; every `$name` must be passed, and nothing else."""
        check_params(cypher, params)
        if self.closed:
            raise StoreError("the database is closed")
        kind = self._writes.get(cypher)
        if kind is None:
            writes = _WRITES.search(cypher) is not None
            kind = self._writes[cypher] = (writes, writes and touches_facts(cypher))
        with self._changing(facts=kind[1]) if kind[0] else nullcontext():
            try:
                return self._conn().run(cypher, params)
            except RuntimeError as e:
                raise StoreError(f"query failed: {e}") from e

    def arrow(self, cypher: str, /, **params: Any) -> Any:
        """A read as a `pyarrow.Table`: columns, not a Python call per value (~10x faster
        for bulk loads such as vectors, notes §2.4). Same parameter check as `query`."""
        check_params(cypher, params)
        if self.closed:
            raise StoreError("the database is closed")
        try:
            conn = self._conn()
            conn.use_threads(0)
            result = conn.conn.execute(cypher, {k: _to_db(v) for k, v in params.items()})
            assert not isinstance(result, list)
            table = result.get_as_arrow(chunk_size=100_000)
            result.close()
        except RuntimeError as e:
            raise StoreError(f"query failed: {e}") from e
        return table

    def query_arrow(self, cypher: str, /, **params: Any) -> list[Row]:
        """`query` for large results, read through `arrow`; UTC times come back aware."""
        import pyarrow as pa

        table = self.arrow(cypher, **params)
        for i, field in enumerate(table.schema):
            if pa.types.is_timestamp(field.type):
                table = table.set_column(
                    i, field.name, table.column(i).cast(pa.timestamp("us", "UTC"))
                )
        rows: list[Row] = table.to_pylist()
        return rows

    def explain(self, cypher: str, /, **params: Any) -> str:
        """The physical plan Kùzu picks (for plan regression tests)."""
        check_params(cypher, params)
        result = self._reader().conn.execute(
            "EXPLAIN " + cypher, {k: _to_db(v) for k, v in params.items()}
        )
        assert not isinstance(result, list)
        first = result.get_all()[0]
        return str(first[0] if isinstance(first, list) else next(iter(first.values())))

    def ddl(self, cypher: str) -> None:
        """Schema statements, inside the writer."""
        with self._write_lock, self._changing(facts=True):
            try:
                self._writer.raw(cypher)
            except RuntimeError as e:
                raise StoreError(f"schema statement failed: {e}") from e

    @contextmanager
    def write(self) -> Iterator[None]:
        """One write transaction; nested use joins the outer one."""
        with self._write_lock:
            if self._tx_owner is not None:
                yield
                return
            if self.closed:
                raise StoreError("the database is closed")
            self._writer.raw("BEGIN TRANSACTION")
            self._tx_owner = threading.get_ident()
            self.facts.begin()
            committed = False
            try:
                with self._changing():  # until it has committed or rolled back
                    try:
                        yield
                    except BaseException:
                        self._tx_owner = None
                        self.rollbacks += 1
                        # Kùzu has already rolled back if a statement failed
                        with suppress(RuntimeError):
                            self._writer.raw("ROLLBACK")
                        raise
                    self._tx_owner = None
                    try:
                        self._writer.raw("COMMIT")
                    except RuntimeError as e:
                        self.rollbacks += 1
                        raise StoreError(f"commit failed: {e}") from e
                    committed = True
            finally:
                self.facts.end(committed=committed)

    @contextmanager
    def _changing(self, *, facts: bool = False) -> Iterator[None]:
        """Around anything that may write: rows read before it or while it runs carry a
        generation that is stale once it is over (a write inside a transaction moves it
        for the writer's own reads; the commit, for everyone's). `facts`: it may change
        a fact version (`self.facts` hears of it when it is over)."""
        self.generation += 1
        try:
            yield
        finally:
            self.generation += 1
            if facts:
                self.facts.wrote(touches=True)

    def copy(self, table: str, data: Any) -> None:
        """`COPY table FROM <arrow table>`; the table name comes from our code only.

        Kùzu does not log COPYed rows to the WAL: the transaction's COMMIT runs a
        full checkpoint instead, whose cost grows with the whole database (0.5-1.5 s
        at 1M rows). Routine writes use `load` (`LOAD FROM ... CREATE`, WAL-logged).
        """
        if not table.isidentifier():
            raise StoreError(f"internal: bad table name {table!r}")
        with self.write(), self._changing(facts=table_touches_facts(table)):
            try:
                self._writer.use_threads(0)
                self._writer.conn.execute(f"COPY {table} FROM $t", {"t": data})
            except RuntimeError as e:
                raise StoreError(f"bulk copy into {table} failed: {e}") from e

    def load(self, cypher: str, data: Any) -> None:
        """A write statement over `LOAD FROM $t` (an Arrow table), in the writer.

        Not prepared and cached: Kùzu binds the scanned table at prepare time.
        Columns of the table join on primary keys as hash joins, where fields of
        an UNWIND-ed struct would make cross products of full scans.
        """
        check_params(cypher, {"t": data})
        with self.write(), self._changing(facts=touches_facts(cypher)):
            try:
                self._writer.use_threads(0)
                self._writer.conn.execute(cypher, {"t": data})
            except RuntimeError as e:
                raise StoreError(f"bulk statement failed: {e}") from e

    def checkpoint(self) -> None:
        with self._write_lock:
            self._writer.raw("CHECKPOINT")

    def export_to(self, directory: Path) -> None:
        with self._write_lock:
            # EXPORT takes a path literal, not a parameter; the path is ours, not user text
            safe = str(directory).replace("\\", "\\\\").replace("'", "\\'")
            self._writer.raw(f"EXPORT DATABASE '{safe}' (format='parquet')")

    def import_from(self, directory: Path) -> None:
        with self._write_lock, self._changing(facts=True):
            safe = str(directory).replace("\\", "\\\\").replace("'", "\\'")
            self._writer.raw(f"IMPORT DATABASE '{safe}'")
