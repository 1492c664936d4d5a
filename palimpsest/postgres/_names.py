"""PostgreSQL: predicates, entities and episodes, the names facts are about and the
memories they cite (the `names` slice of the store seam).

    >>> names = NameStore(db)
    >>> names.create_entities([row])              # the entity and its name key
    >>> names.entity_id_for_key("default", "mira")
    'en_1'

Mirrors `palimpsest.graph._store_names`: the same rows (Kùzu's column names and
orders), read with bound parameters only. A Kùzu `EntityKey` is one string
`namespace \\x1f key`; here it is the row `entity_key(namespace, key, entity_id)`.
Reads Kùzu leaves unordered come out in primary-key order, so they are stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..storage.columns import ENTITY_COLUMNS, EPISODE_COLUMNS, PREDICATE_COLUMNS
from ..storage.rows import Row
from ._db import Database

# Column orders as Kùzu declares them: a row is the same dict, key for key.

_T = 'text COLLATE "C"'
DDL: tuple[str, ...] = (
    f"CREATE TABLE IF NOT EXISTS predicate (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" name {_T}, cardinality {_T}, aliases text[], inverse {_T}, object_kind {_T},"
    f" origin {_T}, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS predicate_id ON predicate (id)",
    f"CREATE TABLE IF NOT EXISTS entity (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" key {_T}, name {_T}, type {_T}, aliases text[], created_at timestamptz,"
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS entity_id ON entity (id)",
    # consolidation counts the entities created since its last run
    "CREATE INDEX IF NOT EXISTS entity_created ON entity (namespace, created_at)",
    # the primary key serves lookups by key and prefix ranges (C collation: byte order)
    f"CREATE TABLE IF NOT EXISTS entity_key (namespace {_T} NOT NULL, key {_T} NOT NULL,"
    f" entity_id {_T} NOT NULL, PRIMARY KEY (namespace, key))",
    # an entity's keys (orphan removal, merges)
    "CREATE INDEX IF NOT EXISTS entity_key_entity ON entity_key (namespace, entity_id)",
    f"CREATE TABLE IF NOT EXISTS episode (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" text {_T}, speaker {_T}, author_kind {_T}, source {_T}, session {_T},"
    f" reply_to {_T}, occurred_at timestamptz, recorded_at timestamptz,"
    f" fingerprint {_T}, importance double precision, kind {_T}, quarantined boolean,"
    " archived boolean, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS episode_id ON episode (id)",
    # `episodes` pages in occurrence order; a session's latest turn before a moment
    "CREATE INDEX IF NOT EXISTS episode_occurred ON episode (namespace, occurred_at, id)",
    "CREATE INDEX IF NOT EXISTS episode_session ON episode (namespace, session, occurred_at, id)",
    # episodes recorded since a run, cold ones recorded before a moment; dedupe's twins
    "CREATE INDEX IF NOT EXISTS episode_recorded ON episode (namespace, recorded_at)",
    "CREATE INDEX IF NOT EXISTS episode_fingerprint ON episode (namespace, fingerprint)",
)

_PREDICATE = ", ".join(PREDICATE_COLUMNS)
_ENTITY = ", ".join(ENTITY_COLUMNS)
_EPISODE = ", ".join(EPISODE_COLUMNS)


def _marks(columns: Sequence[str]) -> str:
    return ", ".join("%s" for _ in columns)


_INSERT_ENTITY = f"INSERT INTO entity ({_ENTITY}) VALUES ({_marks(ENTITY_COLUMNS)})"
_INSERT_EPISODE = f"INSERT INTO episode ({_EPISODE}) VALUES ({_marks(EPISODE_COLUMNS)})"
# Kùzu MERGEs a key: a key already there points at the new entity
_UPSERT_KEY = (
    "INSERT INTO entity_key (namespace, key, entity_id) VALUES (%s, %s, %s)"
    " ON CONFLICT (namespace, key) DO UPDATE SET entity_id = excluded.entity_id"
)


class NameStore:
    """Predicates, entities with their name keys, episodes.

    >>> NameStore(db).entity_ids_for_keys("default", ["mira", "nobody"])
    {'mira': 'en_1'}
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- predicates ----------------------------------------------------------------------
    def predicates(self, namespace: str) -> list[Row]:
        return self.db.query(
            f"SELECT {_PREDICATE} FROM predicate WHERE namespace = %s ORDER BY id", (namespace,)
        )

    def upsert_predicate(self, namespace: str, row: dict[str, Any]) -> None:
        self.db.execute(
            f"INSERT INTO predicate ({_PREDICATE}) VALUES ({_marks(PREDICATE_COLUMNS)})"
            " ON CONFLICT (namespace, id) DO UPDATE SET name = excluded.name,"
            " cardinality = excluded.cardinality, aliases = excluded.aliases,"
            " inverse = excluded.inverse, object_kind = excluded.object_kind,"
            " origin = excluded.origin",
            (
                f"{namespace}\x1f{row['name']}",
                namespace,
                row["name"],
                row["cardinality"],
                list(row["aliases"]),
                row["inverse"],
                row["object_kind"],
                row["origin"],
            ),
        )

    # --- entities ------------------------------------------------------------------------
    def entity_id_for_key(self, namespace: str, key: str) -> str | None:
        found: str | None = self.db.scalar(
            "SELECT entity_id FROM entity_key WHERE namespace = %s AND key = %s",
            (namespace, key),
        )
        return found

    def entity_keys(self, namespace: str) -> dict[str, str]:
        """Every name and alias key of the namespace -> its entity id (one scan)."""
        rows = self.db.query(
            "SELECT key, entity_id FROM entity_key WHERE namespace = %s ORDER BY key",
            (namespace,),
        )
        return {r["key"]: r["entity_id"] for r in rows}

    def entity_key_count(self, namespace: str) -> int:
        n = self.db.scalar("SELECT count(*) FROM entity_key WHERE namespace = %s", (namespace,))
        return int(n or 0)

    def entity_names(self, namespace: str) -> dict[str, str]:
        """Every entity of the namespace: id -> display name (one scan)."""
        rows = self.db.query(
            "SELECT id, name FROM entity WHERE namespace = %s ORDER BY id", (namespace,)
        )
        return {r["id"]: r["name"] for r in rows}

    def search_entity_keys(self, namespace: str, text: str, limit: int) -> list[Row]:
        """Entities whose name or alias key contains the folded `text`: {id, rank, len},
        those whose key starts with it first (rank 0), then by key length (a dashboard's
        search box). A substring cannot use an index: one scan of the namespace's keys."""
        if not text:
            return []  # Kùzu's contains() finds no empty string
        return self.db.query(
            "SELECT entity_id AS id,"
            " min(CASE WHEN starts_with(key, %s) THEN 0 ELSE 1 END) AS rank,"
            " min(length(key)) AS len"
            " FROM entity_key WHERE namespace = %s AND strpos(key, %s) > 0"
            " GROUP BY entity_id ORDER BY rank, len, id LIMIT %s",
            (text, namespace, text, limit),
        )

    def entity(self, entity_id: str) -> Row | None:
        rows = self.db.query(f"SELECT {_ENTITY} FROM entity WHERE id = %s", (entity_id,))
        return rows[0] if rows else None

    def entities(self, namespace: str) -> list[Row]:
        return self.db.query(
            f"SELECT {_ENTITY} FROM entity WHERE namespace = %s ORDER BY id", (namespace,)
        )

    def create_entities(self, rows: Sequence[dict[str, Any]]) -> None:
        """New entities with their name key; rows carry the `ENTITY_COLUMNS` and `key`."""
        if not rows:
            return
        self.db.execute_many(
            _INSERT_ENTITY,
            [
                tuple(
                    list(r.get("aliases") or []) if c == "aliases" else r.get(c)
                    for c in ENTITY_COLUMNS
                )
                for r in rows
            ],
        )
        self.add_entity_keys([(r["namespace"], r["key"], r["id"]) for r in rows])

    def entity_ids_for_keys(self, namespace: str, keys: Sequence[str]) -> dict[str, str]:
        """Many name keys at once: {key: entity id} for those that exist (in the order
        the keys are asked)."""
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return {}
        rows = self.db.query(
            "SELECT key, entity_id FROM entity_key WHERE namespace = %s AND key = ANY(%s)",
            (namespace, wanted),
        )
        found = {r["key"]: r["entity_id"] for r in rows}
        return {k: found[k] for k in wanted if k in found}

    def entities_by_ids(self, ids: Sequence[str]) -> list[Row]:
        """The stored entities among `ids`, each once, in the order asked."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        rows = self.db.query(f"SELECT {_ENTITY} FROM entity WHERE id = ANY(%s)", (wanted,))
        found = {r["id"]: r for r in rows}
        return [found[i] for i in wanted if i in found]

    def add_entity_keys(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Name or alias keys pointing at an entity (namespace, key, entity id)."""
        # one row per key, the last one winning (as Kùzu's MERGEs one after another)
        last = {(ns, key): eid for ns, key, eid in keys}
        self.db.execute_many(_UPSERT_KEY, [(ns, key, eid) for (ns, key), eid in last.items()])

    def delete_orphan_entities(self, namespace: str, keep: Sequence[str]) -> list[str]:
        """Remove entities no fact or assertion refers to any more (after an erase): not
        a fact's subject or object, not a slot's subject, not an assertion's object."""
        rows = self.db.query(
            "SELECT e.id FROM entity e WHERE e.namespace = %s AND NOT e.id = ANY(%s)"
            " AND NOT EXISTS (SELECT 1 FROM fact f"
            " WHERE f.namespace = e.namespace AND f.subject_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM fact f"
            " WHERE f.namespace = e.namespace AND f.object_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM slot s"
            " WHERE s.namespace = e.namespace AND s.subject_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM assertion a"
            " WHERE a.namespace = e.namespace AND a.object_id = e.id)"
            " ORDER BY e.id",
            (namespace, list(keep)),
        )
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        self.db.execute(
            "DELETE FROM entity_key WHERE namespace = %s AND entity_id = ANY(%s)",
            (namespace, ids),
        )
        self.db.execute(
            "DELETE FROM entity WHERE namespace = %s AND id = ANY(%s)", (namespace, ids)
        )
        return ids

    # --- episodes ------------------------------------------------------------------------
    def episode(self, episode_id: str) -> Row | None:
        rows = self.db.query(f"SELECT {_EPISODE} FROM episode WHERE id = %s", (episode_id,))
        return rows[0] if rows else None

    def episodes_by_id(self, ids: Sequence[str]) -> dict[str, Row]:
        """Stored episodes among ``ids`` (one lookup per batch, not per episode)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        rows = self.db.query(f"SELECT {_EPISODE} FROM episode WHERE id = ANY(%s)", (wanted,))
        found = {r["id"]: r for r in rows}
        return {i: found[i] for i in wanted if i in found}

    def create_episodes(self, rows: Sequence[dict[str, Any]]) -> None:
        self.db.execute_many(
            _INSERT_EPISODE, [tuple(r.get(c) for c in EPISODE_COLUMNS) for r in rows]
        )

    def delete_episode(self, episode_id: str) -> None:
        self.db.execute("DELETE FROM episode WHERE id = %s", (episode_id,))

    def episodes(self, namespace: str, limit: int, offset: int = 0) -> list[Row]:
        return self.db.query(
            f"SELECT {_EPISODE} FROM episode WHERE namespace = %s"
            " ORDER BY occurred_at, id LIMIT %s OFFSET %s",
            (namespace, limit, offset),
        )
