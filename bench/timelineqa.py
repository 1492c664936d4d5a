"""TimelineQA through the engine: a lifelog in with `remember_many`, dated questions out.

>>> # python bench/timelineqa.py                       # whole lifelog, 1000 questions a split
>>> # python bench/timelineqa.py --years 2004-2007     # a few years only (development runs)
>>> # python bench/timelineqa.py --questions 0         # every question (slow: ~33k recalls)

The lifelog of TimelineQA's ``sparse-0`` person (13k dated episodes, 1983-2023)
goes into one memory through ``Memory.remember_many`` as the engine ships
(spaCy extraction, MiniLM vectors): each episode's ``text_template_based`` as
text, its date as ``occurred_at`` (noon UTC, a minute apart within a day, since
the log has no times), its ``eid`` as ``source``, speaker "user". The clock
stands on the day after the last episode. Each atomic question is asked with
``mem.recall(q, k=5, min_score=0)``; hit@5 counts it when one of the five hits
is the question's episode or cites it as evidence (a fact hit's evidence edge).

Splits follow ../shared/data/README.md: development = episodes dated in even
years, holdout = odd years; both live in the same memory (one life), only the
questions are split. "Dated" questions are those naming a date or month in the
form the data uses (``2014/01/29``, ``2002/05``) or a year ("in 2013"); the
issue's target (hit@5 >= 0.90 on development) is on these. Undated questions
("when did I do yoga?") are reported apart: most have many right-looking
episodes and one right answer. Nothing is cached between runs; ``--questions``
samples questions (seeded), ``--years`` keeps the episodes of a year range.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from palimpsest import Memory

DATA = Path(
    os.environ.get("TIMELINEQA_PATH", "/work/shared/data/timelineqa/sparse-0/sparse-0.json")
)
RESULTS = Path(__file__).resolve().parent / "results"
_DATED = re.compile(r"\b(?:19|20)\d\d/\d\d\b|\bin (?:19|20)\d\d\b")
BATCH = 500


@dataclass(frozen=True)
class Episode:
    eid: str
    day: date
    category: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    eid: str
    category: str
    split: str
    dated: bool


def load(path: Path = DATA) -> tuple[list[Episode], list[Question]]:
    """Episodes in date order and their atomic questions (category: the key sans digits)."""
    raw = json.loads(path.read_text())
    episodes: list[Episode] = []
    questions: list[Question] = []
    for day_s in sorted(raw):
        day = datetime.strptime(day_s, "%Y/%m/%d").date()
        for key, ep in raw[day_s].items():
            text = " ".join(str(ep.get("text_template_based") or "").split())
            if not text:
                continue
            cat = key.rstrip("0123456789")
            eid = str(ep["eid"])
            episodes.append(Episode(eid, day, cat, text))
            split = "dev" if day.year % 2 == 0 else "holdout"
            for q, _answer in ep.get("atomic_qa_pairs") or []:
                q = " ".join(str(q).split())
                if q:
                    questions.append(Question(q, eid, cat, split, bool(_DATED.search(q))))
    return episodes, questions


def _items(episodes: Sequence[Episode]) -> list[dict[str, Any]]:
    per_day: dict[date, int] = defaultdict(int)
    out = []
    for e in episodes:
        i = per_day[e.day]
        per_day[e.day] += 1
        at = datetime(e.day.year, e.day.month, e.day.day, 12, tzinfo=UTC) + timedelta(minutes=i)
        out.append(
            {
                "text": e.text,
                "speaker": "user",
                "author_kind": "user",
                "occurred_at": at,
                "source": e.eid,
            }
        )
    return out


def run(
    episodes: Sequence[Episode],
    questions: Sequence[Question],
    *,
    k: int = 5,
    keep: Path | None = None,
) -> tuple[list[bool], dict[str, float]]:
    """Whether each question's episode is among the top k, and timings.

    With ``keep``, the memory lives there and is reused when it already exists
    (development only: the import is then not measured)."""
    last = max(e.day for e in episodes)
    now = datetime(last.year, last.month, last.day, tzinfo=UTC) + timedelta(days=1, hours=12)
    hits: list[bool] = []
    with tempfile.TemporaryDirectory() as tmp:
        where = keep if keep is not None else Path(tmp) / "mem"
        reuse = where.exists()
        t0 = time.perf_counter()
        with Memory.open(where, clock=lambda: now) as mem:
            items = _items(episodes)
            id_of: dict[str, str] = {}
            ids_file = where.with_suffix(".ids.json")
            if reuse:
                id_of = json.loads(ids_file.read_text())
            for b in range(0, 0 if reuse else len(items), BATCH):
                for ep in mem.remember_many(items[b : b + BATCH]):
                    id_of[str(ep.source)] = ep.id
                print(f"remembered {b + BATCH} in {time.perf_counter() - t0:.0f} s", flush=True)
            if keep is not None and not reuse:
                ids_file.write_text(json.dumps(id_of))
            t1 = time.perf_counter()
            mem.recall("warm up the index", k=1)
            t2 = time.perf_counter()
            for n, q in enumerate(questions):
                if n % 200 == 0:
                    print(f"asked {n} in {time.perf_counter() - t2:.0f} s", flush=True)
                want = id_of[q.eid]
                got = mem.recall(q.text, k=k, min_score=0)
                hits.append(any(h.episode_id == want or want in h.evidence for h in got[:k]))
            t3 = time.perf_counter()
    n = max(1, len(questions))
    return hits, {
        "import_s": float("nan") if reuse else round(t1 - t0, 1),
        "first_recall_s": round(t2 - t1, 2),
        "recall_ms_mean": round(1000 * (t3 - t2) / n, 1),
    }


def _rate(xs: Sequence[bool]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def summarise(questions: Sequence[Question], hits: Sequence[bool]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("dev", "holdout"):
        rows = [(q, h) for q, h in zip(questions, hits, strict=True) if q.split == split]
        cats: dict[str, list[bool]] = defaultdict(list)
        for q, h in rows:
            if q.dated:
                cats[q.category].append(h)
        out[split] = {
            "dated": {
                "n": sum(q.dated for q, _ in rows),
                "hit@5": _rate([h for q, h in rows if q.dated]),
            },
            "undated": {
                "n": sum(not q.dated for q, _ in rows),
                "hit@5": _rate([h for q, h in rows if not q.dated]),
            },
            "dated_by_category": {
                c: {"n": len(v), "hit@5": _rate(v)} for c, v in sorted(cats.items())
            },
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--questions", type=int, default=1000, help="per split and kind; 0 = all")
    ap.add_argument("--years", default="", help="keep episodes of a year range, e.g. 2004-2007")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, help="memory directory to reuse (development)")
    ap.add_argument("--no-save", action="store_true", help="print only, write no result file")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    episodes, questions = load()
    if args.years:
        lo, _, hi = args.years.partition("-")
        y0, y1 = int(lo), int(hi or lo)
        episodes = [e for e in episodes if y0 <= e.day.year <= y1]
        kept = {e.eid for e in episodes}
        questions = [q for q in questions if q.eid in kept]
    if args.questions:
        rng = random.Random(args.seed)
        sample: list[Question] = []
        for split in ("dev", "holdout"):
            for dated in (True, False):
                group = [q for q in questions if q.split == split and q.dated == dated]
                sample += rng.sample(group, min(args.questions, len(group)))
        questions = sample
    print(f"{len(episodes)} episodes, {len(questions)} questions", flush=True)
    hits, timing = run(episodes, questions, keep=args.keep)
    result = {
        "bench": "timelineqa",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "args": vars(args),
        "episodes": len(episodes),
        "questions": len(questions),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
        "timing": timing,
        "results": summarise(questions, hits),
    }
    print(json.dumps(result, indent=1, default=str))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        tag = (f"-{args.years}" if args.years else "") + (
            f"-q{args.questions}" if args.questions else ""
        )
        out = RESULTS / f"timelineqa-{datetime.now(UTC).date().isoformat()}{tag}.json"
        out.write_text(json.dumps(result, indent=1, default=str) + "\n")
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
