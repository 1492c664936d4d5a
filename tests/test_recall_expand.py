"""Recall's graph expansion: facts one and two hops from the entities a query names.

    >>> mem.recall("where does my sister live?")   # user -> sister Ana -> Ana lives in Lisbon

Fast: HashingEmbedder, no extractor; facts asserted directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.recall import HashingEmbedder
from palimpsest.recall import _expand as xp

from .conftest import Clock


@pytest.fixture
def family(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory.open(
        tmp_path / "fam", clock=clock, extractor=None, embedder=HashingEmbedder()
    ) as m:
        m.remember("We had a long call about the garden.", occurred_at="2029-01-01T10:00:00Z")
        m.assert_fact("user", "has_sister", "Ana", valid_from="2000-01-01T00:00:00Z")
        m.assert_fact("Ana", "lives_in", "Lisbon", valid_from="2020-01-01T00:00:00Z")
        clock.tick()
        m.assert_fact("Ana", "lives_in", "Porto", valid_from="2029-06-01T00:00:00Z")
        m.assert_fact("Bruno", "lives_in", "Oslo", valid_from="2020-01-01T00:00:00Z")
        clock.tick()
        yield m


def _facts(hits: Sequence[Any]) -> list[str]:
    return [h.text for h in hits if h.kind == "fact"]


def test_two_hops_reach_the_sisters_home(family: Memory) -> None:
    facts = _facts(family.recall("where does my sister live?", k=6, min_score=0))
    assert "Ana lives in Porto" in facts  # user -has_sister-> Ana -lives_in-> Porto
    assert "Bruno lives in Oslo" not in facts  # not reachable from the query's entities
    assert "Ana lives in Lisbon" not in facts  # ended before valid_at (now)


def test_two_hops_follow_valid_at(family: Memory) -> None:
    hits = family.recall(
        "where does my sister live?", k=6, min_score=0, valid_at="2025-01-01T00:00:00Z"
    )
    assert "Ana lives in Lisbon" in _facts(hits)
    assert "Ana lives in Porto" not in _facts(hits)


def test_a_named_entity_is_hop_one_and_outranks_hop_two(family: Memory) -> None:
    hits = [h for h in family.recall("Ana lives", k=6, min_score=0) if h.kind == "fact"]
    assert hits[0].text == "Ana lives in Porto"
    assert hits[0].evidence == [] and hits[0].status == "current"


def test_walk_bounds_the_second_hop() -> None:
    rows: dict[tuple[str, bool], list[Mapping[str, Any]]] = {
        ("u", False): [
            {"id": f"f{i}", "subject_id": "u", "object_id": f"e{i}", "s": i} for i in range(20)
        ],
        ("u", True): [],
    }
    calls: list[str] = []

    def fetch(e: str, as_object: bool) -> list[Mapping[str, Any]]:
        if e != "u":
            calls.append(e)
            return [{"id": f"g{e}", "subject_id": e, "object_id": None}]
        return list(rows[(e, as_object)])

    out = xp.walk(fetch, ["u"], relevant=lambda rs: [r.get("s", 0) for r in rs], fanout=3)
    assert calls == ["e19", "e18", "e17"]  # the three most relevant, no more
    assert [h for _, h in out].count(2) == 3
    assert xp.walk(fetch, ["u"], relevant=lambda rs: [0] * len(rs)) == [
        (r, 1) for r in rows[("u", False)]
    ]


def test_naming_someone_is_not_an_answer(family: Memory) -> None:
    # every fact of Ana holds her name: a question about something else of hers
    # must not ride on it, while a question her facts answer still finds them
    offtopic = [h for h in family.recall("What is Ana's blood type?", min_score=0)]
    ontopic = [h for h in family.recall("Where does Ana live?", min_score=0)]
    best_off = max((h.score for h in offtopic if h.kind == "fact"), default=0.0)
    best_on = max(h.score for h in ontopic if h.kind == "fact")
    assert best_off < best_on
    assert best_off == 0.0 or all(
        h.channels["lexical"] == 0.0 for h in offtopic if h.kind == "fact"
    )
    assert family.recall("What is Ana's blood type?") == []
    # a question that is only a name still gets that entity's facts
    assert "Ana lives in Porto" in _facts(family.recall("Ana", k=6, min_score=0))
