"""`Memory.reindex` and `palimpsest reindex [--re-embed]`: a memory changes model.

pytest tests/test_reindex.py -m "not models"    # fakes only
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from palimpsest import Memory
from palimpsest.errors import EmbedderMismatch, ValidationError
from palimpsest.recall import Embedder, HashingEmbedder

from .conftest import Clock

TEXTS = [
    "The pottery class made a blue bowl.",
    "My sister Mira lands in Lisbon on Friday.",
    "I switched my dentist appointment to Tuesday.",
    "We played chess in the park until dark.",
    "The violin lesson moved to the music school.",
]


class OtherModel:
    """A second model (another identity): hashing vectors, rotated so none match the first."""

    name = "other-model"
    dim = 384

    def __init__(self) -> None:
        self._base = HashingEmbedder(ngrams=(3,))
        self.calls = 0

    def identity(self) -> str:
        return "other-model@sha256:0000"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls += 1
        return np.roll(self._base.embed(texts), 7, axis=1)


def _open(path: Path, clock: Clock, embedder: Embedder | None, **kw: object) -> Memory:
    return Memory.open(path, clock=clock, extractor=None, embedder=embedder, **kw)  # type: ignore[arg-type]


def _stored(mem: Memory) -> dict[str, npt.NDArray[np.float32]]:
    ids, emb, _ = mem._store.recall.embeddings(mem.namespace)
    return dict(zip(ids, emb, strict=True))


def _small(path: Path, clock: Clock) -> None:
    with _open(path, clock, HashingEmbedder()) as m:
        m.remember_many([{"text": t, "session": "s1"} for t in TEXTS])


def test_other_model_is_refused_until_re_embedded(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    _small(path, clock)
    other = OtherModel()
    assert isinstance(other, Embedder)
    with pytest.raises(EmbedderMismatch) as err:
        _open(path, clock, other)
    assert err.value.code == "embedder_mismatch"
    seen: list[tuple[int, int]] = []
    with _open(path, clock, other, reembed=True) as m:
        report = m.reindex(re_embed=True, batch_size=2, progress=lambda d, t: seen.append((d, t)))
        assert report["re_embedded"] == len(TEXTS) and report["embedder"] == other.identity()
        stored = _stored(m)
    assert seen[-1] == (len(TEXTS), len(TEXTS)) and len(seen) == 3  # batches of 2
    rows = other.embed(TEXTS)  # every vector is the new model's
    by_text = dict(zip(TEXTS, rows, strict=True))
    with _open(path, clock, other) as m:  # now opens without reembed
        hits = m.recall("pottery bowl")
        assert hits and hits[0].text == TEXTS[0] and hits[0].channels["dense"] > 0.3
        texts = {k: r["text"] for k, r in m._store.recall.episode_rows(stored).items()}
    assert len(stored) == len(TEXTS)
    for eid, vec in stored.items():
        assert np.allclose(vec, by_text[texts[eid]], atol=1e-5)
    with pytest.raises(EmbedderMismatch):  # and the first model is the stranger now
        _open(path, clock, HashingEmbedder())


def test_reindex_without_re_embed_rebuilds_search_only(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    _small(path, clock)
    emb = HashingEmbedder()
    with _open(path, clock, emb) as m:
        before = _stored(m)
        report = m.reindex()
        assert report == {
            "namespaces": 1,
            "episodes": len(TEXTS),
            "re_embedded": 0,
            "vector_path": {"default": "exact"},
            "hnsw_generation": None,
            "embedder": emb.identity(),
            "names_embedded": 0,
            "statements_embedded": 0,
        }
        assert m.recall("Lisbon Friday")[0].text == TEXTS[1]
        after = _stored(m)
    assert before.keys() == after.keys()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_re_embed_needs_an_embedder_and_a_sane_batch(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    _small(path, clock)
    with _open(path, clock, None) as m:
        with pytest.raises(ValidationError):
            m.reindex(re_embed=True)
        assert m.reindex()["re_embedded"] == 0  # words only: the full-text index alone
        assert m.recall("chess park")[0].text == TEXTS[3]
    with _open(path, clock, HashingEmbedder()) as m, pytest.raises(ValidationError):
        m.reindex(batch_size=0)


def test_re_embed_replaces_the_hnsw_generation(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    _small(path, clock)
    with _open(path, clock, HashingEmbedder(), vector_threshold=2) as m:
        m.reindex()  # builds the HNSW generation (recall never does)
        assert m.vector_index_kind() == "hnsw"
        g1 = m._store.vectors.vector_generation()
    other = OtherModel()
    with _open(path, clock, other, reembed=True, vector_threshold=2) as m:
        report = m.reindex(re_embed=True)
        assert report["vector_path"] == {"default": "hnsw"}
        assert (
            g1 is not None
            and report["hnsw_generation"] == m._store.vectors.vector_generation() > g1
        )
        hit = m.recall("violin lesson")[0]
        assert hit.text == TEXTS[4] and hit.channels["dense"] > 0.3


@pytest.mark.models
def test_cli_reindex_re_embed_moves_an_fp32_memory(tmp_path: Path, clock: Clock) -> None:
    """A memory embedded by the fp32 MiniLM (torch, the default before the int8 graph) is
    refused by the command line at its default model, then re-embedded with a progress bar."""
    pytest.importorskip("sentence_transformers")
    from palimpsest.recall import OnnxEmbedder, SentenceTransformerEmbedder

    path = tmp_path / "m"
    fp32 = SentenceTransformerEmbedder()
    with _open(path, clock, fp32) as m:
        m.remember_many([{"text": t, "session": "s1"} for t in TEXTS])
    with pytest.raises(EmbedderMismatch) as err:  # Memory at its defaults: the int8 model
        Memory.open(path, clock=clock, extractor=None)
    assert err.value.details["recorded"] == fp32.identity()
    cmd = [sys.executable, "-m", "palimpsest.cli", "--path", str(path), "reindex"]
    refused = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "embedder_mismatch" in refused.stderr
    done = subprocess.run([*cmd, "--re-embed"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"re-embedded {len(TEXTS)}" in done.stdout
    int8 = OnnxEmbedder()
    with Memory.open(path, clock=clock, extractor=None) as m:  # the int8 MiniLM is its model now
        assert m._store.recall.embedder_identity() == int8.identity()
        hit = m.recall("when does my sister Mira land in Lisbon?", min_score=0)[0]
        assert hit.text == TEXTS[1] and hit.channels["dense"] > 0.3
        stored = _stored(m)
        texts = {k: r["text"] for k, r in m._store.recall.episode_rows(stored).items()}
    want = dict(zip(TEXTS, int8.embed(TEXTS), strict=True))
    assert all(np.allclose(v, want[texts[k]], atol=1e-4) for k, v in stored.items())
