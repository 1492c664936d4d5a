"""Recall latency at N episodes, and the time to load the vector cache after open.

    python bench/recall_latency.py --episodes 10000 [--queries 200] [--no-save]
    python bench/recall_latency.py --episodes 100000 --stages 10000,25000,50000
    python bench/recall_latency.py --episodes 10000 --vector-threshold 5000   # HNSW path
    python bench/recall_latency.py --episodes 10000 --build composed    # before issue 18

Builds once, cached outside the repository (`--cache`, default
~/.cache/palimpsest-bench/recall-<N>-<build>), a memory of N persona-style episodes
(the extraction gold sentences with names, places, sessions and a note number
varied). The default build (`real`) is what users get: `remember_many` with the
spaCy extractor on (facts for the fact and graph-hop scoring) and every episode
text embedded by MiniLM, the worker's name and statement vectors drained before the
memory is kept. `--stages` keeps a copy at each smaller size on the way (so a build
that cannot finish still leaves the largest size reached). `--build composed` is the
configuration measured before issue 18, labelled: words only, extraction off, then
vectors through `reindex(re_embed=True)` with `ComposedEmbedder` (MiniLM vectors
composed, see there). Then opens it at the defaults and times: open, the cache load
(episode table, vector
matrix or the HNSW generation above the threshold, BM25 postings), the model load (onnxruntime +
the int8 MiniLM), the first recall, and p50/p95 over distinct random questions (embedded
by the real model) after it, in wall time and in the recalling thread's CPU time
(the box is shared: load inflates wall time); then `--turns` rounds of an agent's loop,
remember one turn (extraction on) and recall, timing both (wall, and the process's
CPU time) with the recall after each write. All of
it on a copy of the cache (recall writes uses; the loop writes turns). Writes
bench/results/recall-latency-<N>-<path>-<date>[-<tag>].json. Numbers only; nothing
is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from palimpsest import Memory  # noqa: E402
from palimpsest.recall import OnnxEmbedder  # noqa: E402

GOLD = ROOT / "tests" / "data" / "extraction_gold.jsonl"
CACHE = Path.home() / ".cache" / "palimpsest-bench"
RESULTS = ROOT / "bench" / "results"
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
    "did Mira go to Oslo?",
    "what happened in Seoul last spring?",
    "tell me about note 4711",
    "who plays the guitar?",
]
BATCH = 5000
REAL_BATCH = 1000  # episodes per remember_many in the default build


def texts(n: int, rng: random.Random) -> list[str]:
    base = [json.loads(x)["text"] for x in GOLD.read_text().splitlines() if x.strip()]
    out = []
    for i in range(n):
        t = base[i % len(base)]
        out.append(f"{t} ({rng.choice(NAMES)} in {rng.choice(PLACES)}, note {i})")
    return out


class ComposedEmbedder:
    """Bench-only: MiniLM-derived vectors without embedding every text.

    Real all-MiniLM-L6-v2 vectors of the gold sentences and of each name and
    place, composed per episode (sentence + 0.35 name + 0.35 place + seeded
    noise, normalised; a two-line context text averages its lines), under the
    real model's identity. At 100k episodes that is 438 model calls instead of
    200k, which on 2 shared cores is minutes instead of hours. Queries at
    measurement time are embedded by the real model.
    """

    _LINE = re.compile(r"^(.*) \((\w+) in (\w+), note (\d+)\)$")

    def __init__(self, real: OnnxEmbedder) -> None:
        self.real = real
        self.name = real.name
        self.dim = real.dim
        self._vec: dict[str, Any] = {}

    def identity(self) -> str:
        return self.real.identity()

    def _known(self, keys: list[str]) -> None:
        todo = sorted({k for k in keys if k not in self._vec})
        if todo:
            for k, v in zip(todo, self.real.embed(todo), strict=True):
                self._vec[k] = v

    def embed(self, texts: Any) -> Any:
        parsed = [[self._LINE.match(line) for line in t.split("\n")] for t in texts]
        keys = [g for ms in parsed for m in ms if m for g in m.groups()[:3]]
        self._known(keys + [t for t, ms in zip(texts, parsed, strict=True) if not all(ms)])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, (t, ms) in enumerate(zip(texts, parsed, strict=True)):
            if not all(ms):
                out[row] = self._vec[t]
                continue
            for m in ms:
                assert m is not None
                base, who, where, note = m.groups()
                noise = np.random.default_rng(int(note)).normal(0, 0.02, self.dim)
                v = self._vec[base] + 0.35 * self._vec[who] + 0.35 * self._vec[where] + noise
                out[row] += v / np.linalg.norm(v)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


T0 = datetime(2023, 1, 1, tzinfo=UTC)


def _turns(all_texts: list[str], start: int, size: int) -> list[dict[str, Any]]:
    """One `remember_many` batch: a minute apart, 20 turns a session."""
    return [
        {
            "text": t,
            "occurred_at": T0 + timedelta(minutes=start + i),
            "session": f"s{(start + i) // 20}",
        }
        for i, t in enumerate(all_texts[start : start + size])
    ]


def build_real(path: Path, n: int, stages: list[int]) -> float:
    """The default build: N episodes through `remember_many` with extraction on and
    MiniLM loaded (episode vectors at remember, names and statements by the worker,
    drained before the memory is kept). At each of `stages` the memory is closed and
    copied to its own cache; directories are renamed into place only when complete."""
    rng = random.Random(7)
    tmp = path.with_name(path.name + ".building")
    if tmp.exists():
        shutil.rmtree(tmp)
    all_texts = texts(n, rng)
    a = time.perf_counter()
    mem = Memory.open(tmp)
    try:
        for start in range(0, n, REAL_BATCH):
            mem.remember_many(_turns(all_texts, start, REAL_BATCH))
            done = min(n, start + REAL_BATCH)
            print(f"  stored {done:,}/{n:,} ({time.perf_counter() - a:.0f} s)", file=sys.stderr)
            if done in stages or done == n:
                mem._embed.drain()
                print(f"  drained at {done:,} ({time.perf_counter() - a:.0f} s)", file=sys.stderr)
                mem.close()
                if done != n:
                    at = path.with_name(path.name.replace(f"-{n}-", f"-{done}-"))
                    if not at.exists():
                        shutil.copytree(tmp, at.with_name(at.name + ".building"))
                        at.with_name(at.name + ".building").rename(at)
                        (at / "built_s").write_text(f"{time.perf_counter() - a:.1f}\n")
                    mem = Memory.open(tmp)
    finally:
        mem.close()
    tmp.rename(path)
    return time.perf_counter() - a


def build_composed(path: Path, n: int) -> float:
    """Write N episodes through remember_many (words only), then their vectors through
    `reindex(re_embed=True)`; the directory is renamed into place only when complete,
    so an interrupted build is never mistaken for a cache."""
    rng = random.Random(7)
    tmp = path.with_name(path.name + ".building")
    if tmp.exists():
        shutil.rmtree(tmp)
    a = time.perf_counter()
    with Memory.open(tmp, extractor=None, embedder=None) as mem:
        all_texts = texts(n, rng)
        for start in range(0, n, BATCH):
            mem.remember_many(_turns(all_texts, start, BATCH))
            done = min(n, start + BATCH)
            print(f"  stored {done:,}/{n:,} ({time.perf_counter() - a:.0f} s)", file=sys.stderr)
    composed = ComposedEmbedder(OnnxEmbedder())
    with Memory.open(tmp, extractor=None, embedder=composed) as mem:  # type: ignore[arg-type]
        mem.reindex(re_embed=True, batch_size=BATCH)
    print(f"  vectors done ({time.perf_counter() - a:.0f} s)", file=sys.stderr)
    tmp.rename(path)
    return time.perf_counter() - a


def questions(n: int, rng: random.Random) -> list[str]:
    """Distinct questions, so the embedder's query cache never answers for the model."""
    out: dict[str, None] = {}
    while len(out) < n:
        q = rng.choice(QUESTIONS)
        extra = rng.choice(
            [f" ({rng.choice(NAMES)})", f" in {rng.choice(PLACES)}", f" note {rng.randrange(n)}"]
        )
        out[q.rstrip("?") + extra + "?"] = None
    return list(out)


