"""What a store keeps for recall: search texts, episode, name and statement vectors, uses.

    >>> store.recall.episodes("default")           # what ranking needs (an Arrow table)
    >>> store.embeddings.statement_vectors(ids)
    >>> store.uses.record(rows)

Protocols of the storage seam (see `storage/_facts.py`). Vectors travel as numpy
float32 matrices and tables as Arrow: neither is any backend's own type.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pyarrow as pa

from .rows import Row

F32 = npt.NDArray[np.float32]


class Recall(Protocol):
    """Episode search texts and vectors."""

    def create_reference_index(self) -> None:
        """Kùzu's own full-text index over the search rows, for tests/test_bm25.py only:
        the reference the in-process BM25 is checked against. Recall never creates or
        reads it (DDL, which Kùzu cannot run while other transactions are active).
        """
        ...

    def drop_fts_index(self) -> bool:
        """Drop the full-text index an older version made, if there is one (at open)."""
        ...

    def embedder_identity(self) -> str | None: ...

    def set_embedder_identity(self, identity: str) -> None: ...

    def create_texts(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, text, prev (the predecessor's episode id or None)."""
        ...

    def create_embeddings(
        self,
        ids: Sequence[str],
        namespaces: Sequence[str],
        emb: npt.NDArray[np.float32],
        ctx: npt.NDArray[np.float32],
    ) -> None:
        """One row per episode, `LOAD FROM` Arrow (vectors as FixedSizeList, notes §5.8):
        WAL-logged, unlike COPY, so a commit never forces a checkpoint (no FTS index
        sits on this table, so the LOAD FROM indexing bug does not apply).
        """
        ...

    def delete_for(self, episode_ids: Sequence[str]) -> None:
        """Drop the search text and vectors of these episodes (erasure)."""
        ...

    def delete_all_embeddings(self) -> int:
        """For `reembed`: no vector index sits on the table, so emptying it is safe.
        The HNSW generation holds the old model's vectors: it is retired too, and so
        are the name and statement vectors. The count is of episode vectors.
        """
        ...

    def delete_embeddings(self, episode_ids: Sequence[str]) -> None:
        """Vectors only (re-embedding replaces them: delete + insert, never SET)."""
        ...

    def namespaces_with_episodes(self) -> list[str]: ...

    def episodes(self, namespace: str) -> pa.Table:
        """What ranking needs of every episode in the namespace, as one Arrow table."""
        ...

    def embeddings(self, namespace: str) -> tuple[list[str], npt.NDArray[np.float32], Any]:
        """(ids, emb matrix, ctx matrix) of the namespace's stored vectors."""
        ...

    def texts(self, namespace: str) -> dict[str, str]:
        """Every search row of the namespace: episode id -> text (one Arrow read)."""
        ...

    def texts_of(self, ids: Sequence[str]) -> dict[str, str]:
        """The search rows of these episodes that exist: episode id -> text."""
        ...

    def text_ids(self, namespace: str) -> set[str]: ...

    def orphans(self, namespace: str) -> list[str]:
        """Search rows whose episode is gone (an erase interrupted before cleanup)."""
        ...

    def texts_citing(self, episode_id: str) -> list[str]:
        """Episodes whose search text quotes this one as their previous turn."""
        ...

    def episode_rows(self, ids: Iterable[str]) -> dict[str, Row]: ...

    def predecessor(self, namespace: str, session: str, before: Any) -> Row | None:
        """The latest episode of the session that occurred before `before` (or at all)."""
        ...

    def stored_embeddings(self, ids: Sequence[str]) -> set[str]: ...

    def stems(self, words: Sequence[str]) -> list[str]:
        """Kùzu's own porter stems, so query terms are cut exactly as the index cut them."""
        ...

    def term_hits(self, namespace: str, term: str) -> list[tuple[str, float]]:
        """Kùzu's BM25 of one term against every text of the namespace that holds it,
        through the index `create_reference_index` makes.
        """
        ...

    def archived(self, namespace: str) -> set[str]:
        """Ids of the namespace's archived episodes (consolidation's decay and dedupe set
        `Episode.archived`): readable by id and in history, left out of recall's
        candidates.
        """
        ...


