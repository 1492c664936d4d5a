"""Recall storage on PostgreSQL: episode search texts and episode vectors.

    >>> rs = store.recall
    >>> rs.episodes("default")                # what ranking needs of every episode (Arrow)
    >>> rs.stems(["moving", "sisters"])       # Kùzu's own porter stems
    ['move', 'sister']

The tables mirror the Kùzu store's `EpisodeText` (the previous turn of the
session with this one, plus number tokens, scored by BM25 in process:
`recall/_bm25.py`) and `EpisodeEmb` (the turn's vector and the vector of the turn
with its predecessor, bytea of 384 little-endian float32), keyed by
(namespace, episode id) and written once (delete + insert, never updated).
Vector search is exact, in process, at every size (`_vectors.py` says why).

Full text: recall stems its words with the same porter stemmer the Kùzu store
uses, Kùzu's own `stem(w, 'porter')` (the `kuzu` package is a dependency of
Palimpsest): an in-memory Kùzu database, opened once per process and holding no
data, runs the Kùzu store's own stemming code (`graph/_recall.py`), so both stores
cut words alike and rank alike. Kùzu's full-text index itself has no counterpart:
`create_reference_index` and `term_hits` (the reference tests/test_bm25.py checks
the in-process BM25 against) raise `StoreError`, and `drop_fts_index` has nothing
to drop.

Row order: Kùzu returns an episode scan in insertion order, and recall's cache
keeps that order (ties in ranking go to the earlier row). PostgreSQL has no such
order, so `episodes` sorts by transaction time (`recorded_at`, which never goes
backwards across processes), then by physical position: insertion order for rows
never updated.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ..errors import StoreError
from ..storage.columns import EPISODE_COLUMNS
from ..storage.rows import Row
from ._db import Database
from ._embeddings import EmbeddingStore
from ._vectors import VectorStore, binary_rows, blobs, get_meta, matrix, set_meta

if TYPE_CHECKING:
    from ..graph import RecallStore as KuzuRecall

DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS episode_text (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, text text, prev text COLLATE "C",'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS episode_text_id ON episode_text (id)",
    "CREATE INDEX IF NOT EXISTS episode_text_prev ON episode_text (prev)",
    'CREATE TABLE IF NOT EXISTS episode_emb (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, emb bytea, ctx bytea, PRIMARY KEY (namespace, id))',
    "CREATE INDEX IF NOT EXISTS episode_emb_id ON episode_emb (id)",
)

META_EMBEDDER = "recall.embedder"
NOT_SUPPORTED = "not supported by the PostgreSQL store"
# the Kùzu store's Episode columns, in its order: what `episode_rows` and `predecessor` return
_EPISODE = ", ".join(EPISODE_COLUMNS)
# what ranking needs (`episodes`): the Arrow columns and types the Kùzu store returns
EPISODES_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("session", pa.string()),
        ("speaker", pa.string()),
        ("occurred_at", pa.timestamp("us")),
        ("recorded_at", pa.timestamp("us")),
        ("quarantined", pa.bool_()),
        ("importance", pa.float64()),
        ("text", pa.string()),
        ("source", pa.string()),
        ("author_kind", pa.string()),
    ]
)
_BATCH = 10_000
_SCAN_FROM = 5_000  # keys asked at once from which `stored_embeddings` scans


class RecallStore:
    """Recall's slice of the PostgreSQL store: episode search texts and vectors. Erasing
    or re-embedding them reaches the name and statement vectors too (the slices it is
    given)."""

    def __init__(self, db: Database, embeddings: EmbeddingStore, vectors: VectorStore) -> None:
        self.db = db
        self._embeddings = embeddings
        self._vectors = vectors

    # --- the reference full-text index and model identity ---------------------------------
    def create_reference_index(self) -> None:
        """Kùzu's own full-text index: no counterpart here (module docstring)."""
        raise StoreError(f"a reference full-text index is {NOT_SUPPORTED}")

    def drop_fts_index(self) -> bool:
        """No older version made a full-text index here: nothing to drop."""
        return False

    def embedder_identity(self) -> str | None:
        return get_meta(self.db, META_EMBEDDER)

    def set_embedder_identity(self, identity: str) -> None:
        set_meta(self.db, META_EMBEDDER, identity)

    # --- writes ---------------------------------------------------------------------------
    def create_texts(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, text, prev (the predecessor's episode id or None)."""
        if not rows:
            return
        params = [(r["id"], r["namespace"], r["text"], r.get("prev")) for r in rows]
        with self.db.write():
            self.db.execute_many(
                "INSERT INTO episode_text (id, namespace, text, prev) VALUES (%s, %s, %s, %s)",
                params,
            )

    def create_embeddings(
        self,
        ids: Sequence[str],
        namespaces: Sequence[str],
        emb: npt.NDArray[np.float32],
        ctx: npt.NDArray[np.float32],
    ) -> None:
        """One row per episode."""
        if not len(ids):
            return
        params = list(zip(ids, namespaces, blobs(emb), blobs(ctx), strict=True))
        with self.db.write():
            self.db.execute_many(
                "INSERT INTO episode_emb (id, namespace, emb, ctx) VALUES (%s, %s, %s, %s)",
                params,
            )

    def delete_for(self, episode_ids: Sequence[str]) -> None:
        """Drop the search text and vectors of these episodes (erasure)."""
        ids = sorted(set(episode_ids))
        if not ids:
            return
        with self.db.write():
            self.db.execute("DELETE FROM episode_text WHERE id = ANY(%s)", (ids,))
            self.db.execute("DELETE FROM episode_emb WHERE id = ANY(%s)", (ids,))
            self._vectors.delete_from_generation(ids)

    def delete_all_embeddings(self) -> int:
        """For `reembed`: every episode vector goes, and so do the name and statement
        vectors (a new model replaces them all). The count is of episode vectors."""
        with self.db.write():
            n = int(self.db.scalar("SELECT count(*) FROM episode_emb"))
            self.db.execute("DELETE FROM episode_emb")
            self._vectors.retire_vector_generation()
            self._embeddings.delete_all_derived()
        return n

    def delete_embeddings(self, episode_ids: Sequence[str]) -> None:
        """Vectors only (re-embedding replaces them: delete + insert, never update)."""
        ids = sorted(set(episode_ids))
        if ids:
            self.db.execute("DELETE FROM episode_emb WHERE id = ANY(%s)", (ids,))

    def namespaces_with_episodes(self) -> list[str]:
        rows = self.db.query("SELECT DISTINCT namespace FROM episode")
        return sorted(str(r["namespace"]) for r in rows)

    # --- reads ----------------------------------------------------------------------------
    def episodes(self, namespace: str) -> pa.Table:
        """What ranking needs of every episode in the namespace, as one Arrow table
        (naive UTC timestamps, as Kùzu's Arrow gives them)."""
        rows = binary_rows(
            self.db,
            "SELECT id, session, speaker, occurred_at AT TIME ZONE 'UTC',"
            " recorded_at AT TIME ZONE 'UTC', quarantined, importance, text, source,"
            " author_kind FROM episode WHERE namespace = %s ORDER BY recorded_at, ctid",
            (namespace,),
        )
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(EPISODES_SCHEMA)
        return pa.table(
            [pa.array(c, f.type) for c, f in zip(columns, EPISODES_SCHEMA, strict=True)],
            schema=EPISODES_SCHEMA,
        )

    def embeddings(self, namespace: str) -> tuple[list[str], npt.NDArray[np.float32], Any]:
        """(ids, emb matrix, ctx matrix) of the namespace's stored vectors."""
        rows = binary_rows(
            self.db, "SELECT id, emb, ctx FROM episode_emb WHERE namespace = %s", (namespace,)
        )
        ids = [str(r[0]) for r in rows]
        return ids, matrix([r[1] for r in rows]), matrix([r[2] for r in rows])

    def texts(self, namespace: str) -> dict[str, str]:
        """Every search row of the namespace: episode id -> text."""
        rows = self.db.query("SELECT id, text FROM episode_text WHERE namespace = %s", (namespace,))
        return {r["id"]: r["text"] for r in rows}

    def texts_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The search rows of these episodes that exist: episode id -> text."""
        found: dict[str, str] = {}
        keys = list(dict.fromkeys(ids))
        for i in range(0, len(keys), _BATCH):
            rows = self.db.query(
                "SELECT id, text FROM episode_text WHERE id = ANY(%s)", (keys[i : i + _BATCH],)
            )
            found.update((r["id"], r["text"]) for r in rows)
        return found

    def text_ids(self, namespace: str) -> set[str]:
        rows = self.db.query("SELECT id FROM episode_text WHERE namespace = %s", (namespace,))
        return {str(r["id"]) for r in rows}

    def orphans(self, namespace: str) -> list[str]:
        """Search rows whose episode is gone (an erase interrupted before cleanup)."""
        rows = self.db.query(
            "SELECT t.id FROM episode_text t WHERE t.namespace = %s AND NOT EXISTS"
            " (SELECT 1 FROM episode e WHERE e.namespace = t.namespace AND e.id = t.id)"
            " UNION SELECT x.id FROM episode_emb x WHERE x.namespace = %s AND NOT EXISTS"
            " (SELECT 1 FROM episode e WHERE e.namespace = x.namespace AND e.id = x.id)",
            (namespace, namespace),
        )
        return sorted({str(r["id"]) for r in rows})

    def texts_citing(self, episode_id: str) -> list[str]:
        """Episodes whose search text quotes this one as their previous turn."""
        rows = self.db.query("SELECT id FROM episode_text WHERE prev = %s", (episode_id,))
        return [str(r["id"]) for r in rows]

    def episode_rows(self, ids: Iterable[str]) -> dict[str, Row]:
        out: dict[str, Row] = {}
        keys = sorted(set(ids))
        for i in range(0, len(keys), _BATCH):
            for r in self.db.query(
                f"SELECT {_EPISODE} FROM episode WHERE id = ANY(%s)", (keys[i : i + _BATCH],)
            ):
                out[r["id"]] = r
        return {k: out[k] for k in keys if k in out}

    def predecessor(self, namespace: str, session: str, before: Any) -> Row | None:
        """The latest episode of the session that occurred before `before` (or at all).

        Reads the index on episode (namespace, session, occurred_at)."""
        if before is None:
            rows = self.db.query(
                f"SELECT {_EPISODE} FROM episode WHERE namespace = %s AND session = %s"
                " ORDER BY occurred_at DESC, id DESC LIMIT 1",
                (namespace, session),
            )
        else:
            rows = self.db.query(
                f"SELECT {_EPISODE} FROM episode WHERE namespace = %s AND session = %s"
                " AND occurred_at < %s ORDER BY occurred_at DESC, id DESC LIMIT 1",
                (namespace, session, before),
            )
        return rows[0] if rows else None

    def stored_embeddings(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        keys = sorted(set(ids))
        if len(keys) > _SCAN_FROM:  # a backfill's whole namespace: one scan beats the seeks
            every = binary_rows(self.db, "SELECT id FROM episode_emb")
            return {str(r[0]) for r in every} & set(keys)
        for i in range(0, len(keys), _BATCH):
            rows = self.db.query(
                "SELECT id FROM episode_emb WHERE id = ANY(%s)", (keys[i : i + _BATCH],)
            )
            found.update(str(r["id"]) for r in rows)
        return found

    # --- full text ------------------------------------------------------------------------
    def stems(self, words: Sequence[str]) -> list[str]:
        """Kùzu's own porter stems (module docstring), kept per word once asked."""
        if not words:
            return []
        return _stemmer().stems(words)

    def term_hits(self, namespace: str, term: str) -> list[tuple[str, float]]:
        """Kùzu's BM25 through its full-text index: no counterpart here."""
        raise StoreError(f"full-text index hits are {NOT_SUPPORTED}")

    def archived(self, namespace: str) -> set[str]:
        """Ids of the namespace's archived episodes (readable by id and in history,
        left out of recall's candidates)."""
        rows = self.db.query(
            "SELECT id FROM episode WHERE namespace = %s AND archived", (namespace,)
        )
        return {str(r["id"]) for r in rows}


_STEMMER: KuzuRecall | None = None
_STEMMER_LOCK = threading.Lock()
_STEMMER_POOL = 64 << 20  # an empty in-memory database: stems need no pages to speak of


def _stemmer() -> KuzuRecall:
    """The Kùzu store's recall slice over an empty in-memory Kùzu database, opened once
    per process: its `stems` asks Kùzu's `stem(w, 'porter')` and keeps the answers."""
    global _STEMMER
    with _STEMMER_LOCK:
        if _STEMMER is None:
            import kuzu

            from ..graph import Database as KuzuDatabase
            from ..graph import RecallStore as Recall

            mem = kuzu.Database(":memory:", buffer_pool_size=_STEMMER_POOL, max_db_size=1 << 30)
            # stems touch no table: the recall slice needs no embeddings or vectors slice
            _STEMMER = Recall(KuzuDatabase(Path(":memory:"), mem), None, None)  # type: ignore[arg-type]
        return _STEMMER
