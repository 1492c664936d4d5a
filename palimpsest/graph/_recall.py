"""Recall storage: episode search text (Kùzu full-text) and episode vectors.

    >>> rs = RecallStore(store.db)
    >>> rs.ensure_index()
    >>> rs.term_hits("default", "sydney")     # [(episode id, BM25 score), ...]

Every recall Cypher string lives here and in `_vectors.py`. Two tables from migration 2, both keyed
by episode id and written once (delete + create, never SET; notes §3.2, §6.7):
`EpisodeText` (the previous turn of the session with this one, plus number
tokens, under a porter-stemmed FTS index) and `EpisodeEmb` (the turn's vector
and the vector of the turn with its predecessor). Vector search itself is
exact numpy (`recall/_vectors.py`) below a size threshold; above it, Kùzu's HNSW
index over generation tables (`graph/_vectors.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ._db import Database, Row
from ._vectors import EMB_DIM, VectorGenerations, _arrow, _fixed, _matrix

__all__ = ["EMB_DIM", "FTS_INDEX", "FTS_TABLE", "TERM_TOP", "RecallStore"]

FTS_TABLE = "EpisodeText"
FTS_INDEX = "episode_text_fts"
META_EMBEDDER = "recall.embedder"
_TOP = 1_000_000  # every matching text: BM25 of the rest is 0 and ranking needs all
_BATCH = 1000
_ROWWISE_MAX = 512  # EpisodeText rows written by CREATE statements; COPY above

_TERM_HITS = (
    f"CALL QUERY_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', $q, top := {_TOP})"
    " WITH node, score WHERE node.namespace = $ns RETURN node.id AS id, score AS score"
)
# Recall's per-term lists: the best TERM_TOP texts are enough for ranking (it keeps
# ~1000 candidates past 2000 visible), and a word in every text of a 100k memory
# would otherwise ship 100k rows per query. Document frequency stays exact.
TERM_TOP = 2000
_UBIQUITOUS = 0.9
_TERM_TOP_HITS = (
    f"CALL QUERY_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', $q, top := {TERM_TOP})"
    " WITH node, score WHERE node.namespace = $ns RETURN node.id AS id, score AS score"
)
_TERM_DF = (
    f"CALL QUERY_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', $q, top := {_TOP})"
    " WITH node WHERE node.namespace = $ns RETURN count(*) AS df"
)


class RecallStore(VectorGenerations):
    """Recall's slice of the Kùzu store (one per open `Database`)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        # (namespace, term) -> (document frequency, namespace size when counted)
        # of terms past TERM_TOP
        self._df: dict[tuple[str, str], tuple[int, int]] = {}

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

        Row-wise CREATE up to `_ROWWISE_MAX` rows, COPY above: Kùzu 0.11.3 indexes
        every row of an UNWIND-ed or LOAD FROM-ed CREATE under the first row's text
        (both reproduced), and a COPY is not WAL-logged: its COMMIT forces a full
        checkpoint (seconds on a large store, and a timeout under concurrent
        readers), so routine remembers must not pay one.
        """
        if not rows:
            return
        if len(rows) <= _ROWWISE_MAX:
            with self.db.write():
                for r in rows:
                    self.db.query(
                        "CREATE (:EpisodeText {id: $id, namespace: $namespace, text: $text,"
                        " prev: $prev})",
                        id=r["id"],
                        namespace=r["namespace"],
                        text=r["text"],
                        prev=r.get("prev"),
                    )
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
        """One row per episode, `LOAD FROM` Arrow (vectors as FixedSizeList, notes §5.8):
        WAL-logged, unlike COPY, so a commit never forces a checkpoint (no FTS index
        sits on this table, so the LOAD FROM indexing bug does not apply)."""
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
        self.db.load(
            "LOAD FROM $t CREATE (:EpisodeEmb {id: id, namespace: namespace, emb: emb, ctx: ctx})",
            table,
        )

    def delete_for(self, episode_ids: Sequence[str]) -> None:
        """Drop the search text and vectors of these episodes (erasure)."""
        ids = list(episode_ids)
        if not ids:
            return
        self._df.clear()
        self.db.query("UNWIND $ids AS i MATCH (t:EpisodeText {id: i}) DELETE t", ids=ids)
        self.db.query("UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) DELETE x", ids=ids)
        self.delete_from_generation(ids)

    def delete_all_embeddings(self) -> int:
        """For `reembed`: no vector index sits on the table, so emptying it is safe.
        The HNSW generation holds the old model's vectors: it is retired too."""
        n = self.db.query("MATCH (x:EpisodeEmb) RETURN count(*) AS c")[0]["c"]
        self.db.query("MATCH (x:EpisodeEmb) DELETE x")
        self.retire_vector_generation()
        return int(n)

    def delete_embeddings(self, episode_ids: Sequence[str]) -> None:
        """Vectors only (re-embedding replaces them: delete + insert, never SET)."""
        ids = list(episode_ids)
        for i in range(0, len(ids), _BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) DELETE x", ids=ids[i : i + _BATCH]
            )

    def rebuild_fts_index(self) -> None:
        """Drop and re-create the full-text index (outside any transaction)."""
        rows = self.db.query("CALL SHOW_INDEXES() RETURN index_name AS name")
        if any(r["name"] == FTS_INDEX for r in rows):
            self.db.ddl(f"CALL DROP_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}')")
        self.ensure_index()

    def namespaces_with_episodes(self) -> list[str]:
        rows = self.db.query("MATCH (e:Episode) RETURN DISTINCT e.namespace AS ns")
        return sorted(str(r["ns"]) for r in rows)

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
        t = _arrow(
            self.db, "MATCH (t:EpisodeText) WHERE t.namespace = $ns RETURN t.id AS id", ns=namespace
        )
        return {str(v) for v in t.column("id").to_pylist()}

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
        if len(ids) <= 32:
            # a recall's hits: one primary-key lookup each (~0.2 ms); the UNWIND join
            # below scans the table (30 ms at 10^5 episodes)
            for eid in ids:
                rows = self.db.query("MATCH (e:Episode {id: $id}) RETURN e", id=eid)
                if rows:
                    out[eid] = rows[0]["e"]
            return out
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
        if len(ids) > 5 * _BATCH:  # one scan (Arrow) beats many batches of key lookups
            t = _arrow(self.db, "MATCH (x:EpisodeEmb) RETURN x.id AS id")
            return {str(v) for v in t.column("id").to_pylist()} & set(ids)
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

    def term_top(
        self, namespace: str, term: str, n_docs: int
    ) -> tuple[list[str], npt.NDArray[np.float64], int | None]:
        """(ids, BM25 scores) of the term's best `TERM_TOP` texts, and its document
        frequency when the list is not complete (None: the list is every text).

        Kùzu scores every text containing the term whatever `top` is (~65 ms for a
        word in all of 10^5 texts), so a term known to be in over 90% of the
        namespace's `n_docs` (idf < 0.11: it cannot tell texts apart) is not asked
        for at all. Frequencies are counted once and reused until the namespace
        has grown or shrunk by 1%.
        """
        key = (namespace, term)
        known = self._df.get(key)
        if known is not None and abs(n_docs - known[1]) > max(1, n_docs // 100):
            known = None
        if known is not None and known[0] > _UBIQUITOUS * n_docs:
            return [], np.zeros(0, dtype=np.float64), known[0]
        t = _arrow(self.db, _TERM_TOP_HITS, q=term, ns=namespace)
        ids = [str(v) for v in t.column("id").to_pylist()]
        scores = np.asarray(t.column("score").to_numpy(zero_copy_only=False), dtype=np.float64)
        if len(ids) < TERM_TOP:
            return ids, scores, None
        if known is None:
            df = int(self.db.query(_TERM_DF, q=term, ns=namespace)[0]["df"])
            known = self._df[key] = (df, n_docs)
        return ids, scores, max(len(ids), known[0])
