"""The official MCP "memory" server's reads, as of now: `read_graph`, `search_nodes`,
`open_nodes`.

    >>> read_graph(mem, limit=50)["entities"][0]["name"]
    'Mira'

Bounded (entities, relations, observations per entity), counting what they leave
out: the engine reads the page (`Memory.graph_page`, `Memory.graph_nodes`: the
type and observation predicates describe an entity, every other believed fact
relates two), from its view of the graph or a page at a time in Kùzu, never a
whole snapshot. The mapping is `memory_graph`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from .memory_graph import (
    ENTITY_TYPE,
    MAX_ENTITIES,
    MAX_OBSERVATIONS,
    MAX_RELATIONS,
    OBSERVATION,
    OBSERVATION_LIMIT,
    _key,
    _text,
    entity_ids,
    entity_type,
    relation_type,
)

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import GraphPage

_SHAPE = {"type_predicate": ENTITY_TYPE, "note_predicate": OBSERVATION}


def read_graph(
    mem: Memory,
    *,
    limit: int = MAX_ENTITIES,
    relation_limit: int = MAX_RELATIONS,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
) -> dict[str, Any]:
    """The graph as of now, bounded: a page of entities (best connected first), the
    relations touching them, and counts of what was left out."""
    return _page(mem, "", limit, relation_limit, offset, observation_limit, namespace)


def search_nodes(
    mem: Memory,
    query: str,
    *,
    limit: int = MAX_ENTITIES,
    relation_limit: int = MAX_RELATIONS,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
) -> dict[str, Any]:
    """Entities whose name, type or an observation contains `query` (case-insensitive),
    and the relations touching them; bounded like `read_graph`."""
    needle = _text(query, "query").lower()  # empty: everything, as the official server
    return _page(mem, needle, limit, relation_limit, offset, observation_limit, namespace)


def _page(
    mem: Memory,
    needle: str,
    limit: int,
    relation_limit: int,
    offset: int,
    observation_limit: int,
    namespace: str | None,
) -> dict[str, Any]:
    """A page of the believed graph in the official shape (the engine reads it)."""
    bounds = (
        ("limit", limit, 1, MAX_ENTITIES),
        ("relation_limit", relation_limit, 0, MAX_RELATIONS),
        ("offset", offset, 0, None),
        ("observation_limit", observation_limit, 0, MAX_OBSERVATIONS),
    )
    for field, value, low, high in bounds:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ValidationError(f"{field}: an integer >= {low}", field=field)
        if high is not None and value > high:
            raise ValidationError(f"{field}: at most {high}", field=field)
    page = mem.graph_page(
        needle,
        offset=offset,
        limit=limit,
        relation_limit=relation_limit,
        note_limit=observation_limit,
        namespace=namespace,
        **_SHAPE,
    )
    return _shaped(page, offset)


def _official(page: GraphPage) -> dict[str, Any]:
    return {
        "entities": [
            {"name": e.name, "entityType": entity_type(e.type), "observations": e.notes}
            for e in page.entities
        ],
        "relations": [
            {"from": r.source, "to": r.target, "relationType": relation_type(r.predicate)}
            for r in page.relations
        ],
    }


def _shaped(page: GraphPage, offset: int) -> dict[str, Any]:
    """The official shape when nothing was left out; else with `omitted` and a summary."""
    out = _official(page)
    left, cut, hidden = page.omitted_entities, page.omitted_relations, page.omitted_notes
    if not (left or cut or hidden):
        return out
    shown, rels = len(page.entities), len(page.relations)
    summary = (
        f"{shown} of {shown + left} entities (from {offset}), {rels} of {rels + cut} relations"
    )
    if hidden:
        summary += f", {hidden} observations left out (open_nodes shows them all)"
    if left or cut:
        summary += "; narrow with search_nodes or open_nodes, or page with offset"
    omitted = {"entities": left, "relations": cut, "observations": hidden}
    return {**out, "omitted": omitted, "summary": summary}


def open_nodes(
    mem: Memory, entity_names: Sequence[str], *, namespace: str | None = None
) -> dict[str, Any]:
    """The named entities and every relation touching them (names not in the graph are
    skipped), in a few reads for the whole list."""
    wanted = [_text(raw, "names") for raw in entity_names]
    found = entity_ids(mem, [n for n in wanted if n.strip()], namespace)
    order = list(dict.fromkeys(found[k][0] for n in wanted if (k := _key(n)) in found))
    if not order:
        return {"entities": [], "relations": []}
    return _official(mem.graph_nodes(order, namespace=namespace, **_SHAPE))
