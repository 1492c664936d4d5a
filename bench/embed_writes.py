"""What write-time embedding of entity names and statements costs the fact write path.

>>> # python bench/embed_writes.py                 # 40 single asserts, 4 batches of 500
>>> # python bench/embed_writes.py --singles 100 --batches 6 --batch 1000

Each write names a new subject (a new entity, a new statement: the most there is to
embed), in a fresh memory opened twice: with no embedder and with the real MiniLM.
Reported: median latency of one `assert_fact`, median throughput of `assert_many`,
and the ratio of each (MiniLM / none), with the load average, all from one process.
Vectors are embedded by a background worker (`recall/embed_worker.py`): also reported are
how long after the writes the last vector is stored (the worker's lag), the rates
counted until then, and how many notes a full queue left to `reindex`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from palimpsest import Memory

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _item(i: int, tag: str) -> dict[str, Any]:
    return {"subject": f"Person {tag} {i}", "predicate": "likes", "object": f"hobby {tag} {i}"}


def measure(embedder: Any, singles: int, batches: int, batch: int) -> dict[str, float]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(Path(tmp) / "m", extractor=None, embedder=embedder) as mem,
    ):
        mem.assert_fact("warm", "likes", "up")  # model load, statement caches
        mem._embed.drain()
        lat = []
        t_singles = time.perf_counter()
        for i in range(singles):
            t0 = time.perf_counter()
            mem.assert_fact(**_item(i, "s"))
            lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        mem._embed.drain()  # the worker's lag behind the writes
        singles_lag = time.perf_counter() - t0
        singles_total = time.perf_counter() - t_singles
        rates = []
        t_batches = time.perf_counter()
        for b in range(batches):
            items = [_item(b * batch + i, "b") for i in range(batch)]
            t0 = time.perf_counter()
            mem.assert_many(items)
            rates.append(batch / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        mem._embed.drain()
        batches_lag = time.perf_counter() - t0
        batches_total = time.perf_counter() - t_batches
    return {
        "assert_fact_ms_p50": 1000 * statistics.median(lat),
        "assert_fact_ms_p95": 1000 * sorted(lat)[int(0.95 * (len(lat) - 1))],
        "assert_many_per_s_p50": statistics.median(rates),
        # until every vector is stored: what a reader of the vectors waits for
        "singles_vectors_lag_s": singles_lag,
        "singles_with_vectors_per_s": singles / singles_total,
        "batches_vectors_lag_s": batches_lag,
        "batches_with_vectors_per_s": batches * batch / batches_total,
        **{f"worker_{k}": float(v) for k, v in mem._embed.status().items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--singles", type=int, default=40)
    ap.add_argument("--batches", type=int, default=4)
    ap.add_argument("--batch", type=int, default=500)
    args = ap.parse_args()
    from palimpsest.recall import OnnxEmbedder

    load = Path("/proc/loadavg").read_text().split()[:3]
    none = measure(None, args.singles, args.batches, args.batch)
    minilm = measure(OnnxEmbedder(), args.singles, args.batches, args.batch)
    out = {
        "args": vars(args),
        "loadavg_before": load,
        "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
        "no_embedder": none,
        "minilm": minilm,
        "ratio_assert_fact_latency": minilm["assert_fact_ms_p50"] / none["assert_fact_ms_p50"],
        "ratio_assert_many_throughput": minilm["assert_many_per_s_p50"]
        / none["assert_many_per_s_p50"],
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
