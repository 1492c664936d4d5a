"""Recall: memories found by words and by meaning, as of (valid_at, known_at).

    >>> hits = recaller.recall("default", "where does the user live?", k=5)
    >>> [(h.kind, h.text, round(h.score, 2)) for h in hits]
    [('fact', 'user lives in Sydney', 0.83), ('episode', 'I moved to Sydney.', 0.61)]

Episodes are scored by two channels over the episodes recorded by `known_at`
and occurred by `valid_at`: BM25 (Kùzu's full-text scoring, kept in process by
`recall/_bm25.py`) over each turn with the previous turn of its session, and
exact cosine over an in-process numpy matrix per namespace (loaded on first
recall, appended on writes). The channels are fused on a calibrated 0..1
scale by `recall.ranking.relevance` (the ranking measured on LoCoMo by
bench/locomo.py), so one floor means the same for every query:
nothing above it, nothing returned. Facts believed at (valid_at, known_at)
one or two hops from the entities the query
names join as hits of their own, scored on the same scale (`_facts.py`).
An episode that nearly repeats a better hit yields to distinct ones
(`recall(diversity=)`, `ranking.diversify`).

A day or month the question names ("on 2014/01/29", "in March 2023",
"yesterday" against valid_at) narrows the ranking to episodes that occurred
then (`ranking.time_narrow`), and its digits leave the word channel, where
they would match any other date. Recency counts from the later of `occurred_at`
and the episode's last use (`engine.uses`: each answer's episodes count as used),
importance around its default; archived
episodes (consolidation) are not candidates but stay readable by id.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .. import _names as names
from .._time import TimeLike, to_utc
from ..engine.uses import UseLog, used_episodes
from ..errors import ValidationError
from ..models import Hit
from . import _bm25, _vectors
from . import ranking as rk
from ._evidence import Evidence, answers, crowd
from ._expand import Ended
from ._facts import WARNING, FactRecall
from ._text import INDEX_STOPWORDS, query_words
from .index import NamespaceIndex, RecallIndex

if TYPE_CHECKING:
    from ..engine.context import Context
    from .embedder import Embedder

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
# A question naming one of the memory's speakers ("what did Caroline paint?") is
# about that person's own turns: the others' score times 1 - this (the word channel
# cannot tell: every search row holds both speakers' names). LoCoMo dev at the
# defaults, extraction on: @5/@10 0.685/0.762 -> 0.714/0.776; adversarial questions,
# which ask one person about the other's turns, 0.806/0.871 -> 0.755/0.842
SPEAKER = 0.2


@dataclass
class _Scored:
    """One query's candidates: rows of the index, relevance and channels, aligned."""

    rows: npt.NDArray[np.int64]
    score: F32
    bm25: F32
    dense: F32
    novelty: float
    meaning: float = 0.0  # best cosine of the question with any visible episode
    crowd: float = 0.0  # the `_evidence.CROWD_RANK`-th best
    dated: float = 0.0  # best relevance, unpenalised by novelty, of a named day's episodes

    @classmethod
    def empty(cls) -> _Scored:
        none = np.zeros(0, dtype=np.float32)
        return cls(np.zeros(0, dtype=np.int64), none, none, none, 0.0)

    def evidence(self, relevance: float) -> Evidence:
        return Evidence(relevance, self.meaning, self.crowd, self.dated)


