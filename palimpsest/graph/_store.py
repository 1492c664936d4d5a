"""Every Cypher statement the engine runs, as domain-level methods of one `Store`.

    >>> store = Store.open(Path("palimpsest-data"))
    >>> with store.write():
    ...     store.create_slots([row])

Rows go in and out as plain dicts or pydantic models; no temporal rule is
decided here (that is `temporal/`), only stored and fetched. The methods live
in mixins by subject, each one sitting's read: `_store_names` (predicates,
entities, episodes), `_store_slots` (slots, the assertion log, versions: the
write path), `_store_reads` (as-of reads, tombstones, counts). This module
keeps the lifecycle: open, migrate, meta, clocks, close and compaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import SchemaError
from ._compaction import DB_FILE, finish_compaction, request_compaction
from ._db import Database
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._store_names import NameStore
from ._store_reads import FactStore
from ._store_slots import SlotStore

__all__ = ["DB_FILE", "Store"]


class Store(NameStore, SlotStore, FactStore):
    """The Kùzu-backed store of one memory directory."""

    def __init__(self, directory: Path, db: Database) -> None:
        super().__init__(db)
        self.directory = directory

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

    def write(self) -> Any:
        return self.db.write()

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
