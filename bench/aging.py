"""Does a write cost more as a memory ages? Two memories that differ only in `user`'s history.

    python bench/aging.py                      # hub of 8,000 versions against 100
    python bench/aging.py --hub 8000 --rounds 60 --out /tmp/aging.json

Both memories are built through the public bulk path with the same fixed clock:
`young` gives `user` about 100 fact versions (a `likes` slot of 60, a `lives_in` slot
with 20 moves), `old` about 8,000 plus (a `likes` slot of `--hub` versions: distinct
objects and re-statements of some of them later on, and a `lives_in` slot with
`--moves` moves, 2,000 by default). Then the same operations run on both, alternately
(young, old, young, ...) so machine noise falls on both alike:

* `assert_fact("user", "likes", <new object>)`: a new object of the many-valued hub;
* `assert_fact("user", "likes", <an old object>)` restated later: an existing line;
* `assert_fact("user", "lives_in", <city>)` from a later date: appending to the one-
  valued slot with its past changes;
* `assert_fact("user", "lives_in", <city>, valid_from=<in the middle of the history>)`:
  a move learned late, landing inside the history;
* `end_fact("user", "likes", <an old object>)`;
* `remember("I really love hiking ...", speaker="user")` with the real spaCy extractor
  (no embedder, as in the issue's probe);
* the point query `facts("user", "lives_in", valid_at=V)` (known now), and the same at a
  random past `known_at`.

Medians (and p95) in ms per operation and memory, and old/young ratios. Numbers only:
nothing here asserts on time. Results also go to `--out` as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from palimpsest import Memory

T0 = datetime(2000, 1, 1, tzinfo=UTC)
TEXTS = [
    "I really love hiking in the mountains with my dog.",
    "I really love baking sourdough bread on Sundays.",
    "I really love reading old science fiction novels.",
    "I really love swimming in the lake near my house.",
    "I really love painting landscapes in watercolour.",
]


class Clock:
    """A transaction clock that moves a minute per reading (fixed, repeatable)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(minutes=1)
        return self.now


def build(path: Path, *, likes: int, restated: int, moves: int) -> tuple[Memory, Clock]:
    clock = Clock()
    mem = Memory.open(path, clock=clock, extractor="spacy", embedder=None)
    items: list[dict[str, Any]] = []
    for i in range(likes):
        items.append(
            {
                "subject": "user",
                "predicate": "likes",
                "object": f"thing {i}",
                "valid_from": T0 + timedelta(days=i % 5000),
            }
        )
    for i in range(restated):  # the same objects said again later: new versions on old lines
        items.append(
            {
                "subject": "user",
                "predicate": "likes",
                "object": f"thing {i % max(1, likes)}",
                "valid_from": T0 + timedelta(days=6000 + i),
            }
        )
    for i in range(0, len(items), 5000):
        mem.assert_many(items[i : i + 5000])
    # one move a transaction: each supersedes the last (two versions a move)
    moves_items = [
        {
            "subject": "user",
            "predicate": "lives_in",
            "object": f"city {i}",
            "valid_from": T0 + timedelta(days=3 * i),
        }
        for i in range(moves)
    ]
    for item in moves_items:
        mem.assert_many([item])
    return mem, clock


def versions_of(mem: Memory, predicate: str) -> int:
    return len(mem.history("user", predicate))


def pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "p50": statistics.median(xs) * 1000,
        "p95": xs[min(len(xs) - 1, int(0.95 * len(xs)))] * 1000,
        "n": len(xs),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hub", type=int, default=8000, help="versions of the old likes slot")
    ap.add_argument("--moves", type=int, default=2000, help="lives_in moves of the old memory")
    ap.add_argument("--rounds", type=int, default=40, help="operations of each kind per memory")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="aging-"))
    t = time.perf_counter()
    # young: ~60 likes versions and 20 moves (~40 versions); old: the hub and 2,000 moves
    young, yclock = build(tmp / "young", likes=50, restated=10, moves=20)
    # distinct objects and restatements of some of them (each restatement: two versions)
    old, oclock = build(tmp / "old", likes=args.hub // 2, restated=args.hub // 4, moves=args.moves)
    built = time.perf_counter() - t
    sizes = {
        name: {"likes": versions_of(m, "likes"), "lives_in": versions_of(m, "lives_in")}
        for name, m in (("young", young), ("old", old))
    }
    print(f"built in {built:.1f} s: {json.dumps(sizes)}", flush=True)
    mems = {"young": (young, yclock, 20), "old": (old, oclock, args.moves)}
    # warm both: the extractor's model, caches
    for m, _, _ in mems.values():
        m.remember("I really love warming up.", speaker="user")
        m.facts("user", "lives_in")

    def op_new_like(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        return lambda: m.assert_fact("user", "likes", f"new thing {i}")

    def op_restate_like(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        return lambda: m.assert_fact("user", "likes", f"thing {i}")

    def op_move(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        start = T0 + timedelta(days=3 * moves + 10 * (i + 1))
        return lambda: m.assert_fact("user", "lives_in", f"later city {i}", valid_from=start)

    def op_move_late(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        start = T0 + timedelta(days=3 * rng.randrange(moves) + 1)
        return lambda: m.assert_fact("user", "lives_in", f"lost city {i}", valid_from=start)

    def op_end_like(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        return lambda: m.end_fact("user", "likes", f"thing {i + 20}")

    def op_remember(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        text = f"{TEXTS[i % len(TEXTS)]} ({i})"
        return lambda: m.remember(text, speaker="user")

    def op_point(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        v = T0 + timedelta(days=rng.randrange(3 * moves + 1))
        return lambda: m.facts("user", "lives_in", valid_at=v)

    def op_point_past(m: Memory, c: Clock, moves: int, i: int) -> Callable[[], Any]:
        v = T0 + timedelta(days=rng.randrange(3 * moves + 1))
        k = T0 + (c.now - T0) * rng.random()
        return lambda: m.facts("user", "lives_in", valid_at=v, known_at=k)

    ops = {
        "assert likes (new object)": op_new_like,
        "assert likes (restated)": op_restate_like,
        "assert lives_in (appended)": op_move,
        "assert lives_in (learned late)": op_move_late,
        "end likes": op_end_like,
        "remember": op_remember,
        "point lives_in (known now)": op_point,
        "point lives_in (past known_at)": op_point_past,
    }
    results: dict[str, dict[str, Any]] = {}
    for name, make in ops.items():
        lat: dict[str, list[float]] = {"young": [], "old": []}
        reps = args.rounds * (5 if name.startswith("point") else 1)
        for i in range(reps):
            for which in ("young", "old") if i % 2 == 0 else ("old", "young"):
                m, c, moves = mems[which]
                fn = make(m, c, moves, i)
                t0 = time.perf_counter()
                fn()
                lat[which].append(time.perf_counter() - t0)
        y, o = pct(lat["young"]), pct(lat["old"])
        results[name] = {"young": y, "old": o, "ratio_p50": o["p50"] / y["p50"]}
        print(
            f"{name:34s} young {y['p50']:8.2f} / {y['p95']:8.2f} ms   old {o['p50']:8.2f} /"
            f" {o['p95']:8.2f} ms   x{o['p50'] / y['p50']:.2f}",
            flush=True,
        )
    for m, _, _ in mems.values():
        m.close()
    out = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "args": vars(args) | {"out": str(args.out) if args.out else None},
        "sizes": sizes,
        "results": results,
    }
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
