"""What recall derives from an episode row: its search text, vectors, predecessor.

    >>> search_text({"speaker": "user", "text": "I moved in 2019"}, None)
    'user: I moved in 2019 zqdbct'

Pure functions over rows and Arrow columns; the index (`index.py`) and reindex use them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ._text import number_tokens

if TYPE_CHECKING:
    import pyarrow as pa

    from .embedder import Embedder


def posix(col: Any) -> npt.NDArray[np.float64]:
    import pyarrow as pa

    if len(col) == 0:
        return np.zeros(0, dtype=np.float64)
    us = col.cast(pa.timestamp("us")).cast(pa.int64()).to_numpy(zero_copy_only=False)
    return np.asarray(us, dtype=np.float64) / 1e6


def search_text(row: Mapping[str, Any], prev: Mapping[str, Any] | None) -> str:
    """What BM25 indexes: 'Prev: text Speaker: text' plus number tokens, one line
    (Kùzu's tokenizer splits on spaces only, so newlines would glue words)."""
    own = f"{row['speaker']}: {row['text']}"
    text = own if prev is None else f"{prev['speaker']}: {prev['text']} {own}"
    text = " ".join(text.split())
    nums = number_tokens(text)
    return f"{text} {nums}" if nums else text


def episode_vectors(
    embedder: Embedder,
    rows: Sequence[Mapping[str, Any]],
    prevs: Sequence[Mapping[str, Any] | None],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Each episode's two vectors: its text's, and its context vector, the unit mean of
    its own and its previous turn's vectors weighted by their word counts.

        >>> a, b = {"text": "my flight to Lisbon"}, {"text": "send pictures"}
        >>> emb, ctx = episode_vectors(HashingEmbedder(), [a, b], [None, a])
        >>> bool((ctx[0] == emb[0]).all()), bool(ctx[1] @ emb[0] > 0)  # b's context: a too
        (True, True)

    One embed call in which each distinct text appears once: a batch's turns are mostly
    each other's predecessors, and a turn remembered alone finds its predecessor in the
    embedder's cache of recent texts, so each turn is encoded once. The weighting stands
    in for mean pooling over the two turns joined (how the vector was made before
    2026-12-06, a second encoder pass over ~115 tokens a turn): on LoCoMo's development
    split the mean scored 0.715 / 0.779 at R@5 / R@10 against 0.714 / 0.778, with a
    third of the ingest CPU (`bench/locomo_context.py`).
    """
    own = [r["text"] for r in rows]
    unique = list(dict.fromkeys([*own, *(p["text"] for p in prevs if p is not None)]))
    vecs = embedder.embed(unique)
    at = {t: i for i, t in enumerate(unique)}
    emb = vecs[[at[t] for t in own]]
    ctx = emb.copy()
    for j, p in enumerate(prevs):
        if p is not None:
            mine, theirs = _words(own[j]), _words(p["text"])
            ctx[j] = mine * emb[j] + theirs * vecs[at[p["text"]]]
    norms = np.linalg.norm(ctx, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0  # an empty text's zero vector stays zero
    return emb, (ctx / norms).astype(np.float32, copy=False)


def _words(text: str) -> int:
    return max(1, len(text.split()))


def predecessors(t: pa.Table, ids: Sequence[str]) -> dict[str, str]:
    """Each episode's previous turn in its session, by occurrence time (ties by id)."""
    sessions = t.column("session").to_pylist()
    occurred = posix(t.column("occurred_at"))
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(sessions):
        if s is not None:
            groups.setdefault(s, []).append(i)
    out: dict[str, str] = {}
    for members in groups.values():
        members.sort(key=lambda i: (occurred[i], ids[i]))
        for a, b in itertools.pairwise(members):
            out[ids[b]] = ids[a]
    return out


def floats(values: Sequence[Any]) -> npt.NDArray[np.float64]:
    """Optional numbers as floats, NaN for none."""
    return np.array([np.nan if x is None else float(x) for x in values], dtype=np.float64)
