"""The default int8 MiniLM against the fp32 one: the same vectors? how fast?

>>> # python bench/embedders.py                 # 1,000 LoCoMo dev turns (needs the fp32 extra)
>>> # python bench/embedders.py --turns 300 --rounds 5

The first `--turns` turns of LoCoMo's development conversations ("Speaker: text",
an image by its caption, as `locomo_data.turn_text` renders them) are embedded by
`OnnxEmbedder` (all-MiniLM-L6-v2, int8 weights, onnxruntime: the default) and by
`SentenceTransformerEmbedder` (the fp32 model on torch, the `fp32` extra).
Agreement: the cosine of each turn's two vectors (mean, min, 1st percentile) and the
overlap of each turn's 10 nearest neighbours among all the turns under each model.
Speed, both models loaded first and their runs alternated (`--rounds`): all the
turns in one `embed` call (each model batches as it ships), and 50 turns one at a
time (a question's path, through each embedder's small-text cache: distinct texts).
Writes bench/results/embedders-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_data as lc

from palimpsest.recall import OnnxEmbedder, SentenceTransformerEmbedder


def _neighbours(v: np.ndarray, k: int = 10) -> np.ndarray:
    sims = v @ v.T
    np.fill_diagonal(sims, -2.0)
    return np.argsort(-sims, axis=1)[:, :k]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    convs, _, _ = lc.load_locomo()
    turns = [lc.turn_text(t) for c in convs if c.conv_id in lc.DEV for t in c.turns]
    texts = turns[: args.turns]
    int8, fp32 = OnnxEmbedder(), SentenceTransformerEmbedder()
    a, b = int8.embed(texts), fp32.embed(texts)
    cos = np.sum(a * b, axis=1)
    na, nb = _neighbours(a), _neighbours(b)
    overlap = float(np.mean([len(set(x) & set(y)) / 10 for x, y in zip(na, nb, strict=True)]))
    report: dict[str, Any] = {
        "turns": len(texts),
        "models": {"int8": int8.identity(), "fp32": fp32.identity()},
        "cosine": {
            "mean": float(cos.mean()),
            "min": float(cos.min()),
            "p01": float(np.percentile(cos, 1)),
        },
        "top10_overlap": overlap,
        "loadavg_start": Path("/proc/loadavg").read_text().split()[:3],
    }
    print(
        f"{len(texts)} turns: cosine int8/fp32 mean {cos.mean():.5f}, min {cos.min():.5f},"
        f" 1st percentile {np.percentile(cos, 1):.5f}; top-10 neighbour overlap {overlap:.3f}"
    )
    timing: dict[str, dict[str, list[float]]] = {
        m: {"batch_s": [], "single_ms": []} for m in ("int8", "fp32")
    }
    for r in range(args.rounds):
        for name, emb in (("int8", int8), ("fp32", fp32)):
            t = time.perf_counter()
            emb.embed([f"{x} ({r})" for x in texts])  # new texts: nothing cached
            timing[name]["batch_s"].append(time.perf_counter() - t)
            for x in texts[:50]:
                t = time.perf_counter()
                emb.embed([f"{x} [{r}]"])
                timing[name]["single_ms"].append((time.perf_counter() - t) * 1000)
    report["speed"] = {
        name: {
            "batch_s_median": statistics.median(v["batch_s"]),
            "single_ms_median": statistics.median(v["single_ms"]),
            "batch_s": v["batch_s"],
        }
        for name, v in timing.items()
    }
    report["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    b8, b32 = (report["speed"][m]["batch_s_median"] for m in ("int8", "fp32"))
    o8, o32 = (report["speed"][m]["single_ms_median"] for m in ("int8", "fp32"))
    print(
        f"all {len(texts)} turns in one call, median of {args.rounds}: int8 {b8:.2f} s,"
        f" fp32 {b32:.2f} s (ratio {b8 / b32:.2f}); one text: int8 {o8:.1f} ms, fp32 {o32:.1f} ms"
    )
    out = Path(__file__).resolve().parent / "results"
    path = out / f"embedders-{time.strftime('%Y-%m-%d')}.json"
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
