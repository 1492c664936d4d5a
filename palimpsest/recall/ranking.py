"""Recall ranking as pure functions over plain data (numpy arrays, ids, scores).

>>> r = relevance(bm25=[6.0, 1.0, 0.0], bm25_max=6.0, dense=[[0.55, 0.30, 0.05]],
...               sessions=[1, 2, 3], positions=[0, 0, 0])
>>> top_k(r, k=3, floor=RankParams().floor)
[0]

:func:`relevance` is the ranking ``recall()`` uses; it composes the pieces
below, each usable alone. Every array argument is aligned to one candidate list
(position i is candidate i). Scores that come out of :func:`bm25_coverage`,
:func:`cosine_to_unit`, :func:`fuse_weighted`, the smoothers and the
multipliers stay on an absolute 0..1 scale, so one relevance floor means the
same thing for every query — which is what makes abstention possible. RRF
(:func:`rrf`, :func:`rrf_scores`) is kept as a baseline: it discards how sure
each channel is, and measured worse than BM25 alone on LoCoMo.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from ._mmr import diversify, mmr
from ._query_time import TimeWindow, query_time, time_boost, time_narrow

__all__ = [
    "RankParams",
    "TimeWindow",
    "abstain",
    "bm25_coverage",
    "channel_confidence",
    "cosine_to_unit",
    "damp_novelty",
    "diversify",
    "fuse_weighted",
    "importance_multiplier",
    "minmax",
    "mmr",
    "neighbour_smooth",
    "query_time",
    "recency_multiplier",
    "relevance",
    "rrf",
    "rrf_scores",
    "session_smooth",
    "strip_names",
    "term_novelty",
    "time_boost",
    "time_narrow",
    "top_k",
]

F32 = npt.NDArray[np.float32]
H = TypeVar("H", bound=Hashable)
DEFAULT_IMPORTANCE = 0.55  # what remember() stores when nobody judged the episode


# --------------------------------------------------------------------------- normalisation


def minmax(scores: npt.ArrayLike) -> F32:
    """Rescale to 0..1 within one list; a constant list maps to zeros.

    >>> minmax([2.0, 4.0, 3.0]).tolist()
    [0.0, 1.0, 0.5]

    Relative only: the best candidate always gets 1.0, however poor it is, so
    this must not feed a relevance floor. Kept for the baselines.
    """
    s = np.asarray(scores, dtype=np.float32)
    if s.size == 0:
        return s
    lo, hi = float(s.min()), float(s.max())
    if hi - lo <= 0.0:
        return np.zeros_like(s)
    return ((s - lo) / (hi - lo)).astype(np.float32)


def bm25_coverage(scores: npt.ArrayLike, max_score: float) -> F32:
    """BM25 divided by the best score the query could reach: the share of the
    query's term weight a text matches, on an absolute 0..1 scale.

    >>> bm25_coverage([3.0, 0.0, 7.5], max_score=6.0).tolist()
    [0.5, 0.0, 1.0]

    ``max_score`` is any per-query upper bound, e.g. the sum over query terms of
    each term's best single-term score (or ``(k1 + 1) * sum(idf)``). Unlike
    min-max, a query whose best hit matches one weak word stays low.
    """
    s = np.asarray(scores, dtype=np.float32)
    if max_score <= 0.0:
        return np.zeros_like(s)
    out: F32 = np.clip(s / np.float32(max_score), 0.0, 1.0).astype(np.float32)
    return out


def term_novelty(doc_freqs: Sequence[int], n_docs: int) -> float:
    """Share of a query's term weight (BM25 idf) on terms no stored text contains.

    >>> term_novelty([0, 12, 40], n_docs=500) > 0.5    # the rare word is unseen
    True
    >>> term_novelty([3, 12], n_docs=500)
    0.0

    ``doc_freqs`` holds, per query term (after the index's own tokenising,
    stop words and stemming), the number of indexed texts containing it. A
    question about something never mentioned ("favourite football team") tends
    to hinge on words the memory has never seen; BM25 silently drops them, so
    its coverage of the *remaining* words looks high. Multiplying the BM25
    coverage by ``1 - novelty`` puts that evidence of absence back. 0 when the
    query has no terms.
    """
    if not doc_freqs or n_docs <= 0:
        return 0.0
    df = np.asarray(doc_freqs, dtype=np.float64)
    idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
    total = float(idf.sum())
    return float(idf[df <= 0].sum()) / total if total > 0 else 0.0


def damp_novelty(novelty: float, n_docs: int, prior: float = 50.0) -> float:
    """Trust :func:`term_novelty` only as far as the memory is big enough to know words.

    >>> round(damp_novelty(0.8, 600), 3)
    0.738
    >>> round(damp_novelty(0.8, 3), 3)
    0.045

    A word no text contains is evidence of absence in a conversation of
    hundreds of turns, and next to none in a memory of three: "when is my sister
    coming to visit?" over "My sister arrives on Friday" has two unseen words
    out of three. Scaling by ``n / (n + prior)`` keeps the measured behaviour on
    LoCoMo-sized memories (about 600 turns: x0.92) and lets small memories be
    judged by what the channels found.
    """
    if n_docs <= 0:
        return 0.0
    return float(novelty) * n_docs / (n_docs + prior)


def cosine_to_unit(cosines: npt.ArrayLike, lo: float = 0.0, hi: float = 1.0) -> F32:
    """Map cosine similarity to 0..1 linearly between ``lo`` (unrelated) and ``hi``.

    >>> [round(x, 3) for x in cosine_to_unit([-0.2, 0.45, 1.0]).tolist()]
    [0.0, 0.45, 1.0]
    >>> [round(x, 3) for x in cosine_to_unit([0.1, 0.45, 0.9], lo=0.15, hi=0.75).tolist()]
    [0.0, 0.5, 1.0]

    The map is fixed, not per query, so it keeps the model's own sense of "how
    close". The defaults only clip negative cosines (all-MiniLM-L6-v2 puts
    unrelated sentences near 0 and paraphrases above 0.7); on LoCoMo stretching
    the range (``lo=0.15, hi=0.75``) measured no better, since in a weighted sum
    it only acts as a larger dense weight.
    """
    c = np.asarray(cosines, dtype=np.float32)
    out: F32 = np.clip((c - lo) / (hi - lo), 0.0, 1.0).astype(np.float32)
    return out


def strip_names(text: str, names: Sequence[str]) -> str:
    """Remove known names (and their possessive) from a query.

    >>> strip_names("What did Caroline's sister paint?", ["Caroline", "Melanie"])
    'What did sister paint?'

    For the dense channel: a small sentence model lets a person's name dominate
    the query vector, so "What does Melanie do to destress?" lands on every turn
    that mentions Melanie. The names are the entity channel's job; removing
    them from what the embedder sees lifted dense recall@5 on LoCoMo from 0.45
    to 0.56. Matching is whole-word and case-insensitive.
    """
    out = text
    for name in sorted({n for n in names if n.strip()}, key=len, reverse=True):
        out = re.sub(rf"\b{re.escape(name)}(?:'s|’s|s')?(?!\w)", " ", out, flags=re.IGNORECASE)
    return re.sub(r"\s+([?.!,])", r"\1", re.sub(r"\s+", " ", out)).strip()


# --------------------------------------------------------------------------- fusion


def channel_confidence(scores: npt.ArrayLike, top: int = 3) -> float:
    """How much a calibrated channel knows about this query, 0..1.

    >>> channel_confidence([0.9, 0.1, 0.1, 0.1, 0.1], top=1)
    0.8
    >>> channel_confidence([0.4, 0.4, 0.4, 0.4], top=1)
    0.0

    The mean of its ``top`` best scores minus its median: a channel that lifts a
    few candidates well above the crowd has found something; one that scores
    everything alike (a query of common words, or a paraphrase BM25 cannot see)
    has not, whatever its absolute numbers.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0:
        return 0.0
    m = min(top, s.size)
    best = np.partition(s, s.size - m)[s.size - m :]
    return float(round(max(0.0, float(best.mean() - np.median(s))), 6))


