"""How the context vector is made, measured on LoCoMo's development split.

>>> # python bench/locomo_context.py --variants pair,mean0.5,words,own
>>> # python bench/locomo_context.py --quick --variants pair,words

Each variant is a recipe for an episode's second vector (the "context" column the
ranking scores beside the turn's own vector), patched in place of
`palimpsest.recall._episode_rows.episode_vectors` (as `recall.index` calls it) for the run:

- ``pair``: the shipped recipe before 2026-12-06, the previous turn and this one
  encoded together (a second MiniLM pass over ~115 tokens a turn);
- ``meanW``: the normalised weighted mean ``W * own + (1 - W) * previous own``
  of vectors the turn's own encode already computed (no second pass);
- ``words``: the same mean weighted by each turn's word count, as mean pooling over
  the joined text weights each half by its tokens;
- ``shipped``: whatever `episode_vectors` does now (since 2026-12-06: ``words``);
- ``own``: no context at all (the column holds the turn's own vector).

Every variant runs the same conversations with the spaCy extractor (the defaults a
user gets), each question asked at the defaults (`recall(q, k=10)`), the
never-mentioned questions too (false-memory rate). One process; the embedder
remembers every text it encoded, so later variants pay only for ranking and
extraction. Development conversations only (`locomo_data.DEV`): the holdout is never
read here.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_data as lc
from locomo import _items

import palimpsest.recall.index as index_mod
from palimpsest import Memory
from palimpsest.recall import _episode_rows as rows_mod
from palimpsest.recall.embedder import named

F32 = npt.NDArray[np.float32]


class Remembering:
    """An embedder that encodes each distinct text once per process."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.seen: dict[str, F32] = {}
        self.encoded = 0

    def identity(self) -> str:
        return str(self.inner.identity())

    def embed(self, texts: Sequence[str]) -> F32:
        todo = list(dict.fromkeys(t for t in texts if t not in self.seen))
        if todo:
            self.encoded += len(todo)
            for t, v in zip(todo, self.inner.embed(todo), strict=True):
                self.seen[t] = v
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.seen[t] for t in texts])


Recipe = Callable[[Any, Sequence[Mapping[str, Any]], Sequence[Mapping[str, Any] | None]], Any]


def _mean(weight: Callable[[str, str], float]) -> Recipe:
    def recipe(embedder: Any, rows: Any, prevs: Any) -> tuple[F32, F32]:
        own = [r["text"] for r in rows]
        before = [p["text"] for p in prevs if p is not None]
        unique = list(dict.fromkeys([*own, *before]))
        vecs = embedder.embed(unique)
        at = {t: i for i, t in enumerate(unique)}
        emb = vecs[[at[t] for t in own]]
        ctx = emb.copy()
        for j, p in enumerate(prevs):
            if p is None:
                continue
            w = weight(rows[j]["text"], p["text"])
            v = w * emb[j] + (1.0 - w) * vecs[at[p["text"]]]
            ctx[j] = v / max(float(np.linalg.norm(v)), 1e-12)
        return emb, ctx

    return recipe


def _words(text: str) -> int:
    return max(1, len(text.split()))


def _pair(embedder: Any, rows: Any, prevs: Any) -> tuple[F32, F32]:
    """The recipe before 2026-12-06: the previous turn and this one encoded together."""
    own = [r["text"] for r in rows]
    around = [
        r["text"] if p is None else f"{p['text']}\n{r['text']}"
        for r, p in zip(rows, prevs, strict=True)
    ]
    unique = list(dict.fromkeys([*own, *around]))
    vecs = embedder.embed(unique)
    at = {t: i for i, t in enumerate(unique)}
    return vecs[[at[t] for t in own]], vecs[[at[t] for t in around]]


def recipe_of(name: str) -> Recipe:
    if name == "pair":
        return _pair
    if name == "shipped":
        return rows_mod.episode_vectors
    if name == "own":
        return _mean(lambda a, b: 1.0)
    if name == "words":
        return _mean(lambda a, b: _words(a) / (_words(a) + _words(b)))
    if name.startswith("mean"):
        w = float(name[4:])
        return _mean(lambda a, b: w)
    raise SystemExit(f"unknown variant {name!r}")


def run(
    variant: str, convs: Sequence[lc.Conversation], questions: Any, absent: Any, emb: Any
) -> dict[str, Any]:
    index_mod.episode_vectors = recipe_of(variant)  # type: ignore[assignment]
    at: dict[int, list[float]] = {5: [], 10: []}
    answered: list[bool] = []
    t_import = 0.0
    for conv in convs:
        items = _items(conv)
        now = max(i["occurred_at"] for i in items) + timedelta(days=1)
        with (
            tempfile.TemporaryDirectory() as tmp,
            Memory.open(Path(tmp) / "mem", clock=lambda at=now: at, embedder=emb) as mem,
        ):
            t0 = time.perf_counter()
            mem.remember_many(items)
            t_import += time.perf_counter() - t0
            for q in (q for q in questions if q.conv_id == conv.conv_id):
                hits = mem.recall(q.text, k=10)
                eps = [h.source or "" for h in hits if h.kind == "episode"]
                for k in at:
                    at[k].append(lc.evidence_share(set(eps[:k]), q.evidence))
            for a in (a for a in absent if a["conv_id"] == conv.conv_id):
                answered.append(bool(mem.recall(a["question"], k=5)))
    return {
        "variant": variant,
        "r5": float(np.mean(at[5])),
        "r10": float(np.mean(at[10])),
        "false_memory": float(np.mean(answered)) if answered else 0.0,
        "import_s": t_import,
        "questions": len(at[5]),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--variants", default="pair,mean0.5,words,own")
    ap.add_argument("--quick", action="store_true", help="conv-26 only")
    args = ap.parse_args(argv)
    convs, questions, _ = lc.load_locomo()
    ids = ("conv-26",) if args.quick else lc.DEV
    absent = [a for a in lc.load_abstention(convs) if a["conv_id"] in ids]
    convs = [c for c in convs if c.conv_id in ids]
    questions = [q for q in questions if q.conv_id in ids]
    emb = Remembering(named("minilm"))
    print(f"{len(questions)} questions, {len(absent)} never-mentioned; {emb.identity()}")
    print(f"loadavg {Path('/proc/loadavg').read_text().split()[:3]}")
    print(
        "| variant | R@5 | R@10 | never-mentioned answered | import s (vectors cached after 1st) |"
    )
    print("|---|---|---|---|---|")
    for v in args.variants.split(","):
        r = run(v, convs, questions, absent, emb)
        print(
            f"| {v} | {r['r5']:.3f} | {r['r10']:.3f} | {r['false_memory']:.3f}"
            f" | {r['import_s']:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
