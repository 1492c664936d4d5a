"""The official memory server's graph as of now, held in memory for its reads.

    >>> views = Views()                       # one per served memory (memory_tools)
    >>> views.get(mem).page("cello", 0, 10_000, 50_000, 1_000)["entities"][0]["name"]
    'Mira'
    >>> views.forget()                        # after any call that may have written

`search_nodes` is a substring match over every entity's name, type and observations
(as in the official server, which reads its whole file each call). Asking Kùzu
that scans every fact twice (~200 ms at 10,000 facts); this view is read from
the store in two queries and answers each search in Python (~1 ms). It
answers exactly what `memory_reads` computes in Kùzu (same choice, order and
counts; `tests/test_mcp.py` checks they agree), is built again after any write
(`forget`) and when a believed fact's valid time begins or ends, and is not used
for a graph over `MAX_FACTS` facts (the Kùzu reads page it there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .memory_graph import (
    COMPAT_PREDICATES,
    ENTITY_TYPE,
    OBSERVATION,
    UNTYPED,
    entity_type,
    pages,
    relation_type,
)

if TYPE_CHECKING:
    from ..memory import Memory

MAX_FACTS = 200_000  # believed facts a view holds at most (~100 MB of Python objects)


@dataclass
class _Node:
    name: str
    key: str
    degree: int = 0
    subject: bool = False  # the subject of some fact
    linked: bool = False  # the object of some relation
    valued: bool = False  # the object of a value predicate
    type: str | None = None  # its entity_type object
    said: list[tuple[Any, str, str, str]] = field(default_factory=list)  # (at, low, aid, text)
    found: str = ""  # lower-cased type and observations, for the substring match


@dataclass
class _Rel:
    predicate: str
    sid: str
    oid: str
    row: dict[str, str]
    order: tuple[Any, str, str]


class GraphView:
    """Entities and relations believed at `at` (built by `Views.get`)."""

    def __init__(self, facts: list[dict[str, Any]], ents: list[dict[str, Any]], at: datetime):
        self.at = at
        self.until: datetime | None = None  # the next valid-time boundary after `at`
        nodes = {e["id"]: _Node(e["name"], e["key"]) for e in ents}
        self.relations: list[_Rel] = []
        for f in facts:
            for t in (f["vf"], f["vt"]):
                if t is not None and t > at and (self.until is None or t < self.until):
                    self.until = t
            if (f["vf"] is not None and f["vf"] > at) or (f["vt"] is not None and f["vt"] <= at):
                continue
            node = nodes.get(f["s"])
            if node is None:
                continue
            node.subject = True
            obj = f["obj"] or ""
            if f["p"] in COMPAT_PREDICATES:
                if f["p"] == ENTITY_TYPE:
                    node.type = obj
                else:
                    node.said.append((f["at"], obj.lower(), f["aid"], obj))
                node.found += "\x00" + obj.lower()
                continue
            end = nodes.get(f["o"])
            if end is None:
                continue
            end.linked = True
            node.degree += 1
            end.degree += 1
            self.relations.append(
                _Rel(
                    f["p"],
                    f["s"],
                    f["o"],
                    {"from": f["sn"], "to": obj, "relationType": relation_type(f["p"])},
                    (f["at"], obj.lower(), f["aid"]),
                )
            )
        # in the graph now: what a fact valid now is about, or a relation points at
        self.nodes = {i: n for i, n in nodes.items() if n.subject or n.linked}
        for node in self.nodes.values():
            node.said.sort()
        self.relations.sort(key=lambda r: r.order)

    def mark_values(self, value_predicates: set[str]) -> None:
        """Note the objects of value predicates (an entity only ever that is a 'value')."""
        for r in self.relations:
            if r.predicate in value_predicates:
                self.nodes[r.oid].valued = True

    def _kind(self, node: _Node) -> str:
        return "value" if not node.subject and node.valued else UNTYPED

    def _matches(self, node: _Node, needle: str) -> bool:
        if not needle or needle in node.name.lower() or needle in node.found:
            return True
        return node.type is None and needle in self._kind(node)

    def page(
        self, needle: str, offset: int, limit: int, relation_limit: int, observation_limit: int
    ) -> dict[str, Any]:
        """What `memory_reads._page` answers (before its summary): entities, relations,
        and the counts {entities, relations, observations} of what is left out."""
        hits = [(i, n) for i, n in self.nodes.items() if self._matches(n, needle)]
        hits.sort(key=lambda x: (-x[1].degree, x[1].key))
        shown = hits[offset : offset + limit]
        entities = [self._entity(n, observation_limit) for _, n in shown]
        relations, touching = self._touching({i for i, _ in shown}, relation_limit)
        of = touching if needle else sum(n.degree for _, n in hits) // 2
        hidden = sum(len(n.said) for _, n in shown) - sum(len(e["observations"]) for e in entities)
        left = {"entities": len(hits) - len(entities), "relations": of - len(relations)}
        return {
            "entities": entities,
            "relations": relations,
            "omitted": {**left, "observations": hidden},
        }

    def open(self, ids: list[str]) -> dict[str, Any]:
        """What `memory_reads.open_nodes` answers for these entity ids (in this order)."""
        shown = [i for i in ids if i in self.nodes]
        relations, _ = self._touching(set(shown), len(self.relations))
        return {
            "entities": [self._entity(self.nodes[i], len(self.nodes[i].said)) for i in shown],
            "relations": relations,
        }

    def _entity(self, node: _Node, observation_limit: int) -> dict[str, Any]:
        kind = node.type if node.type else self._kind(node)
        return {
            "name": node.name,
            "entityType": entity_type(kind),
            "observations": [s[3] for s in node.said[:observation_limit]],
        }

    def _touching(self, ids: set[str], limit: int) -> tuple[list[dict[str, str]], int]:
        """(at most `limit` relations touching `ids`, those inside first; how many)."""
        inside: list[dict[str, str]] = []
        outside: list[dict[str, str]] = []
        for r in self.relations:
            a, b = r.sid in ids, r.oid in ids
            if a and b:
                inside.append(r.row)
            elif a or b:
                outside.append(r.row)
        return (inside + outside)[:limit], len(inside) + len(outside)


@dataclass
class Views:
    """The view of each namespace of one memory, until the next write (`forget`)."""

    _views: dict[str, GraphView | None] = field(default_factory=dict)

    def get(self, mem: Memory, namespace: str | None = None) -> GraphView | None:
        """The view as of now, or None when the graph is too large to hold."""
        ns = mem._ns(namespace)
        now = mem.now()
        if ns in self._views:
            view = self._views[ns]
            if view is None or (view.at <= now and (view.until is None or now < view.until)):
                return view
        pg = pages(mem, namespace)
        facts, ents = pg.believed()
        if len(facts) > MAX_FACTS:
            self._views[ns] = None
            return None
        view = GraphView(facts, ents, now)
        kinds = {p.name: p.object_kind for p in mem.predicates(namespace=namespace)}
        view.mark_values({p for p, k in kinds.items() if k == "value"})
        self._views[ns] = view
        return view

    def forget(self) -> None:
        self._views.clear()


__all__ = ["MAX_FACTS", "OBSERVATION", "GraphView", "Views"]
