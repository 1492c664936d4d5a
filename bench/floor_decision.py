"""The decision to answer on LoCoMo dev: what each rule answers, and what it makes up.

    python bench/floor_decision.py [--keep DIR] [--extract]

Each development conversation goes into a memory (`remember_many` of
`parse_locomo`'s items; no extractor unless `--extract`, for speed; `--keep`
reuses memories from an earlier run), then every question and every
never-mentioned question of bench/data/abstention_locomo.jsonl is asked with
`recall(q, k=10, min_score=0)` while the evidence the decision weighs
(`recall/_evidence.py`: best relevance, best cosine, the crowd's cosine, a named
day's best) is recorded. Each candidate rule is then scored from the same
answers: recall@5/@10 (0 when it abstains) and the false-memory rate (share of
never-mentioned questions it answers). Uses are not recorded (every question
sees the same memory). Writes bench/results/floor-decision-dev-<date>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_data as lc

from palimpsest import Memory
from palimpsest.recall import OnnxEmbedder, recaller
from palimpsest.recall._evidence import Evidence
from palimpsest.transfer import parse_locomo

RESULTS = Path(__file__).resolve().parent / "results"
Rule = Callable[[dict[str, float]], bool]


def _rule(floor: float, meaning: float, margin: float, dated: float) -> Rule:
    def decide(r: dict[str, float]) -> bool:
        if r["rel"] >= floor:
            return True
        if r["meaning"] >= meaning and r["meaning"] - r["crowd"] >= margin:
            return True
        return r["dated"] >= dated * floor

    return decide


RULES: dict[str, Rule] = {
    "relevance >= 0.26 only": _rule(0.26, 9.0, 9.0, 99.0),
    "defaults: + meaning 0.4 / margin 0.2 + dated 0.6": _rule(0.26, 0.4, 0.2, 0.6),
    "floor 0.24 + meaning + dated": _rule(0.24, 0.4, 0.2, 0.6),
    "floor 0.26, meaning 0.35 / margin 0.18": _rule(0.26, 0.35, 0.18, 0.6),
}


DEFAULT = "defaults: + meaning 0.4 / margin 0.2 + dated 0.6"


def by_category(ans: list[dict[str, Any]], decide: Rule) -> dict[str, dict[str, float]]:
    """Recall@5/@10 per LoCoMo category under `decide` (0 when it abstains), and overall."""
    out: dict[str, dict[str, float]] = {}
    for cat, label in [*lc.CATEGORIES.items(), (None, "overall")]:
        rows = [r for r in ans if cat is None or r["cat"] == cat]
        out[label] = {
            f"r{k}": round(float(np.mean([r[f"r{k}"] * decide(r) for r in rows])), 4)
            for k in (5, 10)
        }
    return out


def collect(keep: Path, extract: bool) -> list[dict[str, Any]]:
    """Per question: its recall@5/@10 at min_score=0 and the decision's evidence."""
    seen: list[Evidence] = []
    real = recaller.answers  # type: ignore[attr-defined]

    def spy(ev: Evidence, floor: float) -> bool:
        seen.append(ev)
        return real(ev, floor)

    recaller.answers = spy  # type: ignore[attr-defined]
    convs, questions, _ = lc.load_locomo()
    absent = lc.load_abstention(convs)
    embedder = OnnxEmbedder()  # the default MiniLM
    out: list[dict[str, Any]] = []
    for conv in (c for c in convs if c.conv_id in lc.DEV):
        items = parse_locomo(lc.DATA.read_text(), conversations=[conv.conv_id])
        now = max(i["occurred_at"] for i in items) + timedelta(days=1)
        path = keep / conv.conv_id
        fresh = not path.exists()
        with Memory.open(
            path,
            clock=lambda at=now: at,  # type: ignore[misc]
            extractor="spacy" if extract else None,
            embedder=embedder,
        ) as mem:
            if fresh:
                mem.remember_many(items)
            mem._uses.note = lambda *a, **kw: None  # type: ignore[method-assign]
            asked = [
                (q.text, q.evidence, q.category) for q in questions if q.conv_id == conv.conv_id
            ]
            asked += [(a["question"], [], 0) for a in absent if a["conv_id"] == conv.conv_id]
            for text, evidence, category in asked:
                hits = mem.recall(text, k=10, min_score=0)
                ev = seen[-1]
                eps = [h.source for h in hits if h.kind == "episode"]
                share = {k: lc.evidence_share(eps[:k], evidence) for k in (5, 10)}
                out.append(
                    {"conv": conv.conv_id, "q": text, "cat": category, "r5": share[5],
                     "r10": share[10], "rel": ev.relevance, "meaning": ev.meaning,
                     "crowd": ev.crowd, "dated": ev.dated}
                )  # fmt: skip
        print(conv.conv_id, len(out), flush=True)
    recaller.answers = real  # type: ignore[attr-defined]
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--keep", type=Path, help="memory directories to reuse")
    ap.add_argument("--extract", action="store_true", help="the spaCy extractor on")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory() as tmp:
        rows = collect(args.keep or Path(tmp), args.extract)
    ans = [r for r in rows if r["cat"]]
    ab = [r for r in rows if not r["cat"]]
    report: dict[str, Any] = {
        "bench": "floor-decision",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "extract": args.extract,
        "questions": len(ans),
        "never_mentioned": len(ab),
        "min_score=0": {
            "recall@5": round(float(np.mean([r["r5"] for r in ans])), 4),
            "recall@10": round(float(np.mean([r["r10"] for r in ans])), 4),
        },
        "rules": [],
    }
    report["by_category"] = by_category(ans, RULES[DEFAULT])
    for name, decide in RULES.items():
        a = [decide(r) for r in ans]
        report["rules"].append(
            {
                "rule": name,
                "recall@5": round(
                    float(np.mean([r["r5"] * x for r, x in zip(ans, a, strict=True)])), 4
                ),
                "recall@10": round(
                    float(np.mean([r["r10"] * x for r, x in zip(ans, a, strict=True)])), 4
                ),
                "false_memory": round(float(np.mean([decide(r) for r in ab])), 3),
            }
        )
    print(json.dumps(report, indent=1))
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"floor-decision-dev-{datetime.now(UTC).date().isoformat()}.json"
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
