"""Recall with time in the question, and archived episodes out of the hot set.

    >>> mem.recall("what did I eat for breakfast on 2014/01/29?")   # that day's breakfast

A lifelog holds many alike episodes whose text does not carry its date; the
date the question names must choose among them. Fast tests: HashingEmbedder,
no extractor.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

import palimpsest.recall.recaller as recall_mod
from palimpsest import Memory
from palimpsest.recall import HashingEmbedder
from palimpsest.recall import ranking as rk

from .conftest import Clock

FOODS = ["pancakes", "porridge", "eggs", "toast", "waffles", "muesli", "a bagel", "fruit"]
START = datetime(2014, 1, 20, 8, tzinfo=UTC)


def _open(path: Path, clock: Clock) -> Memory:
    return Memory.open(path, clock=clock, extractor=None, embedder=HashingEmbedder())


@pytest.fixture
def lifelog(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    """One breakfast a day for 40 days, and an undated-text trip on day 9."""
    with _open(tmp_path / "life", clock) as m:
        items = [
            {
                "text": f"I had breakfast with Mira. I ate {FOODS[d % len(FOODS)]}.",
                "occurred_at": START + timedelta(days=d),
                "source": f"b{d}",
            }
            for d in range(40)
        ]
        items.append(
            {
                "text": "I took my pet for grooming.",
                "occurred_at": START + timedelta(days=9, hours=3),
                "source": "pet",
            }
        )
        m.remember_many(items)
        yield m


def _sources(hits: list[object]) -> list[str | None]:
    return [getattr(h, "source", None) for h in hits if getattr(h, "kind", "") == "episode"]


def test_a_named_day_picks_that_days_episode(lifelog: Memory) -> None:
    hits = lifelog.recall("what did I eat for breakfast on 2014/01/29?", k=3, min_score=0)
    assert _sources(hits)[0] == "b9"
    # written out, the same day
    hits = lifelog.recall("what did I eat for breakfast on 29 January 2014?", k=3, min_score=0)
    assert _sources(hits)[0] == "b9"


def test_a_named_month_narrows_to_it(lifelog: Memory) -> None:
    hits = lifelog.recall("what did I eat for breakfast in February 2014?", k=5, min_score=0)
    days = [int(s[1:]) for s in _sources(hits) if s and s.startswith("b")]
    assert days and all(START + timedelta(days=d) >= datetime(2014, 2, 1, tzinfo=UTC) for d in days)
    hits = lifelog.recall("what did I eat for breakfast on 2014/02?", k=5, min_score=0)
    assert _sources(hits)[0] in {f"b{d}" for d in range(12, 40)}


def test_without_a_date_every_day_is_alike(lifelog: Memory) -> None:
    hits = lifelog.recall("what did I eat for breakfast?", k=5, min_score=0)
    assert len(_sources(hits)) == 5  # no window: nothing narrowed away


def test_a_named_day_reaches_the_ranking_past_the_prefilter(
    lifelog: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # with fewer slots than alike breakfasts, the day must still be a candidate
    monkeypatch.setattr(recall_mod, "_PREFILTER", 6)
    hits = lifelog.recall("what did I eat for breakfast on 2014/02/20?", k=3, min_score=0)
    assert _sources(hits)[0] == "b31"


def test_the_date_does_not_beat_the_words(lifelog: Memory) -> None:
    # the pet's grooming that day, not the breakfast next to it
    hits = lifelog.recall("what did I take my pet for on 2014/01/29?", k=2, min_score=0)
    assert _sources(hits)[0] == "pet"


def test_a_dates_digits_do_not_match_other_dates(lifelog: Memory) -> None:
    # "29" and "2014" as loose digit runs would pick this episode out of every other day
    lifelog.remember("I did biking on 2014/09/29 for 29 km.", occurred_at="2014-09-29T12:00:00Z")
    hits = lifelog.recall("what did I have for breakfast on 2014/01/29?", k=3, min_score=0)
    assert _sources(hits)[0] == "b9"


def test_relative_time_resolves_against_valid_at(lifelog: Memory) -> None:
    hits = lifelog.recall(
        "what did I eat for breakfast yesterday?",
        k=1,
        min_score=0,
        valid_at=START + timedelta(days=10, hours=4),
    )
    assert _sources(hits) == ["b9"]


def test_archived_episodes_leave_recall_but_stay_readable(lifelog: Memory) -> None:
    hit = lifelog.recall("what did I take my pet for?", k=1, min_score=0)[0]
    assert hit.source == "pet" and hit.episode_id is not None
    store = lifelog._store  # archiving is consolidation's job; its store call does it here,
    with store.write():
        store.consolidation.archive([hit.episode_id])
    # and what its `index` step then tells recall (tests/test_recall_caches.py runs it all)
    lifelog._index.archived_changed("default")
    # archived after the index was loaded: out of the cached index at once
    assert "pet" not in _sources(lifelog.recall("what did I take my pet for?", k=3, min_score=0))
    assert lifelog.episode(hit.episode_id).archived
    # and out of the candidates once the index is reloaded
    lifelog._index.indexes.clear()
    assert "pet" not in _sources(lifelog.recall("grooming pet", k=3, min_score=0))


def test_time_narrow_lowers_only_outside_a_narrow_window() -> None:
    ref = datetime(2015, 1, 1, tzinfo=UTC)
    t = np.array([datetime(2014, 1, d, 12, tzinfo=UTC).timestamp() for d in (29, 2)])
    day = rk.query_time("on 2014/01/29", ref)
    assert day is not None
    assert rk.time_narrow([0.4, 0.5], t, day, factor=0.5).tolist() == pytest.approx([0.4, 0.25])
    year = rk.query_time("in 2014", ref)
    assert year is not None  # a year is too wide to narrow: only boosted
    assert rk.time_narrow([0.4, 0.5], t, year, factor=0.5).tolist() == pytest.approx([0.4, 0.5])
    nan = rk.time_narrow([0.4], [float("nan")], day, factor=0.5)
    assert nan.tolist() == pytest.approx([0.4])


def test_query_time_reads_year_slash_month() -> None:
    w = rk.query_time("where did I go on 2002/05", datetime(2023, 1, 1, tzinfo=UTC))
    assert w is not None and (w.start.month, w.end.month) == (5, 6)
    assert rk.query_time("room 2002/75", datetime(2023, 1, 1, tzinfo=UTC)) is None
