"""Vector search for recall: one interface, an exact and an HNSW implementation.

    >>> vx = ExactVectors.of(emb, ctx)            # rows aligned with the episode cache
    >>> turn, context = vx.cosines(q)            # one cosine per row and vector kind
    >>> vx.top(q, 5)                             # (rows, cosines), best first

Each episode has two vectors (the turn alone, and its context: the unit mean of its
vector and its predecessor's), and ranking fuses a dense score for every visible
episode, so the interface returns cosines for *all* rows: `ExactVectors` computes them
(a float32 matvec over an in-process matrix; exact, and 5-10x faster than HNSW at
10^4-10^5 rows, notes §2.4); `HnswVectors` asks Kùzu's HNSW index for the nearest
`HNSW_K` rows per vector kind and leaves the rest at 0 ("unrelated"), plus exact cosines
over the *delta*, the rows written since its generation table was built. Which one a
namespace gets is `choose(n, threshold)`: exact up to `DEFAULT_VECTOR_THRESHOLD` rows,
HNSW above once a generation exists, so a huge memory need not load its whole matrix at
open. Recall never builds a generation (minutes at 10^5 rows): the nightly
consolidation's `index` step does, when `stale` says so, and so does `palimpsest
reindex`; until then recall above the threshold is exact, and with an older generation
it searches the generation plus the delta exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..storage import Store

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

DEFAULT_VECTOR_THRESHOLD = 200_000
HNSW_K = 400  # neighbours asked per vector kind; ranking prefilters to ~1000 anyway
HNSW_EFS = 400  # search breadth; notes §2.4: efs 400 gave recall@10 0.9985 on MiniLM
# consolidation rebuilds the generation once this share of rows is delta (exact, in RAM)
DELTA_SHARE = 0.25
# from this many rows, the two cosine matvecs run on two threads
_PARALLEL_ROWS = 20_000
_POOL: ThreadPoolExecutor | None = None

__all__ = [
    "DEFAULT_VECTOR_THRESHOLD",
    "ExactVectors",
    "HnswVectors",
    "VectorIndex",
    "choose",
    "load",
    "stale",
    "top_stable",
]


class VectorIndex(Protocol):
    """Cosine search over rows 0..n-1 (the positions of the episode cache)."""

    kind: str  # "exact" | "hnsw"

    def __len__(self) -> int: ...

    def cosines(self, q: F32) -> tuple[F32, F32]:
        """(turn, context) cosine of every row with unit vector `q`; 0 where unknown."""
        ...

    def top(self, q: F32, k: int) -> tuple[I64, F32]:
        """The k rows nearest `q` by the turn vector, best first, with their cosines."""
        ...

    def append(self, emb: F32, ctx: F32) -> None:
        """Rows n, n+1, ... (new episodes, in cache order)."""
        ...

    def turn_vectors(self, rows: I64) -> F32:
        """The turn vectors of these rows (a few: recall's diversity step)."""
        ...


def choose(n: int, threshold: int) -> str:
    """Which implementation a namespace of n rows gets.

    >>> choose(10_000, DEFAULT_VECTOR_THRESHOLD), choose(250_000, DEFAULT_VECTOR_THRESHOLD)
    ('exact', 'hnsw')
    """
    return "hnsw" if n > threshold else "exact"


def stale(n: int, indexed: int | None, threshold: int) -> str | None:
    """Why a namespace of n stored vectors needs a new HNSW generation, or None.

    >>> stale(300_000, None, DEFAULT_VECTOR_THRESHOLD)
    'no HNSW generation'
    >>> stale(300_000, 280_000, DEFAULT_VECTOR_THRESHOLD) is None
    True

    `indexed`: how many of them the live generation holds (None: none is live).
    """
    if choose(n, threshold) == "exact":
        return None
    if indexed is None:
        return "no HNSW generation"
    delta = n - indexed
    if delta > DELTA_SHARE * n:
        return f"{delta} of {n} vectors are newer than the HNSW generation"
    return None


class ExactVectors:
    """Exact cosine over in-process float32 matrices, grown by doubling.

    >>> vx = ExactVectors.of(np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32))
    >>> vx.top(np.array([0, 1, 0], np.float32), 1)[0].tolist()
    [1]
    """

    kind = "exact"

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._n = 0
        self._emb = np.zeros((0, dim), dtype=np.float32)
        self._ctx = np.zeros((0, dim), dtype=np.float32)

    @classmethod
    def of(cls, emb: F32, ctx: F32) -> ExactVectors:
        vx = cls(int(emb.shape[1]))
        vx._emb = np.ascontiguousarray(emb, dtype=np.float32)
        vx._ctx = np.ascontiguousarray(ctx, dtype=np.float32)
        vx._n = len(emb)
        return vx

    def __len__(self) -> int:
        return self._n

    @property
    def emb(self) -> F32:
        return self._emb[: self._n]

    @property
    def ctx(self) -> F32:
        return self._ctx[: self._n]

    def cosines(self, q: F32) -> tuple[F32, F32]:
        # one pass over the contiguous prefix: indexing rows first would copy the matrix
        q = np.asarray(q, dtype=np.float32)
        if self._n < _PARALLEL_ROWS:
            return _matvec(self.emb, q), _matvec(self.ctx, q)
        # memory-bound and GIL-free: the second matrix on the other core (~1/3 off the
        # wall time at 10^5 rows, even on a busy 2-core box; same numbers)
        other = _pool().submit(_matvec, self.ctx, q)
        return _matvec(self.emb, q), other.result()

    def top(self, q: F32, k: int) -> tuple[I64, F32]:
        return _top(_matvec(self.emb, np.asarray(q, dtype=np.float32)), k)

    def turn_vectors(self, rows: I64) -> F32:
        out: F32 = self.emb[np.asarray(rows, dtype=np.int64)]
        return out

    def append(self, emb: F32, ctx: F32) -> None:
        m = len(emb)
        if m == 0:
            return
        need = self._n + m
        if need > len(self._emb):
            cap = max(need, 2 * len(self._emb), 1024)
            self._emb = _grow(self._emb, self._n, cap)
            self._ctx = _grow(self._ctx, self._n, cap)
        self._emb[self._n : need] = emb
        self._ctx[self._n : need] = ctx
        self._n = need


class HnswVectors:
    """Kùzu's HNSW index over a generation table, plus exact search over the delta.

    >>> vx = load(store, "default", ids, pos, dim=384, threshold=1000)   # n > 1000
    >>> vx.kind, vx.delta_size
    ('hnsw', 0)
    >>> turn, context = vx.cosines(q)            # HNSW_K per kind and the delta; the rest 0
    """

    kind = "hnsw"

    def __init__(
        self,
        store: Store,
        *,
        generation: int,
        namespace: str,
        ids: Sequence[str],
        pos: Mapping[str, int],
        n: int,
        delta_rows: Sequence[int],
        delta: ExactVectors,
        k: int = HNSW_K,
        efs: int = HNSW_EFS,
    ) -> None:
        self.generation = generation
        self._store = store
        self._ns = namespace
        self._ids = ids  # the cache's rows and id -> row map (shared, grow with appends)
        self._pos = pos
        self._n = n
        self._delta_rows = list(delta_rows)
        self._delta_at = {r: j for j, r in enumerate(self._delta_rows)}  # row -> delta row
        self._delta = delta
        self.k = k
        self.efs = efs

    def __len__(self) -> int:
        return self._n

    @property
    def delta_size(self) -> int:
        return len(self._delta)

    def _search(self, column: str, q: F32, k: int) -> tuple[I64, F32]:
        hits = self._store.vectors.nearest(
            self.generation, column, q, k, self._ns, max(self.efs, k)
        )
        rows = [(self._pos.get(i, -1), c) for i, c in hits]
        rows = [(r, c) for r, c in rows if r >= 0]
        return (
            np.array([r for r, _ in rows], dtype=np.int64),
            np.array([c for _, c in rows], dtype=np.float32),
        )

    def cosines(self, q: F32) -> tuple[F32, F32]:
        out = []
        drows = np.array(self._delta_rows, dtype=np.int64)
        dcos = self._delta.cosines(q) if len(self._delta) else None
        for j, column in enumerate(("emb", "ctx")):
            full = np.zeros(self._n, dtype=np.float32)
            rows, cos = self._search(column, q, self.k)
            full[rows] = cos
            if dcos is not None:
                full[drows] = dcos[j]
            out.append(full)
        return out[0], out[1]

    def top(self, q: F32, k: int) -> tuple[I64, F32]:
        rows, cos = self._search("emb", q, k)
        if len(self._delta):
            rows = np.concatenate([rows, np.array(self._delta_rows, dtype=np.int64)])
            cos = np.concatenate([cos, self._delta.cosines(q)[0]])
        order = np.argsort(-cos, kind="stable")[:k]
        return rows[order], cos[order]

    def turn_vectors(self, rows: I64) -> F32:
        at = self._delta_at
        out = np.zeros((len(rows), self._delta.dim), dtype=np.float32)
        stored = [int(r) for r in rows if int(r) not in at]
        by_id: dict[str, F32] = {}
        if stored:  # in the generation only: read by primary key
            got, emb, _ = self._store.vectors.embeddings_of([self._ids[r] for r in stored])
            by_id = {i: emb[j] for j, i in enumerate(got)}
        for j, r in enumerate(int(x) for x in rows):
            if r in at:
                out[j] = self._delta.emb[at[r]]
            elif (v := by_id.get(self._ids[r])) is not None:
                out[j] = v
        return out

    def append(self, emb: F32, ctx: F32) -> None:
        new = range(self._n, self._n + len(emb))
        self._delta_at.update((r, len(self._delta_rows) + j) for j, r in enumerate(new))
        self._delta_rows.extend(new)
        self._delta.append(emb, ctx)
        self._n += len(emb)


def load(
    store: Store,
    namespace: str,
    ids: Sequence[str],
    pos: Mapping[str, int],
    *,
    dim: int,
    threshold: int,
    with_vectors: bool = True,
) -> VectorIndex:
    """The namespace's vector index, rows aligned with `ids` (the episode cache).

    Up to `threshold` rows, or above it while no HNSW generation is live, the
    whole matrix is read from Kùzu (Arrow) and searched exactly; above it with a
    live generation, that generation is searched and only the delta rows'
    vectors are read, however many (never a build here: consolidation and
    reindex build). Rows without a stored vector stay zero (cosine 0).
    """
    n = len(ids)
    if not with_vectors:
        return ExactVectors.of(np.zeros((n, dim), np.float32), np.zeros((n, dim), np.float32))
    g = None if choose(n, threshold) == "exact" else store.vectors.vector_generation()
    if g is None:
        eids, e, c = store.recall.embeddings(namespace)
        return ExactVectors.of(*_place(pos, eids, e, c, n))
    indexed = set(store.vectors.generation_ids(g, namespace))
    delta_ids = [i for i in ids if i not in indexed]
    did, e, c = store.vectors.embeddings_of(delta_ids)
    rows = [pos[i] for i in did]
    return HnswVectors(
        store,
        generation=g,
        namespace=namespace,
        ids=ids,
        pos=pos,
        n=n,
        delta_rows=rows,
        delta=ExactVectors.of(e, c) if len(e) else ExactVectors(dim),
    )


def recall_at(exact: VectorIndex, approx: VectorIndex, queries: F32, k: int) -> float:
    """Share of the exact top-k that the approximate index also returns (mean over queries).

    >>> vx = ExactVectors.of(np.eye(2, dtype=np.float32), np.eye(2, dtype=np.float32))
    >>> recall_at(vx, vx, np.eye(2, dtype=np.float32), 1)
    1.0
    """
    found = 0
    for q in queries:
        truth = set(exact.top(q, k)[0].tolist())
        found += len(truth & set(approx.top(q, k)[0].tolist()))
    return found / (k * len(queries)) if len(queries) else 1.0


def _place(pos: Mapping[str, int], eids: Sequence[str], e: F32, c: F32, n: int) -> tuple[F32, F32]:
    """The stored rows moved to their cache positions (zeros where none is stored)."""
    rows = np.fromiter((pos.get(x, -1) for x in eids), dtype=np.int64, count=len(eids))
    if len(rows) == n and np.array_equal(rows, np.arange(n)):
        return e, c  # both scans came back in the same order: no copy
    emb = np.zeros((n, e.shape[1]), dtype=np.float32)
    ctx = np.zeros((n, e.shape[1]), dtype=np.float32)
    ok = rows >= 0
    emb[rows[ok]] = e[ok]
    ctx[rows[ok]] = c[ok]
    return emb, ctx


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:  # first big recall, not at import
        _POOL = ThreadPoolExecutor(max_workers=1, thread_name_prefix="palimpsest-cosines")
    return _POOL


def _matvec(m: F32, q: F32) -> F32:
    """m @ q on the calling thread. OpenBLAS's threads spin-wait on a busy machine:
    at 10^4 x 384 under load 13 on 2 cores, `m @ q` took 35 ms median, this 4.6 ms."""
    out: F32 = np.einsum("ij,j->i", m, q)
    return out


def _grow(m: F32, n: int, cap: int) -> F32:
    out = np.zeros((cap, m.shape[1]), dtype=np.float32)
    out[:n] = m[:n]
    return out


def _top(scores: F32, k: int) -> tuple[I64, F32]:
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    part = np.argpartition(-scores, k - 1)[:k]
    order = part[np.argsort(-scores[part], kind="stable")]
    return order.astype(np.int64), scores[order]


def top_stable(scores: npt.NDArray[np.floating], k: int) -> I64:
    """The rows `np.argsort(-scores, kind="stable")[:k]` selects (same set, ties by row),
    in row order, without sorting every score (argpartition: ~10x less at 10^5).

    >>> top_stable(np.array([0.1, 0.9, 0.5, 0.9]), 2).tolist()
    [1, 3]
    """
    x = np.asarray(scores)
    if k >= x.size:
        return np.arange(x.size, dtype=np.int64)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    kth = np.partition(x, x.size - k)[x.size - k]  # the k-th largest value
    above = np.flatnonzero(x > kth)
    ties = np.flatnonzero(x == kth)[: k - above.size]
    return np.union1d(above, ties).astype(np.int64)
