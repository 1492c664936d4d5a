"""The memory the dashboard tests look at: the demo story, plus something to review.

    >>> ids = build_demo_memory(tmp_path / "mem")     # {"chess": "fa_…", "band": "fa_…"}

The demo's conversation (`palimpsest/data/demo_conversation.jsonl`, the Sydney/Melbourne
story) is replayed at its own times as `palimpsest demo` does, then two claims
from outside sources wait in quarantine, two spellings of one doctor are
folded by a consolidation run (a merge to undo, and a report to read).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from palimpsest import Memory
from palimpsest.cli.demo import DEMO_DATA, DemoClock, load_lines, replay_story

AFTER_STORY = datetime(2025, 3, 10, 9, 0, tzinfo=UTC)


def build_demo_memory(path: Path) -> dict[str, str]:
    """Write the demo memory at `path` (no models: the server embeds what recall needs)."""
    lines = load_lines(DEMO_DATA)
    clock = DemoClock(datetime.fromisoformat(lines[0]["occurred_at"].replace("Z", "+00:00")))
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        replay_story(mem, clock, lines, lambda _: None)
        clock.advance_to(AFTER_STORY)
        said = AFTER_STORY.isoformat()
        ana = mem.remember(
            "Ana told me the user plays chess every Sunday.",
            speaker="Ana",
            author_kind="third_party",
            session="s10",
            occurred_at=said,
        )
        chess = mem.assert_fact(
            "user", "plays", "chess", author_kind="third_party", evidence=[ana.id], occurred_at=said
        )
        web = mem.remember(
            "A web search says the user's favourite band is Radiohead.",
            speaker="search",
            author_kind="tool",
            session="s10",
            occurred_at=said,
        )
        band = mem.assert_fact(
            "user", "likes", "Radiohead", author_kind="tool", evidence=[web.id], occurred_at=said
        )
        mem.assert_fact("user", "sees", "Dr. Okafor", occurred_at=said)
        mem.assert_fact("Mira", "sees", "Dr Okafor", occurred_at=said)
        clock.advance_to(datetime(2025, 3, 11, 3, 0, tzinfo=UTC))
        mem.consolidate()
    return {"chess": chess.id, "band": band.id}
