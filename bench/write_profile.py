"""Write-path profile on a copy of a big memory: bulk batches and single asserts, per statement.

>>> # python bench/write_profile.py --src /tmp/ab1m --batches 6 --singles 100
>>> # python bench/write_profile.py --src /tmp/ab1m --json /tmp/new.json   # then diff two runs

The source memory (e.g. one grown by `bench/core.py --keep` to 1M versions) is
never opened: it is copied to a scratch directory first, and the copy is
deleted afterwards. On the copy it runs, through the public facade and the
generated data mix of `bench/core.py` (`Generator`, continued past the
subjects already stored):

* `--batches` growth batches of `--batch` assertions (default 20,000, the import's;
  `Memory.assert_many`), each with every store call timed (statement kind, COMMIT,
  Python remainder);
* `--singles` single `Memory.assert_fact` calls of each kind (fresh and
  existing slots of `lives_in` and `likes`), with the statements they run;
* a few hundred as-of point queries, to check reads did not pay for writes.

`--order` runs stages in the given order: `batches` (or `batches:N`), `singles`,
`checkpoint` (an explicit CHECKPOINT, timed, with the WAL size before it) and
`sync` (`os.sync()`, to let the kernel write the fresh copy back first).

Every statement is timed twice: wall clock, and CPU seconds of the process
(`cpu ...` rows; Kùzu's worker threads included). A batch with 64 or more stored
slots reads their states on a second thread (palimpsest/_read_ahead.py) while
the first goes on: those seeks count as Kùzu time although they overlap the
rest, so Kùzu + Python then exceeds the batch's wall time. On a shared machine the wall
time mostly measures the wait for a free core, so compare CPU first.
It prints medians over batches (and over single calls) per statement, so two
runs (old code, new code; each on its own copy of the same source, made in
the same session) compare statement by statement. Nothing here asserts on time.
To A/B against another checkout, copy this file into its `bench/` and run it
there: the script imports the `palimpsest` of the tree it sits in.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core import BATCH, BATCH_TICK, Bench, fact_count, pct

from palimpsest import Memory


@contextmanager
def statement_timer(mem: Memory) -> Iterator[dict[str, list[float]]]:
    """Time every store call while inside: {statement label: [seconds, ...]}."""
    db = mem._store.db
    writer = db._writer
    spent: dict[str, list[float]] = {}
    perf, cpu = time.perf_counter, time.process_time

    def wrap(kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(cypher: str, /, *a: Any, **kw: Any) -> Any:
            t0, c0 = perf(), cpu()
            try:
                return fn(cypher, *a, **kw)
            finally:
                label = f"{kind} {' '.join(str(cypher).split())[:90]}"
                spent.setdefault(label, []).append(perf() - t0)
                # CPU seconds of the whole process (Kùzu's threads too): on a shared
                # box, wall time mostly measures the wait for a free core
                spent.setdefault("cpu " + label, []).append(cpu() - c0)

        return timed

    db.query = wrap("query", db.query)  # type: ignore[method-assign]
    db.load = wrap("load", db.load)  # type: ignore[method-assign]
    db.copy = wrap("copy", db.copy)  # type: ignore[method-assign]
    writer.raw = wrap("raw", writer.raw)  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        del db.query, db.load, db.copy, writer.raw


def _subjects(mem: Memory) -> int:
    """How many `person-N` subjects the bench generator has introduced."""
    rows = mem._store.db.query(
        "MATCH (e:Entity) WHERE starts_with(e.name, $p) RETURN max(e.name) AS m", p="person-"
    )
    top = rows[0]["m"]
    return 0 if top is None else int(top.split("-")[1]) + 1


def profile_batches(bench: Bench, n: int, size: int = BATCH) -> dict[str, Any]:
    per_batch: list[dict[str, Any]] = []
    for _ in range(n):
        items = bench.gen.batch(size)
        bench.clock.advance(BATCH_TICK)
        with statement_timer(bench.mem) as spent:
            t0, c0 = time.perf_counter(), time.process_time()
            bench.mem.assert_many(items)
            total, total_cpu = time.perf_counter() - t0, time.process_time() - c0
        in_db = sum(sum(v) for k, v in spent.items() if not k.startswith("cpu "))
        in_db_cpu = sum(sum(v) for k, v in spent.items() if k.startswith("cpu "))
        per_batch.append(
            {
                "total_ms": total * 1000,
                "per_s": len(items) / total,
                "kuzu_ms": in_db * 1000,
                "python_ms": (total - in_db) * 1000,
                "cpu_ms": total_cpu * 1000,
                "per_cpu_s": len(items) / total_cpu,
                "kuzu_cpu_ms": in_db_cpu * 1000,
                "python_cpu_ms": (total_cpu - in_db_cpu) * 1000,
                "statements": {k: (len(v), sum(v) * 1000) for k, v in spent.items()},
            }
        )
        print(
            f"  batch {len(per_batch)}: {total * 1000:,.0f} ms ({len(items) / total:,.0f}/s),"
            f" Kùzu {in_db * 1000:,.0f} + Python {(total - in_db) * 1000:,.0f};"
            f" CPU {total_cpu * 1000:,.0f} ms = Kùzu {in_db_cpu * 1000:,.0f}"
            f" + Python {(total_cpu - in_db_cpu) * 1000:,.0f}",
            flush=True,
        )
    labels = {k for b in per_batch for k in b["statements"]}
    rows = []
    for label in labels:
        ms = [b["statements"].get(label, (0, 0.0))[1] for b in per_batch]
        calls = [b["statements"].get(label, (0, 0.0))[0] for b in per_batch]
        rows.append({"what": label, "calls": statistics.median(calls), "ms": statistics.median(ms)})
    rows.sort(key=lambda r: -r["ms"])

    def med(key: str) -> float:
        return round(float(statistics.median(b[key] for b in per_batch)), 1)

    return {
        "batches": n,
        "total_ms_p50": med("total_ms"),
        "per_s_p50": med("per_s"),
        "kuzu_ms_p50": med("kuzu_ms"),
        "python_ms_p50": med("python_ms"),
        "cpu_ms_p50": med("cpu_ms"),
        "per_cpu_s_p50": med("per_cpu_s"),
        "kuzu_cpu_ms_p50": med("kuzu_cpu_ms"),
        "python_cpu_ms_p50": med("python_cpu_ms"),
        "per_s_each": [round(b["per_s"]) for b in per_batch],
        "statements_p50": rows,
    }


def profile_singles(bench: Bench) -> dict[str, Any]:
    """`Bench.single_asserts` (p50/p95 per kind), with each statement's median per call."""
    with statement_timer(bench.mem) as spent:
        c0 = time.perf_counter(), time.process_time()
        latency = bench.single_asserts()
        wall, cpu = time.perf_counter() - c0[0], time.process_time() - c0[1]
    rows = [
        {"what": k, "calls": len(v), "ms_p50": round(statistics.median(v) * 1000, 3)}
        for k, v in sorted(spent.items(), key=lambda kv: -sum(kv[1]))
    ]
    calls = 4 * (bench.singles + 10)  # kinds x (timed + warm-up), see Bench.single_asserts
    return {
        "latency": latency,
        "statements": rows,
        "cpu_ms_per_call": round(cpu * 1000 / calls, 3),
        "wall_ms_per_call": round(wall * 1000 / calls, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default="/tmp/ab1m", help="memory directory to copy (never opened)")
    ap.add_argument("--work", default=None, help="scratch parent directory (default: temp)")
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--batch", type=int, default=BATCH, help="assertions per assert_many call")
    ap.add_argument("--singles", type=int, default=100, help="timed single asserts per kind")
    ap.add_argument("--queries", type=int, default=300, help="timed point queries")
    ap.add_argument(
        "--order",
        default="batches,singles",
        help="stages, in order: batches[:N], singles, checkpoint, sync",
    )
    ap.add_argument("--embedder", choices=("minilm", "none"), default="minilm")
    ap.add_argument("--keep", action="store_true", help="keep the copy")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="write-profile-", dir=args.work))
    t0 = time.perf_counter()
    shutil.copytree(args.src, root / "mem")
    print(f"copied {args.src} in {time.perf_counter() - t0:.1f} s", flush=True)
    out: dict[str, Any] = {"src": args.src, "loadavg_start": os.getloadavg()}
    try:
        embedder = None if args.embedder == "none" else args.embedder
        bench = Bench(root, queries=args.queries, singles=args.singles, embedder=embedder)
        mem = bench.mem
        # continue the data mix after what is stored, at transaction times after it
        bench.gen.subjects = _subjects(mem)
        assert mem._ctx.last_k is not None
        bench.clock.now = mem._ctx.last_k + timedelta(minutes=1)
        bench.versions = fact_count(mem)
        print(f"{bench.versions:,} versions, {bench.gen.subjects:,} subjects", flush=True)
        for stage in args.order.split(","):
            stage, _, count = stage.partition(":")  # "batches:2" overrides --batches
            if stage == "batches" and (int(count) if count else args.batches):
                bulk = profile_batches(bench, int(count) if count else args.batches, args.batch)
                out.setdefault("bulk_runs", []).append(bulk)
                out["bulk"] = bulk
            elif stage == "singles" and args.singles:
                out["single"] = profile_singles(bench)
            elif stage == "sync":  # let the kernel finish writing back the copy first
                t1 = time.perf_counter()
                os.sync()
                out.setdefault("sync_s", []).append(round(time.perf_counter() - t1, 3))
            elif stage == "checkpoint":
                t1 = time.perf_counter()
                wal = _wal_bytes(root / "mem")
                mem._store.db.checkpoint()
                out.setdefault("checkpoint_s", []).append(
                    {"s": round(time.perf_counter() - t1, 3), "wal_mib": round(wal / 2**20, 1)}
                )
        if args.queries:
            out["point"] = pct(_point_latencies(bench))
    finally:
        bench.mem.close()
        out["loadavg_end"] = os.getloadavg()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    report(out)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=str))
    return 0


