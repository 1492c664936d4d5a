"""Materialisation: a slot's log replayed at a transaction time into fact versions.

    >>> mat = Materialiser(store, entities)
    >>> states = mat.states({slot_id: row})                  # whole logs and versions
    >>> plan = mat.plan(states, {slot_id: "one"}, k)         # what to expire and insert
    >>> mat.apply(plan, states, k)

The whole-history path, shared by retract, erasure, predicate changes, promotion
and reconciliation: each reads the touched slots' journals (every assertion and
version), replays their logs at K (`temporal.replay`), diffs the result with what
was believed, and writes the difference, with each line's starts laid out afresh
(`temporal.timelines`). Routine writes, which only append at the newest K, take
the bounded path instead (engine/append.py). The rules are pure functions in
`temporal/`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .._ids import _new_id
from ..models import Cardinality
from ..storage import FactWrite, LineAsk, LineEdit, LineStart, Store, VersionDelta, line_of
from ..temporal import LogEntry, Schedule, Segment, diff, materialise, replay, timelines
from .rows import statement_text

if TYPE_CHECKING:
    from .entities import EntityIndex


def log_entry(a: Mapping[str, Any]) -> LogEntry:
    return LogEntry(
        id=a["id"],
        op=a["op"],
        object=a["object_id"],
        valid_from=a["valid_from"],
        valid_to=a["valid_to"],
        recorded_at=a["recorded_at"],
        seq=a["seq"],
        retracted_at=a["retracted_at"],
    )


@dataclass
class SlotState:
    """A slot as one write sees it: its row, assertion log and every version."""

    row: dict[str, Any]
    log: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    new: bool


@dataclass
class Plan:
    vanish: list[str] = field(default_factory=list)
    expire: list[str] = field(default_factory=list)
    insert: list[dict[str, Any]] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)
    # the rows of `vanish` and `expire`, as they were (what in-process copies patch)
    vanished: list[dict[str, Any]] = field(default_factory=list)
    expired: list[dict[str, Any]] = field(default_factory=list)

    def delta(self, k: datetime) -> VersionDelta:
        """What this plan does to fact versions, for `Store.writing_facts`."""
        return VersionDelta(
            at=k,
            inserted=tuple(dict(r) for r in self.insert),
            expired=tuple(_ends(v) for v in self.expired),
            vanished=tuple(_ends(v) for v in self.vanished),
        )

    def extend(self, more: Plan) -> None:
        self.vanish += more.vanish
        self.expire += more.expire
        self.insert += more.insert
        self.changed |= more.changed
        self.vanished += more.vanished
        self.expired += more.expired


def _ends(v: Mapping[str, Any]) -> tuple[str, str, str, str | None]:
    return (v["id"], v["namespace"], v["subject_id"], v["object_id"])


class Materialiser:
    """Reads, replays and writes whole slots; names come from the entity index."""

    def __init__(self, store: Store, entities: EntityIndex) -> None:
        self._store = store
        self._entities = entities

    def versions_from_log(
        self, log: Sequence[Mapping[str, Any]], cardinality: Cardinality | Schedule
    ) -> list[dict[str, Any]]:
        """A slot's whole version history rebuilt from its log (erase, restore): the
        replayed versions of trusted assertions, plus quarantined claims as they stand.
        `cardinality` is the predicate's schedule over transaction time (`Vocabulary.schedule`
        builds it from the definition history), or one cardinality when it never changed."""
        by_id = {a["id"]: a for a in log}
        active = [log_entry(a) for a in log if not a["quarantined"]]
        rows = [
            self.version_row(
                by_id[v.segment.source],
                v.segment.valid_from,
                v.segment.valid_to,
                v.recorded_at,
                v.expired_at,
            )
            for v in materialise(active, cardinality)
        ]
        for a in log:
            if a["quarantined"] and a["op"] == "assert":
                rows.append(
                    self.version_row(
                        a, a["valid_from"], a["valid_to"], a["recorded_at"], a["retracted_at"]
                    )
                )
        return rows

    def version_row(
        self,
        a: Mapping[str, Any],
        valid_from: datetime | None,
        valid_to: datetime | None,
        recorded_at: datetime,
        expired_at: datetime | None = None,
    ) -> dict[str, Any]:
        """A version of assertion `a` (an assertion row, or a version row of the same
        assertion: what a version copies of its assertion is the same in both)."""
        slot = a["slot_id"]
        _, subject_id, predicate = slot.split("\x1f")
        subject = self._entities.name_of(subject_id)
        obj = self._entities.name_of(a["object_id"])
        return {
            "id": _new_id("fv"),
            "namespace": a["namespace"],
            "slot_id": slot,
            "assertion_id": a.get("assertion_id", a["id"]),
            "subject_id": subject_id,
            "subject": subject,
            "predicate": predicate,
            "object_id": a["object_id"],
            "object": obj,
            "statement": statement_text(subject, predicate, obj),
            "valid_from": valid_from,
            "valid_to": valid_to,
            "recorded_at": recorded_at,
            "expired_at": expired_at,
            "confidence": a["confidence"],
            "author_kind": a["author_kind"],
            "evidence": a["evidence"],
            "quarantined": a["quarantined"],
        }

    def states(
        self, slots: Mapping[str, Mapping[str, Any]], new: AbstractSet[str] = frozenset()
    ) -> dict[str, SlotState]:
        """Each slot's whole log and versions, from its journal (new slots start empty).

        `slots` maps slot id -> its row or just {id}; `new` names slots known not to be
        stored (their subject was created by this write).
        """
        stored = self._store.slots.histories([s for s in slots if s not in new])
        out: dict[str, SlotState] = {}
        known = self._entities.names
        for sid, meta in slots.items():
            found = stored.get(sid)
            if found is None:
                out[sid] = SlotState(dict(meta), [], [], new=True)
                continue
            row, log, versions = found
            out[sid] = SlotState(dict(row), log, versions, new=False)
            # versions carry their object's name (entity names never change): re-deriving an
            # older assertion's version then costs no Entity lookup
            known.setdefault(row["subject_id"], row["subject"])
            for v in versions:
                if v["object_id"] is not None:
                    known.setdefault(v["object_id"], v["object"])
        return out

    def plan(
        self, states: Mapping[str, SlotState], cards: Mapping[str, Cardinality], k: datetime
    ) -> Plan:
        """Replay each slot at K against what it believes now; edits `states` in place."""
        plan = Plan()
        for sid, st in states.items():
            by_id = {a["id"]: a for a in st.log}
            log = [log_entry(a) for a in st.log if not a["quarantined"]]
            believed = {
                Segment(v["object_id"], v["valid_from"], v["valid_to"], v["assertion_id"]): v
                for v in st.versions
                if v["expired_at"] is None and not v["quarantined"]
            }
            gone, new = diff(list(believed), replay(log, cards[sid], known_at=k))
            if gone or new:
                plan.changed.add(sid)
            for seg in gone:
                v = believed[seg]
                if v["recorded_at"] == k:
                    # believed for no instant (written and overwritten at one K): not knowledge
                    plan.vanish.append(v["id"])
                    plan.vanished.append(v)
                    st.versions = [x for x in st.versions if x["id"] != v["id"]]
                else:
                    plan.expire.append(v["id"])
                    plan.expired.append(v)
                    v["expired_at"] = k
            for seg in new:
                row = self.version_row(by_id[seg.source], seg.valid_from, seg.valid_to, k)
                plan.insert.append(row)
                st.versions.append(row)
        return plan

    def apply(
        self,
        plan: Plan,
        states: Mapping[str, SlotState],
        k: datetime,
        cards: Mapping[str, Cardinality],
        *,
        retract: Sequence[tuple[str, str, str | None]] = (),
        assertions: Sequence[dict[str, Any]] = (),
        entities: Sequence[dict[str, Any]] = (),
    ) -> None:
        """Write a plan: its version changes, the slots' journal events (the `assertions`
        recorded, the `retract`ions) and each line of the slots laid out afresh from the
        replay at K; new slots and `entities` are created."""
        by_id = {v["id"]: v for st in states.values() for v in st.versions}
        by_id.update({v["id"]: v for v in plan.vanished})
        w = FactWrite(
            at=k,
            entities=list(entities),
            slots=[slot_columns(st.row) for st in states.values() if st.new and st.log],
            assertions=list(assertions),
            insert=plan.insert,
            expire=[by_id[i] for i in plan.expire],
            vanish=[by_id[i] for i in plan.vanish],
            retract=list(retract),
            lines=self.line_edits(states, cards, k, plan.changed),
        )
        self._store.slots.write_facts(w)

    def line_edits(
        self,
        states: Mapping[str, SlotState],
        cards: Mapping[str, Cardinality],
        k: datetime,
        changed: AbstractSet[str] | None = None,
    ) -> list[LineEdit]:
        """Every line of each (changed) slot laid out afresh as its starts stand at K,
        from its log and believed versions (both layouts' ids are rewritten: a
        cardinality change moves a slot's starts between them)."""
        asks: dict[str, LineAsk] = {}
        runs: dict[str, list[LineStart]] = {}
        for sid, st in states.items():
            if changed is not None and sid not in changed:
                continue
            believed = {
                (v["assertion_id"], v["valid_from"]): v
                for v in st.versions
                if v["expired_at"] is None and not v["quarantined"]
            }
            log = [log_entry(a) for a in st.log if not a["quarantined"]]
            mine = {sid} | {line_of(sid, a["object_id"]) for a in st.log if a["object_id"]}
            for key, run in timelines(log, cards[sid], known_at=k).items():
                lid = line_of(sid, key)
                mine.add(lid)
                runs[lid] = [
                    LineStart(
                        s.at, s.source, None if s.object is None else believed[s.source, s.at]
                    )
                    for s in run
                ]
            subject = st.row.get("subject") or self._entities.name_of(st.row["subject_id"])
            for lid in mine:
                asks[lid] = LineAsk(sid, st.row["namespace"], subject, None)
        windows = self._store.slots.line_windows(asks)
        return [
            LineEdit(win, runs.get(lid, []))
            for lid, win in windows.items()
            if not (win.new and not runs.get(lid))
        ]

    def rematerialise(self, ns: str, cards: Mapping[str, Cardinality], k: datetime) -> set[str]:
        """Re-read existing slots at K (after a cardinality change); the changed slots."""
        states = self.states({s: {"id": s} for s in cards})
        states = {s: st for s, st in states.items() if not st.new}
        plan = self.plan(states, cards, k)
        # a cardinality change moves a slot's starts between line layouts: every slot
        plan_all = Plan(**{**plan.__dict__, "changed": set(states)})
        self.apply(plan_all, states, k, cards)
        return plan.changed


def slot_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    """A slot's own columns (a row may carry more)."""
    return {c: row[c] for c in ("id", "namespace", "subject_id", "predicate", "subject")}
