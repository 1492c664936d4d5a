"""Snapshot and changes "as known at K", at every layer: the facade, HTTP, the
CLI (local, and routed through a running server) and MCP over stdio.

One memory is written at two transaction times: at K1 the user lives in Sydney; at
K2 that is corrected to Melbourne (same valid time, so Sydney is no longer
believed) and Mira's job at Acme is learned. Asked as known at K1 every layer must
answer Sydney alone; as known at K2 (or now), Melbourne and Acme. A layer that
drops `known_at` answers the K2 world both times and fails.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from palimpsest import Memory
from palimpsest.api import create_app

from .conftest import Clock
from .layers import mcp_session, mcp_tool, run_cli, served_memory

K1 = datetime(2025, 1, 1, tzinfo=UTC)
K2 = datetime(2025, 2, 1, tzinfo=UTC)
K1S, K2S = "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z"
V = "2024-09-01T00:00:00Z"  # valid time asked about
SINCE, UNTIL = "2024-05-01T00:00:00Z", "2024-12-01T00:00:00Z"
AT_K1 = {("user", "lives_in", "Sydney")}
AT_K2 = {("user", "lives_in", "Melbourne"), ("Mira", "works_at", "Acme")}


def build(path: Path) -> Path:
    """The two-belief memory (see the module docstring)."""
    clock = Clock(K1)
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
        clock.now = K2
        mem.assert_fact("user", "lives_in", "Melbourne", valid_from="2024-06-01T00:00:00Z")
        mem.assert_fact("Mira", "works_at", "Acme", valid_from="2024-07-01T00:00:00Z")
    return path


def triples(facts: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(f["subject"], f["predicate"], f["object"]) for f in facts}


def snap_triples(snap: dict[str, Any]) -> set[tuple[str, str, str]]:
    return triples([f for group in snap["entities"] for f in group["facts"]])


@pytest.fixture
def built(tmp_path: Path) -> Path:
    return build(tmp_path / "mem")


def test_facade(built: Path) -> None:
    with Memory.open(built, extractor=None, embedder=None) as mem:
        for k, want in ((K1, AT_K1), (K2, AT_K2), (None, AT_K2)):
            snap = mem.snapshot(valid_at=V, known_at=k).model_dump(mode="json")
            assert snap_triples(snap) == want, k
            ch = mem.changes(SINCE, UNTIL, known_at=k)
            assert triples([f.model_dump() for f in ch.started]) == want, k
            if k is not None:
                assert ch.known_at == k
        # a known_at before anything was written: nothing was believed yet
        early = mem.snapshot(valid_at=V, known_at="2024-12-31T00:00:00Z")
        assert early.entities == []


def test_http(built: Path) -> None:
    app = create_app(built, extractor=None, embedder=None)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        for k, want in ((K1S, AT_K1), (K2S, AT_K2)):
            r = c.get("/v1/snapshot", params={"valid_at": V, "known_at": k})
            assert r.status_code == 200, r.text
            assert snap_triples(r.json()) == want, k
            r = c.get("/v1/changes", params={"since": SINCE, "until": UNTIL, "known_at": k})
            assert r.status_code == 200, r.text
            assert triples(r.json()["started"]) == want, k
            assert r.json()["known_at"] == k


def test_cli(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for k, want in ((K1S, AT_K1), (K2S, AT_K2)):
        base = ("--path", str(built))
        code, out, err = run_cli(capsys, *base, "snapshot", "--valid-at", V, "--known-at", k,
                                 "--json")  # fmt: skip
        assert code == 0, err
        assert snap_triples(json.loads(out)) == want, k
        code, out, err = run_cli(capsys, *base, "changes", "--since", SINCE, "--until", UNTIL,
                                 "--known-at", k, "--json")  # fmt: skip
        assert code == 0, err
        assert triples(json.loads(out)["started"]) == want, k


def test_cli_through_a_running_server(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With `palimpsest serve` holding the memory the CLI reads through it
    (`api/remote.py`): the same answers as a local read, known_at included."""
    with served_memory(built):
        base = ("--path", str(built))
        for k, want in ((K1S, AT_K1), (K2S, AT_K2)):
            code, out, err = run_cli(capsys, *base, "snapshot", "--valid-at", V, "--known-at", k,
                                     "--json")  # fmt: skip
            assert code == 0, err
            assert snap_triples(json.loads(out)) == want, k
            code, out, err = run_cli(capsys, *base, "changes", "--since", SINCE, "--until",
                                     UNTIL, "--known-at", k, "--json")  # fmt: skip
            assert code == 0, err
            assert triples(json.loads(out)["started"]) == want, k
            # entity, predicates: routed reads the server answers
            code, out, err = run_cli(capsys, *base, "entity", "user", "--valid-at", V,
                                     "--known-at", k, "--json")  # fmt: skip
            assert code == 0, err
            objects = {f["object"] for f in json.loads(out)["outgoing"]}
            assert objects == {o for s, _, o in want if s == "user"}, k
        code, out, err = run_cli(capsys, *base, "predicates", "--json")
        assert code == 0, err
        names = {p["name"] for p in json.loads(out)}
        assert {"lives_in", "works_at"} <= names


def test_mcp(built: Path) -> None:
    async def body(session: Any) -> None:
        for k, want in ((K1S, AT_K1), (K2S, AT_K2)):
            snap = await mcp_tool(session, "snapshot", valid_at=V, known_at=k)
            assert snap_triples(snap) == want, k
            ch = await mcp_tool(session, "changes", since=SINCE, until=UNTIL, known_at=k)
            assert triples(ch["started"]) == want, k

    mcp_session(built, body, models=False)
