"""Episode vectors in Kùzu: Arrow reads and the HNSW generation tables.

    >>> g = rs.build_vector_generation()          # COPY every vector, then index it
    >>> rs.nearest(g, "emb", q, 10, "default", efs=400)   # [(episode id, cosine), ...]
    >>> rs.vector_counts("default")               # (stored vectors, of them in generation g)

Above the vector threshold recall searches Kùzu's HNSW index over a generation
table `EpisodeVec<g>`: filled once by COPY from `EpisodeEmb`, indexed after the
load (inserting into an indexed table costs ~15 ms a row, notes §2.2), searched,
and emptied, never dropped or refilled, when a newer generation replaces it
(DROP TABLE is refused while indexed; DROP_VECTOR_INDEX corrupts the table;
an emptied-then-refilled index finds nothing: notes §6.4-6.5). Rows written since
the live generation was built are searched exactly (`recall/_vectors.py`).
Generations are built by the nightly consolidation's `index` step and by
`palimpsest reindex`, never by a recall: a build takes minutes at 10^5 rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

from ..errors import StoreError
from ..storage.rows import EMB_DIM  # the EpisodeEmb column type: another width needs a new table
from ._db import Database

META_VECTOR_GEN = "recall.vector_gen"  # the live HNSW generation, "" when none
META_VECTOR_LAST = "recall.vector_gen_last"  # the highest generation ever made
_VEC_COLUMNS = ("emb", "ctx")
# Kùzu 0.11.3 checkpoints right after a COPY or CREATE_VECTOR_INDEX commits, and gives
# up after ~5 s while reads keep arriving (recall during a nightly build): the statement
# has committed (WAL) by then, only the checkpoint waits for a quieter moment.
_STARVED = "Timeout waiting for active transactions"
_BATCH = 1000


class VectorStore:
    """HNSW generation tables of episode vectors (a slice of the `Store`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- HNSW generations -------------------------------------------------------------------
    def vector_generation(self) -> int | None:
        """The live HNSW generation number, or None."""
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=META_VECTOR_GEN)
        return int(rows[0]["v"]) if rows and rows[0]["v"] else None

    def build_vector_generation(self, *, publish: bool = True) -> int:
        """Copy every stored vector into a new generation table and index it (slow:
        HNSW builds at ~1.4 ms per vector and column on 2 cores, notes §2.4).

        Outside any transaction: Kùzu creates indexes there only. Then it is
        published (`publish_vector_generation`); with `publish=False` the caller
        does that, e.g. once writers that ran during the build are excluded.
        """
        g = self.last_vector_generation() + 1
        with self.db.write():
            self._set_meta(META_VECTOR_LAST, str(g))  # a failed build never reuses its name
        table = _gen_table(g)
        self._ddl(
            f"CREATE NODE TABLE {table}(id STRING PRIMARY KEY, namespace STRING,"
            f" emb FLOAT[{EMB_DIM}], ctx FLOAT[{EMB_DIM}])"
        )
        self._ddl(
            f"COPY {table} FROM (MATCH (x:EpisodeEmb) RETURN x.id, x.namespace, x.emb, x.ctx)"
        )
        for col in _VEC_COLUMNS:
            self._ddl(
                f"CALL CREATE_VECTOR_INDEX('{table}', '{_gen_index(g, col)}', '{col}',"
                " metric := 'cosine')"
            )
        if publish:
            self.publish_vector_generation(g)
        return g

    def _ddl(self, cypher: str) -> None:
        try:
            self.db.ddl(cypher)
        except StoreError as e:
            if _STARVED not in str(e):
                raise

    def _checkpoint(self) -> None:
        try:
            self.db.checkpoint()
        except (RuntimeError, StoreError) as e:
            if _STARVED not in str(e):
                raise

    def last_vector_generation(self) -> int:
        """The highest generation number ever started (0: none)."""
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=META_VECTOR_LAST)
        return int(rows[0]["v"]) if rows and rows[0]["v"] else 0

    def publish_vector_generation(self, g: int) -> None:
        """Make a built generation the live one and empty the previous. Rows of episodes
        whose vectors were deleted (erased) while it was built leave it first."""
        self._checkpoint()  # what the build's statements could not (readers kept coming)
        with self.db.write():  # no erase slips between the comparison and the switch
            gone = set(_ids(self.db, f"MATCH (x:{_gen_table(g)}) RETURN x.id AS id"))
            gone -= set(_ids(self.db, "MATCH (x:EpisodeEmb) RETURN x.id AS id"))
            self._delete_rows(g, sorted(gone))
            old = self.vector_generation()
            self._set_meta(META_VECTOR_GEN, str(g))
            if old is not None and old != g:
                self.empty_generation(old)

    def retire_vector_generation(self) -> None:
        """No HNSW generation is live any more (its vectors are stale)."""
        old = self.vector_generation()
        if old is None:
            return
        with self.db.write():
            self._set_meta(META_VECTOR_GEN, "")
            self.empty_generation(old)

    def delete_from_generation(self, ids: Sequence[str]) -> None:
        """Erased episodes leave the live generation too (deleting rows from an indexed
        table is fine; emptying it is not)."""
        g = self.vector_generation()
        if g is not None and ids:
            self._delete_rows(g, ids)

    def _delete_rows(self, g: int, ids: Sequence[str]) -> None:
        ids = list(ids)
        for i in range(0, len(ids), _BATCH):
            self.db.query(
                f"UNWIND $ids AS i MATCH (x:{_gen_table(g)} {{id: i}}) DELETE x",
                ids=ids[i : i + _BATCH],
            )

    def empty_generation(self, g: int) -> None:
        """A replaced or abandoned generation's rows go (its table stays: see the module
        docstring); never the live one's."""
        if g == self.vector_generation():
            return
        # emptied, never dropped: DROP TABLE is refused while the index exists and
        # DROP_VECTOR_INDEX corrupts the table (notes §6.4)
        with self.db.write():
            self.db.query(f"MATCH (x:{_gen_table(g)}) DELETE x")

    def vector_counts(self, namespace: str) -> tuple[int, int | None]:
        """(vectors stored in the namespace, how many of them the live generation holds,
        None when no generation is live): two counts, no vectors read."""
        rows = self.db.query(
            "MATCH (x:EpisodeEmb) WHERE x.namespace = $ns RETURN count(*) AS n", ns=namespace
        )
        n = int(rows[0]["n"])
        g = self.vector_generation()
        if g is None:
            return n, None
        rows = self.db.query(
            f"MATCH (x:{_gen_table(g)}) WHERE x.namespace = $ns RETURN count(*) AS n", ns=namespace
        )
        return n, int(rows[0]["n"])

    def _set_meta(self, key: str, value: str) -> None:
        self.db.query("MERGE (m:Meta {key: $key}) SET m.value = $value", key=key, value=value)

    def generation_ids(self, g: int, namespace: str) -> list[str]:
        cypher = f"MATCH (x:{_gen_table(g)}) WHERE x.namespace = $ns RETURN x.id AS id"
        return _ids(self.db, cypher, ns=namespace)

    def nearest(
        self, g: int, column: str, q: npt.NDArray[np.float32], k: int, namespace: str, efs: int
    ) -> list[tuple[str, float]]:
        """(episode id, cosine) of the HNSW index's k nearest in the namespace.

        The namespace filter runs after the search (a projected graph per query
        costs ~40 ms, notes §2.3), so fewer than k may come back.
        """
        if column not in _VEC_COLUMNS:
            raise ValueError(f"no vector column {column!r}")
        # k and efs are ints of ours, and Kùzu takes neither as a parameter
        cypher = (
            f"CALL QUERY_VECTOR_INDEX('{_gen_table(g)}', '{_gen_index(g, column)}', $q,"
            f" {int(k)}, efs := {int(efs)}) WITH node, distance WHERE node.namespace = $ns"
            " RETURN node.id AS id, distance AS d"
        )
        rows = self.db.query(cypher, q=np.asarray(q, dtype=np.float32).tolist(), ns=namespace)
        return [(r["id"], 1.0 - float(r["d"])) for r in rows]

    def embeddings_of(self, ids: Sequence[str]) -> tuple[list[str], Any, Any]:
        """(ids, emb, ctx) of these episodes' stored vectors, by primary key."""
        out_ids: list[str] = []
        embs, ctxs = [], []
        ids = list(ids)
        for i in range(0, len(ids), _BATCH):
            t = _arrow(
                self.db,
                "UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) RETURN x.id AS id, x.emb AS emb,"
                " x.ctx AS ctx",
                ids=ids[i : i + _BATCH],
            )
            out_ids += [str(v) for v in t.column("id").to_pylist()]
            embs.append(_matrix(t.column("emb")))
            ctxs.append(_matrix(t.column("ctx")))
        if not embs:
            z = np.zeros((0, EMB_DIM), dtype=np.float32)
            return [], z, z
        return out_ids, np.concatenate(embs), np.concatenate(ctxs)


