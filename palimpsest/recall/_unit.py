"""What both embedders share: unit-length rows, the vectors of the few texts embedded
lately, and models loaded once per process.

>>> rows = l2_normalise(vectors)          # cosine is then a dot product
>>> recent.embed(["when does Mira land?"], model.encode)   # once per question
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["SMALL", "Loaded", "RecentVectors", "l2_normalise"]

# A query is a handful of tokens: one thread encodes it about as fast as two, and on a
# busy machine torch's spinning worker threads made it 15x slower (2.2 s vs 0.14 s
# measured under load 13 on 2 cores). Batches keep the runtime's own thread count.
SMALL = 8
_QUERY_CACHE = 512  # recently embedded short texts (queries, fact statements)


def l2_normalise(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Scale each row to unit length; all-zero rows stay zero.

    >>> l2_normalise(np.array([[3.0, 4.0]], dtype=np.float32)).tolist()
    [[0.6000000238418579, 0.800000011920929]]
    """
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # A zero row (empty text in the fake) must not become NaN.
    norms[norms == 0.0] = 1.0
    out: npt.NDArray[np.float32] = (vectors / norms).astype(np.float32, copy=False)
    return out


class RecentVectors:
    """The vectors of texts embedded a few at a time lately (a recall's question, a fact's
    statement), so a question is embedded once per recall.

    >>> recent = RecentVectors(size=2)
    >>> recent.embed(["a", "a"], lambda todo: np.ones((len(todo), 4), np.float32)).shape
    (2, 4)
    """

    def __init__(self, size: int = _QUERY_CACHE) -> None:
        self._size = size
        self._vectors: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(
        self,
        texts: Sequence[str],
        encode: Callable[[Sequence[str]], npt.NDArray[np.float32]],
    ) -> npt.NDArray[np.float32]:
        """`texts`' vectors: remembered ones, the others by `encode` (once per text)."""
        with self._lock:
            known = {t: v for t in texts if (v := self._vectors.get(t)) is not None}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            fresh = encode(todo)
            with self._lock:
                for t, v in zip(todo, fresh, strict=True):
                    known[t] = self._vectors[t] = v
                while len(self._vectors) > self._size:
                    self._vectors.popitem(last=False)
        return np.stack([known[t] for t in texts]).astype(np.float32, copy=False)


class Loaded:
    """Models loaded once per key per process: concurrent first calls load once.

    >>> models = Loaded()
    >>> models.get("a", lambda: object()) is models.get("a", lambda: object())
    True
    """

    def __init__(self) -> None:
        self._items: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable, load: Callable[[], Any]) -> Any:
        item = self._items.get(key)
        if item is None:
            with self._lock:
                item = self._items.get(key)
                if item is None:
                    item = self._items[key] = load()
        return item
