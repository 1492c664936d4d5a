"""Recall's in-process caches follow every write verb: a warm cache never answers stale.

    >>> mem.recall("where does Ana live?")     # warms the caches
    >>> mem.end_fact("Ana", "lives_in", "Rome"); mem.recall("where does Ana live?")

Each test recalls first (so every cache recall keeps is loaded), writes with one
verb, and recalls again: the answer must show the write. Fast parts (hashing
embedder, no extractor), real Kùzu on disk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.models import Hit
from palimpsest.recall import HashingEmbedder

from .conftest import Clock, utc

Q = "where does Ana live?"


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=HashingEmbedder()) as m:
        m.remember("Ana told me about the pottery studio near the harbour.", session="s1")
        clock.tick()
        yield m


def _facts(hits: list[Hit]) -> list[str]:
    return [h.text for h in hits if h.kind == "fact"]


def _episodes(hits: list[Hit]) -> list[str]:
    return [h.text for h in hits if h.kind == "episode"]


def test_remember_is_recalled_at_once(mem: Memory, clock: Clock) -> None:
    assert mem.recall("glassblowing workshop", min_score=0.2) == []
    mem.remember("The glassblowing workshop starts in May.", session="s2")
    clock.tick()
    assert "The glassblowing workshop starts in May." in _episodes(mem.recall("glassblowing"))


def test_assert_then_end_then_retract(mem: Memory, clock: Clock) -> None:
    assert not any("Rome" in t for t in _facts(mem.recall(Q, min_score=0)))
    f = mem.assert_fact("Ana", "lives_in", "Rome", valid_from="2020-01-01T00:00:00Z")
    clock.tick()
    now = [h for h in mem.recall(Q, min_score=0) if h.kind == "fact"]
    assert now and "Rome" in now[0].text and now[0].status == "current"
    mem.end_fact("Ana", "lives_in", "Rome", at=clock.now)
    clock.tick()
    after = [h for h in mem.recall(Q, min_score=0) if h.kind == "fact" and "Rome" in h.text]
    assert all(h.status != "current" for h in after)
    g = mem.assert_fact("Ana", "lives_in", "Oslo", valid_from=clock.now)
    clock.tick()
    assert any("Oslo" in t for t in _facts(mem.recall(Q, min_score=0)))
    mem.retract(g.id, reason="wrong person")
    clock.tick()
    assert not any("Oslo" in t for t in _facts(mem.recall(Q, min_score=0)))
    assert f.id != g.id


def test_erase_takes_an_episode_out(mem: Memory, clock: Clock) -> None:
    e = mem.remember("The locksmith code is 4471.", session="s3")
    clock.tick()
    assert "The locksmith code is 4471." in _episodes(mem.recall("locksmith code"))
    mem.erase(e.id, reason="secret")
    clock.tick()
    assert "The locksmith code is 4471." not in _episodes(mem.recall("locksmith code"))


def test_consolidate_archives_out_of_recall(mem: Memory, clock: Clock) -> None:
    low = mem.remember("The weather was grey over the marshes.", importance=0.2, session="w")
    clock.tick()
    assert low.text in _episodes(mem.recall("grey weather over the marshes"))
    clock.tick(days=210)
    report = mem.consolidate()
    assert low.id in [t for c in report.changes for t in c.targets]
    assert low.text not in _episodes(mem.recall("grey weather over the marshes", min_score=0))


def test_import_is_recalled_at_once(mem: Memory, clock: Clock) -> None:
    assert mem.recall("saxophone lessons", min_score=0.2) == []
    lines = [
        json.dumps(
            {"text": "I signed up for saxophone lessons.", "speaker": "user", "session": "t"}
        )
    ]
    mem.import_transcript(lines)
    clock.tick()
    assert "I signed up for saxophone lessons." in _episodes(mem.recall("saxophone lessons"))
    n = mem.import_facts(
        [json.dumps({"subject": "Ana", "predicate": "lives_in", "object": "Porto"})]
    )
    clock.tick()
    assert n == 1 and any("Porto" in t for t in _facts(mem.recall(Q, min_score=0)))


def test_restore_replaces_what_recall_knew(tmp_path: Path) -> None:
    clock = Clock(utc("2030-01-01T00:00:00"))
    with Memory.open(tmp_path / "a", clock=clock, extractor=None, embedder=HashingEmbedder()) as a:
        a.remember("The harp recital is on Sunday.", session="r")
        lines = list(a.export_lines())
    with Memory.open(tmp_path / "b", clock=clock, extractor=None, embedder=HashingEmbedder()) as b:
        assert b.recall("harp recital", min_score=0.2) == []
        b.restore(lines)
        assert "The harp recital is on Sunday." in _episodes(b.recall("harp recital"))


def test_a_warm_walk_still_answers_as_known_at_an_earlier_time(mem: Memory, clock: Clock) -> None:
    # The walk keeps every version of a named entity's facts between writes and picks
    # those believed at known_at itself: a past known_at must not see a later belief.
    mem.assert_fact("Ana", "lives_in", "Rome", valid_from="2020-01-01T00:00:00Z")
    clock.tick()
    before = clock.now
    clock.tick()
    oslo = mem.assert_fact("Ana", "lives_in", "Oslo", valid_from="2021-01-01T00:00:00Z")
    clock.tick()
    for _ in range(2):  # cold, then from the warm copy
        now = _facts(mem.recall(Q, min_score=0))
        then = _facts(mem.recall(Q, min_score=0, known_at=before))
        assert now and "Oslo" in now[0] and not any("Oslo" in t for t in then)
        assert then and "Rome" in then[0]
    mem.retract(oslo.id)
    clock.tick()
    assert not any("Oslo" in t for t in _facts(mem.recall(Q, min_score=0)))
