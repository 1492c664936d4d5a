"""Writing facts: assert, end and retract, each one transaction at one transaction time.

    >>> writer.assert_many("default", [{"subject": "user", "predicate": "likes",
    ...                                 "object": "jazz"}])
    >>> writer.retract("default", fact.id, reason="user corrected it")

Every assertion goes through `write_assertions`: it resolves names (the entity
index, creating what is new), builds the assertion rows, reads each touched
slot's packed state, replays it at the transaction time K (the materialiser,
`temporal.replay`) and writes what changed: one fused statement for a single
slot (graph/_fused.py), batched statements otherwise. A large `assert_many`
reads its stored slots' states on a second thread meanwhile (`read_ahead`) and
pauses the cyclic collector (`gc_pause`). After the commit the write hands the
new names and statements to the embedding worker it was given (`EmbedNotes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .. import _names as names
from .._ids import _new_id
from .._time import TimeLike
from ..errors import AlreadyErased, Conflict, NotFound, ValidationError
from ..models import AuthorKind, Cardinality, Fact
from ..transfer._format import json_lines
from .context import Context
from .entities import EntityIndex
from .events import EmbedNotes, Events
from .gc_pause import gc_paused
from .materialise import Materialiser, Plan, SlotState, packed
from .parse import parse_assertion
from .read_ahead import ReadAhead
from .rows import UNSET, assertion_fact, slot_id, slot_row
from .vocabulary import Vocabulary

# Assertions per transaction of an import. A bulk write's expiry, version and slot-state
# statements each scan a whole table once, and its read of the stored slots turns from
# per-key seeks into one scan: their cost grows with the memory, and a larger call
# shares it. At 1M versions, with the collector paused (gc_pause.py), between
# checkpoints: 5,000 items a call 5,670-6,010/s, 20,000 items 8,580-9,130/s
# (bench/README.md, session 7).
IMPORT_BATCH = 20_000
GC_PAUSE_MIN = 1_000  # items of an assert_many that pauses the cyclic collector (gc_pause)


@dataclass
class _Draft:
    """A write's rows, before any slot state is read."""

    slots: dict[str, dict[str, Any]]  # slot id -> its row
    new: set[str]  # slots of subjects this write creates: nothing stored to read
    assertions: list[dict[str, Any]]
    entities: list[dict[str, Any]]  # to create
    cards: dict[str, Cardinality]  # slot id -> its predicate's cardinality
    k: datetime  # the transaction time


