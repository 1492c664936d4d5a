"""Every Cypher statement the engine runs, as domain-level methods.

    >>> store = Store.open(Path("palimpsest-data"))
    >>> with store.write():
    ...     store.create_slot("default", slot_id, subject_id, "lives_in")

Rows go in and out as plain dicts or pydantic models; no temporal rule is
decided here (that is `temporal/`), only stored and fetched. Statements are
constants or are composed from constant fragments: user text only ever
travels as a parameter.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import SchemaError, StoreError
from ._bulk import load_rows
from ._columns import ASSERTION_COLUMNS as _ASSERTION_COLUMNS
from ._columns import CASTS as _CASTS
from ._columns import ENTITY_COLUMNS as _ENTITY_COLUMNS
from ._columns import EPISODE_COLUMNS as _EPISODE_COLUMNS
from ._columns import FACT_COLUMNS as _FACT_COLUMNS
from ._columns import SLOT_COLUMNS as _SLOT_COLUMNS
from ._columns import STATE_COLUMNS as _STATE_COLUMNS
from ._columns import assertion_row as _assertion_row
from ._columns import fact_row as _fact_row
from ._columns import param_props as _params
from ._db import Database, Row
from ._fused import fits, slot_write
from ._schema import MIGRATIONS, SCHEMA_VERSION

DB_FILE = "graph.kuzu"
_COMPACT_MARK = "compaction-pending"
_COMPACT_EXPORT = ".compact-export"
_COMPACT_NEW = "graph.kuzu.compact"
# A slot read anchored on one primary key walks one hop; UNWIND over many keys makes
# the planner scan and hash-join instead, which only pays off for large batches.
_FEW = 128  # below this many keys, one primary-key statement per key beats a scan
_OPEN_COLS = (
    "RETURN f.id AS id, f.slot_id AS slot_id, f.object_id AS object_id,"
    " f.valid_from AS valid_from, f.valid_to AS valid_to,"
    " f.assertion_id AS assertion_id, f.recorded_at AS recorded_at"
)
# from this many rows, one LOAD FROM an Arrow table beats a prepared statement per row
# (LOAD is planned afresh each time, and its MATCHes scan the node table once)
_LOAD_MIN = 32
_SCAN_BATCH = 20_000  # keys per scan-and-join statement: each statement scans the table once
_BATCH = 2000  # rows per UNWIND statement: big enough to amortise, small enough for memory

# --- the as-of filter on a Fact node `f`; $k = known_at, $v = valid_at -------------------
_BELIEVED = "f.recorded_at <= $k AND (f.expired_at IS NULL OR f.expired_at > $k)"
_VALID = "(f.valid_from IS NULL OR f.valid_from <= $v) AND (f.valid_to IS NULL OR f.valid_to > $v)"
_ACTIVE = "f.quarantined = false"

_SLOT_RETURN = ", ".join(f"s.{c} AS {c}" for c in _SLOT_COLUMNS)
_STATE_RETURN = "x.log AS log, x.versions AS versions"
_ENTITY_RETURN = ", ".join(f"e.{c} AS {c}" for c in _ENTITY_COLUMNS)
_FACT_RETURN = ", ".join(f"f.{c} AS {c}" for c in _FACT_COLUMNS)


_TOMB_COLUMNS = ("id", "namespace", "kind", "slot_id", "erased_at", "reason")


def _props(columns: Sequence[str], var: str = "r") -> str:
    return ", ".join(
        f"{c}: CAST({var}.{c} AS {_CASTS[c]})" if c in _CASTS else f"{c}: {var}.{c}"
        for c in columns
    )


def _cols(columns: Sequence[str]) -> str:
    """Properties from the same-named columns of a `LOAD FROM` table (typed by Arrow)."""
    return ", ".join(f"{c}: {c}" for c in columns)


def _chunks(rows: Sequence[Any], n: int = _BATCH) -> Iterator[Sequence[Any]]:
    for i in range(0, len(rows), n):
        yield rows[i : i + n]


class Store:
    """The Kùzu-backed store of one memory directory."""

    def __init__(self, directory: Path, db: Database) -> None:
        self.directory = directory
        self.db = db

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(cls, directory: Path) -> Store:
        directory.mkdir(parents=True, exist_ok=True)
        _finish_compaction(directory)
        store = cls(directory, Database.open(directory / DB_FILE))
        try:
            store._migrate()
        except BaseException:
            store.db.close()
            raise
        return store

    def close(self) -> None:
        if self.db.closed:
            return
        self.db.close()
        _finish_compaction(self.directory)

    def write(self) -> Any:
        return self.db.write()

    def _migrate(self) -> None:
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
        prefix = f"{namespace}\x1f"
        rows = self.db.query_arrow(
            "MATCH (k:EntityKey) WHERE starts_with(k.id, $prefix)"
            " RETURN k.id AS k, k.entity_id AS e",
            prefix=prefix,
        )
        cut = len(prefix)
        return {r["k"][cut:]: r["e"] for r in rows}

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
        """New entities with their name key; rows carry the `_ENTITY_COLUMNS`."""
        if len(rows) >= _LOAD_MIN:
            load_rows(
                self.db,
                f"CREATE (:Entity {{{_cols(_ENTITY_COLUMNS)}}}),"
                " (:EntityKey {id: name_key, entity_id: id})",
                (*_ENTITY_COLUMNS, "name_key"),
                [{**r, "name_key": f"{r['namespace']}\x1f{r['key']}"} for r in rows],
            )
            return
        for r in rows:
            self.db.query(
                f"CREATE (:Entity {{{_params(_ENTITY_COLUMNS)}}})",
                **{c: r.get(c) for c in _ENTITY_COLUMNS} | {"aliases": list(r.get("aliases", []))},
            )
        self.add_entity_keys([(r["namespace"], r["key"], r["id"]) for r in rows])

    def entity_ids_for_keys(self, namespace: str, keys: Sequence[str]) -> dict[str, str]:
        """Many name keys at once: {key: entity id} for those that exist."""
        ids = [f"{namespace}\x1f{k}" for k in keys]
        rows = self._by_keys(
            ids,
            "MATCH (k:EntityKey {id: $id}) RETURN k.id AS id, k.entity_id AS e",
            "UNWIND $ids AS i MATCH (k:EntityKey {id: i}) RETURN k.id AS id, k.entity_id AS e",
        )
        return {r["id"].split("\x1f", 1)[1]: r["e"] for r in rows}

    def entities_by_ids(self, ids: Sequence[str]) -> list[Row]:
        rows = self._by_keys(
            ids,
            "MATCH (e:Entity {id: $id}) RETURN e",
            "UNWIND $ids AS i MATCH (e:Entity {id: i}) RETURN e",
        )
        return [r["e"] for r in rows]

    def _by_keys(self, ids: Sequence[str], one: str, many: str) -> list[Row]:
        """Rows for many primary keys: per-key lookups for a few (UNWIND over keys
        plans as a full scan plus hash join), one scan for many."""
        if len(ids) <= _FEW:
            return [row for i in ids for row in self.db.query(one, id=i)]
        out: list[Row] = []
        for chunk in _chunks(list(ids), _SCAN_BATCH):
            out += self.db.query(many, ids=list(chunk))
        return out

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
        rows = self._by_keys(
            list(dict.fromkeys(ids)),
            "MATCH (e:Episode {id: $id}) RETURN e",
            "UNWIND $ids AS i MATCH (e:Episode {id: i}) RETURN e",
        )
        return {r["e"]["id"]: r["e"] for r in rows}

    def create_episodes(self, rows: Sequence[dict[str, Any]]) -> None:
        cols = _EPISODE_COLUMNS
        for chunk in _chunks(rows):
            self.db.query(
                f"UNWIND $rows AS r CREATE (:Episode {{{_props(cols)}}})", rows=list(chunk)
            )

    def delete_episode(self, episode_id: str) -> None:
        self.db.query("MATCH (e:Episode {id: $id}) DETACH DELETE e", id=episode_id)

    def quarantined_claims(self, namespace: str) -> list[Row]:
        """Quarantined assertions still standing (not retracted): consolidation's input."""
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND a.quarantined"
                " AND a.retracted_at IS NULL AND a.op = $op RETURN a",
                ns=namespace,
                op="assert",
            )
        ]

    def assertions_citing(self, namespace: str, episode_id: str) -> list[Row]:
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND list_contains(a.evidence, $ep)"
                " RETURN a",
                ns=namespace,
                ep=episode_id,
            )
        ]

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

    # --- slots and the assertion log -----------------------------------------------------
    def create_slots(self, rows: Sequence[dict[str, Any]]) -> None:
        """Slots not stored yet, with their packed state: rows carry the slot columns,
        `log` and `versions`."""
        if len(rows) >= _LOAD_MIN:
            load_rows(
                self.db,
                f"CREATE (:Slot {{{_cols(_SLOT_COLUMNS)}}}),"
                f" (:SlotState {{{_cols(_STATE_COLUMNS)}}})",
                (*_SLOT_COLUMNS, "log", "versions"),
                rows,
            )
            return
        for r in rows:
            self.db.query(
                f"CREATE (:Slot {{{_params(_SLOT_COLUMNS)}}}),"
                f" (:SlotState {{{_params(_STATE_COLUMNS)}}})",
                **{c: r[c] for c in (*_SLOT_COLUMNS, *_STATE_COLUMNS)},
            )

    def slot(self, slot_id: str) -> Row | None:
        rows = self.db.query("MATCH (s:Slot {id: $id}) RETURN s", id=slot_id)
        return rows[0]["s"] if rows else None

    def slot_states(self, slot_ids: Sequence[str]) -> dict[str, Row]:
        """Slot rows with their packed log and versions, for those that exist."""
        if len(slot_ids) <= _FEW:
            rows = [
                row
                for i in slot_ids
                for row in self.db.query(
                    "MATCH (s:Slot {id: $id}), (x:SlotState {id: $id})"
                    f" RETURN {_SLOT_RETURN}, {_STATE_RETURN}",
                    id=i,
                )
            ]
        else:
            # one scan-and-join per table: a two-table pattern under UNWIND plans as a
            # cross product that exhausts the buffer pool
            rows, states = [], {}
            for chunk in _chunks(list(slot_ids), _SCAN_BATCH):
                rows += self.db.query(
                    f"UNWIND $ids AS i MATCH (s:Slot {{id: i}}) RETURN {_SLOT_RETURN}",
                    ids=list(chunk),
                )
                for r in self.db.query(
                    "UNWIND $ids AS i MATCH (x:SlotState {id: i})"
                    f" RETURN x.id AS id, {_STATE_RETURN}",
                    ids=list(chunk),
                ):
                    states[r["id"]] = r
            rows = [{**r, **states.get(r["id"], {})} for r in rows]
        return {r["id"]: r for r in rows}

    def packed_states(self, slot_ids: Sequence[str]) -> dict[str, Row]:
        """Only the packed state (id, log, versions) of the slots that exist: for a
        writer that already knows the slot's own columns, one table scanned, not two."""
        rows = self._by_keys(
            slot_ids,
            f"MATCH (x:SlotState {{id: $id}}) RETURN x.id AS id, {_STATE_RETURN}",
            f"UNWIND $ids AS i MATCH (x:SlotState {{id: i}}) RETURN x.id AS id, {_STATE_RETURN}",
        )
        return {r["id"]: r for r in rows}

    def save_slot_states(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Replace the packed state of existing slots: rows carry id, log, versions."""
        if len(rows) <= _FEW:
            for r in rows:
                self.db.query(
                    "MATCH (x:SlotState {id: $id}) DELETE x"
                    f" CREATE (:SlotState {{{_params(_STATE_COLUMNS)}}})",
                    **{c: r[c] for c in _STATE_COLUMNS},
                )
            return
        for chunk in _chunks(rows, _SCAN_BATCH):
            load_rows(
                self.db,
                "MATCH (x:SlotState {id: id}) DELETE x"
                f" CREATE (:SlotState {{{_cols(_STATE_COLUMNS)}}})",
                _STATE_COLUMNS,
                chunk,
            )

    def slots_of_predicate(self, namespace: str, predicate: str) -> list[str]:
        rows = self.db.query(
            "MATCH (s:Slot) WHERE s.namespace = $ns AND s.predicate = $p RETURN s.id AS id",
            ns=namespace,
            p=predicate,
        )
        return [r["id"] for r in rows]

    def write_slot(
        self,
        *,
        slot: Mapping[str, Any],
        new: bool,
        assertions: Sequence[Mapping[str, Any]],
        expire: Sequence[str],
        at: datetime,
        insert: Sequence[Mapping[str, Any]],
        entities: Sequence[Mapping[str, Any]],
    ) -> bool:
        """A small write to one slot as one statement (graph/_fused.py); False when
        it is too big for one, and nothing was written."""
        if not fits(len(entities), len(assertions), len(expire), len(insert)):
            return False
        cypher, params = slot_write(
            slot=slot,
            new=new,
            assertions=assertions,
            expire=expire,
            at=at,
            insert=insert,
            entities=entities,
        )
        rows = self.db.query(cypher, **params)
        if [r["n"] for r in rows] != [1]:
            raise StoreError("internal: a write to a slot found a row missing")
        return True

    def create_assertions(self, rows: Sequence[dict[str, Any]]) -> None:
        if len(rows) >= _LOAD_MIN:
            load_rows(
                self.db,
                "MATCH (s:Slot {id: slot_id})"
                f" CREATE (s)-[:LOGS]->(:Assertion {{{_cols(_ASSERTION_COLUMNS)}}})",
                _ASSERTION_COLUMNS,
                [_assertion_row(r) for r in rows],
            )
            return
        for r in rows:
            self.db.query(
                "MATCH (s:Slot {id: $slot_id})"
                f" CREATE (s)-[:LOGS]->(:Assertion {{{_params(_ASSERTION_COLUMNS)}}})",
                **_assertion_row(r),
            )

    def assertion(self, assertion_id: str) -> Row | None:
        rows = self.db.query("MATCH (a:Assertion {id: $id}) RETURN a", id=assertion_id)
        return rows[0]["a"] if rows else None

    def slot_log(self, slot_id: str) -> list[Row]:
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (s:Slot {id: $id})-[:LOGS]->(a:Assertion) RETURN a", id=slot_id
            )
        ]

    def retract_assertion(self, assertion_id: str, at: datetime, reason: str | None) -> None:
        self.db.query(
            "MATCH (a:Assertion {id: $id}) SET a.retracted_at = $at, a.retract_reason = $reason",
            id=assertion_id,
            at=at,
            reason=reason,
        )

    def set_assertion_evidence(self, assertion_id: str, evidence: list[str]) -> None:
        self.db.query(
            "MATCH (a:Assertion {id: $id}) SET a.evidence = $ev", id=assertion_id, ev=evidence
        )

    def delete_assertion(self, assertion_id: str) -> None:
        self.db.query("MATCH (a:Assertion {id: $id}) DETACH DELETE a", id=assertion_id)

    # --- versions --------------------------------------------------------------------------
    def create_versions(self, rows: Sequence[dict[str, Any]]) -> None:
        if len(rows) >= _LOAD_MIN:
            # one node per MATCH, chained: each plans as one hash join
            load_rows(
                self.db,
                "MATCH (s:Slot {id: slot_id}) WITH * MATCH (e:Entity {id: subject_id})"
                " WITH * MATCH (o:Entity {id: object_id})"
                f" CREATE (s)-[:HAS_VERSION]->(f:Fact {{{_cols(_FACT_COLUMNS)}}}),"
                " (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)",
                _FACT_COLUMNS,
                [_fact_row(r) for r in rows],
            )
            return
        for r in rows:
            self.db.query(
                "MATCH (s:Slot {id: $slot_id}), (e:Entity {id: $subject_id}),"
                " (o:Entity {id: $object_id})"
                f" CREATE (s)-[:HAS_VERSION]->(f:Fact {{{_params(_FACT_COLUMNS)}}}),"
                " (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)",
                **_fact_row(r),
            )

    def expire_versions(self, version_ids: Sequence[str], at: datetime) -> None:
        if len(version_ids) <= _FEW:
            for i in version_ids:
                self.db.query("MATCH (f:Fact {id: $id}) SET f.expired_at = $at", id=i, at=at)
            return
        for chunk in _chunks(list(version_ids), _SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) SET f.expired_at = $at",
                ids=list(chunk),
                at=at,
            )

    def delete_versions(self, version_ids: Sequence[str]) -> None:
        if len(version_ids) <= _FEW:
            for i in version_ids:
                self.db.query("MATCH (f:Fact {id: $id}) DETACH DELETE f", id=i)
            return
        for chunk in _chunks(list(version_ids), _SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) DETACH DELETE f", ids=list(chunk)
            )

    def slot_version_ids(self, slot_id: str) -> list[str]:
        rows = self.db.query(
            "MATCH (s:Slot {id: $id})-[:HAS_VERSION]->(f:Fact) RETURN f.id AS id", id=slot_id
        )
        return [r["id"] for r in rows]

    def facts_asof(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime,
        slot_id: str | None = None,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[Row]:
        """Versions believed at `known_at` (and valid at `valid_at`, unless it is None)."""
        params: dict[str, Any] = {"k": known_at}
        where = [_BELIEVED]
        if valid_at is not None:
            where.append(_VALID)
            params["v"] = valid_at
        if not include_quarantined:
            where.append(_ACTIVE)
        # anchor on a primary key whenever one is given: the planner then walks one hop
        if slot_id is not None:
            head = "MATCH (s:Slot {id: $slot})-[:HAS_VERSION]->(f:Fact)"
            params["slot"] = slot_id
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
            rows.sort(key=_fact_order)
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

    # --- tombstones -------------------------------------------------------------------------
    def create_tombstone(self, row: dict[str, Any]) -> None:
        self.db.query(
            "CREATE (:Tombstone {id: $id, namespace: $namespace, kind: $kind, slot_id: $slot_id,"
            " erased_at: $erased_at, reason: $reason})",
            **{
                k: row.get(k) for k in ("id", "namespace", "kind", "slot_id", "erased_at", "reason")
            },
        )
        if row.get("slot_id"):
            self.db.query(
                "MATCH (s:Slot {id: $s}), (t:Tombstone {id: $t}) CREATE (s)-[:HAS_TOMBSTONE]->(t)",
                s=row["slot_id"],
                t=row["id"],
            )

    def tombstone(self, tomb_id: str) -> Row | None:
        rows = self.db.query("MATCH (t:Tombstone {id: $id}) RETURN t", id=tomb_id)
        return rows[0]["t"] if rows else None

    def slot_tombstones(self, slot_id: str) -> list[Row]:
        return [
            r["t"]
            for r in self.db.query(
                "MATCH (s:Slot {id: $id})-[:HAS_TOMBSTONE]->(t:Tombstone) RETURN t", id=slot_id
            )
        ]

    # --- counts and compaction ---------------------------------------------------------------
    def counts(self, namespace: str) -> dict[str, int]:
        out = {}
        for label in ("Episode", "Entity", "Assertion", "Fact", "Tombstone", "Predicate"):
            # label is one of our constants, never input
            rows = self.db.query(
                f"MATCH (n:{label}) WHERE n.namespace = $ns RETURN count(*) AS c", ns=namespace
            )
            out[label] = int(rows[0]["c"])
        return out

    def namespaces(self) -> list[str]:
        rows = self.db.query("MATCH (s:Slot) RETURN DISTINCT s.namespace AS ns")
        rows += self.db.query("MATCH (e:Episode) RETURN DISTINCT e.namespace AS ns")
        return sorted({r["ns"] for r in rows})

    def request_compaction(self) -> None:
        """Mark the file for rewriting on close (before the erase commits: a crash
        in between only costs an extra compaction)."""
        mark = self.directory / _COMPACT_MARK
        with open(mark, "w") as fh:
            fh.write("erase\n")
            fh.flush()


def _finish_compaction(directory: Path) -> None:
    """Rewrite the database file without the bytes of deleted rows, if an erase asked.

    Kùzu leaves deleted strings in the file's pages, so a privacy erase is only
    complete once the live data has been exported and re-imported into a fresh
    file. The original stays in place until the atomic rename, so a crash at
    any point leaves either the old or the new file, and the mark survives to
    make the next open finish the job.
    """
    mark = directory / _COMPACT_MARK
    export = directory / _COMPACT_EXPORT
    new = directory / _COMPACT_NEW
    for stale in (export, new, Path(f"{new}.wal")):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    if not mark.exists() or not (directory / DB_FILE).exists():
        return
    old = Database.open(directory / DB_FILE)
    try:
        old.export_to(export)
    finally:
        old.close()
    fresh = Database.open(new)
    try:
        fresh.import_from(export)
        fresh.checkpoint()
    finally:
        fresh.close()
    new.replace(directory / DB_FILE)
    wal = directory / f"{DB_FILE}.wal"
    if wal.exists():
        wal.unlink()
    shutil.rmtree(export)
    mark.unlink()


def _fact_order(r: Row) -> tuple[str, str, bool, datetime, str]:
    vf = r["valid_from"]
    return (r["subject"], r["predicate"], vf is not None, vf or _EPOCH, r["object"])


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
