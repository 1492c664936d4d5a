"""Recall's in-process index: per namespace, the episodes as aligned arrays, and upkeep.

    >>> index = RecallIndex(ctx, embedder)
    >>> ix = index.index("default")        # loaded on first need (table, vectors, BM25)
    >>> ix.ids[:2], ix.vectors.kind        # (['ep_…', 'ep_…'], 'exact')

BM25 over each turn with the previous turn of its session (Kùzu's full-text
scoring, kept in process by `_bm25.py`) and exact cosines over a numpy matrix
(or Kùzu's HNSW index above the vector threshold, `_vectors.py`), loaded on the
first recall of a namespace and appended as episodes are remembered: `prepare`
computes the search rows and vectors outside the write lock, `written` stores
them inside the transaction and stages them, `index` appends the staged rows
whose transaction committed; `predecessor` gives remember a session's previous
turn from the loaded index (Kùzu has no index to find it by). Search rows an older
memory lacks are written by `backfill`. What drops the cache: `forget_episodes`
(erase), `drop` (restore), `clear` (a new embedder, reindex), `generation_published`
(a new HNSW generation).

Where other processes write the store too, an index stamped with an older
`Context.foreign` (read at the start of each call) catches up before it answers
(`_catch_up`): the episodes they remembered are appended, those they erased (or
restored over) make it load again, and their archiving is read again. That is one
read of the namespace's search-row ids and one of its archived ids, plus the new
rows, at a call after another process wrote; nothing on Kùzu.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._time import epoch_us
from ..errors import EmbedderMismatch, ValidationError
from ..storage import EMB_DIM
from . import _bm25, _vectors
from ._episode_rows import episode_vectors, floats, posix, predecessors, search_text
from ._shown import Shown

if TYPE_CHECKING:
    from ..engine.context import Context
    from ..extraction import Extraction
    from .embedder import Embedder

F32 = npt.NDArray[np.float32]


@dataclass
class Pending:
    """Search rows and vectors computed before a write transaction."""

    texts: list[dict[str, Any]]
    emb: F32 | None
    ctx: F32 | None


@dataclass
class NamespaceIndex:
    """One namespace's episodes as aligned arrays (the in-process vector cache)."""

    namespace: str
    ids: list[str]
    pos: dict[str, int]
    session: npt.NDArray[np.int64]  # a code per session; a sessionless episode is its own
    occurred: npt.NDArray[np.float64]  # POSIX seconds
    recorded: npt.NDArray[np.float64]
    vectors: _vectors.VectorIndex  # (turn, context) cosines per row; exact or HNSW
    speakers: set[str]
    session_codes: dict[str, int]
    position: npt.NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    # archived (consolidation): set at load, refreshed by `archived_changed`
    archived: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, np.bool_))
    # POSIX time of the last use, NaN for never; filled and kept by `engine.uses.UseLog`
    last_used: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    importance: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    staged: list[tuple[dict[str, Any], F32 | None, F32 | None]] = field(default_factory=list)
    words: _bm25.Bm25 | None = None  # BM25 postings of the search rows, aligned with ids
    shown: Shown | None = None  # what a hit shows of each episode, aligned with ids
    foreign: int = 0  # `Context.foreign` it is current at (other processes' writes)

    def renumber(self, sessions: npt.NDArray[np.int64] | None = None) -> None:
        """Turn order within each session, by occurrence time (ties by id); with
        `sessions`, only theirs (those new turns joined: the rest keep their order)."""
        n = len(self.ids)
        if sessions is None or len(self.position) > n:
            rows = np.arange(n)
            self.position = np.zeros(n, dtype=np.int64)
        else:
            rows = np.flatnonzero(np.isin(self.session, sessions))
            grown = np.zeros(n - len(self.position), dtype=np.int64)
            self.position = np.concatenate([self.position, grown])
        ids = np.array([self.ids[i] for i in rows.tolist()], dtype=object)
        order = rows[np.lexsort((ids, self.occurred[rows], self.session[rows]))]
        s = self.session[order]
        # sorted by session first: each run of one session counts from 0
        start = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        firsts = np.repeat(start, np.diff(np.r_[start, len(s)]))
        self.position[order] = np.arange(len(order)) - firsts

    def latest_turn(self, session: str, before: datetime | None) -> tuple[bool, str | None]:
        """(whether it can tell, the id of the session's latest turn that occurred before
        `before` or at all), ties to the greater id as the store orders them; a turn
        without an occurrence time leaves it to the store."""
        code = self.session_codes.get(session)
        if code is None:
            return True, None
        rows = np.flatnonzero(self.session == code)
        t = self.occurred[rows]
        if np.isnan(t).any():
            return False, None
        # exact microseconds: POSIX seconds as floats keep them, rounding recovers them
        us = np.rint(t * 1e6).astype(np.int64)
        if before is not None:
            earlier = us < epoch_us(before)
            rows, us = rows[earlier], us[earlier]
        if not len(rows):
            return True, None
        return True, max(self.ids[r] for r in rows[us == us.max()].tolist())


