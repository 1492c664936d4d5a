"""What recall derives from an episode row: its search text, context text, predecessor.

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


def ctx_text(row: Mapping[str, Any], prev: Mapping[str, Any] | None) -> str:
    """What the context vector sees: the previous turn and this one, without speakers."""
    return row["text"] if prev is None else f"{prev['text']}\n{row['text']}"


def episode_vectors(
    embedder: Embedder,
    rows: Sequence[Mapping[str, Any]],
    prevs: Sequence[Mapping[str, Any] | None],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Each episode's two vectors, its text's and its context text's, from one embed call
    in which each distinct text appears once: a turn with no previous one has the same
    text in both, and the embedder sorts the whole call by length before batching."""
    own = [r["text"] for r in rows]
    around = [ctx_text(r, p) for r, p in zip(rows, prevs, strict=True)]
    unique = list(dict.fromkeys([*own, *around]))
    vecs = embedder.embed(unique)
    at = {t: i for i, t in enumerate(unique)}
    return vecs[[at[t] for t in own]], vecs[[at[t] for t in around]]


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
