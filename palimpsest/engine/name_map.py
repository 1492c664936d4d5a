"""Which entity a name denotes, remembered in-process: (namespace, name key) -> entity id.

    >>> ids = NameMap(store, names={}, models={})
    >>> ids.resolve("default", ["mira okafor", "sydney"])   # {key: entity id} of stored ones
    >>> ids.add("default", "jazz", "en_…", "Jazz")           # an entity this process created

The map is exact rather than a hint while this process is the store's only
writer: every entity this process creates is added (`add`), every other path that
writes Entity or EntityKey rows (merge, unmerge, erase, restore) drops it
(`Events.names_changed`, `EntityIndex.forget`), and so does any write transaction
that rolls back (`Store.rollbacks` moved since we looked) or a write of another
process on a shared store (`Store.foreign_generation` moved).

Names are looked up in the store one by one (or one batch at a time) until a
namespace has cost `PRELOAD_AFTER` lookups; then all its keys and names are
loaded at once (one scan each of EntityKey and Entity: ~0.25 s CPU and ~350
bytes per entity at 150k entities, measured), after which a name missing
from the map is known absent, and a present one needs no store call. A
namespace of more than `MAX_KEYS` keys is never loaded whole (its count is read
first, ~15 ms at 150k): its names stay looked up, so the map holds at most
`MAX_KEYS` preloaded keys (~350 MB) plus the names this process has met.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..models import Entity
    from ..storage import Store

PRELOAD_AFTER = 64  # store lookups of names in a namespace before all its keys are loaded
MAX_KEYS = 1_000_000  # no namespace with more keys than this is loaded whole


@dataclass(slots=True)
class _Space:
    ids: dict[str, str] = field(default_factory=dict)  # name or alias key -> entity id
    complete: bool = False  # every key of the namespace is in `ids`
    lookups: int = 0  # keys looked up in the store so far
    too_big: bool = False  # more than MAX_KEYS keys: never loaded whole


class NameMap:
    """Name keys -> entity ids per namespace, and entity ids -> display names."""

    def __init__(
        self, store: Store, names: dict[str, str], models: dict[tuple[str, str], Entity]
    ) -> None:
        self._store = store
        self.names = names  # entity id -> display name (shared with `EntityIndex.names`)
        self._models = models  # (namespace, key) -> Entity read for a reader (`EntityIndex`)
        self._spaces: dict[str, _Space] = {}
        self._rollbacks = store.rollbacks
        self._foreign = store.foreign_generation

    def forget(self) -> None:
        """Drop everything (the store changed names behind the map, or rolled back)."""
        self._spaces.clear()
        self.names.clear()
        self._models.clear()
        self._rollbacks = self._store.rollbacks
        self._foreign = self._store.foreign_generation

    def _space(self, ns: str) -> _Space:
        # entities created in a transaction that was then undone do not exist; another
        # process may have created (or merged) any name since we looked
        if (
            self._store.rollbacks != self._rollbacks
            or self._store.foreign_generation != self._foreign
        ):
            self.forget()
        space = self._spaces.get(ns)
        if space is None:
            space = self._spaces[ns] = _Space()
        return space

    def resolve(self, ns: str, keys: Iterable[str], *, names: bool = False) -> dict[str, str]:
        """{key: entity id} for the keys that name a stored entity. Afterwards the map
        holds each of them (and, with `names`, their display names), so a key missing
        from it after this call is a name no entity has."""
        space = self._space(ns)
        out: dict[str, str] = {}
        unknown: list[str] = []
        for key in dict.fromkeys(keys):
            eid = space.ids.get(key)
            if eid is not None:
                out[key] = eid
            elif not space.complete:
                unknown.append(key)
        if unknown:
            if space.lookups + len(unknown) > PRELOAD_AFTER and self._preload(ns, space):
                found = {k: space.ids[k] for k in unknown if k in space.ids}
            else:
                space.lookups += len(unknown)
                found = self._store.names.entity_ids_for_keys(ns, unknown)
                space.ids.update(found)
            out.update(found)
        if names:
            self._load_names(out.values())
        return out

    def _preload(self, ns: str, space: _Space) -> bool:
        """Load every key and name of the namespace, unless it has too many."""
        if space.too_big or self._store.names.entity_key_count(ns) > MAX_KEYS:
            space.too_big = True
            return False
        # inside a write transaction this reads through the writer: its own new rows too
        space.ids.update(self._store.names.entity_keys(ns))
        self.names.update(self._store.names.entity_names(ns))
        space.complete = True
        return True

    def _load_names(self, ids: Iterable[str]) -> None:
        missing = sorted({i for i in ids if i not in self.names})
        if missing:
            self.names.update(
                (r["id"], r["name"]) for r in self._store.names.entities_by_ids(missing)
            )

    def add(self, ns: str, key: str, entity_id: str, name: str) -> None:
        """An entity this process just created under `key` (its transaction may still
        roll back: then the map is dropped, see `_space`)."""
        self._space(ns).ids[key] = entity_id
        self.names[entity_id] = name
