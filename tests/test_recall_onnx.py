"""The question encoder on onnxruntime gives torch's vectors, and falls back to torch.

    >>> SentenceTransformerEmbedder().embed(["when does my sister arrive?"])  # ONNX once exported

Real parts: the installed all-MiniLM-L6-v2, a real `torch.onnx` export into the
default cache (done once per machine; the engine does it in the background) and
a real onnxruntime session, compared with sentence-transformers' torch vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest.recall import _onnx
from palimpsest.recall.embedder import SentenceTransformerEmbedder

pytest.importorskip("onnxruntime")

TEXTS = [
    "what did Caroline paint last summer?",
    "have I stopped using cigarettes?",
    "Melanie: I ran a charity race for mental health last Saturday!",
    "ok",
    "How long has Caroline had her current group of friends for? " * 3,
]


def _ready(emb: SentenceTransformerEmbedder) -> None:
    """Export (synchronously) if the default cache lacks the graph, then open it."""
    digest = emb.identity().split(":", 1)[1]
    path = _onnx.default_cache_dir() / f"{digest[:32]}.onnx"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _onnx.export(str(emb.model_path), str(path))
    emb.embed(["warm"])  # opens and checks the session
    assert emb._onnx is not None and emb._onnx.ready


def test_onnx_vectors_match_torch() -> None:
    onnx, torch = SentenceTransformerEmbedder(), SentenceTransformerEmbedder(onnx=False)
    _ready(onnx)
    got = np.concatenate([onnx.embed([t]) for t in TEXTS])
    want = np.concatenate([torch.embed([t]) for t in TEXTS])
    assert got.shape == (len(TEXTS), 384)
    assert np.min(np.sum(got * want, axis=1)) >= _onnx.AGREE
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # a few texts at once (padding) agree too
    both = onnx.embed(TEXTS[:3])
    assert np.min(np.sum(both * want[:3], axis=1)) >= _onnx.AGREE


def test_unusable_cache_keeps_torch(tmp_path: Path) -> None:
    """A cache that cannot be written, or a graph that disagrees, leaves torch answering."""
    torch = SentenceTransformerEmbedder(onnx=False)
    want = torch.embed(TEXTS[:1])
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    enc = _onnx.OnnxQueries(torch.model_path, "0" * 64, cache_dir=blocked / "onnx")
    model = _model(torch)
    assert enc.encode(model.tokenizer, TEXTS[:1], 256, torch.embed) is None
    enc._export()  # what the background thread runs
    assert enc._state == "off"
    # a file that is no graph of this model is refused, not used
    bad = _onnx.OnnxQueries(torch.model_path, "1" * 64, cache_dir=tmp_path)
    (tmp_path / ("1" * 32 + ".onnx")).write_bytes(b"garbage")
    assert bad.encode(model.tokenizer, TEXTS[:1], 256, torch.embed) is None
    assert bad._state == "off"
    assert torch.embed(TEXTS[:1]) == pytest.approx(want)


def _model(emb: SentenceTransformerEmbedder) -> Any:
    from palimpsest.recall.embedder import _load_sentence_transformer

    return _load_sentence_transformer(emb.model_path, "cpu")
