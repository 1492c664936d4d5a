"""The Kùzu store of one memory directory: its lifecycle, and its slices built once.

    >>> store = Store.open(Path("palimpsest-data"))
    >>> with store.write():
    ...     store.slots.write_facts(FactWrite(at=k, assertions=[a], lines=[edit]))
    >>> store.facts.facts_asof(namespace="default", valid_at=v, known_at=k)

Every Cypher statement the engine runs lives in one slice, by subject, each one
sitting's read: `names` (predicates, entities, episodes), `slots` (journals,
lines, the assertion log, versions: the write path), `facts` (as-of reads,
tombstones, counts), `recall` (search texts, episode vectors), `vectors` (HNSW
generations), `embeddings` (name and statement vectors), `consolidation`,
`uses`, `predicate_log`, `transfer` (export and restore), `pages` (the graph a
page at a time). Rows go in and out as plain dicts or the logical rows of
`palimpsest.storage`; no temporal rule is decided here (that is `temporal/`).
This module keeps the lifecycle: open, migrate, meta, clocks, generations,
close and compaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from pathlib import Path

from ..errors import SchemaError
from ..storage.rows import VersionDelta
from ._changes import Scope
from ._compaction import DB_FILE, finish_compaction, request_compaction
from ._consolidation import ConsolidationStore
from ._cypher import Keys
from ._db import Database
from ._embeddings import EmbeddingStore
from ._keys import KeyStore
from ._leases import LeaseStore
from ._predicate_log import PredicateLog
from ._recall import RecallStore
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._store_names import NameStore
from ._store_reads import FactStore
from ._store_slots import SlotStore
from ._transfer import GraphPages, TransferStore
from ._use import UseStore
from ._vectors import VectorStore

__all__ = ["DB_FILE", "Store"]


class Store:
    """The Kùzu-backed store of one memory directory."""

    def __init__(self, directory: Path, db: Database) -> None:
        self.directory = directory
        self.location = str(directory)
        self.db = db
        keys = Keys(db)
        self.names = NameStore(db, keys)
        self.slots = SlotStore(db, keys, self.names)
        self.facts = FactStore(db, keys)
        self.embeddings = EmbeddingStore(db, keys)
        self.vectors = VectorStore(db)
        self.recall = RecallStore(db, self.embeddings, self.vectors, keys)
        self.consolidation = ConsolidationStore(db, directory)
        self.uses = UseStore(db)
        self.keys = KeyStore(db)
        self.leases = LeaseStore(db)
        self.predicate_log = PredicateLog(db)
        self.transfer = TransferStore(db, self.names, self.facts)

    @property
    def schema_version(self) -> int:
        return SCHEMA_VERSION

    def pages(self, namespace: str, at: datetime, own: Sequence[str]) -> GraphPages:
        """The believed graph of a namespace as of `at`, a page at a time (MCP's reads)."""
        return GraphPages(self.db, namespace, at, own)

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(cls, directory: Path, *, defaults: Mapping[str, str] | None = None) -> Store:
        """Open (or create) the store; `defaults` are the default vocabulary's
        cardinalities, for a migration that lays out slots by them."""
        directory.mkdir(parents=True, exist_ok=True)
        finish_compaction(directory)
        store = cls(directory, Database.open(directory / DB_FILE))
        try:
            store._migrate(defaults or {})
        except BaseException:
            store.db.close()
            raise
        return store

    def close(self) -> None:
        if self.db.closed:
            return
        self.db.close()
        finish_compaction(self.directory)

    def write(self, namespace: str | None = None) -> AbstractContextManager[None]:
        """One write transaction; nested use joins the outer one (one process writes
        the directory: no namespace to wait for)."""
        return self.db.write()

    def in_transaction(self) -> bool:
        """Whether the calling thread is inside a write transaction."""
        return self.db.in_transaction()

    @property
    def closed(self) -> bool:
        return self.db.closed

    @property
    def rollbacks(self) -> int:
        """Write transactions undone: in-process copies of rows check it."""
        return self.db.rollbacks

    # --- what in-process copies of rows check ------------------------------------------
    @property
    def generation(self) -> int:
        """Changes whenever anything may have been written (see `Database.generation`):
        in-process copies of rows read at one generation are stale at another."""
        return self.db.generation

    @property
    def foreign_generation(self) -> int:
        """0: one process holds the directory, nobody else writes it."""
        return 0

    def look(self, namespace: str | None) -> int:
        """0: nobody else writes the directory; nothing to look at."""
        return 0

    @property
    def fact_generation(self) -> int:
        """Changes only when a write may have changed a fact version (`_changes.py`)."""
        return self.db.facts.generation

    def facts_changed_since(self, generation: int) -> tuple[VersionDelta, ...] | None:
        """What writes did to fact versions after `fact_generation` was `generation`,
        oldest first; None when that is unknown (re-read every copy)."""
        return self.db.facts.since(generation)

    def writing_facts(self) -> AbstractContextManager[Scope]:
        """Around a fact write that reports its `VersionDelta` (`Scope.report`)."""
        return self.db.facts.declared()

    def request_compaction(self) -> None:
        """Mark the file for rewriting on close (see graph/_compaction.py)."""
        request_compaction(self.directory)

    def _migrate(self, defaults: Mapping[str, str]) -> None:
        self.db.ddl(MIGRATIONS[0].statements[1])  # the Migration table records the others
        done = {r["v"] for r in self.db.query("MATCH (m:Migration) RETURN m.version AS v")}
        if done and max(done) > SCHEMA_VERSION:
            raise SchemaError(
                f"this memory was written by a newer Palimpsest (schema {max(done)} > "
                f"{SCHEMA_VERSION}); upgrade the package"
            )
        for m in MIGRATIONS:
            if m.version in done:
                continue
            with self.db.write():
                for stmt in m.statements:
                    self.db.ddl(stmt)
                if m.convert is not None:
                    m.convert(self.db, defaults)
                for stmt in m.cleanup:
                    self.db.ddl(stmt)
                self.db.query(
                    "CREATE (:Migration {version: $v, name: $n, applied_at: $t})",
                    v=m.version,
                    n=m.name,
                    t=datetime.now(UTC),
                )

    # --- meta ----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=key)
        return rows[0]["v"] if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.query("MERGE (m:Meta {key: $key}) SET m.value = $value", key=key, value=value)

    def clocks(self) -> tuple[datetime | None, int]:
        """The latest transaction time stored anywhere, and the highest sequence number."""
        a = self.db.query(
            "MATCH (a:Assertion) RETURN max(a.recorded_at) AS r, max(a.retracted_at) AS x,"
            " max(a.seq) AS s"
        )[0]
        e = self.db.query("MATCH (e:Episode) RETURN max(e.recorded_at) AS r")[0]
        t = self.db.query("MATCH (t:Tombstone) RETURN max(t.erased_at) AS r")[0]
        times = [x for x in (a["r"], a["x"], e["r"], t["r"]) if x is not None]
        return (max(times) if times else None), int(a["s"] or 0)

    def latest_k(self, namespace: str) -> datetime | None:
        """None: one process holds the directory, its context's clock is the only one."""
        return None

    def reading(self) -> AbstractContextManager[None]:
        """Nothing to pin: the generations are this process's own counters."""
        return nullcontext()

    def shared_clocks(self) -> tuple[datetime | None, int] | None:
        """None: one process holds the directory, its context's clocks are current."""
        return None
