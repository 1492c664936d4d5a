"""Recall: memories found by words and by meaning, as of (valid_at, known_at).

    >>> hits = mem.recall("where does the user live?", k=5)
    >>> [(h.kind, h.text, round(h.score, 2)) for h in hits]
    [('fact', 'user lives in Sydney', 0.83), ('episode', 'I moved to Sydney.', 0.61)]

Episodes are scored by two channels over the episodes recorded by `known_at`
and occurred by `valid_at`: BM25 (Kùzu's full-text scoring, kept in process by
`recall/_bm25.py`) over each turn with the previous turn of its session, and
exact cosine over an in-process numpy matrix per namespace (loaded on first
recall, appended on writes). The channels are fused on a calibrated 0..1
scale by `recall.ranking.relevance` (the ranking measured on LoCoMo by
bench/locomo_prototype.py), so one floor means the same for every query:
nothing above it, nothing returned. Facts believed at (valid_at, known_at)
one or two hops from the entities the query
names join as hits of their own, scored on the same scale (`recall/_facts.py`).
An episode that nearly repeats a better hit yields to distinct ones
(`recall(diversity=)`, `ranking.diversify`).

A day or month the question names ("on 2014/01/29", "in March 2023",
"yesterday" against valid_at) narrows the ranking to episodes that occurred
then (`ranking.time_narrow`), and its digits leave the word channel, where
they would match any other date. Recency counts from the later of `occurred_at`
and the episode's last use (`_use`: each answer's episodes count as used),
importance around its default; archived
episodes (consolidation) are not candidates but stay readable by id.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from . import _names as names
from ._time import TimeLike, to_utc
from ._use import _Uses, used_episodes
from .errors import EmbedderMismatch, ValidationError
from .graph._expand import ExpandStore
from .graph._recall import EMB_DIM, RecallStore
from .models import Hit
from .recall import _bm25, _vectors
from .recall import ranking as rk
from .recall._facts import WARNING, _FactRecall
from .recall._text import INDEX_STOPWORDS, number_tokens, query_words

if TYPE_CHECKING:
    import pyarrow as pa

    from .extraction import Extraction
    from .recall.embedder import Embedder

F32 = npt.NDArray[np.float32]

# Above this many visible episodes, the context smoothers (Python loops) only see
# the best candidates by the plain fused score, plus their session neighbours.
_PREFILTER = 2000
# An episode whose facts about a named entity no longer hold at valid_at still
# answers "what was true then", but should yield to what holds now.
_ENDED = 0.85
# A word in over this share of a large namespace's texts (and in at least _MIN of
# them) only counts towards term novelty: its idf cannot tell texts apart.
_UBIQUITOUS = 0.9
_UBIQUITOUS_MIN = 2000


@dataclass
class _Pending:
    """Search rows and vectors computed before a write transaction."""

    texts: list[dict[str, Any]]
    emb: F32 | None
    ctx: F32 | None


@dataclass
class _Index:
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
    # archived at load time (consolidation); later archivals are dropped at hit time
    archived: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, np.bool_))
    # POSIX time of the last use, NaN for never; filled and kept by `_use._Uses`
    last_used: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    importance: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0, np.float64))
    staged: list[tuple[dict[str, Any], F32 | None, F32 | None]] = field(default_factory=list)
    words: _bm25.Bm25 | None = None  # BM25 postings of the search rows, aligned with ids

    def renumber(self) -> None:
        """Turn order within each session, by occurrence time (ties by id)."""
        n = len(self.ids)
        order = np.lexsort((np.array(self.ids, dtype=object), self.occurred, self.session))
        position = np.zeros(n, dtype=np.int64)
        prev_s, p = None, 0
        for i in order:
            s = int(self.session[i])
            p = p + 1 if s == prev_s else 0
            prev_s = s
            position[i] = p
        self.position = position


def _posix(col: Any) -> npt.NDArray[np.float64]:
    import pyarrow as pa

    if len(col) == 0:
        return np.zeros(0, dtype=np.float64)
    us = col.cast(pa.timestamp("us")).cast(pa.int64()).to_numpy(zero_copy_only=False)
    return np.asarray(us, dtype=np.float64) / 1e6


def _search_text(row: Mapping[str, Any], prev: Mapping[str, Any] | None) -> str:
    """What BM25 indexes: 'Prev: text Speaker: text' plus number tokens, one line
    (Kùzu's tokenizer splits on spaces only, so newlines would glue words)."""
    own = f"{row['speaker']}: {row['text']}"
    text = own if prev is None else f"{prev['speaker']}: {prev['text']} {own}"
    text = " ".join(text.split())
    nums = number_tokens(text)
    return f"{text} {nums}" if nums else text


def _ctx_text(row: Mapping[str, Any], prev: Mapping[str, Any] | None) -> str:
    """What the context vector sees: the previous turn and this one, without speakers."""
    return row["text"] if prev is None else f"{prev['text']}\n{row['text']}"


@dataclass
class _Scored:
    """One query's candidates: rows of the index, relevance and channels, aligned."""

    rows: npt.NDArray[np.int64]
    score: F32
    bm25: F32
    dense: F32
    novelty: float

    @classmethod
    def empty(cls) -> _Scored:
        none = np.zeros(0, dtype=np.float32)
        return cls(np.zeros(0, dtype=np.int64), none, none, none, 0.0)


class _Recall(_FactRecall, _Uses):
    """`recall` and the search rows behind it."""

    _embedder: Embedder | None
    # set lazily: _Core.__init__ belongs to every mixin, these only to recall
    _recall_store: RecallStore
    _recall_indexes: dict[str, _Index]
    _recall_fts: bool
    _recall_stmt_vecs: dict[str, F32]

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def _rs(self) -> RecallStore:
        rs: RecallStore | None = getattr(self, "_recall_store", None)
        if rs is None:
            rs = self._recall_store = RecallStore(self._store.db)
        return rs

    def _recall_ix(self) -> dict[str, _Index]:
        ix: dict[str, _Index] | None = getattr(self, "_recall_indexes", None)
        if ix is None:
            ix = self._recall_indexes = {}
        return ix

    def _recall_open(self, *, reembed: bool = False) -> None:
        """At open: the vectors must be this model's.

        Raises EmbedderMismatch when the memory's recorded model differs from the
        configured one, unless `reembed`: then every vector is dropped and rebuilt
        (lazily, per namespace, on the next recall).
        """
        rs = self._rs
        emb = self._embedder
        if emb is None:
            return  # words only; vectors written by other runs are left as they are
        if emb.dim != EMB_DIM:
            raise ValidationError(
                f"embedder: vectors of {emb.dim} dimensions; this store holds {EMB_DIM}",
                field="embedder",
            )
        mine = emb.identity()
        recorded = rs.embedder_identity()
        if recorded == mine:
            return
        if recorded is not None and not reembed:
            raise EmbedderMismatch(
                f"this memory's vectors come from {recorded!r}, not from the configured"
                f" {mine!r}; open it with that model, or with reembed=True to recompute them",
                recorded=recorded,
                configured=mine,
            )
        with self._lock, self._store.write():
            if recorded is not None:
                rs.delete_all_embeddings()
            rs.set_embedder_identity(mine)
        self._recall_ix().clear()

    # --- writes (called by remember_many) ------------------------------------------------
    def _recall_prepare(
        self,
        ns: str,
        fresh: Sequence[Mapping[str, Any]],
        extractions: Mapping[str, Extraction],
    ) -> _Pending | None:
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
            before: Mapping[str, Any] | None = self._rs.predecessor(
                ns, s, group[0]["p"]["occurred_at"]
            )
            for it in group:
                prev[it["id"]] = before
                before = it
        texts = [
            {
                "id": it["id"],
                "namespace": ns,
                "text": _search_text(it, prev[it["id"]]),
                "prev": (prev[it["id"]] or {}).get("id"),
            }
            for it in items
        ]
        emb = ctx = None
        if self._embedder is not None:
            emb = self._embedder.embed([it["text"] for it in items])
            ctx = self._embedder.embed([_ctx_text(it, prev[it["id"]]) for it in items])
        return _Pending(texts, emb, ctx)

    def _recall_written(self, ns: str, pending: _Pending | None, rows: Sequence[Any]) -> None:
        """Inside remember_many's transaction, after the episodes: their search rows.

        The namespace's vector cache takes the rows at the next recall, once the
        transaction is known to have committed.
        """
        if pending is None or not rows:
            return
        created = {r["id"]: r for r in rows}
        keep = [i for i, t in enumerate(pending.texts) if t["id"] in created]
        rs = self._rs
        rs.create_texts([pending.texts[i] for i in keep])
        ids = [pending.texts[i]["id"] for i in keep]
        emb = ctx = None
        if pending.emb is not None and pending.ctx is not None:
            emb, ctx = pending.emb[keep], pending.ctx[keep]
            rs.create_embeddings(ids, [ns] * len(ids), emb, ctx)
        ix = self._recall_ix().get(ns)
        if ix is not None:
            for j, eid in enumerate(ids):
                ix.staged.append(
                    (
                        dict(created[eid]),
                        None if emb is None else emb[j],
                        None if ctx is None else ctx[j],
                    )
                )

    def _forget_episodes(self, ns: str, episode_ids: Sequence[str]) -> None:
        """Erase hook: take erased episodes' words out of the search rows, their own and
        the next turn's (which quotes them as context), inside the erase transaction."""
        rs = self._rs
        with self._lock:
            quoting = {q for e in episode_ids for q in rs.texts_citing(e)} - set(episode_ids)
            with self._store.write():
                rs.delete_for([*episode_ids, *sorted(quoting)])
            self._recall_ix().pop(ns, None)
            self._recall_stmt_vecs = {}  # hold no vector of erased words
        # the quoting turns get new search rows at the next load (backfill)

    # --- the index -------------------------------------------------------------------------
    def _recall_index(self, ns: str) -> _Index:
        cache = self._recall_ix()
        if not getattr(self, "_recall_fts", False):
            # created on first recall, not at open: it costs ~0.4 s on an empty store,
            # indexes the rows already written, and cannot run inside a transaction
            self._rs.ensure_index()
            self._recall_fts = True
        ix = cache.get(ns)
        if ix is None:
            self._recall_backfill(ns)
            ix = cache[ns] = self._recall_load(ns)
        elif ix.staged:
            self._recall_apply(ix)
        return ix

    def _recall_load(self, ns: str) -> _Index:
        rs = self._rs
        t = rs.episodes(ns)
        ids = [str(x) for x in t.column("id").to_pylist()]
        n = len(ids)
        codes: dict[str, int] = {}
        session = np.zeros(n, dtype=np.int64)
        for i, s in enumerate(t.column("session").to_pylist()):
            session[i] = codes.setdefault(s if s is not None else "\x00" + ids[i], len(codes))
        pos = {e: i for i, e in enumerate(ids)}
        vectors = _vectors.load(
            rs,
            ns,
            ids,
            pos,
            dim=EMB_DIM,
            threshold=getattr(self, "_vector_threshold", _vectors.DEFAULT_VECTOR_THRESHOLD),
            with_vectors=self._embedder is not None,
        )
        ix = _Index(
            namespace=ns,
            ids=ids,
            pos=pos,
            session=session,
            occurred=_posix(t.column("occurred_at")),
            recorded=_posix(t.column("recorded_at")),
            vectors=vectors,
            speakers={str(s) for s in t.column("speaker").to_pylist() if s},
            session_codes=codes,
        )
        ix.renumber()
        texts = rs.texts(ns)
        ix.words = _bm25.Bm25.build([texts.get(e) for e in ids], rs.stems)
        gone = ExpandStore(self._store.db).archived(ns)
        ix.archived = np.array([e in gone for e in ids], dtype=np.bool_)
        ix.importance = _floats(t.column("importance").to_pylist())
        return ix

    def _recall_apply(self, ix: _Index) -> None:
        """Append staged rows whose transaction committed; drop the rest."""
        staged, ix.staged = ix.staged, []
        committed = self._rs.texts_of([r["id"] for r, _, _ in staged])
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
            [ix.importance, _floats([r.get("importance") for r, _, _ in add])]
        )
        if ix.words is not None:
            ix.words.append([committed[r["id"]] for r, _, _ in add])
        ix.renumber()

    def _recall_backfill(self, ns: str) -> None:
        """Write search rows the namespace lacks: episodes stored before migration 2 or
        without an embedder, vectors dropped by `reembed`, neighbours of an erased turn;
        and drop rows whose episode is gone (an erase interrupted before its cleanup)."""
        rs = self._rs
        orphans = rs.orphans(ns)
        t = rs.episodes(ns)
        ids = [str(x) for x in t.column("id").to_pylist()]
        missing_text = set(ids) - rs.text_ids(ns)
        missing_emb: set[str] = set()
        if self._embedder is not None:
            missing_emb = set(ids) - rs.stored_embeddings(ids)
        if not (orphans or missing_text or missing_emb):
            return
        todo = missing_text | missing_emb
        prev_of = _predecessors(t, ids) if todo else {}
        rows = rs.episode_rows(todo | {p for e in todo if (p := prev_of.get(e)) is not None})
        order = sorted(todo)
        texts = [
            {
                "id": e,
                "namespace": ns,
                "text": _search_text(rows[e], rows.get(prev_of.get(e) or "")),
                "prev": prev_of.get(e),
            }
            for e in order
            if e in missing_text
        ]
        emb_ids = [e for e in order if e in missing_emb]
        emb = ctx = None
        if self._embedder is not None and emb_ids:
            emb = self._embedder.embed([rows[e]["text"] for e in emb_ids])
            ctx = self._embedder.embed(
                [_ctx_text(rows[e], rows.get(prev_of.get(e) or "")) for e in emb_ids]
            )
        with self._lock, self._store.write():
            rs.delete_for(orphans)
            rs.create_texts(texts)
            if emb is not None and ctx is not None:
                rs.create_embeddings(emb_ids, [ns] * len(emb_ids), emb, ctx)

    # --- recall ------------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        k: int = 5,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        min_score: float | None = None,
        diversity: float | None = None,
        namespace: str | None = None,
    ) -> list[Hit]:
        """The `k` memories most relevant to `query`, as of (valid_at, known_at); [] when
        nothing clears the relevance floor (`min_score`, default 0.26): the abstention.

        >>> mem.recall("when does my sister arrive?", k=5)

        Only episodes recorded by `known_at` and occurred by `valid_at` take part
        (both default to now); facts must be believed at `known_at` and valid at
        `valid_at`. Quarantined content is returned with `quarantined=True` and a
        `warning`. Scores are calibrated relevance in 0..1. Once the best hit clears
        the floor, hits down to `RankParams.tail` times the floor (0.4: about 0.1 by default)
        come with it (`ranking.abstain`); `min_score=0` returns the `k` best whatever
        their scores. `diversity` (0..1, default `RankParams.diversity`) demotes an
        episode that nearly repeats a better one (cosine >= 0.9 or the same text) to
        `score * (1 - diversity * cosine)` (`ranking.diversify`); 0 turns it off.
        """
        ns = self._ns(namespace)
        text = names.check_text(query, field="query", limit=4000)
        if not text.strip():
            raise ValidationError("query: must not be empty", field="query")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValidationError("k: a positive integer", field="k")
        if min_score is not None and not (
            isinstance(min_score, int | float) and math.isfinite(min_score)
        ):
            raise ValidationError("min_score: a number", field="min_score")
        if diversity is not None and (
            isinstance(diversity, bool)
            or not isinstance(diversity, int | float)
            or not 0.0 <= diversity <= 1.0
        ):
            raise ValidationError("diversity: a number from 0 to 1", field="diversity")
        now = self.now()
        v = now if valid_at is None else to_utc(valid_at, name="valid_at")
        kt = now if known_at is None else to_utc(known_at, name="known_at")
        params = rk.RankParams() if self._embedder is not None else rk.RankParams(w_dense=0.0)
        floor = params.floor if min_score is None else float(min_score)
        with self._lock:
            ix = self._recall_index(ns)
            words = _search_words(text, v)
            stems = self._rs.stems(words)
            scored = self._score_episodes(ix, text, words, stems, v, kt, params)
            facts, ended = self._fact_hits(ns, text, stems, scored.novelty, v, kt, params)
        # episodes whose facts about the named entities no longer hold at V yield
        gone = np.isin(scored.rows, [p for e in ended if (p := ix.pos.get(e)) is not None])
        score = scored.score.astype(np.float64)
        score[gone] *= _ENDED
        order = np.argsort(-score, kind="stable")

        def ranked(top: int) -> list[dict[str, Any]]:
            # dicts for the best `top` only: building one per candidate cost ~5 ms at 10^5
            return [
                {
                    "id": ix.ids[int(scored.rows[j])],
                    "score": float(score[j]),
                    "ended": bool(gone[j]),
                    "channels": {
                        "bm25": round(float(scored.bm25[j]), 6),
                        "dense": round(float(scored.dense[j]), 6),
                        "novelty": round(scored.novelty, 6),
                    },
                }
                for j in order[:top]
            ]

        div = params.diversity if diversity is None else float(diversity)
        pool = 2 * k if div > 0 else k  # room for what takes a demoted duplicate's place
        found = self._episode_hits(ranked(max(4 * pool, 32)), pool)
        if len(found) < pool < order.size:  # many erased or archived since the load
            found = self._episode_hits(ranked(order.size), pool)
        if div > 0:
            found = _diversified(ix, found, div, params.near_duplicate)
        hits = found + facts[: max(1, k // 3)]
        hits.sort(key=lambda h: -h.score)
        keep = rk.abstain([h.score for h in hits], floor, params.tail)
        hits = [h for h, ok in zip(hits, keep, strict=True) if ok][:k]
        # after ranking (this answer is unmoved); what clears the default floor counts as
        # used: hits a caller asked for below it (min_score) are not the engine's answer
        self._note_uses(ns, used_episodes(h for h in hits if h.score >= params.floor), ix)
        return hits

    def _score_episodes(
        self,
        ix: _Index,
        query: str,
        words: Sequence[str],
        stems: Sequence[str],
        v: datetime,
        kt: datetime,
        params: rk.RankParams,
    ) -> _Scored:
        """The visible episodes' scores, channels and the query's term novelty."""
        visible = (ix.recorded <= kt.timestamp()) & (ix.occurred <= v.timestamp())
        visible &= ~ix.archived
        cand = np.flatnonzero(visible)
        if cand.size == 0:
            return _Scored.empty()
        n = len(ix.ids)
        bm = np.zeros(n, dtype=np.float64)
        dfs: list[int] = []
        best = 0.0
        seen: set[str] = set()
        for stem in stems:
            if stem in seen:
                continue
            seen.add(stem)
            # every text holding the stem, scored as Kùzu's FTS scores it (recall/_bm25.py)
            at, sc = ix.words.term(stem) if ix.words is not None else _bm25.NONE
            if at.size >= _UBIQUITOUS_MIN and at.size > _UBIQUITOUS * n:  # idf < 0.11: df only
                dfs.append(int(at.size))
                continue
            keep = visible[at]
            at, sc = at[keep], sc[keep]
            dfs.append(int(at.size))
            if at.size:
                best += float(sc.max())
                bm[at] += sc  # rows are distinct
        novelty = rk.damp_novelty(rk.term_novelty(dfs, int(cand.size)), int(cand.size))
        window = rk.query_time(query, v)
        if self._embedder is not None:
            spoken = [s for s in ix.speakers if s.casefold() != "user"]
            content = rk.strip_names(query, spoken) or query
            q = self._embedder.embed([content])[0]
            turn, context = ix.vectors.cosines(q)
            dense = [turn[cand], context[cand]]
        else:
            dense = [np.zeros(cand.size, dtype=np.float32)]
        bm_c = rk.bm25_coverage(bm[cand], best) * np.float32(1.0 - novelty)
        dn_c = np.mean([rk.cosine_to_unit(d) for d in dense], axis=0)
        sub = np.arange(cand.size)
        if cand.size > _PREFILTER:
            plain = rk.fuse_weighted([bm_c, dn_c], [params.w_bm25, params.w_dense])
            top = _vectors.top_stable(plain, _PREFILTER // 2)
            if window is not None:
                # a named day or month must reach the ranking even when its episodes'
                # words tie with hundreds of others (a lifelog's lunches)
                top = np.union1d(top, _in_window(ix.occurred[cand], window, params))
            sub = _with_neighbours(ix, cand, top)
        c = cand[sub]
        scores = rk.relevance(
            bm25=bm[c],
            bm25_max=best,
            dense=[d[sub] for d in dense],
            sessions=ix.session[c],
            positions=ix.position[c],
            novelty=novelty,
            occurred_at=ix.occurred[c],
            window=window,
            params=params,
            reference=v,
            last_used=self._last_used(ix, until=min(v, kt))[c],
            importance=ix.importance[c],
        )
        return _Scored(c, scores, bm_c[sub], dn_c[sub], novelty)

    def _episode_hits(self, ranked: Sequence[dict[str, Any]], k: int) -> list[Hit]:
        """The first `k` of `ranked` still live (not erased or archived since the load)."""
        hits: list[Hit] = []
        for at in range(0, len(ranked), k):
            hits += self._some_episode_hits(ranked[at : at + k])
            if len(hits) >= k:
                break
        return hits[:k]

    def _some_episode_hits(self, ranked: Sequence[dict[str, Any]]) -> list[Hit]:
        rows = self._rs.episode_rows(e["id"] for e in ranked)
        hits = []
        for e in ranked:
            r = rows.get(e["id"])
            if r is None or r.get("archived"):  # erased or archived since the load
                continue
            q = bool(r["quarantined"])
            hits.append(
                Hit(
                    kind="episode",
                    text=r["text"],
                    score=round(e["score"], 6),
                    channels=e["channels"],
                    episode_id=r["id"],
                    source=r.get("source"),
                    speaker=r["speaker"],
                    author_kind=r["author_kind"],
                    occurred_at=r["occurred_at"],
                    recorded_at=r["recorded_at"],
                    status="quarantined" if q else ("ended" if e.get("ended") else "current"),
                    quarantined=q,
                    warning=WARNING.format(author=r["author_kind"]) if q else None,
                    evidence=[r["id"]],
                )
            )
        return hits


def _predecessors(t: pa.Table, ids: Sequence[str]) -> dict[str, str]:
    """Each episode's previous turn in its session, by occurrence time (ties by id)."""
    sessions = t.column("session").to_pylist()
    occurred = _posix(t.column("occurred_at"))
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(sessions):
        if s is not None:
            groups.setdefault(s, []).append(i)
    out: dict[str, str] = {}
    for members in groups.values():
        members.sort(key=lambda i: (occurred[i], ids[i]))
        for a, b in itertools.pairwise(members):
            out[ids[b]] = ids[a]
    return out


def _search_words(query: str, v: datetime) -> list[str]:
    """The query's words for the word channel and term novelty.

    >>> _search_words("When did she go camping in June 2023?", v)
    ['camping']

    Without the words Kùzu drops from indexed texts (a query word no text can
    hold would count as evidence the memory never heard of it), and without the
    date the question names: that is the time window's job, and its words
    ("june") and loose digit runs ("03", "09") would match any other date or,
    being rare in conversation, count as unseen.
    """
    words = [w for w in query_words(query) if w not in INDEX_STOPWORDS]
    window = rk.query_time(query, v)
    if window is None:
        return words
    drop = set(query_words(window.phrase))
    return [w for w in words if w not in drop] or words


def _diversified(ix: _Index, hits: list[Hit], strength: float, near: float) -> list[Hit]:
    """Episode hits re-ranked so that near-duplicates of a better one yield."""
    if len(hits) < 2:
        return hits
    rows = np.array([ix.pos[h.episode_id or ""] for h in hits], dtype=np.int64)
    order, scores = rk.diversify(
        [h.score for h in hits],
        ix.vectors.turn_vectors(rows),
        strength=strength,
        near=near,
        texts=[h.text for h in hits],
    )
    out = []
    for i, s in zip(order, (round(float(x), 6) for x in scores), strict=True):
        h = hits[i]
        if s < h.score:
            kept = round(s / h.score, 6)  # the share of its score a near-duplicate keeps
            h = h.model_copy(update={"score": s, "channels": {**h.channels, "diversity": kept}})
        out.append(h)
    return out


def _floats(values: Sequence[Any]) -> npt.NDArray[np.float64]:
    """Optional numbers as floats, NaN for none."""
    return np.array([np.nan if x is None else float(x) for x in values], dtype=np.float64)


def _in_window(
    occurred: npt.NDArray[np.float64], window: rk.TimeWindow, params: rk.RankParams
) -> npt.NDArray[np.int64]:
    """Positions of the times inside a narrow window (with the ranking's slack)."""
    if window.end - window.start > params.narrow_span:
        return np.zeros(0, dtype=np.int64)
    lo = (window.start - params.time_slack_before).timestamp()
    hi = (window.end + params.time_slack_after).timestamp()
    return np.flatnonzero((occurred >= lo) & (occurred < hi)).astype(np.int64)


def _with_neighbours(
    ix: _Index, cand: npt.NDArray[np.int64], top: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Positions in `cand` of the `top` ones and of their same-session neighbours."""
    # vectorised (sorted keys + searchsorted): a dict over 10^5 candidates cost ~20 ms
    session, position = ix.session[cand], ix.position[cand]
    key = session * (int(position.max(initial=0)) + 3) + position + 1
    order = np.argsort(key, kind="stable")
    keys = key[order]
    want = np.concatenate([key[top] - 1, key[top] + 1])
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    found = order[at[keys[at] == want]]
    return np.union1d(top.astype(np.int64), found.astype(np.int64))
