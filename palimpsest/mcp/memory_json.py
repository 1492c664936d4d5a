"""The official MCP "memory" server's `memory.json`, in and out.

    >>> with open("memory.json") as f:
    ...     import_memory_json(mem, f)
    {'entities': 2, 'observations': 3, 'relations': 1, 'skipped': 0}

JSON Lines of entities and relations, mapped to facts as `memory_graph` says.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from .memory_graph import (
    _believed,
    _entity_item,
    _entity_triples,
    _key,
    _kinds,
    _relation_item,
    build_graph,
    ensure_vocabulary,
    relation_predicate,
)

if TYPE_CHECKING:
    from ..memory import Memory


def export_memory_json(mem: Memory, *, namespace: str | None = None) -> Iterator[str]:
    """The graph as of now as the official server's JSON Lines (one object per line, no newline).

    >>> with open("memory.json", "w") as f:
    ...     f.writelines(line + "\\n" for line in export_memory_json(mem))
    """
    graph = build_graph(_believed(mem, namespace), _kinds(mem, namespace))
    for e in graph["entities"]:
        yield _line({"type": "entity", **e})
    for r in graph["relations"]:
        yield _line({"type": "relation", **r})


def _line(obj: Mapping[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def import_memory_json(
    mem: Memory, lines: Iterable[str], *, namespace: str | None = None
) -> dict[str, int]:
    """Load the official server's memory.json (JSON Lines of entities and relations).

    >>> with open("memory.json") as f:
    ...     import_memory_json(mem, f)
    {'entities': 2, 'observations': 3, 'relations': 1, 'skipped': 0}

    Every line is checked before anything is written: a malformed one raises
    ValidationError naming its line number and nothing is stored. Entities and
    relations already in the graph are skipped (counted in `skipped`; an
    existing entity still gains the file's new observations); relation ends the
    file does not declare are created as untyped entities.
    """
    entities: list[dict[str, Any]] = []
    relations: list[tuple[str, str, str]] = []
    for number, raw in enumerate(lines, start=1):
        if not isinstance(raw, str):
            raise ValidationError(f"line {number}: expected text", line=number)
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise ValidationError(f"line {number}: not JSON", line=number) from None
        if not isinstance(obj, dict) or obj.get("type") not in ("entity", "relation"):
            raise ValidationError(
                f"line {number}: expected an object with type 'entity' or 'relation'", line=number
            )
        try:
            if obj["type"] == "entity":
                entities.append(_entity_item(obj, number))
            else:
                relations.append(_relation_item(obj, number))
        except ValidationError as err:
            raise ValidationError(f"line {number}: {err.message}", line=number) from None
    ensure_vocabulary(mem, namespace=namespace)
    skipped = 0
    merged: dict[str, dict[str, Any]] = {}
    for e in entities:  # a name listed twice: one entity, observations joined
        key = _key(e["name"])
        if key in merged:
            merged[key]["observations"] += e["observations"]
            skipped += 1
        else:
            merged[key] = {**e, "observations": list(e["observations"])}
    # one read of the graph instead of a lookup per line: files run to thousands of lines
    graph = build_graph(_believed(mem, namespace), _kinds(mem, namespace))
    present = {_key(e["name"]): e for e in graph["entities"]}
    new = 0
    triples: list[dict[str, Any]] = []
    for e in merged.values():
        have = present.get(_key(e["name"]))
        if have is None:
            new += 1
            triples += _entity_triples(e)
            continue
        skipped += 1  # already in the graph: its type stays, new observations join it
        known = {_key(o) for o in have["observations"]}
        triples += [t for t in _entity_triples(e)[1:] if _key(t["object"]) not in known]
    observations = len(triples) - new  # every new entity has one entity_type fact
    links = {(_key(r["from"]), r["relationType"], _key(r["to"])) for r in graph["relations"]}
    preds: dict[str, str] = {}
    for src, dst, rtype in relations:
        if rtype not in preds:
            preds[rtype] = relation_predicate(mem, rtype, namespace=namespace)
        link = (_key(src), preds[rtype], _key(dst))
        if link in links:
            skipped += 1
            continue
        links.add(link)
        triples.append({"subject": src, "predicate": preds[rtype], "object": dst})
    mem.assert_many(triples, namespace=namespace)  # one transaction: all of it or nothing
    return {
        "entities": new,
        "observations": observations,
        "relations": len(triples) - new - observations,
        "skipped": skipped,
    }
