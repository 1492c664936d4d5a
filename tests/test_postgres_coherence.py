"""Two workers on one PostgreSQL database: each one's caches follow the other's writes.

    >>> a, b = _open(pg_url, clock), _open(pg_url, clock)   # two Memory objects, own caches
    >>> b.remember("the cellist plays on Friday")
    >>> a.recall("cellist")                                  # finds it: a read after an
    ...                                                      # acknowledged write sees it

Two `Memory.open(url)` in one process keep caches of their own, as two processes do
(issue 28): recall's per-namespace index (episodes remembered, erased, archived
elsewhere), the predicate vocabulary (also under the write lock), contests and merges
(`AsOf`), the entities recall's names denote and its statement vectors. A worker's
next call after the other's write returns must answer as if it had made that write.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from palimpsest import Memory
from palimpsest.recall import HashingEmbedder
from palimpsest.recall._statements import statement_key

from .conftest import Clock


def _open(url: str, clock: Clock) -> Memory:
    return Memory.open(url, clock=clock, extractor=None, embedder=HashingEmbedder())


@pytest.fixture
def pair(pg_url: str, clock: Clock) -> Iterator[tuple[Memory, Memory]]:
    with _open(pg_url, clock) as a, _open(pg_url, clock) as b:
        yield a, b


def _episode_ids(mem: Memory, query: str) -> set[str]:
    return {h.episode_id for h in mem.recall(query, k=10, min_score=0.0) if h.episode_id}


def test_an_episode_remembered_elsewhere_is_recalled(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    mine = a.remember("the cellist rehearses at the old church", session="s")
    assert mine.id in _episode_ids(a, "cellist church")  # A's index is loaded now
    theirs = b.remember("the cellist bought a new bow in Vienna", session="s")
    assert theirs.id in _episode_ids(b, "cellist bow Vienna")
    assert theirs.id in _episode_ids(a, "cellist bow Vienna")
    # and A's own next episode still joins its index after the foreign one
    again = a.remember("the cellist tunes before every concert", session="s")
    assert again.id in _episode_ids(a, "cellist tunes concert")
    assert theirs.id in _episode_ids(a, "cellist bow Vienna")


def test_an_episode_erased_elsewhere_is_not_recalled(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    keep = a.remember("the violinist practises scales every morning", session="s")
    gone = a.remember("the violinist's door code is 4471", session="s")
    assert gone.id in _episode_ids(a, "violinist door code")
    assert gone.id in _episode_ids(b, "violinist door code")
    b.erase(gone.id, reason="a secret")
    assert gone.id not in _episode_ids(b, "violinist door code")
    found = _episode_ids(a, "violinist door code")
    assert gone.id not in found
    assert keep.id in _episode_ids(a, "violinist scales morning")
    for h in a.recall("violinist door code", k=10, min_score=0.0):
        assert "4471" not in (h.text or "")


def test_a_cardinality_defined_elsewhere_is_honoured(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    a.assert_fact("mira", "mentor", "ada", valid_from=None)  # defined on first use
    assert a.predicate("mentor").cardinality == "many"  # A's vocabulary is loaded
    b.define_predicate("mentor", "one")
    assert a.predicate("mentor").cardinality == "one"
    a.assert_fact("mira", "mentor", "grace", valid_from=None)
    for mem in (a, b):
        now = [f.object for f in mem.facts("mira", "mentor")]
        assert now == ["grace"], now


def test_a_write_under_the_lock_uses_the_committed_definition(
    pair: tuple[Memory, Memory],
) -> None:
    """The definition changes between A's call starting and its write lock: the write
    still honours it (Vocabulary re-checked under the lock)."""
    a, b = pair
    a.assert_fact("mira", "mentor", "ada", valid_from=None)
    assert a.predicate("mentor").cardinality == "many"
    ents = a._entities
    real = ents.prefetch
    done: list[bool] = []

    def prefetch(*args: object, **kw: object) -> object:
        if not done:  # after A read its vocabulary, before it takes the write lock
            done.append(True)
            b.define_predicate("mentor", "one")
        return real(*args, **kw)  # type: ignore[arg-type]

    ents.prefetch = prefetch  # type: ignore[method-assign]
    try:
        a.assert_fact("mira", "mentor", "grace", valid_from=None)
    finally:
        del ents.prefetch
    assert done
    for mem in (a, b):
        assert [f.object for f in mem.facts("mira", "mentor")] == ["grace"]


def test_an_alias_defined_elsewhere_is_found(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    assert a.predicate("lives_in").name == "lives_in"
    b.define_predicate("mentored_by", "one", aliases=["is mentored by"])
    assert a.predicate("is mentored by").name == "mentored_by"
    a.assert_fact("mira", "is mentored by", "ada", valid_from=None)
    assert [f.predicate for f in b.facts("mira")] == ["mentored_by"]


def test_an_archived_episode_elsewhere_leaves_recall(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    ep = a.remember("the oboist lost a reed at the station", session="s")
    assert ep.id in _episode_ids(a, "oboist reed station")
    store = b._ctx.store
    with store.write():  # what consolidation's decay and dedupe do
        store.consolidation.archive([ep.id])
    assert ep.id not in _episode_ids(a, "oboist reed station")


V = "2025-01-01T00:00:00Z"  # a valid time after every start used below


def _objects(mem: Memory, s: str, p: str | None = None, **kw: object) -> list[str]:
    return sorted(f.object or "" for f in mem.facts(s, p, valid_at=V, **kw))  # type: ignore[arg-type]


def test_a_contest_written_elsewhere_is_read(pair: tuple[Memory, Memory], clock: Clock) -> None:
    a, b = pair
    for obj in ("Initech", "Globex"):
        a.assert_fact(
            "Bob", "works_at", obj, valid_from="2024-01-01T00:00:00Z", author_kind="tool",
            quarantined=False,
        )  # fmt: skip
    clock.tick()
    assert [f.status for f in a.facts("Bob", "works_at", valid_at=V)] == ["current"]  # cached
    clock.tick()
    assert b.consolidate().counts == {"contested": 1}
    clock.tick()
    assert [f.status for f in a.facts("Bob", "works_at", valid_at=V)] == ["contested"]
    hits = [
        h for h in a.recall("Where does Bob work?", valid_at=V, min_score=0) if h.kind == "fact"
    ]
    assert hits and {h.status for h in hits} == {"contested"}


def _hits(mem: Memory, query: str) -> list[tuple[str, str, float]]:
    return [(h.kind, h.text, round(h.score, 6)) for h in mem.recall(query, min_score=0)]


def test_a_merge_made_elsewhere_keeps_the_past(pair: tuple[Memory, Memory], clock: Clock) -> None:
    a, b = pair
    a.assert_fact("my sister", "lives_in", "Auckland", valid_from="2024-01-01T00:00:00Z")
    a.assert_fact("Mira", "job_title", "paramedic", valid_from=None)
    a.assert_fact("user", "sibling", "Mira", valid_from=None)
    before = clock.tick()
    assert _objects(a, "my sister", known_at=before) == ["Auckland"]  # merges read (none)
    assert _objects(a, "Mira", "job_title") == ["paramedic"]
    questions = ("Where does Mira live?", "What does my sister do?")
    for q in questions:  # A holds the entities these name
        a.recall(q, min_score=0)
    clock.tick()
    assert b.consolidate().counts == {"merged": 1}
    clock.tick()
    for q in questions:  # first thing after the merge: the names A holds denote others now
        assert _hits(a, q) == _hits(b, q)
    # now: one entity by both names; as of before the merge, each name as it was
    assert _objects(a, "my sister", "job_title") == ["paramedic"]
    assert _objects(a, "Mira", "lives_in") == ["Auckland"]
    assert _objects(a, "my sister", known_at=before) == ["Auckland"]
    assert _objects(a, "Mira", known_at=before) == ["paramedic"]
    for q in questions:
        assert _hits(a, q) == _hits(b, q)


def test_a_fact_erased_elsewhere_is_not_recalled(pair: tuple[Memory, Memory]) -> None:
    a, b = pair
    f = a.assert_fact("Mira", "likes", "the secret jazz club", valid_from=None)
    hits = a.recall("What does Mira like?", min_score=0)
    assert any(h.kind == "fact" and h.fact_id == f.id for h in hits)
    held = a._recall._facts._statement_vectors  # type: ignore[attr-defined]
    key = statement_key("default", "Mira", "likes", "the secret jazz club")
    assert held and any(key in k for k in held)  # A holds its statement's vector
    b.erase(f.id, reason="private")
    hits = a.recall("What does Mira like?", min_score=0)
    assert not any(h.kind == "fact" and h.fact_id == f.id for h in hits)
    assert not any("secret" in h.text for h in hits)
    held = a._recall._facts._statement_vectors  # type: ignore[attr-defined]
    assert not any(key in k for k in held or ())  # and no longer: erased there