def _wal_bytes(directory: Path) -> int:
    return sum(p.stat().st_size for p in directory.glob("*.wal"))


def _point_latencies(bench: Bench) -> list[float]:
    keys = bench._query_keys(300 + bench.queries, seed=12)
    for s, p, v, k in keys[:300]:
        bench.mem.facts(s, p, valid_at=v, known_at=k)
    lat = []
    for s, p, v, k in keys[300:]:
        t0 = time.perf_counter()
        bench.mem.facts(s, p, valid_at=v, known_at=k)
        lat.append(time.perf_counter() - t0)
    return lat


def _print_statements(rows: list[dict[str, Any]], key: str, most: int) -> None:
    """The costliest statements by wall time, then by CPU time (`cpu ...` rows)."""
    for cpu in (False, True):
        for r in [r for r in rows if r["what"].startswith("cpu ") == cpu][:most]:
            print(f"  {r[key]:8.3f} {key}  x{r['calls']:<6} {r['what']}")


def report(out: dict[str, Any]) -> None:
    bulk = out.get("bulk")
    if bulk:
        print(
            f"\nbulk: {bulk['batches']} batches, p50 {bulk['total_ms_p50']:,.0f} ms"
            f" ({bulk['per_s_p50']:,.0f} assertions/s) = Kùzu {bulk['kuzu_ms_p50']:,.0f}"
            f" + Python {bulk['python_ms_p50']:,.0f}; each {bulk['per_s_each']}"
        )
        print(
            f"  CPU p50 {bulk['cpu_ms_p50']:,.0f} ms ({bulk['per_cpu_s_p50']:,.0f} assertions"
            f" per CPU-second) = Kùzu {bulk['kuzu_cpu_ms_p50']:,.0f}"
            f" + Python {bulk['python_cpu_ms_p50']:,.0f}"
        )
        _print_statements(bulk["statements_p50"], "ms", 12)
    single = out.get("single")
    if single:
        print("\nsingle assert_fact p50 / p95 ms:")
        for k, v in single["latency"].items():
            print(f"  {k:20} {v['p50_ms']:.3f} / {v['p95_ms']:.3f}")
        print(
            f"  per call: CPU {single['cpu_ms_per_call']:.3f} ms,"
            f" wall {single['wall_ms_per_call']:.3f} ms"
        )
        _print_statements(single["statements"], "ms_p50", 8)
    if "sync_s" in out:
        print(f"\nos.sync(): {out['sync_s']} s")
    if "checkpoint_s" in out:
        print(f"\nexplicit CHECKPOINT: {out['checkpoint_s']} s")
    if "point" in out:
        p = out["point"]
        print(f"\npoint mem.facts p50 / p95: {p['p50_ms']:.3f} / {p['p95_ms']:.3f} ms")
    print(f"loadavg start {out['loadavg_start']}, end {out['loadavg_end']}")


if __name__ == "__main__":
    raise SystemExit(main())
