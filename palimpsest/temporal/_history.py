"""Bitemporal materialisation: versions with the transaction window they were believed in.

    >>> from datetime import datetime, UTC
    >>> t = lambda y: datetime(y, 1, 1, tzinfo=UTC)
    >>> old = [Segment("sydney", t(2024), None, "a1")]
    >>> new = [Segment("sydney", t(2024), t(2025), "a1")]
    >>> diff(old, new)
    (['sydney'...], ['sydney'...])

`diff` is what a write does (expire what changed, insert what is new);
`materialise` replays a whole log at every transaction time it mentions,
which is what `erase` uses to rebuild a slot so no past view reveals it. Both
produce the same versions for the same log: the property tests check that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ._replay import Cardinality, LogEntry, Segment, replay


@dataclass(frozen=True, slots=True)
class Version:
    """A segment plus when it was believed: [recorded_at, expired_at)."""

    segment: Segment
    recorded_at: datetime
    expired_at: datetime | None = None


def diff(old: Sequence[Segment], new: Sequence[Segment]) -> tuple[list[Segment], list[Segment]]:
    """(segments to expire, segments to insert) to turn `old` into `new`."""
    old_set, new_set = set(old), set(new)
    return (
        sorted(old_set - new_set, key=Segment.sort_key),
        sorted(new_set - old_set, key=Segment.sort_key),
    )


def transaction_times(log: Sequence[LogEntry]) -> list[datetime]:
    """Every transaction time at which the slot's belief may change."""
    times = {e.recorded_at for e in log}
    times |= {e.retracted_at for e in log if e.retracted_at is not None}
    return sorted(times)


def materialise(log: Sequence[LogEntry], cardinality: Cardinality) -> list[Version]:
    """The slot's full version history, as a write-by-write replay would have left it."""
    open_: dict[Segment, datetime] = {}
    closed: list[Version] = []
    for k in transaction_times(log):
        expire, insert = diff(list(open_), replay(log, cardinality, known_at=k))
        for seg in expire:
            start = open_.pop(seg)
            if start != k:  # believed for no instant: never visible, not worth a row
                closed.append(Version(seg, start, k))
        for seg in insert:
            open_[seg] = k
    closed.extend(Version(seg, start) for seg, start in open_.items())
    return sorted(closed, key=lambda v: (v.recorded_at, v.segment.sort_key()))
