"""The predicate vocabulary: defaults, definitions, aliases, and cardinality over time.

    >>> vocab.define("default", "lives_in", "one", aliases=["resides in"])
    >>> vocab.find("default", "resides in").name              # 'lives_in'
    >>> vocab.resolve("default", "plays_with")                 # defined on first use

The defaults come from `palimpsest/data/predicates.json`; a namespace's definitions
(`define_predicate`, or `auto` ones for relations first met in a write) override
and extend them. A definition is a transaction of its own, recorded in the
predicate log with its time: a cardinality change re-reads every slot of the
predicate from then on (`recast`, the materialiser's `rematerialise`), so answers
as of before it, erase and export keep the cardinality that held then
(`schedule`).

A namespace's predicates are loaded once and kept until this process defines one
(`forget`), or another process writing the same store may have (`Context.foreign`
moved: read at the start of each call and again under the write lock, so a write
uses the definitions as committed when it took the lock).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import cache
from typing import Literal

from .. import _names as names
from ..data import DATA
from ..errors import UnknownPredicate, ValidationError
from ..models import Cardinality, Predicate
from ..storage import PredicateLog
from ..temporal import Schedule, schedule_of
from .context import Context
from .rows import MIN_TIME

VOCABULARY = DATA / "predicates.json"

Recast = Callable[[str, Mapping[str, Cardinality], datetime], set[str]]  # (ns, cards, K)


@cache
def default_predicates() -> tuple[Predicate, ...]:
    """The default vocabulary.

    >>> [p.name for p in default_predicates()][:2]
    ['lives_in', 'works_at']
    """
    raw = json.loads(VOCABULARY.read_text(encoding="utf-8"))
    return tuple(
        Predicate(
            name=p["name"],
            cardinality=p["cardinality"],
            aliases=p.get("aliases", []),
            inverse=p.get("inverse"),
            object_kind=p.get("object_kind", "entity"),
            origin="vocabulary",
        )
        for p in raw["predicates"]
    )


class Vocabulary:
    """Predicates per namespace, loaded once and dropped when a definition changes
    (here, or perhaps in another process: `Context.foreign` moved)."""

    def __init__(self, ctx: Context, *, log: PredicateLog, recast: Recast) -> None:
        self._ctx = ctx
        self._log = log
        self._recast = recast
        self._predicates: dict[str, dict[str, Predicate]] = {}  # namespace -> name -> predicate
        self._aliases: dict[str, dict[str, str]] = {}  # namespace -> alias key -> name
        self._foreign = ctx.foreign  # the other processes' writes the loaded ones include

    def load(self, ns: str) -> dict[str, Predicate]:
        if self._foreign != self._ctx.foreign:
            # another process wrote since: it may have defined any predicate
            self._predicates.clear()
            self._aliases.clear()
            self._foreign = self._ctx.foreign
        preds = self._predicates.get(ns)
        if preds is not None:
            return preds
        preds = {p.name: p for p in default_predicates()}
        for row in self._ctx.store.names.predicates(ns):
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

    def forget(self, ns: str) -> None:
        """Drop the namespace's loaded vocabulary (its definitions were written)."""
        self._predicates.pop(ns, None)
        self._aliases.pop(ns, None)

    def all(self, ns: str) -> list[Predicate]:
        """The vocabulary in force: defaults, overridden or extended by `define_predicate`."""
        return sorted(self.load(ns).values(), key=lambda p: p.name)

    def get(self, ns: str, name: str) -> Predicate:
        """Look a predicate up by name or alias; raises UnknownPredicate."""
        found = self.find(ns, name)
        if found is None:
            raise UnknownPredicate(f"unknown predicate {name!r}", predicate=str(name)[:64])
        return found

    def find(self, ns: str, name: object) -> Predicate | None:
        preds = self.load(ns)
        text = names.clean_name(name, field="predicate")
        alias = self._aliases[ns].get(names.entity_key(text))
        if alias is not None:
            return preds[alias]
        try:
            return preds.get(names.predicate_key(text))
        except ValidationError:
            return None

    def define(
        self,
        ns: str,
        name: str,
        cardinality: Cardinality = "many",
        *,
        aliases: Iterable[str] = (),
        inverse: str | None = None,
        object_kind: Literal["entity", "value"] = "entity",
    ) -> Predicate:
        """Add a predicate or override one; a cardinality change re-reads every slot of it.

        >>> mem.define_predicate("lives_in", cardinality="one", aliases=["resides in"])
        """
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
        return self.put(ns, pred)

    def put(self, ns: str, pred: Predicate) -> Predicate:
        """Store a definition (its own transaction, or the caller's) and load it again."""
        ctx = self._ctx
        with ctx.lock:
            with ctx.store.write(ns):
                ctx.look()  # what stands before it: as committed, under the write lock
                before = self.load(ns).get(pred.name)
                ctx.store.names.upsert_predicate(ns, pred.model_dump())
                recast = before is not None and before.cardinality != pred.cardinality
                k = ctx.tick() if recast else max(ctx.now(), ctx.last_k or MIN_TIME)
                if before != pred:
                    # erase rebuilds slots by this history, so older views keep older readings
                    prev = None if before is None else before.cardinality
                    self._log.record(ns, pred.model_dump(), previous=prev, at=k)
                if recast:
                    slots = ctx.store.slots.slots_of_predicate(ns, pred.name)
                    self._recast(ns, {s: pred.cardinality for s in slots}, k)
            self.forget(ns)
            return self.load(ns)[pred.name]

    def resolve(self, ns: str, name: object) -> Predicate:
        found = self.find(ns, name)
        if found is not None:
            return found
        # an unknown relation is kept, as a many-valued predicate of its own name
        return self.put(ns, Predicate(name=names.predicate_key(name), origin="auto"))

    def cardinality(self, ns: str, slot_id: str) -> Cardinality:
        """The cardinality a slot's predicate has now."""
        predicate = slot_id.split("\x1f")[2]
        return self.resolve(ns, predicate).cardinality

    def schedule(self, ns: str, slot: str) -> Schedule:
        """The slot's predicate's cardinality over transaction time: a rebuild replays
        each past view with the cardinality it was written with (see temporal.materialise)."""
        current = self.cardinality(ns, slot)
        changes = self._log.history(ns, slot.split("\x1f")[2])
        return schedule_of(
            [(c["changed_at"], c["cardinality"], c["previous"]) for c in changes], current
        )
