"""LoCoMo conversations (Maharana et al., ACL 2024) -> `remember_many` items.

    >>> items = parse_locomo(open("locomo10.json").read(), conversations=["conv-26"])
    >>> items[0]["source"], items[0]["session"]
    ('D1:1', 'conv-26/session_1')

Every turn becomes an episode: its session's date as `occurred_at` (a few
seconds per turn, so order survives), its `dia_id` as `source`, the speaker's
name as `speaker`, `author_kind="user"` (both people are the memory's users),
the two speakers as `participants` (so "you" in a turn is the other one),
and a shared image rendered by its caption, as LoCoMo's own prompts do. The
questions are not imported.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import ValidationError

TURN_GAP = timedelta(seconds=5)
_DATE_RE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_SESSION = re.compile(r"session_(\d+)")


def parse_date(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime (LoCoMo gives no zone)."""
    m = _DATE_RE.search(text)
    if not m or m.group(5).lower() not in _MONTHS:
        raise ValidationError(f"unreadable LoCoMo date {text[:64]!r}")
    hour, minute, ampm, day, month, year = m.groups()
    h = int(hour) % 12 + (12 if ampm.lower() == "pm" else 0)
    try:
        return datetime(int(year), _MONTHS[month.lower()], int(day), h, int(minute), tzinfo=UTC)
    except ValueError:
        raise ValidationError(f"unreadable LoCoMo date {text[:64]!r}") from None


def parse_locomo(text: str, *, conversations: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Items for `remember_many`, conversation by conversation, session by session."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValidationError(f"line {e.lineno}: not JSON ({e.msg})", line=e.lineno) from None
    samples = raw if isinstance(raw, list) else [raw]
    wanted = None if conversations is None else set(conversations)
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise ValidationError(f"conversation {i}: no 'conversation' object")
        cid = str(sample.get("sample_id") or f"conv-{i}")
        seen.add(cid)
        if wanted is not None and cid not in wanted:
            continue
        out += _conversation(cid, sample["conversation"])
    if wanted is not None and wanted - seen:
        raise ValidationError(f"no conversation {sorted(wanted - seen)} in the file")
    return out


def _conversation(cid: str, conv: dict[str, Any]) -> list[dict[str, Any]]:
    people = [conv[k] for k in ("speaker_a", "speaker_b") if isinstance(conv.get(k), str)]
    sessions = sorted(
        int(m.group(1)) for k, v in conv.items() if (m := _SESSION.fullmatch(k)) and v
    )
    out: list[dict[str, Any]] = []
    for s in sessions:
        where = f"{cid} session_{s}"
        date = conv.get(f"session_{s}_date_time")
        if not isinstance(date, str):
            raise ValidationError(f"{where}: no session_{s}_date_time")
        when = parse_date(date)
        turns = conv[f"session_{s}"]
        if not isinstance(turns, list):
            raise ValidationError(f"{where}: expected a list of turns")
        for pos, t in enumerate(turns):
            if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                raise ValidationError(f"{where}, turn {pos}: no text")
            caption = t.get("blip_caption") or ""
            text = f"{t['text']} [shares {caption}]" if caption else t["text"]
            out.append(
                {
                    "text": text,
                    "speaker": t.get("speaker") or "user",
                    "author_kind": "user",
                    "occurred_at": when + TURN_GAP * pos,
                    "session": f"{cid}/session_{s}",
                    "source": t.get("dia_id"),
                    # both speak for themselves; "you" is the other one
                    "participants": people,
                }
            )
    return out
