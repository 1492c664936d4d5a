"""Write the upgrade memory with an older release of this repository.

    git archive <commit> | tar -x -C /tmp/old
    cd /tmp && PYTHONPATH=/tmp/old python tests/data/upgrade/write_old.py OUT <commit>

(run from outside the checkout, so that `palimpsest` is the old one). Writes
OUT/memory (then packed as memory-<commit>.tar.xz) and OUT/answers-<commit>.json:
what that release answered, through `ask.py`.
"""

import importlib.util
import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import palimpsest
from palimpsest import Memory

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("upgrade_ask", HERE / "ask.py")
assert spec is not None and spec.loader is not None
ask_module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ask_module)


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2025, 3, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, **kw: float) -> None:
        self.now += timedelta(**(kw or {"seconds": 1}))


def main(out: Path, commit: str) -> None:
    clock = Clock()
    marks = []
    with Memory.open(out / "memory", clock=clock, extractor=None, embedder=None) as m:
        m.assert_fact("user", "lives_in", "Melbourne", valid_from="2022-01-01T00:00:00Z")
        m.assert_fact("user", "works_at", "Acme", valid_from="2021-05-01T00:00:00Z")
        m.assert_fact("user", "likes", "jazz", valid_from=None)
        m.remember("I adopted a kitten called Tofu.", occurred_at="2024-03-01T10:00:00Z",
                   session="a")  # fmt: skip
        marks.append(clock.now.isoformat())
        clock.tick(days=10)
        m.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
        m.end_fact("user", "works_at", "Acme", at="2024-12-31T00:00:00Z")
        wrong = m.assert_fact("Mira", "works_at", "Initech", valid_from="2024-01-01T00:00:00Z")
        m.assert_many(
            [{"subject": "Mira", "predicate": "likes", "object": o} for o in ("tea", "chess")]
        )
        marks.append(clock.now.isoformat())
        clock.tick(days=10)
        m.retract(wrong.id, reason="wrong person")
        m.assert_fact("user", "age", "40", valid_from="2024-01-01T00:00:00Z")
        clock.tick()
        m.assert_fact("user", "age", "41", valid_from="2024-01-01T00:00:00Z")
        m.remember("Tofu the cat knocked the Christmas tree over.",
                   occurred_at="2024-12-24T20:00:00Z", session="b")  # fmt: skip
        marks.append(clock.now.isoformat())
        clock.tick(days=1)
        m.consolidate()
        marks.append(clock.now.isoformat())
        answers = {
            "commit": commit,
            "version": getattr(palimpsest, "__version__", None),
            "known_at_marks": marks,
            "asked": ask_module.ask(m, marks),
        }
    (out / f"answers-{commit[:7]}.json").write_text(json.dumps(answers, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
