"""What `tools/list` says about each tool: title, hints, inline input and output schemas.

    >>> tools = Tools(describe=described)      # tools/list shows what this module adds
    >>> inline({"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A"})
    {'type': 'string'}

Some hosts do not resolve `$ref`, so every schema is listed inline. The official
memory server's tools carry its titles and hints; each tool has an output schema
(its structured content, checked by the client), loose where a result grows keys.
"""

from __future__ import annotations

from typing import Any

from ..models import ConsolidationReport, EntityProfile, Episode, Fact, Hit, Tombstone

Schema = dict[str, Any]


def inline(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """`schema` with every local `$ref` replaced by its definition and `$defs` dropped."""
    if isinstance(schema, dict):
        defs = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
            target = inline(defs[ref.rsplit("/", 1)[1]], defs)
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            return {**target, **inline(rest, defs)} if rest else target
        return {k: inline(v, defs) for k, v in schema.items() if k not in ("$defs", "definitions")}
    if isinstance(schema, list):
        return [inline(v, defs) for v in schema]
    return schema


def _obj(required: list[str] | None = None, **props: Any) -> Schema:
    out: Schema = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def _array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


def _model(model: Any) -> Schema:
    return inline(model.model_json_schema(mode="serialization"))  # type: ignore[no-any-return]


_STR = {"type": "string"}
_ENTITY = _obj(
    ["name", "entityType", "observations"],
    name=_STR,
    entityType=_STR,
    observations=_array(_STR),
)
_RELATION = _obj(["from", "to", "relationType"], **{"from": _STR, "to": _STR}, relationType=_STR)
_GRAPH = _obj(
    ["entities", "relations"],
    entities=_array(_ENTITY),
    relations=_array(_RELATION),
    omitted={
        "type": "object",
        "description": "Present only when the graph was larger than the bounds: "
        "how many entities, relations, observations were left out.",
    },
    summary=_STR,
)
_DELETED = _obj(["success", "message"], success={"type": "boolean"}, message=_STR)
_OBJECT = {"type": "object"}

# name: (title, readOnly, idempotent, destructive, output schema); factories, built lazily
_TOOLS: dict[str, tuple[str, bool, bool, bool, Any]] = {
    "create_entities": (
        "Create Entities",
        False,
        False,
        False,
        lambda: _obj(["entities"], entities=_array(_ENTITY)),
    ),
    "create_relations": (
        "Create Relations",
        False,
        False,
        False,
        lambda: _obj(["relations"], relations=_array(_RELATION), createdEntities=_array(_STR)),
    ),
    "add_observations": (
        "Add Observations",
        False,
        False,
        False,
        lambda: _obj(
            ["results"],
            results=_array(
                _obj(
                    ["entityName", "addedObservations"],
                    entityName=_STR,
                    addedObservations=_array(_STR),
                )
            ),
        ),
    ),
    "delete_entities": ("Delete Entities", False, True, True, lambda: _DELETED),
    "delete_observations": ("Delete Observations", False, True, True, lambda: _DELETED),
    "delete_relations": ("Delete Relations", False, True, True, lambda: _DELETED),
    "read_graph": ("Read Graph", True, True, False, lambda: _GRAPH),
    "search_nodes": ("Search Nodes", True, True, False, lambda: _GRAPH),
    "open_nodes": ("Open Nodes", True, True, False, lambda: _GRAPH),
    "remember": ("Remember", False, True, False, lambda: _model(Episode)),
    "assert_fact": ("Assert a Fact", False, False, False, lambda: _model(Fact)),
    "end_fact": ("End a Fact", False, False, False, lambda: _model(Fact)),
    "retract": ("Retract a Fact", False, True, True, lambda: _model(Fact)),
    "erase": (
        "Erase (privacy deletion)",
        False,
        True,
        True,
        lambda: _obj(["tombstones"], tombstones=_array(_model(Tombstone))),
    ),
    "facts": (
        "Facts as of a Time",
        True,
        True,
        False,
        lambda: _obj(
            ["facts", "truncated"], facts=_array(_model(Fact)), truncated={"type": "boolean"}
        ),
    ),
    "history": (
        "History",
        True,
        True,
        False,
        lambda: _obj(["facts", "omitted"], facts=_array(_model(Fact)), omitted={"type": "integer"}),
    ),
    "entity": ("Entity Profile", True, True, False, lambda: _model(EntityProfile)),
    "snapshot": (
        "Snapshot",
        True,
        True,
        False,
        lambda: _obj(
            ["entities", "total_facts", "omitted_facts"],
            entities=_array(_OBJECT),
            total_facts={"type": "integer"},
            omitted_facts={"type": "integer"},
        ),
    ),
    "changes": (
        "Changes",
        True,
        True,
        False,
        lambda: _obj(
            ["started", "ended", "learned", "revised", "omitted"],
            **{p: _array(_model(Fact)) for p in ("started", "ended", "learned", "revised")},
            omitted=_OBJECT,
        ),
    ),
    "recall": ("Recall", True, True, False, lambda: _obj(["hits"], hits=_array(_model(Hit)))),
    "consolidate": ("Consolidate", False, False, False, lambda: _model(ConsolidationReport)),
}


def hints(name: str) -> dict[str, Any]:
    """The hints a host reads before calling `name` (every tool is closed-world)."""
    title, read_only, idempotent, destructive, _ = _TOOLS[name]
    return {
        "title": title,
        "readOnlyHint": read_only,
        "idempotentHint": idempotent,
        "destructiveHint": destructive,
        "openWorldHint": False,
    }


def described(tool: dict[str, Any]) -> dict[str, Any]:
    """A `tools/list` entry with its title, hints and output schema, every schema inline."""
    out = {**tool, "inputSchema": inline(tool["inputSchema"])}
    known = _TOOLS.get(tool["name"])
    if known is not None:
        out.update(title=known[0], annotations=hints(tool["name"]), outputSchema=known[4]())
    return out
