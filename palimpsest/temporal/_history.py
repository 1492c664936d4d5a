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

A predicate's cardinality can change over transaction time (`define_predicate`
re-reads its slots at the change): `materialise` then takes a *schedule*,
`[(since, cardinality), ...]`, and replays at every change time too, so a
rebuilt slot keeps the old cardinality for every view known before a change.
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


Schedule = Sequence[tuple[datetime | None, Cardinality]]
"""A cardinality over transaction time: `(since, cardinality)` steps; since None = since
always. The earliest step also covers any time before it; of several steps at one
instant the last given counts (it is what the slot was left with)."""


def cardinality_at(schedule: Cardinality | Schedule, known_at: datetime) -> Cardinality:
    """The cardinality in force at transaction time `known_at`.

    >>> cardinality_at([(None, "many"), (t(2030), "one")], t(2029))
    'many'
    """
    if isinstance(schedule, str):
        return schedule
    if not schedule:
        raise ValueError("a cardinality schedule needs at least one step")
    steps = sorted(schedule, key=lambda s: (s[0] is not None, s[0] or known_at))  # stable
    card = steps[0][1]
    for since, c in steps:
        if since is None or since <= known_at:
            card = c
    return card


def schedule_of(
    changes: Sequence[tuple[datetime, Cardinality, Cardinality | None]], current: Cardinality
) -> list[tuple[datetime | None, Cardinality]]:
    """A predicate's schedule from its recorded changes `(at, cardinality, previous)`,
    oldest first; `previous` is what held before (None: the name was new then).

    >>> schedule_of([(t(2030), "one", "many")], "one")
    [(None, 'many'), (datetime.datetime(2030, ...), 'one')]

    With no recorded change (a memory older than the history), `current` has always held.
    """
    if not changes:
        return [(None, current)]
    _, first, previous = changes[0]
    return [(None, previous or first), *((at, card) for at, card, _ in changes)]


def materialise(log: Sequence[LogEntry], cardinality: Cardinality | Schedule) -> list[Version]:
    """The slot's full version history, as a write-by-write replay would have left it.

    `cardinality` is one cardinality or a schedule of them; a change at K is replayed at
    K, as `define_predicate` does, and counts for every later transaction time.
    """
    times = set(transaction_times(log))
    if not isinstance(cardinality, str):
        times |= {since for since, _ in cardinality if since is not None}
    open_: dict[Segment, datetime] = {}
    closed: list[Version] = []
    for k in sorted(times):
        now_believed = replay(log, cardinality_at(cardinality, k), known_at=k)
        expire, insert = diff(list(open_), now_believed)
        for seg in expire:
            start = open_.pop(seg)
            if start != k:  # believed for no instant: never visible, not worth a row
                closed.append(Version(seg, start, k))
        for seg in insert:
            open_[seg] = k
    closed.extend(Version(seg, start) for seg, start in open_.items())
    return sorted(closed, key=lambda v: (v.recorded_at, v.segment.sort_key()))