def fuse_weighted(
    channels: Sequence[npt.ArrayLike],
    weights: Sequence[float],
    *,
    adaptive: bool = False,
    top: int = 3,
    min_share: float = 0.1,
) -> F32:
    """Weighted mean of calibrated 0..1 channels; stays on the 0..1 scale.

    >>> bm = np.array([0.0, 0.0, 0.0], np.float32)    # BM25 matched nothing
    >>> dn = np.array([0.8, 0.1, 0.1], np.float32)    # dense found candidate 0
    >>> [round(x, 3) for x in fuse_weighted([bm, dn], [0.5, 0.5]).tolist()]
    [0.4, 0.05, 0.05]
    >>> [round(x, 3) for x in fuse_weighted([bm, dn], [0.5, 0.5], adaptive=True).tolist()]
    [0.727, 0.091, 0.091]

    With ``adaptive`` each base weight is scaled by the channel's
    :func:`channel_confidence` for this query (never below ``min_share`` of its
    base weight, so a quiet channel still breaks ties), then weights are
    renormalised to sum to 1. A channel that knows nothing about the query thus
    neither drags good candidates down nor lifts bad ones up.

    Fixed weights already weigh channels by what they know, because the inputs
    are calibrated: a channel that found nothing adds about the same small
    amount to every candidate and cannot reorder them (unlike RRF, which hands
    out rank credit regardless). On LoCoMo ``adaptive`` changed recall by under
    one point either way, so :class:`RankParams` leaves it off; its cost is that
    scores of one query are scaled differently from another's.
    """
    if len(channels) != len(weights) or not channels:
        raise ValueError("need one weight per channel and at least one channel")
    arrs = [np.asarray(c, dtype=np.float32) for c in channels]
    n = arrs[0].shape[0]
    if any(a.shape != (n,) for a in arrs):
        raise ValueError("channels must be 1-d arrays of the same length")
    w = np.asarray(weights, dtype=np.float64)
    if adaptive:
        conf = np.array([channel_confidence(a, top=top) for a in arrs])
        total = conf.sum()
        share = conf / total if total > 0 else np.full(len(arrs), 1.0 / len(arrs))
        w = w * np.maximum(share, min_share)
    if w.sum() <= 0:
        return np.zeros(n, dtype=np.float32)
    w = w / w.sum()
    out = np.zeros(n, dtype=np.float64)
    for wi, a in zip(w, arrs, strict=True):
        out += wi * a
    return out.astype(np.float32)


