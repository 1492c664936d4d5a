"""Step 1, dedupe: an episode that repeats another (same speaker) is kept as evidence,
folded into the one it repeats and archived.

    >>> Dedupe(store, cs, embedder).run(run)     # run.changes: "deduplicated"

Near-identical by normalised text, or by episode vectors (cosine) when there is
an embedder; the decision is `consolidation.duplicates`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...storage import Consolidation, Store
from .._dedupe import duplicates
from .._run import Run

if TYPE_CHECKING:
    from ...recall.embedder import Embedder


class Dedupe:
    def __init__(self, store: Store, cs: Consolidation, embedder: Embedder | None) -> None:
        self._store = store
        self._cs = cs
        self._embedder = embedder

    def run(self, run: Run) -> None:
        ns = run.namespace
        if run.since is not None and not self._cs.new_episode_count(ns, run.since):
            return
        rows = self._cs.episode_digest(ns)
        new = None
        if run.since is not None:
            new = {r["id"] for r in rows if r["recorded_at"] >= run.since}
        known = self._cs.duplicates(ns)
        found = duplicates(rows, new=new, known=known, vectors=self._episode_vectors(ns))
        for d in found:
            how = "the same text" if d.similarity >= 1.0 else f"cosine {d.similarity:.3f}"
            run.add(
                "dedupe",
                "deduplicated",
                [d.id, d.canonical],
                f"{d.id} repeats {d.canonical} ({how}, same speaker); kept as evidence, archived",
            )
        if run.dry_run or not found:
            return
        with self._store.write(ns):
            self._cs.record_duplicates(
                [
                    {
                        "id": d.id,
                        "namespace": ns,
                        "canonical": d.canonical,
                        "similarity": d.similarity,
                        "recorded_at": run.now,
                    }
                    for d in found
                ]
            )

    def _episode_vectors(self, ns: str) -> dict[str, Any] | None:
        if self._embedder is None:
            return None  # without an embedder: normalised-text equality only
        ids, emb, _ = self._embeddings(ns)
        return {i: emb[n] for n, i in enumerate(ids)} if ids else None

    def _embeddings(self, ns: str) -> tuple[list[str], Any, Any]:

        try:
            return self._store.recall.embeddings(ns)
        except Exception:  # no vectors stored (recall never ran): fall back to text
            return [], np.zeros((0, 0), np.float32), None
