"""Vector search behind one interface: exact numpy and Kùzu HNSW give the same answers.

pytest tests/test_vectors.py            # HashingEmbedder only; real Kùzu on disk
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from palimpsest import Memory
from palimpsest.errors import ValidationError
from palimpsest.recall import HashingEmbedder
from palimpsest.recall._vectors import (
    DEFAULT_VECTOR_THRESHOLD,
    ExactVectors,
    VectorIndex,
    choose,
    recall_at,
)

from .conftest import Clock

WORDS = [
    *("pottery", "jazz", "Lisbon", "flight", "sister", "dentist", "garden", "violin"),
    *("marathon", "bakery", "chess", "Berlin", "Oslo", "kayak", "novel", "piano"),
    *("tennis", "recipe", "museum", "hiking", "coffee", "train"),
]
QUERIES = ["pottery class", "flight to Lisbon", "violin lesson", "chess in Oslo", "kayak trip"]


def _texts(n: int) -> list[str]:
    rng = random.Random(3)
    return [" ".join(rng.sample(WORDS, 4)) + f" entry {i}" for i in range(n)]


def _open(path: Path, clock: Clock, **kw: object) -> Memory:
    return Memory.open(path, clock=clock, extractor=None, embedder=HashingEmbedder(), **kw)  # type: ignore[arg-type]


def _fill(mem: Memory, texts: list[str]) -> None:
    mem.remember_many(
        [{"text": t, "session": f"s{i // 10}"} for i, t in enumerate(texts)]  # type: ignore[misc]
    )


def _vectors(mem: Memory) -> VectorIndex:
    return mem._index.index(mem.namespace).vectors


# --- the exact implementation --------------------------------------------------------------
def test_exact_top_and_append() -> None:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(50, 8)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    vx = ExactVectors(8)
    vx.append(m[:30], m[:30])
    vx.append(m[30:], m[30:])  # grows past its first capacity without losing rows
    assert len(vx) == 50
    rows, cos = vx.top(m[7], 5)
    assert rows[0] == 7 and cos[0] == pytest.approx(1.0, abs=1e-5)
    assert rows.tolist() == np.argsort(-(m @ m[7]), kind="stable")[:5].tolist()
    turn, ctx = vx.cosines(m[7])
    assert turn.shape == ctx.shape == (50,)
    assert recall_at(vx, vx, m[:5], 5) == 1.0


def test_threshold_chooses_the_path() -> None:
    assert choose(DEFAULT_VECTOR_THRESHOLD, DEFAULT_VECTOR_THRESHOLD) == "exact"
    assert choose(DEFAULT_VECTOR_THRESHOLD + 1, DEFAULT_VECTOR_THRESHOLD) == "hnsw"


def test_threshold_option_is_validated(tmp_path: Path, clock: Clock) -> None:
    with pytest.raises(ValidationError):
        _open(tmp_path / "m", clock, vector_threshold=-1)
    with pytest.raises(ValidationError):
        _open(tmp_path / "m", clock, vector_threshold="many")


# --- HNSW against exact on one memory ------------------------------------------------------
@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Clock]:
    path = tmp_path_factory.mktemp("vec") / "m"
    clock = Clock()
    with _open(path, clock) as mem:
        _fill(mem, _texts(300))
    return path, clock


def test_hnsw_and_exact_agree(built: tuple[Path, Clock]) -> None:
    path, clock = built
    queries = HashingEmbedder().embed(QUERIES + _texts(300)[:20])
    with _open(path, clock) as mem:
        exact = _vectors(mem)
        assert exact.kind == "exact" and mem.vector_index_kind() == "exact"
        want = {q: [h.episode_id for h in mem.recall(q, k=5, min_score=0)] for q in QUERIES}
        truth = [exact.top(q, 10) for q in queries]
    with _open(path, clock, vector_threshold=100) as mem:
        # above the threshold with no generation: exact, and recall builds nothing
        assert _vectors(mem).kind == "exact"
        same = {q: [h.episode_id for h in mem.recall(q, k=5, min_score=0)] for q in QUERIES}
        assert same == want and mem._store.vectors.vector_generation() is None
        first = mem.consolidate()
        [built] = [c for c in first.changes if c.step == "index"]
        assert built.action == "indexed" and "no HNSW generation" in built.reason
        g = mem._store.vectors.vector_generation()
        assert g is not None and built.targets == ["default", f"generation {g}"]
        hnsw = _vectors(mem)  # the exact cache made way for the generation
        assert hnsw.kind == "hnsw" and len(hnsw) == 300
        got = {q: [h.episode_id for h in mem.recall(q, k=5, min_score=0)] for q in QUERIES}
        approx = [hnsw.top(q, 10) for q in queries]
        clock.tick()
        again = mem.consolidate()  # fresh enough: no rebuild
        assert not [c for c in again.changes if c.step == "index"]
        assert mem._store.vectors.vector_generation() == g
    # same best hit for every query; the top 5 overlap almost entirely
    for q in QUERIES:
        assert got[q][0] == want[q][0], q
        assert len(set(got[q]) & set(want[q])) >= 4, q
    found = sum(
        len(set(t[0].tolist()) & set(a[0].tolist())) for t, a in zip(truth, approx, strict=True)
    )
    recall10 = found / (10 * len(queries))
    print(f"HNSW recall@10 vs exact on 300 vectors: {recall10:.3f}")
    assert recall10 >= 0.95
    for (tr, tc), (ar, ac) in zip(
        truth, approx, strict=True
    ):  # same cosines for the rows both found
        common = set(tr.tolist()) & set(ar.tolist())
        t = dict(zip(tr.tolist(), tc.tolist(), strict=True))
        a = dict(zip(ar.tolist(), ac.tolist(), strict=True))
        assert all(abs(t[r] - a[r]) < 1e-4 for r in common)


def test_hnsw_sees_new_and_forgets_erased(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    with _open(path, clock) as mem:
        _fill(mem, _texts(120))
    with _open(path, clock, vector_threshold=50) as mem:
        mem.reindex()  # builds the generation, as consolidation does
        assert mem.vector_index_kind() == "hnsw"
        clock.tick()
        ep = mem.remember("The xylophone recital was moved to Thursday.", session="new")
        hits = mem.recall("xylophone recital", k=3)  # a delta row: not in the generation yet
        assert hits and hits[0].episode_id == ep.id
        assert hits[0].channels["dense"] > 0.3
        target = mem.recall("pottery class", k=1, min_score=0)[0]
        assert target.episode_id is not None
        mem.erase(target.episode_id)
        left = mem.recall("pottery class", k=10, min_score=0)
        assert all(h.episode_id != target.episode_id for h in left)
    with _open(path, clock, vector_threshold=50) as mem:  # and after reopening
        assert mem.recall("xylophone recital", k=1)[0].episode_id == ep.id
        left = mem.recall("pottery class", k=10, min_score=0)
        assert all(h.episode_id != target.episode_id for h in left)


def test_large_matrices_give_the_same_cosines_on_two_threads() -> None:
    rng = np.random.default_rng(5)
    n, dim = 25_000, 32  # past the row count where the two matvecs run side by side
    emb = rng.standard_normal((n, dim)).astype(np.float32)
    ctx = rng.standard_normal((n, dim)).astype(np.float32)
    q = rng.standard_normal(dim).astype(np.float32)
    turn, context = ExactVectors.of(emb, ctx).cosines(q)
    assert np.array_equal(turn, np.einsum("ij,j->i", emb, q))
    assert np.array_equal(context, np.einsum("ij,j->i", ctx, q))


def test_consolidation_rebuilds_a_stale_generation_without_erased_rows(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "m"
    with _open(path, clock, vector_threshold=50) as mem:
        _fill(mem, _texts(60))
        assert mem.consolidate(dry_run=True).counts.get("indexed") == 1
        assert mem._store.vectors.vector_generation() is None  # a dry run builds nothing
        mem.consolidate()
        g1 = mem._store.vectors.vector_generation()
        clock.tick()
        _fill(mem, [f"{t} later" for t in _texts(30)])  # 30 of 90 rows newer than g1
        assert mem.vector_index_kind() == "hnsw" and _vectors(mem).delta_size == 30  # type: ignore[attr-defined]
        report = mem.consolidate()
        [c] = [c for c in report.changes if c.step == "index"]
        assert "30 of 90 vectors are newer" in c.reason
        g2 = mem._store.vectors.vector_generation()
        assert g1 is not None and g2 == g1 + 1
        assert _vectors(mem).delta_size == 0  # type: ignore[attr-defined]
        # an episode erased while a generation is built does not stay in it
        vs = mem._store.vectors
        g3 = vs.build_vector_generation(publish=False)
        gone = mem.recall("pottery class", k=1, min_score=0)[0].episode_id
        assert gone is not None
        mem.erase(gone)
        assert gone in vs.generation_ids(g3, "default")
        vs.publish_vector_generation(g3)
        assert vs.vector_generation() == g3 and gone not in vs.generation_ids(g3, "default")
        assert vs.generation_ids(g2, "default") == []  # the replaced one is emptied


def test_a_generation_built_on_replaced_vectors_is_abandoned(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.graph import VectorStore

    build = VectorStore.build_vector_generation

    def racing(vs: VectorStore, *, publish: bool = True) -> int:
        g = build(vs, publish=publish)
        build(vs)  # a reindex publishes its own generation meanwhile
        return g

    path = tmp_path / "m"
    with _open(path, clock, vector_threshold=20) as mem:
        _fill(mem, _texts(30))
        monkeypatch.setattr(VectorStore, "build_vector_generation", racing)
        report = mem.consolidate()
        assert report.counts.get("abandoned") == 1 and "indexed" not in report.counts
        [c] = [c for c in report.changes if c.step == "index"]
        assert c.action == "abandoned" and "rebuilt" in c.reason
        g = mem._store.vectors.vector_generation()
        assert g is not None and mem._store.vectors.generation_ids(g - 1, "default") == []
        assert len(mem._store.vectors.generation_ids(g, "default")) == 30
