"""remember_many throughput against the floor of the models it runs, in one run.

    python bench/remember.py [--episodes 2000] [--batch 200] [--check 200] [--no-embedder]

The floor is the time the models alone take on the same texts, batch by batch: spaCy's
`nlp.pipe` over the batch plus, when the memory has an embedder, the one embedding pass
`remember_many` makes (each turn's text, and the batch's first turn's predecessor: since
2026-12-07 the context vector is a mean of the two turns' vectors, not a second pass
over the pair). The one-pass floor (spaCy + the turns' texts only) is printed too, for
comparison with earlier runs. The engine's time is the whole `remember_many` (extraction
rules, validation, entity linking, Kùzu writes). Medians over batches and their ratio;
the issue's target is engine <= 1.5 x floor. The engine's time ends when the embedding
worker has stored the batch's entity-name and statement vectors (`drain` inside the
timer: that is work `remember` causes, done on another thread), and the floor then
includes the model on those texts too (the worker's calls, recorded and replayed on the
model alone, `bench/worker_watch.py`); the figures without them (worker outside the
timer, as runs before issue 18 measured) are printed beside. `--check N` also remembers
the first N texts one by one into a second memory and compares every episode's facts
with the batched run. `--no-embedder` opens the memory without an embedder, so the ratio
shows the engine's own work against spaCy alone. No assertions on time: numbers only.
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
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from worker_watch import WorkerWatch  # noqa: E402

from palimpsest import Episode, Memory  # noqa: E402
from palimpsest.extraction._spacy import load_pipeline  # noqa: E402

GOLD = ROOT / "tests" / "data" / "extraction_gold.jsonl"
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def persona_texts(n: int) -> list[str]:
    base = [json.loads(line)["text"] for line in GOLD.read_text().splitlines() if line.strip()]
    # distinct texts (a suffix per round) so idempotency never skips work
    return [
        f"{base[i % len(base)]}" if i < len(base) else f"{base[i % len(base)]} ({i})"
        for i in range(n)
    ]


def _items(texts: list[str], start: int) -> list[dict[str, Any]]:
    return [
        {"text": t, "occurred_at": T0 + timedelta(minutes=start + i), "session": "b"}
        for i, t in enumerate(texts)
    ]


def _loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "n/a"


def _shape(eps: list[Episode]) -> list[Any]:
    return [
        (
            e.id,
            e.importance,
            e.kind,
            sorted(
                (f.subject, f.predicate, f.object, str(f.valid_from), str(f.valid_to), f.op)
                for f in e.facts
            ),
        )
        for e in eps
    ]


def check_identical(texts: list[str], root: Path) -> bool:
    """remember_many and one-by-one remember store the same episodes and facts."""
    items = _items(texts, 0)
    with (
        Memory.open(root / "one", embedder=None) as one,
        Memory.open(root / "bulk", embedder=None) as bulk,
    ):
        singles = [one.remember(**it) for it in items]
        batch = bulk.remember_many(items)
        return _shape(singles) == _shape(batch)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--episodes", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=200)
    ap.add_argument("--check", type=int, default=0, help="compare N texts with one-by-one")
    ap.add_argument(
        "--no-embedder", action="store_true", help="memory without embedder: spaCy-only floor"
    )
    args = ap.parse_args()
    texts = persona_texts(args.episodes)
    load_before = _loadavg()
    nlp = load_pipeline()
    list(nlp.pipe(texts[:50]))  # warm the model
    with tempfile.TemporaryDirectory() as tmp:
        mem = (
            Memory.open(Path(tmp) / "m", embedder=None)
            if args.no_embedder
            else Memory.open(Path(tmp) / "m")
        )
        embedder = mem._index.embedder
        watch = WorkerWatch(mem)
        mem.remember("warm-up: I live in Oslo.", occurred_at=T0)
        watch.drain()
        engine, floor, floor1, acked, names_floor = [], [], [], [], []
        prev: str | None = None
        for start in range(0, len(texts), args.batch):
            chunk = texts[start : start + args.batch]
            # what recall embeds: each turn once, and the first one's predecessor
            before = [] if prev is None or prev in chunk else [prev]
            prev = chunk[-1]
            a = time.perf_counter()
            list(nlp.pipe(chunk))
            if embedder is not None:
                embedder.embed(chunk)
            one_pass = time.perf_counter() - a
            if embedder is not None and before:
                embedder.embed(before)
            floor.append(time.perf_counter() - a)
            floor1.append(one_pass)
            watch.reset()
            a = time.perf_counter()
            mem.remember_many(_items(chunk, start))
            acked.append(time.perf_counter() - a)
            watch.drain()  # the batch's name and statement vectors, stored
            engine.append(time.perf_counter() - a)
            names_floor.append(watch.model_seconds())
        stats = mem.stats()
        status = mem._embed.status()
        mem.close()
        same = check_identical(texts[: args.check], Path(tmp)) if args.check else None
    e, f, f1 = statistics.median(engine), statistics.median(floor), statistics.median(floor1)
    ack, nf = statistics.median(acked), statistics.median(names_floor)
    fw = statistics.median([x + y for x, y in zip(floor, names_floor, strict=True)])
    print(f"loadavg before: {load_before}; after: {_loadavg()}")
    print(
        f"episodes: {len(texts)} in batches of {args.batch}; stored {stats.episodes} episodes, "
        f"{stats.assertions} assertions"
    )
    models = "spaCy + embedder, one pass (turns; context = their mean)" if embedder else "spaCy"
    print(f"models floor ({models}): median {f:.3f} s/batch = {args.batch / f:,.0f} episodes/s")
    print(
        f"engine remember_many + worker drained: median {e:.3f} s/batch"
        f" = {args.batch / e:,.0f} episodes/s"
    )
    print(
        f"models floor with the names and statements the worker embedded: {fw:.3f} s"
        f" (those alone {nf:.3f} s)"
    )
    print(f"ratio engine (worker drained) / floor (with names): {e / fw:.2f}  (target <= 1.5)")
    print(f"ratio engine (worker drained) / floor (turns only): {e / f:.2f}")
    print(
        f"  acknowledged (worker outside the timer, as before issue 18): {ack:.3f} s,"
        f" ratio {ack / f:.2f}"
    )
    print(f"  worker: {status}")
    if embedder is not None:
        print(f"  one-pass floor (spaCy + embedder on turns only): {f1:.3f} s, ratio {e / f1:.2f}")
    if same is not None:
        print(f"remember_many == one-by-one remember on {args.check} texts: {same}")


if __name__ == "__main__":
    main()
