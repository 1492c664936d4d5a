"""Crash safety: a consolidation SIGKILLed at random moments, several times over, then run
to the end, leaves the memory exactly as one uninterrupted run does."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest import Memory
from palimpsest.graph import ConsolidationStore

from .conftest import Clock

V = "2025-01-01T00:00:00Z"
# The child pauses in the step hook (between steps and merges) so a kill can land
# anywhere in a run that would otherwise finish in a blink; the pause lives here only.
CHILD = """
import os, sys, time
from palimpsest import Memory

pause = float(os.environ.get("CONSOLIDATE_PAUSE", "0"))
with Memory.open(sys.argv[1], embedder=None, extractor=None) as m:
    if pause:
        m._consolidation.hook = lambda step: time.sleep(pause)
    print("open", flush=True)
    print(m.consolidate().summary, flush=True)
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


def child(path: Path, pause: float) -> subprocess.Popen[str]:
    env = {**os.environ, "CONSOLIDATE_PAUSE": str(pause), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parent.parent,
    )


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
        episodes = [e for e in m._store.episodes(m.namespace, limit=1000)]
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

    rng = random.Random(5)
    victim = tmp_path / "victim"
    shutil.copytree(template, victim)
    killed = 0
    for _ in range(4):
        proc = child(victim, 0.08)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open"
        time.sleep(rng.uniform(0.0, 1.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait(timeout=60)
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()
    assert killed >= 2  # the run really was interrupted, more than once
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
        watermark = ConsolidationStore(m._store.db).watermark(m.namespace)
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