class Recaller:
    """`recall`: episodes and facts scored on one calibrated scale, with abstention."""

    def __init__(
        self,
        ctx: Context,
        index: RecallIndex,
        facts: FactRecall,
        *,
        uses: UseLog,
        embedder: Embedder | None,
    ) -> None:
        self._ctx = ctx
        self._index = index
        self._facts = facts
        self._uses = uses
        self._embedder = embedder

    # --- recall ------------------------------------------------------------------------------
    def recall(
        self,
        ns: str,
        query: str,
        k: int = 5,
        *,
        valid_at: TimeLike | None = None,
        known_at: TimeLike | None = None,
        min_score: float | None = None,
        diversity: float | None = None,
    ) -> list[Hit]:
        """The `k` memories most relevant to `query`, as of (valid_at, known_at); [] when
        the memory holds nothing on it: the abstention.

        >>> mem.recall("when does my sister arrive?", k=5)

        Only episodes recorded by `known_at` and occurred by `valid_at` take part
        (both default to now); facts must be believed at `known_at` and valid at
        `valid_at`. Quarantined content is returned with `quarantined=True` and a
        `warning`. Scores are calibrated relevance in 0..1. Whether to answer is decided
        apart from how many hits come back (`_evidence.answers`): the best hit reaches
        the floor (`min_score`, default 0.26), or the question's meaning clearly matches
        an episode (cosine), or it names a day on which an episode that fits occurred;
        once answering, the `k` best come back. `min_score=0` returns the `k` best whatever
        their scores. `diversity` (0..1, default `RankParams.diversity`) demotes an
        episode that nearly repeats a better one (cosine >= 0.9 or the same text) to
        `score * (1 - diversity * cosine)` (`ranking.diversify`); 0 turns it off.
        """
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
        now = self._ctx.now()
        v = now if valid_at is None else to_utc(valid_at, name="valid_at")
        kt = now if known_at is None else to_utc(known_at, name="known_at")
        params = rk.RankParams() if self._embedder is not None else rk.RankParams(w_dense=0.0)
        floor = params.floor if min_score is None else float(min_score)
        div = params.diversity if diversity is None else float(diversity)
        pool = 2 * k if div > 0 else k  # room for what takes a demoted duplicate's place
        # under the lock to the last hit: an erase or archival drops the rows first
        with self._ctx.lock:
            ix = self._index.index(ns)
            window = rk.query_time(text, v)  # the day, month or year the question names
            words = _search_words(text, window)
            stems = self._ctx.store.recall.stems(words)
            scored = self._score_episodes(ix, text, words, stems, window, v, kt, params)
            facts, ended = self._facts.hits(ns, text, stems, scored.novelty, v, kt, params)
            facts = _outside_window(facts, window, params)
            # episodes whose facts about the named entities no longer hold at V yield
            score, gone = _yield_ended(ix, scored, ended, pool)
            top = _vectors.top_stable(score, pool)
            top = top[np.argsort(-score[top], kind="stable")]  # best first, ties by row
            found = [_episode_hit(ix, scored, int(j), float(score[j]), bool(gone[j])) for j in top]
            if div > 0:
                found = _diversified(ix, found, div, params.near_duplicate)
        hits = found + facts[: max(1, k // 3)]
        hits.sort(key=lambda h: -h.score)
        best = hits[0].score if hits else 0.0
        # the decision to answer weighs relevance, meaning and a named day (`_evidence`);
        # a caller's stricter min_score is a plain floor on relevance
        ev = scored.evidence(best) if floor <= params.floor else Evidence(best)
        if not hits or not answers(ev, floor):
            return []
        # once answering, the k best come back: the floor decided whether, not how many
        hits = [h for h in hits if h.score >= floor * params.tail][:k]
        # after ranking (this answer is unmoved); what clears the default floor counts as
        # used, and the best hit of a default answer: not hits a caller asked for below it
        used = [h for h in hits if h.score >= params.floor]
        if min_score is None and hits and hits[0] not in used:
            used.insert(0, hits[0])
        self._uses.note(ns, used_episodes(used), ix)
        return hits

    def warm(self, ns: str) -> None:
        """Load what recall keeps of the namespace now rather than at its first
        recalls: the episode table, vectors and BM25 postings, and every fact version
        by entity (unless there are more than it keeps).

        >>> mem.warm_recall()
        """
        with self._ctx.lock:
            self._index.warm(ns)
            self._facts.warm(ns)

    def _score_episodes(
        self,
        ix: NamespaceIndex,
        query: str,
        words: Sequence[str],
        stems: Sequence[str],
        window: rk.TimeWindow | None,
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
        if self._embedder is not None:
            spoken = [s for s in ix.speakers if s.casefold() != "user"]
            content = rk.strip_names(query, spoken) or query
            q = self._embedder.embed([content])[0]
            turn, context = ix.vectors.cosines(q)
            dense = [turn[cand], context[cand]]
            meaning, crowded = crowd(turn[cand])
        else:
            dense = [np.zeros(cand.size, dtype=np.float32)]
            meaning = crowded = 0.0
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
            last_used=self._uses.last_used(ix, until=min(v, kt))[c],
            importance=ix.importance[c],
        )
        named = _named(query, ix.speakers)
        if SPEAKER and len(named) == 1 and ix.shown is not None:
            other = ~ix.shown.speaker_is(named[0])[c]
            scores = np.where(other, scores * np.float32(1.0 - SPEAKER), scores).astype(np.float32)
        dated = 0.0
        if window is not None and window.end - window.start <= params.narrow_span:
            then = (ix.occurred[c] >= window.start.timestamp()) & (
                ix.occurred[c] < window.end.timestamp()
            )
            if then.any():  # the named day's episodes, as if every word had been heard of
                lift = 1.0 - params.novelty_weight * novelty
                dated = float(scores[then].max()) / lift if lift > 0 else 0.0
        return _Scored(c, scores, bm_c[sub], dn_c[sub], novelty, meaning, crowded, dated)


def _named(query: str, speakers: set[str]) -> list[str]:
    """The memory's speakers (but "user") the query names as whole words.

    >>> _named("What did Caroline's sister paint?", {"Caroline", "Melanie", "user"})
    ['Caroline']
    """
    low = query.casefold()
    return sorted(
        s for s in speakers
        if s.casefold() != "user" and re.search(rf"\b{re.escape(s.casefold())}\b", low)
    )  # fmt: skip


def _episode_hit(ix: NamespaceIndex, scored: _Scored, j: int, score: float, ended: bool) -> Hit:
    """Candidate `j` of `scored` as a hit, from what the index keeps of its episode."""
    assert ix.shown is not None
    r = ix.shown.row(int(scored.rows[j]))
    q = bool(r["quarantined"])
    return Hit(
        kind="episode",
        text=r["text"],
        score=round(score, 6),
        channels={
            "bm25": round(float(scored.bm25[j]), 6),
            "dense": round(float(scored.dense[j]), 6),
            "novelty": round(scored.novelty, 6),
        },
        episode_id=r["id"],
        source=r.get("source"),
        speaker=r["speaker"],
        author_kind=r["author_kind"],
        occurred_at=r["occurred_at"],
        recorded_at=r["recorded_at"],
        status="quarantined" if q else ("ended" if ended else "current"),
        quarantined=q,
        warning=WARNING.format(author=r["author_kind"]) if q else None,
        evidence=[r["id"]],
    )


def _search_words(query: str, window: rk.TimeWindow | None) -> list[str]:
    """The query's words for the word channel and term novelty (`window`: the time
    the query names, `ranking.query_time`).

    >>> q = "When did she go camping in June 2023?"
    >>> _search_words(q, rk.query_time(q, v))
    ['camping']

    Without the words Kùzu drops from indexed texts (a query word no text can
    hold would count as evidence the memory never heard of it), and without the
    date the question names: that is the time window's job, and its words
    ("june") and loose digit runs ("03", "09") would match any other date or,
    being rare in conversation, count as unseen.
    """
    words = [w for w in query_words(query) if w not in INDEX_STOPWORDS]
    if window is None:
        return words
    drop = set(query_words(window.phrase))
    return [w for w in words if w not in drop] or words


def _diversified(ix: NamespaceIndex, hits: list[Hit], strength: float, near: float) -> list[Hit]:
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


def _outside_window(
    facts: list[Hit], window: rk.TimeWindow | None, params: rk.RankParams
) -> list[Hit]:
    """Facts not holding in a narrow window the question names score `time_narrow`
    times theirs, as episodes outside it do: "what did I do on 2010/06/17?" is not
    answered by an activity that began on the 26th."""
    bounds = _narrow(window, params)
    if bounds is None:
        return facts
    lo, hi = bounds
    out = []
    for f in facts:
        if (f.valid_from is not None and f.valid_from >= hi) or (
            f.valid_to is not None and f.valid_to <= lo
        ):
            f = f.model_copy(update={"score": round(f.score * params.time_narrow, 6)})
        out.append(f)
    out.sort(key=lambda h: -h.score)
    return out


def _in_window(
    occurred: npt.NDArray[np.float64], window: rk.TimeWindow, params: rk.RankParams
) -> npt.NDArray[np.int64]:
    """Positions of the times inside a narrow window (with the ranking's slack)."""
    bounds = _narrow(window, params)
    if bounds is None:
        return np.zeros(0, dtype=np.int64)
    lo, hi = (t.timestamp() for t in bounds)
    return np.flatnonzero((occurred >= lo) & (occurred < hi)).astype(np.int64)


def _narrow(
    window: rk.TimeWindow | None, params: rk.RankParams
) -> tuple[datetime, datetime] | None:
    """A narrow window (at most `narrow_span`) widened by the ranking's slack; None for
    none or a wider one, which ranking only boosts (`ranking.time_narrow`)."""
    if window is None or window.end - window.start > params.narrow_span:
        return None
    return window.start - params.time_slack_before, window.end + params.time_slack_after


def _with_neighbours(
    ix: NamespaceIndex, cand: npt.NDArray[np.int64], top: npt.NDArray[np.int64]
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


def _yield_ended(
    ix: NamespaceIndex, scored: _Scored, ended: Ended, pool: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """The candidates' scores with those of ended episodes times `_ENDED`, and which
    those are, asked of the best candidates only (the `pool` best after the penalty are
    among them once the pool-th is above every score outside: a penalty only lowers)."""
    raw = scored.score.astype(np.float64)
    score = raw.copy()
    gone = np.zeros(len(score), dtype=np.bool_)
    asked = np.zeros(len(score), dtype=np.bool_)
    m = 4 * pool
    ids = ix.ids
    while True:
        top = _vectors.top_stable(raw, m)
        todo = top[~asked[top]]
        gone[todo] = ended.mask([ids[r] for r in scored.rows[todo].tolist()])
        asked[todo] = True
        score[todo[gone[todo]]] *= _ENDED
        if m >= len(score):
            return score, gone
        outside = np.ones(len(score), dtype=np.bool_)
        outside[top] = False
        kth = np.sort(score[top])[::-1][min(pool, len(top)) - 1]
        if kth > score[outside].max():
            return score, gone
        m *= 4
