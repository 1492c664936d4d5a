"""Recall maintenance: rebuild the search indexes and re-embed every episode (`reindex`).

    >>> with Memory.open(path, embedder=new_model, reembed=True) as mem:
    ...     mem.reindex(re_embed=True)             # every vector from the new model
    {'namespaces': 1, 'episodes': 1200, 're_embedded': 1200, ...}

A memory records its embedder's identity and refuses another model
(`embedder_mismatch`); `Memory.open(..., reembed=True)` accepts the new model
and drops the old vectors, and `reindex(re_embed=True)` recomputes them all in
batches (missing ones would otherwise be filled lazily at the next recall).
Entity-name and fact-statement vectors (written with each fact, `embed_worker.py`)
are covered too: `reindex()` embeds the missing ones (a memory from before
migration 6, or written without an embedder) and drops those of erased content;
`re_embed` recomputes them all. Vectors are replaced by delete + insert, never SET
(notes §6.7).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ValidationError
from ._episode_rows import episode_vectors, predecessors
from .embed_worker import EmbedWorker
from .index import RecallIndex

if TYPE_CHECKING:
    from ..engine.context import Context
    from .embedder import Embedder

Progress = Callable[[int, int], None]  # (done, total) episodes


class Reindexer:
    """`reindex`: every derived recall row rebuilt, and optionally every vector."""

    def __init__(
        self, ctx: Context, index: RecallIndex, embed: EmbedWorker, embedder: Embedder | None
    ) -> None:
        self._ctx = ctx
        self._index = index
        self._embed = embed
        self._embedder = embedder

    def reindex(
        self,
        *,
        re_embed: bool = False,
        batch_size: int = 256,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Rebuild recall's indexes over every namespace; with `re_embed`, first recompute
        every episode's vectors with the configured embedder and record its identity.

        >>> mem.reindex()["vector_path"]
        {'default': 'exact'}

        Without `re_embed` only what is derived is rebuilt: missing search rows and
        vectors (written by the current model), and the HNSW generation of namespaces
        above the vector threshold.
        """
        ctx = self._ctx
        ctx.check_open()
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValidationError("batch_size: a positive integer", field="batch_size")
        emb = self._embedder
        if re_embed and emb is None:
            raise ValidationError(
                "re_embed: needs an embedder (this memory was opened with embedder=None)",
                field="re_embed",
            )
        index = self._index
        self._embed.drain()  # what the worker still holds is stored, not backfilled twice
        with ctx.lock:
            spaces = self._ctx.store.recall.namespaces_with_episodes()
            tables = {ns: self._ctx.store.recall.episodes(ns) for ns in spaces}
            total = sum(t.num_rows for t in tables.values())
            done = 0
            if re_embed and emb is not None:
                for ns, t in tables.items():
                    ids = [str(x) for x in t.column("id").to_pylist()]
                    prev_of = predecessors(t, ids)
                    for start in range(0, len(ids), batch_size):
                        chunk = ids[start : start + batch_size]
                        need = set(chunk) | {p for e in chunk if (p := prev_of.get(e))}
                        rows = self._ctx.store.recall.episode_rows(need)
                        chunk = [e for e in chunk if e in rows]  # erased meanwhile
                        e_vecs, c_vecs = episode_vectors(
                            emb,
                            [rows[e] for e in chunk],
                            [rows.get(prev_of.get(e) or "") for e in chunk],
                        )
                        with ctx.store.write():
                            self._ctx.store.recall.delete_embeddings(chunk)
                            self._ctx.store.recall.create_embeddings(
                                chunk, [ns] * len(chunk), e_vecs, c_vecs
                            )
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
                with ctx.store.write():
                    # the HNSW generation was built from the old model's vectors
                    self._ctx.store.vectors.retire_vector_generation()
                    self._ctx.store.recall.set_embedder_identity(emb.identity())
            derived = self._reindex_derived(re_embed=re_embed, batch_size=batch_size)
            index.clear()
            kinds: dict[str, str] = {}
            for ns in spaces:
                index.backfill(ns)
            threshold = index.vector_threshold
            generation = None
            if emb is not None and any(t.num_rows > threshold for t in tables.values()):
                generation = self._ctx.store.vectors.build_vector_generation()
            for ns in spaces:
                kinds[ns] = index.index(ns).vectors.kind
        if progress is not None and not re_embed:
            progress(total, total)
        return {
            "namespaces": len(spaces),
            "episodes": total,
            "re_embedded": done,
            "vector_path": kinds,
            "hnsw_generation": generation,
            "embedder": None if emb is None else emb.identity(),
            **derived,
        }

    def _reindex_derived(self, *, re_embed: bool, batch_size: int) -> dict[str, int]:
        """Entity-name and statement vectors: every one recomputed (`re_embed`), or the
        missing ones filled in and those of gone entities and statements dropped."""
        emb = self._embedder
        counts = {"names_embedded": 0, "statements_embedded": 0}
        if emb is None:
            return counts
        if re_embed:
            with self._ctx.store.write():
                self._ctx.store.embeddings.delete_all_derived()
        for ns in self._ctx.store.embeddings.namespaces_with_entities():
            names, statements = self._embed.backfill(ns, batch_size=batch_size)
            counts["names_embedded"] += names
            counts["statements_embedded"] += statements
        return counts