def rrf_scores(channels: Sequence[npt.ArrayLike], k: int = 60) -> F32:
    """Reciprocal rank fusion of aligned score arrays (higher score = better).

    >>> [round(x, 3) for x in rrf_scores([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]], k=0).tolist()]
    [1.333, 1.0, 1.333]

    Ties are broken by position so the result is deterministic. RRF throws the
    scores away, so it cannot tell a confident channel from a guessing one and
    its output has no absolute meaning (no floor can be put on it): a baseline.
    """
    arrs = [np.asarray(c, dtype=np.float64) for c in channels]
    if not arrs:
        return np.zeros(0, dtype=np.float32)
    out = np.zeros(arrs[0].shape[0], dtype=np.float64)
    for a in arrs:
        order = np.argsort(-a, kind="stable")
        ranks = np.empty_like(order)
        ranks[order] = np.arange(1, a.size + 1)
        out += 1.0 / (k + ranks)
    return out.astype(np.float32)


def rrf(rankings: Sequence[Sequence[H]], k: int = 60) -> list[tuple[H, float]]:
    """RRF over ranked id lists (best first); ids missing from a list get nothing.

    >>> rrf([["a", "b"], ["b", "c"]], k=0)
    [('b', 1.5), ('a', 1.0), ('c', 0.5)]
    """
    acc: dict[H, float] = {}
    first_seen: dict[H, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            acc[item] = acc.get(item, 0.0) + 1.0 / (k + rank)
            first_seen.setdefault(item, len(first_seen))
    return sorted(acc.items(), key=lambda kv: (-kv[1], first_seen[kv[0]]))


# --------------------------------------------------------------------------- context


def neighbour_smooth(
    scores: npt.ArrayLike,
    sessions: npt.ArrayLike,
    positions: npt.ArrayLike,
    *,
    alpha: float = 0.3,
    window: int = 1,
    decay: float = 0.5,
) -> F32:
    """Lift turns whose neighbours in the same session are relevant.

    >>> s = neighbour_smooth([0.0, 1.0, 0.0, 0.0], [1, 1, 1, 2], [0, 1, 2, 0], alpha=0.5)
    >>> [round(x, 3) for x in s.tolist()]
    [0.333, 0.667, 0.333, 0.0]

    An answer often sits next to the turn that shares the question's words
    ("Did you go?" / "Yes, last Friday!"). Each score becomes
    ``(s + alpha * best_neighbour) / (1 + alpha)`` where ``best_neighbour`` is
    the highest score within ``window`` positions in the same session, weighted
    ``decay ** (distance - 1)``. Dividing by ``1 + alpha`` keeps the 0..1 scale.
    Candidates are matched by (session, position), so they need not be sorted
    or contiguous; a missing neighbour contributes nothing.
    """
    s = np.asarray(scores, dtype=np.float64)
    sess = np.asarray(sessions)
    pos = np.asarray(positions, dtype=np.int64)
    if s.size == 0 or alpha <= 0 or window <= 0:
        return s.astype(np.float32)
    # (session, position) as one sorted integer key; neighbours by binary search
    # (a dict and a loop over candidates cost ~10 ms at recall's ~1500 candidates)
    code = np.unique(sess, return_inverse=True)[1].reshape(-1).astype(np.int64)
    lo = int(pos.min())
    stride = int(pos.max()) - lo + 2 * window + 3
    key = code * stride + (pos - lo + window + 1)
    order = np.argsort(key, kind="stable")
    keys = key[order]
    best = np.zeros_like(s)
    for d in range(1, window + 1):
        w = decay ** (d - 1)
        for want in (key - d, key + d):
            # the last candidate holding the key, as a dict built in order would keep
            at = np.searchsorted(keys, want, side="right") - 1
            ok = (at >= 0) & (keys[np.maximum(at, 0)] == want)
            lift = np.zeros_like(s)
            lift[ok] = s[order[at[ok]]] * w
            best = np.maximum(best, lift)
    return ((s + alpha * best) / (1.0 + alpha)).astype(np.float32)


def session_smooth(
    scores: npt.ArrayLike,
    sessions: npt.ArrayLike,
    *,
    beta: float = 0.3,
    top: int = 1,
) -> F32:
    """Lift every candidate by how relevant its session is as a whole.

    >>> [round(x, 3) for x in session_smooth([0.8, 0.2, 0.3], ["a", "a", "b"], beta=0.5).tolist()]
    [0.8, 0.4, 0.3]

    A session that clearly talks about the question's topic makes its other
    turns likelier evidence too (the question's words are often spread over a
    few turns of one exchange). The session's relevance is the mean of its
    ``top`` best scores; each score becomes ``(s + beta * session) / (1 + beta)``,
    which keeps the 0..1 scale and never lifts a turn above its session's best.
    Candidates with the same session key (any hashable scalar) form a session.
    """
    s = np.asarray(scores, dtype=np.float64)
    sess = np.asarray(sessions)
    if s.size == 0 or beta <= 0:
        return s.astype(np.float32)
    keys, inverse = np.unique(sess, return_inverse=True)
    inverse = inverse.reshape(-1)
    # each session's `top` best, summed in descending order like a sorted slice's mean
    order = np.lexsort((-s, inverse))
    g = inverse[order]
    start = np.searchsorted(g, np.arange(keys.size))
    take = (np.arange(s.size) - start[g]) < max(1, top)
    total = np.bincount(g[take], weights=s[order][take], minlength=keys.size)
    level = total / np.bincount(g[take], minlength=keys.size)
    return ((s + beta * level[inverse]) / (1.0 + beta)).astype(np.float32)


def recency_multiplier(
    occurred_at: npt.ArrayLike,
    reference: float,
    *,
    half_life: float,
    weight: float = 0.1,
) -> F32:
    """Multiplier in ``[1 - weight, 1]`` that halves its bonus every ``half_life``.

    >>> m = recency_multiplier([100.0, 90.0, 0.0], 100.0, half_life=10.0, weight=0.2)
    >>> [round(x, 3) for x in m.tolist()]
    [1.0, 0.9, 0.8]

    Times are POSIX seconds; NaN (unknown time) gets the neutral middle. Kept
    small by default: on conversational memory an old turn is as likely to hold
    the answer as a new one, so recency only breaks near-ties.
    """
    t = np.asarray(occurred_at, dtype=np.float64)
    age = np.clip(reference - t, 0.0, None)
    fresh = np.power(0.5, age / half_life)
    fresh = np.where(np.isnan(fresh), 0.5, fresh)
    return (1.0 - weight + weight * fresh).astype(np.float32)


def importance_multiplier(importance: npt.ArrayLike, weight: float = 0.1) -> F32:
    """Multiplier in ``[1 - weight, 1]`` from importance in 0..1 (clipped).

    >>> importance_multiplier([1.0, 0.0], weight=0.2).tolist()
    [1.0, 0.800000011920929]
    """
    imp = np.clip(np.asarray(importance, dtype=np.float64), 0.0, 1.0)
    return (1.0 - weight + weight * imp).astype(np.float32)


def top_k(scores: npt.ArrayLike, k: int, floor: float | None = None) -> list[int]:
    """Indices of the ``k`` best scores, best first, dropping those below ``floor``.

    >>> top_k([0.2, 0.9, 0.5], k=2)
    [1, 2]
    >>> top_k([0.2, 0.1], k=2, floor=0.3)
    []

    An empty result is the abstention: nothing is relevant enough to return.
    Ties keep candidate order.
    """
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-s, kind="stable")[: max(k, 0)]
    if floor is not None:
        order = order[s[order] >= floor]
    return [int(i) for i in order]


