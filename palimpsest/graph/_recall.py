"""Recall storage: episode search text (Kùzu full-text) and episode vectors.

    >>> rs = store.recall
    >>> rs.episodes("default")                # what ranking needs of every episode (Arrow)

Every recall Cypher string lives here and in `_vectors.py`. Two tables from migration 2, both keyed
by episode id and written once (delete + create, never SET; notes §3.2, §6.7):
`EpisodeText` (the previous turn of the session with this one, plus number
tokens, scored by BM25 in process as Kùzu's porter-stemmed full-text index
would score it: `recall/_bm25.py`; no such index is kept, and no read runs a
schema statement) and `EpisodeEmb` (the turn's vector
and the vector of the turn with its predecessor). Vector search itself is
exact numpy (`recall/_vectors.py`) below a size threshold; above it, Kùzu's HNSW
index over generation tables (`graph/_vectors.py`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..storage.rows import EMB_DIM
from ._cypher import Keys
from ._db import Database, Row
from ._embeddings import EmbeddingStore, insert_vectors
from ._vectors import VectorStore, _arrow, _matrix

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["EMB_DIM", "FTS_INDEX", "FTS_TABLE", "RecallStore"]

FTS_TABLE = "EpisodeText"
FTS_INDEX = "episode_text_fts"
META_EMBEDDER = "recall.embedder"
_TOP = 1_000_000  # every matching text: BM25 of the rest is 0 and ranking needs all
_BATCH = 1000
_ROWWISE_MAX = 512  # EpisodeText rows written by CREATE statements; COPY above
_STEMS_KEPT = 200_000  # words whose stem is kept in process

_TERM_HITS = (
    f"CALL QUERY_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', $q, top := {_TOP})"
    " WITH node, score WHERE node.namespace = $ns RETURN node.id AS id, score AS score"
)


class RecallStore:
    """Recall's slice of the Kùzu store: episode search texts and vectors. Erasing or
    re-embedding them reaches the HNSW generations and the name and statement vectors
    too (the slices it is given)."""

    def __init__(
        self,
        db: Database,
        embeddings: EmbeddingStore,
        vectors: VectorStore,
        keys: Keys | None = None,
    ) -> None:
        self.db = db
        self._keys = Keys(db) if keys is None else keys  # the store's, shared by its slices
        self._embeddings = embeddings
        self._vectors = vectors
        self._stems: dict[str, str] = {}  # word -> Kùzu's porter stem (`stems`)

    # --- the reference full-text index and model identity ---------------------------------
    def _has_fts_index(self) -> bool:
        rows = self.db.query("CALL SHOW_INDEXES() RETURN index_name AS name")
        return any(r["name"] == FTS_INDEX for r in rows)

    def create_reference_index(self) -> None:
        """Kùzu's own full-text index over the search rows, for tests/test_bm25.py only:
        the reference the in-process BM25 is checked against. Recall never creates or
        reads it (DDL, which Kùzu cannot run while other transactions are active)."""
        if not self._has_fts_index():
            self.db.ddl(
                f"CALL CREATE_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}', ['text'],"
                " stemmer := 'porter')"
            )

    def drop_fts_index(self) -> bool:
        """Drop the full-text index an older version made, if there is one (at open)."""
        if not self._has_fts_index():
            return False
        self.db.ddl(f"CALL DROP_FTS_INDEX('{FTS_TABLE}', '{FTS_INDEX}')")
        return True

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
        import pyarrow as pa  # many rows only: a remember's one goes without it

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
        """One row per episode (`insert_vectors`: a few from plain lists, many by `LOAD
        FROM` Arrow): WAL-logged, unlike COPY, so a commit never forces a checkpoint
        (no FTS index sits on this table, so the LOAD FROM indexing bug does not apply)."""
        if not ids:
            return
        insert_vectors(self.db, "EpisodeEmb", ids, namespaces, {"emb": emb, "ctx": ctx})

    def delete_for(self, episode_ids: Sequence[str]) -> None:
        """Drop the search text and vectors of these episodes (erasure)."""
        ids = list(episode_ids)
        if not ids:
            return
        self.db.query("UNWIND $ids AS i MATCH (t:EpisodeText {id: i}) DELETE t", ids=ids)
        self.db.query("UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) DELETE x", ids=ids)
        self._vectors.delete_from_generation(ids)

    def delete_all_embeddings(self) -> int:
        """For `reembed`: no vector index sits on the table, so emptying it is safe.
        The HNSW generation holds the old model's vectors: it is retired too, and so
        are the name and statement vectors. The count is of episode vectors."""
        n = self.db.query("MATCH (x:EpisodeEmb) RETURN count(*) AS c")[0]["c"]
        self.db.query("MATCH (x:EpisodeEmb) DELETE x")
        self._vectors.retire_vector_generation()
        self._embeddings.delete_all_derived()
        return int(n)

    def delete_embeddings(self, episode_ids: Sequence[str]) -> None:
        """Vectors only (re-embedding replaces them: delete + insert, never SET)."""
        ids = list(episode_ids)
        for i in range(0, len(ids), _BATCH):
            self.db.query(
                "UNWIND $ids AS i MATCH (x:EpisodeEmb {id: i}) DELETE x", ids=ids[i : i + _BATCH]
            )

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
            " e.quarantined AS quarantined, e.importance AS importance, e.text AS text,"
            " e.source AS source, e.author_kind AS author_kind",
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

    def texts(self, namespace: str) -> dict[str, str]:
        """Every search row of the namespace: episode id -> text (one Arrow read)."""
        t = _arrow(
            self.db,
            "MATCH (t:EpisodeText) WHERE t.namespace = $ns RETURN t.id AS id, t.text AS text",
            ns=namespace,
        )
        return dict(zip(t.column("id").to_pylist(), t.column("text").to_pylist(), strict=True))

    def texts_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The search rows of these episodes that exist: episode id -> text."""
        ids = list(ids)
        if self._keys.seek_pays(len(ids)):
            # a remember's rows (recall's `_apply`): key seeks; the UNWIND join below
            # scans the table (24 ms at 10^5 episodes, after every remember)
            seen = self._keys.seek("EpisodeText", ids, ("text",))
            return {i: r["text"] for i, r in seen.items()}
        found: dict[str, str] = {}
        for i in range(0, len(ids), _BATCH):
            rows = self.db.query(
                "UNWIND $ids AS i MATCH (t:EpisodeText {id: i}) RETURN t.id AS id, t.text AS text",
                ids=ids[i : i + _BATCH],
            )
            found.update((r["id"], r["text"]) for r in rows)
        return found

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
        """The latest episode of the session that occurred before `before` (or at all).

        No index serves it (Kùzu keys the table by id alone): the table is scanned for
        the session's ids and times, then the one row is read by key. Returning the
        whole node from the scan, or filtering on the namespace first, cost 3x as much
        (36 against 13 ms at 10^5 episodes); recall's index answers it without the
        store once loaded (`RecallIndex.predecessor`)."""
        if before is None:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.session = $s AND e.namespace = $ns"
                " WITH e.id AS id, e.occurred_at AS o ORDER BY o DESC, id DESC LIMIT 1"
                " RETURN id",
                ns=namespace,
                s=session,
            )
        else:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.session = $s AND e.namespace = $ns"
                " AND e.occurred_at < $t"
                " WITH e.id AS id, e.occurred_at AS o ORDER BY o DESC, id DESC LIMIT 1"
                " RETURN id",
                ns=namespace,
                s=session,
                t=before,
            )
        if not rows:
            return None
        found = self.db.query("MATCH (e:Episode {id: $id}) RETURN e", id=rows[0]["id"])
        return found[0]["e"] if found else None

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

    # --- full text ------------------------------------------------------------------------
    def stems(self, words: Sequence[str]) -> list[str]:
        """Kùzu's own porter stems, so query terms are cut exactly as the index cut them.

        A stem depends on the word alone, so each is asked of Kùzu once per open store
        and kept (recall stems every query: one round trip each, ~1 ms, before).
        """
        if not words:
            return []
        known = self._stems
        todo = list(dict.fromkeys(w for w in words if w not in known))
        if todo:
            if len(known) + len(todo) > _STEMS_KEPT:
                known.clear()
            if len(todo) > 64:  # a vocabulary (recall/_bm25.py): rows through Arrow
                t = _arrow(
                    self.db, "UNWIND $ws AS w RETURN w AS w, stem(w, 'porter') AS s", ws=todo
                )
                by = dict(zip(t.column("w").to_pylist(), t.column("s").to_pylist(), strict=True))
            else:
                rows = self.db.query(
                    "UNWIND $ws AS w RETURN w AS w, stem(w, 'porter') AS s", ws=todo
                )
                by = {r["w"]: r["s"] for r in rows}
            known.update((w, str(by.get(w, w))) for w in todo)
        return [known.get(w, w) for w in words]

    def term_hits(self, namespace: str, term: str) -> list[tuple[str, float]]:
        """Kùzu's BM25 of one term against every text of the namespace that holds it,
        through the index `create_reference_index` makes.

        Recall scores words in process (`recall/_bm25.py`, the same scores without a
        query per word); this is the reference it is tested against. Statistics
        (idf, average length) are the index's, across namespaces.
        """
        rows = self.db.query(_TERM_HITS, q=term, ns=namespace)
        return [(r["id"], float(r["score"])) for r in rows]

    def archived(self, namespace: str) -> set[str]:
        """Ids of the namespace's archived episodes (consolidation's decay and dedupe set
        `Episode.archived`): readable by id and in history, left out of recall's
        candidates."""
        rows = self.db.query(
            "MATCH (e:Episode) WHERE e.namespace = $ns AND e.archived RETURN e.id AS id",
            ns=namespace,
        )
        return {str(r["id"]) for r in rows}
