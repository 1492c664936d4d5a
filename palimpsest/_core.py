"""Shared state of the `Memory` facade: the store, the clock, names and predicates.

    >>> mem = Memory.open("palimpsest-data")   # Memory is _Core plus the verb mixins
    >>> mem.now()

Every mixin (`_writes`, `_erasure`, `_episodes`, `_reads`) builds on this class;
`memory.Memory` composes them. Nothing here talks Cypher: that is `graph/`.
"""

from __future__ import annotations

import os
import random
import threading
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel

from . import _names as names
from ._entity_map import PRELOAD_AFTER, NameMap
from ._read_ahead import ReadAhead
from ._time import Clock, to_utc
from ._vocabulary import default_predicates
from .errors import (
    ClosedError,
    UnknownPredicate,
    ValidationError,
)
from .graph import PredicateLog, Store, decode, encode

if TYPE_CHECKING:
    from .extraction import Extractor
    from .recall.embedder import Embedder
from .models import (
    Cardinality,
    Entity,
    Episode,
    Fact,
    Predicate,
)
from .temporal import LogEntry, Schedule, Segment, diff, materialise, replay

DEFAULT_PATH = "palimpsest-data"
_AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")
_PRELOAD_AFTER = PRELOAD_AFTER  # store lookups of names before a namespace is loaded whole
_TRUSTED: tuple[str, ...] = ("user",)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marks an argument left out, where an explicit None means something (unbounded)."""


_ids = random.Random()  # seeded from os.urandom; re-seeded in a forked child


def _new_id(prefix: str) -> str:
    # 128 random bits as 32 hex digits, the shape of a uuid4's hex at a tenth of its
    # cost (a bulk write makes two or three ids per assertion; a system call each was
    # 30 ms of a 5,000 batch). A fork would copy the generator's state: the child
    # re-seeds, or parent and child could hand out the same ids.
    return f"{prefix}_{_ids.getrandbits(128):032x}"


os.register_at_fork(after_in_child=_ids.seed)


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


class _Core:
    """State and helpers every verb needs."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        namespace: str,
        extractor: Extractor | None,
        embedder: Embedder | None = None,
    ) -> None:
        self._store = store
        self._extractor = extractor
        self._embedder = embedder  # None: recall by words only
        self._clock = clock
        self.namespace = namespace
        self._lock = threading.RLock()
        self._entities: dict[tuple[str, str], Entity] = {}  # (namespace, key) -> entity
        self._names: dict[str, str] = {}  # entity id -> display name
        # (namespace, key) -> entity id, exact; drops both dicts above when it forgets
        self._name_map = NameMap(store, self._names, self._entities)
        self._predicates: dict[str, dict[str, Predicate]] = {}  # namespace -> name -> predicate
        self._aliases: dict[str, dict[str, str]] = {}  # namespace -> alias key -> name
        self._ahead = ReadAhead(store)  # slot states of large writes, read on a second thread
        last, seq = store.clocks()
        # a predicate change is a transaction too (erase rebuilds by its time)
        times = [t for t in (last, PredicateLog(store.db).latest()) if t is not None]
        self._last_k = max(times) if times else None
        self._seq = seq
        self._closed = False

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
                recast = before is not None and before.cardinality != pred.cardinality
                k = self._tick() if recast else max(self.now(), self._last_k or _MIN)
                if before != pred:
                    # erase rebuilds slots by this history, so older views keep older readings
                    prev = None if before is None else before.cardinality
                    PredicateLog(self._store.db).record(ns, pred.model_dump(), previous=prev, at=k)
                if recast:
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
        eid = self._name_map.resolve(ns, (key,)).get(key)
        if eid is None:
            return None
        cached = self._entities.get((ns, key))
        return cached if cached is not None else self._entity_loaded(ns, key, eid)

    def _entity_loaded(self, ns: str, key: str, eid: str) -> Entity | None:
        """The entity `eid` that name `key` was found to denote, read and cached."""
        row = self._store.entity(eid)
        if row is None:
            return None
        ent = _entity_model(row)
        self._entities[(ns, key)] = ent
        self._names[ent.id] = ent.name
        return ent

    def _entity_id(self, ns: str, name: object, *, field: str) -> str | None:
        """The id of the entity a name denotes, without loading the entity."""
        key = names.entity_key(names.clean_name(name, field=field))
        return self._name_map.resolve(ns, (key,)).get(key)

    def _entity_or_create(
        self,
        ns: str,
        text: str,
        *,
        kind: str,
        pending: list[dict[str, Any]],
        known: dict[str, str],
    ) -> tuple[str, str]:
        """(id, name) of the entity the clean name `text` denotes, created if `known`
        (from `_prefetch_entities`, then grown here) has no entity for its key."""
        key = names.entity_key(text)
        eid = known.get(key)
        if eid is not None:
            return eid, self._name_of(eid)
        eid = _new_id("en")
        pending.append(  # the Entity columns, as a plain row: a model is never needed
            {
                "id": eid,
                "name": text,
                "key": key,
                "type": kind,
                "aliases": [],
                "namespace": ns,
                "created_at": self._last_k,
            }
        )
        known[key] = eid
        self._name_map.add(ns, key, eid, text)
        return eid, text

    def _prefetch_entities(self, ns: str, raw_names: Iterable[str]) -> dict[str, str]:
        """{name key: entity id} of the stored entities among many clean names, with their
        names at hand: batched lookups, or none once the namespace is mapped whole. A key
        missing from the answer names no entity (yet)."""
        keys = {names.entity_key(n) for n in raw_names}
        return self._name_map.resolve(ns, keys, names=True)

    def _forget_episodes(self, ns: str, episode_ids: Sequence[str]) -> None:
        """Hook for rooms that keep derived copies of episode text (recall's search rows)."""

    def _forget_cache(self) -> None:
        """Drop what is known about names (entities or keys changed behind the map)."""
        self._name_map.forget()

    def _name_of(self, entity_id: str) -> str:
        name = self._names.get(entity_id)
        if name is None:
            row = self._store.entity(entity_id)
            name = row["name"] if row else entity_id
            self._names[entity_id] = name
        return name

    # --- materialisation (shared by writes, erasure and predicate changes) -------------
    def _versions_from_log(
        self, log: Sequence[Mapping[str, Any]], cardinality: Cardinality | Schedule
    ) -> list[dict[str, Any]]:
        """A slot's whole version history rebuilt from its log (erase, restore): the
        replayed versions of trusted assertions, plus quarantined claims as they stand.
        `cardinality` is the predicate's schedule over transaction time (`_erasure` builds
        it from the definition history), or one cardinality when it never changed."""
        by_id = {a["id"]: a for a in log}
        active = [_log_entry(a) for a in log if not a["quarantined"]]
        rows = [
            self._version_row(
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
                    self._version_row(
                        a, a["valid_from"], a["valid_to"], a["recorded_at"], a["retracted_at"]
                    )
                )
        return rows

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

    def _states(
        self,
        slots: Mapping[str, Mapping[str, Any]],
        new: AbstractSet[str] = frozenset(),
        ahead: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> dict[str, _SlotState]:
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
        out: dict[str, _SlotState] = {}
        for sid, meta in slots.items():
            row = stored.get(sid)
            if row is None:
                out[sid] = _SlotState(dict(meta), [], [], new=True)
                continue
            log, versions = decode(row["log"], row["versions"], slot=row, subject=row["subject"])
            out[sid] = _SlotState(row, log, versions, new=False)
            # versions carry their object's name (entity names never change): re-deriving an
            # older assertion's version then costs no Entity lookup (measured: ~400 a batch)
            known = self._names
            known.setdefault(row["subject_id"], row["subject"])
            for v in versions:
                if v["object_id"] is not None:
                    known.setdefault(v["object_id"], v["object"])
        return out

    def _plan(
        self, states: Mapping[str, _SlotState], cards: Mapping[str, Cardinality], k: datetime
    ) -> _Plan:
        """Replay each slot at K against what it believes now; edits `states` in place."""
        plan = _Plan()
        for sid, st in states.items():
            by_id = {a["id"]: a for a in st.log}
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
                    st.versions = [x for x in st.versions if x["id"] != v["id"]]
                else:
                    plan.expire.append(v["id"])
                    v["expired_at"] = k
            for seg in new:
                row = self._version_row(by_id[seg.source], seg.valid_from, seg.valid_to, k)
                plan.insert.append(row)
                st.versions.append(row)
        return plan

    def _apply(self, plan: _Plan, states: Mapping[str, _SlotState], k: datetime) -> None:
        """Write a plan's version changes and the packed state of existing slots.

        New slots are created by the caller, with their packed state, before this runs.
        """
        self._store.delete_versions(plan.vanish)
        self._store.expire_versions(plan.expire, k)
        self._store.create_versions(plan.insert)
        self._store.save_slot_states([_packed(st) for st in states.values() if not st.new])

    def _rematerialise(self, ns: str, cards: Mapping[str, Cardinality], k: datetime) -> set[str]:
        """Re-read existing slots at K (after a cardinality change); the changed slots."""
        states = self._states({s: {"id": s} for s in cards})
        states = {s: st for s, st in states.items() if not st.new}
        plan = self._plan(states, cards, k)
        self._apply(plan, states, k)
        return plan.changed

    def _cardinality(self, ns: str, slot_id: str) -> Cardinality:
        predicate = slot_id.split("\x1f")[2]
        return self._resolve_predicate(ns, predicate).cardinality


_MIN = datetime.min.replace(tzinfo=UTC)


@dataclass
class _SlotState:
    """A slot as one write sees it: its row, assertion log and every version."""

    row: dict[str, Any]
    log: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    new: bool


@dataclass
class _Plan:
    vanish: list[str] = field(default_factory=list)
    expire: list[str] = field(default_factory=list)
    insert: list[dict[str, Any]] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)


def _packed(st: _SlotState) -> dict[str, Any]:
    log, versions = encode(st.log, st.versions)
    return {**st.row, "log": log, "versions": versions}


_M = TypeVar("_M", bound=BaseModel)
_set = object.__setattr__


def _trusted(cls: type[_M], values: dict[str, Any]) -> _M:
    """A model from values this engine built and checked, one per field in field order:
    what `model_construct` does, without its per-field alias and default lookups
    (0.8 instead of 5.5 µs, paid per fact of a bulk write). Models with a post-init
    hook or extra fields need `model_construct` (tests/test_write_path.py checks)."""
    m = cls.__new__(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", set(values))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


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
