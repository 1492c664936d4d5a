"""The consolidation bench's memory with every entity name embedded: a full and a no-op run.

>>> # python bench/consolidate.py                        # builds the cached memory once
>>> # python bench/consolidate_names.py                  # MiniLM names, then full + no-op
>>> # python bench/consolidate_names.py --embedder hashing   # the fake embedder's vectors

`bench/consolidate.py` builds its memory without an embedder, so its merge step
compares no name vectors. This copies that cached memory, embeds and stores every
entity name (timed apart), then times `consolidate()` twice, step by step, so the
all-names comparison of the merge step is measured at 100k episodes / 1M versions.
Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from core import K0, Clock

from palimpsest import Memory
from palimpsest.recall import HashingEmbedder, OnnxEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")
_CACHE = Path(tempfile.gettempdir()) / "palimpsest-bench" / "consolidate-100000-1000000"


def _loadavg() -> list[str]:
    return Path("/proc/loadavg").read_text().split()[:3]


def run(src: Path, embedder: Any, batch: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="consolidate-names-"))
    try:
        shutil.copytree(src, work / "mem")
        out: dict[str, Any] = {"loadavg_start": _loadavg()}
        clock = Clock(K0 + timedelta(days=400, hours=12, minutes=34))
        mem = Memory.open(work / "mem", clock=clock, extractor=None, embedder=embedder)
        try:
            t0 = time.perf_counter()
            es = mem._embed.es
            todo = es.entities_without_names(mem.namespace)
            for start in range(0, len(todo), batch):
                named = todo[start : start + batch]
                vecs = embedder.embed([name for _, name in named])
                with mem._store.write():
                    es.create_names([i for i, _ in named], [mem.namespace] * len(named), vecs)
            out["names"], out["names_s"] = len(todo), round(time.perf_counter() - t0, 2)
            steps: dict[str, float] = {}
            mark: list[Any] = [time.perf_counter(), None]

            def progress(step: str) -> None:
                now = time.perf_counter()
                if mark[1] is not None:
                    steps[mark[1]] = round(now - mark[0], 2)
                mark[:] = [now, step]

            t0 = time.perf_counter()
            report = mem.consolidate(progress=progress)
            out["full_s"] = round(time.perf_counter() - t0, 2)
            steps[mark[1]] = round(time.perf_counter() - mark[0], 2)
            out["steps"], out["full_counts"] = steps, report.counts
            clock.advance(timedelta(seconds=1))
            t0 = time.perf_counter()
            again = mem.consolidate()
            out["noop_s"] = round(time.perf_counter() - t0, 3)
            out["noop_counts"] = again.counts
        finally:
            mem.close()
        out["loadavg_end"] = _loadavg()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=_CACHE, help="bench/consolidate.py's memory")
    ap.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not args.cache.exists():
        sys.exit(f"no cached memory at {args.cache}: run bench/consolidate.py first")
    if args.embedder == "minilm":
        embedder: Any = OnnxEmbedder()  # the default MiniLM
        batch = 1024
    else:
        embedder, batch = HashingEmbedder(), 4096
    out = {"embedder": args.embedder, **run(args.cache, embedder, batch)}
    text = json.dumps(out, indent=1)
    print(text)
    if args.out is not None:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
