"""Crash safety: a consolidation SIGKILLed at random moments, several times over, then run
to the end, leaves the memory exactly as one uninterrupted run does."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest import Memory

from .conftest import Clock

V = "2025-01-01T00:00:00Z"
# The child reports each point its run reaches (the runner's hook: between steps and
# merges), so the parent kills it once it has reached the point it picked: either
# paused there (the kill lands between two writes) or running on (it lands in the
# next step's work). The pause and the reports live here only.
CHILD = """
import os, sys, time
from palimpsest import Memory

stop_at = int(os.environ.get("CONSOLIDATE_PAUSE_AT", "0"))  # 0: never pause
reached = 0

def hook(step):
    global reached
    reached += 1
    print("at", step, flush=True)
    if reached == stop_at:
        time.sleep(600)  # the parent kills it here

with Memory.open(sys.argv[1], embedder=None, extractor=None) as m:
    m._consolidation.hook = hook
    print("open", flush=True)
    print("done", m.consolidate().summary, flush=True)
"""


def build(path: Path) -> None:
    clock = Clock(datetime.now(UTC) - timedelta(days=400))
    with Memory.open(path, clock=clock, embedder=None, extractor=None) as m:
        note = "Meeting notes: the launch moved to the fourteenth of March."
        for session in ("a", "b", "c"):
            m.remember(note, speaker="Sam", session=session)
        m.remember("The weather was grey all day.", importance=0.2, session="a")
        m.assert_fact("my sister", "lives_in", "Auckland", valid_from="2024-01-01T00:00:00Z")
        m.assert_fact("user", "sibling", "Mira", valid_from=None)
        for i in range(6):
            m.assert_fact(f"Café Nº{i}", "located_in", "Lisbon", valid_from=None)
            m.assert_fact(f"the cafe no{i}", "likes", f"band {i}", valid_from=None)
        m.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
        clock.tick()
        m.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
        for obj in ("Initech", "Globex"):
            m.assert_fact(
                "Bob", "works_at", obj, valid_from="2024-01-01T00:00:00Z", author_kind="tool",
                quarantined=False,
            )  # fmt: skip
        for i, session in enumerate(("s1", "s2")):
            ep = m.remember(f"Mira likes jazz ({i}).", speaker="x", author_kind="tool",
                            session=session)  # fmt: skip
            m.assert_fact("Mira", "likes", "jazz", author_kind="tool", valid_from=None,
                          evidence=[ep.id])  # fmt: skip
        m.assert_fact("user", "lives_in", "Oslo", valid_from="2024-01-01T00:00:00Z")
        m.assert_fact("user", "lives_in", "Perth", author_kind="agent", valid_from=None)
        m.assert_fact(
            "Eve", "lives_in", "Rome", valid_from="2020-01-01T00:00:00Z",
            valid_to="2021-01-01T00:00:00Z",
        )  # fmt: skip


def child(path: Path, pause_at: int) -> subprocess.Popen[str]:
    env = {**os.environ, "CONSOLIDATE_PAUSE_AT": str(pause_at), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )


def hook_points(template: Path, scratch: Path) -> list[str]:
    """The points an uninterrupted run passes, on a copy of the template."""
    shutil.copytree(template, scratch)
    seen: list[str] = []
    with Memory.open(scratch, embedder=None, extractor=None) as m:
        m._consolidation.hook = seen.append
        m.consolidate()
    return seen


def finish(path: Path) -> str:
    """A whole run, in this process."""
    with Memory.open(path, embedder=None, extractor=None) as m:
        return m.consolidate().summary


def state(path: Path) -> dict[str, Any]:
    with Memory.open(path, embedder=None, extractor=None) as m:
        facts = sorted(
            (f.subject, f.predicate, f.object, f.valid_from, f.valid_to, f.status)
            for f in m.facts(valid_at=V, include_quarantined=True)
        )
        episodes = [e for e in m._store.names.episodes(m.namespace, limit=1000)]
        merges = sorted(
            (x["loser_name"], x["winner_name"], x["unmerged_at"] is None) for x in m.merges()
        )
        again = m.consolidate()
        return {
            "facts": facts,
            "archived": sorted((e["text"], e["session"]) for e in episodes if e["archived"]),
            "episodes": len(episodes),
            "merges": merges,
            "again": again.summary,
            "watermark": again.since is not None,
        }


def test_sigkill_mid_run_then_rerun_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    template = tmp_path / "template"
    build(template)
    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    summary = finish(reference)
    assert "merged" in summary and "promoted" in summary, summary
    want = state(reference)
    assert want["again"] == "nothing to consolidate" and want["watermark"]
    assert len(set(want["facts"])) == len(want["facts"])  # no duplicates
    assert ("my sister", "Mira", True) in want["merges"] and len(want["merges"]) == 7
    assert any(f[-1] == "contested" for f in want["facts"])

    points = hook_points(template, tmp_path / "count")
    assert len(points) > 8, points  # steps and merges: room for kills at many places

    rng = random.Random(5)
    victim = tmp_path / "victim"
    shutil.copytree(template, victim)
    killed = 0
    for round_ in range(4):
        at = rng.randrange(1, len(points))  # the point to kill at (a rerun has no more)
        proc = child(victim, at if round_ % 2 == 0 else 0)  # paused there, or running on
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open"
        reached = 0
        for line in proc.stdout:
            if line.startswith("done"):
                break  # a rerun with less left to do finished first
            reached += line.startswith("at ")
            if reached == at:
                proc.send_signal(signal.SIGKILL)
                killed += 1
                break
        proc.wait(timeout=120)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert killed >= 2  # the run really was interrupted, more than once (paused rounds)
    finish(victim)
    assert state(victim) == want


# A child that SIGKILLs itself when the run reaches one point (the runner's `hook(point)`).
KILL_AT = """
import os, signal, sys
from palimpsest import Memory

def hook(step):
    if step == sys.argv[2]:
        os.kill(os.getpid(), signal.SIGKILL)

with Memory.open(sys.argv[1], embedder=None, extractor=None) as m:
    m._consolidation.hook = hook
    m.consolidate()
"""


def test_a_run_killed_between_its_report_and_its_watermark_loses_neither(tmp_path: Path) -> None:
    path = tmp_path / "m"
    build(path)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AT, str(path), "watermark"],
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Memory.open(path, embedder=None, extractor=None) as m:
        [killed] = m.consolidation_reports()  # written whole before the watermark
        assert "merged" in killed.summary and "promoted" in killed.summary
        watermark = m._store.consolidation.watermark(m.namespace)
        assert watermark is None  # so the next run looks again
    finish(path)
    with Memory.open(path, embedder=None, extractor=None) as m:
        reports = m.consolidation_reports()
    # what the killed run reported by time window is not reported again
    ended = [c.targets[0] for r in reports for c in r.changes if c.action == "ended"]
    assert [c.action for c in reports[0].changes].count("ended") == len(ended) >= 1
    after = state(path)
    assert after["again"] == "nothing to consolidate" and after["watermark"]
    assert len(set(after["facts"])) == len(after["facts"])
    folder = path / "reports"
    assert not list(folder.glob("*.tmp"))
    assert len(list(folder.glob("*.json"))) == len(list(folder.glob("*.txt"))) == 3
