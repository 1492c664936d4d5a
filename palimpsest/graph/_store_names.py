"""Predicates, entities and episodes: the names facts are about and the memories they cite.

    >>> store.entity_id_for_key("default", "mira")
    >>> store.create_entities([row])

A mixin of `Store` (graph/_store.py); see graph/_cypher.py for the shared
thresholds. User text only ever travels as a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ._bulk import load_rows
from ._columns import ENTITY_COLUMNS, EPISODE_COLUMNS, param_props
from ._cypher import LOAD_MIN, Keys, chunks, cols, props, returns
from ._db import Database, Row

_ENTITY_RETURN = returns("e", ENTITY_COLUMNS)


class NameStore:
    """Predicates, entities with their name keys, episodes."""

    def __init__(self, db: Database, keys: Keys) -> None:
        self.db = db
        self._keys = keys

    # --- predicates ----------------------------------------------------------------------
    def predicates(self, namespace: str) -> list[Row]:
        return [
            r["p"]
            for r in self.db.query(
                "MATCH (p:Predicate) WHERE p.namespace = $ns RETURN p", ns=namespace
            )
        ]

    def upsert_predicate(self, namespace: str, row: dict[str, Any]) -> None:
        self.db.query(
            "MERGE (p:Predicate {id: $id}) SET p.namespace = $ns, p.name = $name,"
            " p.cardinality = $cardinality, p.aliases = $aliases, p.inverse = $inverse,"
            " p.object_kind = $object_kind, p.origin = $origin",
            id=f"{namespace}\x1f{row['name']}",
            ns=namespace,
            name=row["name"],
            cardinality=row["cardinality"],
            aliases=list(row["aliases"]),
            inverse=row["inverse"],
            object_kind=row["object_kind"],
            origin=row["origin"],
        )

    # --- entities ------------------------------------------------------------------------
    def entity_id_for_key(self, namespace: str, key: str) -> str | None:
        rows = self.db.query(
            "MATCH (k:EntityKey {id: $id}) RETURN k.entity_id AS e", id=f"{namespace}\x1f{key}"
        )
        return rows[0]["e"] if rows else None

    def entity_keys(self, namespace: str) -> dict[str, str]:
        """Every name and alias key of the namespace -> its entity id (one Arrow scan)."""
        import pyarrow.compute as pc

        prefix = f"{namespace}\x1f"
        table = self.db.arrow(
            "MATCH (k:EntityKey) WHERE starts_with(k.id, $prefix)"
            " RETURN k.id AS k, k.entity_id AS e",
            prefix=prefix,
        )
        # whole columns, prefix cut in Arrow: half the time of a dict per row (150k keys)
        keys = pc.utf8_slice_codeunits(table.column("k"), len(prefix)).to_pylist()
        return dict(zip(keys, table.column("e").to_pylist(), strict=True))

    def entity_key_count(self, namespace: str) -> int:
        rows = self.db.query(
            "MATCH (k:EntityKey) WHERE starts_with(k.id, $prefix) RETURN count(*) AS n",
            prefix=f"{namespace}\x1f",
        )
        return int(rows[0]["n"])

    def entity_names(self, namespace: str) -> dict[str, str]:
        """Every entity of the namespace: id -> display name (one Arrow scan)."""
        table = self.db.arrow(
            "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.id AS id, e.name AS name",
            ns=namespace,
        )
        return dict(
            zip(table.column("id").to_pylist(), table.column("name").to_pylist(), strict=True)
        )

    def search_entity_keys(self, namespace: str, text: str, limit: int) -> list[Row]:
        """Entities whose name or alias key contains the folded `text`: (entity id, best
        key), those whose key starts with it first, then by key length (a dashboard's
        search box)."""
        prefix = f"{namespace}\x1f"
        return self.db.query(
            "MATCH (k:EntityKey) WHERE starts_with(k.id, $prefix)"
            " WITH k, substring(k.id, $start, size(k.id)) AS key WHERE contains(key, $q)"
            " WITH k.entity_id AS e, key, CASE WHEN starts_with(key, $q) THEN 0 ELSE 1 END AS r"
            " RETURN e AS id, min(r) AS rank, min(size(key)) AS len"
            " ORDER BY rank, len, id LIMIT $limit",
            prefix=prefix,
            start=len(prefix) + 1,  # Kùzu's substring is 1-based
            q=text,
            limit=limit,
        )

    def entity(self, entity_id: str) -> Row | None:
        # named columns: measurably cheaper than returning the node (on every write path)
        rows = self.db.query(f"MATCH (e:Entity {{id: $id}}) RETURN {_ENTITY_RETURN}", id=entity_id)
        return rows[0] if rows else None

    def entities(self, namespace: str) -> list[Row]:
        return [
            r["e"]
            for r in self.db.query(
                "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e", ns=namespace
            )
        ]

    def create_entities(self, rows: Sequence[dict[str, Any]]) -> None:
        """New entities with their name key; rows carry the `ENTITY_COLUMNS`."""
        if len(rows) >= LOAD_MIN:
            load_rows(
                self.db,
                f"CREATE (:Entity {{{cols(ENTITY_COLUMNS)}}}),"
                " (:EntityKey {id: name_key, entity_id: id})",
                (*ENTITY_COLUMNS, "name_key"),
                [{**r, "name_key": f"{r['namespace']}\x1f{r['key']}"} for r in rows],
            )
            return
        for r in rows:
            self.db.query(
                f"CREATE (:Entity {{{param_props(ENTITY_COLUMNS)}}})",
                **{c: r.get(c) for c in ENTITY_COLUMNS} | {"aliases": list(r.get("aliases", []))},
            )
        self.add_entity_keys([(r["namespace"], r["key"], r["id"]) for r in rows])

    def entity_ids_for_keys(self, namespace: str, keys: Sequence[str]) -> dict[str, str]:
        """Many name keys at once: {key: entity id} for those that exist."""
        ids = [f"{namespace}\x1f{k}" for k in keys]
        if self._keys.seek_pays(len(ids)):
            found = self._keys.seek("EntityKey", ids, ("entity_id",))
            return {i.split("\x1f", 1)[1]: r["entity_id"] for i, r in found.items()}
        rows = self._keys.by_keys(
            ids,
            "MATCH (k:EntityKey {id: $id}) RETURN k.id AS id, k.entity_id AS e",
            "UNWIND $ids AS i MATCH (k:EntityKey {id: i}) RETURN k.id AS id, k.entity_id AS e",
        )
        return {r["id"].split("\x1f", 1)[1]: r["e"] for r in rows}

    def entities_by_ids(self, ids: Sequence[str]) -> list[Row]:
        if self._keys.seek_pays(len(ids)):
            return list(self._keys.seek("Entity", ids, ENTITY_COLUMNS[1:]).values())
        return self._keys.by_keys(
            ids,
            f"MATCH (e:Entity {{id: $id}}) RETURN {_ENTITY_RETURN}",
            f"UNWIND $ids AS i MATCH (e:Entity {{id: i}}) RETURN {_ENTITY_RETURN}",
        )

    def add_entity_keys(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Name or alias keys pointing at an entity (namespace, key, entity id)."""
        for ns, key, eid in keys:
            self.db.query(
                "MERGE (k:EntityKey {id: $id}) SET k.entity_id = $e", id=f"{ns}\x1f{key}", e=eid
            )

    def delete_orphan_entities(self, namespace: str, keep: Sequence[str]) -> list[str]:
        """Remove entities no fact or assertion refers to any more (after an erase)."""
        rows = self.db.query(
            "MATCH (e:Entity) WHERE e.namespace = $ns AND NOT list_contains($keep, e.id)"
            " AND NOT EXISTS { MATCH (e)-[:SUBJ]->(:Fact) }"
            " AND NOT EXISTS { MATCH (:Fact)-[:OBJ]->(e) }"
            " AND NOT EXISTS { MATCH (s:Slot) WHERE s.subject_id = e.id }"
            " AND NOT EXISTS { MATCH (a:Assertion) WHERE a.object_id = e.id }"
            " RETURN e.id AS id, e.key AS key, e.aliases AS aliases",
            ns=namespace,
            keep=list(keep),
        )
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        self.db.query(
            "UNWIND $ids AS i MATCH (k:EntityKey) WHERE k.entity_id = i DELETE k", ids=ids
        )
        self.db.query("UNWIND $ids AS i MATCH (e:Entity {id: i}) DETACH DELETE e", ids=ids)
        return ids

    # --- episodes ------------------------------------------------------------------------
    def episode(self, episode_id: str) -> Row | None:
        rows = self.db.query("MATCH (e:Episode {id: $id}) RETURN e", id=episode_id)
        return rows[0]["e"] if rows else None

    def episodes_by_id(self, ids: Sequence[str]) -> dict[str, Row]:
        """Stored episodes among ``ids`` (one lookup per batch, not per episode)."""
        rows = self._keys.by_keys(
            list(dict.fromkeys(ids)),
            "MATCH (e:Episode {id: $id}) RETURN e",
            "UNWIND $ids AS i MATCH (e:Episode {id: i}) RETURN e",
        )
        return {r["e"]["id"]: r["e"] for r in rows}

    def create_episodes(self, rows: Sequence[dict[str, Any]]) -> None:
        for chunk in chunks(rows):
            self.db.query(
                f"UNWIND $rows AS r CREATE (:Episode {{{props(EPISODE_COLUMNS)}}})",
                rows=list(chunk),
            )

    def delete_episode(self, episode_id: str) -> None:
        self.db.query("MATCH (e:Episode {id: $id}) DETACH DELETE e", id=episode_id)

    def episodes(self, namespace: str, limit: int, offset: int = 0) -> list[Row]:
        return [
            r["e"]
            for r in self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns RETURN e"
                " ORDER BY e.occurred_at, e.id SKIP $skip LIMIT $limit",
                ns=namespace,
                skip=offset,
                limit=limit,
            )
        ]
