"""LoCoMo retrieval through the engine: `Memory.remember_many` in, `Memory.recall` out.

>>> # python bench/locomo.py --quick        # one development conversation
>>> # python bench/locomo.py                # dev and holdout, with baselines

Each conversation goes into its own temporary memory: every turn an episode
(session date as `occurred_at`, each turn a few seconds after the previous,
`dia_id` as `source`, the session as `session`, the speaker's name as
`speaker`, `author_kind="user"`; shared images rendered by their caption as
LoCoMo's own prompts do). The memory's clock stands one day after the last
session, when LoCoMo's questions are asked. Every question is asked with
`mem.recall(q, k=25, min_score=0)`; recall@k is the share of the question's
evidence turns among the first k episode hits (fact hits, if an extractor is
on, are skipped). BM25-alone (bm25s) and dense-alone (MiniLM) baselines are
computed in the same run with the prototype's code (bench/locomo_prototype.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_prototype as proto

from palimpsest import Memory
from palimpsest.recall.embedder import SentenceTransformerEmbedder

KS = proto.KS
TURN_GAP = timedelta(seconds=5)


def _items(conv: proto.Conversation) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in conv.turns:
        text = f"{t.text} [shares {t.caption}]" if t.caption else t.text
        out.append(
            {
                "text": text,
                "speaker": t.speaker,
                "author_kind": "user",
                "occurred_at": t.occurred_at + TURN_GAP * t.position,
                "session": f"session_{t.session}",
                "source": t.dia_id,
            }
        )
    return out


def run_engine(
    conv: proto.Conversation,
    questions: Sequence[proto.Question],
    embedder: Any,
    *,
    extract: bool,
) -> tuple[list[list[str]], float, float]:
    """Ranked dia_ids per question, import seconds, mean recall seconds."""
    last = max(t.occurred_at + TURN_GAP * t.position for t in conv.turns)
    now = last + timedelta(days=1)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        with Memory.open(
            Path(tmp) / "mem",
            clock=lambda: now,
            extractor="spacy" if extract else None,
            embedder=embedder,
        ) as mem:
            mem.remember_many(_items(conv))
            t1 = time.perf_counter()
            ranked = []
            for q in questions:
                hits = mem.recall(q.text, k=25, min_score=0)
                ranked.append([h.source or "" for h in hits if h.kind == "episode"])
            t2 = time.perf_counter()
    return ranked, t1 - t0, (t2 - t1) / max(1, len(questions))


def _recall_of(ranked: Sequence[str], evidence: Sequence[str], k: int) -> float:
    top = set(ranked[:k])
    return sum(1 for e in evidence if e in top) / len(evidence)


def _table(title: str, results: dict[str, dict[str, dict[int, float]]]) -> None:
    cols = [*proto.CATEGORIES.values(), "overall"]
    print(f"\n## {title}\n")
    print("| method | k | " + " | ".join(cols) + " |")
    print("|---|---|" + "---|" * len(cols))
    for name, res in results.items():
        for k in KS:
            cells = " | ".join(f"{res[c][k]:.3f}" if c in res else "-" for c in cols)
            print(f"| {name} | {k} | {cells} |")


def _aggregate(rows: Sequence[tuple[int, dict[int, float]]]) -> dict[str, dict[int, float]]:
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for cat, rec in rows:
        for k, r in rec.items():
            per[proto.CATEGORIES[cat]][k].append(r)
            per["overall"][k].append(r)
    return {c: {k: float(np.mean(v)) for k, v in ks.items()} for c, ks in per.items()}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one development conversation")
    ap.add_argument("--extract", action="store_true", help="run the spaCy extractor too")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    convs, questions, skipped = proto.load_locomo()
    splits = {"dev": proto.DEV, "holdout": proto.HOLDOUT}
    if args.quick:
        splits = {"dev (quick: conv-26)": ("conv-26",)}
    wanted = {c for ids in splits.values() for c in ids}
    convs = [c for c in convs if c.conv_id in wanted]
    embedder = SentenceTransformerEmbedder()
    bench = proto.Bench(proto.build_indexes(convs, embedder), embedder)
    qs_all = [q for q in questions if q.conv_id in wanted]
    bench.prepare([(q.conv_id, q.text) for q in qs_all])
    print(f"{len(qs_all)} questions ({skipped} skipped in the whole set: no usable evidence)")

    for split, ids in splits.items():
        qs = [q for q in qs_all if q.conv_id in ids]
        engine_rows: list[tuple[int, dict[int, float]]] = []
        imports, latencies = [], []
        for conv in (c for c in convs if c.conv_id in ids):
            cq = [q for q in qs if q.conv_id == conv.conv_id]
            ranked, secs, lat = run_engine(conv, cq, embedder, extract=args.extract)
            imports.append(secs)
            latencies.append(lat)
            for q, r in zip(cq, ranked, strict=True):
                engine_rows.append((q.category, {k: _recall_of(r, q.evidence, k) for k in KS}))
        res = {
            "bm25 (bm25s)": proto.evaluate(proto.m_bm25, qs, bench),
            "dense (MiniLM)": proto.evaluate(proto.m_dense, qs, bench),
            "prototype fused": proto.evaluate(proto.m_fused, qs, bench),
            "engine Memory.recall": _aggregate(engine_rows),
        }
        _table(f"{split} ({len(qs)} questions)", res)
        print(
            f"\nimport {np.mean(imports):.1f} s per conversation;"
            f" recall {1000 * np.mean(latencies):.0f} ms per question"
        )


if __name__ == "__main__":
    main()
