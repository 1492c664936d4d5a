"""The official MCP "memory" server's reads, as of now: `read_graph`, `search_nodes`,
`open_nodes`.

    >>> read_graph(mem, limit=50)["entities"][0]["name"]
    'Mira'

Bounded (entities, relations, observations per entity), counting what they leave
out, and reading only their page: the store picks and cuts it
(`Store.pages`), never a whole snapshot. The mapping is
`memory_graph`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from .memory_graph import (
    COMPAT_PREDICATES,
    ENTITY_TYPE,
    MAX_ENTITIES,
    MAX_OBSERVATIONS,
    MAX_RELATIONS,
    OBSERVATION,
    OBSERVATION_LIMIT,
    UNTYPED,
    _key,
    _kinds,
    _text,
    entity_ids,
    entity_type,
    pages,
    present_entities,
    relation_type,
)

_ALL = 1 << 31  # open_nodes shows everything about the entities it is asked for

if TYPE_CHECKING:
    from ..memory import Memory
    from .memory_view import Views


def read_graph(
    mem: Memory,
    *,
    limit: int = MAX_ENTITIES,
    relation_limit: int = MAX_RELATIONS,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
    views: Views | None = None,
) -> dict[str, Any]:
    """The graph as of now, bounded: a page of entities (best connected first), the
    relations touching them, and counts of what was left out. Only the page is read
    (or it comes from `views`, the served memory's view of the graph)."""
    return _page(mem, "", limit, relation_limit, offset, observation_limit, namespace, views)


def search_nodes(
    mem: Memory,
    query: str,
    *,
    limit: int = MAX_ENTITIES,
    relation_limit: int = MAX_RELATIONS,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
    views: Views | None = None,
) -> dict[str, Any]:
    """Entities whose name, type or an observation contains `query` (case-insensitive),
    and the relations touching them; bounded like `read_graph`."""
    needle = _text(query, "query").lower()  # empty: everything, as the official server
    return _page(mem, needle, limit, relation_limit, offset, observation_limit, namespace, views)


def _page(
    mem: Memory,
    needle: str,
    limit: int,
    relation_limit: int,
    offset: int,
    observation_limit: int,
    namespace: str | None,
    views: Views | None = None,
) -> dict[str, Any]:
    """A page of the believed graph, chosen and cut by the store (see `GraphPages`), or
    by the view of the graph in `views`."""
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
    view = views.get(mem, namespace) if views is not None else None
    if view is not None:
        got = view.page(needle, offset, limit, relation_limit, observation_limit)
        return _shaped(got["entities"], got["relations"], got["omitted"], offset)
    kinds = _kinds(mem, namespace)
    values = [p for p, k in kinds.items() if k == "value" and p not in COMPAT_PREDICATES]
    pg = pages(mem, namespace)
    rows, total, ends = pg.entities(
        needle=needle,
        type_predicate=ENTITY_TYPE,
        value_predicates=values,
        kinds=(UNTYPED, "value"),
        offset=offset,
        limit=limit,
    )
    ids = [r["id"] for r in rows]
    types = pg.own_first(ids, ENTITY_TYPE) if ids else {}
    counts = pg.own_counts(ids, OBSERVATION) if ids else {}
    said = pg.own_lists(ids, OBSERVATION, observation_limit) if ids and counts else {}
    entities = [
        {
            "name": r["name"],
            "entityType": entity_type(types.get(r["id"]) or r["kind"] or ""),
            "observations": said.get(r["id"], []),
        }
        for r in rows
    ]
    found, touching = pg.relations(ids, relation_limit) if ids else ([], 0)
    relations = [
        {"from": r["src"], "to": r["dst"], "relationType": relation_type(r["type"])} for r in found
    ]
    # the whole graph's relations for read_graph; for a search, those touching the page
    of = touching if needle else ends // 2
    hidden = sum(counts.values()) - sum(len(e["observations"]) for e in entities)
    omitted = {
        "entities": total - len(entities),
        "relations": of - len(relations),
        "observations": hidden,
    }
    return _shaped(entities, relations, omitted, offset)


def _shaped(
    entities: list[dict[str, Any]],
    relations: list[dict[str, str]],
    omitted: dict[str, int],
    offset: int,
) -> dict[str, Any]:
    """The official shape when nothing was left out; else with `omitted` and a summary."""
    if not any(omitted.values()):
        return {"entities": entities, "relations": relations}
    left, cut, hidden = omitted["entities"], omitted["relations"], omitted["observations"]
    summary = (
        f"{len(entities)} of {len(entities) + left} entities (from {offset}),"
        f" {len(relations)} of {len(relations) + cut} relations"
    )
    if hidden:
        summary += f", {hidden} observations left out (open_nodes shows them all)"
    if left or cut:
        summary += "; narrow with search_nodes or open_nodes, or page with offset"
    return {"entities": entities, "relations": relations, "omitted": omitted, "summary": summary}


def open_nodes(
    mem: Memory,
    entity_names: Sequence[str],
    *,
    namespace: str | None = None,
    views: Views | None = None,
) -> dict[str, Any]:
    """The named entities and every relation touching them (names not in the graph are
    skipped), in a few reads for the whole list."""
    wanted = [_text(raw, "names") for raw in entity_names]
    pg = pages(mem, namespace)
    found = entity_ids(mem, [n for n in wanted if n.strip()], namespace)
    order = list(dict.fromkeys(found[k] for n in wanted if (k := _key(n)) in found))
    view = views.get(mem, namespace) if views is not None else None
    if view is not None:
        return view.open([i for i, _ in order])
    types = pg.own_first([i for i, _ in order], ENTITY_TYPE) if order else {}
    present = present_entities(pg, (i for i, _ in order), set(types))
    shown = [(i, name) for i, name in order if i in present]
    ids = [i for i, _ in shown]
    if not ids:
        return {"entities": [], "relations": []}
    said = pg.own_lists(ids, OBSERVATION, _ALL)
    rows, _ = pg.relations(ids, _ALL)
    return {
        "entities": [
            {
                "name": name,
                "entityType": entity_type(types.get(i) or UNTYPED),
                "observations": said.get(i, []),
            }
            for i, name in shown
        ],
        "relations": [
            {"from": r["src"], "to": r["dst"], "relationType": relation_type(r["type"])}
            for r in rows
        ],
    }
