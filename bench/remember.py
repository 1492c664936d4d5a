"""remember_many throughput against the floor of the models it runs, in one run.

    python bench/remember.py [--episodes 2000] [--batch 200] [--check 200] [--no-embedder]

The floor is the time the models alone take on the same texts, batch by batch:
spaCy's `nlp.pipe` over the batch plus, when the memory has an embedder, the two
embedding passes `remember_many` makes (each turn's text, and the context text:
the previous turn of the session and this one, as recall pairs them). The older
one-pass floor (spaCy + the turns' texts only) is printed too, for comparison
with earlier runs. The engine's time is the whole `remember_many` (extraction
rules, validation, entity linking, Kùzu writes). Medians over batches and their
ratio; the issue's target is engine <= 1.5 x floor. `--check N` also remembers
the first N texts one by one into a second memory and compares every episode's
facts with the batched run. `--no-embedder` opens the memory without an embedder,
so the ratio shows the engine's own work against spaCy alone. No assertions on
time: numbers only.
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
        mem.remember("warm-up: I live in Oslo.", occurred_at=T0)
        engine, floor, floor1 = [], [], []
        prev: str | None = None
        for start in range(0, len(texts), args.batch):
            chunk = texts[start : start + args.batch]
            # the context texts recall embeds: the session's previous turn, then this one
            ctx = [
                t if p is None else f"{p}\n{t}"
                for p, t in zip([prev, *chunk[:-1]], chunk, strict=True)
            ]
            prev = chunk[-1]
            a = time.perf_counter()
            list(nlp.pipe(chunk))
            if embedder is not None:
                embedder.embed(chunk)
            one_pass = time.perf_counter() - a
            if embedder is not None:
                embedder.embed(ctx)
            floor.append(time.perf_counter() - a)
            floor1.append(one_pass)
            a = time.perf_counter()
            mem.remember_many(_items(chunk, start))
            engine.append(time.perf_counter() - a)
        stats = mem.stats()
        mem.close()
        same = check_identical(texts[: args.check], Path(tmp)) if args.check else None
    e, f, f1 = statistics.median(engine), statistics.median(floor), statistics.median(floor1)
    print(f"loadavg before: {load_before}; after: {_loadavg()}")
    print(
        f"episodes: {len(texts)} in batches of {args.batch}; stored {stats.episodes} episodes, "
        f"{stats.assertions} assertions"
    )
    models = "spaCy + embedder x2 (turn, context)" if embedder else "spaCy"
    print(f"models floor ({models}): median {f:.3f} s/batch = {args.batch / f:,.0f} episodes/s")
    print(f"engine remember_many: median {e:.3f} s/batch = {args.batch / e:,.0f} episodes/s")
    print(f"ratio engine / floor: {e / f:.2f}  (target <= 1.5)")
    if embedder is not None:
        print(f"  one-pass floor (spaCy + embedder on turns only): {f1:.3f} s, ratio {e / f1:.2f}")
    if same is not None:
        print(f"remember_many == one-by-one remember on {args.check} texts: {same}")


if __name__ == "__main__":
    main()
