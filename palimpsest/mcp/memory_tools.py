"""The MCP tools of the official "memory" server, over `memory_compat`.

    >>> register(server, mem, call, read=read, write=write, retracting=retracting)

Same names, input shapes and result shapes as `@modelcontextprotocol/server-memory`
(its text content too: the JSON of the result, or a sentence for deletes), so a
host model's prompts work unchanged. Registered by `palimpsest.mcp.server.build_server`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field
from typing_extensions import TypedDict

from . import memory_compat as compat

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
    Field(ge=1, le=compat.MAX_ENTITIES, description="At most this many entities (max 500)."),
]
RelationLimit = Annotated[
    int,
    Field(ge=0, le=compat.MAX_RELATIONS, description="At most this many relations (max 1000)."),
]
ObservationLimit = Annotated[
    int,
    Field(
        ge=0,
        le=compat.MAX_OBSERVATIONS,
        description="At most this many observations per entity (max 100).",
    ),
]
Offset = Annotated[int, Field(ge=0, description="Skip this many entities.")]


def ok(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    """A successful result: `data` as structured content, `text` (default: its JSON) for reading."""
    body = text if text is not None else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=data)


def register(
    server: MCPServer[Any],
    mem: Memory,
    call: Callable[[Callable[[], CallToolResult]], CallToolResult],
    *,
    read: ToolAnnotations,
    write: ToolAnnotations,
    retracting: ToolAnnotations,
) -> None:
    """The official memory server's tools (same names and input shapes)."""

    @server.tool(annotations=write)
    def create_entities(entities: list[Entity]) -> CallToolResult:
        """Create multiple new entities in the knowledge graph"""

        def run() -> CallToolResult:
            made = compat.create_entities(mem, [dict(e) for e in entities])
            return ok({"entities": made}, json.dumps(made, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool(annotations=write)
    def create_relations(relations: list[Relation]) -> CallToolResult:
        """Create multiple new relations between entities in the knowledge graph. Relations
        should be in active voice"""

        def run() -> CallToolResult:
            made = compat.create_relations(mem, [dict(r) for r in relations])
            return ok({"relations": made}, json.dumps(made, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool(annotations=write)
    def add_observations(observations: list[ObservationAddition]) -> CallToolResult:
        """Add new observations to existing entities in the knowledge graph"""

        def run() -> CallToolResult:
            added = compat.add_observations(mem, [dict(o) for o in observations])
            return ok({"results": added}, json.dumps(added, indent=2, ensure_ascii=False))

        return call(run)

    @server.tool(annotations=retracting)
    def delete_entities(
        entityNames: Annotated[list[str], Field(description="An array of entity names to delete")],
    ) -> CallToolResult:
        """Delete multiple entities and their associated relations from the knowledge graph.
        (Palimpsest retracts them: gone from now on, kept in history; erase is the privacy
        verb.)"""

        def run() -> CallToolResult:
            r = compat.delete_entities(mem, entityNames)
            message = (
                "Entities deleted successfully"
                if not r["notFound"]
                else f"Deleted {len(r['deleted'])} of {len(entityNames)} entities. "
                f"Not found: {', '.join(r['notFound'])}"
            )
            return ok({"success": True, "message": message}, message)

        return call(run)

    @server.tool(annotations=retracting)
    def delete_observations(deletions: list[ObservationDeletion]) -> CallToolResult:
        """Delete specific observations from entities in the knowledge graph. (Palimpsest
        retracts them: gone from now on, kept in history.)"""

        def run() -> CallToolResult:
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

    @server.tool(annotations=retracting)
    def delete_relations(
        relations: Annotated[list[Relation], Field(description="An array of relations to delete")],
    ) -> CallToolResult:
        """Delete multiple relations from the knowledge graph. (Palimpsest retracts them: gone
        from now on, kept in history.)"""

        def run() -> CallToolResult:
            n = compat.delete_relations(mem, [dict(r) for r in relations])["deletedCount"]
            message = (
                "Relations deleted successfully"
                if n == len(relations)
                else f"Deleted {n} of {len(relations)} relations. The rest matched nothing."
            )
            return ok({"success": True, "message": message}, message)

        return call(run)

    @server.tool(annotations=read)
    def read_graph(
        limit: EntityLimit = 50,
        relation_limit: RelationLimit = 100,
        offset: Offset = 0,
        observation_limit: ObservationLimit = compat.OBSERVATION_LIMIT,
    ) -> CallToolResult:
        """Read the knowledge graph as of now, one bounded page: the best-connected
        entities first (at most 50 by default, 500 at most), the relations touching them
        (100; 1000 at most), 20 observations per entity (100 at most), with counts of what
        was left out and a summary. Page with offset, or use search_nodes/open_nodes."""
        return call(
            lambda: _graph(
                compat.read_graph(
                    mem,
                    limit=limit,
                    relation_limit=relation_limit,
                    offset=offset,
                    observation_limit=observation_limit,
                )
            )
        )

    @server.tool(annotations=read)
    def search_nodes(
        query: Annotated[
            str,
            Field(
                max_length=2048,
                description="The search query to match against entity names, types, and "
                "observation content",
            ),
        ],
        limit: EntityLimit = 50,
        offset: Offset = 0,
    ) -> CallToolResult:
        """Search for nodes in the knowledge graph based on a query (case-insensitive
        substring of a name, type or observation). Bounded like read_graph: at most `limit`
        entities (50; 500 at most), best connected first, with counts of what was left out."""
        return call(lambda: _graph(compat.search_nodes(mem, query, limit=limit, offset=offset)))

    @server.tool(annotations=read)
    def open_nodes(
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
    ) -> CallToolResult:
        """Open specific nodes in the knowledge graph by their names"""
        return call(lambda: _graph(compat.open_nodes(mem, names)))


def _graph(data: dict[str, Any]) -> CallToolResult:
    return ok(data, json.dumps(data, indent=2, ensure_ascii=False))
