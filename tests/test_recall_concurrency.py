"""A read never runs a schema statement or a checkpoint, so it never fails under writers.

    >>> # a fresh process opens the memory, starts writers and readers, then recalls

Kùzu runs DDL and CHECKPOINT only once no other transaction is active, and gives
up after a few seconds with "Timeout waiting for active transactions": the
first recall of a process used to create the full-text index, so under a busy
server it failed, and kept failing (the flag was set only on success). The test
runs in a subprocess of its own, as a server would: the first recall of that
process happens while other threads keep Kùzu busy.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.graph._db import Database
from palimpsest.graph._recall import FTS_INDEX
from palimpsest.recall import HashingEmbedder

from .conftest import Clock

CHILD = textwrap.dedent(
    """
    import json, sys, threading, time
    from palimpsest import Memory
    from palimpsest.recall import HashingEmbedder

    path = sys.argv[1]
    errors, counts = [], {"remember": 0, "assert": 0, "facts": 0, "recall": 0}
    stop = threading.Event()
    mem = Memory.open(path, extractor=None, embedder=HashingEmbedder())

    def loop(name, step):
        i = 0
        while not stop.is_set():
            i += 1
            try:
                step(i)
                counts[name] += 1
            except Exception as e:  # every failure is the finding
                errors.append(f"{name}: {type(e).__name__}: {e}")

    steps = {
        "remember": lambda i: mem.remember(f"note {i}: I walked to the harbour today"),
        "assert": lambda i: mem.assert_fact(f"p{i % 7}", "lives_in", f"City{i}"),
        "facts": lambda i: mem.facts(f"p{i % 7}", "lives_in"),
    }
    threads = [threading.Thread(target=loop, args=(n, s)) for n, s in steps.items()]
    threads += [threading.Thread(target=loop, args=("facts", steps["facts"])) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # writers and readers are running
    for i in range(6):  # the first recall of this process, then more under the same load
        try:
            mem.recall("where did I walk?", k=3)
            counts["recall"] += 1
        except Exception as e:
            errors.append(f"recall: {type(e).__name__}: {e}")
        time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join()
    mem.close()
    print(json.dumps({"errors": errors[:5], "n_errors": len(errors), "counts": counts}))
    """
)


def test_first_recall_of_a_process_under_concurrent_writers(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    with Memory.open(path, clock=clock, extractor=None, embedder=HashingEmbedder()) as mem:
        mem.remember_many([{"text": f"I walked to the harbour on day {i}"} for i in range(50)])
        mem.assert_fact("p0", "lives_in", "Oslo")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["n_errors"] == 0, report["errors"]
    assert report["counts"]["recall"] == 6
    assert min(report["counts"].values()) > 0  # every kind of work really ran concurrently


def test_recall_creates_no_index(tmp_path: Path, clock: Clock) -> None:
    """Recall keeps its word index in process: no full-text index appears in the store."""
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=None) as mem:
        mem.remember("I walked to the harbour")
        assert mem.recall("harbour")
        names = [r["n"] for r in mem._store.db.query("CALL SHOW_INDEXES() RETURN index_name AS n")]
        assert FTS_INDEX not in names


def test_open_drops_the_index_an_older_version_made(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        mem.remember("I walked to the harbour")
        mem._store.recall.create_reference_index()  # what a first recall used to create
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        names = [r["n"] for r in mem._store.db.query("CALL SHOW_INDEXES() RETURN index_name AS n")]
        assert FTS_INDEX not in names
        assert mem.recall("harbour")[0].text == "I walked to the harbour"


def test_no_read_runs_a_schema_statement_or_a_checkpoint(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every read verb, first in its process (nothing loaded), with DDL and CHECKPOINT
    made to fail: none of them may reach either."""
    path = tmp_path / "m"
    with Memory.open(path, clock=clock, extractor=None, embedder=HashingEmbedder()) as mem:
        ep = mem.remember("My sister Mira lives in Lisbon", session="s1")
        mem.assert_fact("Mira", "lives_in", "Lisbon", valid_from="2020-01-01T00:00:00Z")
        mem.consolidate()
    calls: list[str] = []

    def refuse(self: Database, cypher: str = "CHECKPOINT") -> None:
        calls.append(cypher)
        raise AssertionError(f"a read ran {cypher!r}")

    with Memory.open(path, clock=clock, extractor=None, embedder=HashingEmbedder()) as mem:
        monkeypatch.setattr(Database, "ddl", refuse)
        monkeypatch.setattr(Database, "checkpoint", refuse)
        mem.warm_recall()
        assert mem.recall("where does Mira live?", k=3)
        assert mem.recall("Lisbon", k=3, valid_at="2021-01-01T00:00:00Z")
        mem.vector_index_kind()
        mem.episode(ep.id)
        assert mem.facts("Mira", "lives_in", valid_at="2021-01-01T00:00:00Z")
        mem.history("Mira", "lives_in")
        mem.entity("Mira")
        mem.entities()
        mem.snapshot()
        mem.changes(since="2000-01-01T00:00:00Z")
        mem.stats()
        mem.namespaces()
        mem.predicates()
        mem.merges()
        mem.consolidation_reports()
        list(mem.export_lines())
        monkeypatch.undo()
    assert calls == []