def fact_batches(lines: Iterable[str], batch: int) -> Iterator[list[dict[str, Any]]]:
    """`assert_many` items from JSON Lines, `batch` at a time (the last one shorter)."""
    chunk: list[dict[str, Any]] = []
    for _, item in json_lines(lines):
        chunk.append(item)
        if len(chunk) >= batch:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class Writer:
    """Assertions, ends and retractions, and the one write path they share."""

    def __init__(
        self,
        ctx: Context,
        vocab: Vocabulary,
        entities: EntityIndex,
        materialiser: Materialiser,
        *,
        embed: EmbedNotes,
        events: Events,
        ahead: ReadAhead,
    ) -> None:
        self._ctx = ctx
        self._vocab = vocab
        self._entities = entities
        self._mat = materialiser
        self._embed = embed
        self._events = events
        self.ahead = ahead  # slot states of large writes, read on a second thread

    # --- the verbs ----------------------------------------------------------------------------
    def assert_fact(
        self,
        ns: str,
        subject: str,
        predicate: str,
        object: str,
        valid_from: TimeLike | None,
        valid_to: TimeLike | None,
        confidence: float,
        author_kind: AuthorKind,
        evidence: Sequence[str],
        quarantined: bool | None,
        occurred_at: TimeLike | None,
    ) -> Fact:
        """Record that subject-predicate-object holds over [valid_from, valid_to).

        Leaving `valid_from` out means "from the statement's reference time"
        (`occurred_at`, else now); `valid_from=None` means "since always".
        Non-user authors are quarantined unless `quarantined=False` is passed.
        """
        item = {
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "valid_from": valid_from,
            "valid_to": valid_to,
            "confidence": confidence,
            "author_kind": author_kind,
            "evidence": evidence,
            "quarantined": quarantined,
            "occurred_at": occurred_at,
        }
        return self.assert_many(ns, [item])[0]

    def assert_many(self, ns: str, items: Iterable[Mapping[str, Any]]) -> list[Fact]:
        """Many assertions in one transaction; same keywords and same result as `assert_fact`.

        >>> mem.assert_many([{"subject": "user", "predicate": "likes", "object": "jazz"}])
        """
        rows = list(items)
        with self._ctx.lock, gc_paused() if len(rows) >= GC_PAUSE_MIN else nullcontext():
            seen: dict[str, str] = {}  # predicate as given -> its name, once per batch
            parsed = [self.parse(ns, i, r, seen) for i, r in enumerate(rows)]
            written = self.write_assertions(ns, parsed, read_ahead=True)
            self._embed.flush()
            return written

    def end_fact(
        self,
        ns: str,
        subject: str,
        predicate: str,
        object: str | None,
        at: TimeLike,
        author_kind: AuthorKind,
        evidence: Sequence[str],
        occurred_at: TimeLike | None,
    ) -> Fact:
        """Record "no longer": what holds at `at` (default: now) stops holding from then.

        For a `one` predicate, `object=None` ends whatever holds. The returned
        record has `op="end"` and `applied` telling whether anything ended.
        """
        item = {
            "subject": subject,
            "predicate": predicate,
            "object": object,
            "valid_from": at,
            "author_kind": author_kind,
            "evidence": evidence,
            "occurred_at": occurred_at,
            "op": "end",
        }
        with self._ctx.lock:
            parsed = self.parse(ns, 0, item)
            written = self.write_assertions(ns, [parsed])[0]
            self._embed.flush()
            return written

    def retract(self, ns: str, fact_id: str, *, reason: str | None = None) -> Fact:
        """Withdraw an assertion from now on; views known before now still see it.

        >>> mem.retract(f.id, reason="user corrected it")
        """
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        ctx, store, mat = self._ctx, self._ctx.store, self._mat
        with ctx.lock:
            a = self.own_assertion(ns, fact_id)
            if a["retracted_at"] is not None:
                raise Conflict(f"{fact_id} was already retracted", id=fact_id)
            saved = ctx.saved()
            try:
                with store.write():
                    k = ctx.tick()
                    store.retract_assertion(a["id"], k, why)
                    slot = a["slot_id"]
                    states = mat.states({slot: {"id": slot}})
                    st = states[slot]
                    for row in st.log:
                        if row["id"] == a["id"]:
                            row.update(retracted_at=k, retract_reason=why)
                    plan = mat.plan(states, {slot: self._vocab.cardinality(ns, slot)}, k)
                    for v in st.versions:
                        if v["assertion_id"] == a["id"] and v["expired_at"] is None:
                            v["expired_at"] = k  # a quarantined claim simply stops counting
                            plan.expire.append(v["id"])
                    mat.apply(plan, states, k)
            except BaseException:
                ctx.restore(saved)
                raise
            return self.fact(a, status="retracted", expired_at=k, reason=why)

    def own_assertion(self, ns: str, fact_id: object) -> dict[str, Any]:
        """The assertion row `fact_id` names in this namespace; NotFound or AlreadyErased."""
        if not isinstance(fact_id, str) or not fact_id:
            raise ValidationError("id: a non-empty string", field="id")
        store = self._ctx.store
        a = store.assertion(fact_id)
        if a is None or a["namespace"] != ns:
            tomb = store.tombstone(fact_id)
            if tomb is not None and tomb["namespace"] == ns:
                raise AlreadyErased(f"{fact_id} was erased", id=fact_id)
            raise NotFound(f"no fact {fact_id[:80]!r}", id=fact_id[:80])
        return a

    def parse(
        self, ns: str, index: int, item: Mapping[str, Any], seen: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """An `assert_many` item validated (`parse.parse_assertion`)."""
        return parse_assertion(self._vocab, ns, index, item, seen)

    def fact(
        self,
        a: Mapping[str, Any],
        *,
        status: str,
        expired_at: datetime | None = None,
        reason: str | None = None,
        applied: bool | None = None,
    ) -> Fact:
        """The Fact record of an assertion row (`rows.assertion_fact`)."""
        return assertion_fact(
            a,
            self._entities.name_of,
            status=status,
            expired_at=expired_at,
            reason=reason,
            applied=applied,
        )

    # --- the write path -----------------------------------------------------------------------
    def write_assertions(
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
        read_ahead.py)."""
        if not parsed:
            return []
        ctx, ents = self._ctx, self._entities
        self._check_evidence(ns, {e for p in parsed for e in p["evidence"]})
        for name in dict.fromkeys(p["predicate"] for p in parsed):  # once each, in order
            self._vocab.resolve(ns, name)
        preds = self._vocab.load(ns)
        # a value (object_kind "value") is kept exactly as sent: its own node (entities.py)
        exact = {p["predicate"] for p in parsed if preds[p["predicate"]].object_kind == "value"}
        texts = [
            (
                names.clean_name(p["subject"], field="subject"),
                None
                if p["object"] is None
                else names.clean_object(p["object"], preds[p["predicate"]].object_kind),
            )
            for p in parsed
        ]
        pairs = list(zip(parsed, texts, strict=True))
        plain = [s for s, _ in texts] + [
            o for p, (_, o) in pairs if o is not None and p["predicate"] not in exact
        ]
        values = [o for p, (_, o) in pairs if o is not None and p["predicate"] in exact]
        known = ents.prefetch(ns, plain, values)
        # the slots of subjects already stored: their states are read on a second thread
        # while this one builds the write (see read_ahead.py)
        asked: set[str] = set()
        if read_ahead:
            asked = {
                slot_id(ns, eid, preds[p["predicate"]].name)
                for p, (subject, _) in zip(parsed, texts, strict=True)
                if (eid := known.get(names.entity_key(subject))) is not None
            }
        job = self.ahead.start(sorted(asked)) if asked else None
        entities: list[dict[str, Any]] = []
        saved = ctx.saved()
        try:
            with ctx.store.write():
                k = ctx.tick() if k is None else k
                slots: dict[str, dict[str, Any]] = {}
                assertions: list[dict[str, Any]] = []
                for p, (subject, obj) in zip(parsed, texts, strict=True):
                    pred = preds[p["predicate"]]
                    subj_id, subj_name = ents.get_or_create(
                        ns,
                        subject,
                        kind=p.get("subject_type") or "thing",  # what the reader typed it
                        pending=entities,
                        known=known,
                        created_at=ctx.last_k,
                    )
                    obj_id = None
                    if obj is not None:
                        kind = (
                            "value"
                            if pred.object_kind == "value"
                            else p.get("object_type") or "thing"
                        )
                        obj_id = ents.get_or_create(
                            ns, obj, kind=kind, pending=entities, known=known, created_at=ctx.last_k
                        )[0]
                    row = slot_row(ns, subj_id, pred.name, subj_name)
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
                            "seq": ctx.next_seq(),
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
                # what it does to fact versions is told to in-process copies of them
                with ctx.store.writing_facts() as scope:
                    if job is not None and asked == slots.keys() - new:
                        plan = self._write_ahead(draft, job)
                        # the records are built on the reader thread while this one commits
                        done = self.ahead.submit(self._records, assertions, plan.changed)
                    else:
                        plan = self._write_in_line(draft)
                        done = None
                    scope.report(plan.delta(k))
                changed = plan.changed
            self._embed.note(ns, entities, assertions)  # committed (or joins the caller's)
        except BaseException:
            ctx.restore(saved)
            self._events.names_changed()  # entities created in a rolled-back transaction
            raise
        return done.result() if done is not None else self._records(assertions, changed)

    def _records(self, assertions: Sequence[dict[str, Any]], changed: set[str]) -> list[Fact]:
        """The Fact records a write returns (names of its entities are all at hand)."""
        return [
            self.fact(
                a,
                status="quarantined" if a["quarantined"] else "current",
                applied=(a["slot_id"] in changed) if a["op"] == "end" else None,
            )
            for a in assertions
        ]

    def _write_in_line(self, d: _Draft) -> Plan:
        """Read the slots' states, plan, write; what it did."""
        store = self._ctx.store
        states = self._mat.states(d.slots, new=d.new)
        plan = self._settle(states, d.assertions, d.cards, d.k)
        # one slot (a single assert_fact): one statement instead of one per table
        only = next(iter(states.values())) if len(states) == 1 else None
        if (
            only is None
            or plan.vanish
            or not store.write_slot(
                slot=packed(only),
                new=only.new,
                assertions=d.assertions,
                expire=plan.expire,
                at=d.k,
                insert=plan.insert,
                entities=d.entities,
            )
        ):
            store.create_entities(d.entities)
            store.create_assertions(d.assertions)
            store.create_slots([packed(st) for st in states.values() if st.new])
            self._mat.apply(plan, states, d.k)
        return plan

    def _write_ahead(self, d: _Draft, job: Future[dict[str, dict[str, Any]]]) -> Plan:
        """`_write_in_line` for a large write whose stored slots' states `job` reads on
        another thread: what needs none of them (entities, assertions, the new slots and
        their plan) is done while it reads."""
        store, mat = self._ctx.store, self._mat
        store.create_entities(d.entities)
        store.create_assertions(d.assertions)
        mine = [a for a in d.assertions if a["slot_id"] in d.new]
        fresh = mat.states({s: d.slots[s] for s in d.new}, new=d.new, ahead={})
        plan = self._settle(fresh, mine, d.cards, d.k)
        store.create_slots([packed(st) for st in fresh.values()])
        rest = [a for a in d.assertions if a["slot_id"] not in d.new]
        stored = mat.states(
            {s: row for s, row in d.slots.items() if s not in d.new}, ahead=job.result()
        )
        more = self._settle(stored, rest, d.cards, d.k)
        # a stored subject's first fact of some predicate opens a slot too
        store.create_slots([packed(st) for st in stored.values() if st.new])
        plan.extend(more)
        mat.apply(plan, stored, d.k, helper=self.ahead)
        return plan

    def _settle(
        self,
        states: Mapping[str, SlotState],
        assertions: Sequence[dict[str, Any]],
        cards: Mapping[str, Cardinality],
        k: datetime,
    ) -> Plan:
        """Append the assertions to their slots' logs and plan the version changes."""
        quarantined: list[dict[str, Any]] = []
        for a in assertions:
            st = states[a["slot_id"]]
            st.log.append(a)
            if a["quarantined"] and a["op"] == "assert":
                # a quarantined claim is kept as its own version, outside the replay
                row = self._mat.version_row(a, a["valid_from"], a["valid_to"], k)
                quarantined.append(row)
                st.versions.append(row)
        plan = self._mat.plan(states, cards, k)
        plan.insert[:0] = quarantined
        return plan

    def _check_evidence(self, ns: str, ids: set[str]) -> None:
        for eid in sorted(ids):
            row = self._ctx.store.episode(eid)
            if row is None or row["namespace"] != ns:
                raise NotFound(f"evidence: no episode {eid[:80]!r}", id=eid[:80])
