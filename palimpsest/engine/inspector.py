"""Looking closely: entity search, timelines as known at K, explanations, neighbourhoods.

    >>> inspector = Inspector(ctx, vocab, entities, reader, writer, asof)
    >>> inspector.find_entities("default", "mir")       # -> [Entity(name='Mira'), ...]
    >>> mem.timeline("user", "lives_in", known_at="2024-09-15T00:00:00Z").versions
    >>> mem.explain(fact.id).evidence[0].text
    >>> mem.neighbourhood("Mira", hops=2, limit=50).nodes

These are the reads a person looking at a memory needs (the dashboard at
`/ui/`): what the memory believed about an entity at any transaction time,
why it believes a version, and the believed graph around an entity, bounded.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .. import _names as names
from .._time import TimeLike
from ..errors import NotFound, ValidationError
from ..models import (
    AssertionRecord,
    Entity,
    Episode,
    Explanation,
    Fact,
    GraphNode,
    Neighbourhood,
    Timeline,
)
from ..temporal import visible
from .asof import AsOf
from .context import Context
from .entities import EntityIndex
from .reader import Reader
from .rows import MIN_TIME, entity_model, episode_model, slot_id
from .vocabulary import Vocabulary
from .writer import Writer

MAX_SEARCH = 100
MAX_HOPS = 2
DEFAULT_NODES = 50
MAX_NODES = 500


def _bounded(value: object, name: str, top: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= top:
        raise ValidationError(f"{name}: an integer from 1 to {top}", field=name)
    return value


class Inspector:
    """The reads a person looking at a memory needs; nothing here writes."""

    def __init__(
        self,
        ctx: Context,
        vocab: Vocabulary,
        entities: EntityIndex,
        reader: Reader,
        writer: Writer,
        asof: AsOf,
    ) -> None:
        self._ctx = ctx
        self._store = ctx.store
        self._vocab = vocab
        self._entities = entities
        self._reader = reader
        self._writer = writer
        self._asof = asof

    def find_entities(self, ns: str, text: str, *, limit: int = 20) -> list[Entity]:
        """Entities whose name or an alias contains `text` (case and space folded), those
        that start with it first.

        >>> [e.name for e in mem.find_entities("mi")]
        ['Mira', 'Jamie']
        """
        n = _bounded(limit, "limit", MAX_SEARCH)
        key = names.entity_key(names.clean_name(text, field="text"))
        rows = self._store.names.search_entity_keys(ns, key, n)
        found = {r["id"]: r for r in self._store.names.entities_by_ids([r["id"] for r in rows])}
        return [entity_model(found[r["id"]]) for r in rows if r["id"] in found]

    # --- timelines ----------------------------------------------------------------------
    def timeline(
        self,
        ns: str,
        subject: str,
        predicate: str | None = None,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
    ) -> Timeline:
        """Every version of the subject's facts recorded by `known_at`, each with the status
        it had then (`history` as of a transaction time), and the moments it changed.

        >>> t = mem.timeline("user", "lives_in", known_at="2024-09-15T00:00:00Z")
        >>> [(f.object, f.status) for f in t.versions]
        [('Melbourne', 'ended'), ('Sydney', 'current')]

        Versions recorded after `known_at` are left out; one believed then and replaced
        since reads as it read then. `valid_at` (default now) decides `ended`.
        Erased assertions appear as content-free tombstones (status `erased`).
        """
        ent = self._entities.entity(ns, subject, field="subject")
        if ent is None:
            raise NotFound(f"no entity named {str(subject)[:80]!r}", name=str(subject)[:80])
        v, k = self._reader.times(valid_at, known_at)
        then = self._asof.entity(ns, subject, ent.id, known_at=k)
        if then != ent.id and (row := self._store.names.entity(then)) is not None:
            ent = entity_model(row)
        if predicate is None:
            preds = list(self._vocab.load(ns))
        else:
            found = self._vocab.find(ns, predicate)
            preds = [] if found is None else [found.name]
        versions: list[Fact] = []
        moments: set[datetime] = set()
        slots = [slot_id(ns, ent.id, p) for p in preds]
        for slot, (_, log, rows) in self._store.slots.histories(slots).items():
            for r in rows:
                moments.add(r["recorded_at"])
                if r["expired_at"] is not None:
                    moments.add(r["expired_at"])
            retracted = {
                a["id"]: a["retracted_at"]
                for a in log
                if a["retracted_at"] is not None and a["retracted_at"] <= k
            }
            seen = [r for r in rows if r["recorded_at"] <= k]
            versions += self._reader.facts_from_rows(
                seen, valid_at=v, known_at=k, retracted=retracted
            )
            versions += self._reader.tombstones(ns, slot, ent)
        versions.sort(key=lambda f: (f.predicate, f.valid_from or MIN_TIME, f.recorded_at))
        now = self._ctx.now()
        return Timeline(
            entity=ent,
            valid_at=v,
            known_at=k,
            versions=versions,
            moments=sorted(m for m in moments if m <= now),
        )

    # --- explanations -------------------------------------------------------------------
    def explain(self, ns: str, fact_id: str, *, version_id: str | None = None) -> Explanation:
        """Why a version is (or was) believed: the assertion that made it, its evidence
        (the episodes, with speaker and times) and the versions that replaced it.

        >>> e = mem.explain(fact.id)
        >>> e.assertion.origin, [ep.text for ep in e.evidence], e.superseded_by

        `fact_id` is the assertion id (`Fact.id`); `version_id` picks one of its versions
        (default: the one believed now, else the latest). Raises NotFound, or
        AlreadyErased for an erased one.
        """
        with self._ctx.lock:
            a = self._writer.own_assertion(ns, fact_id)
            found = self._store.slots.histories([a["slot_id"]]).get(a["slot_id"])
            log, rows = ([], []) if found is None else found[1:]
            retracted = {x["id"]: x["retracted_at"] for x in log}
            mine = [r for r in rows if r["assertion_id"] == a["id"]]
            if version_id is not None:
                mine = [r for r in mine if r["id"] == version_id]
                if not mine:
                    raise NotFound(
                        f"{fact_id} has no version {version_id[:80]!r}", id=version_id[:80]
                    )
            now = self._ctx.now()
            if mine:
                mine.sort(key=lambda r: (r["expired_at"] is None, r["recorded_at"]))
                version = mine[-1]
                fact = self._reader.facts_from_rows(
                    [version], valid_at=now, known_at=now, retracted=retracted
                )[0]
                replaced = [
                    r
                    for r in rows
                    if version["expired_at"] is not None
                    and r["recorded_at"] == version["expired_at"]
                    and r["id"] != version["id"]
                ]
                superseded = self._reader.facts_from_rows(
                    replaced, valid_at=now, known_at=now, retracted=retracted
                )
            else:  # an end, or an assertion that never showed (covered, or withdrawn first)
                status = "retracted" if a["retracted_at"] is not None else "superseded"
                fact = self._writer.fact(a, status=status, reason=a["retract_reason"])
                superseded = []
            evidence, missing = self._evidence(ns, a["evidence"] or [])
            decision = self._store.consolidation.decision(a["id"])
            return Explanation(
                fact=fact,
                assertion=_record(a, decision),
                evidence=evidence,
                missing_evidence=missing,
                superseded_by=superseded,
            )

    def _evidence(self, ns: str, ids: list[str]) -> tuple[list[Episode], list[str]]:
        rows = self._store.names.episodes_by_id(ids) if ids else {}
        found = [episode_model(rows[i]) for i in ids if i in rows and rows[i]["namespace"] == ns]
        have = {e.id for e in found}
        return found, [i for i in ids if i not in have]

    # --- neighbourhoods -----------------------------------------------------------------
    def neighbourhood(
        self,
        ns: str,
        name: str,
        *,
        hops: int = 1,
        limit: int = DEFAULT_NODES,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
    ) -> Neighbourhood:
        """The believed graph within `hops` (1 or 2) of an entity at (valid_at, known_at),
        at most `limit` nodes (default 50, at most 500) and `4 * limit` edges.

        >>> g = mem.neighbourhood("Mira", hops=2)
        >>> [n.name for n in g.nodes], g.truncated

        Nodes are reached breadth first; each node's facts are read in a fixed order
        (subject, predicate, start, object) and only as many as the limits can still
        take, and no node is read once `limit` nodes are in, so a hub with 10^5 facts
        costs what the limit costs. `truncated` says some facts or nodes within reach
        may have been left out.
        """
        depth = _bounded(hops, "hops", MAX_HOPS)
        cap = _bounded(limit, "limit", MAX_NODES)
        ent = self._entities.entity(ns, name, field="name")
        if ent is None:
            raise NotFound(f"no entity named {str(name)[:80]!r}", name=str(name)[:80])
        v, k = self._reader.times(valid_at, known_at)
        nodes = {ent.id: GraphNode(id=ent.id, name=ent.name, hops=0)}
        edges: dict[str, Mapping[str, Any]] = {}
        max_edges = 4 * cap
        truncated = False
        frontier = [ent.id]
        for hop in range(1, depth + 1):
            reached: list[str] = []
            for eid in frontier:
                room = max_edges - len(edges)
                if room <= 0 or len(nodes) >= cap:
                    # full: the nodes not yet read may hold more (a hub's neighbours
                    # would cost a read each and could add nothing but edges)
                    truncated = True
                    break
                # a fact brings at most one new node: no more than the nodes still free
                rows, more = self._links(ns, eid, v, k, min(room, cap - len(nodes)) + 1)
                truncated |= more
                for r in rows:
                    if r["id"] in edges:
                        continue
                    ends = ((r["subject_id"], r["subject"]), (r["object_id"], r["object"]))
                    new = [(i, n) for i, n in ends if i is not None and i not in nodes]
                    if len(nodes) + len(new) > cap or len(edges) >= max_edges:
                        truncated = True
                        continue
                    for i, n in new:
                        nodes[i] = GraphNode(id=i, name=n or i, hops=hop)
                        reached.append(i)
                    edges[r["id"]] = r
            frontier = reached
        facts = self._reader.facts_from_rows(edges.values(), valid_at=v, known_at=k)
        return Neighbourhood(
            center=ent,
            valid_at=v,
            known_at=k,
            hops=depth,
            limit=cap,
            nodes=sorted(nodes.values(), key=lambda n: (n.hops, n.name.casefold())),
            edges=facts,
            truncated=truncated,
        )

    def _links(
        self, ns: str, eid: str, v: datetime, k: datetime, limit: int
    ) -> tuple[list[dict[str, Any]], bool]:
        """The believed facts about or pointing at an entity, from their packed slots
        (ordered by subject, predicate, start, object), at most `limit`, and whether
        there may be more."""
        out = self._store.facts.entity_slots(eid, incoming=False, limit=limit)
        incoming = self._store.facts.entity_slots(eid, incoming=True, limit=limit)
        rows = []
        for _, _, versions in self._store.slots.histories(
            list(dict.fromkeys(out + incoming))
        ).values():
            rows += [
                r
                for r in versions
                if eid in (r["subject_id"], r["object_id"])
                and not r["quarantined"]
                and visible(r, known_at=k, valid_at=v)
            ]
        rows.sort(key=_order)
        more = len(rows) > limit or limit in (len(out), len(incoming))
        return rows[:limit], more


def _order(r: Mapping[str, Any]) -> tuple[str, str, bool, datetime, str]:
    return (r["subject"], r["predicate"], r["valid_from"] is not None,
            r["valid_from"] or MIN_TIME, r["object"] or "")  # fmt: skip


def _record(a: Mapping[str, Any], decision: Mapping[str, Any] | None) -> AssertionRecord:
    return AssertionRecord(
        id=a["id"],
        op=a["op"],
        origin=a["origin"] or "api",
        recorded_at=a["recorded_at"],
        valid_from=a["valid_from"],
        valid_to=a["valid_to"],
        author_kind=a["author_kind"],
        confidence=a["confidence"],
        quarantined=bool(a["quarantined"]),
        evidence=list(a["evidence"] or []),
        retracted_at=a["retracted_at"],
        retract_reason=a["retract_reason"],
        decided_by=None if decision is None else decision["step"],
        decision_reason=None if decision is None else decision["reason"],
    )
