"""Recall's graph expansion: facts one and two hops from the entities a query names.

    >>> mem.recall("where does my sister live?")   # user -> sister Ana -> Ana lives in Lisbon

Fast: HashingEmbedder, no extractor; facts asserted directly.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


T = datetime(2030, 1, 1, tzinfo=UTC)


def _row(**fields: Any) -> dict[str, Any]:
    """A stored fact version: recorded at T, never expired, always valid, unless told."""
    base = {"recorded_at": T, "expired_at": None, "valid_from": None, "valid_to": None}
    return {**base, "evidence": [], **fields}


def _versions(rows: list[dict[str, Any]]) -> xp.Versions:
    return xp.Versions(rows, stems=lambda rs: [set(r.get("words", ())) for r in rs])


def test_walk_bounds_the_second_hop() -> None:
    # hop-1 fact i shares i query words: the three sharing most lead on, no more
    user = _versions(
        [_row(id=f"f{i}", subject_id="u", object_id=f"e{i}", words=range(i)) for i in range(20)]
    )
    calls: list[str] = []

    def fetch(e: str, as_object: bool) -> xp.Versions:
        if e != "u":
            calls.append(e)
            return _versions([_row(id=f"g{e}", subject_id=e, object_id=None)])
        return user if not as_object else _versions([])

    out = xp.walk(fetch, ["u"], set(range(20)), known_at=T, fanout=3)
    assert calls == ["e19", "e18", "e17"]
    assert [s.hop for s in out] == [1, 2, 2, 2]
    calls.clear()
    alone = xp.walk(fetch, ["u"], {"unshared"}, known_at=T)  # nothing shared: no hop 2
    assert calls == [] and [s.index.tolist() for s in alone] == [list(range(20))]


def test_walk_takes_a_version_once() -> None:
    # u -knows-> a is u's fact as subject and a's as object: one row, at hop 1
    link = _row(id="k", subject_id="u", object_id="a", words=["x"])
    by = {("u", False): _versions([dict(link)]), ("a", True): _versions([dict(link)])}

    def fetch(e: str, as_object: bool) -> xp.Versions:
        return by.get((e, as_object)) or _versions([])

    out = xp.walk(fetch, ["u", "a"], {"x"}, known_at=T)
    assert [(s.versions.ids[i], s.hop) for s in out for i in s.index] == [("k", 1)]


def test_walk_sees_only_what_was_believed_at_known_at() -> None:
    later = T + timedelta(days=2)
    vs = _versions(
        [
            _row(id="old", subject_id="u", object_id=None, expired_at=later),
            _row(id="new", subject_id="u", object_id=None, recorded_at=later),
        ]
    )

    def fetch(e: str, as_object: bool) -> xp.Versions:
        return vs if not as_object else _versions([])

    def ids(at: datetime) -> list[str]:
        return [vs.ids[i] for s in xp.walk(fetch, ["u"], set(), known_at=at) for i in s.index]

    assert ids(T + timedelta(days=1)) == ["old"]
    assert ids(T + timedelta(days=3)) == ["new"]


def test_an_episode_is_ended_only_by_hop_one_versions_and_only_if_none_it_cites_holds() -> None:
    v = T + timedelta(days=1)
    user = _versions(
        [
            _row(id="gone", subject_id="u", object_id="a", valid_to=T, evidence=["e1", "e2"]),
            _row(id="holds", subject_id="u", object_id="b", evidence=["e2"]),
        ]
    )
    far = _versions([_row(id="far", subject_id="a", object_id=None, valid_to=T, evidence=["e3"])])

    def fetch(e: str, as_object: bool) -> xp.Versions:
        return {("u", False): user, ("a", False): far}.get((e, as_object)) or _versions([])

    walked = xp.walk(fetch, ["u"], set(), known_at=v)
    walked.append(xp.Segment(far, far.believed(v), 2))  # a hop-2 version, ended too
    ended = xp.Ended.of(walked, [s.versions.covers(v) for s in walked])
    # e1 cites only an ended hop-1 version; e2 also one that holds; e3 an ended hop-2 one
    assert ended.mask(["e1", "e2", "e3", "e4"]).tolist() == [True, False, False, False]


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


def _key(r: Any) -> tuple[Any, ...]:
    vf = r["valid_from"]
    return (r["subject"], r["predicate"], vf is not None, vf or T, r["object"])


_OBJECTS = ["Rome", "Oslo", "Lima"]


_History = tuple[list[dict[str, Any]], list[dict[str, Any]], set[str], set[str]]


@st.composite
def _histories(draw: st.DrawFn) -> _History:
    """Stored versions of one subject, a write's new rows, and which stored ones it
    expires and deletes."""

    def row(i: int, tag: str) -> dict[str, Any]:
        day = draw(st.integers(0, 4))
        return _row(
            id=f"{tag}{i}", subject="u", predicate=draw(st.sampled_from(["a", "b"])),
            object=draw(st.sampled_from(_OBJECTS)), subject_id="u", object_id=None,
            valid_from=None if day == 0 else T + timedelta(days=day),
            valid_to=draw(st.sampled_from([None, T + timedelta(days=9)])),
            recorded_at=T - timedelta(days=draw(st.integers(0, 3))),
            evidence=draw(st.lists(st.sampled_from(["e1", "e2", "e3"]), max_size=2, unique=True)),
            words=draw(st.sets(st.sampled_from(["w1", "w2", "w3"]), max_size=2)),
        )  # fmt: skip

    stored = sorted((row(i, "s") for i in range(draw(st.integers(0, 12)))), key=_key)
    new = [row(i, "n") for i in range(draw(st.integers(0, 4)))]
    ids = [r["id"] for r in stored]
    expired = set(draw(st.lists(st.sampled_from(ids), unique=True))) if ids else set()
    vanished = set(draw(st.lists(st.sampled_from(ids), unique=True))) if ids else set()
    return stored, new, expired - vanished, vanished


@given(_histories())
@settings(max_examples=300, deadline=None)
def test_patched_versions_answer_as_versions_of_the_rows_would(h: _History) -> None:
    stored, new, expired, vanished = h
    at = T + timedelta(days=1)
    before = _versions([dict(r) for r in stored])
    before.lexical({"w1"})  # built indexes are patched, not rebuilt
    before.evidence(np.ones(len(before), dtype=np.bool_))
    before.position("")  # so is the position of each id
    patched = before.patched(
        inserted=new, expired=dict.fromkeys(expired, at), vanished=vanished, order=_key
    )
    first = {r["id"] for r in new[:1]}
    again = patched.patched(inserted=[], expired={}, vanished=first, order=_key)
    rows = [({**r, "expired_at": at} if r["id"] in expired else r)
            for r in stored if r["id"] not in vanished]  # fmt: skip
    rows = sorted(rows + new, key=_key)  # stable: stored ones first among equal keys
    want = _versions(rows)
    assert [_key(r) for r in patched.rows] == [_key(r) for r in want.rows]
    assert sorted(patched.rows, key=lambda r: r["id"]) == sorted(rows, key=lambda r: r["id"])
    order = [r["id"] for r in patched.rows]
    assert [patched.position(i) for i in order] == list(range(len(order)))
    assert all(patched.position(i) is None for i in vanished)
    left = [r["id"] for r in again.rows]
    assert [again.position(i) for i in left] == list(range(len(left)))
    assert all(again.position(r["id"]) is None for r in new[:1])
    rank = [want.ids.index(i) for i in order]  # ties among equal keys may differ
    for kt in (T - timedelta(days=2), T, at, T + timedelta(days=5)):
        assert sorted(rank[i] for i in patched.believed(kt)) == want.believed(kt).tolist()
    for v in (T, T + timedelta(days=3), T + timedelta(days=10)):
        got = sorted(rank[i] for i in np.flatnonzero(patched.covers(v)))
        assert got == np.flatnonzero(want.covers(v)).tolist()
    for words in ({"w1"}, {"w2", "w3"}):
        got = patched.lexical(words)
        assert [float(got[order.index(i)]) for i in want.ids] == want.lexical(words).tolist()
    keep = np.array([i % 2 == 0 for i in range(len(rows))], dtype=np.bool_)
    mine = np.array([keep[want.ids.index(i)] for i in order], dtype=np.bool_)
    cited_got, cited_want = patched.evidence(mine), want.evidence(keep)
    for e in ("e1", "e2", "e3"):
        g, w = patched.code(e), want.code(e)
        assert (g is not None and bool(cited_got[g])) == (w is not None and bool(cited_want[w]))


@given(st.lists(st.integers(0, 30), max_size=40))
def test_rows_are_spliced_in_the_same_way_few_or_many(at: list[int]) -> None:
    from palimpsest.recall._versions import _spliced

    at = sorted(at)
    base = list(range(30))
    items = [f"x{j}" for j in range(len(at))]
    want: list[object] = []
    for j, b in enumerate([*base, None]):
        want += [x for x, a in zip(items, at, strict=True) if a == j]
        if b is not None:
            want.append(b)
    assert _spliced(list(base), at, items) == want
