"""LoCoMo retrieval through the engine: `Memory.remember_many` in, `Memory.recall` out.

>>> # python bench/locomo.py --quick        # one development conversation
>>> # python bench/locomo.py                # dev and holdout, with baselines
>>> # python bench/locomo.py --split dev --diversity 0,1   # also at recall(diversity=)

Each conversation goes into its own temporary memory: every turn an episode
(session date as `occurred_at`, each turn a few seconds after the previous,
`dia_id` as `source`, the session as `session`, the speaker's name as
`speaker`, `author_kind="user"`; shared images rendered by their caption as
LoCoMo's own prompts do; read by `palimpsest.transfer.parse_locomo`, the importer
behind `palimpsest import --format locomo`). The memory's clock stands one day after the last
session, when LoCoMo's questions are asked. Every question is asked as a user
asks it, at the shipped defaults (`mem.recall(q, k=10)`: the decision to answer
of `recall/_evidence.py`, then the k best), and, beside it and labelled, with
`mem.recall(q, k=25, min_score=0)`; recall@k is the share of the question's
evidence turns among the first k episode hits (fact hits, if an extractor is
on, take no place here: peers.py counts them). BM25-alone (bm25s) and
dense-alone (MiniLM) baselines are computed in the same run
(bench/locomo_baselines.py); the data, the metric and the abstention set are
bench/locomo_data.py's.

The never-mentioned questions of bench/data/abstention_locomo.jsonl (20 a
conversation) are asked through the same memories at the defaults (the
false-memory rate: share that get any hit) and at `min_score=0`; beside the
defaults, a table of plain floors on the best score (the old rule, not what
recall ships) gives recall@5/@10 and the false-memory rate per floor.
`--save` writes the tables as bench/results/locomo-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_baselines as base
import locomo_data as lc

from palimpsest import Memory
from palimpsest.recall.embedder import named
from palimpsest.recall.ranking import RankParams
from palimpsest.transfer import parse_locomo

KS = lc.KS


def _items(conv: lc.Conversation) -> list[dict[str, Any]]:
    """The conversation as the engine's own LoCoMo importer reads it."""
    return parse_locomo(lc.DATA.read_text(), conversations=[conv.conv_id])


Ranked = list[tuple[str, float]]  # (dia_id, score) of episode hits, best first


@dataclass
class Answer:
    """One question's episode hits, and the best score of any hit (facts too)."""

    ranked: Ranked
    best: float
    demoted: int = 0  # near-duplicates recall's diversity demoted in the first 10


@dataclass
class Run:
    """What `run_engine` measured for one conversation."""

    shipped: list[Answer]  # recall(q, k=10): the defaults a user gets
    answered: list[bool]  # never-mentioned questions that got any hit at the defaults
    ranked: list[Answer]  # recall(q, k=25, min_score=0)
    import_s: float
    recall_s: float  # mean seconds of a recall at the defaults
    absent_best: list[float]  # best score of each never-mentioned question at min_score=0
    other: dict[float, list[Answer]]


def run_engine(
    conv: lc.Conversation,
    questions: Sequence[lc.Question],
    embedder: Any,
    *,
    extract: bool,
    absent: Sequence[str] = (),
    diversities: Sequence[float] = (),
) -> Run:
    """Each question asked at the shipped defaults (`recall(q, k=10)`) and at
    `min_score=0` (k=25), whether each `absent` (never-mentioned) question got any
    hit at the defaults and its best score at `min_score=0`, import and recall
    seconds, and the answers at each of `diversities` (`recall(diversity=)`),
    asked first and without recording uses, so each value sees the same memory."""
    items = _items(conv)
    now = max(i["occurred_at"] for i in items) + timedelta(days=1)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with Memory.open(
            Path(tmp) / "mem",
            clock=lambda: now,
            extractor="spacy" if extract else None,
            embedder=embedder,
        ) as mem:
            mem.remember_many(items)
            other: dict[float, list[Answer]] = {}
            mem._uses.note = lambda *a, **kw: None  # type: ignore[method-assign]
            for d in diversities:
                other[d] = []
                for q in questions:
                    hits = mem.recall(q.text, k=25, min_score=0, diversity=d)
                    eps = [(h.source or "", h.score) for h in hits if h.kind == "episode"]
                    demoted = sum("diversity" in h.channels for h in hits[:10])
                    other[d].append(Answer(eps, max((h.score for h in hits), default=0.0), demoted))
            del mem._uses.note
            t1 = time.perf_counter()
            shipped: list[Answer] = []
            for q in questions:  # as a user asks: the defaults (uses recorded as shipped)
                hits = mem.recall(q.text, k=10)
                eps = [(h.source or "", h.score) for h in hits if h.kind == "episode"]
                shipped.append(Answer(eps, max((h.score for h in hits), default=0.0)))
            t2 = time.perf_counter()
            answered = [bool(mem.recall(text, k=5)) for text in absent]
            mem._uses.note = lambda *a, **kw: None  # type: ignore[method-assign]
            ranked: list[Answer] = []
            for q in questions:
                hits = mem.recall(q.text, k=25, min_score=0)
                eps = [(h.source or "", h.score) for h in hits if h.kind == "episode"]
                ranked.append(Answer(eps, max((h.score for h in hits), default=0.0)))
            best = []
            for text in absent:
                hits = mem.recall(text, k=5, min_score=0)
                best.append(max((h.score for h in hits), default=0.0))
    lat = (t2 - t1) / max(1, len(questions))
    return Run(shipped, answered, ranked, t1 - t0, lat, best, other)


