"""The PostgreSQL store of one memory: its lifecycle, and its slices built once.

    >>> store = Store.open("postgresql://palimpsest@127.0.0.1:5432/mem")
    >>> with store.write():
    ...     store.slots.write_facts(FactWrite(at=k, assertions=[a], lines=[edit]))

The same slices as the Kùzu store (`palimpsest.graph`), each in its module, each
one sitting's read; this module keeps the lifecycle: open, migrate, meta, clocks,
generations, close. Any number of processes may open one database: writes of one
namespace queue on its advisory lock, and each write transaction reads the clocks of its
namespace as every process has moved them (`shared_clocks`): each namespace keeps its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any

from ..errors import SchemaError
from ..storage.rows import VersionDelta
from ._consolidation import ConsolidationStore
from ._db import WRITE_LOCK, Database, safe_url
from ._embeddings import EmbeddingStore
from ._facts import FactStore
from ._keys import KeyStore
from ._leases import LeaseStore
from ._names import NameStore
from ._pages import GraphPages
from ._predicate_log import PredicateLog
from ._recall import RecallStore
from ._schema import SCHEMA_VERSION, migrations
from ._slots import SlotStore
from ._transfer import TransferStore
from ._use import UseStore
from ._vectors import VectorStore


class Store:
    """The PostgreSQL-backed store of one memory database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.location = safe_url(db.url)
        # each namespace's latest K, with the sequences it was read at (`latest_k`)
        self._clocks: dict[str, tuple[Any, datetime | None]] = {}
        self.names = NameStore(db)
        self.slots = SlotStore(db, self.names)
        self.facts = FactStore(db)
        self.embeddings = EmbeddingStore(db)
        self.vectors = VectorStore(db)
        self.recall = RecallStore(db, self.embeddings, self.vectors)
        self.consolidation = ConsolidationStore(db)
        self.uses = UseStore(db)
        self.keys = KeyStore(db)
        self.leases = LeaseStore(db)
        self.predicate_log = PredicateLog(db)
        self.transfer = TransferStore(db, self.names, self.facts)

    @property
    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def pages(self, namespace: str, at: datetime, own: Sequence[str]) -> GraphPages:
        return GraphPages(self.db, namespace, at, own)

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(cls, url: str, *, migrate: bool = False) -> Store:
        """Open the memory at `url`; an empty database gets the schema. One of an older
        schema is refused unless `migrate` (what `palimpsest migrate URL` does)."""
        store = cls(Database.open(url))
        try:
            store._migrate(allow=migrate)
        except BaseException:
            store.db.close()
            raise
        return store

    def _migrate(self, *, allow: bool) -> None:
        with self.db.write():
            # one migrator at a time across processes (the write lock is already held)
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY,"
                " name text NOT NULL, applied_at timestamptz NOT NULL)"
            )
            done = {int(r["version"]) for r in self.db.query("SELECT version FROM schema_version")}
            if done and max(done) > SCHEMA_VERSION:
                raise SchemaError(
                    f"this memory was written by a newer Palimpsest (schema {max(done)} > "
                    f"{SCHEMA_VERSION}); upgrade the package"
                )
            pending = [m for m in migrations() if m.version not in done]
            if done and pending and not allow:
                raise SchemaError(
                    f"this memory has schema {max(done)}, this Palimpsest needs "
                    f"{SCHEMA_VERSION}: run `palimpsest migrate {self.location}` first"
                )
            for m in pending:
                for stmt in m.statements:
                    self.db.execute(stmt)
                self.db.execute(
                    "INSERT INTO schema_version VALUES (%s, %s, %s)",
                    (m.version, m.name, datetime.now(UTC)),
                )

    def close(self) -> None:
        self.db.close()

    def write(self, namespace: str | None = None) -> AbstractContextManager[None]:
        """One write transaction; nested use joins the outer one."""
        return self.db.write(namespace)

    def in_transaction(self) -> bool:
        return self.db.in_transaction()

    @property
    def closed(self) -> bool:
        return self.db.closed

    @property
    def rollbacks(self) -> int:
        return self.db.rollbacks

    @property
    def generation(self) -> int:
        return self.db.generation

    @property
    def fact_generation(self) -> int:
        return self.db.fact_generation

    @property
    def foreign_generation(self) -> int:
        return self.db.foreign_generation

    def look(self, namespace: str | None) -> int:
        """One round trip: `namespace`'s change sequences (inside a write: its own
        namespaces'), and the database's."""
        return self.db.look(namespace)

    def facts_changed_since(self, generation: int) -> tuple[VersionDelta, ...] | None:
        return self.db.facts_since(generation)

    def writing_facts(self) -> AbstractContextManager[Any]:
        return self.db.declared()

    def reading(self) -> AbstractContextManager[None]:
        """Nothing to pin: the generations move only when a call looks (`look`)."""
        return nullcontext()

    def request_compaction(self) -> None:
        """Erased rows are gone at commit; VACUUM reclaims their pages (autovacuum)."""

    # --- meta ----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        value: str | None = self.db.scalar("SELECT value FROM meta WHERE key = %s", (key,))
        return value

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta (key, value) VALUES (%s, %s)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def clocks(self) -> tuple[datetime | None, int]:
        """The latest transaction time stored in any namespace, and the highest sequence
        number (where a process starts its own clock)."""
        return _latest(self.db.query(_CLOCKS))

    def clocks_of(self, namespaces: Sequence[str]) -> tuple[datetime | None, int]:
        """The latest transaction time recorded in these namespaces, and their highest
        sequence number: each a backward probe of a (namespace, time) index."""
        return _latest([self.db.query(_NAMESPACE_CLOCKS, {"ns": ns})[0] for ns in namespaces])

    def latest_k(self, namespace: str) -> datetime | None:
        """The latest transaction time any process recorded in `namespace` (inside a
        write: in the namespaces it holds, as it found them; outside, read again only
        once a look saw the namespace's sequences move)."""
        shared = self.shared_clocks()
        if shared is not None:
            return shared[0]
        stamp = self.db.seen(namespace)
        kept = self._clocks.get(namespace)
        if kept is not None and stamp is not None and kept[0] == stamp:
            return kept[1]
        found = self.clocks_of([namespace])[0]
        if stamp is not None:  # read after the stamp: as new as it, or newer
            if len(self._clocks) >= _CLOCKS_KEPT:
                self._clocks.clear()
            self._clocks[namespace] = (stamp, found)
        return found

    def shared_clocks(self) -> tuple[datetime | None, int] | None:
        """Inside a write: the clocks of the namespaces it holds (of all, in a write of
        the database) as every process has moved them, read once per transaction under
        the write lock, so K never goes backwards in a namespace whichever worker
        writes. Outside one: None."""
        if not self.db.in_transaction():
            return None

        def read() -> tuple[datetime | None, int]:
            held = self.db.held()
            return self.clocks() if held is None else self.clocks_of(sorted(held))

        return self.db.clocks_in_write(read)


