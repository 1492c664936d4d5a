"""LoCoMo retrieval baselines, and the prototype of the fused ranking recall() uses.

>>> # python bench/locomo_baselines.py                        # dev + holdout tables
>>> # python bench/locomo_baselines.py --ablation --abstention  # + ladder, floor trade-off

Not the engine: bench/locomo.py measures `Memory.recall` itself and prints these
baselines beside it. Per conversation this indexes every dialogue turn (bm25s for
words, the embedder for meaning), scores every turn for every question and
reports the LoCoMo authors' metric (`locomo_data.evidence_share`) per category
and overall, for the development and holdout splits separately.

Baselines: BM25 (bm25s, a light suffix stemmer) over "Speaker: text" turns;
dense (all-MiniLM-L6-v2) over the same texts with the question as asked; their
reciprocal rank fusion; and a stronger dense baseline with the speakers' names
taken out of the question. The prototype ("fused") is
``palimpsest.recall.ranking.relevance`` over: BM25 on each turn together with the
turn before it in the same session; dense on the turn and on that pair, without
speaker names on either side; the question's time window against session dates;
neighbour and session smoothing; and a penalty for question words the
conversation never uses. Its parameters (``FUSED``, ``FLOOR``) were chosen on the
development split and the development abstention questions only; holdout is
reported, never tuned on. Embeddings are cached under ``$LOCOMO_CACHE`` (default
/tmp/palimpsest_locomo), keyed by model identity and text.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_data import (
    ABSTENTION,
    CATEGORIES,
    DEV,
    HOLDOUT,
    KS,
    Conversation,
    Question,
    Turn,
    evidence_share,
    load_abstention,
    load_locomo,
    make_abstention,
    turn_text,
)

from palimpsest.recall import ranking as rk
from palimpsest.recall.embedder import Embedder, named

F32 = npt.NDArray[np.float32]
CACHE = Path(os.environ.get("LOCOMO_CACHE", "/tmp/palimpsest_locomo"))


# --------------------------------------------------------------------------- channels


def _stem(word: str) -> str:
    """A light English suffix stripper (the engine's Kùzu FTS stems with Porter)."""
    if len(word) <= 3:
        return word
    for suf, rep in (("ies", "y"), ("sses", "ss"), ("ied", "y")):
        if word.endswith(suf) and len(word) > len(suf) + 2:
            return word[: -len(suf)] + rep
    for suf in ("ingly", "edly", "ing", "ed"):
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            stem = word[: -len(suf)]
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
                stem = stem[:-1]
            return stem
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    if word.endswith("e") and len(word) > 4:
        return word[:-1]  # "decide" meets "decided" at "decid"
    return word


def _stem_all(words: list[str]) -> list[str]:
    return [_stem(w) for w in words]


class Bm25Channel:
    """bm25s over one conversation's documents; scores every document for a query."""

    def __init__(self, texts: Sequence[str], *, k1: float = 1.2, b: float = 0.75) -> None:
        import bm25s

        self._bm25s = bm25s
        self._n = len(texts)
        tokens = bm25s.tokenize(list(texts), stopwords="en", stemmer=_stem_all, show_progress=False)
        self._vocab = tokens.vocab
        self._df = np.zeros(len(self._vocab), dtype=np.int64)
        for doc in tokens.ids:
            for tid in set(doc):
                self._df[tid] += 1
        self.retriever = bm25s.BM25(k1=k1, b=b)
        self.retriever.index(tokens, show_progress=False)

    def _all_terms(self, query: str) -> list[str]:
        toks = self._bm25s.tokenize(
            [query], stopwords="en", stemmer=_stem_all, return_ids=False, show_progress=False
        )
        return list(toks[0])

    def _terms(self, query: str) -> list[str]:
        return [t for t in self._all_terms(query) if t in self._vocab]

    def novelty(self, query: str) -> float:
        """idf share of the query's terms that no document contains."""
        dfs = [
            int(self._df[self._vocab[t]]) if t in self._vocab else 0 for t in self._all_terms(query)
        ]
        return rk.term_novelty(dfs, self._n)

    def scores(self, query: str) -> F32:
        terms = self._terms(query)
        if not terms:
            return np.zeros(self._n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(terms), dtype=np.float32)

    def max_score(self, query: str) -> float:
        """Upper bound on any document's score: the sum of each term's best score."""
        return float(sum(float(np.max(self.retriever.get_scores([t]))) for t in self._terms(query)))


def embed_cached(embedder: Embedder, texts: Sequence[str], tag: str) -> F32:
    """Embed with a disk cache keyed by the model identity and the exact texts."""
    h = hashlib.sha256(embedder.identity().encode())
    for t in texts:
        h.update(t.encode("utf-8") + b"\0")
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"{tag}-{h.hexdigest()[:16]}.npy"
    if path.exists():
        cached: F32 = np.load(path).astype(np.float32)
        return cached
    vecs = embedder.embed(texts)
    np.save(path, vecs)
    return vecs


def context_text(turns: Sequence[Turn], i: int, *, speaker: bool = True) -> str:
    """The turn with the one before it in the same session: what the reply answers."""
    t = turns[i]
    prev = turns[i - 1] if i > 0 and turns[i - 1].session == t.session else None
    own = turn_text(t, speaker=speaker)
    return own if prev is None else turn_text(prev, speaker=speaker) + "\n" + own


@dataclass
class ConvIndex:
    conv: Conversation
    bm25_turn: Bm25Channel  # baseline: one turn per document
    bm25_ctx: Bm25Channel  # fused: previous turn + turn per document
    dense_turn: F32  # baseline: "Speaker: text" vectors
    dense_plain: F32  # fused: turn text without speaker
    dense_ctx: F32  # fused: previous turn + turn, without speakers
    sessions: npt.NDArray[np.int64]
    positions: npt.NDArray[np.int64]
    occurred: npt.NDArray[np.float64]  # POSIX seconds of the session


def build_indexes(convs: Sequence[Conversation], embedder: Embedder) -> dict[str, ConvIndex]:
    turns = [t for c in convs for t in c.turns]
    v_turn = embed_cached(embedder, [turn_text(t) for t in turns], "turns")
    v_plain = embed_cached(embedder, [turn_text(t, speaker=False) for t in turns], "turns-nospk")
    ctx = [context_text(c.turns, i, speaker=False) for c in convs for i in range(len(c.turns))]
    v_ctx = embed_cached(embedder, ctx, "turns-ctx-nospk")
    out: dict[str, ConvIndex] = {}
    start = 0
    for c in convs:
        n = len(c.turns)
        sl = slice(start, start + n)
        out[c.conv_id] = ConvIndex(
            conv=c,
            bm25_turn=Bm25Channel([turn_text(t) for t in c.turns]),
            bm25_ctx=Bm25Channel(
                [context_text(c.turns, i) for i in range(n)], k1=FUSED["k1"], b=FUSED["b"]
            ),
            dense_turn=v_turn[sl],
            dense_plain=v_plain[sl],
            dense_ctx=v_ctx[sl],
            sessions=np.array([t.session for t in c.turns], dtype=np.int64),
            positions=np.array([t.position for t in c.turns], dtype=np.int64),
            occurred=np.array([t.occurred_at.timestamp() for t in c.turns], dtype=np.float64),
        )
        start += n
    return out


# --------------------------------------------------------------------------- methods


@dataclass
class Query:
    text: str
    qvec: F32  # the question as asked
    qvec_content: F32  # the question without the speakers' names
    idx: ConvIndex


Method = Callable[[Query], F32]

# Chosen on the development split only (see the ablation table).
FUSED: dict[str, Any] = {
    "k1": 1.2,  # BM25 over context documents
    "b": 0.5,
    "w_bm25": 0.5,  # channel weights over calibrated 0..1 scores
    "w_dense": 0.5,
    "adaptive": False,
    "time_boost": 0.2,
    "time_slack_before_days": 1,
    "time_slack_after_days": 3,  # a mention follows the event it tells of
    "alpha": 0.5,  # neighbour smoothing
    "beta": 0.3,  # session smoothing
    "novelty": True,  # BM25 coverage counts words the memory never saw
    "novelty_all": 0.5,  # ...and so does the whole fused score
}
FLOOR = 0.25  # the lowest floor with <= 5% false memories on the dev abstention questions


def m_bm25(q: Query) -> F32:
    return q.idx.bm25_turn.scores(q.text)


def m_dense(q: Query) -> F32:
    return (q.idx.dense_turn @ q.qvec).astype(np.float32)


def m_dense_content(q: Query) -> F32:
    """Dense with names stripped from the question and speakers from the turns."""
    return (q.idx.dense_plain @ q.qvec_content).astype(np.float32)


def m_rrf(q: Query) -> F32:
    return rk.rrf_scores([m_bm25(q), m_dense(q)], k=60)


def fused_scores(q: Query, **overrides: Any) -> F32:
    """The ranking recall() will use (``ranking.relevance``), with FUSED overrides."""
    p = {**FUSED, **overrides}
    ix = q.idx
    context = p.get("context", True)
    ch = ix.bm25_ctx if context else ix.bm25_turn
    if p.get("content_query", True):
        dense = [ix.dense_plain @ q.qvec_content]
        if context:
            dense.append(ix.dense_ctx @ q.qvec_content)
    else:
        dense = [ix.dense_turn @ q.qvec]
    params = rk.RankParams(
        w_bm25=p["w_bm25"],
        w_dense=p["w_dense"],
        adaptive=p["adaptive"],
        time_boost=p["time_boost"],
        time_slack_before=timedelta(days=p["time_slack_before_days"]),
        time_slack_after=timedelta(days=p["time_slack_after_days"]),
        alpha=p["alpha"],
        beta=p["beta"],
        novelty_weight=p["novelty_all"],
        floor=FLOOR,
    )
    return rk.relevance(
        bm25=ch.scores(q.text),
        bm25_max=ch.max_score(q.text),
        novelty=ch.novelty(q.text) if p["novelty"] else 0.0,
        dense=dense,
        sessions=ix.sessions,
        positions=ix.positions,
        occurred_at=ix.occurred,
        # LoCoMo questions are asked after the last session: resolve "in June" from there.
        window=rk.query_time(q.text, ix.conv.last_date) if p["time_boost"] else None,
        params=params,
    )


def m_fused(q: Query) -> F32:
    return fused_scores(q)


def with_params(overrides: dict[str, Any]) -> Method:
    """The fused method with some FUSED parameters replaced."""

    def method(q: Query) -> F32:
        return fused_scores(q, **overrides)

    return method


# Each step adds one idea to the one above it (development split only).
_OFF: dict[str, Any] = {"novelty": False, "novelty_all": 0.0}
ABLATION: dict[str, dict[str, Any]] = {
    "calibrated fusion (turns)": {
        **_OFF, "context": False, "content_query": False, "time_boost": 0.0, "alpha": 0.0,
        "beta": 0.0,
    },
    "+ neighbour smoothing": {
        **_OFF, "context": False, "content_query": False, "time_boost": 0.0, "beta": 0.0,
    },
    "+ previous turn in both indexes": {
        **_OFF, "content_query": False, "time_boost": 0.0, "beta": 0.0,
    },
    "+ names out of the dense query": {**_OFF, "time_boost": 0.0, "beta": 0.0},
    "+ session smoothing": {**_OFF, "time_boost": 0.0},
    "+ query time window": {**_OFF},
    "+ unseen query words (= fused)": {},
    "fused, adaptive weights": {"adaptive": True},
    "fused, weights 0.6/0.4": {"w_bm25": 0.6, "w_dense": 0.4},
}  # fmt: skip


# --------------------------------------------------------------------------- evaluation


@dataclass
class Bench:
    idxs: dict[str, ConvIndex]
    embedder: Embedder
    qcache: dict[tuple[str, str], tuple[F32, F32]] = field(default_factory=dict)

    def prepare(self, items: Sequence[tuple[str, str]]) -> None:
        """Embed (conversation, question) pairs, as asked and without names."""
        todo = sorted(set(items) - set(self.qcache))
        if not todo:
            return
        raw = embed_cached(self.embedder, [t for _, t in todo], "questions")
        content = [rk.strip_names(t, self.idxs[c].conv.speakers) for c, t in todo]
        stripped = embed_cached(self.embedder, content, "questions-noname")
        for i, key in enumerate(todo):
            self.qcache[key] = (raw[i], stripped[i])

    def query(self, conv_id: str, text: str) -> Query:
        raw, content = self.qcache[(conv_id, text)]
        return Query(text, raw, content, self.idxs[conv_id])


def evaluate(method: Method, questions: Sequence[Question], bench: Bench) -> dict[str, Any]:
    """{category name or 'overall': {k: mean recall@k}}."""
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q in questions:
        query = bench.query(q.conv_id, q.text)
        scores = method(query)
        turns = query.idx.conv.turns
        for k in KS:
            r = evidence_share({turns[i].dia_id for i in rk.top_k(scores, k)}, q.evidence)
            per[CATEGORIES[q.category]][k].append(r)
            per["overall"][k].append(r)
    return {c: {k: float(np.mean(v)) for k, v in ks.items()} for c, ks in per.items()}


def print_table(title: str, results: dict[str, dict[str, Any]], ks: Sequence[int] = KS) -> None:
    cols = [*CATEGORIES.values(), "overall"]
    print(f"\n## {title}\n")
    print("| method | k | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name, res in results.items():
        for k in ks:
            cells = " | ".join(f"{res[c][k]:.3f}" if c in res else "-" for c in cols)
            print(f"| {name} | {k} | {cells} |")


def floor_tradeoff(
    questions: Sequence[Question],
    abstain: Sequence[dict[str, Any]],
    bench: Bench,
    floors: Sequence[float],
    method: Method = m_fused,
) -> list[tuple[float, float, float, float]]:
    """(floor, recall@5 with the floor, answerable questions left empty, false-memory rate)."""
    real = []
    for q in questions:
        query = bench.query(q.conv_id, q.text)
        real.append((method(query), [query.idx.conv.index[e] for e in q.evidence]))
    fake = [float(np.max(method(bench.query(r["conv_id"], r["question"])))) for r in abstain]
    out = []
    for f in floors:
        recalls, empty = [], 0
        for scores, ev in real:
            top = set(rk.top_k(scores, 5, floor=f))
            empty += not top
            recalls.append(evidence_share(top, ev))
        fm = float(np.mean([s >= f for s in fake])) if fake else float("nan")
        out.append((f, float(np.mean(recalls)), empty / max(1, len(real)), fm))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--split", choices=["dev", "holdout", "both"], default="both")
    ap.add_argument("--ablation", action="store_true", help="dev ablation ladder")
    ap.add_argument("--abstention", action="store_true", help="floor trade-off table")
    ap.add_argument("--make-abstention", action="store_true", help="rewrite the abstention set")
    ap.add_argument("--embedder", choices=("minilm", "minilm-fp32"), default="minilm")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    convs, questions, skipped = load_locomo()
    if args.make_abstention or not ABSTENTION.exists():
        print(f"wrote {make_abstention(convs)} abstention questions to {ABSTENTION}")
    abstain = load_abstention(convs)
    embedder = named(args.embedder)
    bench = Bench(build_indexes(convs, embedder), embedder)
    bench.prepare([(q.conv_id, q.text) for q in questions])
    bench.prepare([(r["conv_id"], r["question"]) for r in abstain])
    print(f"{len(questions)} questions ({skipped} skipped: no usable evidence)")
    methods: dict[str, Method] = {
        "bm25": m_bm25,
        "dense": m_dense,
        "dense, names out of query": m_dense_content,
        "rrf(bm25, dense)": m_rrf,
        "fused": m_fused,
    }
    splits = {"dev": DEV, "holdout": HOLDOUT}
    for split, ids in splits.items():
        if args.split not in (split, "both"):
            continue
        qs = [q for q in questions if q.conv_id in ids]
        res = {name: evaluate(m, qs, bench) for name, m in methods.items()}
        print_table(f"{split} ({len(qs)} questions)", res)
        if args.ablation and split == "dev":
            abl = {name: evaluate(with_params(over), qs, bench) for name, over in ABLATION.items()}
            print_table("dev ablation (each row adds one step)", abl, ks=(5, 10))
        if args.abstention:
            ab = [r for r in abstain if r["split"] == split]
            floors = [0.0, 0.1, 0.15, 0.2, 0.225, 0.25, 0.275, 0.3, 0.35, 0.4]
            print(f"\n## {split}: relevance floor trade-off ({len(ab)} abstention questions)\n")
            print("| floor | recall@5 | answerable left empty | false-memory rate |")
            print("|---|---|---|---|")
            for f, r5, empty, fm in floor_tradeoff(qs, ab, bench, floors):
                print(f"| {f:.3f} | {r5:.3f} | {empty:.3f} | {fm:.3f} |")


if __name__ == "__main__":
    main()
