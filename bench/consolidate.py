"""Consolidation benchmark: a full run and an incremental no-op run on a large memory.

>>> # python bench/consolidate.py                         # 100k episodes, 1M fact versions
>>> # python bench/consolidate.py --episodes 10000 --versions 100000   # a development size

The memory is built once through the public bulk paths and cached on disk
(`--cache`, default $TMPDIR/palimpsest-bench/consolidate-<episodes>-<versions>/; several
GB at full size, so not in the repository), then copied
for each measurement so every run starts from the same state:

* facts: `assert_many` batches from bench/core.py's deterministic generator
  (5 assertions per subject plus updates, ~10 versions per subject) until the
  store holds M fact versions; plus work for every step — 50 pairs of entity
  names that differ only in case and punctuation (merges), 100 level conflicts
  on `works_at` between tool sources (contested), 100 user corrections on `age`
  (reconciled), 100 quarantined tool claims each corroborated from a second
  session (promoted);
* episodes: `remember_many` with extraction off, N turns over N/20 sessions, 2%
  repeated verbatim in another session (dedupe by text), 1% repeated with one
  word added (dedupe by episode vectors), a third of low importance (decay: the
  run's clock is 400 days after the build); 20 pairs of names spelled apart
  ("Harbour"/"Harbor": merged by name vectors).

By default (`--embedder minilm`, what users get) the memory is built and
consolidated with MiniLM loaded: episodes get their vectors at `remember`, names
and statements from the embedding worker (drained before the build ends), so the
vector near-copy dedupe and the name-vector merge run. `--embedder none` is the
configuration runs before issue 18 measured (no vectors: neither runs), labelled
as such; each has its own cache.

Measured: `Memory.consolidate()` on the fresh copy (full: no watermark yet),
then again right after (incremental: nothing changed, so nothing to do).
Targets on the 2-core dev box: full <= 120 s, no-op <= 5 s. Also reported: the
load average, the report counts, and a baseline (opening the memory and
one filtered scan of every fact version) measured in the same process, for ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core import BATCH, K0, Clock, Generator, fact_count

from palimpsest import Memory

HERE = Path(__file__).resolve().parent
EPISODE_BATCH = 5_000


def _embedder(name: str) -> Any:
    if name == "none":
        return None
    from palimpsest.recall import OnnxEmbedder

    emb = OnnxEmbedder()  # the default MiniLM
    emb.embed(["load the model"])  # loaded, as in a process that has recalled
    return emb


def build(path: Path, episodes: int, versions: int, embedder: str) -> dict[str, Any]:
    clock = Clock(K0)
    rng = random.Random(7)
    t0 = time.perf_counter()
    emb = _embedder(embedder)
    with Memory.open(path, clock=clock, extractor=None, embedder=emb) as mem:
        gen = Generator()
        while (have := fact_count(mem)) < versions:
            clock.advance(timedelta(minutes=10))
            # calls of the import's size, or what reaching `versions` still needs
            mem.assert_many(gen.batch(max(100, min(BATCH, int((versions - have) / 1.4) + 1))))
            print(f"  .. {fact_count(mem):,} versions", flush=True)
        clock.advance(timedelta(minutes=10))
        mem.assert_many(_step_work(rng))
        mem.assert_many(_spelled_apart())
        for n, (ep, ev) in enumerate(_corroborations(mem, rng)):
            mem.assert_fact(
                f"person-{n:07d}", "likes", "topic-corroborated", author_kind="tool",
                valid_from=None, evidence=[ep, ev],
            )  # fmt: skip
        done = 0
        while done < episodes:
            clock.advance(timedelta(minutes=10))
            n = min(EPISODE_BATCH, episodes - done)
            mem.remember_many([_turn(done + i, rng) for i in range(n)])
            done += n
            print(f"  .. {done:,} episodes", flush=True)
        t_drain = time.perf_counter()
        mem._embed.drain()  # every name and statement vector stored, as after an idle while
        drain_s = time.perf_counter() - t_drain
        worker = mem._embed.status()
        stats = mem.stats()
    return {
        "seconds": round(time.perf_counter() - t0, 1),
        "episodes": stats.episodes,
        "versions": stats.versions,
        "assertions": stats.assertions,
        "entities": stats.entities,
        "embedder": embedder,
        "worker_drain_at_end_s": round(drain_s, 1),
        "worker": worker,
    }


HARBOURS = ("Harbour", "Harbor")


def _spelled_apart() -> list[dict[str, Any]]:
    """20 pairs of names one spelling apart (different keys): only name vectors can
    tell the merge step they are one."""
    items = []
    for i in range(20):
        for spelling in HARBOURS:
            name = f"Blue {spelling} Bakery {i + 1}"
            items.append({"subject": name, "predicate": "located_in", "object": f"town-{i}"})
    return items


def _step_work(rng: random.Random) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    start = datetime(2024, 1, 1, tzinfo=UTC)
    for i in range(50):  # merges: "Person 0000042." is "person-0000042"
        items.append({"subject": f"Person {i:07d}.", "predicate": "likes", "object": "chess"})
    for i in range(100, 200):  # level conflicts between two tools
        for company in ("company-a", "company-b"):
            items.append(
                {"subject": f"person-{i:07d}", "predicate": "works_at", "object": company,
                 "valid_from": start, "author_kind": "tool", "quarantined": False}
            )  # fmt: skip
    for i in range(200, 300):  # the user correcting themself
        for age in ("40", "41"):
            items.append(
                {"subject": f"person-{i:07d}", "predicate": "age", "object": age,
                 "valid_from": start}
            )  # fmt: skip
    return items


def _corroborations(mem: Memory, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for i in range(100):
        a, b = (
            mem.remember(f"tool result {i}/{s}: person {i} likes the topic", speaker="search",
                         author_kind="tool", session=f"tool-{i}-{s}").id
            for s in ("x", "y")
        )  # fmt: skip
        out.append((a, b))
    return out


def _turn(i: int, rng: random.Random) -> dict[str, Any]:
    session = f"s{i // 20}"
    x = rng.random()
    if x < 0.02 and i > 100:  # a verbatim repeat in another session
        j = rng.randrange(i - 100, i)
        text = f"turn {j}: something worth remembering about topic {j % 977} and more"
        session = f"s{i // 20}-again"
    elif x < 0.03 and i > 100:  # a repeat with a word added: only vectors see it
        j = rng.randrange(i - 100, i)
        text = f"turn {j}: something worth remembering about topic {j % 977} and more too"
        session = f"s{i // 20}-near"
    else:
        text = f"turn {i}: something worth remembering about topic {i % 977} and more"
    return {
        "text": text,
        "speaker": "user" if i % 2 else "assistant",
        "author_kind": "user" if i % 2 else "agent",
        "session": session,
        "importance": 0.2 if rng.random() < 1 / 3 else 0.7,
    }


def measure(cache: Path, work: Path, embedder: str) -> dict[str, Any]:
    if work.exists():
        shutil.rmtree(work)
    t0 = time.perf_counter()
    shutil.copytree(cache, work)
    copy_s = time.perf_counter() - t0
    run_clock = Clock(K0 + timedelta(days=400, hours=12, minutes=34))  # off midnight
    t0 = time.perf_counter()
    emb = _embedder(embedder)
    mem = Memory.open(work, clock=run_clock, extractor=None, embedder=emb)
    open_s = time.perf_counter() - t0
    base_versions = fact_count(mem)
    t0 = time.perf_counter()
    # a baseline read of similar shape to a no-op run: one filtered scan of every version
    mem.facts(predicate="job_title", limit=1000)
    baseline_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    full = mem.consolidate()
    full_s = time.perf_counter() - t0
    run_clock.advance(timedelta(seconds=1))
    t0 = time.perf_counter()
    noop = mem.consolidate()
    noop_s = time.perf_counter() - t0
    mem.close()
    return {
        "copy_s": round(copy_s, 2),
        "open_s": round(open_s, 2),
        "baseline_scan_versions_s": round(baseline_s, 3),
        "versions": base_versions,
        "full_s": round(full_s, 2),
        "full_counts": full.counts,
        # what only vectors found: near copies by episode cosine, names by name cosine
        "dedupe_by_vectors": sum("cosine" in c.reason for c in full.changes),
        "merged_by_name_vectors": sum(
            c.action == "merged" and "similar" in c.reason for c in full.changes
        ),
        "noop_s": round(noop_s, 3),
        "noop_summary": noop.summary,
        "noop_ratio_to_baseline": round(noop_s / max(baseline_s, 1e-6), 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100_000)
    ap.add_argument("--versions", type=int, default=1_000_000)
    ap.add_argument("--cache", type=Path, default=None, help="where the built memory is kept")
    ap.add_argument("--rebuild", action="store_true", help="build the memory again")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--embedder",
        choices=("minilm", "none"),
        default="minilm",
        help="'none': no vectors (no vector dedupe, no name-vector merge), as before issue 18",
    )
    args = ap.parse_args(argv)
    name = f"consolidate-{args.episodes}-{args.versions}-{args.embedder}"
    cache = args.cache or Path(tempfile.gettempdir()) / "palimpsest-bench" / name
    built: dict[str, Any] | None = None
    if args.rebuild and cache.exists():
        shutil.rmtree(cache)
    if not cache.exists():
        print(f"building {cache} ...", flush=True)
        tmp = cache.with_name(cache.name + ".partial")
        tmp.parent.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        built = build(tmp, args.episodes, args.versions, args.embedder)
        tmp.rename(cache)
    with tempfile.TemporaryDirectory(prefix="palimpsest-bench-") as d:
        result = measure(cache, Path(d) / "mem", args.embedder)
    result.update(
        episodes=args.episodes,
        target_versions=args.versions,
        embedder=args.embedder,
        built=built,
        loadavg=Path("/proc/loadavg").read_text().split()[:3],
        cpus=os.cpu_count(),
        python=platform.python_version(),
        when=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    print(json.dumps(result, indent=2))
    print(
        f"full run {result['full_s']} s (target 120), no-op {result['noop_s']} s (target 5);"
        f" loadavg {' '.join(result['loadavg'])}"
    )
    out = args.out or HERE / "results" / f"consolidate-{datetime.now(UTC):%Y%m%d-%H%M%S}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
