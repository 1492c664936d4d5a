"""LoCoMo retrieval prototype: baselines versus the fused ranking recall() will use.

>>> # python bench/locomo_prototype.py                        # dev + holdout tables
>>> # python bench/locomo_prototype.py --ablation --abstention  # + ladder, floor trade-off

Per conversation it indexes every dialogue turn (bm25s for words, the embedder
for meaning), scores every turn for every question, and reports the LoCoMo
authors' retrieval metric: per question, the fraction of its evidence turns
(``dia_id``) found in the top-k, averaged over questions, per category and
overall, for the development and holdout splits separately.

Baselines: BM25 over "Speaker: text" turns; dense (all-MiniLM-L6-v2) over the
same texts with the question as asked; their reciprocal rank fusion; and a
stronger dense baseline with the speakers' names taken out of the question.
The fused ranking is ``palimpsest.recall.ranking.relevance`` over: BM25 on each
turn together with the turn before it in the same session; dense on the turn
and on that pair, without speaker names on either side; the question's time
window against session dates; neighbour and session smoothing; and a penalty
for question words the conversation never uses. Its parameters (``FUSED``,
``FLOOR``) were chosen on the development split and the development abstention
questions only; holdout is reported, never tuned on.

Shared images are indexed by their BLIP caption ("[shares a photo of …]"), as
LoCoMo's own prompts render them. Evidence ids are cleaned the obvious way
("D8:6; D9:17" is two ids, "D:11:26" is "D11:26", "D30:05" is "D30:5"); ids
naming no turn are dropped and a question left with no evidence is skipped (the
count is printed). Embeddings are cached under ``$LOCOMO_CACHE``
(default /tmp/palimpsest_locomo), keyed by model identity and text.
"""

from __future__ import annotations

import argparse
import calendar
import hashlib
import json
import os
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from palimpsest.recall import ranking as rk
from palimpsest.recall.embedder import Embedder, SentenceTransformerEmbedder

F32 = npt.NDArray[np.float32]

DATA = Path(os.environ.get("LOCOMO_PATH", "/work/shared/data/locomo/locomo10.json"))
CACHE = Path(os.environ.get("LOCOMO_CACHE", "/tmp/palimpsest_locomo"))
ABSTENTION = Path(__file__).resolve().parent / "data" / "abstention_locomo.jsonl"
DEV = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")
HOLDOUT = ("conv-44", "conv-47", "conv-48", "conv-49", "conv-50")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (5, 10, 25)


# --------------------------------------------------------------------------- data


@dataclass
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str
    session: int
    position: int
    occurred_at: datetime


@dataclass
class Question:
    conv_id: str
    text: str
    category: int
    evidence: list[str]


@dataclass
class Conversation:
    conv_id: str
    speakers: tuple[str, str]
    turns: list[Turn]
    last_date: datetime
    index: dict[str, int] = field(default_factory=dict)


_DATE_RE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}


