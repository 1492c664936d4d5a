"""The write every assertion goes through: names, slots, replay, one transaction.

    >>> mem._write_assertions("default", [mem._parse_assert("default", 0, item)])

`_write_assertions` resolves names, builds the assertion rows, reads each
touched slot's packed state, replays it at the transaction time K
(`_materialise.py`) and writes what changed: one fused statement for a single
slot (graph/_fused.py), batched statements otherwise. A large `assert_many`
reads its stored slots' states on a second thread meanwhile (_read_ahead.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from . import _names as names
from ._core import UNSET, _slot_id, _slot_row, _trusted
from ._embed_writes import _EmbedWrites
from ._ids import _new_id
from ._materialise import _packed, _Plan, _SlotState
from .errors import NotFound
from .models import Cardinality, Fact


@dataclass
class _Draft:
    """A write's rows, before any slot state is read."""

    slots: dict[str, dict[str, Any]]  # slot id -> its row
    new: set[str]  # slots of subjects this write creates: nothing stored to read
    assertions: list[dict[str, Any]]
    entities: list[dict[str, Any]]  # to create
    cards: dict[str, Cardinality]  # slot id -> its predicate's cardinality
    k: datetime  # the transaction time


class _WriteBatch(_EmbedWrites):
    def _write_assertions(
        self,
        ns: str,
        parsed: list[dict[str, Any]],
        *,
        k: datetime | None = None,
        read_ahead: bool = False,
    ) -> list[Fact]:
        """Store parsed assertions; `k` joins the caller's transaction time (remember).

        `read_ahead`: the caller holds the memory's lock from before this call to after
        it, so the stored slots' states may be read before the write begins (see
        _read_ahead.py)."""
        if not parsed:
            return []
        self._check_evidence(ns, {e for p in parsed for e in p["evidence"]})
        for name in dict.fromkeys(p["predicate"] for p in parsed):  # once each, in order
            self._resolve_predicate(ns, name)
        preds = self._load_predicates(ns)
        texts = [
            (
                names.clean_name(p["subject"], field="subject"),
                None if p["object"] is None else names.clean_name(p["object"], field="object"),
            )
            for p in parsed
        ]
        known = self._prefetch_entities(ns, [n for pair in texts for n in pair if n is not None])
        # the slots of subjects already stored: their states are read on a second thread
        # while this one builds the write (see _read_ahead.py)
        asked: set[str] = set()
        if read_ahead:
            asked = {
                _slot_id(ns, eid, preds[p["predicate"]].name)
                for p, (subject, _) in zip(parsed, texts, strict=True)
                if (eid := known.get(names.entity_key(subject))) is not None
            }
        job = self._ahead.start(sorted(asked)) if asked else None
        entities: list[dict[str, Any]] = []
        saved = (self._last_k, self._seq)
        try:
            with self._store.write():
                k = self._tick() if k is None else k
                slots: dict[str, dict[str, Any]] = {}
                assertions: list[dict[str, Any]] = []
                for p, (subject, obj) in zip(parsed, texts, strict=True):
                    pred = preds[p["predicate"]]
                    subj_id, subj_name = self._entity_or_create(
                        ns, subject, kind="thing", pending=entities, known=known
                    )
                    obj_id = None
                    if obj is not None:
                        kind = "value" if pred.object_kind == "value" else "thing"
                        obj_id = self._entity_or_create(
                            ns, obj, kind=kind, pending=entities, known=known
                        )[0]
                    row = _slot_row(ns, subj_id, pred.name, subj_name)
                    slot = row["id"]
                    slots[slot] = row
                    start = p["valid_from"]
                    if start is UNSET:
                        start = p["reference"] or k
                    assertions.append(
                        {
                            "id": _new_id("fa"),
                            "namespace": ns,
                            "slot_id": slot,
                            "op": p["op"],
                            "object_id": obj_id,
                            "valid_from": start,
                            "valid_to": p["valid_to"],
                            "recorded_at": k,
                            "seq": self._next_seq(),
                            "confidence": p["confidence"],
                            "author_kind": p["author_kind"],
                            "evidence": p["evidence"],
                            "quarantined": p["quarantined"],
                            "retracted_at": None,
                            "retract_reason": None,
                            "origin": p.get("origin", "api"),
                        }
                    )
                fresh = {e["id"] for e in entities}  # a subject created just now has no slots
                new = {s for s, row in slots.items() if row["subject_id"] in fresh}
                cards = {s: preds[v["predicate"]].cardinality for s, v in slots.items()}
                draft = _Draft(slots, new, assertions, entities, cards, k)
                if job is not None and asked == slots.keys() - new:
                    changed = self._write_ahead(draft, job)
                    # the records are built on the reader thread while this one commits
                    done = self._ahead.submit(self._records, assertions, changed)
                else:
                    changed = self._write_in_line(draft)
                    done = None
            self._embed_note(ns, entities, assertions)  # committed (or joins the caller's)
        except BaseException:
            self._last_k, self._seq = saved
            self._forget_cache()  # entities created in a rolled-back transaction
            raise
        return done.result() if done is not None else self._records(assertions, changed)

    def _records(self, assertions: Sequence[dict[str, Any]], changed: set[str]) -> list[Fact]:
        """The Fact records a write returns (names of its entities are all at hand)."""
        return [
            self._assertion_fact(
                a,
                status="quarantined" if a["quarantined"] else "current",
                applied=(a["slot_id"] in changed) if a["op"] == "end" else None,
            )
            for a in assertions
        ]

    def _write_in_line(self, d: _Draft) -> set[str]:
        """Read the slots' states, plan, write; the slots whose versions changed."""
        states = self._states(d.slots, new=d.new)
        plan = self._settle(states, d.assertions, d.cards, d.k)
        # one slot (a single assert_fact): one statement instead of one per table
        only = next(iter(states.values())) if len(states) == 1 else None
        if (
            only is None
            or plan.vanish
            or not self._store.write_slot(
                slot=_packed(only),
                new=only.new,
                assertions=d.assertions,
                expire=plan.expire,
                at=d.k,
                insert=plan.insert,
                entities=d.entities,
            )
        ):
            self._store.create_entities(d.entities)
            self._store.create_assertions(d.assertions)
            self._store.create_slots([_packed(st) for st in states.values() if st.new])
            self._apply(plan, states, d.k)
        return plan.changed

    def _write_ahead(self, d: _Draft, job: Future[dict[str, dict[str, Any]]]) -> set[str]:
        """`_write_in_line` for a large write whose stored slots' states `job` reads on
        another thread: what needs none of them (entities, assertions, the new slots and
        their plan) is done while it reads."""
        self._store.create_entities(d.entities)
        self._store.create_assertions(d.assertions)
        mine = [a for a in d.assertions if a["slot_id"] in d.new]
        fresh = self._states({s: d.slots[s] for s in d.new}, new=d.new, ahead={})
        plan = self._settle(fresh, mine, d.cards, d.k)
        self._store.create_slots([_packed(st) for st in fresh.values()])
        rest = [a for a in d.assertions if a["slot_id"] not in d.new]
        stored = self._states(
            {s: row for s, row in d.slots.items() if s not in d.new}, ahead=job.result()
        )
        more = self._settle(stored, rest, d.cards, d.k)
        # a stored subject's first fact of some predicate opens a slot too
        self._store.create_slots([_packed(st) for st in stored.values() if st.new])
        plan.vanish += more.vanish
        plan.expire += more.expire
        plan.insert += more.insert
        plan.changed |= more.changed
        self._apply(plan, stored, d.k, helper=self._ahead)
        return plan.changed

    def _settle(
        self,
        states: Mapping[str, _SlotState],
        assertions: Sequence[dict[str, Any]],
        cards: Mapping[str, Cardinality],
        k: datetime,
    ) -> _Plan:
        """Append the assertions to their slots' logs and plan the version changes."""
        quarantined: list[dict[str, Any]] = []
        for a in assertions:
            st = states[a["slot_id"]]
            st.log.append(a)
            if a["quarantined"] and a["op"] == "assert":
                # a quarantined claim is kept as its own version, outside the replay
                row = self._version_row(a, a["valid_from"], a["valid_to"], k)
                quarantined.append(row)
                st.versions.append(row)
        plan = self._plan(states, cards, k)
        plan.insert[:0] = quarantined
        return plan

    def _check_evidence(self, ns: str, ids: set[str]) -> None:
        for eid in sorted(ids):
            row = self._store.episode(eid)
            if row is None or row["namespace"] != ns:
                raise NotFound(f"evidence: no episode {eid[:80]!r}", id=eid[:80])

    def _assertion_fact(
        self,
        a: Mapping[str, Any],
        *,
        status: str,
        expired_at: datetime | None = None,
        reason: str | None = None,
        applied: bool | None = None,
    ) -> Fact:
        """The Fact record of an assertion row (written by this engine, already validated:
        built without re-validation, which bulk writes of thousands would pay for)."""
        _, subject_id, predicate = a["slot_id"].split("\x1f")
        return _trusted(  # every field of Fact, in its order
            Fact,
            {
                "id": a["id"],
                "subject": self._name_of(subject_id),
                "predicate": predicate,
                "object": None if a["object_id"] is None else self._name_of(a["object_id"]),
                "valid_from": a["valid_from"],
                "valid_to": a["valid_to"],
                "recorded_at": a["recorded_at"],
                "expired_at": expired_at,
                "status": status,
                "confidence": a["confidence"],
                "author_kind": a["author_kind"],
                "evidence": a["evidence"] or [],
                "quarantined": a["quarantined"],
                "namespace": a["namespace"],
                "version_id": None,
                "subject_id": subject_id,
                "object_id": a["object_id"],
                "op": a["op"],
                "applied": applied,
                "reason": reason,
            },
        )
