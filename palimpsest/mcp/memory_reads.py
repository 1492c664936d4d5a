"""The official MCP "memory" server's reads, as of now: `read_graph`, `search_nodes`,
`open_nodes`.

    >>> read_graph(mem, limit=50)["entities"][0]["name"]
    'Mira'

Bounded (entities, relations, observations per entity), counting what they leave
out, and reading only their page: the store picks and cuts it
(`graph._transfer.GraphPages`), never a whole snapshot. The mapping is
`memory_graph`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from .memory_graph import (
    COMPAT_PREDICATES,
    DEFAULT_TYPE,
    ENTITY_TYPE,
    MAX_ENTITIES,
    MAX_OBSERVATIONS,
    MAX_RELATIONS,
    OBSERVATION,
    OBSERVATION_LIMIT,
    _key,
    _kinds,
    _profile_facts,
    _text,
    build_graph,
)

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import Fact


def read_graph(
    mem: Memory,
    *,
    limit: int = 50,
    relation_limit: int = 100,
    offset: int = 0,
    observation_limit: int = OBSERVATION_LIMIT,
    namespace: str | None = None,
) -> dict[str, Any]:
    """The graph as of now, bounded: a page of entities (best connected first), the
    relations touching them, and counts of what was left out. Only the page is read."""
    return _page(mem, "", limit, relation_limit, offset, observation_limit, namespace)


def search_nodes(
    mem: Memory,
    query: str,
    *,
    limit: int = 50,
    relation_limit: int = 100,
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
    """A page of the believed graph, chosen and cut by the store (see `GraphPages`)."""
    from ..graph._transfer import GraphPages

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
    kinds = _kinds(mem, namespace)
    values = [p for p, k in kinds.items() if k == "value" and p not in COMPAT_PREDICATES]
    pages = GraphPages(mem._store, mem._ns(namespace), mem.now(), sorted(COMPAT_PREDICATES))
    rows, total, ends = pages.entities(
        needle=needle,
        type_predicate=ENTITY_TYPE,
        value_predicates=values,
        kinds=(DEFAULT_TYPE, "value"),
        offset=offset,
        limit=limit,
    )
    ids = [r["id"] for r in rows]
    types = pages.own_first(ids, ENTITY_TYPE) if ids else {}
    counts = pages.own_counts(ids, OBSERVATION) if ids else {}
    entities = [
        {
            "name": r["name"],
            "entityType": types.get(r["id"], r["kind"]),
            "observations": pages.own(r["id"], OBSERVATION, observation_limit)
            if counts.get(r["id"]) and observation_limit
            else [],
        }
        for r in rows
    ]
    found, touching = pages.relations(ids, relation_limit) if ids else ([], 0)
    relations = [{"from": r["src"], "to": r["dst"], "relationType": r["type"]} for r in found]
    # the whole graph's relations for read_graph; for a search, those touching the page
    of = touching if needle else ends // 2
    hidden = sum(counts.values()) - sum(len(e["observations"]) for e in entities)
    summary = (
        f"{len(entities)} of {total} entities (from {offset}), {len(relations)} of {of} relations"
    )
    if hidden:
        summary += f", {hidden} observations left out (open_nodes shows them all)"
    if total - len(entities) or of - len(relations):
        summary += "; narrow with search_nodes or open_nodes, or page with offset"
    return {
        "entities": entities,
        "relations": relations,
        "omitted": {
            "entities": total - len(entities),
            "relations": of - len(relations),
            "observations": hidden,
        },
        "summary": summary,
    }


def open_nodes(
    mem: Memory, entity_names: Sequence[str], *, namespace: str | None = None
) -> dict[str, Any]:
    """The named entities and every relation touching them (names not in the graph are skipped)."""
    kinds = _kinds(mem, namespace)
    facts: dict[str, Fact] = {}
    wanted: set[str] = set()
    for raw in entity_names:
        name = _text(raw, "names")
        found = _profile_facts(mem, name, namespace) if name.strip() else None
        if found is None:
            continue
        wanted.add(_key(name))
        facts.update((f.version_id or f.id, f) for f in found)
    graph = build_graph(facts.values(), kinds)
    return {
        "entities": [e for e in graph["entities"] if _key(e["name"]) in wanted],
        "relations": graph["relations"],
    }
