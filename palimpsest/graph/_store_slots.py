"""Slots, their assertion log and their fact versions: the write path's statements.

    >>> states = store.packed_states([slot_id])
    >>> store.write_slot(slot=packed, new=False, assertions=[a], expire=[], at=k,
    ...                  insert=[row], entities=[])

A mixin of `Store` (graph/_store.py). A single write to one slot is one fused
statement (graph/_fused.py); batches go through `LOAD FROM` Arrow tables
(graph/_bulk.py). No temporal rule is decided here, only stored and fetched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..errors import StoreError
from ._bulk import Bulk, load_rows
from ._columns import (
    ASSERTION_COLUMNS,
    FACT_COLUMNS,
    STATE_COLUMNS,
    assertion_row,
    fact_row,
    param_props,
)
from ._cypher import (
    FEW,
    LOAD_MIN,
    SCAN_BATCH,
    SLOT_FACTS,
    StoreBase,
    chunks,
    cols,
    returns,
    seek_chunks,
    slot_subject,
)
from ._db import Row
from ._fused import fits, slot_write
from ._slots import log_ids

_ROW_RETURN = returns("x", STATE_COLUMNS)
_STATE_RETURN = "x.log AS log, x.versions AS versions"
_STATE = ("log", "versions")
_ASSERTION_READ = tuple(c for c in ASSERTION_COLUMNS if c != "id")  # `_seek` adds the id
_CREATE_STATES = f"CREATE (:SlotState {{{cols(STATE_COLUMNS)}}})"
_REPLACE_STATES = (
    f"MATCH (x:SlotState {{id: id}}) DELETE x CREATE (:SlotState {{{cols(STATE_COLUMNS)}}})"
)
# one node per MATCH, chained: each plans as one hash join
_CREATE_VERSIONS = (
    "MATCH (e:Entity {id: subject_id}) WITH * MATCH (o:Entity {id: object_id})"
    f" CREATE (f:Fact {{{cols(FACT_COLUMNS)}}}), (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)"
)


# a state is replaced by a delete and a create, two statements a slot: past a few slots one
# COPY is cheaper (100 slots: ~220 ms one by one, ~35 ms as a COPY; bench/mcp_compat.py)
STATES_FEW = 16


class SlotStore(StoreBase):
    """Slots with their packed state, assertions, fact versions."""

    # --- slots and the assertion log -----------------------------------------------------
    def create_slots(self, rows: Sequence[dict[str, Any]]) -> None:
        """Slots not stored yet, with their packed state: rows carry the slot columns,
        `log` and `versions` (STATE_COLUMNS)."""
        if len(rows) >= LOAD_MIN:
            load_rows(self.db, _CREATE_STATES, STATE_COLUMNS, rows)
            return
        for r in rows:
            self.db.query(
                f"CREATE (:SlotState {{{param_props(STATE_COLUMNS)}}})",
                **{c: r[c] for c in STATE_COLUMNS},
            )

    def slot_states(self, slot_ids: Sequence[str]) -> dict[str, Row]:
        """Slot rows with their packed log and versions, for those that exist."""
        rows = self._by_keys(
            slot_ids,
            f"MATCH (x:SlotState {{id: $id}}) RETURN {_ROW_RETURN}",
            f"UNWIND $ids AS i MATCH (x:SlotState {{id: i}}) RETURN {_ROW_RETURN}",
        )
        return {r["id"]: r for r in rows}

    def packed_states(self, slot_ids: Sequence[str]) -> dict[str, Row]:
        """Only the packed state (id, log, versions) of the slots that exist: for a
        writer that already knows the slot's own columns, one table read, not two."""
        if self._seek_pays_in("SlotState", len(slot_ids)):
            return self._seek("SlotState", slot_ids, _STATE)
        rows = self._by_keys(
            slot_ids,
            f"MATCH (x:SlotState {{id: $id}}) RETURN x.id AS id, {_STATE_RETURN}",
            f"UNWIND $ids AS i MATCH (x:SlotState {{id: i}}) RETURN x.id AS id, {_STATE_RETURN}",
        )
        return {r["id"]: r for r in rows}

    @staticmethod
    def states_bulk(rows: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]] | Bulk:
        """`rows` for `save_slot_states`, with their Arrow table built if it will need one
        (pure: any thread)."""
        return Bulk.of(STATE_COLUMNS, rows) if STATES_FEW < len(rows) <= SCAN_BATCH else rows

    def save_slot_states(self, rows: Sequence[Mapping[str, Any]] | Bulk) -> None:
        """Replace the packed state of existing slots: rows carry every STATE_COLUMNS
        column (the slot's own columns too: the row is deleted and created again)."""
        if isinstance(rows, Bulk):
            load_rows(self.db, _REPLACE_STATES, STATE_COLUMNS, rows)
            return
        if len(rows) <= STATES_FEW:
            for r in rows:
                self.db.query(
                    "MATCH (x:SlotState {id: $id}) DELETE x"
                    f" CREATE (:SlotState {{{param_props(STATE_COLUMNS)}}})",
                    **{c: r[c] for c in STATE_COLUMNS},
                )
            return
        for chunk in chunks(rows, SCAN_BATCH):
            load_rows(self.db, _REPLACE_STATES, STATE_COLUMNS, chunk)

    def slots_of_predicate(self, namespace: str, predicate: str) -> list[str]:
        rows = self.db.query(
            "MATCH (s:SlotState) WHERE s.namespace = $ns AND s.predicate = $p RETURN s.id AS id",
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
        """Assertions of slots that exist (or are created in the same transaction):
        `slot_id` says whose, and the slot's packed log lists them."""
        if len(rows) >= LOAD_MIN:
            load_rows(
                self.db,
                f"CREATE (:Assertion {{{cols(ASSERTION_COLUMNS)}}})",
                ASSERTION_COLUMNS,
                rows,
                fill=True,  # as `assertion_row` fills them
            )
            return
        for r in rows:
            self.db.query(
                f"CREATE (:Assertion {{{param_props(ASSERTION_COLUMNS)}}})", **assertion_row(r)
            )

    def assertion(self, assertion_id: str) -> Row | None:
        rows = self.db.query("MATCH (a:Assertion {id: $id}) RETURN a", id=assertion_id)
        return rows[0]["a"] if rows else None

    def slot_log(self, slot_id: str) -> list[Row]:
        """The slot's stored assertions, in recording order: the ids its packed log
        lists, each read by primary key (one deleted since is simply not found)."""
        state = self._seek("SlotState", [slot_id], ("log",)).get(slot_id)
        ids = log_ids(state["log"] if state else None)
        found = self._seek("Assertion", ids, _ASSERTION_READ)
        return [found[i] for i in ids if i in found]

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
    @staticmethod
    def versions_bulk(rows: Sequence[dict[str, Any]]) -> Sequence[dict[str, Any]] | Bulk:
        """`rows` for `create_versions`, with their Arrow table built if it will need one
        (pure: any thread)."""
        return Bulk.of(FACT_COLUMNS, rows, fill=True) if len(rows) >= LOAD_MIN else rows

    def create_versions(self, rows: Sequence[dict[str, Any]] | Bulk) -> None:
        if isinstance(rows, Bulk) or len(rows) >= LOAD_MIN:
            load_rows(self.db, _CREATE_VERSIONS, FACT_COLUMNS, rows, fill=True)  # as `fact_row`
            return
        for r in rows:
            self.db.query(
                "MATCH (e:Entity {id: $subject_id}), (o:Entity {id: $object_id})"
                f" CREATE (f:Fact {{{param_props(FACT_COLUMNS)}}}),"
                " (e)-[:SUBJ]->(f), (f)-[:OBJ]->(o)",
                **fact_row(r),
            )

    def expire_versions(self, version_ids: Sequence[str], at: datetime) -> None:
        if self._seek_pays(len(version_ids)):
            # every id exists (this write read it): MATCH, one seek each, SET them all
            for chunk in seek_chunks(version_ids):
                k = len(chunk)
                self.db.query(
                    " ".join(f"MATCH (x{j}:Fact {{id: $k{j}}})" for j in range(k))
                    + " SET "
                    + ", ".join(f"x{j}.expired_at = $at" for j in range(k)),
                    at=at,
                    **{f"k{j}": i for j, i in enumerate(chunk)},
                )
            return
        for part in chunks(list(version_ids), SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) SET f.expired_at = $at",
                ids=list(part),
                at=at,
            )

    def delete_versions(self, version_ids: Sequence[str]) -> None:
        if len(version_ids) <= FEW:
            for i in version_ids:
                self.db.query("MATCH (f:Fact {id: $id}) DETACH DELETE f", id=i)
            return
        for chunk in chunks(list(version_ids), SCAN_BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (f:Fact {id: i}) DETACH DELETE f", ids=list(chunk)
            )

    def slot_version_ids(self, slot_id: str) -> list[str]:
        """Every stored version of the slot, read from the Fact rows themselves (an
        erase must miss none): one hop from the subject, whose id the slot id holds."""
        subject_id = slot_subject(slot_id)
        if subject_id is None:
            return []
        rows = self.db.query(f"{SLOT_FACTS} RETURN f.id AS id", sid=subject_id, slot=slot_id)
        return [r["id"] for r in rows]
