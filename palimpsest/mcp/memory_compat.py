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
  other: re-typing supersedes, history keeps the old type);
- an observation is the fact (name, `observation`, text), a `many`-valued
  predicate with value objects;
- a relation {from, to, relationType} is the fact (from, relationType, to). A
  relationType the vocabulary knows (by name or alias) keeps its meaning and
  cardinality: "works at" is `works_at`, one employer at a time, so a newer one
  supersedes the older. Any other becomes a `many` predicate named after it in
  snake_case ("is friends with" -> `is_friends_with`);
- every delete is a retraction: gone from every view from now on, still in
  `history` and in views as known before. `erase` stays the privacy verb.

As in the official server, relations and observations need their entities in
the graph (`import_memory_json` creates missing relation ends). Reads are as of
now; `read_graph` and `search_nodes` are bounded (entities, relations, observations
per entity), count what they leave out, and read only their page: the store picks
and cuts it (`graph._transfer.GraphPages`), never a whole snapshot.
Differences a switcher may notice: names match case-insensitively (the engine's
entity keys fold case and spaces), relation types come back as predicate names,
observations are single lines of at most 512 characters (listed in recording
order, alphabetically within one call), and an entity exists while some fact
mentions it.
"""

from __future__ import annotations

from .memory_graph import (
    COMPAT_PREDICATES,
    DEFAULT_TYPE,
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
    relation_predicate,
    relation_predicate_name,
)
from .memory_json import export_memory_json, import_memory_json
from .memory_reads import open_nodes, read_graph, search_nodes

__all__ = [
    "COMPAT_PREDICATES",
    "DEFAULT_TYPE",
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
    "export_memory_json",
    "import_memory_json",
    "open_nodes",
    "read_graph",
    "relation_predicate",
    "relation_predicate_name",
    "search_nodes",
]
