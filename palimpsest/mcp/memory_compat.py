"""The official MCP "memory" server's knowledge graph, kept in a Palimpsest memory.

    >>> create_entities(mem, [{"name": "Mira", "entityType": "person",
    ...                        "observations": ["plays the cello"]},
    ...                       {"name": "Berlin", "entityType": "city", "observations": []}])
    >>> create_relations(mem, [{"from": "Mira", "to": "Berlin", "relationType": "lives_in"}])
    >>> read_graph(mem)["entities"][0]["observations"]
    ['plays the cello']

`@modelcontextprotocol/server-memory` keeps entities (name, entityType,
observations) and relations (from, to, relationType) in a JSON Lines file. Here
the same shapes are facts, so they gain valid and transaction time, history and
recall. The mapping (a contract: `palimpsest import --format mcp-memory` and the
MCP tools rely on it):

- an entity is a Palimpsest entity of that name; its entityType is the fact
  (name, `entity_type`, type), a `one`-valued predicate with value objects (the
  engine has no verb that sets `Entity.type`, so the type is knowledge like any
  other: re-typing supersedes, history keeps the old type). An empty entityType
  is stored as `EMPTY_TYPE` and reads back as "";
- an observation is the fact (name, `observation`, text), a `many`-valued
  predicate with value objects;
- a relation {from, to, relationType} is the fact (from, P, to) where P is a
  `many` predicate standing for exactly that relationType (`relation_predicate_name`:
  a snake_case type is its own name, any other is coded `rt_<base32>`), so types
  come back as sent and relations are additive, as in the official server. A
  snake_case type the vocabulary gives another meaning (`works_at`, one at a time)
  is coded too: the engine's own predicate keeps its cardinality;
- every delete is a retraction: gone from every view from now on, still in
  `history` and in views as known before. `erase` stays the privacy verb.

A relation may name an entity not in the graph yet (as in the official server):
it is created, untyped (entityType ""), and `create_relations` reports it. Reads
are as of now; `read_graph` and `search_nodes` return the whole graph (every
match) up to `MAX_ENTITIES` entities, `MAX_RELATIONS` relations and
`MAX_OBSERVATIONS` observations an entity, and page beyond that, counting what
they leave out; the store picks and cuts the page (`Store.pages`).
Differences a switcher may notice (listed with reasons in the README and in
`tests/mcp_session.py`): names, types and observations match case-insensitively
(the engine's entity keys fold case and spaces); an observation is one line of at
most 512 characters; deletes say what matched nothing.
"""

from __future__ import annotations

from .memory_graph import (
    COMPAT_PREDICATES,
    DEFAULT_TYPE,
    EMPTY_TYPE,
    ENTITY_TYPE,
    MAX_ENTITIES,
    MAX_OBSERVATIONS,
    MAX_RELATIONS,
    OBSERVATION,
    OBSERVATION_LIMIT,
    add_observations,
    build_graph,
    create_entities,
    create_relations,
    delete_entities,
    delete_observations,
    delete_relations,
    ensure_vocabulary,
    entity_type,
    relation_predicate,
    relation_predicate_name,
    relation_type,
)
from .memory_json import export_memory_json, import_memory_json
from .memory_reads import open_nodes, read_graph, search_nodes

__all__ = [
    "COMPAT_PREDICATES",
    "DEFAULT_TYPE",
    "EMPTY_TYPE",
    "ENTITY_TYPE",
    "MAX_ENTITIES",
    "MAX_OBSERVATIONS",
    "MAX_RELATIONS",
    "OBSERVATION",
    "OBSERVATION_LIMIT",
    "add_observations",
    "build_graph",
    "create_entities",
    "create_relations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "ensure_vocabulary",
    "entity_type",
    "export_memory_json",
    "import_memory_json",
    "open_nodes",
    "read_graph",
    "relation_predicate",
    "relation_predicate_name",
    "relation_type",
    "search_nodes",
]
