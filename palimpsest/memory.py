"""`Memory`, the one entry object: composes validation, the temporal rules and the store.

    >>> with Memory.open("palimpsest-data") as mem:
    ...     mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    ...     [f.object for f in mem.facts("user", "lives_in")]
    ['Sydney']

Every write is one Kùzu transaction stamped with one transaction time K from
the clock (never earlier than the last one). A write to a slot (subject,
predicate) replays that slot's assertion log at K with `temporal.replay`, diffs
the result against the versions believed so far, expires what changed and
inserts what is new: the palimpsest is overwritten, never scraped.
"""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from . import _names as names
from ._time import Clock, TimeLike, opt_utc, to_utc, utcnow
from ._vocabulary import default_predicates
from .errors import (
    AlreadyErased,
    ClosedError,
    Conflict,
    InvalidWindow,
    NotFound,
    UnknownPredicate,
    ValidationError,
)
from .graph import Store
from .models import (
    AuthorKind,
    Cardinality,
    Changes,
    Entity,
    EntityFacts,
    EntityProfile,
    Episode,
    Fact,
    Predicate,
    Snapshot,
    Stats,
    Tombstone,
)
from .temporal import LogEntry, Segment, diff, materialise, replay, version_status

DEFAULT_PATH = "palimpsest-data"
_AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")
_TRUSTED: tuple[str, ...] = ("user",)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marks an argument left out, where an explicit None means something (unbounded)."""


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex}"


def _slot_id(namespace: str, subject_id: str, predicate: str) -> str:
    return f"{namespace}\x1f{subject_id}\x1f{predicate}"


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


class Memory:
    """An agent's memory in one directory: episodes, entities, and bitemporal facts."""

    def __init__(self, store: Store, *, clock: Clock, namespace: str) -> None:
        self._store = store
        self._clock = clock
        self.namespace = namespace
        self._lock = threading.RLock()
        self._entities: dict[tuple[str, str], Entity] = {}  # (namespace, key) -> entity
        self._names: dict[str, str] = {}  # entity id -> display name
        self._predicates: dict[str, dict[str, Predicate]] = {}  # namespace -> name -> predicate
        self._aliases: dict[str, dict[str, str]] = {}  # namespace -> alias key -> name
        last, seq = store.clocks()
        self._last_k = last
        self._seq = seq
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path = DEFAULT_PATH,
        *,
        clock: Clock | None = None,
        namespace: str = "default",
    ) -> Memory:
        """Open (or create) the memory directory at `path`.

        `clock() -> aware datetime` is the transaction clock; the default is UTC now.
        """
        ns = names.check_namespace(namespace)
        store = Store.open(Path(path))
        return cls(store, clock=clock or utcnow, namespace=ns)

    @property
    def path(self) -> Path:
        return self._store.directory

    def close(self) -> None:
        """Close the database; finishes any pending erase compaction."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("this Memory is closed")

    def _ns(self, namespace: str | None) -> str:
        self._check_open()
        return self.namespace if namespace is None else names.check_namespace(namespace)

    def _tick(self) -> datetime:
        """The next transaction time: the clock, but never before the last one."""
        now = to_utc(self._clock(), name="clock")
        if self._last_k is not None and now < self._last_k:
            now = self._last_k
        self._last_k = now
        return now

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def now(self) -> datetime:
        """The clock's reading, for defaults (`valid_at`, `known_at`)."""
        return to_utc(self._clock(), name="clock")

    # --- predicates ----------------------------------------------------------------------
    def _load_predicates(self, ns: str) -> dict[str, Predicate]:
        preds = self._predicates.get(ns)
        if preds is not None:
            return preds
        preds = {p.name: p for p in default_predicates()}
        for row in self._store.predicates(ns):
            preds[row["name"]] = Predicate(
                name=row["name"],
                cardinality=row["cardinality"],
                aliases=row["aliases"] or [],
                inverse=row["inverse"],
                object_kind=row["object_kind"],
                origin=row["origin"],
            )
        aliases: dict[str, str] = {}
        for p in preds.values():
            for a in p.aliases:
                aliases.setdefault(names.entity_key(a), p.name)
        for p in preds.values():
            aliases[names.entity_key(p.name.replace("_", " "))] = p.name
        self._predicates[ns], self._aliases[ns] = preds, aliases
        return preds

    def predicates(self, *, namespace: str | None = None) -> list[Predicate]:
        """The vocabulary in force: defaults, overridden or extended by `define_predicate`."""
        ns = self._ns(namespace)
        return sorted(self._load_predicates(ns).values(), key=lambda p: p.name)

    def predicate(self, name: str, *, namespace: str | None = None) -> Predicate:
        """Look a predicate up by name or alias; raises UnknownPredicate."""
        ns = self._ns(namespace)
        found = self._find_predicate(ns, name)
        if found is None:
            raise UnknownPredicate(f"unknown predicate {name!r}", predicate=str(name)[:64])
        return found

    def _find_predicate(self, ns: str, name: object) -> Predicate | None:
        preds = self._load_predicates(ns)
        text = names.clean_name(name, field="predicate")
        alias = self._aliases[ns].get(names.entity_key(text))
        if alias is not None:
            return preds[alias]
        try:
            return preds.get(names.predicate_key(text))
        except ValidationError:
            return None

    def define_predicate(
        self,
        name: str,
        cardinality: Cardinality = "many",
        *,
        aliases: Iterable[str] = (),
        inverse: str | None = None,
        object_kind: Literal["entity", "value"] = "entity",
        namespace: str | None = None,
    ) -> Predicate:
        """Add a predicate or override one; a cardinality change re-reads every slot of it.

        >>> mem.define_predicate("lives_in", cardinality="one", aliases=["resides in"])
        """
        ns = self._ns(namespace)
        key = names.predicate_key(name)
        if cardinality not in ("one", "many"):
            raise ValidationError("cardinality: 'one' or 'many'", field="cardinality")
        if object_kind not in ("entity", "value"):
            raise ValidationError("object_kind: 'entity' or 'value'", field="object_kind")
        pred = Predicate(
            name=key,
            cardinality=cardinality,
            aliases=sorted({names.alias_key(a) for a in aliases}),
            inverse=None if inverse is None else names.predicate_key(inverse, field="inverse"),
            object_kind=object_kind,
            origin="user",
        )
        return self._define(ns, pred)

    def _define(self, ns: str, pred: Predicate) -> Predicate:
        with self._lock:
            before = self._load_predicates(ns).get(pred.name)
            with self._store.write():
                self._store.upsert_predicate(ns, pred.model_dump())
                if before is not None and before.cardinality != pred.cardinality:
                    k = self._tick()
                    slots = self._store.slots_of_predicate(ns, pred.name)
                    self._rematerialise(ns, {s: pred.cardinality for s in slots}, k)
            self._predicates.pop(ns, None)
            self._aliases.pop(ns, None)
            return self._load_predicates(ns)[pred.name]

    def _resolve_predicate(self, ns: str, name: object) -> Predicate:
        found = self._find_predicate(ns, name)
        if found is not None:
            return found
        # an unknown relation is kept, as a many-valued predicate of its own name
        return self._define(ns, Predicate(name=names.predicate_key(name), origin="auto"))

    # --- entities -------------------------------------------------------------------------
    def _entity(self, ns: str, name: object, *, field: str) -> Entity | None:
        key = names.entity_key(names.clean_name(name, field=field))
        cached = self._entities.get((ns, key))
        if cached is not None:
            return cached
        eid = self._store.entity_id_for_key(ns, key)
        if eid is None:
            return None
        row = self._store.entity(eid)
        if row is None:
            return None
        ent = _entity_model(row)
        self._entities[(ns, key)] = ent
        self._names[ent.id] = ent.name
        return ent

    def _entity_or_create(
        self, ns: str, name: object, *, field: str, kind: str, pending: list[dict[str, Any]]
    ) -> Entity:
        found = self._entity(ns, name, field=field)
        if found is not None:
            return found
        text = names.clean_name(name, field=field)
        ent = Entity(
            id=_new_id("en"),
            name=text,
            key=names.entity_key(text),
            type=kind,
            namespace=ns,
            created_at=self._last_k,
        )
        pending.append(ent.model_dump())
        self._entities[(ns, ent.key)] = ent
        self._names[ent.id] = ent.name
        return ent

    def _prefetch_entities(self, ns: str, raw_names: Iterable[object]) -> None:
        """Load uncached entities for many names in two batched lookups."""
        keys = set()
        for n in raw_names:
            if isinstance(n, str) and n.strip():
                keys.add(names.entity_key(names.clean_name(n)))
        missing = [k for k in keys if (ns, k) not in self._entities]
        if len(missing) < 4:  # single lookups are cheaper than a batch statement
            return
        found = self._store.entity_ids_for_keys(ns, missing)
        by_id = {r["id"]: r for r in self._store.entities_by_ids(sorted(set(found.values())))}
        for key, eid in found.items():
            row = by_id.get(eid)
            if row is not None:
                ent = _entity_model(row)
                self._entities[(ns, key)] = ent
                self._names[ent.id] = ent.name

    def _forget_cache(self) -> None:
        self._entities.clear()
        self._names.clear()

    def _name_of(self, entity_id: str) -> str:
        name = self._names.get(entity_id)
        if name is None:
            row = self._store.entity(entity_id)
            name = row["name"] if row else entity_id
            self._names[entity_id] = name
        return name

    # --- writes -----------------------------------------------------------------------------
    def assert_fact(
        self,
        subject: str,
        predicate: str,
        object: str,
        *,
        valid_from: TimeLike | None = UNSET,
        valid_to: TimeLike | None = None,
        confidence: float = 1.0,
        author_kind: AuthorKind = "user",
        evidence: Sequence[str] = (),
        quarantined: bool | None = None,
        occurred_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Fact:
        """Record that subject-predicate-object holds over [valid_from, valid_to).

        Leaving `valid_from` out means "from the statement's reference time"
        (`occurred_at`, else now); `valid_from=None` means "since always".
        Non-user authors are quarantined unless `quarantined=False` is passed.
        """
        return self.assert_many(
            [
                {
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
            ],
            namespace=namespace,
        )[0]

    def assert_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str | None = None
    ) -> list[Fact]:
        """Many assertions in one transaction; same keywords and same result as `assert_fact`.

        >>> mem.assert_many([{"subject": "user", "predicate": "likes", "object": "jazz"}])
        """
        ns = self._ns(namespace)
        rows = list(items)
        with self._lock:
            parsed = [self._parse_assert(ns, i, r) for i, r in enumerate(rows)]
            return self._write_assertions(ns, parsed)

    def end_fact(
        self,
        subject: str,
        predicate: str,
        object: str | None = None,
        *,
        at: TimeLike = UNSET,
        author_kind: AuthorKind = "user",
        evidence: Sequence[str] = (),
        occurred_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Fact:
        """Record "no longer": what holds at `at` (default: now) stops holding from then.

        For a `one` predicate, `object=None` ends whatever holds. The returned
        record has `op="end"` and `applied` telling whether anything ended.
        """
        ns = self._ns(namespace)
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
        with self._lock:
            parsed = self._parse_assert(ns, 0, item)
            return self._write_assertions(ns, [parsed])[0]

    def _parse_assert(self, ns: str, index: int, item: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(item, Mapping):
            raise ValidationError(f"item {index}: expected a mapping", index=index)
        known = {
            "subject",
            "predicate",
            "object",
            "valid_from",
            "valid_to",
            "confidence",
            "author_kind",
            "evidence",
            "quarantined",
            "occurred_at",
            "op",
            "at",
        }
        extra = set(item) - known
        if extra:
            raise ValidationError(f"item {index}: unknown keys {sorted(extra)}", index=index)
        op = item.get("op", "assert")
        if op not in ("assert", "end"):
            raise ValidationError(f"item {index}: op must be 'assert' or 'end'", index=index)
        subject = names.clean_name(item.get("subject"), field="subject")
        pred = self._find_predicate(ns, item.get("predicate"))
        pred_name = pred.name if pred else names.predicate_key(item.get("predicate"))
        obj = item.get("object")
        if op == "assert" or obj is not None:
            obj = names.clean_name(obj, field="object")
        author = item.get("author_kind", "user")
        if author not in _AUTHOR_KINDS:
            raise ValidationError(f"author_kind: one of {', '.join(_AUTHOR_KINDS)}", index=index)
        conf = item.get("confidence", 1.0)
        if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0.0 <= conf <= 1.0:
            raise ValidationError("confidence: a number in [0, 1]", index=index)
        evidence = item.get("evidence") or ()
        if isinstance(evidence, str) or not all(isinstance(e, str) for e in evidence):
            raise ValidationError("evidence: a list of episode ids", index=index)
        ref = opt_utc(item.get("occurred_at"), name="occurred_at")
        start_raw = item.get("at", UNSET) if op == "end" else UNSET
        if start_raw is UNSET:
            start_raw = item.get("valid_from", UNSET)
        start = UNSET if start_raw is UNSET else opt_utc(start_raw, name="valid_from")
        end = opt_utc(item.get("valid_to"), name="valid_to") if op == "assert" else None
        if op == "end" and start is None:
            raise InvalidWindow("at: an end needs a time ('since always' ends nothing)")
        if end is not None and start not in (UNSET, None) and end <= start:
            raise InvalidWindow(
                f"item {index}: valid_to {end.isoformat()} is not after valid_from "
                f"{start.isoformat()}",
                index=index,
            )
        quarantined = item.get("quarantined")
        if quarantined is None:
            quarantined = author not in _TRUSTED
        return {
            "op": op,
            "subject": subject,
            "predicate": pred_name,
            "object": obj,
            "valid_from": start,
            "valid_to": end,
            "reference": ref,
            "confidence": float(conf),
            "author_kind": author,
            "evidence": list(dict.fromkeys(evidence)),
            "quarantined": bool(quarantined),
        }

    def _write_assertions(self, ns: str, parsed: list[dict[str, Any]]) -> list[Fact]:
        if not parsed:
            return []
        self._check_evidence(ns, {e for p in parsed for e in p["evidence"]})
        for p in parsed:
            self._resolve_predicate(ns, p["predicate"])
        preds = self._load_predicates(ns)
        self._prefetch_entities(
            ns, [p["subject"] for p in parsed] + [p["object"] for p in parsed if p["object"]]
        )
        entities: list[dict[str, Any]] = []
        saved = (self._last_k, self._seq)
        try:
            with self._store.write():
                k = self._tick()
                slots: dict[str, dict[str, Any]] = {}
                assertions: list[dict[str, Any]] = []
                for p in parsed:
                    pred = preds[p["predicate"]]
                    subj = self._entity_or_create(
                        ns, p["subject"], field="subject", kind="thing", pending=entities
                    )
                    obj_id = None
                    if p["object"] is not None:
                        kind = "value" if pred.object_kind == "value" else "thing"
                        obj_id = self._entity_or_create(
                            ns, p["object"], field="object", kind=kind, pending=entities
                        ).id
                    slot = _slot_id(ns, subj.id, pred.name)
                    slots[slot] = {
                        "id": slot,
                        "namespace": ns,
                        "subject_id": subj.id,
                        "predicate": pred.name,
                    }
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
                            "origin": "api",
                        }
                    )
                self._store.create_entities(entities)
                existing = self._store.existing_slots(list(slots))
                self._store.create_slots([v for s, v in slots.items() if s not in existing])
                self._store.create_assertions(assertions)
                quarantined = [a for a in assertions if a["quarantined"] and a["op"] == "assert"]
                self._store.create_versions(
                    [self._version_row(a, a["valid_from"], a["valid_to"], k) for a in quarantined]
                )
                # a new slot's log is exactly what this call asserts: no need to read it back
                fresh: dict[str, list[dict[str, Any]]] = {s: [] for s in slots if s not in existing}
                for a in assertions:
                    if a["slot_id"] in fresh:
                        fresh[a["slot_id"]].append(a)
                cards = {s: preds[v["predicate"]].cardinality for s, v in slots.items()}
                changed = self._rematerialise(ns, cards, k, fresh=fresh)
        except BaseException:
            self._last_k, self._seq = saved
            self._forget_cache()  # entities created in a rolled-back transaction
            raise
        out = []
        for a in assertions:
            subj_name = self._name_of(slots[a["slot_id"]]["subject_id"])
            fact = Fact(
                id=a["id"],
                subject=subj_name,
                predicate=slots[a["slot_id"]]["predicate"],
                object=None if a["object_id"] is None else self._name_of(a["object_id"]),
                valid_from=a["valid_from"],
                valid_to=a["valid_to"],
                recorded_at=k,
                status="quarantined" if a["quarantined"] else "current",
                confidence=a["confidence"],
                author_kind=a["author_kind"],
                evidence=a["evidence"],
                quarantined=a["quarantined"],
                namespace=ns,
                subject_id=slots[a["slot_id"]]["subject_id"],
                object_id=a["object_id"],
                op=a["op"],
                applied=(a["slot_id"] in changed) if a["op"] == "end" else None,
            )
            out.append(fact)
        return out

    def _check_evidence(self, ns: str, ids: set[str]) -> None:
        for eid in sorted(ids):
            row = self._store.episode(eid)
            if row is None or row["namespace"] != ns:
                raise NotFound(f"evidence: no episode {eid[:80]!r}", id=eid[:80])

    def _version_row(
        self,
        a: Mapping[str, Any],
        valid_from: datetime | None,
        valid_to: datetime | None,
        recorded_at: datetime,
        expired_at: datetime | None = None,
    ) -> dict[str, Any]:
        slot = a["slot_id"]
        _, subject_id, predicate = slot.split("\x1f")
        subject = self._name_of(subject_id)
        obj = self._name_of(a["object_id"])
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

    def _rematerialise(
        self,
        ns: str,
        cards: Mapping[str, Cardinality],
        k: datetime,
        *,
        fresh: Mapping[str, list[dict[str, Any]]] | None = None,
    ) -> set[str]:
        """Replay each slot at K, expire what changed, insert what is new; the changed slots.

        `fresh` gives the whole log of slots created in this transaction (no versions yet).
        """
        fresh = fresh or {}
        stored = [s for s in cards if s not in fresh]
        logs = {**self._store.slot_logs(stored), **fresh}
        opens: dict[str, list[dict[str, Any]]] = {
            **self._store.open_versions(stored),
            **{s: [] for s in fresh},
        }
        slot_ids = list(cards)
        expire: list[str] = []
        vanish: list[str] = []
        insert: list[dict[str, Any]] = []
        changed: set[str] = set()
        for slot in slot_ids:
            by_id = {a["id"]: a for a in logs[slot]}
            log = [_log_entry(a) for a in logs[slot] if not a["quarantined"]]
            now = {
                Segment(v["object_id"], v["valid_from"], v["valid_to"], v["assertion_id"]): v
                for v in opens[slot]
            }
            gone, new = diff(list(now), replay(log, cards[slot], known_at=k))
            if gone or new:
                changed.add(slot)
            for seg in gone:
                row = now[seg]
                # believed for no instant (written and overwritten at one K): not knowledge
                (vanish if row["recorded_at"] == k else expire).append(row["id"])
            for seg in new:
                insert.append(self._version_row(by_id[seg.source], seg.valid_from, seg.valid_to, k))
        self._store.delete_versions(vanish)
        self._store.expire_versions(expire, k)
        self._store.create_versions(insert)
        return changed

    def retract(
        self, fact_id: str, *, reason: str | None = None, namespace: str | None = None
    ) -> Fact:
        """Withdraw an assertion from now on; views known before now still see it.

        >>> mem.retract(f.id, reason="user corrected it")
        """
        ns = self._ns(namespace)
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        with self._lock:
            a = self._own_assertion(ns, fact_id)
            if a["retracted_at"] is not None:
                raise Conflict(f"{fact_id} was already retracted", id=fact_id)
            saved = (self._last_k, self._seq)
            try:
                with self._store.write():
                    k = self._tick()
                    self._store.retract_assertion(a["id"], k, why)
                    if a["quarantined"]:
                        open_q = [
                            v["id"]
                            for v in self._store.slot_versions(a["slot_id"])
                            if v["assertion_id"] == a["id"] and v["expired_at"] is None
                        ]
                        self._store.expire_versions(open_q, k)
                    else:
                        card = self._cardinality(ns, a["slot_id"])
                        self._rematerialise(ns, {a["slot_id"]: card}, k)
            except BaseException:
                self._last_k, self._seq = saved
                raise
            return self._assertion_fact(a, status="retracted", expired_at=k, reason=why)

    def _cardinality(self, ns: str, slot_id: str) -> Cardinality:
        predicate = slot_id.split("\x1f")[2]
        return self._resolve_predicate(ns, predicate).cardinality

    def _own_assertion(self, ns: str, fact_id: object) -> dict[str, Any]:
        if not isinstance(fact_id, str) or not fact_id:
            raise ValidationError("id: a non-empty string", field="id")
        a = self._store.assertion(fact_id)
        if a is None or a["namespace"] != ns:
            tomb = self._store.tombstone(fact_id)
            if tomb is not None and tomb["namespace"] == ns:
                raise AlreadyErased(f"{fact_id} was erased", id=fact_id)
            raise NotFound(f"no fact {fact_id[:80]!r}", id=fact_id[:80])
        return a

    def _assertion_fact(
        self,
        a: Mapping[str, Any],
        *,
        status: str,
        expired_at: datetime | None = None,
        reason: str | None = None,
    ) -> Fact:
        _, subject_id, predicate = a["slot_id"].split("\x1f")
        return Fact(
            id=a["id"],
            subject=self._name_of(subject_id),
            predicate=predicate,
            object=None if a["object_id"] is None else self._name_of(a["object_id"]),
            valid_from=a["valid_from"],
            valid_to=a["valid_to"],
            recorded_at=a["recorded_at"],
            expired_at=expired_at,
            status=cast(Any, status),
            confidence=a["confidence"],
            author_kind=a["author_kind"],
            evidence=a["evidence"] or [],
            quarantined=a["quarantined"],
            namespace=a["namespace"],
            subject_id=subject_id,
            object_id=a["object_id"],
            op=a["op"],
            reason=reason,
        )

    def erase(
        self, id: str, *, reason: str | None = None, namespace: str | None = None
    ) -> list[Tombstone]:
        """Privacy deletion of a fact (assertion) or an episode, at every known-at time.

        The content leaves every query now and leaves the files when the memory
        is closed (the database file is rewritten); content-free tombstones
        (id, when, why) remain. An episode's erasure also erases the assertions
        that rest on it alone.
        """
        ns = self._ns(namespace)
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        if not isinstance(id, str) or not id:
            raise ValidationError("id: a non-empty string", field="id")
        with self._lock:
            assertion = self._store.assertion(id)
            episode = None if assertion else self._store.episode(id)
            owner = assertion or episode
            if owner is None or owner["namespace"] != ns:
                tomb = self._store.tombstone(id)
                if tomb is not None and tomb["namespace"] == ns:
                    raise AlreadyErased(f"{id} was already erased", id=id)
                raise NotFound(f"nothing with id {id[:80]!r}", id=id[:80])
            self._store.request_compaction()
            saved = (self._last_k, self._seq)
            try:
                with self._store.write():
                    k = self._tick()
                    tombs = self._erase(ns, assertion, episode, k, why)
            except BaseException:
                self._last_k, self._seq = saved
                raise
            finally:
                self._forget_cache()
            return tombs

    def _erase(
        self,
        ns: str,
        assertion: dict[str, Any] | None,
        episode: dict[str, Any] | None,
        k: datetime,
        why: str | None,
    ) -> list[Tombstone]:
        doomed: list[dict[str, Any]] = []
        rewrite: dict[str, list[str]] = {}  # assertion id -> evidence without the episode
        tombs: list[Tombstone] = []
        if assertion is not None:
            doomed.append(assertion)
        if episode is not None:
            for a in self._store.assertions_citing(ns, episode["id"]):
                rest = [e for e in a["evidence"] if e != episode["id"]]
                if rest:
                    rewrite[a["id"]] = rest
                else:
                    doomed.append(a)
            self._store.delete_episode(episode["id"])
            tombs.append(
                Tombstone(id=episode["id"], kind="episode", erased_at=k, reason=why, namespace=ns)
            )
            self._store.create_tombstone({**tombs[-1].model_dump(), "slot_id": None})
        slots = {a["slot_id"] for a in doomed}
        for aid, rest in rewrite.items():
            self._store.set_assertion_evidence(aid, rest)
            slot = self._store.assertion(aid)
            if slot is not None:
                slots.add(slot["slot_id"])
        for a in doomed:
            self._store.delete_assertion(a["id"])
            tomb = Tombstone(id=a["id"], kind="fact", erased_at=k, reason=why, namespace=ns)
            self._store.create_tombstone({**tomb.model_dump(), "slot_id": a["slot_id"]})
            tombs.append(tomb)
        for slot in sorted(slots):
            self._rebuild_slot(ns, slot)
        self._store.delete_orphan_entities(ns, keep=self._speaker_ids(ns))
        return tombs

    def _speaker_ids(self, ns: str) -> list[str]:
        user = self._entity(ns, "user", field="speaker")
        return [user.id] if user else []

    def _rebuild_slot(self, ns: str, slot: str) -> None:
        """Rewrite a slot's whole version history from its log (used by erase)."""
        self._store.delete_versions(self._store.slot_version_ids(slot))
        log_rows = self._store.slot_log(slot)
        by_id = {a["id"]: a for a in log_rows}
        active = [_log_entry(a) for a in log_rows if not a["quarantined"]]
        rows = [
            self._version_row(
                by_id[v.segment.source],
                v.segment.valid_from,
                v.segment.valid_to,
                v.recorded_at,
                v.expired_at,
            )
            for v in materialise(active, self._cardinality(ns, slot))
        ]
        for a in log_rows:
            if a["quarantined"] and a["op"] == "assert":
                rows.append(
                    self._version_row(
                        a, a["valid_from"], a["valid_to"], a["recorded_at"], a["retracted_at"]
                    )
                )
        self._store.create_versions(rows)

    # --- episodes (text extraction arrives with the extraction room) -----------------------
    def remember(
        self,
        text: str,
        *,
        speaker: str = "user",
        author_kind: AuthorKind | None = None,
        occurred_at: TimeLike | None = None,
        session: str | None = None,
        source: str | None = None,
        reply_to: str | None = None,
        importance: float | None = None,
        namespace: str | None = None,
    ) -> Episode:
        """Store one memory as it arrived. Idempotent on (text, speaker, time, session, source).

        >>> ep = mem.remember("I moved to Sydney in June 2024.", speaker="user",
        ...                   occurred_at="2024-07-02T10:00:00Z", session="s1")
        """
        return self.remember_many(
            [
                {
                    "text": text,
                    "speaker": speaker,
                    "author_kind": author_kind,
                    "occurred_at": occurred_at,
                    "session": session,
                    "source": source,
                    "reply_to": reply_to,
                    "importance": importance,
                }
            ],
            namespace=namespace,
        )[0]

    def remember_many(
        self, items: Iterable[Mapping[str, Any]], *, namespace: str | None = None
    ) -> list[Episode]:
        """Many episodes in one transaction; same keywords and result as `remember`."""
        ns = self._ns(namespace)
        parsed = [self._parse_episode(ns, i, item) for i, item in enumerate(items)]
        with self._lock:
            saved = (self._last_k, self._seq)
            try:
                with self._store.write():
                    k = self._tick()
                    out: list[Episode] = []
                    fresh: list[dict[str, Any]] = []
                    seen: set[str] = set()
                    for p in parsed:
                        existing = self._store.episode(p["id"])
                        if existing is not None or p["id"] in seen:
                            out.append(_episode_model(existing or {**p, "recorded_at": k}))
                            continue
                        seen.add(p["id"])
                        row = {**p, "occurred_at": p["occurred_at"] or k, "recorded_at": k}
                        fresh.append(row)
                        out.append(_episode_model(row))
                    self._store.create_episodes(fresh)
            except BaseException:
                self._last_k, self._seq = saved
                raise
        return out

    def _parse_episode(self, ns: str, index: int, item: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(item, Mapping):
            raise ValidationError(f"item {index}: expected a mapping", index=index)
        text = names.check_text(item.get("text"))
        if not text.strip():
            raise ValidationError("text: must not be empty", field="text", index=index)
        if "\x00" in text:
            raise ValidationError("text: contains NUL bytes (binary data?)", field="text")
        speaker = names.clean_name(item.get("speaker") or "user", field="speaker")
        author = item.get("author_kind") or ("user" if speaker == "user" else "third_party")
        if author not in _AUTHOR_KINDS:
            raise ValidationError(f"author_kind: one of {', '.join(_AUTHOR_KINDS)}")
        occurred = opt_utc(item.get("occurred_at"), name="occurred_at")
        opt = {}
        for f in ("session", "source", "reply_to"):
            v = item.get(f)
            opt[f] = None if v is None else names.check_text(v, field=f, limit=names.MAX_NAME)
        importance = item.get("importance")
        if importance is not None and not (
            isinstance(importance, int | float) and 0.0 <= importance <= 1.0
        ):
            raise ValidationError("importance: a number in [0, 1]", field="importance")
        fingerprint = hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()
        ident = json.dumps(
            [
                ns,
                speaker,
                text,
                occurred.isoformat() if occurred else None,
                opt["session"],
                opt["source"],
            ]
        )
        return {
            "id": "ep_" + hashlib.sha256(ident.encode()).hexdigest()[:32],
            "namespace": ns,
            "text": text,
            "speaker": speaker,
            "author_kind": author,
            "occurred_at": occurred,
            "fingerprint": fingerprint,
            "importance": 0.55 if importance is None else float(importance),
            "kind": "fact",
            "quarantined": author not in _TRUSTED,
            "archived": False,
            **opt,
        }

    def episode(self, episode_id: str, *, namespace: str | None = None) -> Episode:
        ns = self._ns(namespace)
        row = self._store.episode(episode_id)
        if row is None or row["namespace"] != ns:
            raise NotFound(f"no episode {episode_id[:80]!r}", id=episode_id[:80])
        return _episode_model(row)

    # --- reads ------------------------------------------------------------------------------
    def _times(
        self, valid_at: TimeLike | None, known_at: TimeLike | None
    ) -> tuple[datetime, datetime]:
        now = self.now()
        k = now if known_at is None else to_utc(known_at, name="known_at")
        v = now if valid_at is None else to_utc(valid_at, name="valid_at")
        return v, k

    def facts(
        self,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
        namespace: str | None = None,
    ) -> list[Fact]:
        """What was true at `valid_at`, as believed at `known_at` (both default to now).

        >>> mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z")
        """
        ns = self._ns(namespace)
        v, k = self._times(valid_at, known_at)
        rows = self._select(ns, subject, predicate, object, v, k, include_quarantined, limit)
        return self._facts_from_rows(rows, valid_at=v, known_at=k)

    def _select(
        self,
        ns: str,
        subject: str | None,
        predicate: str | None,
        obj: str | None,
        v: datetime | None,
        k: datetime,
        include_quarantined: bool,
        limit: int | None,
    ) -> list[dict[str, Any]]:
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise ValidationError("limit: a positive integer", field="limit")
        subj = obj_ent = None
        if subject is not None:
            subj = self._entity(ns, subject, field="subject")
            if subj is None:
                return []
        if obj is not None:
            obj_ent = self._entity(ns, obj, field="object")
            if obj_ent is None:
                return []
        pred = None
        if predicate is not None:
            found = self._find_predicate(ns, predicate)
            if found is None:
                return []
            pred = found.name
        slot = _slot_id(ns, subj.id, pred) if subj and pred else None
        return self._store.facts_asof(
            namespace=ns,
            valid_at=v,
            known_at=k,
            slot_id=slot,
            subject_id=subj.id if subj else None,
            object_id=obj_ent.id if obj_ent else None,
            predicate=pred,
            include_quarantined=include_quarantined,
            limit=limit,
        )

    def _facts_from_rows(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        valid_at: datetime,
        known_at: datetime,
        retracted: Mapping[str, datetime | None] | None = None,
    ) -> list[Fact]:
        out = []
        for r in rows:
            status = version_status(
                valid_to=r["valid_to"],
                expired_at=r["expired_at"],
                retracted_at=(retracted or {}).get(r["assertion_id"]),
                quarantined=r["quarantined"],
                known_at=known_at,
                valid_at=valid_at,
            )
            out.append(_fact_model(r, status))
        return out

    def history(
        self,
        subject: str,
        predicate: str | None = None,
        *,
        namespace: str | None = None,
    ) -> list[Fact]:
        """Every version ever materialised for the subject (and predicate), with its status
        and transaction window, plus content-free tombstones of erased assertions."""
        ns = self._ns(namespace)
        subj = self._entity(ns, subject, field="subject")
        if subj is None:
            return []
        if predicate is not None:
            found = self._find_predicate(ns, predicate)
            if found is None:
                return []
            slots = [_slot_id(ns, subj.id, found.name)]
        else:
            slots = [
                _slot_id(ns, subj.id, p) for p in self._load_predicates(ns)
            ]  # cheap PK probes; unknown slots return nothing
        now = self.now()
        out: list[Fact] = []
        for slot in slots:
            if self._store.slot(slot) is None:
                continue
            retracted = {a["id"]: a["retracted_at"] for a in self._store.slot_log(slot)}
            out += self._facts_from_rows(
                self._store.slot_versions(slot), valid_at=now, known_at=now, retracted=retracted
            )
            for t in self._store.slot_tombstones(slot):
                out.append(
                    Fact(
                        id=t["id"],
                        subject=subj.name,
                        predicate=slot.split("\x1f")[2],
                        object=None,
                        recorded_at=t["erased_at"],
                        status="erased",
                        namespace=ns,
                        subject_id=subj.id,
                        reason=t["reason"],
                    )
                )
        return sorted(out, key=lambda f: (f.predicate, f.recorded_at, f.valid_from or _MIN))

    def entity(
        self,
        name: str,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> EntityProfile:
        """An entity's profile: facts about it and facts pointing at it, as of (V, K)."""
        ns = self._ns(namespace)
        ent = self._entity(ns, name, field="name")
        if ent is None:
            raise NotFound(f"no entity named {str(name)[:80]!r}", name=str(name)[:80])
        v, k = self._times(valid_at, known_at)
        out_rows = self._store.facts_asof(namespace=ns, valid_at=v, known_at=k, subject_id=ent.id)
        in_rows = self._store.facts_asof(namespace=ns, valid_at=v, known_at=k, object_id=ent.id)
        return EntityProfile(
            entity=ent,
            valid_at=v,
            known_at=k,
            outgoing=self._facts_from_rows(out_rows, valid_at=v, known_at=k),
            incoming=self._facts_from_rows(in_rows, valid_at=v, known_at=k),
        )

    def entities(self, *, namespace: str | None = None) -> list[Entity]:
        ns = self._ns(namespace)
        return sorted((_entity_model(r) for r in self._store.entities(ns)), key=lambda e: e.key)

    def snapshot(
        self,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        entities: Iterable[str] | None = None,
        namespace: str | None = None,
    ) -> Snapshot:
        """The world model: every believed fact valid at V as known at K, by subject."""
        ns = self._ns(namespace)
        v, k = self._times(valid_at, known_at)
        if entities is None:
            rows = self._store.facts_asof(namespace=ns, valid_at=v, known_at=k)
        else:
            rows = []
            for name in entities:
                ent = self._entity(ns, name, field="entities")
                if ent is not None:
                    rows += self._store.facts_asof(
                        namespace=ns, valid_at=v, known_at=k, subject_id=ent.id
                    )
        groups: dict[str, list[Fact]] = {}
        for f in self._facts_from_rows(rows, valid_at=v, known_at=k):
            groups.setdefault(f.subject_id or "", []).append(f)
        return Snapshot(
            valid_at=v,
            known_at=k,
            namespace=ns,
            entities=[
                EntityFacts(entity=fs[0].subject, entity_id=eid, facts=fs)
                for eid, fs in sorted(groups.items(), key=lambda g: g[1][0].subject.casefold())
            ],
        )

    def changes(
        self,
        since: TimeLike,
        until: TimeLike | None = None,
        *,
        known_at: TimeLike | None = None,
        namespace: str | None = None,
    ) -> Changes:
        """What started or ended (valid time) and was learned or revised (transaction time)
        in [since, until); started/ended are read from the beliefs held at `known_at`."""
        ns = self._ns(namespace)
        lo = to_utc(since, name="since")
        now = self.now()
        hi = now if until is None else to_utc(until, name="until")
        k = now if known_at is None else to_utc(known_at, name="known_at")
        if hi <= lo:
            raise InvalidWindow("until must be after since")

        def believed(field: str) -> list[Fact]:
            rows = [
                r
                for r in self._store.changed_versions(ns, field, lo, hi)
                if r["recorded_at"] <= k
                and (r["expired_at"] is None or r["expired_at"] > k)
                and not r["quarantined"]
            ]
            return self._facts_from_rows(rows, valid_at=k, known_at=k)

        def moved(field: str) -> list[Fact]:
            rows = self._store.changed_versions(ns, field, lo, hi)
            return self._facts_from_rows(rows, valid_at=now, known_at=now)

        return Changes(
            since=lo,
            until=hi,
            known_at=k,
            started=believed("valid_from"),
            ended=believed("valid_to"),
            learned=moved("recorded_at"),
            revised=moved("expired_at"),
        )

    def stats(self, *, namespace: str | None = None) -> Stats:
        ns = self._ns(namespace)
        c = self._store.counts(ns)
        return Stats(
            namespace=ns,
            episodes=c["Episode"],
            entities=c["Entity"],
            assertions=c["Assertion"],
            versions=c["Fact"],
            tombstones=c["Tombstone"],
            predicates=len(self._load_predicates(ns)),
        )

    # --- bulk import ----------------------------------------------------------------------------
    def import_facts(
        self, lines: Iterable[str], *, batch: int = 5000, namespace: str | None = None
    ) -> int:
        """Assertions from JSON Lines (one `assert_many` item per line), in large batches.

        >>> mem.import_facts(open("facts.jsonl"))
        """
        count = 0
        chunk: list[dict[str, Any]] = []
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValidationError(f"line {n}: not JSON ({e.msg})", line=n) from None
            chunk.append(item)
            if len(chunk) >= batch:
                count += len(self.assert_many(chunk, namespace=namespace))
                chunk = []
        if chunk:
            count += len(self.assert_many(chunk, namespace=namespace))
        return count


_MIN = datetime.min.replace(tzinfo=UTC)


def _entity_model(row: Mapping[str, Any]) -> Entity:
    return Entity(
        id=row["id"],
        name=row["name"],
        key=row["key"],
        type=row["type"] or "thing",
        aliases=row["aliases"] or [],
        namespace=row["namespace"],
        created_at=row["created_at"],
    )


def _episode_model(row: Mapping[str, Any]) -> Episode:
    return Episode(
        id=row["id"],
        text=row["text"],
        speaker=row["speaker"],
        author_kind=row["author_kind"],
        source=row.get("source"),
        session=row.get("session"),
        reply_to=row.get("reply_to"),
        namespace=row["namespace"],
        occurred_at=row["occurred_at"] or row["recorded_at"],
        recorded_at=row["recorded_at"],
        fingerprint=row["fingerprint"],
        importance=row["importance"],
        kind=row["kind"],
        quarantined=row["quarantined"],
        archived=row["archived"],
    )


def _fact_model(r: Mapping[str, Any], status: str) -> Fact:
    return Fact(
        id=r["assertion_id"],
        version_id=r["id"],
        subject=r["subject"],
        predicate=r["predicate"],
        object=r["object"],
        valid_from=r["valid_from"],
        valid_to=r["valid_to"],
        recorded_at=r["recorded_at"],
        expired_at=r["expired_at"],
        status=cast(Any, status),
        confidence=r["confidence"],
        author_kind=r["author_kind"],
        evidence=r["evidence"] or [],
        quarantined=r["quarantined"],
        namespace=r["namespace"],
        subject_id=r["subject_id"],
        object_id=r["object_id"],
    )
