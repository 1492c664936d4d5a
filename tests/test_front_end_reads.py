"""What the other front-end tests leave out: `recall(valid_at=)` over HTTP, the CLI
`recall` command (local, and routed through a running server), MCP with its models
(`remember` extracts, `recall` embeds) and a real (not dry-run) `consolidate` over
MCP, and `consolidate(full=True)` doing work an incremental run skips.

Two episodes about Tofu the cat, one in March 2024 and one in January 2025: asked
as of mid-2024 only the first has happened, so a layer that drops `valid_at`
returns both and fails.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from palimpsest import Memory
from palimpsest.api import create_app

from .conftest import Clock
from .layers import mcp_session, mcp_tool, run_cli, served_memory

EARLY = "I adopted a kitten called Tofu from the shelter."
LATE = "Tofu the cat knocked the whole Christmas tree over."
MID_2024 = "2024-06-01T00:00:00Z"
QUERY = "what did Tofu the cat do"


def build(path: Path) -> Path:
    clock = Clock(datetime(2025, 2, 1, tzinfo=UTC))
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        mem.remember(EARLY, occurred_at="2024-03-01T10:00:00Z", session="a")
        clock.tick()
        mem.remember(LATE, occurred_at="2025-01-20T10:00:00Z", session="b")
    return path


def episode_texts(hits: list[dict[str, Any]]) -> set[str]:
    return {h["text"] for h in hits if h["kind"] == "episode"}


@pytest.fixture
def built(tmp_path: Path) -> Path:
    return build(tmp_path / "mem")


def test_recall_valid_at_over_http(built: Path) -> None:
    app = create_app(built, extractor=None, embedder=None)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        r = c.get("/v1/recall", params={"query": QUERY, "min_score": 0})
        assert r.status_code == 200, r.text
        assert episode_texts(r.json()) == {EARLY, LATE}
        r = c.get("/v1/recall", params={"query": QUERY, "min_score": 0, "valid_at": MID_2024})
        assert r.status_code == 200, r.text
        assert episode_texts(r.json()) == {EARLY}
        # known_at before the second episode was recorded: it is not known yet
        r = c.get("/v1/recall", params={"query": QUERY, "min_score": 0,
                                        "known_at": "2025-02-01T00:00:00Z"})  # fmt: skip
        assert episode_texts(r.json()) == {EARLY}


@pytest.mark.models
def test_cli_recall(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`palimpsest recall` with the models as shipped (MiniLM embeds the query)."""
    base = ("--path", str(built), "recall", QUERY, "--min-score", "0")
    code, out, err = run_cli(capsys, *base, "--json")
    assert code == 0, err
    hits = json.loads(out)
    assert episode_texts(hits) == {EARLY, LATE}
    assert all(h["channels"]["dense"] != 0 for h in hits)  # the model ran
    code, out, err = run_cli(capsys, *base, "--valid-at", MID_2024, "--json")
    assert code == 0, err
    assert episode_texts(json.loads(out)) == {EARLY}
    code, out, err = run_cli(capsys, *base, "-k", "1")  # the text form
    assert code == 0, err
    assert out.count("\n") == 1 and "episode" in out and "Tofu" in out


@pytest.mark.models
def test_cli_recall_through_a_running_server(
    built: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with served_memory(built):
        base = ("--path", str(built), "recall", QUERY, "--min-score", "0", "--json")
        code, out, err = run_cli(capsys, *base)
        assert code == 0, err
        assert episode_texts(json.loads(out)) == {EARLY, LATE}
        code, out, err = run_cli(capsys, *base, "--valid-at", MID_2024)
        assert code == 0, err
        assert episode_texts(json.loads(out)) == {EARLY}
        # still the server's: a local open would be refused (memory_locked), so a write
        # that succeeds went through it (issue 19: CLI writes go through a running server)
        code, _, err = run_cli(capsys, "--path", str(built), "assert", "user", "likes", "tea")
        assert code == 0, err
        code, out, err = run_cli(capsys, "--path", str(built), "recall", "tea", "--json")
        assert code == 0 and "tea" in out, err


@pytest.mark.models
def test_mcp_with_models_remembers_recalls_and_consolidates(tmp_path: Path) -> None:
    async def body(session: Any) -> None:
        ep = await mcp_tool(
            session, "remember", text="I moved to Lisbon in March 2024.",
            occurred_at="2024-04-02T09:00:00Z",
        )  # fmt: skip
        # spaCy read the fact out of the text (with --no-models nothing is extracted)
        assert ("lives_in", "Lisbon") in {(f["predicate"], f["object"]) for f in ep["facts"]}
        hits = (await mcp_tool(session, "recall", query="which city did I move to?"))["hits"]
        assert hits, "nothing recalled"
        episodes = [h for h in hits if h["kind"] == "episode"]
        assert episodes and episodes[0]["channels"]["dense"] > 0  # MiniLM embedded both
        assert any(h["kind"] == "fact" and "Lisbon" in h["text"] for h in hits)

        # a real nightly run over MCP: the user's correction is reconciled and kept
        for age in ("40", "41"):
            await mcp_tool(session, "assert_fact", subject="user", predicate="age",
                           object=age, valid_from="2024-01-01T00:00:00Z")  # fmt: skip
        report = await mcp_tool(session, "consolidate")
        assert report["dry_run"] is False
        assert report["counts"].get("reconciled") == 1, report
        ages = await mcp_tool(session, "facts", subject="user", predicate="age")
        assert [f["object"] for f in ages["facts"]] == ["41"]
        again = await mcp_tool(session, "consolidate")
        assert again["changes"] == []  # settled: the run wrote its decision

    mcp_session(tmp_path / "mem", body, models=True, timeout=600)


def test_full_consolidation_does_what_the_watermark_skips(tmp_path: Path, clock: Clock) -> None:
    """A conflict older than the watermark (marked done by an earlier run, or by a
    version that did not look at it) is skipped by an incremental run; `full=True`
    looks at everything again and reconciles it."""
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
        clock.tick()
        mem.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
        clock.tick()
        with mem._store.write():  # the watermark past both claims
            mem._store.consolidation.set_watermark("default", clock.now)
        clock.tick()
        assert mem.consolidate().changes == []  # incremental: nothing changed since
        clock.tick()
        full = mem.consolidate(full=True)
        assert full.since is None and full.counts == {"reconciled": 1}
        assert "41 wins" in full.changes[0].reason
        assert [f.object for f in mem.facts("user", "age")] == ["41"]
        clock.tick(days=1)
        assert mem.consolidate(full=True).changes == []  # and then it is settled


def test_full_consolidation_agrees_with_a_first_run(tmp_path: Path, clock: Clock) -> None:
    """On a memory never consolidated, a full run and an incremental one decide the
    same (the watermark is absent either way)."""
    reports = []
    for name, full in (("a", False), ("b", True)):
        c = Clock(clock.now)
        with Memory.open(tmp_path / name, clock=c, extractor=None, embedder=None) as mem:
            mem.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
            c.tick()
            mem.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
            c.now += timedelta(minutes=1)
            reports.append(mem.consolidate(full=full))
    assert reports[0].counts == reports[1].counts == {"reconciled": 1}
