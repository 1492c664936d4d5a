"""One scripted MCP session, run on the official memory server and on `palimpsest mcp`.

    >>> steps = session()                       # [(tool, arguments), ...]
    >>> results = anyio.run(run, official_params(cache, tmp), steps)
    >>> compare(tool, official_result, palimpsest_result)   # 'identical' | 'order' | ...

Used by `tests/test_mcp_compat.py` (step by step comparison) and `bench/mcp_compat.py`.
The official server is `@modelcontextprotocol/server-memory`, installed with npm into a
cache directory (`make mcp-peer`, or `install_official` on first use).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

OFFICIAL = "@modelcontextprotocol/server-memory@2026.8.31"
CACHE = Path(__file__).resolve().parents[1] / ".cache" / "mcp-peer"
Step = tuple[str, dict[str, Any]]

# The differences Palimpsest keeps on purpose, each with the reason a user would accept.
# A step of the session that shows one is marked with its key; every other step must
# come back identical to the official server's, or the same items in another order.
DIFFERENCES = {
    "case": "Entity names that differ only in case (or Unicode compatibility form) name "
    "one entity: the engine keys entities case-folded, so 'zed' is the Zed already known "
    "(and comes back as 'Zed', as first sent), and deleting 'zed' deletes 'Zed'. "
    "Observations and types are kept exactly as sent, case and line breaks included.",
    "not found": "Deletes say what matched nothing ('Deleted 0 of 1 entities. Not found: "
    "X') instead of always 'deleted successfully'.",
}


def install_official(cache: Path = CACHE) -> Path:
    """The official server's entry script, installed with npm into `cache` if missing."""
    script = (
        cache / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    )
    if script.exists():
        return script
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install the official memory server")
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund", "--no-save", OFFICIAL],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return script


def official_params(script: Path, workdir: Path) -> Any:
    from mcp import StdioServerParameters

    node = shutil.which("node") or "node"
    env = {"MEMORY_FILE_PATH": str(workdir / "memory.jsonl"), "PATH": os.environ["PATH"]}
    return StdioServerParameters(command=node, args=[str(script)], env=env)


def palimpsest_params(workdir: Path) -> Any:
    from mcp import StdioServerParameters

    exe = Path(sys.executable).parent / "palimpsest"
    command = str(exe) if exe.exists() else (shutil.which("palimpsest") or "palimpsest")
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PATH": os.environ["PATH"]}
    env["PALIMPSEST_OWNER_IDLE"] = "3"  # the owner `palimpsest mcp` starts leaves soon after
    if "PYTHONPATH" in os.environ:  # a checkout run ahead of the installed package
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command=command, args=["mcp", "--no-models", "--path", str(workdir / "mem")], env=env
    )


