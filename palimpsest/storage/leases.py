"""The rule of a nightly lease, pure: what a claim finds and what it leaves.

    >>> decide(None, "b", now)                 # nobody has it
    'claimed'
    >>> decide({"holder": "a", "expires_at": later, "done_at": None}, "b", now)
    'held'

Both stores keep one row per (namespace, night) and apply this rule under their write
lock, so exactly one holder at a time runs a namespace's night; a holder killed half
way stops renewing, its lease runs out, and the next claimant redoes the run (which
recomputes from what is stored: consolidation/runner.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any


def decide(row: Mapping[str, Any] | None, holder: str, now: datetime) -> str:
    """'done', 'held' (by another, unexpired) or 'claimed'."""
    if row is None:
        return "claimed"
    if row["done_at"] is not None:
        return "done"
    if row["holder"] != holder and row["expires_at"] > now:
        return "held"
    return "claimed"