def parse_locomo_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime (LoCoMo gives no zone)."""
    m = _DATE_RE.search(text)
    if not m:
        raise ValueError(f"unparsed LoCoMo date {text!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)


def _clean_evidence(raw: Sequence[str], known: set[str]) -> list[str]:
    out: list[str] = []
    for item in raw:
        for piece in re.split(r"[;\s,]+", item):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", piece.strip())
            if m:
                did = f"D{int(m.group(1))}:{int(m.group(2))}"
                if did in known and did not in out:
                    out.append(did)
    return out


def load_locomo(path: Path = DATA) -> tuple[list[Conversation], list[Question], int]:
    """Conversations, their questions, and how many questions had no usable evidence."""
    raw = json.loads(path.read_text())
    convs: list[Conversation] = []
    questions: list[Question] = []
    skipped = 0
    for sample in raw:
        c = sample["conversation"]
        sessions = sorted(
            (int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k) and c[k]),
        )
        turns: list[Turn] = []
        for s in sessions:
            when = parse_locomo_date(c[f"session_{s}_date_time"])
            for pos, t in enumerate(c[f"session_{s}"]):
                turns.append(
                    Turn(
                        dia_id=t["dia_id"],
                        speaker=t["speaker"],
                        text=t["text"],
                        caption=t.get("blip_caption", "") or "",
                        session=s,
                        position=pos,
                        occurred_at=when,
                    )
                )
        conv = Conversation(
            conv_id=sample["sample_id"],
            speakers=(c["speaker_a"], c["speaker_b"]),
            turns=turns,
            last_date=max(t.occurred_at for t in turns),
        )
        conv.index = {t.dia_id: i for i, t in enumerate(turns)}
        convs.append(conv)
        known = set(conv.index)
        for q in sample["qa"]:
            ev = _clean_evidence(q.get("evidence", []), known)
            if not ev:
                skipped += 1
                continue
            questions.append(Question(conv.conv_id, q["question"], int(q["category"]), ev))
    return convs, questions, skipped


def turn_text(t: Turn, *, speaker: bool = True, caption: bool = True, date: bool = False) -> str:
    """What a channel indexes for a turn, e.g. 'Caroline: text [shares a photo of …]'."""
    body = t.text
    if caption and t.caption:
        # LoCoMo's own prompts render shared images by their BLIP caption.
        body = f"{body} [shares {t.caption}]"
    if date:
        body = f"({t.occurred_at:%-d %B %Y}) {body}"
    return f"{t.speaker}: {body}" if speaker else body


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


def recall_at(scores: F32, evidence: Sequence[int], k: int) -> float:
    top = set(rk.top_k(scores, k))
    return sum(1 for e in evidence if e in top) / len(evidence)


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
        ev = [query.idx.conv.index[e] for e in q.evidence]
        for k in KS:
            r = recall_at(scores, ev, k)
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


# --------------------------------------------------------------------------- abstention

# Hand-written questions about things to check are never mentioned. Each has
# regular expressions (matched case-insensitively at a word start against every
# turn and image caption) that must all be absent from a conversation before the
# question is asked of it; make_abstention() checks that and load_abstention()
# checks it again.
ABSTENTION_POOL: list[tuple[str, list[str]]] = [
    ("What is {p}'s favourite football team?", ["football", "soccer"]),
    ("Which submarine did {p} tour?", ["submarine"]),
    ("How much cryptocurrency does {p} own?", ["crypto", "bitcoin", "ethereum"]),
    ("When did {p} start learning the saxophone?", ["saxophone", r"sax\b"]),
    ("What chess opening does {p} prefer?", ["chess"]),
    ("Who prepares {p}'s tax return?", [r"tax\b", "taxes"]),
    ("What did {p}'s dentist say at the last check-up?", ["dentist", "dental"]),
    ("What brand of motorbike does {p} ride?", ["motorbike", "motorcycle"]),
    ("Which opera did {p} see at the opera house?", ["opera"]),
    ("What is the name of {p}'s pet iguana?", ["iguana", "lizard", "reptile"]),
    ("How many marathons has {p} run in Antarctica?", ["antarctic"]),
    ("What did {p} think of the volcano tour in Iceland?", ["volcano", "iceland"]),
    ("Which stocks did {p} sell during the market crash?", [r"stocks?\b", "stock market", "crash"]),
    ("What surfing competition did {p} enter?", ["surf"]),
    ("When did {p} get a tattoo, and what does it show?", ["tattoo"]),
    ("What knitting pattern is {p} working on?", ["knit", "crochet"]),
    ("Which violin concerto is {p} practising?", ["violin", "concerto"]),
    ("How did {p} do in the poker tournament?", ["poker"]),
    ("What is {p}'s blood type?", ["blood type"]),
    ("Which beekeeping supplies did {p} buy for the hives?", [r"bees?\b", "beekeep", "hive"]),
    ("What did {p} name the sailboat?", ["sailboat", "sailing", "yacht"]),
    ("Where did {p} go skydiving?", ["skydiv", "parachut"]),
    ("What did {p} learn at the sushi-making class?", ["sushi"]),
    ("Which mountain did {p} climb in Nepal?", ["nepal", "everest", "himalaya"]),
    ("What does {p} grow in the greenhouse?", ["greenhouse"]),
    ("How long has {p} been practising karate?", ["karate", "martial art", "judo", "taekwondo"]),
    ("Which telescope did {p} buy to watch the stars?", ["telescope", "astronom"]),
    ("What was {p}'s score at the bowling alley?", ["bowling"]),
    ("Who won when {p} played golf last weekend?", ["golf"]),
    ("What did {p} do with the inheritance from the great-aunt?", ["inherit", r"aunts?\b"]),
    ("Which wine region did {p} visit for the wine tasting?", ["wine", "vineyard"]),
    ("How many languages does {p} speak, and is Mandarin one of them?", ["mandarin", "chinese"]),
    ("What is {p}'s opinion on nuclear power plants?", ["nuclear"]),
    ("Which podcast does {p} host?", ["podcast"]),
    ("When did {p} break an arm while skiing?", [r"ski(s|ing|ed|er)?\b", r"broke \w+ arm"]),
    ("What was {p}'s role in the community theatre musical?", ["musical", "theater", "theatre"]),
    ("What model of drone does {p} fly?", ["drone"]),
    ("Why did {p} sell the vintage piano?", ["piano"]),
    ("Which aquarium fish does {p} keep in the reef tank?", ["aquarium", "reef", "fish tank"]),
    ("What is {p}'s favourite cheese from France?", ["cheese", "france", "french", "paris"]),
    ("Which ballet did {p} perform in?", ["ballet"]),
    ("What did {p} buy at the antique auction?", ["auction", "antique"]),
    ("Which astronaut did {p} meet at the space centre?", ["astronaut", "nasa", "space cent"]),
    ("How often does {p} go scuba diving?", ["scuba", "diving", "snorkel"]),
    ("What did {p} build with the 3D printer?", ["3d print", "printer"]),
    ("What is {p}'s handicap at the golf club?", ["golf", "handicap"]),
    ("Which rugby club did {p} join?", ["rugby"]),
    ("What did {p} think of the hot-air balloon ride?", ["balloon"]),
    ("What was in the time capsule {p} buried?", ["capsule"]),
    ("How many chickens does {p} keep in the backyard?", ["chicken", r"hens?\b", "coop"]),
    ("Which court case did {p} serve on the jury for?", ["jury", "court case", "courtroom"]),
    ("What did {p} carve at the woodworking course?", ["woodwork", "carv", "whittl"]),
    ("Which tennis racket does {p} use?", ["tennis", "racket"]),
    ("What did {p}'s cardiologist recommend?", ["cardiolog", "heart surgeon", "heart attack"]),
    ("Which airline does {p} fly with on work trips?", ["airline", "flight attendant"]),
    ("What is the name of {p}'s lawyer?", ["lawyer", "attorney", "solicitor"]),
    ("How much did {p} pay for the electric scooter?", ["scooter"]),
    ("Which glacier did {p} hike across?", ["glacier"]),
    ("What grade did {p} get in the calculus exam?", ["calculus"]),
    ("What is {p}'s favourite brand of whisky?", ["whisk(e)?y", "bourbon", "scotch"]),
    ("Which horse did {p} bet on at the derby?", ["derby", "racehorse", "horse rac"]),
    ("What is the name of {p}'s parrot?", ["parrot", "parakeet", "budgie"]),
    ("Which fencing club does {p} train at?", ["fencing", "sabre", "epee"]),
    ("What did {p}'s plumber fix in the bathroom?", ["plumb"]),
    ("How many goals did {p} score in the water polo final?", ["polo"]),
    ("What is {p}'s cholesterol level?", ["cholesterol"]),
    ("Which escape room did {p} solve?", ["escape room"]),
    ("What did {p} name the sourdough starter?", ["sourdough"]),
    ("Which cryptic crossword does {p} solve every morning?", ["crossword"]),
    ("What was {p}'s time in the triathlon?", ["triathlon", "ironman"]),
    ("Which monastery did {p} stay at in Tibet?", ["monaster", "tibet"]),
    ("What did {p} win at the county fair pie contest?", [r"pies?\b", "county fair"]),
    ("Which kayak did {p} buy for the rapids?", ["kayak", "rapids", "canoe"]),
    ("What is {p}'s favourite flavour of bubble tea?", ["bubble tea", "boba"]),
    ("Which archery competition did {p} enter?", ["archery", r"bows?\b", "arrow"]),
    ("How many stamps are in {p}'s stamp collection?", ["stamp"]),
    ("What did {p}'s accountant say about the mortgage?", ["accountant", "mortgage"]),
    ("Which planetarium show did {p} watch?", ["planetarium"]),
    ("What did {p} see through the microscope in the lab?", ["microscope"]),
    ("Which origami animal did {p} fold?", ["origami"]),
    ("Who taught {p} to play the bagpipes?", ["bagpipe"]),
    ("What is {p}'s personal best in the pole vault?", ["pole vault", "athletics"]),
    ("Which typewriter did {p} restore?", ["typewriter"]),
    ("What did {p} cook on the camping stove during the blizzard?", ["blizzard"]),
    ("Where did {p} go paragliding?", ["paraglid", "hang glid"]),
]  # fmt: skip
ABSTENTION_PER_CONV = 20


def _absent(conv: Conversation, patterns: Sequence[str]) -> bool:
    corpus = "\n".join(f"{t.text} {t.caption}" for t in conv.turns)
    return not any(re.search(r"\b" + p, corpus, re.IGNORECASE) for p in patterns)


def make_abstention(convs: Sequence[Conversation], path: Path = ABSTENTION) -> int:
    """Write the abstention set: per conversation, pool questions whose terms are absent.

    Development conversations draw from the even-numbered pool entries and
    holdout ones from the odd-numbered, so the floor chosen on development
    questions has never seen a holdout question's topic.
    """
    rows: list[dict[str, Any]] = []
    for ci, conv in enumerate(convs):
        split = "dev" if conv.conv_id in DEV else "holdout"
        pool = ABSTENTION_POOL[0 if split == "dev" else 1 :: 2]
        picked = 0
        # Rotate the pool per conversation so sets differ between conversations.
        for j in range(len(pool)):
            template, patterns = pool[(ci * 3 + j) % len(pool)]
            if not _absent(conv, patterns):
                continue
            person = conv.speakers[picked % 2]
            rows.append(
                {
                    "conv_id": conv.conv_id,
                    "split": split,
                    "question": template.format(p=person),
                    "about": person,
                    "absent_terms": patterns,
                }
            )
            picked += 1
            if picked == ABSTENTION_PER_CONV:
                break
        if picked < ABSTENTION_PER_CONV:
            raise ValueError(f"only {picked} abstention questions fit {conv.conv_id}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def load_abstention(convs: Sequence[Conversation], path: Path = ABSTENTION) -> list[dict[str, Any]]:
    by_id = {c.conv_id: c for c in convs}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for r in rows:
        if not _absent(by_id[r["conv_id"]], r["absent_terms"]):
            raise ValueError(f"abstention question is answerable: {r}")
    return rows


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
            recalls.append(sum(1 for e in ev if e in top) / len(ev))
        fm = float(np.mean([s >= f for s in fake])) if fake else float("nan")
        out.append((f, float(np.mean(recalls)), empty / max(1, len(real)), fm))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--split", choices=["dev", "holdout", "both"], default="both")
    ap.add_argument("--ablation", action="store_true", help="dev ablation ladder")
    ap.add_argument("--abstention", action="store_true", help="floor trade-off table")
    ap.add_argument("--make-abstention", action="store_true", help="rewrite the abstention set")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    convs, questions, skipped = load_locomo()
    if args.make_abstention or not ABSTENTION.exists():
        print(f"wrote {make_abstention(convs)} abstention questions to {ABSTENTION}")
    abstain = load_abstention(convs)
    embedder = SentenceTransformerEmbedder()
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
