"""What the write-time embedding worker cost, against the model alone on the same texts.

>>> watch = WorkerWatch(mem)          # after Memory.open, before the writes
>>> mem.assert_many(items); watch.drain()
>>> watch.result(started)             # vectors_s, model_s, ratio, the worker's status

The worker (`palimpsest/recall/embed_worker.py`) embeds entity names and fact
statements on its own thread after each write commits. `WorkerWatch` records every
call the worker's thread makes to the embedder (the texts, in the worker's batches),
and `model_seconds` replays exactly those calls on the model alone afterwards, so
the ratio "time until every vector is stored / the model's own time for those
texts" compares like with like. The memory's own status counts (`spilled`: notes
beyond the queue, left to the worker's backfill; `backfill_pending`; `unloaded`:
never embedded because the model was not loaded) go into the result, so a queue
that defers work says so there and not only in a log.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from palimpsest import Memory

WORKER_THREAD = "palimpsest-embed"


class WorkerWatch:
    """Records the embedding worker's calls to the model (its thread only)."""

    def __init__(self, mem: Memory) -> None:
        self.mem = mem
        self.calls: list[list[str]] = []
        emb = mem._embed._embedder
        self.embedder = emb
        if emb is None:
            return
        real = emb.embed
        self._real = real

        def spy(texts: Sequence[str]) -> npt.NDArray[np.float32]:
            if threading.current_thread().name == WORKER_THREAD:
                self.calls.append(list(texts))
            return real(texts)

        emb.embed = spy  # type: ignore[method-assign]

    def load_model(self) -> float:
        """Load the model as a user's process has it (a recall or a remember did):
        the worker then runs beside the writes. Seconds it took."""
        if self.embedder is None:
            return 0.0
        t0 = time.perf_counter()
        self._real(["warm up the model"])
        return time.perf_counter() - t0

    def reset(self) -> dict[str, int]:
        """Start a stage: forget the calls; the worker's counts so far."""
        self.calls = []
        return self.mem._embed.status()

    def drain(self) -> float:
        """Wait for the worker; with the model never loaded (`--cold-model`) there is
        no worker to wait for, and draining would load it."""
        if not getattr(self.embedder, "loaded", True):
            return 0.0
        t0 = time.perf_counter()
        self.mem._embed.drain()
        return time.perf_counter() - t0

    def model_seconds(self) -> float:
        """The model alone on the worker's calls, replayed in order (no text cache:
        the embedder's small-call LRU is bypassed)."""
        emb = self.embedder
        if emb is None or not self.calls:
            return 0.0
        encode = getattr(emb, "_encode", self._real)
        t0 = time.perf_counter()
        for texts in self.calls:
            encode(texts)
        return time.perf_counter() - t0

    def result(self, started: float, before: dict[str, int]) -> dict[str, Any]:
        """After `drain`: seconds from `started` (the stage's first write) until every
        vector was stored, the model's own time for those texts, and their ratio."""
        vectors_s = time.perf_counter() - started
        status = self.mem._embed.status()
        model_s = self.model_seconds()
        delta = {k: status[k] - before.get(k, 0) for k in status if k not in ("queued",)}
        delta["backfill_pending"] = status["backfill_pending"]
        delta["queued"] = status["queued"]
        return {
            "vectors_stored_s": round(vectors_s, 2),
            "model_alone_s": round(model_s, 2),
            "model_texts": sum(len(c) for c in self.calls),
            "vectors_ratio_to_model": round(vectors_s / model_s, 2) if model_s else None,
            "worker": delta,
            # every note handed over got its vector (none left to reindex)
            "all_vectors_stored": status["backfill_pending"] == 0
            and status["queued"] == 0
            and delta["unloaded"] == 0,
        }
