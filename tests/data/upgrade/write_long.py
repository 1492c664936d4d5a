"""Write the long-history upgrade memory with an older release of this repository.

    git archive <commit> | tar -x -C /tmp/old
    cd /tmp && PYTHONPATH=/tmp/old python <checkout>/tests/data/upgrade/write_long.py OUT <commit>

(run from outside the checkout, so that `palimpsest` is the old one). Writes
OUT/memory (then packed as memory-long-<commit>.tar.xz) and OUT/answers-long-<commit>.json:
what that release answered to `ask_long`. The histories are long enough that the
layout since migration 9 pages them (a slot's journal past 64 events, a line past
32 starts): a one-valued slot moved 60 times, with a move learned late and an end,
a many-valued slot of 40 objects restated and ended, a quarantined claim.
"""

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import palimpsest
from palimpsest import Memory

T0 = datetime(2020, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def day(n: int) -> str:
    return (T0 + timedelta(days=n)).isoformat()


def ask_long(m: Any, marks: list[str]) -> list[dict[str, Any]]:
    """Point queries of both slots at many valid times as known at each mark, and
    the histories' sizes and statuses."""
    out: list[dict[str, Any]] = []
    for k in marks:
        for v in range(0, 400, 29):
            for p in ("lives_in", "likes"):
                got = sorted(
                    [f.object, f.valid_from and f.valid_from.isoformat(), f.status]
                    for f in m.facts("user", p, valid_at=day(v), known_at=k)
                )
                out.append({"p": p, "valid_at": day(v), "known_at": k, "answer": got})
    for p in ("lives_in", "likes"):
        statuses = sorted([f.object or "", f.status] for f in m.history("user", p))
        out.append({"history": p, "answer": statuses})
    q = m.facts("user", "likes", include_quarantined=True, valid_at=day(300))
    out.append({"quarantined": sorted(f.object for f in q if f.status == "quarantined")})
    return out


def main(out: Path, commit: str) -> None:
    clock = Clock()
    marks = []
    with Memory.open(out / "memory", clock=clock, extractor=None, embedder=None) as m:
        for i in range(60):
            m.assert_fact("user", "lives_in", f"City {i}", valid_from=day(5 * i))
        m.assert_many(
            [
                {
                    "subject": "user",
                    "predicate": "likes",
                    "object": f"thing {i}",
                    "valid_from": day(i),
                }
                for i in range(40)
            ]
        )
        marks.append(clock.now.isoformat())
        m.assert_fact("user", "lives_in", "Lost City", valid_from=day(102))  # learned late
        for i in range(0, 40, 4):
            m.assert_fact("user", "likes", f"thing {i}", valid_from=day(200 + i))
        m.end_fact("user", "likes", "thing 5", at=day(150))
        marks.append(clock.now.isoformat())
        m.end_fact("user", "lives_in", None, at=day(320))
        m.assert_fact("user", "likes", "rumour", author_kind="agent", valid_from=day(10))
        wrong = m.assert_fact("user", "lives_in", "Nowhere", valid_from=day(250))
        m.retract(wrong.id, reason="wrong")
        marks.append(clock.now.isoformat())
        answers = {
            "commit": commit,
            "version": getattr(palimpsest, "__version__", None),
            "known_at_marks": marks,
            "asked": ask_long(m, marks),
        }
    (out / f"answers-long-{commit[:7]}.json").write_text(json.dumps(answers, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