def _recall_of(answer: Answer, evidence: Sequence[str], k: int, floor: float = 0.0) -> float:
    """Share of the evidence among the first k episode hits recall returns at `floor`."""
    if answer.best < floor:
        return 0.0  # abstained
    cut = floor * RankParams().tail
    return lc.evidence_share({d for d, s in answer.ranked[:k] if s >= cut}, evidence)


def _tradeoff(
    rows: Sequence[tuple[Answer, Sequence[str]]], absent: Sequence[float], floors: Sequence[float]
) -> list[dict[str, float]]:
    """Per floor: recall@5 and @10 under recall's abstention rule, answerable questions
    left with no hit, and the false-memory rate (never-mentioned questions answered)."""
    out = []
    for f in floors:
        out.append(
            {
                "floor": f,
                "recall@5": float(np.mean([_recall_of(r, ev, 5, f) for r, ev in rows])),
                "recall@10": float(np.mean([_recall_of(r, ev, 10, f) for r, ev in rows])),
                "empty": float(np.mean([r.best < f for r, _ in rows])),
                "false_memory": float(np.mean([b >= f for b in absent])) if absent else 0.0,
            }
        )
    return out


def _table(title: str, results: dict[str, dict[str, dict[int, float]]]) -> None:
    cols = [*lc.CATEGORIES.values(), "overall"]
    print(f"\n## {title}\n")
    print("| method | k | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name, res in results.items():
        for k in KS:
            cells = " | ".join(f"{res[c][k]:.3f}" if k in res.get(c, {}) else "-" for c in cols)
            print(f"| {name} | {k} | {cells} |")


def _aggregate(rows: Sequence[tuple[int, dict[int, float]]]) -> dict[str, dict[int, float]]:
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for cat, rec in rows:
        for k, r in rec.items():
            per[lc.CATEGORIES[cat]][k].append(r)
            per["overall"][k].append(r)
    return {c: {k: float(np.mean(v)) for k, v in ks.items()} for c, ks in per.items()}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one development conversation")
    ap.add_argument("--extract", action="store_true", help="run the spaCy extractor too")
    ap.add_argument("--floors", default="0.1,0.15,0.2,0.22,0.25,0.28,0.3,0.35")
    ap.add_argument("--split", choices=("dev", "holdout", "both"), default="both")
    ap.add_argument(
        "--embedder",
        choices=("minilm", "minilm-fp32"),
        default="minilm",
        help="the shipped int8 MiniLM (default) or the fp32 one on torch (the fp32 extra)",
    )
    ap.add_argument("--save", action="store_true", help="write bench/results/locomo-<date>.json")
    ap.add_argument(
        "--diversity", default="", help="also rank at these recall(diversity=) values, e.g. 0,1"
    )
    args = ap.parse_args(argv)
    floors = sorted({float(x) for x in args.floors.split(",")} | {RankParams().floor})
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    diversities = [float(x) for x in args.diversity.split(",") if x.strip()]

    convs, questions, skipped = lc.load_locomo()
    splits = {"dev": lc.DEV, "holdout": lc.HOLDOUT}
    if args.split != "both":
        splits = {args.split: splits[args.split]}
    if args.quick:
        splits = {"dev (quick: conv-26)": ("conv-26",)}
    wanted = {c for ids in splits.values() for c in ids}
    absent = [a for a in lc.load_abstention(convs) if a["conv_id"] in wanted]
    convs = [c for c in convs if c.conv_id in wanted]
    embedder = named(args.embedder)
    bench = base.Bench(base.build_indexes(convs, embedder), embedder)
    qs_all = [q for q in questions if q.conv_id in wanted]
    bench.prepare([(q.conv_id, q.text) for q in qs_all])
    print(f"{len(qs_all)} questions ({skipped} skipped in the whole set: no usable evidence)")
    report: dict[str, Any] = {
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
        "embedder": embedder.identity(),
    }

    for split, ids in splits.items():
        qs = [q for q in qs_all if q.conv_id in ids]
        engine_rows: list[tuple[int, dict[int, float]]] = []
        div_rows: dict[float, list[tuple[int, dict[int, float]]]] = defaultdict(list)
        demoted: dict[float, int] = defaultdict(int)
        imports, latencies = [], []
        curve_rows: list[tuple[Answer, Sequence[str]]] = []
        absent_best: list[float] = []
        answered: list[bool] = []
        shipped_rows: list[tuple[int, dict[int, float]]] = []
        for conv in (c for c in convs if c.conv_id in ids):
            cq = [q for q in qs if q.conv_id == conv.conv_id]
            ca = [a["question"] for a in absent if a["conv_id"] == conv.conv_id]
            run = run_engine(
                conv, cq, embedder, extract=args.extract, absent=ca, diversities=diversities
            )
            for d, answers in run.other.items():
                demoted[d] += sum(a.demoted for a in answers)
                for q, r in zip(cq, answers, strict=True):
                    div_rows[d].append((q.category, {k: _recall_of(r, q.evidence, k) for k in KS}))
            imports.append(run.import_s)
            latencies.append(run.recall_s)
            absent_best += run.absent_best
            answered += run.answered
            for q, r, r0 in zip(cq, run.shipped, run.ranked, strict=True):
                at = {k: _recall_of(r, q.evidence, k) for k in (5, 10)}
                shipped_rows.append((q.category, at))
                engine_rows.append((q.category, {k: _recall_of(r0, q.evidence, k) for k in KS}))
                curve_rows.append((r0, q.evidence))
        res = {
            "bm25 (bm25s)": base.evaluate(base.m_bm25, qs, bench),
            "dense (MiniLM)": base.evaluate(base.m_dense, qs, bench),
            "prototype fused": base.evaluate(base.m_fused, qs, bench),
            "engine, defaults (recall(q, k=10))": _aggregate(shipped_rows),
            "engine, min_score=0": _aggregate(engine_rows),
        } | {f"engine diversity={d:g}": _aggregate(rows) for d, rows in div_rows.items()}
        _table(f"{split} ({len(qs)} questions)", res)
        for d, n in demoted.items():
            print(
                f"diversity={d:g} (uses not recorded): {n} near-duplicates demoted in the top 10s"
            )
        print(
            f"\nimport {np.mean(imports):.1f} s per conversation;"
            f" recall {1000 * np.mean(latencies):.0f} ms per question"
        )
        fm = float(np.mean(answered)) if answered else 0.0
        print(f"\ndefaults: {fm:.3f} of {len(answered)} never-mentioned questions get a hit")
        curve = _tradeoff(curve_rows, absent_best, floors) if absent_best else []
        if curve:
            print(
                f"\nbeside the defaults, a plain floor on the best score (not the shipped"
                f" decision, `recall/_evidence.py`; {len(absent_best)} never-mentioned):\n"
            )
            print("| floor | recall@5 | recall@10 | answerable left empty | false memories |")
            print("|---|---|---|---|---|")
            for c in curve:
                mark = " (the default floor, plain)" if c["floor"] == RankParams().floor else ""
                print(
                    f"| {c['floor']:.2f}{mark} | {c['recall@5']:.3f} | {c['recall@10']:.3f}"
                    f" | {c['empty']:.3f} | {c['false_memory']:.3f} |"
                )
        report[split] = {
            "questions": len(qs),
            "results": res,
            "defaults_false_memory": fm,
            "plain_floor_tradeoff": curve,
        }
    if args.save:
        out = Path(__file__).resolve().parent / "results"
        out.mkdir(exist_ok=True)
        tag = ("" if args.split == "both" else f"-{args.split}") + (
            "-fp32" if args.embedder == "minilm-fp32" else ""
        )
        path = out / f"locomo-{time.strftime('%Y-%m-%d')}{tag}.json"
        path.write_text(json.dumps(report, indent=1, default=str) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
