"""Chat transcripts in JSON Lines -> `remember_many` items.

    >>> parse_transcript(['{"speaker": "user", "text": "I moved to Perth.",'
    ...                   ' "timestamp": "2024-07-02T10:00:00Z", "session": "s1"}'])
    [{'text': 'I moved to Perth.', 'speaker': 'user', 'occurred_at': '2024-07-02T10:00:00Z', ...}]

One turn per line: `text` (required), `speaker`, `timestamp` (or
`occurred_at`), `session`, and optionally `source`, `author_kind`,
`reply_to`, `importance`. Values are checked by the engine's own episode
parser before anything is written; this module only maps the keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import ValidationError
from ._format import json_lines

_KEYS = {
    "text",
    "speaker",
    "timestamp",
    "occurred_at",
    "session",
    "source",
    "author_kind",
    "reply_to",
    "importance",
}


def parse_transcript(lines: Iterable[str]) -> list[dict[str, Any]]:
    """Items for `remember_many`, with `_line` (the source line) on each."""
    out: list[dict[str, Any]] = []
    for n, obj in json_lines(lines):
        if not isinstance(obj, dict):
            raise ValidationError(f"line {n}: expected a JSON object", line=n)
        extra = set(obj) - _KEYS
        if extra:
            raise ValidationError(f"line {n}: unknown keys {sorted(extra)}", line=n)
        if "timestamp" in obj and "occurred_at" in obj:
            raise ValidationError(f"line {n}: both timestamp and occurred_at", line=n)
        item = {k: v for k, v in obj.items() if k != "timestamp"}
        if "timestamp" in obj:
            item["occurred_at"] = obj["timestamp"]
        if not isinstance(item.get("text"), str):
            raise ValidationError(f"line {n}: text: a string is required", line=n)
        item["_line"] = n
        out.append(item)
    return out
