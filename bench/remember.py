"""remember_many throughput against the floor of the models it runs, in one run.

    python bench/remember.py [--episodes 2000] [--batch 200]

The floor is the time the models alone take on the same texts (spaCy's
`nlp.pipe` over the batch, plus the embedder when the memory has one); the
engine's time is the whole `remember_many` (extraction rules, validation,
Kùzu writes). Reported as medians over batches and their ratio; the issue's
target is engine <= 1.5 x floor. No assertions: numbers only.
"""

from __future__ import annotations

import argparse
import json
import os
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
from palimpsest.extraction._spacy import load_pipeline  # noqa: E402

GOLD = ROOT / "tests" / "data" / "extraction_gold.jsonl"


def persona_texts(n: int) -> list[str]:
    base = [json.loads(line)["text"] for line in GOLD.read_text().splitlines() if line.strip()]
    # distinct texts (a suffix per round) so idempotency never skips work
    return [
        f"{base[i % len(base)]}" if i < len(base) else f"{base[i % len(base)]} ({i})"
        for i in range(n)
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=200)
    args = ap.parse_args()
    texts = persona_texts(args.episodes)
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    nlp = load_pipeline()
    list(nlp.pipe(texts[:50]))  # warm the model
    with tempfile.TemporaryDirectory() as tmp:
        mem = Memory.open(Path(tmp) / "m")
        embedder = getattr(mem, "_embedder", None)
        mem.remember("warm-up: I live in Oslo.", occurred_at=t0)
        engine, floor = [], []
        for start in range(0, len(texts), args.batch):
            chunk = texts[start : start + args.batch]
            items = [
                {"text": t, "occurred_at": t0 + timedelta(minutes=start + i), "session": "b"}
                for i, t in enumerate(chunk)
            ]
            a = time.perf_counter()
            list(nlp.pipe(chunk))
            if embedder is not None:
                embedder.embed(chunk)
            floor.append(time.perf_counter() - a)
            a = time.perf_counter()
            mem.remember_many(items)
            engine.append(time.perf_counter() - a)
        stats = mem.stats()
        mem.close()
    e, f = statistics.median(engine), statistics.median(floor)
    print(
        f"episodes: {len(texts)} in batches of {args.batch}; stored {stats.episodes} episodes, "
        f"{stats.assertions} assertions"
    )
    print(
        f"models floor (spaCy{' + embedder' if embedder else ''}): median {f:.3f} s/batch "
        f"= {args.batch / f:,.0f} episodes/s"
    )
    print(
        f"engine remember_many:           median {e:.3f} s/batch = {args.batch / e:,.0f} episodes/s"
    )
    print(f"ratio engine / floor: {e / f:.2f}  (target <= 1.5)")


if __name__ == "__main__":
    main()
