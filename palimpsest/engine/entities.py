"""Which entity a name denotes: the name map, the entity cache, and entities created.

    >>> ents = EntityIndex(store)
    >>> ents.entity("default", "Mira", field="subject")     # -> Entity | None
    >>> known = ents.prefetch("default", ["Mira", "Berlin"])  # {key: id} of stored ones
    >>> ents.get_or_create("default", "Oslo", kind="thing", pending=rows, known=known,
    ...                    created_at=k)                     # -> (id, name)

Names are keyed by `_names.entity_key` (case and spacing folded); the map from
keys to ids is exact for this process (`name_map.NameMap`); display names and
the models readers asked for are kept beside it. `forget` drops all three: the
engine raises `Events.names_changed` whenever rows change behind them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from .. import _names as names
from .._ids import _new_id
from ..models import Entity
from ..storage import Store
from .name_map import NameMap
from .rows import entity_model


class EntityIndex:
    """Entity ids, names and models by name key, per namespace."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.models: dict[tuple[str, str], Entity] = {}  # (namespace, key) -> entity
        self.names: dict[str, str] = {}  # entity id -> display name
        # (namespace, key) -> entity id, exact; drops both dicts above when it forgets
        self.map = NameMap(store, self.names, self.models)

    def entity(self, ns: str, name: object, *, field: str) -> Entity | None:
        key = names.entity_key(names.clean_name(name, field=field))
        eid = self.map.resolve(ns, (key,)).get(key)
        if eid is None:
            return None
        cached = self.models.get((ns, key))
        return cached if cached is not None else self.loaded(ns, key, eid)

    def loaded(self, ns: str, key: str, eid: str) -> Entity | None:
        """The entity `eid` that name `key` was found to denote, read and cached."""
        row = self._store.names.entity(eid)
        if row is None:
            return None
        ent = entity_model(row)
        self.models[(ns, key)] = ent
        self.names[ent.id] = ent.name
        return ent

    def entity_id(self, ns: str, name: object, *, field: str) -> str | None:
        """The id of the entity a name denotes, without loading the entity."""
        key = names.entity_key(names.clean_name(name, field=field))
        return self.map.resolve(ns, (key,)).get(key)

    def get_or_create(
        self,
        ns: str,
        text: str,
        *,
        kind: str,
        pending: list[dict[str, Any]],
        known: dict[str, str],
        created_at: datetime | None,
    ) -> tuple[str, str]:
        """(id, name) of the entity the clean name `text` denotes, created if `known`
        (from `prefetch`, then grown here) has no entity for its key. A value (`kind`
        "value") denotes the node of exactly its text (see `value_of`)."""
        key = names.entity_key(text)
        if kind == "value":
            eid, key = self.value_of(text, known)
        else:
            eid = known.get(key)
        if eid is not None:
            return eid, self.name_of(eid)
        eid = _new_id("en")
        pending.append(  # the Entity columns, as a plain row: a model is never needed
            {
                "id": eid,
                "name": text,
                "key": key,
                "type": kind,
                "aliases": [],
                "namespace": ns,
                "created_at": created_at,
            }
        )
        known[key] = eid
        self.map.add(ns, key, eid, text)
        return eid, text

    def prefetch(
        self, ns: str, raw_names: Iterable[str], values: Iterable[str] = ()
    ) -> dict[str, str]:
        """{name key: entity id} of the stored entities among many clean names (and the
        keys `value_of` asks of `values`), with their names at hand: batched lookups, or
        none once the namespace is mapped whole. A key missing from the answer names no
        entity (yet)."""
        keys = {names.entity_key(n) for n in raw_names}
        for v in values:
            keys.add(names.value_key(v))
            if names.is_plain_value(v):
                keys.add(names.entity_key(v))
        return self.map.resolve(ns, keys, names=True)

    def value_of(self, text: str, known: dict[str, str]) -> tuple[str | None, str]:
        """(id or None, key) of the node a value denotes: only a node named exactly `text`.

        The first value spelt like a name takes the name's key (so it shares the node of
        an entity named exactly so, as it always did); a value that differs from that
        node's name only in case or spacing, or is no name at all (long, multi-line),
        has a key of its own text (`_names.value_key`)."""
        own = names.value_key(text)
        if own in known:
            return known[own], own
        if not names.is_plain_value(text):
            return None, own
        key = names.entity_key(text)
        eid = known.get(key)
        if eid is None:
            return None, key
        return (eid, key) if self.name_of(eid) == text else (None, own)

    def value_id(self, ns: str, text: str) -> str | None:
        """The id of the node the value `text` denotes (`value_of`), if stored."""
        return self.value_of(text, self.prefetch(ns, (), (text,)))[0]

    def forget(self) -> None:
        """Drop what is known about names (entities or keys changed behind the map)."""
        self.map.forget()

    def name_of(self, entity_id: str) -> str:
        name = self.names.get(entity_id)
        if name is None:
            row = self._store.names.entity(entity_id)
            name = row["name"] if row else entity_id
            self.names[entity_id] = name
        return name