class Vectors(Protocol):
    """Generations of episode vectors searched by an index."""

    def vector_generation(self) -> int | None:
        """The live HNSW generation number, or None."""
        ...

    def build_vector_generation(self, *, publish: bool = True) -> int:
        """Copy every stored vector into a new generation table and index it (slow:
        HNSW builds at ~1.4 ms per vector and column on 2 cores, notes §2.4).
        """
        ...

    def last_vector_generation(self) -> int:
        """The highest generation number ever started (0: none)."""
        ...

    def publish_vector_generation(self, g: int) -> None:
        """Make a built generation the live one and empty the previous. Rows of episodes
        whose vectors were deleted (erased) while it was built leave it first.
        """
        ...

    def retire_vector_generation(self) -> None:
        """No HNSW generation is live any more (its vectors are stale)."""
        ...

    def delete_from_generation(self, ids: Sequence[str]) -> None:
        """Erased episodes leave the live generation too (deleting rows from an indexed
        table is fine; emptying it is not).
        """
        ...

    def empty_generation(self, g: int) -> None:
        """A replaced or abandoned generation's rows go (its table stays: see the module
        docstring); never the live one's.
        """
        ...

    def vector_counts(self, namespace: str) -> tuple[int, int | None]:
        """(vectors stored in the namespace, how many of them the live generation holds,
        None when no generation is live): two counts, no vectors read.
        """
        ...

    def generation_ids(self, g: int, namespace: str) -> list[str]: ...

    def nearest(
        self, g: int, column: str, q: npt.NDArray[np.float32], k: int, namespace: str, efs: int
    ) -> list[tuple[str, float]]:
        """(episode id, cosine) of the HNSW index's k nearest in the namespace."""
        ...

    def embeddings_of(self, ids: Sequence[str]) -> tuple[list[str], Any, Any]:
        """(ids, emb, ctx) of these episodes' stored vectors, by primary key."""
        ...


class Embeddings(Protocol):
    """Entity-name and fact-statement vectors."""

    def create_names(self, ids: Sequence[str], namespaces: Sequence[str], emb: F32) -> None:
        """One row per entity; ids already stored are skipped (a retried write)."""
        ...

    def name_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these entities have a name vector."""
        ...

    def names_of(self, namespace: str) -> tuple[list[str], F32]:
        """Every name vector of the namespace: (entity ids, matrix), one Arrow read."""
        ...

    def entities_without_names(self, namespace: str) -> list[tuple[str, str]]:
        """(id, name) of the namespace's entities with no name vector (backfill); values
        (ages, dates) have none.
        """
        ...

    def delete_names(self, ids: Sequence[str]) -> None: ...

    def orphan_names(self, namespace: str) -> list[str]:
        """Name vectors whose entity is gone (an erase, or one interrupted before cleanup)."""
        ...

    def create_statements(
        self, ids: Sequence[str], namespaces: Sequence[str], vectors: Sequence[F32]
    ) -> None:
        """One row per statement key: `vectors` are (whole, without subject), each
        (n, 384). Keys already stored are skipped.
        """
        ...

    def statement_ids(self, ids: Sequence[str]) -> set[str]: ...

    def statement_vectors(self, ids: Sequence[str]) -> dict[str, tuple[F32, F32]]:
        """key -> (whole, without subject) for the keys stored."""
        ...

    def statement_rows(self, namespace: str) -> list[tuple[str, str, str | None]]:
        """Distinct (subject, predicate, object) of every version in the namespace."""
        ...

    def statement_keys_of(self, namespace: str) -> set[str]: ...

    def delete_statements(self, ids: Sequence[str]) -> None: ...

    def namespaces_with_entities(self) -> list[str]: ...

    def delete_all_derived(self) -> int:
        """Every name and statement vector (a new model replaces them all); how many."""
        ...


class Uses(Protocol):
    """When recall last returned an episode, and how often."""

    def record(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, at (aware), n (uses since the last record); one statement."""
        ...

    def uses(self, namespace: str) -> dict[str, tuple[datetime, int]]:
        """Every used episode of a namespace: id -> (last used, how many times)."""
        ...

    def columns(
        self, namespace: str
    ) -> tuple[list[str], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """(ids, last use as POSIX seconds, use counts) of a namespace's used episodes,
        as columns: what recall's index loads (a Python row each would cost ~10 µs).
        """
        ...

    def delete(self, episode_ids: Sequence[str]) -> None:
        """Forget the uses of erased episodes (inside the erase transaction)."""
        ...
