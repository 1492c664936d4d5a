"""Recall storage: episode search text (Kùzu full-text) and episode vectors.

    >>> rs = RecallStore(store.db)
    >>> rs.ensure_index()
    >>> rs.term_hits("default", "sydney")     # [(episode id, BM25 score), ...]

Every recall Cypher string lives here. Two tables from migration 2, both keyed
by episode id and written once (delete + create, never SET; notes §3.2, §6.7):
`EpisodeText` (the previous turn of the session with this one, plus number
tokens, under a porter-stemmed FTS index) and `EpisodeEmb` (the turn's vector
and the vector of the turn with its predecessor). Vector search itself is
exact numpy in `palimpsest/_recall.py`; Kùzu's HNSW index is left for memories
past ~10^5 episodes (notes §2.4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ._db import Database, Row, _to_db, check_params

FTS_TABLE = "EpisodeText"
FTS_INDEX = "episode_text_fts"
EMB_DIM = 384  # the EpisodeEmb column type; another width needs a new table
META_EMBEDDER = "recall.embedder"
_TOP = 1_000_000  # every matching text: BM25 of the rest is 0 and ranking needs all
_BATCH = 1000

_TERM_HITS = (
    f"CALL QUERY_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', $q, top := {_TOP})"
    " WITH node, score WHERE node.namespace = $ns RETURN node.id AS id, score AS score"
)


class RecallStore:
    """Recall's slice of the Kùzu store (one per open `Database`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- index and model identity -------------------------------------------------------
    def ensure_index(self) -> None:
        """Create the full-text index if missing (first open; Kùzu refuses it in a
        transaction, so migrations cannot). EXPORT/IMPORT compaction keeps it."""
        rows = self.db.query("CALL SHOW_INDEXES() RETURN index_name AS name")
        if any(r["name"] == FTS_INDEX for r in rows):
            return
        self.db.ddl(
            f"CALL CREATE_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', ['text'], stemmer := 'porter')"
        )

    def embedder_identity(self) -> str | None:
        rows = self.db.query("MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=META_EMBEDDER)
        return rows[0]["v"] if rows else None

    def set_embedder_identity(self, identity: str) -> None:
        self.db.query(
            "MERGE (m:Meta {key: $key}) SET m.value = $value", key=META_EMBEDDER, value=identity
        )

    # --- writes ---------------------------------------------------------------------------
    def create_texts(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, text, prev (the predecessor's episode id or None).

        COPY, never `UNWIND ... CREATE`: Kùzu 0.11.3 indexes every row of an
        UNWIND-ed CREATE under the first row's text (reproduced; row-wise CREATE
        and COPY are right).
        """
        if not rows:
            return
        cols = ("id", "namespace", "text", "prev")
        table = pa.table(
            [pa.array([r.get(c) for r in rows], pa.string()) for c in cols], names=list(cols)
        )
        self.db.copy("EpisodeText", table)

    def create_embeddings(
        self,
        ids: Sequence[str],
        namespaces: Sequence[str],
        emb: npt.NDArray[np.float32],
        ctx: npt.NDArray[np.float32],
    ) -> None:
        """One row per episode; COPY from Arrow (vectors as FixedSizeList, notes §5.8)."""
        if not ids:
            return
        table = pa.table(
            [
                pa.array(list(ids), pa.string()),
                pa.array(list(namespaces), pa.string()),
                _fixed(emb),
                _fixed(ctx),
            ],
            names=["id", "namespace", "emb", "ctx"],
        )
        self.db.copy("EpisodeEmb", table)

    def delete_for(self, episode_ids: Sequence[str]) -> None:
        """Drop the search text and vectors of these episodes (erasure)."""
        ids = list(episode_ids)
        if not ids:
            return
        self.db.query("UNWIND $ids AS i MATCH (t:EpisodeText {id: i}) DELETE t", ids=ids)
        self.db.query("UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) DELETE x", ids=ids)

    def delete_all_embeddings(self) -> int:
        """For `reembed`: no vector index sits on the table, so emptying it is safe."""
        n = self.db.query("MATCH (x:EpisodeEmb) RETURN count(*) AS c")[0]["c"]
        self.db.query("MATCH (x:EpisodeEmb) DELETE x")
        return int(n)

    # --- reads ----------------------------------------------------------------------------
    def episodes(self, namespace: str) -> pa.Table:
        """What ranking needs of every episode in the namespace, as one Arrow table."""
        return _arrow(
            self.db,
            "MATCH (e:Episode) WHERE e.namespace = $ns RETURN e.id AS id, e.session AS session,"
            " e.speaker AS speaker, e.occurred_at AS occurred_at, e.recorded_at AS recorded_at,"
            " e.quarantined AS quarantined, e.importance AS importance",
            ns=namespace,
        )

    def embeddings(self, namespace: str) -> tuple[list[str], npt.NDArray[np.float32], Any]:
        """(ids, emb matrix, ctx matrix) of the namespace's stored vectors."""
        t = _arrow(
            self.db,
            "MATCH (x:EpisodeEmb) WHERE x.namespace = $ns RETURN x.id AS id, x.emb AS emb,"
            " x.ctx AS ctx",
            ns=namespace,
        )
        ids = [str(v) for v in t.column("id").to_pylist()]
        return ids, _matrix(t.column("emb")), _matrix(t.column("ctx"))

    def text_ids(self, namespace: str) -> set[str]:
        rows = self.db.query(
            "MATCH (t:EpisodeText) WHERE t.namespace = $ns RETURN t.id AS id", ns=namespace
        )
        return {r["id"] for r in rows}

    def orphans(self, namespace: str) -> list[str]:
        """Search rows whose episode is gone (an erase interrupted before cleanup)."""
        rows = self.db.query(
            "MATCH (t:EpisodeText) WHERE t.namespace = $ns"
            " OPTIONAL MATCH (e:Episode {id: t.id}) WITH t, e WHERE e IS NULL RETURN t.id AS id",
            ns=namespace,
        )
        rows += self.db.query(
            "MATCH (x:EpisodeEmb) WHERE x.namespace = $ns"
            " OPTIONAL MATCH (e:Episode {id: x.id}) WITH x, e WHERE e IS NULL RETURN x.id AS id",
            ns=namespace,
        )
        return sorted({r["id"] for r in rows})

    def texts_citing(self, episode_id: str) -> list[str]:
        """Episodes whose search text quotes this one as their previous turn."""
        rows = self.db.query(
            "MATCH (t:EpisodeText) WHERE t.prev = $id RETURN t.id AS id", id=episode_id
        )
        return [r["id"] for r in rows]

    def episode_rows(self, ids: Iterable[str]) -> dict[str, Row]:
        out: dict[str, Row] = {}
        ids = sorted(set(ids))
        for i in range(0, len(ids), _BATCH):
            for r in self.db.query(
                "UNWIND $ids AS i MATCH (e:Episode {id: i}) RETURN e", ids=ids[i : i + _BATCH]
            ):
                out[r["e"]["id"]] = r["e"]
        return out

    def predecessor(self, namespace: str, session: str, before: Any) -> Row | None:
        """The latest episode of the session that occurred before `before` (or at all)."""
        if before is None:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns AND e.session = $s"
                " RETURN e ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1",
                ns=namespace,
                s=session,
            )
        else:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns AND e.session = $s"
                " AND e.occurred_at < $t RETURN e ORDER BY e.occurred_at DESC, e.id DESC LIMIT 1",
                ns=namespace,
                s=session,
                t=before,
            )
        return rows[0]["e"] if rows else None

    def stored_embeddings(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(ids)
        for i in range(0, len(ids), _BATCH):
            rows = self.db.query(
                "UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) RETURN x.id AS id",
                ids=ids[i : i + _BATCH],
            )
            found.update(r["id"] for r in rows)
        return found

    def stored_texts(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        ids = list(ids)
        for i in range(0, len(ids), _BATCH):
            rows = self.db.query(
                "UNWIND $ids AS i MATCH (t:EpisodeText {id: i}) RETURN t.id AS id",
                ids=ids[i : i + _BATCH],
            )
            found.update(r["id"] for r in rows)
        return found

    # --- full text ------------------------------------------------------------------------
    def stems(self, words: Sequence[str]) -> list[str]:
        """Kùzu's own porter stems, so query terms are cut exactly as the index cut them."""
        if not words:
            return []
        rows = self.db.query(
            "UNWIND $ws AS w RETURN w AS w, stem(w, 'porter') AS s", ws=list(words)
        )
        by = {r["w"]: r["s"] for r in rows}
        return [str(by.get(w, w)) for w in words]

    def term_hits(self, namespace: str, term: str) -> list[tuple[str, float]]:
        """BM25 of one term against every text of the namespace that contains it.

        One query per term: BM25 adds up over terms, and the per-term lists also
        give each term's document frequency and best score, which the calibrated
        ranking needs (coverage bound, term novelty). Statistics (idf, average
        length) are the index's, across namespaces; the filter keeps hits apart.
        """
        rows = self.db.query(_TERM_HITS, q=term, ns=namespace)
        return [(r["id"], float(r["score"])) for r in rows]


def _fixed(m: npt.NDArray[np.float32]) -> pa.FixedSizeListArray:
    m = np.ascontiguousarray(m, dtype=np.float32)
    if m.ndim != 2 or m.shape[1] != EMB_DIM:
        raise ValueError(f"vectors must be (n, {EMB_DIM}), got {m.shape}")
    return pa.FixedSizeListArray.from_arrays(pa.array(m.ravel(), pa.float32()), EMB_DIM)


def _matrix(col: Any) -> npt.NDArray[np.float32]:
    if len(col) == 0:
        return np.zeros((0, EMB_DIM), dtype=np.float32)
    flat = col.combine_chunks().flatten().to_numpy(zero_copy_only=False)
    return np.asarray(flat, dtype=np.float32).reshape(-1, EMB_DIM)


def _arrow(db: Database, cypher: str, /, **params: Any) -> pa.Table:
    """A read as an Arrow table: ~10x faster than rows for bulk vector loads (notes §2.4).

    Goes through the same parameter check as `Database.query`.
    TODO: move into `Database` (`_db.py`) as a public method.
    """
    check_params(cypher, params)
    if db.closed:
        from ..errors import StoreError

        raise StoreError("the database is closed")
    conn = db._conn().conn  # the reader (or the writer inside a write transaction)
    result = conn.execute(cypher, {k: _to_db(v) for k, v in params.items()})
    assert not isinstance(result, list)
    table = result.get_as_arrow(chunk_size=100_000)
    result.close()
    return table
