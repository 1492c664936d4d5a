"""Shared state of the `Memory` facade: the store, the clock, names and predicates.

    >>> mem = Memory.open("palimpsest-data")   # Memory is _Core plus the verb mixins
    >>> mem.now()

Every mixin (`_writes`, `_erasure`, `_episodes`, `_reads`) builds on this class;
`memory.Memory` composes them. Nothing here talks Cypher: that is `graph/`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

from pydantic import BaseModel

from . import _names as names
from ._entity_map import NameMap
from ._ids import _new_id
from ._materialise import _Materialise
from ._read_ahead import ReadAhead
from ._time import Clock, to_utc
from ._vocabulary import default_predicates
from .errors import (
    ClosedError,
    UnknownPredicate,
    ValidationError,
)
from .graph import PredicateLog, Store

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

DEFAULT_PATH = "palimpsest-data"
_AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")
_TRUSTED: tuple[str, ...] = ("user",)


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()
"""Marks an argument left out, where an explicit None means something (unbounded)."""


def _slot_id(namespace: str, subject_id: str, predicate: str) -> str:
    return f"{namespace}\x1f{subject_id}\x1f{predicate}"


def _slot_row(namespace: str, subject_id: str, predicate: str, subject: str) -> dict[str, Any]:
    """A slot's own columns (graph/_columns.py SLOT_COLUMNS), its packed state aside."""
    return {
        "id": _slot_id(namespace, subject_id, predicate),
        "namespace": namespace,
        "subject_id": subject_id,
        "predicate": predicate,
        "subject": subject,
    }


class _Core(_Materialise):
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


_MIN = datetime.min.replace(tzinfo=UTC)


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
