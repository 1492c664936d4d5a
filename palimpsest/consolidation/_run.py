"""One consolidation run as the steps see it: where it started, what changed, what it did.

    >>> run = Run("default", now, since=None, dry_run=False)
    >>> run.add("expire", "ended", ["fa_1"], "its window closed")

Pure data: the steps in the engine fill it; the report is made from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ..models import ConsolidationChange

LISTED = 1000  # per action: a first run over a large memory counts the rest


@dataclass
class Run:
    namespace: str
    now: datetime
    since: datetime | None
    dry_run: bool
    slots: set[str] = field(default_factory=set)  # slots changed since the watermark
    changes: list[ConsolidationChange] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)

    def add(self, step: str, action: str, targets: list[str], reason: str) -> ConsolidationChange:
        n = self.counts.get(action, 0)
        self.counts[action] = n + 1
        # built without re-validation: a first run over a large memory makes many
        change = ConsolidationChange.model_construct(
            step=step, action=action, targets=targets, reason=reason
        )
        if n < LISTED:
            self.changes.append(change)
        else:
            self.omitted[action] = self.omitted.get(action, 0) + 1
        return change

    def add_unlisted(self, action: str, n: int) -> None:
        """Count `n` more of an action whose details were not read (beyond `LISTED`)."""
        if n > 0:
            self.counts[action] = self.counts.get(action, 0) + n
            self.omitted[action] = self.omitted.get(action, 0) + n
