"""Step 7, index: recall's HNSW generation, when a namespace above the threshold needs one.

    >>> change = index.check(run)          # two counts; None when nothing is stale
    >>> index.build(run, change)           # minutes at 10^5 vectors: without the lock

Recall never builds the generation itself (`recall._vectors.stale` says when one
is due); the runner calls `build` without the memory's lock, so recall and reads
go on (exact meanwhile) and the generation is published under the lock, unless
the vectors changed model meanwhile (reindex).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...engine.context import Context
from ...models import ConsolidationChange
from ...recall._vectors import stale
from ...recall.index import RecallIndex
from .._run import Run

if TYPE_CHECKING:
    from ...recall.embedder import Embedder


class Index:
    def __init__(self, ctx: Context, index: RecallIndex, embedder: Embedder | None) -> None:
        self._ctx = ctx
        self._index = index
        self._embedder = embedder

    def check(self, run: Run) -> ConsolidationChange | None:
        """Does recall need a new HNSW generation (`recall._vectors.stale`)? The change
        to build for, or None. Two counts; `build` builds, without the lock. First, what
        the run archived leaves recall's cached index (`RecallIndex.archived_changed`)."""
        if not run.dry_run:
            self._index.archived_changed(run.namespace)
        if self._embedder is None:
            return None  # recall reads no vectors without an embedder
        threshold = self._index.vector_threshold
        n, indexed = self._ctx.store.vectors.vector_counts(run.namespace)
        why = stale(n, indexed, threshold)
        if why is None:
            return None
        change = run.add(
            "index",
            "indexed",
            [run.namespace],
            f"{n} vectors, above the vector threshold {threshold}, and {why}: recall"
            " searches a new HNSW generation (the delta since it exactly)",
        )
        return None if run.dry_run else change

    def build(self, run: Run, change: ConsolidationChange) -> None:
        """Build the generation while recall goes on (exact meanwhile), then publish it
        under the lock, unless the vectors changed model meanwhile (reindex)."""
        before = (
            self._ctx.store.vectors.vector_generation(),
            self._ctx.store.recall.embedder_identity(),
        )
        g = self._ctx.store.vectors.build_vector_generation(publish=False)
        with self._ctx.lock:
            if (
                self._ctx.store.vectors.vector_generation(),
                self._ctx.store.recall.embedder_identity(),
            ) != before or (self._ctx.store.vectors.last_vector_generation() != g):
                self._ctx.store.vectors.empty_generation(g)  # built from vectors replaced meanwhile
                run.redo(change, "abandoned", "the vectors were rebuilt while it was built")
                return
            self._ctx.store.vectors.publish_vector_generation(g)
            self._index.generation_published()
        change.targets.append(f"generation {g}")