def ms(x: float) -> float:
    return round(x * 1e3, 2)


def pcts(xs: list[float]) -> tuple[float, float]:
    s = sorted(xs)
    return statistics.median(s), s[int(0.95 * (len(s) - 1))]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--vector-threshold", type=int, default=None)
    ap.add_argument("--rebuild", action="store_true", help="ignore the cached memory")
    ap.add_argument("--no-save", action="store_true", help="print only; write no result file")
    ap.add_argument("--tag", default="", help="suffix of the result file name")
    ap.add_argument(
        "--build",
        choices=("real", "composed"),
        default="real",
        help="'composed': extraction off, composed vectors (the build before issue 18)",
    )
    ap.add_argument("--stages", default="", help="smaller sizes to keep on the way: 10000,50000")
    ap.add_argument("--cache", type=Path, default=CACHE, help="where built memories are kept")
    ap.add_argument("--build-only", action="store_true", help="build the memory, measure nothing")
    ap.add_argument(
        "--turns",
        type=int,
        default=40,
        help="then this many remember + recall rounds (an agent's loop), on a copy",
    )
    args = ap.parse_args()
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"recall-{args.episodes}-{args.build}"
    build_s = None
    if args.rebuild and path.exists():
        shutil.rmtree(path)
    if not path.exists():
        if args.build == "real":
            stages = [int(x) for x in args.stages.split(",") if x]
            build_s = build_real(path, args.episodes, stages)
        else:
            build_s = build_composed(path, args.episodes)
    elif (path / "built_s").exists():
        build_s = float((path / "built_s").read_text())
    if args.build_only:
        print(f"built {path} in {build_s} s", file=sys.stderr)
        return
    opts = {} if args.vector_threshold is None else {"vector_threshold": args.vector_threshold}
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="palimpsest-bench-", dir=args.cache) as d:
        # recall writes (uses), the loop remembers: measure a copy, keep the cache as built
        work = Path(d) / path.name
        shutil.copytree(path, work)
        out = measure(work, args, opts, rng, build_s)
    print(json.dumps(out, indent=2))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        day = datetime.now(UTC).date().isoformat()
        tag = f"-{args.tag}" if args.tag else ""
        name = f"recall-latency-{args.episodes}-{out['vector_path']}-{day}{tag}.json"
        (RESULTS / name).write_text(json.dumps(out, indent=2) + "\n")


