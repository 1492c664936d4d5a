"""`palimpsest mcp` against the official MCP memory server, step by step.

Both servers are real subprocesses driven by the official MCP Python client over
stdio with one scripted session (`tests/mcp_session.py`); the official one,
`@modelcontextprotocol/server-memory`, is installed with npm into `.cache/mcp-peer`
on first use (`make mcp-peer` does the same). Every step must come back identical,
or the same items in another order, unless the session marks it with one of the
deliberate differences in `mcp_session.DIFFERENCES` (each with its reason).
"""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import anyio
import pytest

from . import mcp_session as ms


@pytest.fixture(scope="module")
def official() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are needed to run the official memory server (see Makefile)")
    return ms.install_official()


def test_session_matches_the_official_server(official: Path, tmp_path: Path) -> None:
    steps, marks = ms.session()
    assert len(steps) >= 100
    for where in ("o", "p"):
        (tmp_path / where).mkdir()
    theirs = anyio.run(
        ms.run, ms.official_params(official, tmp_path / "o"), steps, tmp_path / "o.log"
    )
    ours = anyio.run(ms.run, ms.palimpsest_params(tmp_path / "p"), steps, tmp_path / "p.log")
    assert len(theirs) == len(ours) == len(steps)

    verdicts = [ms.compare(t, a, b) for (t, _), a, b in zip(steps, theirs, ours, strict=True)]
    counts = collections.Counter(verdicts)
    print(f"\n{len(steps)} steps: {dict(counts)}")
    unexplained = [
        (i, steps[i][0], steps[i][1], theirs[i]["text"][:300], ours[i]["text"][:300])
        for i, v in enumerate(verdicts)
        if v not in ("identical", "order") and i not in marks
    ]
    assert unexplained == [], unexplained

    # the list of deliberate differences stays short, and every one of them is real
    assert set(marks.values()) <= set(ms.DIFFERENCES)
    assert len(ms.DIFFERENCES) <= 8
    shown = {marks[i] for i, v in enumerate(verdicts) if i in marks and v != "identical"}
    assert shown == set(ms.DIFFERENCES), set(ms.DIFFERENCES) - shown


def test_tool_metadata_matches_the_official_server(official: Path, tmp_path: Path) -> None:
    """Same tools, titles and hints; schemas inline (no $ref) with an output schema."""

    async def tools(params: object) -> dict[str, dict[str, object]]:
        from mcp import ClientSession
        from mcp.client.stdio import stdio_client

        with (tmp_path / "log").open("a") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = (await session.list_tools()).tools
                return {t.name: t.model_dump(mode="json", by_alias=True) for t in listed}

    for where in ("o", "p"):
        (tmp_path / where).mkdir()
    theirs = anyio.run(tools, ms.official_params(official, tmp_path / "o"))
    ours = anyio.run(tools, ms.palimpsest_params(tmp_path / "p"))
    assert set(theirs) <= set(ours)
    for name, tool in ours.items():
        text = str(tool["inputSchema"]) + str(tool.get("outputSchema"))
        assert "$ref" not in text and "$defs" not in text, name
        assert tool.get("outputSchema"), name
        assert tool.get("title"), name
        hints = tool.get("annotations") or {}
        for hint in ("readOnlyHint", "idempotentHint", "destructiveHint"):
            assert isinstance(hints.get(hint), bool), (name, hint)
    for name, tool in theirs.items():
        assert ours[name]["title"] == tool["title"], name
        for hint in ("readOnlyHint", "idempotentHint", "destructiveHint"):
            assert ours[name]["annotations"][hint] == tool["annotations"][hint], (name, hint)
        wanted = set(tool["inputSchema"].get("required", []))
        assert set(ours[name]["inputSchema"].get("required", [])) == wanted, name
