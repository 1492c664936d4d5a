"""The in-process BM25 (recall/_bm25.py) scores every text exactly as Kùzu's FTS does.

    >>> rows, scores = ix.words.term("sydney")

Each test writes episodes through the facade, so the search rows and Kùzu's
porter-stemmed FTS index are the real ones, and compares, term by term, the
in-process postings with `QUERY_FTS_INDEX` over the same rows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from palimpsest import Memory
from palimpsest.recall._bm25 import Bm25, tokens

from .conftest import Clock

# punctuation, digits, apostrophes, Kùzu's own stop words (his, old, way, one), stems
# that are stop words (likes -> like), a backslash (not a separator for Kùzu), accents
TEXTS = [
    "I moved to Sydney in June 2024, the city of running gardens.",
    "My sister Mira visits next Friday!! She likes running; his old way.",
    "Über-fast café: naïve résumé, ÄRGER and über.",
    "node.js foo@bar.com doc7 a\\b path C:\\temp sydney SYDNEY",
    "gardens garden gardening Gardens run runs ran runner",
    "I'm don't won't it's can't shouldn't we'd they'll",
    "one two three first second, used uses useful: the named apartment",
    "Flight BA117 on 2024-06-01 (seat 22A), note #4711.",
    "Sydney",
]


def _kuzu(mem: Memory, word: str) -> dict[str, float]:
    mem._store.recall.create_reference_index()  # recall itself never makes it
    return dict(mem._store.recall.term_hits("default", word))


def _mine(mem: Memory, stem: str) -> dict[str, float]:
    ix = mem._index.indexes["default"]
    assert ix.words is not None
    rows, scores = ix.words.term(stem)
    return {ix.ids[int(r)]: float(s) for r, s in zip(rows, scores, strict=True)}


def _vocabulary(mem: Memory) -> list[str]:
    words = {w for t in mem._store.recall.texts("default").values() for w in tokens(t)}
    return sorted(words | {"his", "old", "way", "like", "likes", "the", "cafe", "zqdbdg"})


def _assert_same(mem: Memory) -> int:
    words = _vocabulary(mem)
    compared = 0
    for word, stem in zip(words, mem._store.recall.stems(words), strict=True):
        kuzu, mine = _kuzu(mem, word), _mine(mem, stem)
        assert mine.keys() == kuzu.keys(), word
        for eid, score in kuzu.items():
            assert mine[eid] == pytest.approx(score, rel=1e-12, abs=1e-12), word
        compared += len(kuzu)
    return compared


def _open(path: Path, clock: Clock) -> Memory:
    return Memory.open(path, clock=clock, extractor=None, embedder=None)


def test_scores_equal_kuzu_fts(tmp_path: Path, clock: Clock) -> None:
    with _open(tmp_path / "m", clock) as mem:
        mem.remember_many(
            [{"text": t, "session": f"s{i % 3}", "speaker": "user"} for i, t in enumerate(TEXTS)]
        )
        mem.warm_recall()
        assert _assert_same(mem) > 40


def test_rows_written_after_the_load_are_scored_alike(tmp_path: Path, clock: Clock) -> None:
    with _open(tmp_path / "m", clock) as mem:
        mem.remember_many([{"text": t, "session": "a"} for t in TEXTS[:4]])
        mem.warm_recall()
        for t in TEXTS[4:]:
            clock.tick(minutes=1)
            mem.remember(t, session="b")
        mem.warm_recall()  # applies the staged rows (appended, not rebuilt)
        assert _assert_same(mem) > 30


def test_erased_words_leave_the_index(tmp_path: Path, clock: Clock) -> None:
    with _open(tmp_path / "m", clock) as mem:
        eps = mem.remember_many([{"text": t} for t in TEXTS])
        mem.warm_recall()
        assert _mine(mem, "mira")
        mem.erase(eps[1].id)
        mem.warm_recall()
        assert _mine(mem, "mira") == {}
        _assert_same(mem)


def test_appends_merge_into_the_same_postings() -> None:
    def stem(ws: list[str] | tuple[str, ...]) -> list[str]:
        return [w.rstrip("s") for w in ws]

    texts = [f"alpha beta{i % 7} gammas {'delta ' * (i % 3)}" for i in range(5000)]
    whole = Bm25.build(texts, stem)
    parts = Bm25.build(texts[:1000], stem)
    for at in range(1000, 5000, 700):
        parts.append(texts[at : at + 700])  # merged past the tail limit, tail below it
    for term in ("alpha", "beta3", "gamma", "delta", "nothing"):
        a, b = whole.term(term), parts.term(term)
        assert np.array_equal(a[0], b[0])
        assert np.allclose(a[1], b[1], rtol=1e-12, atol=0)


def test_only_spaces_split_words_as_in_kuzu() -> None:
    def stem(ws: list[str] | tuple[str, ...]) -> list[str]:
        return list(ws)

    bm = Bm25.build(["pots\nbowls mugs", "mugs, cups", None, "cups"], stem)
    assert bm.term("pots\nbowls")[0].tolist() == [0]
    assert bm.term("pots")[0].size == 0
    assert bm.term("mugs")[0].tolist() == [0, 1]
    assert bm.term("cups")[0].tolist() == [1, 3]
    assert bm.lengths.tolist() == [2.0, 2.0, 0.0, 1.0]
    assert bm.docs == 3
    # a NUL marks rows inside a batch: a text holding one is read on its own
    bm = Bm25.build(["x\x00y zebra", "zebra", "w\ty"], stem)
    assert bm.term("x\x00y")[0].tolist() == [0]
    assert bm.term("zebra")[0].tolist() == [0, 1]
    assert bm.term("w\ty")[0].tolist() == [2]
