"""The graph believed now as entities and relations, a page at a time.

    >>> page = mem.graph_page("cello", type_predicate="entity_type", note_predicate="observation")
    >>> [(e.name, e.type, e.notes) for e in page.entities]
    [('Mira', 'person', ['plays the cello'])]
    >>> mem.entity_ids(["mira", "nobody"])
    {'mira': ('en_…', 'Mira')}

A reading of the graph in which two predicates describe their subject instead of
relating it to another entity: a *type* (one-valued) and *notes* (many, oldest
first); every other fact believed now, valid now and not quarantined is a
relation. The MCP memory server's `read_graph`, `search_nodes` and `open_nodes`
are this (`mcp/memory_reads.py`). A page is answered from an in-memory view of
the graph (`graph_view.GraphView`) while it is current: until a write changes a
fact version (the store's fact generation moves), names change, or a believed
fact's valid time begins or ends. A graph of more than `MAX_VIEW_FACTS` believed
facts is paged in Kùzu instead (`Store.pages`), with the same answers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import datetime

from .. import _names as names
from ..errors import ValidationError
from ..models import GraphPage, PageEntity, PageRelation
from .context import Context
from .entities import EntityIndex
from .graph_view import VALUE, GraphView
from .vocabulary import Vocabulary

MAX_VIEW_FACTS = 200_000  # believed facts a view holds at most (~100 MB of Python objects)
_ALL = 1 << 31
_Key = tuple[str, str, str]  # (namespace, type predicate, note predicate)


def _count(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValidationError(f"{name}: an integer >= {low}", field=name)
    return value


class PageReader:
    """Pages of the believed graph, names to ids; nothing here writes."""

    def __init__(self, ctx: Context, entities: EntityIndex, vocab: Vocabulary) -> None:
        self._ctx = ctx
        self._store = ctx.store
        self._entities = entities
        self._vocab = vocab
        self._lock = threading.Lock()
        self._views: dict[_Key, tuple[tuple[int, int], GraphView | None]] = {}
        self._renamed = 0  # moved when names change behind the views
        self.max_view_facts = MAX_VIEW_FACTS

    def forget(self) -> None:
        """Names changed (a merge, an erase, a rollback): views are read again."""
        with self._lock:
            self._renamed += 1
            self._views.clear()

    def entity_ids(self, ns: str, raw_names: Iterable[str]) -> dict[str, tuple[str, str]]:
        """{name key: (entity id, display name)} for the names that name a stored entity,
        from the name map the writes use (no query once the namespace is loaded)."""
        found = self._entities.prefetch(ns, names.check_strings(raw_names, field="names"))
        return {k: (i, self._entities.name_of(i)) for k, i in found.items()}

    def page(
        self,
        ns: str,
        search: str,
        *,
        type_predicate: str,
        note_predicate: str,
        offset: int,
        limit: int,
        relation_limit: int,
        note_limit: int,
        view: bool = True,
    ) -> GraphPage:
        """Entities whose name, type or a note contains `search` (case-insensitive; ""
        for all), best connected first, a page of them; the relations touching them
        (those inside the page first; for all, the graph's relation count is what the
        page leaves out of); at most `note_limit` notes an entity."""
        if not isinstance(search, str):
            raise ValidationError("search: expected a string", field="search")
        for value, name, low in (
            (offset, "offset", 0),
            (limit, "limit", 1),
            (relation_limit, "relation_limit", 0),
            (note_limit, "note_limit", 0),
        ):
            _count(value, name, low)
        needle = search.lower()
        now = self._ctx.now()
        held = self._view(ns, now, type_predicate, note_predicate) if view else None
        if held is not None:
            return held.page(needle, offset, limit, relation_limit, note_limit)
        kinds = {p.name: p.object_kind for p in self._vocab.all(ns)}
        own = (type_predicate, note_predicate)
        values = [p for p, k in kinds.items() if k == "value" and p not in own]
        pg = self._store.pages(ns, now, sorted(own))
        rows, total, ends = pg.entities(
            needle=needle,
            type_predicate=type_predicate,
            value_predicates=values,
            kinds=("", VALUE),
            offset=offset,
            limit=limit,
        )
        ids = [r["id"] for r in rows]
        types = pg.own_first(ids, type_predicate) if ids else {}
        counts = pg.own_counts(ids, note_predicate) if ids else {}
        said = pg.own_lists(ids, note_predicate, note_limit) if ids and counts else {}
        entities = [
            PageEntity(
                id=r["id"],
                name=r["name"],
                type=types.get(r["id"]) or r["kind"] or "",
                notes=said.get(r["id"], []),
            )
            for r in rows
        ]
        found, touching = pg.relations(ids, relation_limit) if ids else ([], 0)
        of = touching if needle else ends // 2
        return GraphPage(
            entities=entities,
            relations=[
                PageRelation(source=r["src"], target=r["dst"], predicate=r["type"]) for r in found
            ],
            omitted_entities=total - len(entities),
            omitted_relations=of - len(found),
            omitted_notes=sum(counts.values()) - sum(len(e.notes) for e in entities),
        )

    def nodes(
        self,
        ns: str,
        entity_ids: Iterable[str],
        *,
        type_predicate: str,
        note_predicate: str,
        view: bool = True,
    ) -> GraphPage:
        """These entities (by id, in this order; those not in the graph now left out),
        every note of theirs and every relation touching them."""
        order = names.check_strings(entity_ids, field="entity_ids")
        now = self._ctx.now()
        held = self._view(ns, now, type_predicate, note_predicate) if view else None
        if held is not None:
            return held.open(order)
        pg = self._store.pages(ns, now, sorted((type_predicate, note_predicate)))
        types = pg.own_first(order, type_predicate) if order else {}
        rest = [i for i in order if i not in types]
        present = set(types) | (pg.mentioned(rest) if rest else set())
        shown = [i for i in order if i in present]
        if not shown:
            return GraphPage()
        said = pg.own_lists(shown, note_predicate, _ALL)
        rows, _ = pg.relations(shown, _ALL)
        return GraphPage(
            entities=[
                PageEntity(
                    id=i,
                    name=self._entities.name_of(i),
                    type=types.get(i) or "",
                    notes=said.get(i, []),
                )
                for i in shown
            ],
            relations=[
                PageRelation(source=r["src"], target=r["dst"], predicate=r["type"]) for r in rows
            ],
        )

    def _view(
        self, ns: str, now: datetime, type_predicate: str, note_predicate: str
    ) -> GraphView | None:
        """The view as of `now`, read again when stale; None when the graph is too large."""
        key = (ns, type_predicate, note_predicate)
        with self._lock:
            stamp = (self._store.fact_generation, self._renamed)
            got = self._views.get(key)
        if got is not None and got[0] == stamp and (got[1] is None or got[1].current(now)):
            return got[1]
        # read outside the lock; a write meanwhile moves the stamp and the next call reads again
        facts, ents = self._store.pages(ns, now, sorted(key[1:])).believed()
        held = None
        if len(facts) <= self.max_view_facts:
            held = GraphView(
                facts, ents, now, type_predicate=type_predicate, note_predicate=note_predicate
            )
            held.mark_values({p.name for p in self._vocab.all(ns) if p.object_kind == "value"})
        with self._lock:
            self._views[key] = (stamp, held)
        return held
