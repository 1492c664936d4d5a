"""Importers: chat transcripts and LoCoMo conversations, remembered in batches.

    >>> importers.import_transcript(open("chat.jsonl"))
    {'episodes': 120, 'facts': 31}

Every line is checked before the first write; batches are separate
transactions of `remember_many`, and remembering is idempotent, so a rerun
after a crash completes the import without duplicates. The parsing is
`transfer/_transcripts.py` and `_locomo.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..engine.context import Context
from ..engine.episodes import Episodes, parse_episode
from ..errors import ValidationError
from ._locomo import parse_locomo
from ._transcripts import parse_transcript

Progress = Callable[[int, int], None]  # (done, total)


class Importers:
    """`import_transcript` and `import_locomo`, through `remember_many`."""

    def __init__(self, ctx: Context, episodes: Episodes) -> None:
        self._ctx = ctx
        self._episodes = episodes

    def import_transcript(
        self,
        lines: Iterable[str],
        *,
        namespace: str | None = None,
        batch: int = 500,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """Chat turns from JSON Lines ({speaker, text, timestamp, session}) via remember_many.

        >>> mem.import_transcript(open("chat.jsonl"))
        {'episodes': 120, 'facts': 31}

        Every line is checked before the first write; batches are separate
        transactions, and remembering is idempotent, so a rerun after a crash
        completes the import without duplicates.
        """
        return self._remember_items(parse_transcript(lines), namespace, batch, progress)

    def import_locomo(
        self,
        text: str,
        *,
        conversations: Iterable[str] | None = None,
        namespace: str | None = None,
        batch: int = 500,
        progress: Progress | None = None,
    ) -> dict[str, int]:
        """LoCoMo conversations (its JSON file, or one sample) as episodes.

        >>> mem.import_locomo(Path("locomo10.json").read_text(), conversations=["conv-26"])
        """
        items = parse_locomo(text, conversations=conversations)
        return self._remember_items(items, namespace, batch, progress)

    def _remember_items(
        self,
        items: list[dict[str, Any]],
        namespace: str | None,
        batch: int,
        progress: Progress | None,
    ) -> dict[str, int]:
        ns = self._ctx.ns(namespace)
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValidationError("batch: a positive integer", field="batch")
        clean = []
        for i, item in enumerate(items):
            where = item.get("_line")
            it = {k: v for k, v in item.items() if k != "_line"}
            try:
                parse_episode(ns, i, it)
            except ValidationError as e:
                at = f"line {where}" if where is not None else f"item {i}"
                raise ValidationError(f"{at}: {e.message}", line=where, index=i) from None
            clean.append(it)
        episodes = facts = 0
        for start in range(0, len(clean), batch):
            stored = self._episodes.remember_many(ns, clean[start : start + batch])
            episodes += len(stored)
            facts += sum(len(ep.facts) for ep in stored)
            if progress is not None:
                progress(min(start + batch, len(clean)), len(clean))
        return {"episodes": episodes, "facts": facts}
