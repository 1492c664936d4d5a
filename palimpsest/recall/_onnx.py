"""A sentence model's transformer run by onnxruntime, for the few texts of a recall.

    >>> enc = OnnxQueries(model_dir, digest)     # cheap; exports in the background once
    >>> enc.encode(tokenizer, ["when does my sister arrive?"])   # None until ready

Why: a recall embeds one short question, and torch's eager per-operator cost
dominates such a tiny input (LoCoMo questions on one core of a loaded machine:
torch via sentence-transformers 191-247 ms median, onnxruntime 44-80 ms;
bench/README.md "Issue 17, session 10"). The graph is exported from the
installed model's own weights by `torch.onnx` (no network, no file shipped),
once per model digest, into a cache directory, in a subprocess so that
tracing never touches the process's torch state; until the file exists (or if
onnxruntime/onnx are missing, or the export fails) the caller keeps using torch.
Before first use the session's vectors are checked against torch's on probe
sentences (cosine >= `AGREE`): the same vectors the stored ones were made
with, so stored and query vectors stay comparable.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["AGREE", "OnnxQueries", "default_cache_dir", "export"]

AGREE = 0.9999  # measured: min cosine 0.9999999 on 200 LoCoMo questions and 200 turns
_PROBES = ("when does my sister arrive?", "I quit smoking three months ago.", "ok")
_STALE_LOCK = 600.0  # seconds after which an abandoned export lock is ignored
_LOOK_AGAIN = 20.0  # seconds between looks for a graph another process is exporting
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def default_cache_dir() -> Path:
    """Where exported graphs live: ``~/.cache/palimpsest/onnx``."""
    return Path.home() / ".cache" / "palimpsest" / "onnx"


def export(model_dir: str, out: str) -> None:
    """Export the transformer under `model_dir` to `out` (atomically: tmp + rename)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    f = tok(["a probe sentence"], return_tensors="pt")
    tmp = f"{out}.{os.getpid()}.tmp"
    axes = {k: {0: "batch", 1: "tokens"} for k in (*_INPUTS, "hidden")}
    with torch.inference_mode():
        torch.onnx.export(
            _Hidden(model),
            tuple(f[k] for k in _INPUTS),
            tmp,
            input_names=list(_INPUTS),
            output_names=["hidden"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, out)


class OnnxQueries:
    """Mean-pooled, normalised vectors from an exported graph, once it is ready."""

    def __init__(self, model_dir: Path, digest: str, cache_dir: Path | None = None) -> None:
        self._model_dir = model_dir
        self._file = (cache_dir or default_cache_dir()) / f"{digest[:32]}.onnx"
        self._session: Any = None
        self._state = "new"  # new -> exporting -> ready | off
        self._next_look = 0.0  # monotonic time before which a missing file is not looked for
        self._lock = threading.Lock()

    @property
    def ready(self) -> bool:
        return self._state == "ready"

    def encode(
        self,
        tokenizer: Any,
        texts: Sequence[str],
        max_length: int,
        reference: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    ) -> npt.NDArray[np.float32] | None:
        """Vectors of `texts`, or None while the graph is not (or never will be) usable;
        `reference` (torch) checks the session once before it is trusted."""
        if self._state != "ready" and not self._start(tokenizer, max_length, reference):
            return None
        return self._run(tokenizer, texts, max_length)

    def _run(
        self, tokenizer: Any, texts: Sequence[str], max_length: int
    ) -> npt.NDArray[np.float32]:
        f = tokenizer(
            list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="np"
        )
        feed = {k: np.asarray(f[k], dtype=np.int64) for k in _INPUTS}
        hidden = self._session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        out: npt.NDArray[np.float32] = (pooled / norms).astype(np.float32)
        return out

    def _start(
        self,
        tokenizer: Any,
        max_length: int,
        reference: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    ) -> bool:
        """Open and check the graph if its file exists; else start one export (a
        daemon thread driving a subprocess). True once the session is trusted."""
        with self._lock:
            if self._state == "off" or time.monotonic() < self._next_look:
                return False
            self._next_look = time.monotonic() + _LOOK_AGAIN
            if self._file.exists():
                return self._open(tokenizer, max_length, reference)
            if self._state == "new":
                self._state = "exporting"
                threading.Thread(target=self._export, daemon=True).start()
            return False

    def _open(
        self,
        tokenizer: Any,
        max_length: int,
        reference: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    ) -> bool:
        try:
            import onnxruntime as ort  # type: ignore[import-untyped]

            so = ort.SessionOptions()
            so.intra_op_num_threads = 1  # a query is a handful of tokens (see embedder._SMALL)
            so.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(self._file), so, providers=["CPUExecutionProvider"]
            )
            got = self._run(tokenizer, _PROBES, max_length)
            want = reference(_PROBES)
            agree = float(np.min(np.sum(got * want, axis=1)))
        except Exception:  # a broken file or runtime: torch keeps answering
            agree = -1.0
        self._state = "ready" if agree >= AGREE else "off"
        if self._state == "off":
            self._session = None
        return self._state == "ready"

    def _export(self) -> None:
        """One process exports per cache file (an exclusive lock file); the others wait
        for its result at their next encode."""
        try:
            import onnx  # noqa: F401  # torch.onnx needs both; without them stay on torch
            import onnxruntime  # noqa: F401
        except ImportError:
            self._state = "off"
            return
        lock = self._file.with_suffix(".lock")
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            if lock.exists() and time.time() - lock.stat().st_mtime > _STALE_LOCK:
                lock.unlink(missing_ok=True)
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            self._state = "new"  # another process exports: look again later
            return
        except OSError:
            self._state = "off"  # no writable cache: torch it is
            return
        try:
            os.close(fd)
            code = "import sys; from palimpsest.recall._onnx import export; export(*sys.argv[1:])"
            done = subprocess.run(
                [sys.executable, "-c", code, str(self._model_dir), str(self._file)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=900,
                check=False,
                env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
            )
            self._state = "new" if done.returncode == 0 else "off"
        except (OSError, subprocess.SubprocessError):
            self._state = "off"
        finally:
            lock.unlink(missing_ok=True)
