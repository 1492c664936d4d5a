"""A memory written by an older release opens with today's code and answers the same.

`tests/data/upgrade/memory-37eb9a8.tar.xz` was written by commit
37eb9a8ce2760b210df5bb213cf831da79e178c9 (2026-11-30, schema before migrations 7
and 8; the repository has no tags, so a commit stands for the release), by
`tests/data/upgrade/write_old.py` run against that commit's code, which also
recorded what it answered (`answers-37eb9a8.json`, through `ask.py`). Here today's
code opens a copy (running every migration since), asks the same questions and
must give the same answers, then keeps working on it.
"""

from __future__ import annotations

import importlib.util
import json
import tarfile
from pathlib import Path
from types import ModuleType

from palimpsest import Memory

DATA = Path(__file__).resolve().parent / "data" / "upgrade"
COMMIT = "37eb9a8ce2760b210df5bb213cf831da79e178c9"


def _ask() -> ModuleType:
    spec = importlib.util.spec_from_file_location("upgrade_ask", DATA / "ask.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unpack(tmp_path: Path) -> Path:
    with tarfile.open(DATA / "memory-37eb9a8.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "memory"


def test_a_memory_from_an_older_release_answers_the_same(tmp_path: Path) -> None:
    recorded = json.loads((DATA / "answers-37eb9a8.json").read_text())
    assert recorded["commit"] == COMMIT
    marks = recorded["known_at_marks"]
    path = _unpack(tmp_path)
    with Memory.open(path, extractor=None, embedder=None) as mem:
        got = _ask().ask(mem, marks)
        for old, new in zip(recorded["asked"], got, strict=True):
            assert new == old, f"{old['call']} {old.get('valid_at')} {old.get('known_at')}"
        # it keeps working: a new belief on top of the old ones, the old view kept
        mem.assert_fact("user", "lives_in", "Perth", valid_from="2025-05-01T00:00:00Z")
        now = [f.object for f in mem.facts("user", "lives_in")]
        assert now == ["Perth"]
        then = mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z", known_at=marks[1])
        assert [f.object for f in then] == ["Sydney"]
    with Memory.open(path, extractor=None, embedder=None) as mem:  # and reopens as today's
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Perth"]


def test_the_recorded_answers_are_not_trivial() -> None:
    """The old release's answers hold what the upgrade must keep: a superseded value,
    an end, a retraction, a correction, and the memory's own view as of earlier K."""
    asked = json.loads((DATA / "answers-37eb9a8.json").read_text())["asked"]
    facts = [a for a in asked if a["call"] == "facts"]
    views = {json.dumps(a["answer"]) for a in facts}
    assert len(views) >= 5  # the answers differ by valid and known time
    history = {tuple(h) for h in next(a for a in asked if a["call"] == "history")["answer"]}
    assert {("lives_in", "Melbourne", "superseded"), ("works_at", "Acme", "ended"),
            ("age", "40", "superseded"), ("age", "41", "current")} <= history  # fmt: skip
    # the retracted claim is believed as known at the second mark, gone at the third
    sept = [a["answer"] for a in facts if a["valid_at"].startswith("2024-09")]
    assert any(f[:3] == ["Mira", "works_at", "Initech"] for f in sept[1])
    assert not any(f[0] == "Mira" for f in sept[2])
    recall = next(a for a in asked if a["call"] == "recall")["answer"]
    assert len(recall) == 2


LONG = "cca4347801c5d44c6ab0e2424912798c244fe3f6"


def _write_long() -> ModuleType:
    spec = importlib.util.spec_from_file_location("upgrade_long", DATA / "write_long.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_long_histories_of_the_last_packed_release_answer_the_same(tmp_path: Path) -> None:
    """Issue 27: a memory of the release before migration 9 (one packed value a slot) opens
    on journals and lines, paged where the histories are long, and answers the same."""
    recorded = json.loads((DATA / f"answers-long-{LONG[:7]}.json").read_text())
    assert recorded["commit"] == LONG
    marks = recorded["known_at_marks"]
    with tarfile.open(DATA / f"memory-long-{LONG[:7]}.tar.xz") as tar:
        tar.extractall(tmp_path, filter="data")
    path = tmp_path / "memory"
    long = _write_long()
    with Memory.open(path, extractor=None, embedder=None) as mem:
        db = mem._store.db
        assert db.query("MATCH (p:SlotPage) RETURN count(*) AS c")[0]["c"] > 0  # journal pages
        assert db.query("MATCH (p:LinePage) RETURN count(*) AS c")[0]["c"] > 0  # line pages
        got = long.ask_long(mem, marks)
        for old, new in zip(recorded["asked"], got, strict=True):
            assert new == old, old
        # it keeps working on the paged layout: a move, learned late, the past kept
        mem.assert_fact("user", "lives_in", "Perth", valid_from=long.day(111))
        assert [f.object for f in mem.facts("user", "lives_in", valid_at=long.day(112))] == [
            "Perth"
        ]
        then = mem.facts("user", "lives_in", valid_at=long.day(112), known_at=marks[2])
        assert [f.object for f in then] == ["City 22"]