def measure(
    path: Path, args: argparse.Namespace, opts: dict[str, Any], rng: random.Random,
    build_s: float | None,
) -> dict[str, Any]:  # fmt: skip
    a = time.perf_counter()
    with Memory.open(path, **opts) as mem:
        open_s = time.perf_counter() - a
        a, c = time.perf_counter(), time.thread_time()
        mem.warm_recall()
        load_s, load_cpu = time.perf_counter() - a, time.thread_time() - c
        a = time.perf_counter()
        assert mem._index.embedder is not None
        mem._index.embedder.embed(["warm up"])  # the model, apart from the cache
        model_s = time.perf_counter() - a
        a = time.perf_counter()
        mem.recall(QUESTIONS[0], k=5)
        first = time.perf_counter() - a
        lat, cpu = [], []
        for q in questions(args.queries, rng):
            a, c = time.perf_counter(), time.thread_time()
            mem.recall(q, k=5)
            lat.append(time.perf_counter() - a)
            cpu.append(time.thread_time() - c)
        # an agent's loop: each turn is remembered (extraction on, its facts often about
        # "user", whose versions recall keeps), then a question is asked
        # CPU as the process's (every thread: Kùzu's, onnxruntime's, the embedding
        # worker's), which the shared box's load does not inflate as it does wall time
        wrote, after, wrote_cpu, after_cpu = [], [], [], []
        live = texts(args.turns, random.Random(13))
        for i, q in enumerate(questions(args.turns, random.Random(17))):
            a, c = time.perf_counter(), time.process_time()
            mem.remember(live[i], occurred_at=T0 + timedelta(minutes=args.episodes + i),
                         session="live")  # fmt: skip
            wrote.append(time.perf_counter() - a)
            wrote_cpu.append(time.process_time() - c)
            a, c = time.perf_counter(), time.process_time()
            mem.recall(q, k=5)
            after.append(time.perf_counter() - a)
            after_cpu.append(time.process_time() - c)
        vector_path = mem.vector_index_kind()
        stats = mem.stats()
    p50, p95 = pcts(lat)
    cpu50, cpu95 = pcts(cpu)
    loop = {}
    if after:
        (w50, w95), (r50, r95) = pcts(wrote), pcts(after)
        loop = {
            "turns": args.turns,
            "remember_p50_ms": ms(w50),
            "remember_p95_ms": ms(w95),
            "recall_after_remember_p50_ms": ms(r50),
            "recall_after_remember_p95_ms": ms(r95),
            "recall_after_remember_max_ms": ms(max(after)),
            "remember_cpu_p50_ms": ms(statistics.median(wrote_cpu)),
            "recall_after_remember_cpu_p50_ms": ms(statistics.median(after_cpu)),
        }
    load = Path("/proc/loadavg").read_text().split()[:3]
    out = {
        "bench": "recall_latency",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "episodes": args.episodes,
        "build": args.build,
        "assertions": stats.assertions,
        "entities": stats.entities,
        "queries": args.queries,
        "k": 5,
        "vector_path": vector_path,
        "build_s": None if build_s is None else round(build_s, 1),
        "open_ms": ms(open_s),
        "cache_load_ms": ms(load_s),
        "cache_load_cpu_ms": ms(load_cpu),
        "model_load_ms": ms(model_s),
        "first_recall_ms": ms(first),
        "p50_ms": ms(p50),
        "p95_ms": ms(p95),
        "max_ms": ms(max(lat)),
        # this thread's CPU time per recall: what a quiet machine would wait for, less
        # the cosine matvec's second thread (load on the shared box inflates wall time)
        "cpu_p50_ms": ms(cpu50),
        "cpu_p95_ms": ms(cpu95),
        **loop,
        "loadavg": [float(x) for x in load],
        "cpus": os.cpu_count(),
    }
    return out


if __name__ == "__main__":
    main()
