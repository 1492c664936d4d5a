"""Reinforcement by use: recall records the episodes it returns (buffered, flushed at a
bound, at close and before consolidation); ranking's recency and the decay step count
from the last use; erase forgets uses; the HTTP API records through the same Memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from palimpsest import Memory
from palimpsest.engine.uses import FLUSH_SECONDS
from palimpsest.recall import ranking as rk

from .conftest import Clock

LONG_AGO = "2027-01-01T00:00:00Z"  # three years before the test clock: recency has faded
MONDAY = "The weather was grey on Monday in the harbour."
TUESDAY = "The weather was grey on Tuesday in the harbour."


def open_mem(path: Path, clock: Clock) -> Memory:
    return Memory.open(path, clock=clock, embedder=None, extractor=None)


# unrelated turns, so the words the tests ask about are not in every text (a word in
# nearly all of them tells nothing apart and only counts as novelty)
FILLER = ("Lunch was noodles.", "The train left early.", "Kids played chess.", "New shoes.")


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with open_mem(tmp_path / "m", clock) as m:
        for text in FILLER:
            m.remember(text, importance=0.9, occurred_at=LONG_AGO)
        yield m


def scores(mem: Memory, query: str, **kw: object) -> dict[str, float]:
    return {h.episode_id or "": h.score for h in mem.recall(query, **kw)}  # type: ignore[arg-type]


def stored(mem: Memory) -> dict[str, tuple[object, int]]:
    return dict(mem._store.uses.uses(mem.namespace))


def test_a_used_episode_ranks_fresher_and_the_answer_that_used_it_is_unmoved(
    mem: Memory, clock: Clock
) -> None:
    mon = mem.remember(MONDAY, session="a", occurred_at=LONG_AGO)
    tue = mem.remember(TUESDAY, session="b", occurred_at=LONG_AGO)
    before = clock.tick()
    clock.tick()
    only = scores(mem, "Tuesday weather")
    # Tuesday answers; Monday may come along below the floor, which is no use of it
    assert max(only, key=only.__getitem__) == tue.id
    assert only.get(mon.id, 0.0) < rk.RankParams().floor <= only[tue.id]
    clock.tick()
    now = scores(mem, "grey weather harbour")
    # as of before the use, both are equally relevant and equally old
    first = scores(mem, "grey weather harbour", known_at=before)
    assert first[mon.id] == first[tue.id] == now[mon.id] < now[tue.id]
    # bounded: use lifts at most the recency weight, never past relevance itself
    assert now[tue.id] <= first[tue.id] / (1 - rk.RankParams().recency_weight) + 1e-6


def test_uses_survive_close_and_reopen(tmp_path: Path, clock: Clock) -> None:
    with open_mem(tmp_path / "m", clock) as m:
        m.remember_many([{"text": t, "occurred_at": LONG_AGO} for t in FILLER])
        ep = m.remember(TUESDAY, occurred_at=LONG_AGO)
        clock.tick()
        m.recall("Tuesday weather")
        m.recall("grey harbour")
        assert stored(m) == {}  # still waiting: a recall does not write
        used_at = clock.now
    with open_mem(tmp_path / "m", clock) as m:
        assert stored(m) == {ep.id: (used_at, 2)}
        clock.tick()
        m.recall("Tuesday weather")
        assert m._uses.episode_uses([ep.id]) == {ep.id: (clock.now, 3)}


def test_the_buffer_flushes_at_its_bound(mem: Memory, clock: Clock) -> None:
    mem._uses.flush_at = 3
    eps = [
        mem.remember(f"Harbour note {w}.", occurred_at=LONG_AGO)
        for w in ("alpha", "bravo", "delta")
    ]
    clock.tick()
    mem.recall("harbour note alpha", k=2)
    assert stored(mem) == {} and len(mem._uses.waiting()) == 2
    mem.recall("harbour note delta", k=3)
    assert set(stored(mem)) == {e.id for e in eps} and mem._uses.waiting() == {}
    mem._uses.flush_at = 100
    before = stored(mem)[eps[1].id][1]
    mem.recall("harbour note alpha", k=1)
    assert len(mem._uses.waiting()) == 1
    mem._uses.flushed -= FLUSH_SECONDS  # as if that long had passed since the last write
    mem.recall("harbour note bravo", k=1)
    assert mem._uses.waiting() == {} and stored(mem)[eps[1].id][1] == before + 1


def test_erasing_an_episode_drops_its_use_record(mem: Memory, clock: Clock) -> None:
    mon = mem.remember(MONDAY, session="a", occurred_at=LONG_AGO)
    tue = mem.remember(TUESDAY, session="b", occurred_at=LONG_AGO)
    clock.tick()
    mem.recall("grey weather harbour")
    mem._uses.flush()
    mem.recall("Monday weather")  # one stored, one more waiting
    mem.erase(mon.id)
    assert set(stored(mem)) == {tue.id} and mon.id not in mem._uses.waiting()
    assert set(mem._uses.episode_uses()) == {tue.id}


def test_a_recently_used_cold_episode_is_not_archived(mem: Memory, clock: Clock) -> None:
    kept = mem.remember("The weather was grey all day at the harbour.", importance=0.2)
    gone = mem.remember("The weather was grey all day in the valley.", importance=0.2)
    clock.tick(days=200)
    # the answer's best hit counts as used, the weaker ones that come with it do not
    assert next(iter(scores(mem, "harbour"))) == kept.id
    assert set(mem._uses.waiting()) == {kept.id}
    clock.tick(days=2)
    report = mem.consolidate()  # writes the waiting use first
    assert report.counts == {"archived": 1, "reinforced": 1}
    by_action = {c.action: c for c in report.changes}
    assert by_action["archived"].targets == [gone.id]
    assert by_action["reinforced"].targets == [kept.id]
    assert "recall used it 1 times, last 2 days ago" in by_action["reinforced"].reason
    assert not mem.episode(kept.id).archived and mem.episode(gone.id).archived
    clock.tick()
    assert mem.consolidate().changes == []  # reported once, until a new use
    clock.tick(days=200)  # no use since: it cools like any other
    assert mem.consolidate().counts == {"archived": 1}


def test_recall_through_the_http_api_records_uses(tmp_path: Path, clock: Clock) -> None:
    from palimpsest.api import create_app

    app = create_app(tmp_path / "m", extractor=None, embedder=None, clock=clock)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        for text in FILLER:
            c.post("/v1/episodes", json={"text": text, "occurred_at": LONG_AGO})
        r = c.post("/v1/episodes", json={"text": TUESDAY, "occurred_at": LONG_AGO})
        assert r.status_code == 201, r.text
        ep = r.json()["id"]
        clock.tick()
        hits = c.get("/v1/recall", params={"query": "Tuesday weather"}).json()
        assert hits[0]["episode_id"] == ep and hits[0]["score"] >= 0.26
        assert all(h["score"] < 0.26 for h in hits[1:])  # context, not counted as used
    with open_mem(tmp_path / "m", clock) as m:  # the server wrote them on shutdown
        assert stored(m) == {ep: (clock.now, 1)}


def test_relevance_counts_recency_from_the_later_of_occurrence_and_use() -> None:
    from datetime import UTC, datetime

    ref = datetime(2030, 1, 1, tzinfo=UTC)
    old = ref.timestamp() - 3 * 365 * 86400
    common = {
        "bm25": [2.0, 2.0],
        "bm25_max": 2.0,
        "dense": [[0.5, 0.5]],
        "sessions": [1, 2],
        "positions": [0, 0],
        "occurred_at": [old, old],
        "reference": ref,
    }
    plain = rk.relevance(**common)  # type: ignore[arg-type]
    unused = rk.relevance(**common, last_used=[np.nan, np.nan])  # type: ignore[arg-type]
    used = rk.relevance(**common, last_used=[ref.timestamp(), old - 1])  # type: ignore[arg-type]
    assert plain.tolist() == unused.tolist()
    assert used[0] > plain[0] and used[1] == plain[1]  # a use before occurrence changes nothing
