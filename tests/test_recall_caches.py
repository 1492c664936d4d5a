"""Recall's in-process caches follow every write verb: a warm cache never answers stale.

    >>> mem.recall("where does Ana live?")     # warms the caches
    >>> mem.end_fact("Ana", "lives_in", "Rome"); mem.recall("where does Ana live?")

Each test recalls first (so every cache recall keeps is loaded), writes with one
verb, and recalls again: the answer must show the write. Fast parts (hashing
embedder, no extractor), real Kùzu on disk.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.models import Hit
from palimpsest.recall import HashingEmbedder
from palimpsest.storage import fact_order

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


def _canonical(rows: list[dict[str, object]]) -> list[tuple[object, ...]]:
    # the store's order, ties (same subject, predicate, start and object) by id
    return [(*fact_order(r), r["id"], sorted(r.items())) for r in rows]  # type: ignore[arg-type]


def test_warm_versions_follow_random_writes_as_a_fresh_read_would(
    mem: Memory, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A write to some slots patches the cached versions of the entities they concern
    # (graph/_changes.py); anything else makes them be read again. After every write,
    # each cached copy must hold exactly what reading it again returns, recall's fact
    # hits must be those of a cold cache, and after a fact write recall reads from the
    # store only the entities it had not cached.
    rng = random.Random(5)
    people, places = ["Ana", "Tom", "Mira"], ["Rome", "Oslo", "Lima", "Kyiv"]
    question = "where do Ana, Tom and Mira live, and who lives in Rome?"
    facts, store = mem._recall._facts, mem._store
    reads: list[str] = []
    read = store.facts.facts_asof

    def counted(**kw: Any) -> list[dict[str, Any]]:
        reads.append(kw.get("subject_id") or kw.get("object_id") or "")
        return read(**kw)

    monkeypatch.setattr(store.facts, "facts_asof", counted)
    patched = 0
    for step in range(60):
        op = rng.choice(["assert", "assert", "many", "end", "retract", "remember"])
        who, where = rng.choice(people), rng.choice(places)
        if op == "assert":
            pred = rng.choice(["lives_in", "visited"])
            mem.assert_fact(who, pred, where, valid_from=f"20{rng.randint(10, 29)}-01-01T00:00:00Z")
        elif op == "many":
            mem.assert_many(
                [{"subject": rng.choice(people), "predicate": "visited", "object": p}
                 for p in rng.sample(places, 2)]
            )  # fmt: skip
        elif op == "end":
            mem.end_fact(who, "lives_in", where, at=clock.now)
        elif op == "retract":
            current = mem.facts(who)
            if current:
                mem.retract(rng.choice(current).id)
        else:
            mem.remember(f"{who} sent a postcard, note {step}.")
        clock.tick()
        cached = set(facts._versions)
        reads.clear()
        warm = [(h.text, h.status, h.score) for h in mem.recall(question, min_score=0)
                if h.kind == "fact"]  # fmt: skip
        if op in ("assert", "many", "end", "remember") and cached:
            # only what was not cached is read: the rest was patched (or untouched)
            assert sorted(reads) == sorted(k[1] for k in set(facts._versions) - cached), op
            patched += op != "remember"
        for (ns, entity_id, as_object), vs in facts._versions.items():
            fresh = read(
                namespace=ns, valid_at=None, known_at=None, include_quarantined=True,
                subject_id=None if as_object else entity_id,
                object_id=entity_id if as_object else None,
            )  # fmt: skip
            assert sorted(_canonical(vs.rows)) == sorted(_canonical(fresh)), (step, op)
            assert [fact_order(r) for r in vs.rows] == [fact_order(r) for r in fresh]
        facts._forget_versions(facts._versions_at)
        cold = [(h.text, h.status, h.score) for h in mem.recall(question, min_score=0)
                if h.kind == "fact"]  # fmt: skip
        assert warm == cold, (step, op)
    assert patched >= 20


def test_warm_versions_follow_a_batch_that_replaces_a_fact(tmp_path: Path, clock: Clock) -> None:
    # remember_many writes every turn's facts at one K, read by the real spaCy
    # extractor: the stored version it replaces is expired, a closed one made, and the
    # copies warm_recall read must follow.
    with Memory.open(tmp_path / "x", clock=clock, embedder=HashingEmbedder()) as m:
        m.remember("I live in Rome.", speaker="user")
        clock.tick()
        m.warm_recall()
        facts = m._recall._facts
        assert facts._versions  # what warm read
        m.remember_many(
            [{"text": "I live in Lisbon.", "speaker": "user"},
             {"text": "I live in Oslo.", "speaker": "user"}]
        )  # fmt: skip
        clock.tick()
        hits = [h.text for h in m.recall("where do I live?", min_score=0) if h.kind == "fact"]
        assert hits and "Oslo" in hits[0]
        facts._catch_up()
        for (ns, entity_id, as_object), vs in facts._versions.items():
            fresh = m._store.facts.facts_asof(
                namespace=ns, valid_at=None, known_at=None, include_quarantined=True,
                subject_id=None if as_object else entity_id,
                object_id=entity_id if as_object else None,
            )  # fmt: skip
            assert sorted(_canonical(vs.rows)) == sorted(_canonical(fresh))