def abstain(scores: npt.ArrayLike, floor: float, tail: float = 1.0) -> npt.NDArray[np.bool_]:
    """Which hits an answer keeps: none unless the best reaches ``floor``; then
    every hit at ``tail * floor`` or above.

    >>> abstain([0.31, 0.12, 0.05], floor=0.25, tail=0.4).tolist()
    [True, True, False]
    >>> abstain([0.2, 0.12], floor=0.25, tail=0.4).tolist()
    [False, False]
    >>> abstain([0.31, 0.12], floor=0.25).tolist()      # tail 1: a plain floor
    [True, False]

    The floor answers a question about the question: does the memory hold
    anything on it at all? Once one hit clears it, the weaker hits beside it
    are context (the turn before the answer, the other half of a two-part
    answer), not confabulation; cutting them at the same floor cost LoCoMo's
    development split 0.04 of recall@10 for no fewer false memories.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size == 0 or float(s.max()) < floor:
        return np.zeros(s.size, dtype=np.bool_)
    keep: npt.NDArray[np.bool_] = s >= floor * tail
    return keep


# --------------------------------------------------------------------------- the whole ranking


@dataclass(frozen=True)
class RankParams:
    """Parameters of :func:`relevance`; the defaults were chosen on LoCoMo's development split.

    >>> RankParams().floor
    0.26
    >>> RankParams(w_bm25=0.6, w_dense=0.4).w_dense
    0.4
    """

    w_bm25: float = 0.5
    w_dense: float = 0.5
    adaptive: bool = False  # per-query channel confidence: no gain measured on LoCoMo
    time_boost: float = 0.2
    time_slack_before: timedelta = timedelta(days=1)
    time_slack_after: timedelta = timedelta(days=3)  # a mention follows the event it tells of
    # outside a named window of at most narrow_span: scores times this (LoCoMo dev
    # @5 0.716 -> 0.723, @10 0.807 -> 0.820; what TimelineQA's dated questions need)
    time_narrow: float = 0.5
    time_slack_factor: float = 0.75  # inside the slack only (not the named day itself)
    narrow_span: timedelta = timedelta(days=31)
    alpha: float = 0.5  # neighbour smoothing
    neighbour_window: int = 1
    beta: float = 0.3  # session smoothing
    novelty_weight: float = 0.5  # how far unseen query words lower every score
    # recency from occurred_at (recall records no use yet): LoCoMo dev @5 +0.003, @10 +0.002
    recency_weight: float = 0.1
    recency_half_life: timedelta = timedelta(days=365)
    importance_weight: float = 0.1  # around the default importance, which stays neutral
    floor: float = 0.26  # below it, nothing is returned unless meaning or a named day answers
    tail: float = 0.0  # once answering, hits down to tail * floor (0: the k best, `_evidence`)
    # recall(diversity=): a hit this close (cosine) to a better one, or with the same
    # normalised text, scores score * (1 - diversity * cosine) (`diversify`): an exact
    # repeat keeps a fifth. LoCoMo dev has no such pair in any question's top 10: recall
    # @5/@10/@25 0.711/0.800/0.883 at diversity 0, 0.5 and 1 alike (uses off)
    diversity: float = 0.8
    near_duplicate: float = 0.9


def relevance(
    *,
    bm25: npt.ArrayLike,
    bm25_max: float,
    dense: Sequence[npt.ArrayLike],
    sessions: npt.ArrayLike,
    positions: npt.ArrayLike,
    novelty: float = 0.0,
    occurred_at: npt.ArrayLike | None = None,
    window: TimeWindow | None = None,
    params: RankParams | None = None,
    reference: datetime | None = None,
    importance: npt.ArrayLike | None = None,
    last_used: npt.ArrayLike | None = None,
) -> F32:
    """Calibrated 0..1 relevance of each candidate: the ranking recall() uses.

    >>> r = relevance(
    ...     bm25=[4.0, 0.0, 0.5], bm25_max=5.0,
    ...     dense=[[0.62, 0.30, 0.05]],
    ...     sessions=[1, 1, 2], positions=[3, 4, 0],
    ... )
    >>> top_k(r, k=3, floor=RankParams().floor)
    [0, 1]

    Steps, each measured on LoCoMo (see ``bench/locomo.py``):

    1. BM25 as :func:`bm25_coverage`, lowered by the query's ``novelty``
       (:func:`term_novelty`: words the memory never saw count against it);
    2. dense as the mean of :func:`cosine_to_unit` over the given cosine arrays
       (e.g. the episode alone and the episode with its predecessor);
    3. :func:`fuse_weighted` of the two (fixed weights unless ``adaptive``);
    4. :func:`time_boost` when the question names a ``window`` and times are known,
       and :func:`time_narrow` when that window is a day or a month;
    5. :func:`neighbour_smooth` then :func:`session_smooth` (context);
    6. every score times ``1 - novelty_weight * novelty``;
    7. with a ``reference`` time, :func:`recency_multiplier` of ``occurred_at``,
       or of ``last_used`` (POSIX seconds, NaN for never) where that is later:
       a memory in use stays fresh (bounded like any recency, so use alone
       never outranks relevance; how often it was used is not counted);
    8. with ``importance`` (0..1), :func:`importance_multiplier` centred on the
       default importance, so unjudged memories are not moved.

    All arrays are aligned to the same candidates; ``sessions`` / ``positions``
    locate each candidate in its conversation (any hashable session key).
    """
    p = params or RankParams()
    bm = bm25_coverage(bm25, bm25_max) * np.float32(1.0 - novelty)
    if not dense:
        raise ValueError("need at least one dense cosine array")
    dn = np.mean([cosine_to_unit(d) for d in dense], axis=0).astype(np.float32)
    fused = fuse_weighted([bm, dn], [p.w_bm25, p.w_dense], adaptive=p.adaptive)
    if window is not None and occurred_at is not None and p.time_boost:
        fused = time_boost(
            fused,
            occurred_at,
            window,
            boost=p.time_boost,
            slack_before=p.time_slack_before,
            slack_after=p.time_slack_after,
        )
        fused = time_narrow(
            fused,
            occurred_at,
            window,
            factor=p.time_narrow,
            max_span=p.narrow_span,
            slack_before=p.time_slack_before,
            slack_after=p.time_slack_after,
            slack_factor=p.time_slack_factor,
        )
    fused = neighbour_smooth(fused, sessions, positions, alpha=p.alpha, window=p.neighbour_window)
    fused = session_smooth(fused, sessions, beta=p.beta)
    if novelty and p.novelty_weight:
        fused = (fused * np.float32(1.0 - p.novelty_weight * novelty)).astype(np.float32)
    if reference is not None and occurred_at is not None and p.recency_weight:
        since = np.asarray(occurred_at, dtype=np.float64)
        if last_used is not None:
            since = np.fmax(since, np.asarray(last_used, dtype=np.float64))
        fused = fused * recency_multiplier(
            since,
            reference.timestamp(),
            half_life=p.recency_half_life.total_seconds(),
            weight=p.recency_weight,
        )
    if importance is not None and p.importance_weight:
        imp = np.asarray(importance, dtype=np.float64)
        lift = 1.0 + p.importance_weight * (
            np.nan_to_num(imp, nan=DEFAULT_IMPORTANCE) - DEFAULT_IMPORTANCE
        )
        fused = np.minimum(fused * lift, 1.0)
    return np.asarray(fused, dtype=np.float32)
