"""The believed graph as of one moment, held in memory for `pages.PageReader`.

    >>> view = GraphView(facts, ents, now, type_predicate="type", note_predicate="note")
    >>> view.page("cello", 0, 10_000, 50_000, 1_000).entities[0].name
    'Mira'

A search is a substring match over every entity's name, type and notes. Asking
Kùzu that scans every fact twice (~200 ms at 10,000 facts); the view is read
from the store in two queries (`Store.pages(...).believed`) and answers
each search in Python (~1 ms). It answers exactly what the reads in Kùzu answer
(same choice, order and counts; `tests/test_mcp.py` checks they agree) while it
is current: `until` is the next moment a believed fact's valid time begins or ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..models import GraphPage, PageEntity, PageRelation

VALUE = "value"  # the type of an entity that is only ever the object of a value predicate


@dataclass
class _Node:
    name: str
    key: str
    degree: int = 0
    subject: bool = False  # the subject of some fact
    linked: bool = False  # the object of some relation
    valued: bool = False  # the object of a value predicate
    type: str | None = None  # its type fact's object
    said: list[tuple[Any, str, str, str]] = field(default_factory=list)  # (at, low, aid, text)
    found: str = ""  # lower-cased type and notes, for the substring match


@dataclass
class _Rel:
    predicate: str
    sid: str
    oid: str
    row: PageRelation
    order: tuple[Any, str, str]


class GraphView:
    """Entities and relations believed at `at`, from `Pages.believed` rows."""

    def __init__(
        self,
        facts: list[dict[str, Any]],
        ents: list[dict[str, Any]],
        at: datetime,
        *,
        type_predicate: str,
        note_predicate: str,
    ) -> None:
        self.at = at
        self.until: datetime | None = None  # the next valid-time boundary after `at`
        nodes = {e["id"]: _Node(e["name"], e["key"]) for e in ents}
        own = (type_predicate, note_predicate)
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
            if f["p"] in own:
                if f["p"] == type_predicate:
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
                    PageRelation.model_construct(source=f["sn"], target=obj, predicate=f["p"]),
                    (f["at"], obj.lower(), f["aid"]),
                )
            )
        # in the graph now: what a fact valid now is about, or a relation points at
        self.nodes = {i: n for i, n in nodes.items() if n.subject or n.linked}
        for node in self.nodes.values():
            node.said.sort()
        self.relations.sort(key=lambda r: r.order)

    def current(self, now: datetime) -> bool:
        """Still what is believed at `now` (no valid time began or ended in between)?"""
        return self.at <= now and (self.until is None or now < self.until)

    def mark_values(self, value_predicates: set[str]) -> None:
        """Note the objects of value predicates (an entity only ever that is a 'value')."""
        for r in self.relations:
            if r.predicate in value_predicates:
                self.nodes[r.oid].valued = True

    def _kind(self, node: _Node) -> str:
        return VALUE if not node.subject and node.valued else ""

    def _matches(self, node: _Node, needle: str) -> bool:
        if not needle or needle in node.name.lower() or needle in node.found:
            return True
        return node.type is None and needle in self._kind(node)

    def page(
        self, needle: str, offset: int, limit: int, relation_limit: int, note_limit: int
    ) -> GraphPage:
        """What `PageReader.page` reads in Kùzu: the same entities, relations and counts."""
        hits = [(i, n) for i, n in self.nodes.items() if self._matches(n, needle)]
        hits.sort(key=lambda x: (-x[1].degree, x[1].key))
        shown = hits[offset : offset + limit]
        entities = [self._entity(i, n, note_limit) for i, n in shown]
        relations, touching = self._touching({i for i, _ in shown}, relation_limit)
        of = touching if needle else sum(n.degree for _, n in hits) // 2
        return GraphPage(
            entities=entities,
            relations=relations,
            omitted_entities=len(hits) - len(entities),
            omitted_relations=of - len(relations),
            omitted_notes=sum(len(n.said) for _, n in shown) - sum(len(e.notes) for e in entities),
        )

    def open(self, ids: list[str]) -> GraphPage:
        """What `PageReader.nodes` reads in Kùzu for these entity ids (in this order)."""
        shown = [i for i in ids if i in self.nodes]
        relations, _ = self._touching(set(shown), len(self.relations))
        entities = [self._entity(i, self.nodes[i], len(self.nodes[i].said)) for i in shown]
        return GraphPage(entities=entities, relations=relations)

    def _entity(self, eid: str, node: _Node, note_limit: int) -> PageEntity:
        return PageEntity.model_construct(  # trusted rows: no validation per entity
            id=eid,
            name=node.name,
            type=node.type if node.type else self._kind(node),
            notes=[s[3] for s in node.said[:note_limit]],
        )

    def _touching(self, ids: set[str], limit: int) -> tuple[list[PageRelation], int]:
        """(at most `limit` relations touching `ids`, those inside first; how many)."""
        inside: list[PageRelation] = []
        outside: list[PageRelation] = []
        for r in self.relations:
            a, b = r.sid in ids, r.oid in ids
            if a and b:
                inside.append(r.row)
            elif a or b:
                outside.append(r.row)
        return (inside + outside)[:limit], len(inside) + len(outside)