def _gen_table(g: int) -> str:
    return f"EpisodeVec{int(g)}"


def _gen_index(g: int, column: str) -> str:
    return f"episode_vec{int(g)}_{column}"


def _fixed(m: npt.NDArray[np.float32]) -> pa.FixedSizeListArray:
    m = np.ascontiguousarray(m, dtype=np.float32)
    if m.ndim != 2 or m.shape[1] != EMB_DIM:
        raise ValueError(f"vectors must be (n, {EMB_DIM}), got {m.shape}")
    import pyarrow as pa  # loaded when a write has many rows (graph/_embeddings.py)

    return pa.FixedSizeListArray.from_arrays(pa.array(m.ravel(), pa.float32()), EMB_DIM)


def _matrix(col: Any) -> npt.NDArray[np.float32]:
    if len(col) == 0:
        return np.zeros((0, EMB_DIM), dtype=np.float32)
    # per chunk, zero-copy views of the float values, then one copy (combine_chunks
    # + flatten + to_numpy copied the 10^5 x 384 matrix three times)
    parts = [np.asarray(ch.flatten().to_numpy(zero_copy_only=False)) for ch in col.chunks]
    flat = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return np.ascontiguousarray(flat, dtype=np.float32).reshape(-1, EMB_DIM)


def _ids(db: Database, cypher: str, /, **params: Any) -> list[str]:
    """The `id` column of a read, through Arrow (10^5 ids in a blink)."""
    return [str(v) for v in _arrow(db, cypher, **params).column("id").to_pylist()]


def _arrow(db: Database, cypher: str, /, **params: Any) -> pa.Table:
    """A read as an Arrow table (`Database.arrow`)."""
    table: pa.Table = db.arrow(cypher, **params)
    return table
