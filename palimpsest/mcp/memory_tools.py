"""The MCP tools of the official "memory" server, over `memory_compat`.

    >>> register(server, mem, call)

Same names, input shapes and result shapes as `@modelcontextprotocol/server-memory`
(its text content too: the JSON of the result, or a sentence for deletes), so a
host model's prompts work unchanged. Registered by `palimpsest.mcp.server.build_server`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field
from typing_extensions import TypedDict

from . import memory_compat as compat
from .protocol import Result, Tools

if TYPE_CHECKING:
    from ..memory import Memory


class Entity(TypedDict):
    name: Annotated[str, Field(description="The name of the entity")]
    entityType: Annotated[str, Field(description="The type of the entity")]
    observations: Annotated[
        list[str],
        Field(description="An array of observation contents associated with the entity"),
    ]


Relation = TypedDict(
    "Relation",
    {
        "from": Annotated[
            str, Field(description="The name of the entity where the relation starts")
        ],
        "to": Annotated[str, Field(description="The name of the entity where the relation ends")],
        "relationType": Annotated[str, Field(description="The type of the relation")],
    },
)


class ObservationAddition(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity to add the observations to")
    ]
    contents: Annotated[list[str], Field(description="An array of observation contents to add")]


class ObservationDeletion(TypedDict):
    entityName: Annotated[
        str, Field(description="The name of the entity containing the observations")
    ]
    observations: Annotated[list[str], Field(description="An array of observations to delete")]


EntityLimit = Annotated[
    int,
    Field(
        ge=1,
        le=compat.MAX_ENTITIES,
        description=f"At most this many entities (max {compat.MAX_ENTITIES}).",
    ),
]
RelationLimit = Annotated[
    int,
    Field(
        ge=0,
        le=compat.MAX_RELATIONS,
        description=f"At most this many relations (max {compat.MAX_RELATIONS}).",
    ),
]
ObservationLimit = Annotated[
    int,
    Field(
        ge=0,
        le=compat.MAX_OBSERVATIONS,
        description=f"At most this many observations per entity (max {compat.MAX_OBSERVATIONS}).",
    ),
]
Offset = Annotated[int, Field(ge=0, description="Skip this many entities.")]


def ok(data: dict[str, Any], text: str | None = None) -> Result:
    """A successful result: `data` as structured content, `text` (default: its JSON) for reading."""
    return Result(text if text is not None else json.dumps(data, ensure_ascii=False), data)


def register(
    server: Tools,
    mem: Memory,
    call: Callable[..., Result],
) -> None:
    """The official memory server's tools (same names and input shapes). `call` runs a
    tool, turning engine errors into tool errors."""

    @server.tool()
    def create_entities(entities: list[Entity]) -> Result:
        """Create multiple new entities in the knowledge graph"""

        def run() -> Result:
            made = compat.create_entities(mem, [dict(e) for e in entities])
            return ok({"entities": made}, json.dumps(made, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool()
    def create_relations(relations: list[Relation]) -> Result:
        """Create multiple new relations between entities in the knowledge graph. Relations
        should be in active voice. Types are kept as sent; an end not in the graph yet is
        created (listed in createdEntities)."""

        def run() -> Result:
            created: list[str] = []
            made = compat.create_relations(mem, [dict(r) for r in relations], created=created)
            data: dict[str, Any] = {"relations": made}
            if created:  # not in the official shape: a host that reads it learns more
                data["createdEntities"] = created
            return ok(data, json.dumps(made, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool()
    def add_observations(observations: list[ObservationAddition]) -> Result:
        """Add new observations to existing entities in the knowledge graph"""

        def run() -> Result:
            added = compat.add_observations(mem, [dict(o) for o in observations])
            return ok({"results": added}, json.dumps(added, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool()
    def delete_entities(
        entityNames: Annotated[list[str], Field(description="An array of entity names to delete")],
    ) -> Result:
        """Delete multiple entities and their associated relations from the knowledge graph.
        (Palimpsest retracts them: gone from now on, kept in history; erase is the privacy
        verb.)"""

        def run() -> Result:
            r = compat.delete_entities(mem, entityNames)
            message = (
                "Entities deleted successfully"
                if not r["notFound"]
                else f"Deleted {len(r['deleted'])} of {len(entityNames)} entities. "
                f"Not found: {', '.join(r['notFound'])}"
            )
            return ok({"success": True, "message": message}, message)

        return call(run)

    @server.tool()
    def delete_observations(deletions: list[ObservationDeletion]) -> Result:
        """Delete specific observations from entities in the knowledge graph. (Palimpsest
        retracts them: gone from now on, kept in history.)"""

        def run() -> Result:
            r = compat.delete_observations(mem, [dict(d) for d in deletions])
            requested = sum(len(d["observations"]) for d in deletions)
            message = (
                "Observations deleted successfully"
                if r["deletedCount"] == requested
                else f"Deleted {r['deletedCount']} of {requested} observations."
                + (
                    f" Entities not found: {', '.join(r['missingEntities'])}"
                    if r["missingEntities"]
                    else ""
                )
            )
            return ok({"success": True, "message": message}, message)

        return call(run)

    @server.tool()
    def delete_relations(
        relations: Annotated[list[Relation], Field(description="An array of relations to delete")],
    ) -> Result:
        """Delete multiple relations from the knowledge graph. (Palimpsest retracts them: gone
        from now on, kept in history.)"""

        def run() -> Result:
            n = compat.delete_relations(mem, [dict(r) for r in relations])["deletedCount"]
            message = (
                "Relations deleted successfully"
                if n == len(relations)
                else f"Deleted {n} of {len(relations)} relations. The rest matched nothing."
            )
            return ok({"success": True, "message": message}, message)

        return call(run)

    @server.tool()
    def read_graph(
        limit: EntityLimit = compat.MAX_ENTITIES,
        relation_limit: RelationLimit = compat.MAX_RELATIONS,
        offset: Offset = 0,
        observation_limit: ObservationLimit = compat.OBSERVATION_LIMIT,
    ) -> Result:
        """Read the entire knowledge graph (as of now). Up to 10000 entities (limit: 10000
        at most), 50000 relations and 1000 observations per entity it is all of it; a larger
        graph comes back a page at a time, best connected first, with `omitted` counts and
        a `summary` (page with offset, or use search_nodes/open_nodes)."""
        return call(
            lambda: _graph(
                compat.read_graph(
                    mem,
                    limit=limit,
                    relation_limit=relation_limit,
                    offset=offset,
                    observation_limit=observation_limit,
                )
            ),
        )

    @server.tool()
    def search_nodes(
        query: Annotated[
            str,
            Field(
                max_length=2048,
                description="The search query to match against entity names, types, and "
                "observation content",
            ),
        ],
        limit: EntityLimit = compat.MAX_ENTITIES,
        offset: Offset = 0,
    ) -> Result:
        """Search for nodes in the knowledge graph based on a query: every entity whose
        name, type or an observation contains it (case-insensitive), and the relations
        touching them. Bounded like read_graph (10000 entities), beyond which it pages."""
        return call(
            lambda: _graph(compat.search_nodes(mem, query, limit=limit, offset=offset)),
        )

    @server.tool()
    def open_nodes(
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
    ) -> Result:
        """Open specific nodes in the knowledge graph by their names"""
        return call(lambda: _graph(compat.open_nodes(mem, names)))


def _graph(data: dict[str, Any]) -> Result:
    return ok(data, json.dumps(data, indent=2, ensure_ascii=False))
