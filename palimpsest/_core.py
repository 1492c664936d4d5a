"""Shared state of the `Memory` facade: the store, the clock, names and predicates.

    >>> mem = Memory.open("palimpsest-data")   # Memory is _Core plus the verb mixins
    >>> mem.now()

Every mixin (`_writes`, `_erasure`, `_episodes`, `_reads`) builds on this class;
`memory.Memory` composes them. Nothing here talks Cypher: that is `graph/`.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, cast

from . import _names as names
from ._time import Clock, to_utc
from ._vocabulary import default_predicates
from .errors import (
    ClosedError,
    UnknownPredicate,
    ValidationError,
)
from .graph import Store

if TYPE_CHECKING:
    from .extraction import Extractor
from .models import (
    Cardinality,
    Entity,
    Episode,
    Fact,
    Predicate,
)
from .temporal import LogEntry, Segment, diff, replay

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


class _Core:
    """State and helpers every verb needs."""

    def __init__(
        self, store: Store, *, clock: Clock, namespace: str, extractor: Extractor | None
    ) -> None:
        self._store = store
        self._extractor = extractor
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

    # --- materialisation (shared by writes, erasure and predicate changes) -------------
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

    def _cardinality(self, ns: str, slot_id: str) -> Cardinality:
        predicate = slot_id.split("\x1f")[2]
        return self._resolve_predicate(ns, predicate).cardinality


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
