"""Near-identical episodes: which copies fold into which episode kept.

    >>> duplicates(rows, new={"ep_2"}, known={})
    [Duplicate(id='ep_2', canonical='ep_1', similarity=1.0)]

Within one namespace and speaker, an episode is a copy of an earlier one when
their texts are equal once case and spacing are folded (the stored content
fingerprint) or, when vectors are given, when their cosine similarity is at
least `threshold`. The earliest recorded episode is kept; a copy of a copy
points at the first. Short texts ("ok", "thanks!") are never folded: saying
the same short thing twice is two events, not one memory stored twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

MIN_LENGTH = 24
THRESHOLD = 0.97
_BLOCK = 512  # candidates per matrix product


@dataclass(frozen=True)
class Duplicate:
    id: str
    canonical: str
    similarity: float


def _order(r: Mapping[str, Any]) -> tuple[Any, str]:
    return (r["recorded_at"], r["id"])


def duplicates(
    rows: Sequence[Mapping[str, Any]],
    *,
    new: set[str] | None,
    known: Mapping[str, str],
    vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    threshold: float = THRESHOLD,
    min_length: int = MIN_LENGTH,
) -> list[Duplicate]:
    """Copies not folded yet. `rows`: id, speaker, fingerprint, recorded_at, length;
    `new`: ids to look at (None: all); `known`: copy id -> kept id already recorded."""
    live = sorted((r for r in rows if (r["length"] or 0) >= min_length), key=_order)
    out: dict[str, Duplicate] = {}

    def root(i: str) -> str:
        while i in known:
            i = known[i]
        return i

    first: dict[tuple[str, str], str] = {}
    for r in live:
        key = (r["speaker"], r["fingerprint"])
        kept = first.setdefault(key, r["id"])
        if kept != r["id"] and r["id"] not in known and (new is None or r["id"] in new):
            out[r["id"]] = Duplicate(r["id"], root(kept), 1.0)
    if vectors:
        _near(live, new, known, vectors, threshold, out, root)
    return sorted(out.values(), key=lambda d: d.id)


def _near(
    live: Sequence[Mapping[str, Any]],
    new: set[str] | None,
    known: Mapping[str, str],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    threshold: float,
    out: dict[str, Duplicate],
    root: Any,
) -> None:
    by_speaker: dict[str, list[Mapping[str, Any]]] = {}
    for r in live:
        if r["id"] in vectors:
            by_speaker.setdefault(r["speaker"], []).append(r)
    for group in by_speaker.values():
        ids = [r["id"] for r in group]  # in recording order
        m = np.stack([vectors[i] for i in ids]).astype(np.float32)
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        todo = [
            pos
            for pos, i in enumerate(ids)
            if pos > 0 and i not in known and i not in out and (new is None or i in new)
        ]
        # each candidate against every earlier episode of the speaker, a block of
        # candidates per matrix product: one pass over `m` per block, not per episode
        for start in range(0, len(todo), _BLOCK):
            block = np.asarray(todo[start : start + _BLOCK])
            sims = m[block] @ m[: int(block[-1])].T
            sims[np.arange(sims.shape[1])[None, :] >= block[:, None]] = -np.inf  # later ones
            best = np.argmax(sims, axis=1)
            for row, pos in enumerate(block.tolist()):
                sim = float(sims[row, best[row]])
                if sim >= threshold:
                    i = ids[pos]
                    out[i] = Duplicate(i, root(ids[int(best[row])]), round(sim, 4))
