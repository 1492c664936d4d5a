"""Maximal marginal relevance: the plain form, and the one recall uses (near-duplicates only).

    >>> v = np.array([[1, 0], [1, 0], [0, 1]], np.float32)
    >>> diversify([0.9, 0.8, 0.5], v, strength=0.8)[0]    # the repeat yields
    [0, 2, 1]

Pure functions over scores and L2-normalised vectors; `ranking` re-exports both.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["diversify", "mmr"]

_WORD = re.compile(r"\w+")


def mmr(
    scores: npt.ArrayLike,
    vectors: npt.ArrayLike,
    k: int,
    *,
    lambda_: float = 0.7,
) -> list[int]:
    """Maximal marginal relevance: pick ``k`` indices trading score for novelty.

    >>> v = np.array([[1, 0], [1, 0], [0, 1]], np.float32)
    >>> mmr([1.0, 0.99, 0.8], v, k=2, lambda_=0.5)
    [0, 2]

    ``vectors`` must be L2-normalised (cosine = dot). ``lambda_=1`` is plain
    ranking by score; lower values penalise near-duplicates of picked items.
    A plain re-rank with it lowered LoCoMo recall: recall uses :func:`diversify`.
    """
    picked, _ = _greedy(scores, vectors, k, lambda s, sim: lambda_ * s - (1.0 - lambda_) * sim)
    return picked


def diversify(
    scores: npt.ArrayLike,
    vectors: npt.ArrayLike,
    *,
    strength: float,
    near: float = 0.9,
    texts: Sequence[str] | None = None,
) -> tuple[list[int], npt.NDArray[np.float64]]:
    """MMR that only demotes near-duplicates of a better hit: (order, new scores).

    >>> v = np.array([[1, 0], [0.99, 0.141], [0, 1]], np.float32)
    >>> order, s = diversify([0.8, 0.79, 0.5], v, strength=0.5)
    >>> order, [round(float(x), 3) for x in s]
    ([0, 2, 1], [0.8, 0.5, 0.399])

    A candidate whose cosine with an already picked one is at least ``near``
    scores ``score * (1 - strength * cosine)``; one whose text is a picked one's
    (case, spacing and punctuation aside) counts as cosine 1. Anything
    less similar keeps its score, so diversity never reorders distinct
    memories (classic MMR penalised every similarity and cost LoCoMo recall).
    The new scores come out non-increasing in ``order``; ``strength=0`` is the
    plain ranking.
    """
    s = np.asarray(scores, dtype=np.float64)
    keys = None if texts is None else [" ".join(_WORD.findall(t.casefold())) for t in texts]
    taken: dict[str, int] = {}

    def value(s: npt.NDArray[np.float64], sim: npt.NDArray[np.float64]) -> Any:
        if keys is not None:
            sim = sim.copy()
            for i, key in enumerate(keys):
                if key in taken:
                    sim[i] = 1.0
        dup = np.where(sim >= near, np.minimum(sim, 1.0), 0.0)
        return s * (1.0 - strength * dup)

    def picked(i: int) -> None:
        if keys is not None:
            taken.setdefault(keys[i], i)

    order, out = _greedy(s, vectors, s.size, value, on_pick=picked)
    return order, np.asarray(out, dtype=np.float64)


def _greedy(
    scores: npt.ArrayLike,
    vectors: npt.ArrayLike,
    k: int,
    value: Callable[[npt.NDArray[np.float64], npt.NDArray[np.float64]], Any],
    on_pick: Callable[[int], None] | None = None,
) -> tuple[list[int], list[float]]:
    """Pick ``k`` times the best ``value(scores, max cosine to the picked)``."""
    s = np.asarray(scores, dtype=np.float64)
    v = np.asarray(vectors, dtype=np.float64)
    k = min(k, s.size)
    if k <= 0:
        return [], []
    chosen: list[int] = []
    got: list[float] = []
    max_sim = np.full(s.size, -np.inf)
    available = np.ones(s.size, dtype=bool)
    for _ in range(k):
        val = np.asarray(value(s, np.where(np.isfinite(max_sim), max_sim, 0.0)), np.float64)
        val[~available] = -np.inf
        best = int(np.argmax(val))
        chosen.append(best)
        got.append(float(val[best]))
        available[best] = False
        if on_pick is not None:
            on_pick(best)
        max_sim = np.maximum(max_sim, v @ v[best])
    return chosen, got
