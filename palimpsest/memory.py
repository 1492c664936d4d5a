"""`Memory`, the one entry object.

    >>> with Memory.open("palimpsest-data") as mem:
    ...     mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    ...     [f.object for f in mem.facts("user", "lives_in")]
    ['Sydney']

Every write is one Kùzu transaction stamped with one transaction time K from
the clock (never earlier than the last one). The verbs live in small mixins,
one concern each: `_writes` (assert, end, retract), `_erasure`, `_episodes`
(remember), `_reads` (facts, history, entity, snapshot, changes), `_inspect`
(find_entities, timeline, explain, neighbourhood), `_review` (quarantined,
promote, reject); `_core` holds the shared state.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from . import _names as names
from ._consolidate import _Consolidate
from ._core import DEFAULT_PATH, UNSET
from ._episodes import _Episodes
from ._erasure import _Erasure
from ._inspect import _Inspect
from ._reads import _Reads
from ._recall import _Recall
from ._reindex import _Reindex
from ._review import _Review
from ._time import Clock, utcnow
from ._transfer import _Transfer
from .errors import ValidationError
from .graph import Store

if TYPE_CHECKING:
    from .extraction import Extractor
    from .recall import Embedder

__all__ = ["DEFAULT_PATH", "UNSET", "Memory"]


class Memory(
    _Review, _Inspect, _Transfer, _Consolidate, _Episodes, _Reindex, _Recall, _Erasure, _Reads
):
    """An agent's memory in one directory: episodes, entities, and bitemporal facts."""

    # --- lifecycle ---------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | Path = DEFAULT_PATH,
        *,
        clock: Clock | None = None,
        namespace: str = "default",
        extractor: Extractor | Literal["spacy"] | None = "spacy",
        embedder: Embedder | Literal["minilm"] | None = "minilm",
        reembed: bool = False,
        vector_threshold: int | None = None,
    ) -> Memory:
        """Open (or create) the memory directory at `path`.

        `clock() -> aware datetime` is the transaction clock; the default is UTC
        now. `extractor` turns remembered text into facts: the spaCy one by
        default (its model loads on the first `remember`), any object with the
        `extraction.Extractor` shape, or None to store episodes without facts.
        `embedder` turns text into vectors for recall: all-MiniLM-L6-v2 by default
        (loaded on first use), any `recall.Embedder`, or None to recall by words
        only. A memory whose vectors came from another model raises
        EmbedderMismatch unless `reembed=True`, which recomputes them.
        `vector_threshold`: above this many episodes in a namespace, recall searches
        Kùzu's HNSW index instead of an exact in-memory matrix (default 200,000),
        once the nightly consolidation or `reindex` has built it (recall never does).
        """
        ns = names.check_namespace(namespace)
        if vector_threshold is not None and (
            isinstance(vector_threshold, bool)
            or not isinstance(vector_threshold, int)
            or vector_threshold < 0
        ):
            raise ValidationError("vector_threshold: an integer >= 0", field="vector_threshold")
        if extractor == "spacy":
            from .extraction import SpacyExtractor

            extractor = SpacyExtractor()
        if embedder == "minilm":
            from .recall import SentenceTransformerEmbedder

            embedder = SentenceTransformerEmbedder()
        store = Store.open(Path(path))
        mem = cls(
            store,
            clock=clock or utcnow,
            namespace=ns,
            extractor=extractor,
            embedder=embedder,
        )
        if vector_threshold is not None:
            mem._vector_threshold = vector_threshold
        try:
            mem._recall_open(reembed=reembed)
        except BaseException:
            store.close()
            raise
        return mem

    @property
    def path(self) -> Path:
        return self._store.directory

    def close(self) -> None:
        """Close: write the recall uses still waiting and the vectors still being
        embedded, finish any pending erase compaction."""
        self._embed_stop()  # outside the lock: the embedding worker writes under it
        self._ahead.close()
        with self._lock:
            if not self._closed:
                try:
                    self._flush_uses()
                finally:
                    self._closed = True
                    self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
