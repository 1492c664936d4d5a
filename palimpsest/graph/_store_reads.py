"""Reads of fact versions as of (valid time, known time), tombstones, and counts.

    >>> store.facts_asof(namespace="default", valid_at=v, known_at=k, slot_id=slot)

A mixin of `Store` (graph/_store.py). Every read anchors on a primary key
when the caller gives one (notes/kuzu-0.11.3.md §4.2).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..storage.rows import fact_order
from ._columns import FACT_COLUMNS
from ._cypher import Keys, returns, slot_subject
from ._db import Database, Row

# --- the as-of filter on a Fact node `f`; $k = known_at, $v = valid_at -------------------
_BELIEVED = "f.recorded_at <= $k AND (f.expired_at IS NULL OR f.expired_at > $k)"
_VALID = "(f.valid_from IS NULL OR f.valid_from <= $v) AND (f.valid_to IS NULL OR f.valid_to > $v)"
_ACTIVE = "f.quarantined = false"
_FACT_RETURN = returns("f", FACT_COLUMNS)


class FactStore:
    """Fact versions as of (V, K), changes between two times, tombstones, counts."""

    def __init__(self, db: Database, keys: Keys) -> None:
        self.db = db
        self._keys = keys

    def facts_asof(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None,
        slot_id: str | None = None,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[Row]:
        """Versions believed at `known_at` (and valid at `valid_at`, unless it is None);
        with `known_at` None, every version ever recorded (recall filters a cached copy)."""
        params: dict[str, Any] = {}
        where = ["true"]
        if known_at is not None:
            where = [_BELIEVED]
            params["k"] = known_at
        if valid_at is not None:
            where.append(_VALID)
            params["v"] = valid_at
        if not include_quarantined:
            where.append(_ACTIVE)
        # anchor on a primary key whenever one is given: the planner then walks one hop
        if slot_id is not None:
            # a slot's versions hang off its subject (the slot id holds it)
            head = "MATCH (e:Entity {id: $sid})-[:SUBJ]->(f:Fact)"
            where.append("f.slot_id = $slot")
            params["sid"], params["slot"] = slot_subject(slot_id) or "", slot_id
        elif subject_id is not None:
            head = "MATCH (e:Entity {id: $sid})-[:SUBJ]->(f:Fact)"
            params["sid"] = subject_id
        elif object_id is not None:
            head = "MATCH (f:Fact)-[:OBJ]->(o:Entity {id: $oid})"
            params["oid"] = object_id
        else:
            head = "MATCH (f:Fact)"
            where.append("f.namespace = $ns")
            params["ns"] = namespace
        if predicate is not None and slot_id is None:
            where.append("f.predicate = $p")
            params["p"] = predicate
        if object_id is not None and not head.endswith("(o:Entity {id: $oid})"):
            where.append("f.object_id = $oid")
            params["oid"] = object_id
        # named columns, and ORDER BY only when a LIMIT needs it: both measurably cheaper
        # than returning the node and sorting in Kùzu (notes: point queries are ~1 ms)
        tail = f" RETURN {_FACT_RETURN}"
        if limit is not None:
            tail += " ORDER BY f.subject, f.predicate, f.valid_from, f.object LIMIT $limit"
            params["limit"] = limit
        # WITH before WHERE keeps the planner on the anchored plan (notes §4.2)
        cypher = f"{head} WITH f WHERE {' AND '.join(where)}{tail}"
        if explain:
            return [{"plan": self.db.explain(cypher, **params)}]
        rows = self.db.query(cypher, **params)
        if limit is None:
            rows.sort(key=fact_order)
        return rows

    def changed_versions(
        self, namespace: str, field: str, since: datetime, until: datetime
    ) -> list[Row]:
        """Versions whose `field` (a fixed column name) falls in [since, until)."""
        if field not in ("valid_from", "valid_to", "recorded_at", "expired_at"):
            raise ValueError(field)
        return [
            r["f"]
            for r in self.db.query(
                f"MATCH (f:Fact) WHERE f.namespace = $ns AND f.{field} >= $since"
                f" AND f.{field} < $until RETURN f ORDER BY f.{field}, f.subject, f.predicate",
                ns=namespace,
                since=since,
                until=until,
            )
        ]

    def entity_slots(self, entity_id: str, *, incoming: bool, limit: int) -> list[str]:
        """Slots with a version (believed or not) whose subject (or, `incoming`, object)
        is the entity, at most `limit`, in id order: its facts are then read from the
        packed slots, one primary-key seek each, not from the `Fact` rows (a wide row
        read costs ~6x a one-column one at 10^5 facts)."""
        head = (
            "MATCH (f:Fact)-[:OBJ]->(e:Entity {id: $id})"
            if incoming
            else "MATCH (e:Entity {id: $id})-[:SUBJ]->(f:Fact)"
        )
        rows = self.db.query(
            f"{head} RETURN DISTINCT f.slot_id AS s ORDER BY s LIMIT $limit",
            id=entity_id,
            limit=limit,
        )
        return [r["s"] for r in rows]

    # --- tombstones -------------------------------------------------------------------------
    def create_tombstone(self, row: dict[str, Any]) -> None:
        self.db.query(
            "CREATE (:Tombstone {id: $id, namespace: $namespace, kind: $kind, slot_id: $slot_id,"
            " erased_at: $erased_at, reason: $reason})",
            **{
                k: row.get(k) for k in ("id", "namespace", "kind", "slot_id", "erased_at", "reason")
            },
        )

    def tombstone(self, tomb_id: str) -> Row | None:
        rows = self.db.query("MATCH (t:Tombstone {id: $id}) RETURN t", id=tomb_id)
        return rows[0]["t"] if rows else None

    def slot_tombstones(self, slot_id: str) -> list[Row]:
        """The slot's tombstones, found by their `slot_id` (a scan of the tombstones: only
        erasures leave them, and only `history` asks)."""
        rows = self.db.query(
            "MATCH (t:Tombstone) WHERE t.slot_id = $id RETURN t ORDER BY t.erased_at, t.id",
            id=slot_id,
        )
        return [r["t"] for r in rows]

    # --- counts and compaction ---------------------------------------------------------------
    def counts(self, namespace: str) -> dict[str, int]:
        labels = ("Episode", "Entity", "Assertion", "Fact", "Tombstone", "Predicate")
        return {label: self._count(label, namespace) for label in labels}

    def version_count(self, namespace: str) -> int:
        return self._count("Fact", namespace)

    def _count(self, label: str, namespace: str) -> int:
        # label is one of our constants, never input
        rows = self.db.query(
            f"MATCH (n:{label}) WHERE n.namespace = $ns RETURN count(*) AS c", ns=namespace
        )
        return int(rows[0]["c"])

    def namespaces(self) -> list[str]:
        rows = self.db.query("MATCH (s:Slot) RETURN DISTINCT s.namespace AS ns")
        rows += self.db.query("MATCH (e:Episode) RETURN DISTINCT e.namespace AS ns")
        return sorted({r["ns"] for r in rows})
