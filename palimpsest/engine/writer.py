"""Writing facts: assert, end and retract, each one transaction at one transaction time.

    >>> writer.assert_many("default", [{"subject": "user", "predicate": "likes",
    ...                                 "object": "jazz"}])
    >>> writer.retract("default", fact.id, reason="user corrected it")

Every assertion goes through `write_assertions`: it resolves names (the entity
index, creating what is new), builds the assertion rows at the transaction time
K and hands them to the bounded write path (`append.Appender`): each line they
touch has the window of starts they reach read, advanced (`temporal.advance`) and
written back, with the versions expired and inserted and the slots' journal
events: one fused statement for a small write (graph/_fused.py), batched
statements otherwise. A large `assert_many` pauses the cyclic collector
(`gc_pause`). Retract rewrites a whole slot (`materialise`). After the commit
the write hands the new names and statements to the embedding worker it was
given (`EmbedNotes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from datetime import datetime
from typing import Any

from .. import _names as names
from .._ids import _new_id
from .._time import TimeLike
from ..errors import AlreadyErased, Conflict, NotFound, ValidationError
from ..models import AuthorKind, Fact, Predicate
from .append import Appender, Draft
from .context import Context
from .entities import EntityIndex
from .events import EmbedNotes, Events
from .gc_pause import gc_paused
from .materialise import Materialiser
from .parse import parse_assertion
from .rows import UNSET, assertion_fact, slot_row
from .vocabulary import Vocabulary

# Assertions per transaction of an import. A bulk write's expiry, version and slot-state
# statements each scan a whole table once, and its read of the stored slots turns from
# per-key seeks into one scan: their cost grows with the memory, and a larger call
# shares it. At 1M versions, with the collector paused (gc_pause.py), between
# checkpoints: 5,000 items a call 5,670-6,010/s, 20,000 items 8,580-9,130/s
# (bench/README.md, session 7).
IMPORT_BATCH = 20_000
# Items of an assert_many that pause the cyclic collector (gc_pause). A batch of 100
# (an MCP create_entities: 400 assertions) allocates enough to run ~17 young and every
# ~10th call a full collection, which in a process holding the models (~250k objects)
# took 0.2-0.4 s; its rows die before the write ends, so paused they are never collected.
GC_PAUSE_MIN = 100


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
    ) -> None:
        self._ctx = ctx
        self._vocab = vocab
        self._entities = entities
        self._mat = materialiser
        self._append = Appender(ctx.store, entities, materialiser)
        self._embed = embed
        self._events = events

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
            written = self.write_assertions(ns, parsed)
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
                with store.write(ns):
                    k = ctx.tick()
                    store.slots.retract_assertion(a["id"], k, why)
                    slot = a["slot_id"]
                    states = mat.states({slot: {"id": slot}})
                    st = states[slot]
                    for row in st.log:
                        if row["id"] == a["id"]:
                            row.update(retracted_at=k, retract_reason=why)
                    cards = {slot: self._vocab.cardinality(ns, slot)}
                    with store.writing_facts():  # reports nothing: copies are read again
                        plan = mat.plan(states, cards, k)
                        for v in st.versions:
                            if v["assertion_id"] == a["id"] and v["expired_at"] is None:
                                v["expired_at"] = k  # a quarantined claim simply stops counting
                                plan.expire.append(v["id"])
                        mat.apply(plan, states, k, cards, retract=[(a["id"], slot, why)])
            except BaseException:
                ctx.restore(saved)
                raise
            return self.fact(a, status="retracted", expired_at=k, reason=why)

    def own_assertion(self, ns: str, fact_id: object) -> dict[str, Any]:
        """The assertion row `fact_id` names in this namespace; NotFound or AlreadyErased."""
        if not isinstance(fact_id, str) or not fact_id:
            raise ValidationError("id: a non-empty string", field="id")
        store = self._ctx.store
        a = store.slots.assertion(fact_id)
        if a is None or a["namespace"] != ns:
            tomb = store.facts.tombstone(fact_id)
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
    ) -> list[Fact]:
        """Store parsed assertions; `k` joins the caller's transaction time (remember)."""
        if not parsed:
            return []
        ctx, ents = self._ctx, self._entities
        self._check_evidence(ns, {e for p in parsed for e in p["evidence"]})
        for name in dict.fromkeys(p["predicate"] for p in parsed):  # once each, in order
            self._vocab.resolve(ns, name)
        foreign = ctx.foreign  # other processes' writes the caches read below include
        preds, texts, plain, values = self._names_of(ns, parsed)
        known = ents.prefetch(ns, plain, values)
        entities: list[dict[str, Any]] = []
        saved = ctx.saved()
        try:
            with ctx.store.write(ns):
                k = ctx.tick() if k is None else k  # under the lock: looks (Context.tick)
                if ctx.foreign != foreign:
                    # another process wrote before we took the write lock: the names
                    # and predicate definitions it committed are the ones to use
                    preds, texts, plain, values = self._names_of(ns, parsed)
                    known = ents.prefetch(ns, plain, values)
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
                draft = Draft(slots, new, assertions, entities, cards, k)
                # what it does to fact versions is told to in-process copies of them
                with ctx.store.writing_facts() as scope:
                    plan = self._append.write(draft)
                    scope.report(plan.delta(k))
                changed = plan.changed
            self._embed.note(ns, entities, assertions)  # committed (or joins the caller's)
        except BaseException:
            ctx.restore(saved)
            self._events.names_changed()  # entities created in a rolled-back transaction
            raise
        return self._records(assertions, changed)

    def _names_of(
        self, ns: str, parsed: list[dict[str, Any]]
    ) -> tuple[dict[str, Predicate], list[tuple[str, str | None]], list[str], list[str]]:
        """(predicates, [(subject, object)] cleaned, plain names, exact values) of the
        parsed assertions, by the vocabulary as loaded now."""
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
        return preds, texts, plain, values

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

    def _check_evidence(self, ns: str, ids: set[str]) -> None:
        for eid in sorted(ids):
            row = self._ctx.store.names.episode(eid)
            if row is None or row["namespace"] != ns:
                raise NotFound(f"evidence: no episode {eid[:80]!r}", id=eid[:80])