class RecallIndex:
    """Every namespace's `NamespaceIndex`, and their upkeep."""

    def __init__(self, ctx: Context, embedder: Embedder | None) -> None:
        self._ctx = ctx
        self.embedder = embedder  # None: recall by words only
        self._store = ctx.store
        self.indexes: dict[str, NamespaceIndex] = {}
        # above this many episodes a namespace searches HNSW (Memory.open(vector_threshold=))
        self.vector_threshold = _vectors.DEFAULT_VECTOR_THRESHOLD

    def clear(self) -> None:
        """Every namespace reloads at its next recall."""
        self.indexes.clear()

    def drop(self, ns: str) -> None:
        """On `Events.restored`: the namespace reloads at its next recall."""
        self.indexes.pop(ns, None)

    def archived_changed(self, ns: str) -> None:
        """After a consolidation run (its `index` step): episodes it archived leave the
        namespace's cached index (one query; nothing when the namespace is not loaded)."""
        with self._ctx.lock:
            ix = self.indexes.get(ns)
            if ix is not None:
                gone = self._store.recall.archived(ns)
                ix.archived = np.array([e in gone for e in ix.ids], dtype=np.bool_)

    def generation_published(self) -> None:
        """A new HNSW generation was published: cached HNSW paths search the emptied
        generation, and exact ones above the threshold can drop their matrix; both
        reload at their next recall."""
        for ns, ix in list(self.indexes.items()):
            if ix.vectors.kind == "hnsw" or len(ix.ids) > self.vector_threshold:
                del self.indexes[ns]

    def warm(self, ns: str) -> None:
        """Load the namespace's recall cache (episode table, vectors, BM25 postings) now
        rather than at the first recall.

        >>> mem.warm_recall()
        """
        with self._ctx.lock:
            self.index(ns)

    def kind(self, ns: str) -> str:
        """ "exact" (numpy matrix) or "hnsw" (Kùzu's index): the namespace's vector path.

        >>> mem.vector_index_kind()
        'exact'
        """
        with self._ctx.lock:
            return self.index(ns).vectors.kind

    def open(self, *, reembed: bool = False) -> None:
        """At open: the vectors must be this model's.

        Raises EmbedderMismatch when the memory's recorded model differs from the
        configured one, unless `reembed`: then every vector is dropped and rebuilt
        (lazily, per namespace, on the next recall).
        """
        # Kùzu's full-text index, which the first recall of older versions created:
        # nothing reads it (BM25 is in process), every write paid for it, and creating
        # it on a read was DDL that timed out under concurrent writers. Dropped here, at
        # open, before any reader or writer of this process can be active.
        self._store.recall.drop_fts_index()
        emb = self.embedder
        if emb is None:
            return  # words only; vectors written by other runs are left as they are
        if emb.dim != EMB_DIM:
            raise ValidationError(
                f"embedder: vectors of {emb.dim} dimensions; this store holds {EMB_DIM}",
                field="embedder",
            )
        mine = emb.identity()
        recorded = self._store.recall.embedder_identity()
        if recorded == mine:
            return
        if recorded is not None and not reembed:
            raise EmbedderMismatch(
                f"this memory's vectors come from {recorded!r}, not from the configured"
                f" {mine!r}; open it with that model, or with reembed=True to recompute them",
                recorded=recorded,
                configured=mine,
            )
        with self._ctx.lock, self._ctx.store.write():
            if recorded is not None:
                self._store.recall.delete_all_embeddings()
            self._store.recall.set_embedder_identity(mine)
        self.indexes.clear()

    # --- writes (called by remember_many) ------------------------------------------------
    def prepare(
        self,
        ns: str,
        fresh: Sequence[Mapping[str, Any]],
        extractions: Mapping[str, Extraction],
    ) -> Pending | None:
        """Search text and vectors of new episodes, computed outside the write lock.

        Each turn is paired with the turn before it in its session: the previous
        stored one for the batch's first turn of a session, else the batch's own.
        """
        if not fresh:
            return None
        items: list[dict[str, Any]] = []
        for p in fresh:
            ex = extractions.get(p["id"])
            # remember_many stores a decision record in place of a bare "yes"
            text = ex.decision if ex is not None and ex.decision else p["text"]
            items.append({"id": p["id"], "text": text, "speaker": p["speaker"], "p": p})
        prev: dict[str, Mapping[str, Any] | None] = {}
        by_session: dict[str, list[dict[str, Any]]] = {}
        for it in items:
            s = it["p"].get("session")
            if s is None:
                prev[it["id"]] = None
            else:
                by_session.setdefault(s, []).append(it)
        far = datetime.max.replace(tzinfo=UTC)
        for s, group in by_session.items():
            group.sort(key=lambda it: it["p"]["occurred_at"] or far)
            before: Mapping[str, Any] | None = self.predecessor(ns, s, group[0]["p"]["occurred_at"])
            for it in group:
                prev[it["id"]] = before
                before = it
        texts = [
            {
                "id": it["id"],
                "namespace": ns,
                "text": search_text(it, prev[it["id"]]),
                "prev": (prev[it["id"]] or {}).get("id"),
            }
            for it in items
        ]
        emb = ctx = None
        if self.embedder is not None:
            emb, ctx = episode_vectors(self.embedder, items, [prev[it["id"]] for it in items])
        return Pending(texts, emb, ctx)

    def predecessor(
        self, ns: str, session: str, before: datetime | None
    ) -> Mapping[str, Any] | None:
        """The latest stored episode of the session that occurred before `before` (or
        at all): the store's `predecessor`, answered from the namespace's index when it
        is loaded and current (then one read by key; Kùzu has no index to find it
        and scans the episode table, 13-45 ms at 10^5 episodes, twice a remember)."""
        with self._ctx.lock:
            ix = self.indexes.get(ns)
            if ix is not None and ix.foreign == self._ctx.foreign:
                if ix.staged:
                    self._apply(ix)  # this process's last turns, once committed
                known, found = ix.latest_turn(session, before)
                if known and found is None:
                    return None
                if found is not None:
                    row = self._store.recall.episode_rows([found]).get(found)
                    if row is not None:
                        return row
        return self._store.recall.predecessor(ns, session, before)

    def written(self, ns: str, pending: Pending | None, rows: Sequence[Any]) -> None:
        """Inside remember_many's transaction, after the episodes: their search rows.

        The namespace's vector cache takes the rows at the next recall, once the
        transaction is known to have committed.
        """
        if pending is None or not rows:
            return
        created = {r["id"]: r for r in rows}
        keep = [i for i, t in enumerate(pending.texts) if t["id"] in created]
        self._store.recall.create_texts([pending.texts[i] for i in keep])
        ids = [pending.texts[i]["id"] for i in keep]
        emb = ctx = None
        if pending.emb is not None and pending.ctx is not None:
            emb, ctx = pending.emb[keep], pending.ctx[keep]
            self._store.recall.create_embeddings(ids, [ns] * len(ids), emb, ctx)
        ix = self.indexes.get(ns)
        if ix is not None:
            for j, eid in enumerate(ids):
                ix.staged.append(
                    (
                        dict(created[eid]),
                        None if emb is None else emb[j],
                        None if ctx is None else ctx[j],
                    )
                )

    def forget_episodes(self, ns: str, episode_ids: Sequence[str]) -> None:
        """On `Events.erased`: take erased episodes' words out of the search rows, their
        own and the next turn's (which quotes them as context), inside the erase
        transaction; the namespace's index reloads at its next recall."""
        if not episode_ids:
            return  # a fact's erasure: no search row holds it
        with self._ctx.lock:
            quoting = {q for e in episode_ids for q in self._store.recall.texts_citing(e)} - set(
                episode_ids
            )
            with self._ctx.store.write(ns):
                self._store.recall.delete_for([*episode_ids, *sorted(quoting)])
            self.indexes.pop(ns, None)
        # the quoting turns get new search rows at the next load (backfill)

    # --- the index -------------------------------------------------------------------------
    def index(self, ns: str) -> NamespaceIndex:
        """The namespace's index, loaded on first need, with committed new rows appended."""
        cache = self.indexes
        ix = cache.get(ns)
        if ix is not None and ix.foreign != self._ctx.foreign:
            ix = self._catch_up(ix)
        if ix is None:
            self.backfill(ns)
            ix = cache[ns] = self._load(ns)
        elif ix.staged:
            self._apply(ix)
        return ix

    def _catch_up(self, ix: NamespaceIndex) -> NamespaceIndex | None:
        """Another process wrote since `ix` was current: append the episodes it
        remembered, read archiving again; None (load again) when it erased or restored
        any (their search rows are gone) or left one without its vectors. (A store
        several processes write searches exactly: no HNSW generation is ever live.)"""
        ns, store, foreign = ix.namespace, self._store, self._ctx.foreign
        held = store.recall.text_ids(ns)
        if not held.issuperset(ix.ids):
            self.indexes.pop(ns, None)
            return None
        staged = {r["id"] for r, _, _ in ix.staged}
        new = sorted(held.difference(ix.pos, staged))
        rows = store.recall.episode_rows(new) if new else {}
        vectors: dict[str, tuple[F32, F32]] = {}
        if rows and self.embedder is not None:
            got, emb, ctx = store.vectors.embeddings_of(list(rows))
            vectors = {e: (emb[i], ctx[i]) for i, e in enumerate(got)}
            if len(vectors) < len(rows):  # written without an embedder: `backfill` on load
                self.indexes.pop(ns, None)
                return None
        for eid in sorted(rows, key=lambda e: (rows[e]["recorded_at"], e)):
            emb_ctx = vectors.get(eid)
            ix.staged.append(
                (
                    dict(rows[eid]),
                    None if emb_ctx is None else emb_ctx[0],
                    None if emb_ctx is None else emb_ctx[1],
                )
            )
        if ix.staged:
            self._apply(ix)
        gone = store.recall.archived(ns)
        ix.archived = np.array([e in gone for e in ix.ids], dtype=np.bool_)
        ix.foreign = foreign
        return ix

    def _load(self, ns: str) -> NamespaceIndex:
        foreign = self._ctx.foreign  # read before the rows: what they include at least
        t = self._store.recall.episodes(ns)
        ids = [str(x) for x in t.column("id").to_pylist()]
        n = len(ids)
        codes: dict[str, int] = {}
        session = np.zeros(n, dtype=np.int64)
        for i, s in enumerate(t.column("session").to_pylist()):
            session[i] = codes.setdefault(s if s is not None else "\x00" + ids[i], len(codes))
        pos = {e: i for i, e in enumerate(ids)}
        vectors = _vectors.load(
            self._store,
            ns,
            ids,
            pos,
            dim=EMB_DIM,
            threshold=self.vector_threshold,
            with_vectors=self.embedder is not None,
        )
        ix = NamespaceIndex(
            namespace=ns,
            ids=ids,
            pos=pos,
            session=session,
            occurred=posix(t.column("occurred_at")),
            recorded=posix(t.column("recorded_at")),
            vectors=vectors,
            speakers={str(s) for s in t.column("speaker").to_pylist() if s},
            session_codes=codes,
            foreign=foreign,
        )
        ix.renumber()
        texts = self._store.recall.texts(ns)
        ix.words = _bm25.Bm25.build([texts.get(e) for e in ids], self._store.recall.stems)
        gone = self._store.recall.archived(ns)
        ix.archived = np.array([e in gone for e in ids], dtype=np.bool_)
        ix.importance = floats(t.column("importance").to_pylist())
        ix.shown = Shown.of(t)
        return ix

    def _apply(self, ix: NamespaceIndex) -> None:
        """Append staged rows whose transaction committed; drop the rest."""
        staged, ix.staged = ix.staged, []
        committed = self._store.recall.texts_of([r["id"] for r, _, _ in staged])
        add = [(r, e, c) for r, e, c in staged if r["id"] in committed and r["id"] not in ix.pos]
        if not add:
            return
        n0 = len(ix.ids)
        session = np.zeros(len(add), dtype=np.int64)
        for j, (r, _, _) in enumerate(add):
            ix.pos[r["id"]] = n0 + j
            ix.ids.append(r["id"])
            s = r.get("session")
            key = s if s is not None else "\x00" + r["id"]
            session[j] = ix.session_codes.setdefault(key, len(ix.session_codes))
            ix.speakers.add(r["speaker"])
        zero = np.zeros(EMB_DIM, dtype=np.float32)
        ix.session = np.concatenate([ix.session, session])
        ix.occurred = np.concatenate(
            [ix.occurred, np.array([r["occurred_at"].timestamp() for r, _, _ in add])]
        )
        ix.recorded = np.concatenate(
            [ix.recorded, np.array([r["recorded_at"].timestamp() for r, _, _ in add])]
        )
        ix.vectors.append(
            np.stack([zero if e is None else e for _, e, _ in add]),
            np.stack([zero if c is None else c for _, _, c in add]),
        )
        ix.archived = np.concatenate([ix.archived, np.zeros(len(add), dtype=np.bool_)])
        ix.importance = np.concatenate(
            [ix.importance, floats([r.get("importance") for r, _, _ in add])]
        )
        if ix.words is not None:
            ix.words.append([committed[r["id"]] for r, _, _ in add])
        if ix.shown is not None:
            ix.shown.append([r for r, _, _ in add])
        ix.renumber(np.unique(session))

    def backfill(self, ns: str) -> None:
        """Write search rows the namespace lacks: episodes stored before migration 2 or
        without an embedder, vectors dropped by `reembed`, neighbours of an erased turn;
        and drop rows whose episode is gone (an erase interrupted before its cleanup)."""
        orphans = self._store.recall.orphans(ns)
        t = self._store.recall.episodes(ns)
        ids = [str(x) for x in t.column("id").to_pylist()]
        missing_text = set(ids) - self._store.recall.text_ids(ns)
        missing_emb: set[str] = set()
        if self.embedder is not None:
            missing_emb = set(ids) - self._store.recall.stored_embeddings(ids)
        if not (orphans or missing_text or missing_emb):
            return
        todo = missing_text | missing_emb
        prev_of = predecessors(t, ids) if todo else {}
        rows = self._store.recall.episode_rows(
            todo | {p for e in todo if (p := prev_of.get(e)) is not None}
        )
        order = sorted(todo)
        texts = [
            {
                "id": e,
                "namespace": ns,
                "text": search_text(rows[e], rows.get(prev_of.get(e) or "")),
                "prev": prev_of.get(e),
            }
            for e in order
            if e in missing_text
        ]
        emb_ids = [e for e in order if e in missing_emb]
        emb = ctx = None
        if self.embedder is not None and emb_ids:
            emb, ctx = episode_vectors(
                self.embedder,
                [rows[e] for e in emb_ids],
                [rows.get(prev_of.get(e) or "") for e in emb_ids],
            )
        with self._ctx.lock, self._ctx.store.write(ns):
            self._store.recall.delete_for(orphans)
            self._store.recall.create_texts(texts)
            if emb is not None and ctx is not None:
                self._store.recall.create_embeddings(emb_ids, [ns] * len(emb_ids), emb, ctx)
