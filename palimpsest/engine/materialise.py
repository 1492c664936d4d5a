"""Materialisation: a slot's log replayed at a transaction time into fact versions.

    >>> mat = Materialiser(store, entities)
    >>> states = mat.states({slot_id: row})                  # logs and versions, unpacked
    >>> plan = mat.plan(states, {slot_id: "one"}, k)         # what to expire and insert
    >>> mat.apply(plan, states, k)

Shared by writes, retract, erasure, predicate changes and restore: each reads
the touched slots' packed states, replays their logs at K (`temporal.replay`),
diffs the result with what was believed, and writes the difference. The
temporal rules themselves are pure functions in `temporal/`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from .._ids import _new_id
from ..graph import Store, VersionDelta, decode, encode
from ..models import Cardinality
from ..temporal import LogEntry, Schedule, Segment, diff, materialise, replay

if TYPE_CHECKING:
    from .entities import EntityIndex
    from .read_ahead import ReadAhead

_T = TypeVar("_T")


def _log_entry(a: Mapping[str, Any]) -> LogEntry:
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


def _at_once(fn: Callable[..., _T], *args: Any) -> Future[_T]:
    """`fn(*args)` run now, as a finished future (`_apply` without a helper thread)."""
    done: Future[_T] = Future()
    done.set_result(fn(*args))
    return done


def packed(st: SlotState) -> dict[str, Any]:
    log, versions = encode(st.log, st.versions)
    return {**st.row, "log": log, "versions": versions}


class Materialiser:
    """Reads, replays and writes slots; names come from the entity index."""

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
        active = [_log_entry(a) for a in log if not a["quarantined"]]
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
        slot = a["slot_id"]
        _, subject_id, predicate = slot.split("\x1f")
        subject = self._entities.name_of(subject_id)
        obj = self._entities.name_of(a["object_id"])
        return {
            "id": _new_id("fv"),
            "namespace": a["namespace"],
            "slot_id": slot,
            "assertion_id": a["id"],
            "subject_id": subject_id,
            "subject": subject,
            "predicate": predicate,
            "object_id": a["object_id"],
            "object": obj,
            "statement": f"{subject} {predicate.replace('_', ' ')} {obj}",
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
        self,
        slots: Mapping[str, Mapping[str, Any]],
        new: AbstractSet[str] = frozenset(),
        ahead: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, SlotState]:
        """Each slot's log and versions, from its packed state (new slots start empty).

        `slots` maps slot id -> {id, namespace, subject_id, predicate, subject}; `new`
        names slots known not to be stored (their subject was created by this write);
        `ahead` is the packed state of every other slot, if it was read already.
        """
        if all("subject" in m for m in slots.values()):
            # a writer passes each slot's full row: only the packed state is read
            packed = (
                self._store.packed_states([s for s in slots if s not in new])
                if ahead is None
                else ahead
            )
            stored = {sid: {**slots[sid], **row} for sid, row in packed.items()}
        else:
            stored = self._store.slot_states(list(slots))
        out: dict[str, SlotState] = {}
        for sid, meta in slots.items():
            row = stored.get(sid)
            if row is None:
                out[sid] = SlotState(dict(meta), [], [], new=True)
                continue
            log, versions = decode(row["log"], row["versions"], slot=row, subject=row["subject"])
            out[sid] = SlotState(row, log, versions, new=False)
            # versions carry their object's name (entity names never change): re-deriving an
            # older assertion's version then costs no Entity lookup (measured: ~400 a batch)
            known = self._entities.names
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
            believed: dict[Segment, dict[str, Any]] = {}
            gone: list[Segment] = []
            if st.new and not st.versions and len(st.log) == 1 and not st.log[0]["quarantined"]:
                # a slot this write opens with one assertion (most of a bulk import): nothing
                # was believed, so every replayed segment is new and no diff is needed
                new = replay([_log_entry(st.log[0])], cards[sid], known_at=k)
            else:
                log = [_log_entry(a) for a in st.log if not a["quarantined"]]
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
        helper: ReadAhead | None = None,
    ) -> None:
        """Write a plan's version changes and the packed state of existing slots.

        New slots are created by the caller, with their packed state, before this runs.
        With a `helper` thread, the versions' Arrow table and the packed states are built
        there while this thread waits for Kùzu's expiry and version statements.
        """
        store = self._store
        store.delete_versions(plan.vanish)
        run = helper.submit if helper is not None else _at_once
        versions = run(store.versions_bulk, plan.insert)
        saved = run(lambda: store.states_bulk([packed(st) for st in states.values() if not st.new]))
        store.expire_versions(plan.expire, k)
        store.create_versions(versions.result())
        store.save_slot_states(saved.result())

    def rematerialise(self, ns: str, cards: Mapping[str, Cardinality], k: datetime) -> set[str]:
        """Re-read existing slots at K (after a cardinality change); the changed slots."""
        states = self.states({s: {"id": s} for s in cards})
        states = {s: st for s, st in states.items() if not st.new}
        plan = self.plan(states, cards, k)
        self.apply(plan, states, k)
        return plan.changed
