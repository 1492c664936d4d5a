"""One consolidation run as the steps see it: where it started, what changed, what it did.

    >>> run = Run("default", now, since=None, dry_run=False)
    >>> run.add("expire", "ended", ["fa_1"], "its window closed")

Pure data: the steps (`steps/`) fill it; the report is made from it. `checkpoint`
is called between steps and between merges (a no-op; tests pause or kill there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from ..models import ConsolidationChange

LISTED = 1000  # per action: a first run over a large memory counts the rest


def _no_checkpoint(point: str) -> None:
    """Between steps and merges: nothing to do unless a test is watching."""


@dataclass
class Run:
    namespace: str
    now: datetime
    since: datetime | None
    dry_run: bool
    slots: set[str] = field(default_factory=set)  # slots changed since the watermark
    # the start of a kept run whose watermark never committed: it reported up to there
    reported_to: datetime | None = None
    changes: list[ConsolidationChange] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    omitted: dict[str, int] = field(default_factory=dict)
    checkpoint: Callable[[str], None] = field(default=_no_checkpoint, repr=False, compare=False)

    @property
    def window_start(self) -> datetime | None:
        """Where lines reported by time window (ended, reinforced) start: the watermark,
        or later when a run killed before its watermark already reported them."""
        if self.since is None or self.reported_to is None:
            return self.since or self.reported_to
        return max(self.since, self.reported_to)

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

    def redo(self, change: ConsolidationChange, action: str, reason: str) -> None:
        """Say what became of a change listed before its work was done."""
        self.counts[change.action] -= 1
        self.counts[action] = self.counts.get(action, 0) + 1
        if not self.counts[change.action]:
            del self.counts[change.action]
        at = next((i for i, c in enumerate(self.changes) if c is change), None)
        if at is not None:
            self.changes[at] = ConsolidationChange.model_construct(
                step=change.step, action=action, targets=change.targets, reason=reason
            )

    def add_unlisted(self, action: str, n: int) -> None:
        """Count `n` more of an action whose details were not read (beyond `LISTED`)."""
        if n > 0:
            self.counts[action] = self.counts.get(action, 0) + n
            self.omitted[action] = self.omitted.get(action, 0) + n