async def run(params: Any, steps: Sequence[Step], errlog: Path) -> list[dict[str, Any]]:
    """Each step's result: {"error": bool, "text": str, "data": structured content}."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    out: list[dict[str, Any]] = []
    with errlog.open("w") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for tool, arguments in steps:
                r = await session.call_tool(tool, arguments)
                text = r.content[0].text if r.content else ""
                out.append({"error": bool(r.is_error), "text": text, "data": r.structured_content})
    return out


# --- the session --------------------------------------------------------------------------
def _e(name: str, kind: str, *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": kind, "observations": list(obs)}


def _r(src: str, rel: str, dst: str) -> dict[str, str]:
    return {"from": src, "to": dst, "relationType": rel}


def session() -> tuple[list[Step], dict[int, str]]:
    """The scripted session (every behaviour issue 19's table names, and the ordinary
    ones) and the steps that show a deliberate difference: {step index: DIFFERENCES key}."""
    s: list[Step] = []
    marks: dict[int, str] = {}
    add = s.append

    def mark(reason: str, step: Step) -> None:
        marks[len(s)] = reason
        s.append(step)

    add(("read_graph", {}))
    add(("create_entities", {"entities": [_e("Mira", "person", "plays the cello")]}))
    add(("create_entities", {"entities": [_e("Acme", "company"), _e("Berlin", "city")]}))
    add(("create_entities", {"entities": [_e("Mira", "person", "again")]}))  # exists: skipped
    add(("read_graph", {}))
    add(("add_observations", {"observations": [{"entityName": "Mira", "contents": ["born 1990"]}]}))
    add(("add_observations", {"observations": [{"entityName": "Mira", "contents": ["born 1990"]}]}))
    add(("add_observations", {"observations": [{"entityName": "Nobody", "contents": ["x"]}]}))
    add(("open_nodes", {"names": ["Mira"]}))
    # relation types as sent, in any case and script
    types = ["works_at", "WORKS_AT", "works for", "married to", "is friends with", "visitó"]
    types += ["住んでいる", "knows", "Reports-To", "mentors"]
    add(("create_entities", {"entities": [_e("Theo", "person"), _e("Lena", "person")]}))
    for rel in types:
        add(("create_relations", {"relations": [_r("Mira", rel, "Theo")]}))
    add(("open_nodes", {"names": ["Mira"]}))
    add(("create_relations", {"relations": [_r("Mira", "knows", "Theo")]}))  # duplicate
    # a second works_at / lives_in is kept; two in one call both kept
    add(("create_relations", {"relations": [_r("Mira", "works_at", "Acme")]}))
    add(("create_relations", {"relations": [_r("Lena", "lives_in", "Berlin")]}))
    add(("create_entities", {"entities": [_e("Paris", "city"), _e("Initech", "company")]}))
    add(("create_relations", {"relations": [_r("Lena", "lives_in", "Paris")]}))
    add(
        (
            "create_relations",
            {"relations": [_r("Theo", "works_at", "Acme"), _r("Theo", "works_at", "Initech")]},
        )
    )
    add(("open_nodes", {"names": ["Lena", "Theo"]}))
    add(("search_nodes", {"query": "Initech"}))
    # a relation to an entity not created yet
    add(("create_relations", {"relations": [_r("Mira", "admires", "Ada Lovelace")]}))
    add(("open_nodes", {"names": ["Mira"]}))
    add(
        ("create_entities", {"entities": [_e("Ada Lovelace", "person", "wrote the first program")]})
    )
    add(("open_nodes", {"names": ["Ada Lovelace"]}))
    # empty entityType
    add(("create_entities", {"entities": [_e("Mystery", "", "no type given")]}))
    add(("open_nodes", {"names": ["Mystery"]}))
    add(("search_nodes", {"query": "no type"}))
    # observations: ordinary ones, several per call, unicode
    add(
        (
            "add_observations",
            {
                "observations": [
                    {"entityName": "Theo", "contents": ["likes jazz", "speaks Dutch"]},
                    {"entityName": "Lena", "contents": ["vegetarian"]},
                ]
            },
        )
    )
    add(("add_observations", {"observations": [{"entityName": "Lena", "contents": ["café ☕"]}]}))
    add(("open_nodes", {"names": ["Theo", "Lena"]}))
    # many entities: read_graph and search_nodes return every one
    for batch in range(3):
        ents = [
            _e(f"Item {batch * 25 + i:02d}", "widget", f"serial {batch}-{i}") for i in range(25)
        ]
        add(("create_entities", {"entities": ents}))
    rels = [_r(f"Item {i:02d}", "part_of", f"Item {i + 1:02d}") for i in range(60)]
    add(("create_relations", {"relations": rels[:30]}))
    add(("create_relations", {"relations": rels[30:]}))
    add(
        (
            "add_observations",
            {
                "observations": [
                    {"entityName": "Item 00", "contents": [f"note {i:02d}" for i in range(30)]}
                ]
            },
        )
    )
    add(("read_graph", {}))
    add(("search_nodes", {"query": "widget"}))
    add(("search_nodes", {"query": "serial 1-"}))
    add(("search_nodes", {"query": "item 0"}))
    add(("open_nodes", {"names": ["Item 00", "Item 01", "Nobody"]}))
    # search: case-insensitive substring of name, type, observation
    for q in ["mira", "PERSON", "cello", "jazz", "ber", "nothing matches", "1990", "café"]:
        add(("search_nodes", {"query": q}))
    # deletes
    add(
        (
            "delete_observations",
            {"deletions": [{"entityName": "Theo", "observations": ["likes jazz"]}]},
        )
    )
    add(("open_nodes", {"names": ["Theo"]}))
    mark(
        "not found",
        (
            "delete_observations",
            {"deletions": [{"entityName": "Theo", "observations": ["never said"]}]},
        ),
    )
    add(("delete_relations", {"relations": [_r("Mira", "knows", "Theo")]}))
    add(("delete_relations", {"relations": [_r("Mira", "WORKS_AT", "Theo")]}))
    add(("open_nodes", {"names": ["Mira"]}))
    mark("not found", ("delete_relations", {"relations": [_r("Mira", "hates", "Theo")]}))
    add(("delete_entities", {"entityNames": ["Item 59"]}))
    add(("open_nodes", {"names": ["Item 58", "Item 59"]}))
    add(("delete_entities", {"entityNames": ["Initech"]}))
    add(("open_nodes", {"names": ["Theo"]}))
    add(("search_nodes", {"query": "Initech"}))
    mark("not found", ("delete_entities", {"entityNames": ["Nobody"]}))
    # recreate after delete
    add(("create_entities", {"entities": [_e("Initech", "company", "back again")]}))
    add(("open_nodes", {"names": ["Initech"]}))
    # the behaviours the engine folds, so the test names them (see DIFFERENCES)
    add(("create_entities", {"entities": [_e("Zed", "person", "upper case")]}))
    mark("case", ("create_entities", {"entities": [_e("zed", "person", "lower case")]}))
    mark("case", ("open_nodes", {"names": ["zed", "Zed"]}))
    mark("case", ("delete_entities", {"entityNames": ["Zed", "zed"]}))
    add(("create_entities", {"entities": [_e("Casey", "person", "vegetarian")]}))
    # observations are kept as sent: case, length and line breaks
    add(
        (
            "add_observations",
            {"observations": [{"entityName": "Casey", "contents": ["Vegetarian"]}]},
        )
    )
    long = "A long note. " * 600
    add(("add_observations", {"observations": [{"entityName": "Casey", "contents": [long]}]}))
    add(
        (
            "add_observations",
            {
                "observations": [
                    {"entityName": "Casey", "contents": ["line one\nline two\tthen  two spaces"]}
                ]
            },
        )
    )
    add(("open_nodes", {"names": ["Casey"]}))
    add(("search_nodes", {"query": "LINE TWO"}))
    add(
        (
            "delete_observations",
            {"deletions": [{"entityName": "Casey", "observations": ["Vegetarian"]}]},
        )
    )
    add(("open_nodes", {"names": ["Casey"]}))
    add(("create_entities", {"entities": [_e("Quinn", "Person", "Likes TEA", "likes tea")]}))
    add(("search_nodes", {"query": "Quinn"}))
    add(("delete_entities", {"entityNames": ["Casey"]}))
    # a few more ordinary steps, to end on the whole graph
    for i in range(10):
        add(("create_entities", {"entities": [_e(f"Guest {i}", "person", f"guest number {i}")]}))
        add(("create_relations", {"relations": [_r(f"Guest {i}", "visited", "Berlin")]}))
    add(("open_nodes", {"names": ["Berlin"]}))
    add(("search_nodes", {"query": "guest"}))
    add(("delete_entities", {"entityNames": ["Guest 0", "Guest 1"]}))
    add(("search_nodes", {"query": "guest"}))
    add(("read_graph", {}))
    return s, marks


# --- comparing ----------------------------------------------------------------------------
def _body(result: dict[str, Any]) -> Any:
    """What a host model reads: the text, as JSON when it is JSON."""
    if result["error"]:
        return {"error": True}
    try:
        return json.loads(result["text"])
    except ValueError:
        return result["text"]


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_sorted(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _folded(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFKC", value).casefold().replace("_", " ").split())
    return value


def compare(tool: str, official: dict[str, Any], ours: dict[str, Any]) -> str:
    """'identical', 'order' (same items, other order), 'naming' (same apart from case, spaces
    and underscores) or 'different'."""
    a, b = _body(official), _body(ours)
    if a == b:
        return "identical"
    if _sorted(a) == _sorted(b):
        return "order"
    if _sorted(_folded(a)) == _sorted(_folded(b)):
        return "naming"
    return "different"
