"""Episode vectors in Kùzu: Arrow reads and the HNSW generation tables.

    >>> g = rs.build_vector_generation()          # COPY every vector, then index it
    >>> rs.nearest(g, "emb", q, 10, "default", efs=400)   # [(episode id, cosine), ...]

Above the vector threshold recall searches Kùzu's HNSW index over a generation
table `EpisodeVec<g>`: filled once by COPY from `EpisodeEmb`, indexed after the
load (inserting into an indexed table costs ~15 ms a row, notes §2.2), searched,
and emptied, never dropped or refilled, when a newer generation replaces it
(DROP TABLE is refused while indexed; DROP_VECTOR_INDEX corrupts the table;
an emptied-then-refilled index finds nothing: notes §6.4-6.5). Rows written since
the live generation was built are searched exactly (`recall/_vectors.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ._db import Database

EMB_DIM = 384  # the EpisodeEmb column type; another width needs a new table
META_VECTOR_GEN = "recall.vector_gen"  # the live HNSW generation, "" when none
META_VECTOR_LAST = "recall.vector_gen_last"  # the highest generation ever made
_VEC_COLUMNS = ("emb", "ctx")
_BATCH = 1000


class VectorGenerations:
    """The HNSW half of `RecallStore` (which it is mixed into)."""

    db: Database

    # --- HNSW generations -------------------------------------------------------------------
    def vector_generation(self) -> int | None:
        """The live HNSW generation number, or None."""
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=META_VECTOR_GEN)
        return int(rows[0]["v"]) if rows and rows[0]["v"] else None

    def build_vector_generation(self) -> int:
        """Copy every stored vector into a new generation table and index it (slow:
        HNSW builds at ~1.4 ms per vector and column on 2 cores, notes §2.4).

        Outside any transaction: Kùzu creates indexes there only. The previous
        generation is emptied afterwards; a crash in between leaves it live.
        """
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=META_VECTOR_LAST)
        g = (int(rows[0]["v"]) if rows and rows[0]["v"] else 0) + 1
        self._set_meta(META_VECTOR_LAST, str(g))  # a failed build never reuses its name
        table = _gen_table(g)
        self.db.ddl(
            f"CREATE NODE TABLE {table}(id STRING PRIMARY KEY, namespace STRING,"
            f" emb FLOAT[{EMB_DIM}], ctx FLOAT[{EMB_DIM}])"
        )
        self.db.ddl(
            f"COPY {table} FROM (MATCH (x:EpisodeEmb) RETURN x.id, x.namespace, x.emb, x.ctx)"
        )
        for col in _VEC_COLUMNS:
            self.db.ddl(
                f"CALL CREATE_VECTOR_INDEX('{table}', '{_gen_index(g, col)}', '{col}',"
                " metric := 'cosine')"
            )
        old = self.vector_generation()
        self._set_meta(META_VECTOR_GEN, str(g))
        if old is not None:
            self._empty_generation(old)
        return g

    def retire_vector_generation(self) -> None:
        """No HNSW generation is live any more (its vectors are stale)."""
        old = self.vector_generation()
        if old is None:
            return
        self._set_meta(META_VECTOR_GEN, "")
        self._empty_generation(old)

    def delete_from_generation(self, ids: Sequence[str]) -> None:
        """Erased episodes leave the live generation too (deleting rows from an indexed
        table is fine; emptying it is not)."""
        g = self.vector_generation()
        if g is not None and ids:
            self.db.query(
                f"UNWIND $ids AS i MATCH (x:{_gen_table(g)} {{id: i}}) DELETE x", ids=list(ids)
            )

    def _empty_generation(self, g: int) -> None:
        # emptied, never dropped: DROP TABLE is refused while the index exists and
        # DROP_VECTOR_INDEX corrupts the table (notes §6.4)
        self.db.query(f"MATCH (x:{_gen_table(g)}) DELETE x")

    def _set_meta(self, key: str, value: str) -> None:
        self.db.query("MERGE (m:Meta {key: $key}) SET m.value = $value", key=key, value=value)

    def generation_ids(self, g: int, namespace: str) -> list[str]:
        t = _arrow(
            self.db,
            f"MATCH (x:{_gen_table(g)}) WHERE x.namespace = $ns RETURN x.id AS id",
            ns=namespace,
        )
        return [str(v) for v in t.column("id").to_pylist()]

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
    return pa.FixedSizeListArray.from_arrays(pa.array(m.ravel(), pa.float32()), EMB_DIM)


def _matrix(col: Any) -> npt.NDArray[np.float32]:
    if len(col) == 0:
        return np.zeros((0, EMB_DIM), dtype=np.float32)
    # per chunk, zero-copy views of the float values, then one copy (combine_chunks
    # + flatten + to_numpy copied the 10^5 x 384 matrix three times)
    parts = [np.asarray(ch.flatten().to_numpy(zero_copy_only=False)) for ch in col.chunks]
    flat = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return np.ascontiguousarray(flat, dtype=np.float32).reshape(-1, EMB_DIM)


def _arrow(db: Database, cypher: str, /, **params: Any) -> pa.Table:
    """A read as an Arrow table (`Database.arrow`)."""
    table: pa.Table = db.arrow(cypher, **params)
    return table
