"""One PostgreSQL database shared by every process that opens it: connections,
transactions, the write lock, and the change sequence caches check.

    >>> db = Database.open("postgresql://palimpsest@127.0.0.1:5432/mem")
    >>> with db.write():                      # one transaction; nested use joins it
    ...     db.execute("INSERT INTO meta (key, value) VALUES (%s, %s)", ("a", "b"))
    >>> db.query("SELECT value FROM meta WHERE key = %s", ("a",))
    [{'value': 'b'}]

Reads outside a write borrow a pooled connection in autocommit mode; inside a write
they run on the transaction's own connection, so a writer reads its own rows. A
write takes transaction-scoped advisory locks first: its namespace's (and the
database's, shared), so writers of one namespace queue across every process while
those of others go on; a write of no one namespace takes the database's alone and
waits for every writer. Readers never wait (MVCC). Its commit moves its namespace's
change sequence (`namespace_clock`; and the fact sequence when it touched a table a fact
read reads; a write of the database moves `store_clock`'s), so a process that looks
(`look`, at the start of each call) sees that its in-memory copies of that namespace's
rows are stale: read-your-writes through any worker, and writers of different namespaces
share no row. Values always travel as bound parameters, never in the SQL text.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from typing import Any

from ..errors import StoreError, StoreUnavailable, ValidationError
from ..storage.rows import Row, VersionDelta

# "palm": every writer takes it, shared when it writes one namespace (then it also takes
# that namespace's lock: NAMESPACE_LOCK, the hash of its name), alone when it may write any
WRITE_LOCK = 0x70616C6D
NAMESPACE_LOCK = 0x6E73  # the class of the namespace locks (the two-int key space)
POOL_MAX = 8
OUTCOME_WAIT_S = 10.0  # how long a commit whose answer was lost asks what became of it
# tables a fact version read never reads: writing them leaves every fact copy current
NO_FACTS = frozenset(
    {
        "meta",
        "schema_version",
        "store_clock",
        "namespace_clock",
        "episode",
        "episode_text",
        "episode_emb",
        "episode_dup",
        "episode_use",
        "entity_name_emb",
        "statement_emb",
        "idempotency",
        "consolidation_report",
        "night_lease",
    }
)
# ON CONFLICT ... DO UPDATE SET updates the INSERT's own table
_WRITES = re.compile(r"\b(?:INSERT\s+INTO|(?<!DO\s)UPDATE|DELETE\s+FROM)\s+(\w+)", re.IGNORECASE)
_KEPT = 512  # own fact deltas remembered; a copy older than them is read again whole
_WATCHED = 4096  # namespaces whose sequences a process remembers having seen


def touches_facts(sql: str) -> bool:
    """Whether a statement may change what a fact read returns (errs towards yes)."""
    tables = {t.lower() for t in _WRITES.findall(sql)}
    return not tables or not tables <= NO_FACTS


def safe_url(url: str) -> str:
    """The URL without its password (for messages and `Store.location`)."""
    return re.sub(r"^(\w+://[^:/@]+):[^@]*@", r"\1@", url)


def check_url(url: str) -> str:
    """`url` when it is a well-formed PostgreSQL URL; else ValidationError, which names
    it without its password (libpq's own message may quote it).

    >>> check_url("postgresql://palimpsest:secret@db:5432/mem")
    'postgresql://palimpsest:secret@db:5432/mem'
    >>> check_url("postgresql://palimpsest@db1:5432,db2:5432/mem?target_session_attrs=read-write")
    'postgresql://palimpsest@db1:5432,db2:5432/mem?target_session_attrs=read-write'
    """
    import re
    from urllib.parse import urlsplit

    from psycopg.conninfo import conninfo_to_dict

    shape = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAM=VALUE]"
    try:
        hosts = urlsplit(url).netloc.rpartition("@")[2]
        for host in hosts.split(","):  # libpq's multi-host form: a primary and its standby
            port = host.rpartition("]")[2].partition(":")[2]
            if port and not (port.isdigit() and 0 < int(port) < 65536):
                raise ValueError(f"port {port!r} is not a number from 1 to 65535")
        conninfo_to_dict(url)
    except Exception as e:  # psycopg.ProgrammingError, ValueError
        secret = re.match(r"^\w+://[^:/@]+:([^@]*)@", url)
        why = str(e).replace(secret[1], "***") if secret and secret[1] else str(e)
        raise ValidationError(
            f"not a PostgreSQL URL ({shape}): {safe_url(url)}: {why}", field="path"
        ) from None
    return url


class Database:
    """A connection pool to one database, with this process's view of its changes."""

    def __init__(self, url: str, pool: Any) -> None:
        self.url = url
        self.pool = pool
        self.closed = False
        self.rollbacks = 0
        self._local = threading.local()  # the thread's transaction connection, if any
        self._lock = threading.RLock()  # one writer per process at a time, like Kùzu's
        self._local_gen = 0  # moves around this process's own writes
        self._deltas: OrderedDict[int, VersionDelta | None] = OrderedDict()
        self._reported: list[VersionDelta] = []
        self._touched = False  # this write ran a statement that may change a fact read
        self._blind = False  # ... outside a declared scope (its delta is unknown)
        self._scoped = False
        self._clocks: tuple[datetime | None, int] | None = None
        # each sequence row as this process last saw it, by namespace (None: the database's)
        self._seen: dict[str | None, tuple[int, int]] = {}
        self._view = 0  # changes seen, this process's own and others' (`generation`)
        self._fact_view = 0  # ... of those that may have changed a fact (`fact_generation`)
        self._foreign = 0  # writes of other processes noticed (`foreign_generation`)
        self._seen_lock = threading.Lock()
        # sees every statement text sent, with its parameters (a test checks that each
        # names its namespace, tests/test_postgres_statements.py); None costs nothing
        self.observer: Callable[[str, Any], None] | None = None

    @classmethod
    def open(cls, url: str, *, max_size: int = POOL_MAX) -> Database:
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "row_factory": dict_row, "options": "-c TimeZone=UTC"},
            open=False,
            # a connection broken by a restart or failover is replaced, not handed out:
            # one idle a while is checked first (a round trip; a busy one is not, and a
            # read it fails is sent again on a fresh one: `query`)
            check=_check_idle,
            reset=_note_used,
            timeout=10.0,
        )
        try:
            pool.open(wait=True, timeout=10.0)
        except Exception as e:
            pool.close()
            raise StoreUnavailable(f"cannot reach PostgreSQL at {safe_url(url)}: {e}") from e
        return cls(url, pool)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.pool.close()

    # --- statements ----------------------------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator[Any]:
        own = getattr(self._local, "conn", None)
        if own is not None:
            yield own
            return
        if self.closed:
            raise StoreError("the database is closed")
        try:
            with self.pool.connection() as conn:
                yield conn
        except _unavailable() as e:
            raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Rows of one statement, as dicts (aware UTC datetimes, lists for arrays)."""
        writes = _is_write(sql)
        if self.in_transaction() and writes and touches_facts(sql):
            self._mark()
        if self.observer is not None:
            self.observer(sql, params)
        again = not writes and not self.in_transaction()  # a read may be sent twice
        while True:
            try:
                with self._conn() as conn:
                    try:
                        cur = conn.execute(sql, params)
                    except _unavailable() as e:
                        raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e
                    return list(cur.fetchall()) if cur.description else []
            except StoreUnavailable:
                if not again:
                    raise
                again = False  # a pooled connection was broken (a restart): so may the
                with suppress(Exception):  # others be; the pool drops those, then again
                    self.pool.check()

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> None:
        self.query(sql, params)

    def execute_many(self, sql: str, rows: Sequence[Sequence[Any] | dict[str, Any]]) -> None:
        """One statement for many parameter rows (pipelined)."""
        if not rows:
            return
        if self.in_transaction() and touches_facts(sql):
            self._mark()
        if self.observer is not None:
            self.observer(sql, rows)
        with self._conn() as conn:
            try:
                with conn.cursor() as cur:
                    cur.executemany(sql, rows)
            except _unavailable() as e:
                raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e

    def _mark(self) -> None:
        self._touched = True
        if not self._scoped:
            self._blind = True

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Any:
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    # --- transactions --------------------------------------------------------------------
    def in_transaction(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def write(self, namespace: str | None = None) -> Iterator[None]:
        """One write transaction; nested use joins the outer one (taking the locks the
        outer one lacks). Writers of one namespace queue on its lock, across every
        process; a write of no one namespace (None) waits for every writer."""
        if self.in_transaction():
            if namespace is not None:  # None joins whatever the outer one holds
                self._lock_for(self._local.conn, namespace)
            yield
            return
        if self.closed:
            raise StoreError("the database is closed")
        with self._lock:
            ctx, conn = self._begin()
            self._local.conn = conn
            self._local.held = set()  # the namespaces locked; None: the whole database
            self._touched = self._blind = self._scoped = False
            self._reported = []
            self._clocks = None
            self._local_gen += 1
            ok = False
            try:
                self._lock_for(conn, namespace)
                yield
                self._finish(conn)
                ok = True
            except _unavailable() as e:
                raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e
            finally:
                self._local.conn = None
                self._local_gen += 1
                if not ok:
                    self.rollbacks += 1
                    with suppress(Exception):  # the connection may be gone
                        self._send(conn, "ROLLBACK")
                ctx.__exit__(None, None, None)

    def _lock_for(self, conn: Any, namespace: str | None) -> None:
        """Take what writing `namespace` (None: any) needs and this transaction lacks."""
        held = self._local.held
        if held is None or namespace in held:
            return
        if namespace is None:
            self._send(conn, "SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            self._local.held = None
        elif held:  # a second namespace in one transaction
            self._send(conn, _NAMESPACE_LOCK, (NAMESPACE_LOCK, namespace))
            held.add(namespace)
        else:
            self._send(conn, _LOCKS, (WRITE_LOCK, NAMESPACE_LOCK, namespace))
            held.add(namespace)

    def _begin(self) -> tuple[Any, Any]:
        """A pooled connection with a transaction begun on it. Nothing is written yet, so
        a connection found broken (a restart) is dropped, with any other, and one more
        taken."""
        for again in (True, False):
            try:
                ctx = self.pool.connection()
                conn = ctx.__enter__()
            except _unavailable() as e:
                raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e
            try:
                self._send(conn, "BEGIN")
                return ctx, conn
            except _unavailable() as e:
                ctx.__exit__(None, None, None)  # the pool discards a broken connection
                if not again:
                    raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e
                with suppress(Exception):
                    self.pool.check()
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, conn: Any, sql: str, params: Sequence[Any] | None = None) -> Any:
        """A statement of the transaction's own (BEGIN, the lock, the clock, the end)."""
        if self.observer is not None:
            self.observer(sql, params)
        return conn.execute(sql, params)

    def _finish(self, conn: Any) -> None:
        touched, held = self._touched, self._local.held
        if held is None:  # a write of the database: its own row
            rows = self._send(conn, _MOVE_DB, (int(touched),)).fetchall()
        else:  # its namespaces' rows only: writers of others never wait on them
            rows = [self._send(conn, _MOVE, (ns, int(touched))).fetchone() for ns in sorted(held)]
        try:
            self._send(conn, "COMMIT")
        except _unavailable() as e:  # the write may be stored though the answer was lost
            self._settle(rows[0]["xid"] if rows else None, e)
        known = touched and not self._blind and len(self._reported) == 1
        self._committed(list(rows), touched, self._reported[0] if known else None)

    def _settle(self, xid: str | None, lost: BaseException) -> None:
        """After a COMMIT whose answer never came: ask the server, on a fresh connection,
        what became of the transaction (for up to `OUTCOME_WAIT_S`, time for a restart
        or failover). Committed: return, the write stands. Else StoreUnavailable:
        rolled back (nothing written; try again), or not known (retry with the key)."""
        deadline = time.monotonic() + OUTCOME_WAIT_S
        status = None
        while xid is not None:
            status = self._xact_status(xid)
            if status in ("committed", "aborted") or time.monotonic() >= deadline:
                break
            time.sleep(0.2)  # unreachable, or still "in progress" until it sees us gone
        if status == "committed":
            return
        if status == "aborted":
            raise StoreUnavailable(
                f"PostgreSQL was lost during the commit, which it rolled back: {lost}"
            ) from lost
        raise StoreUnavailable(
            "PostgreSQL was lost during the commit and cannot say whether it was stored:"
            f" retry it with the same idempotency key ({lost})",
            outcome="unknown",
        ) from lost

    def _xact_status(self, xid: str) -> str | None:
        """pg_xact_status of a transaction id, on a fresh pooled connection (None: the
        server did not answer)."""
        with suppress(Exception):
            self.pool.check()  # drop the connections the loss broke
        try:
            with self.pool.connection(timeout=2.0) as conn:
                row = conn.execute("SELECT pg_xact_status(%s::xid8) AS s", (xid,)).fetchone()
                return None if row is None else row["s"]
        except Exception:
            return None

    # --- what copies of rows check -----------------------------------------------------
    # Every namespace has its own change and fact sequences (`namespace_clock`), moved by
    # the commits of its writers; `store_clock`'s one row is moved only by writes of no one
    # namespace (consolidation, restore, re-embedding). A process sees them only when it
    # looks (`look`, once at the start of each call, and under the write lock), and keeps
    # its own counters of what it saw move: `generation`, `fact_generation` and
    # `foreign_generation` are those counters, read without a round trip.
    def look(self, namespace: str | None) -> int:
        """Look at the sequences of `namespace` (and the database's); inside a write, at
        those of the namespaces it holds (all of them in a write of the database). Count
        any change another process made since this one last looked; `foreign_generation`."""
        held = getattr(self._local, "held", ()) if self.in_transaction() else ()
        wanted: list[str] = []
        if held is None:
            rows = self.query(_LOOK_ALL)
        else:
            wanted = sorted({namespace, *held} - {None})
            rows = self.query(_LOOK, (wanted,))
        found = {r["namespace"]: (int(r["change_seq"]), int(r["fact_seq"])) for r in rows}
        with self._seen_lock:
            for ns in wanted:  # a namespace nobody has written yet: at its start
                found.setdefault(ns, (0, 0))
            first = not self._seen
            for key, now in found.items():
                self._saw(key, now, first=first)
            return self._foreign

    def _saw(self, key: str | None, now: tuple[int, int], *, first: bool) -> None:
        """A sequence row as found: any move since it was last seen is another process's
        (this one's own commits update what it saw as they commit). A namespace seen for
        the first time counts as moved, unless this is the process's first look: copies
        of its rows made before this process watched it may be stale."""
        seen = self._seen.get(key)
        if seen == now or (seen is None and first):
            self._seen[key] = now
            return
        self._seen[key] = now
        self._foreign += 1
        self._view += 1
        if seen is None or now[1] != seen[1]:
            self._fact_view += 1
            self._deltas[self._fact_view] = None  # what they did to facts: unknown
        if len(self._seen) > _WATCHED:  # forgotten ones count as moved when seen again
            self._seen.pop(next(k for k in self._seen if k is not None))

    def _committed(self, rows: list[Row], touched: bool, delta: VersionDelta | None) -> None:
        """This process's commit moved these sequence rows by one (facts: by `touched`)."""
        with self._seen_lock:
            others = False
            for r in rows:
                key, now = r["namespace"], (int(r["change_seq"]), int(r["fact_seq"]))
                seen = self._seen.get(key)
                others |= seen is None or now != (seen[0] + 1, seen[1] + int(touched))
                self._seen[key] = now
            if others:  # another process committed in between, unseen
                self._foreign += 1
            self._view += 1
            if touched or others:
                self._fact_view += 1
                self._deltas[self._fact_view] = None if others else delta
                while len(self._deltas) > _KEPT:
                    self._deltas.popitem(last=False)

    def seen(self, namespace: str) -> tuple[Any, Any] | None:
        """What this process last saw of `namespace`'s sequences and the database's
        (None: it never looked): copies keyed on it are current until it moves."""
        with self._seen_lock:
            mine, db = self._seen.get(namespace), self._seen.get(None)
        return None if mine is None and db is None else (mine, db)

    @property
    def foreign_generation(self) -> int:
        """Moves when a look found another process's write (`look`)."""
        return self._foreign

    @property
    def generation(self) -> int:
        """Moves whenever anything may have been written, by any process (as looked)."""
        return (self._view << 20) + self._local_gen

    @property
    def fact_generation(self) -> int:
        return self._fact_view * 2 + (1 if self.in_transaction() and self._touched else 0)

    def facts_since(self, generation: int) -> tuple[VersionDelta, ...] | None:
        now = self.fact_generation
        if generation == now:
            return ()
        if generation % 2 or now % 2:
            return None
        out = []
        for view in range(generation // 2 + 1, now // 2 + 1):
            d = self._deltas.get(view)
            if d is None:
                return None  # another process wrote it, or the writer did not say
            out.append(d)
        return tuple(out)

    @contextmanager
    def declared(self) -> Iterator[Any]:
        """Around a fact write that reports its `VersionDelta` (`_Scope.report`); a scope
        that reports nothing leaves its statements unknown."""
        scope = _Scope(self)
        self._scoped = True
        try:
            yield scope
        finally:
            self._scoped = False
            if self._touched and not scope.reported:
                self._blind = True

    def held(self) -> set[str] | None:
        """The namespaces the calling thread's write holds (None: the whole database)."""
        held: set[str] | None = self._local.held
        return None if held is None else set(held)

    def clocks_in_write(self, read: Any) -> tuple[datetime | None, int]:
        """The stored clocks as this write transaction found them (read once per write)."""
        if self._clocks is None:
            self._clocks = read()
        return self._clocks


class _Scope:
    def __init__(self, db: Database) -> None:
        self.db = db
        self.reported = False

    def report(self, delta: VersionDelta) -> None:
        self.db._reported.append(delta)
        self.reported = True


_LOOK = (
    "SELECT NULL::text AS namespace, change_seq, fact_seq FROM store_clock WHERE id = 1"
    " UNION ALL SELECT namespace, change_seq, fact_seq FROM namespace_clock"
    " WHERE namespace = ANY(%s)"
)
_LOOK_ALL = (
    "SELECT NULL::text AS namespace, change_seq, fact_seq FROM store_clock WHERE id = 1"
    " UNION ALL SELECT namespace, change_seq, fact_seq FROM namespace_clock"
)
_MOVE_DB = (
    "UPDATE store_clock SET change_seq = change_seq + 1, fact_seq = fact_seq + %s"
    " WHERE id = 1 RETURNING NULL::text AS namespace, change_seq, fact_seq,"
    " pg_current_xact_id()::text AS xid"
)
_MOVE = (
    "INSERT INTO namespace_clock (namespace, change_seq, fact_seq) VALUES (%s, 1, %s)"
    " ON CONFLICT (namespace) DO UPDATE SET change_seq = namespace_clock.change_seq + 1,"
    " fact_seq = namespace_clock.fact_seq + excluded.fact_seq"
    " RETURNING namespace, change_seq, fact_seq, pg_current_xact_id()::text AS xid"
)
_NAMESPACE_LOCK = "SELECT pg_advisory_xact_lock(%s::int4, hashtext(%s))"
_LOCKS = "SELECT pg_advisory_xact_lock_shared(%s), pg_advisory_xact_lock(%s::int4, hashtext(%s))"
_IDLE_S = 2.0  # a pooled connection idle longer is checked before it is handed out


def _note_used(conn: Any) -> None:
    conn.info_used_at = time.monotonic()


def _check_idle(conn: Any) -> None:
    if time.monotonic() - getattr(conn, "info_used_at", 0.0) > _IDLE_S:
        from psycopg_pool import ConnectionPool

        ConnectionPool.check_connection(conn)


def _is_write(sql: str) -> bool:
    return _WRITES.search(sql) is not None


def _unavailable() -> tuple[type[BaseException], ...]:
    import psycopg
    from psycopg_pool import PoolTimeout

    return (psycopg.OperationalError, PoolTimeout)
