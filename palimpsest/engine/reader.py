"""Reading: as-of facts, history, entity profiles, snapshots, changes and counts.

    >>> reader.facts("default", "user", "lives_in", valid_at="2024-09-01T00:00:00Z")

A point query (subject and predicate named) reads the slot's packed versions,
one primary-key lookup; the rest read the `Fact` graph (`Store.facts_asof`).
Statuses are decided by `temporal.version_status`; contested versions and names
as of a time before a merge come from the as-of view (`asof.AsOf`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .. import _names as names
from .._time import TimeLike, to_utc
from ..errors import (
    InvalidWindow,
    NotFound,
    ValidationError,
)
from ..models import (
    Changes,
    Entity,
    EntityFacts,
    EntityProfile,
    Fact,
    Snapshot,
    Stats,
)
from ..storage import LineAsk, line_of
from ..temporal import Reach, version_status, visible
from .asof import AsOf
from .context import Context
from .entities import EntityIndex
from .rows import MIN_TIME, entity_model, fact_model, slot_id
from .vocabulary import Vocabulary


class Reader:
    """Every read verb; nothing here writes."""

    def __init__(self, ctx: Context, vocab: Vocabulary, entities: EntityIndex, asof: AsOf) -> None:
        self._ctx = ctx
        self._store = ctx.store
        self._vocab = vocab
        self._entities = entities
        self._asof = asof

    def times(
        self, valid_at: TimeLike | None, known_at: TimeLike | None
    ) -> tuple[datetime, datetime]:
        now = self._ctx.now()
        k = now if known_at is None else to_utc(known_at, name="known_at")
        v = now if valid_at is None else to_utc(valid_at, name="valid_at")
        return v, k

    def facts(
        self,
        ns: str,
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
    ) -> list[Fact]:
        """What was true at `valid_at`, as believed at `known_at` (both default to now).

        >>> mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z")
        """
        v, k = self.times(valid_at, known_at)
        rows = self._select(ns, subject, predicate, object, v, k, include_quarantined, limit)
        return self.facts_from_rows(rows, valid_at=v, known_at=k)

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
        subj_id: str | None = None
        if subject is not None:
            # only the id is needed (slot ids are built from it): one lookup, not two
            subj_id = self._entities.entity_id(ns, subject, field="subject")
            if subj_id is None:
                return []
            subj_id = self._asof.entity(ns, subject, subj_id, known_at=k)
        pred = None
        found = None if predicate is None else self._vocab.find(ns, predicate)
        if predicate is not None:
            if found is None:
                return []
            pred = found.name
        obj_id: str | None = None
        if obj is not None:
            if found is not None and found.object_kind == "value":  # exactly this text
                obj_id = self._entities.value_id(ns, names.clean_value(obj))
            else:
                obj_ent = self._entities.entity(ns, obj, field="object")
                obj_id = obj_ent.id if obj_ent is not None else None
            if obj_id is None:
                return []
        if subj_id and pred:
            # a point query: the line's believed starts, else the slot's whole journal
            slot = slot_id(ns, subj_id, pred)
            rows = [
                r
                for r in self._believed(ns, slot, obj_id, v, k, include_quarantined)
                if obj_id is None or r["object_id"] == obj_id
            ]
            rows.sort(key=lambda r: (r["valid_from"] or MIN_TIME, r["object"]))
            return rows[:limit] if limit is not None else rows
        return self._store.facts.facts_asof(
            namespace=ns,
            valid_at=v,
            known_at=k,
            subject_id=subj_id,
            object_id=obj_id,
            predicate=pred,
            include_quarantined=include_quarantined,
            limit=limit,
        )

    def _believed(
        self,
        ns: str,
        slot: str,
        obj_id: str | None,
        v: datetime | None,
        k: datetime,
        include_quarantined: bool,
    ) -> list[dict[str, Any]]:
        """The slot's versions visible at (v, k). A line (the slot of a `one` predicate,
        or the named object's of a `many` one) holds the versions believed since its last
        change: known at or after that, the one start covering V answers (a primary-key
        read or two, whatever the history). Anything else reads the slot's journal."""
        card = self._vocab.cardinality(ns, slot)
        line = slot if card == "one" else (line_of(slot, obj_id) if obj_id else None)
        if line is not None and v is not None and not include_quarantined:
            ask = LineAsk(slot, ns, "", Reach(v, v))
            win = self._store.slots.line_windows({line: ask})[line]
            if win.changed_at is not None and win.changed_at <= k:
                rows = [s.version for s in win.run if s.version is not None]
                return [r for r in rows if visible(r, known_at=k, valid_at=v)]
        return [
            r
            for r in self._store.slots.versions_at(slot, valid_at=v, known_at=k)
            if include_quarantined or not r["quarantined"]
        ]

    def facts_of(
        self,
        ns: str,
        entity_ids: Iterable[str],
        predicates: Iterable[str],
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        include_quarantined: bool = False,
    ) -> list[Fact]:
        """The point query of `facts` for many subjects (by entity id) and predicates at
        once: what each (subject, predicate) held at `valid_at` as believed at `known_at`.

        >>> mira = mem.entity("Mira").entity.id
        >>> [f.object for f in mem.facts_of([mira], ["lives_in", "plays"])]
        ['Berlin', 'cello']

        Predicates may be aliases; unknown ids and predicates give nothing.
        """
        v, k = self.times(valid_at, known_at)
        ids = names.check_strings(entity_ids, field="entity_ids")
        asked = names.check_strings(predicates, field="predicates")
        found = (self._vocab.find(ns, p) for p in asked)
        preds = dict.fromkeys(p.name for p in found if p is not None)
        slots = list(dict.fromkeys(slot_id(ns, i, p) for i in ids for p in preds))
        held = self._believed_each(ns, slots, v, k, include_quarantined)
        rows = [r for s in slots for r in held.get(s, ())]
        return self.facts_from_rows(rows, valid_at=v, known_at=k)

    def _believed_each(
        self, ns: str, slots: list[str], v: datetime, k: datetime, include_quarantined: bool
    ) -> dict[str, list[dict[str, Any]]]:
        """`_believed` (no object named) of many slots in two or three reads, whatever
        their number: the lines of `one` slots together, the journals of the rest."""
        out: dict[str, list[dict[str, Any]]] = {}
        ones = [s for s in slots if self._vocab.cardinality(ns, s) == "one"]
        rest = [s for s in slots if self._vocab.cardinality(ns, s) != "one"]
        if ones and not include_quarantined:
            wins = self._store.slots.line_windows(
                {s: LineAsk(s, ns, "", Reach(v, v)) for s in ones}
            )
            for s in ones:
                win = wins.get(s)
                if win is None or win.changed_at is None or win.changed_at > k:
                    rest.append(s)  # no line read as of k: the journal answers
                    continue
                rows = [x.version for x in win.run if x.version is not None]
                out[s] = [r for r in rows if visible(r, known_at=k, valid_at=v)]
        else:
            rest += ones
        if rest:
            found = self._store.slots.versions_at_each(rest, valid_at=v, known_at=k)
            for s, rows in found.items():
                out[s] = [r for r in rows if include_quarantined or not r["quarantined"]]
        return out

    def facts_from_rows(
        self,
        rows: Iterable[Mapping[str, Any]],
        *,
        valid_at: datetime,
        known_at: datetime,
        retracted: Mapping[str, datetime | None] | None = None,
    ) -> list[Fact]:
        rows = list(rows)
        contested = self._asof.contested(rows, known_at=known_at)
        out = []
        for r in rows:
            status = version_status(
                valid_to=r["valid_to"],
                expired_at=r["expired_at"],
                retracted_at=(retracted or {}).get(r["assertion_id"]),
                quarantined=r["quarantined"],
                known_at=known_at,
                valid_at=valid_at,
                contested=r["id"] in contested,
            )
            out.append(fact_model(r, status))
        return out

    def history(self, ns: str, subject: str, predicate: str | None = None) -> list[Fact]:
        """Every version ever materialised for the subject (and predicate), with its status
        and transaction window, plus content-free tombstones of erased assertions."""
        subj = self._entities.entity(ns, subject, field="subject")
        if subj is None:
            return []
        if predicate is not None:
            found = self._vocab.find(ns, predicate)
            if found is None:
                return []
            slots = [slot_id(ns, subj.id, found.name)]
        else:
            slots = [
                slot_id(ns, subj.id, p) for p in self._vocab.load(ns)
            ]  # cheap PK probes; unknown slots return nothing
        now = self._ctx.now()
        out: list[Fact] = []
        for slot, (_, log, versions) in self._store.slots.histories(slots).items():
            retracted = {a["id"]: a["retracted_at"] for a in log}
            out += self.facts_from_rows(versions, valid_at=now, known_at=now, retracted=retracted)
            out += self.tombstones(ns, slot, subj)
        return sorted(out, key=lambda f: (f.predicate, f.recorded_at, f.valid_from or MIN_TIME))

    def tombstones(self, ns: str, slot: str, subject: Entity) -> list[Fact]:
        """A slot's erased assertions as content-free facts (status `erased`)."""
        return [
            Fact(
                id=t["id"],
                subject=subject.name,
                predicate=slot.split("\x1f")[2],
                object=None,
                recorded_at=t["erased_at"],
                status="erased",
                namespace=ns,
                subject_id=subject.id,
                reason=t["reason"],
            )
            for t in self._store.facts.slot_tombstones(slot)
        ]

    def entity(
        self,
        ns: str,
        name: str,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
    ) -> EntityProfile:
        """An entity's profile: facts about it and facts pointing at it, as of (V, K)."""
        ent = self._entities.entity(ns, name, field="name")
        if ent is None:
            raise NotFound(f"no entity named {str(name)[:80]!r}", name=str(name)[:80])
        v, k = self.times(valid_at, known_at)
        then = self._asof.entity(ns, name, ent.id, known_at=k)  # the name before a merge
        if then != ent.id and (row := self._store.names.entity(then)) is not None:
            ent = entity_model(row)
        out_rows = self._store.facts.facts_asof(
            namespace=ns, valid_at=v, known_at=k, subject_id=ent.id
        )
        in_rows = self._store.facts.facts_asof(
            namespace=ns, valid_at=v, known_at=k, object_id=ent.id
        )
        return EntityProfile(
            entity=ent,
            valid_at=v,
            known_at=k,
            outgoing=self.facts_from_rows(out_rows, valid_at=v, known_at=k),
            incoming=self.facts_from_rows(in_rows, valid_at=v, known_at=k),
        )

    def entities(self, ns: str) -> list[Entity]:
        return sorted(
            (entity_model(r) for r in self._store.names.entities(ns)), key=lambda e: e.key
        )

    def snapshot(
        self,
        ns: str,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        entities: Iterable[str] | None = None,
    ) -> Snapshot:
        """The world model: every believed fact valid at V as known at K, by subject."""
        v, k = self.times(valid_at, known_at)
        if entities is None:
            rows = self._store.facts.facts_asof(namespace=ns, valid_at=v, known_at=k)
        else:
            rows = []
            for name in entities:
                ent = self._entities.entity(ns, name, field="entities")
                if ent is not None:
                    rows += self._store.facts.facts_asof(
                        namespace=ns, valid_at=v, known_at=k, subject_id=ent.id
                    )
        groups: dict[str, list[Fact]] = {}
        named: set[str] = set()
        for f in self.facts_from_rows(rows, valid_at=v, known_at=k):
            groups.setdefault(f.subject_id or "", []).append(f)
            named.update(i for i in (f.subject_id, f.object_id) if i)
        return Snapshot(
            valid_at=v,
            known_at=k,
            namespace=ns,
            types={
                r["id"]: r["type"] or "thing"
                for r in self._store.names.entities_by_ids(sorted(named))
            },
            entities=[
                EntityFacts(entity=fs[0].subject, entity_id=eid, facts=fs)
                for eid, fs in sorted(groups.items(), key=lambda g: g[1][0].subject.casefold())
            ],
        )

    def changes(
        self,
        ns: str,
        since: TimeLike,
        until: TimeLike | None = None,
        *,
        known_at: TimeLike | None = None,
    ) -> Changes:
        """What started or ended (valid time) and was learned or revised (transaction time)
        in [since, until); started/ended are read from the beliefs held at `known_at`."""
        lo = to_utc(since, name="since")
        now = self._ctx.now()
        hi = now if until is None else to_utc(until, name="until")
        k = now if known_at is None else to_utc(known_at, name="known_at")
        if hi < lo:
            # [t, t) holds nothing (a client polling since its last `until` meets one)
            raise InvalidWindow("until must not come before since")

        def believed(field: str) -> list[Fact]:
            rows = [
                r
                for r in self._store.facts.changed_versions(ns, field, lo, hi)
                if visible(r, known_at=k, valid_at=None) and not r["quarantined"]
            ]
            return self.facts_from_rows(rows, valid_at=k, known_at=k)

        def moved(field: str) -> list[Fact]:
            rows = self._store.facts.changed_versions(ns, field, lo, hi)
            return self.facts_from_rows(rows, valid_at=now, known_at=now)

        return Changes(
            since=lo,
            until=hi,
            known_at=k,
            started=believed("valid_from"),
            ended=believed("valid_to"),
            learned=moved("recorded_at"),
            revised=moved("expired_at"),
        )

    def stats(self, ns: str) -> Stats:
        c = self._store.facts.counts(ns)
        return Stats(
            namespace=ns,
            episodes=c["Episode"],
            entities=c["Entity"],
            assertions=c["Assertion"],
            versions=c["Fact"],
            tombstones=c["Tombstone"],
            predicates=len(self._vocab.load(ns)),
        )

    def namespaces(self) -> list[str]:
        """The namespaces that hold anything: episodes, entities, facts, tombstones or
        predicate definitions (sorted; a namespace only ever read holds nothing).

        >>> mem.assert_fact("team", "uses", "Kuzu", namespace="work")
        >>> mem.namespaces()
        ['work']
        """
        self._ctx.check_open()
        return self._store.transfer.namespaces()