_CLOCKS = (
    "SELECT (SELECT max(recorded_at) FROM assertion) AS a,"
    " (SELECT max(retracted_at) FROM assertion) AS x,"
    " (SELECT max(seq) FROM assertion) AS s,"
    " (SELECT max(recorded_at) FROM episode) AS e,"
    " (SELECT max(erased_at) FROM tombstone) AS t,"
    " (SELECT max(changed_at) FROM predicate_change) AS p"
)
_NAMESPACE_CLOCKS = (
    "SELECT (SELECT max(recorded_at) FROM assertion WHERE namespace = %(ns)s) AS a,"
    " (SELECT max(retracted_at) FROM assertion WHERE namespace = %(ns)s) AS x,"
    " (SELECT max(seq) FROM assertion WHERE namespace = %(ns)s) AS s,"
    " (SELECT max(recorded_at) FROM episode WHERE namespace = %(ns)s) AS e,"
    " (SELECT max(erased_at) FROM tombstone WHERE namespace = %(ns)s) AS t,"
    " (SELECT max(changed_at) FROM predicate_change WHERE namespace = %(ns)s) AS p"
)
_CLOCKS_KEPT = 4096  # namespaces whose latest K is kept


def _latest(rows: Sequence[Any]) -> tuple[datetime | None, int]:
    """The latest time and the highest sequence among clocks query rows."""
    times = [r[k] for r in rows for k in ("a", "x", "e", "t", "p") if r[k] is not None]
    return (max(times) if times else None), max((int(r["s"] or 0) for r in rows), default=0)


__all__ = ["WRITE_LOCK", "Store"]
