"""Recall latency at N episodes, and the time to load the vector cache after open.

    python bench/recall_latency.py --episodes 10000 [--queries 200]

Builds a memory of N persona-style episodes (the extraction gold sentences with
names, places and sessions varied; extraction off, embeddings on) through
`remember_many`, reopens it, times the first recall (loads the numpy vector
matrix and the full-text index) and then p50/p95 over random questions.
Numbers only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from palimpsest import Memory  # noqa: E402

GOLD = ROOT / "tests" / "data" / "extraction_gold.jsonl"
NAMES = ["Mira", "Tom", "Ana", "Raj", "Lena", "Kofi", "Yuki", "Omar", "Sara", "Ivan"]
PLACES = ["Berlin", "Lima", "Oslo", "Perth", "Quito", "Seoul", "Accra", "Porto", "Cairo", "Riga"]
QUESTIONS = [
    "where does my sister live?",
    "what job do I have?",
    "which languages do I speak?",
    "what am I allergic to?",
    "when did I move?",
    "what is my dog called?",
    "who is my partner?",
    "what do I like to eat?",
]


def texts(n: int, rng: random.Random) -> list[str]:
    base = [json.loads(x)["text"] for x in GOLD.read_text().splitlines() if x.strip()]
    out = []
    for i in range(n):
        t = base[i % len(base)]
        out.append(f"{t} ({rng.choice(NAMES)} in {rng.choice(PLACES)}, note {i})")
    return out


def pct(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"{statistics.median(xs) * 1e3:.1f} / {xs[int(0.95 * (len(xs) - 1))] * 1e3:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    rng = random.Random(7)
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m"
        with Memory.open(path, extractor=None) as mem:
            a = time.perf_counter()
            all_texts = texts(args.episodes, rng)
            for start in range(0, len(all_texts), 1000):
                mem.remember_many(
                    [
                        {
                            "text": t,
                            "occurred_at": t0 + timedelta(minutes=start + i),
                            "session": f"s{(start + i) // 20}",
                        }
                        for i, t in enumerate(all_texts[start : start + 1000])
                    ]
                )
            build = time.perf_counter() - a
        with Memory.open(path, extractor=None) as mem:
            a = time.perf_counter()
            mem.recall(QUESTIONS[0], k=5)
            first = time.perf_counter() - a
            lat = []
            for _ in range(args.queries):
                q = rng.choice(QUESTIONS)
                a = time.perf_counter()
                mem.recall(q, k=5)
                lat.append(time.perf_counter() - a)
    print(
        f"episodes: {args.episodes:,}; built in {build:.0f} s "
        f"({args.episodes / build:,.0f} episodes/s, extraction off)"
    )
    print(f"first recall after open (loads vectors + full-text index): {first:.2f} s")
    print(f"recall k=5 p50 / p95 over {args.queries} questions: {pct(lat)}")


if __name__ == "__main__":
    main()
