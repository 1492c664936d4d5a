"""Episode vectors on PostgreSQL: exact search, and HNSW generations as bookkeeping only.

    >>> vs = store.vectors
    >>> vs.vector_generation() is None            # recall always searches exactly here
    True
    >>> vs.nearest(0, "emb", q, 10, "default", efs=400)   # [(episode id, cosine), ...]
    >>> vs.vector_counts("default")               # (stored vectors, searched of them)

The Kùzu store searches an HNSW index over generation tables above the vector
threshold (`graph/_vectors.py`). PostgreSQL has no vector index here: pgvector is
not required (nor installed), so this store keeps no copies of the vectors and no
index. The choice that keeps recall exactly right:

- `vector_generation()` is always None, so `recall._vectors.load` takes its exact
  path at every size: the namespace's whole matrix (`RecallStore.embeddings`) is
  searched in process, the same cosines the Kùzu store's exact path computes.
- `vector_counts` says every stored vector is searched (`(n, n)`): nothing is ever
  stale, so the nightly `index` step never "builds" (a build would change nothing
  and would only drop recall's cache every night).
- `build_vector_generation` / `publish_vector_generation` / `last_vector_generation`
  still keep their numbers in `meta` (a reindex reports one; the consolidation step's
  race check compares them), but a published generation never becomes live.
- `nearest` and `generation_ids` answer over the namespace's stored vectors
  (exact cosine in process): a caller holding a generation number gets exact
  answers, never stale ones, and no delta is missing from it.
- Deleting from or emptying a generation has nothing to delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import StoreError, StoreUnavailable
from ..storage.rows import EMB_DIM
from ._db import Database, _unavailable

DDL: tuple[str, ...] = ()  # no generation tables: numbers in `meta` only

META_VECTOR_LAST = "recall.vector_gen_last"  # the highest generation ever started
META_VECTOR_PUBLISHED = "recall.vector_gen_published"  # bookkeeping: never live here
_NEAREST = {  # what `nearest` reads, per vector column
    "emb": "SELECT id, emb FROM episode_emb WHERE namespace = %s",
    "ctx": "SELECT id, ctx FROM episode_emb WHERE namespace = %s",
}
_ROW_BYTES = EMB_DIM * 4
_BATCH = 10_000

F32 = npt.NDArray[np.float32]


class VectorStore:
    """Generation bookkeeping and exact nearest-neighbour search (a slice of the `Store`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- generations (bookkeeping) ----------------------------------------------------------
    def vector_generation(self) -> int | None:
        """Always None: no HNSW index is searched on PostgreSQL (module docstring)."""
        return None

    def build_vector_generation(self, *, publish: bool = True) -> int:
        """A new generation number (nothing to copy or index: search is exact)."""
        with self.db.write():
            g = self.last_vector_generation() + 1
            set_meta(self.db, META_VECTOR_LAST, str(g))
        if publish:
            self.publish_vector_generation(g)
        return g

    def last_vector_generation(self) -> int:
        """The highest generation number ever started (0: none)."""
        v = get_meta(self.db, META_VECTOR_LAST)
        return int(v) if v else 0

    def publish_vector_generation(self, g: int) -> None:
        """Recorded, never made live (`vector_generation` stays None)."""
        set_meta(self.db, META_VECTOR_PUBLISHED, str(int(g)))

    def retire_vector_generation(self) -> None:
        set_meta(self.db, META_VECTOR_PUBLISHED, "")

    def delete_from_generation(self, ids: Sequence[str]) -> None:
        """Nothing to do: no generation holds copies of the vectors."""

    def empty_generation(self, g: int) -> None:
        """Nothing to do: no generation holds copies of the vectors."""

    def vector_counts(self, namespace: str) -> tuple[int, int | None]:
        """(vectors stored in the namespace, how many of them recall searches): every
        one, exactly, so no generation is ever due (module docstring)."""
        n = int(
            self.db.scalar("SELECT count(*) FROM episode_emb WHERE namespace = %s", (namespace,))
        )
        return n, n

    def generation_ids(self, g: int, namespace: str) -> list[str]:
        """The namespace's stored vectors: what `nearest` searches, whatever `g`."""
        rows = self.db.query("SELECT id FROM episode_emb WHERE namespace = %s", (namespace,))
        return [str(r["id"]) for r in rows]

    # --- search -------------------------------------------------------------------------------
    def nearest(
        self, g: int, column: str, q: npt.NDArray[np.float32], k: int, namespace: str, efs: int
    ) -> list[tuple[str, float]]:
        """(episode id, cosine) of the k nearest of the namespace's stored vectors, best
        first: exact, so `g` and `efs` change nothing."""
        sql = _NEAREST.get(column)
        if sql is None:
            raise ValueError(f"no vector column {column!r}")
        rows = binary_rows(self.db, sql, (namespace,))
        if not rows or k <= 0:
            return []
        m = matrix([r[1] for r in rows])
        qv = np.asarray(q, dtype=np.float32).reshape(-1)
        norms = np.linalg.norm(m, axis=1) * np.float32(np.linalg.norm(qv))
        dots = m @ qv
        cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        order = np.argsort(-cos, kind="stable")[: int(k)]
        return [(str(rows[i][0]), float(cos[i])) for i in order]

    def embeddings_of(self, ids: Sequence[str]) -> tuple[list[str], Any, Any]:
        """(ids, emb, ctx) of these episodes' stored vectors, in the order asked."""
        ids = list(dict.fromkeys(ids))
        found: dict[str, tuple[bytes, bytes]] = {}
        for i in range(0, len(ids), _BATCH):
            for eid, emb, ctx in binary_rows(
                self.db,
                "SELECT id, emb, ctx FROM episode_emb WHERE id = ANY(%s)",
                (ids[i : i + _BATCH],),
            ):
                found[str(eid)] = (emb, ctx)
        got = [i for i in ids if i in found]
        return (
            got,
            matrix([found[i][0] for i in got]),
            matrix([found[i][1] for i in got]),
        )


# --- vectors as bytea (384 little-endian float32) ------------------------------------------
def blobs(m: npt.NDArray[np.float32]) -> list[bytes]:
    """One bytea value per row of an (n, 384) matrix."""
    m = np.asarray(m)
    if m.ndim != 2 or m.shape[1] != EMB_DIM:
        raise ValueError(f"vectors must be (n, {EMB_DIM}), got {m.shape}")
    buf = np.ascontiguousarray(m, dtype="<f4").tobytes()
    return [buf[i : i + _ROW_BYTES] for i in range(0, len(buf), _ROW_BYTES)]


def matrix(values: Sequence[bytes | memoryview]) -> F32:
    """The (n, 384) float32 matrix of stored bytea values (a writable copy)."""
    if not values:
        return np.zeros((0, EMB_DIM), dtype=np.float32)
    data = b"".join(bytes(v) for v in values)
    if len(data) != len(values) * _ROW_BYTES:
        raise StoreError(f"a stored vector is not {EMB_DIM} float32 values")
    return np.frombuffer(data, dtype="<f4").astype(np.float32).reshape(-1, EMB_DIM)


def binary_rows(db: Database, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """A read's rows as tuples, fetched in PostgreSQL's binary format: bytea comes as
    raw bytes rather than hex text (10^5 episode vectors: ~2x faster), timestamps
    without parsing. On the write's own connection inside one, like `Database.query`."""
    from psycopg.rows import tuple_row

    if db.observer is not None:
        db.observer(sql, params)
    with db._conn() as conn, conn.cursor(binary=True, row_factory=tuple_row) as cur:
        try:
            cur.execute(sql, params)
        except _unavailable() as e:
            raise StoreUnavailable(f"PostgreSQL is unreachable: {e}") from e
        return list(cur.fetchall())


# --- meta ------------------------------------------------------------------------------------
def get_meta(db: Database, key: str) -> str | None:
    value: str | None = db.scalar("SELECT value FROM meta WHERE key = %s", (key,))
    return value


def set_meta(db: Database, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s)"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, value),
    )
