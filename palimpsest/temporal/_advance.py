"""A write at the newest transaction time, applied to the part of a timeline it touches.

    >>> lo, hi = reach(entries)                    # the valid times the entries touch
    >>> step = advance(window, after, entries)     # window: the starts from before lo to hi
    >>> step.run, step.gone, step.new              # the window's new starts; versions out, in

A write is recorded at a transaction time K no earlier than any before it, so in
recording order it comes last: the timeline believed at K is the one believed
before, with the write's entries applied on top (`replay` is a fold). An entry
only changes the starts inside its own valid window and reads the value at its
edges, so it needs only the *window* of the line's starts from the last one
strictly before `lo` up to the last one at or before `hi` (`reach`), plus the
first start after them (`after`, where the window's last version ends). The
result is the same as replaying the whole log (the property tests compare them),
at a cost bounded by the window, not by the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from ._history import diff
from ._replay import LogEntry, Segment, Start, _apply, _Timeline, segments_of

_NEG_INF = datetime.min.replace(tzinfo=UTC)


def _k(t: datetime | None) -> datetime:
    return _NEG_INF if t is None else t


class Timed(Protocol):
    """Anything placed on a timeline by its start (a `Start`, or a store's row of one)."""

    @property
    def at(self) -> datetime | None: ...


@dataclass(frozen=True, slots=True)
class Reach:
    """The valid times a write's entries touch: [lo, hi], None = since always."""

    lo: datetime | None
    hi: datetime | None


@dataclass(frozen=True, slots=True)
class Step:
    """What entries do to a window: its new starts, and the versions that go and come."""

    run: list[Start]
    gone: list[Segment]
    new: list[Segment]


def reach(entries: Sequence[LogEntry]) -> Reach:
    """The span of valid time whose starts `entries` may read or change.

    >>> reach([LogEntry("a1", "assert", "x", t(2024), t(2025), k, 1)])
    Reach(lo=datetime(2024...), hi=datetime(2025...))
    """
    if not entries:
        raise ValueError("reach of no entries")
    edges = [_k(e.valid_from) for e in entries]
    edges += [e.valid_to for e in entries if e.valid_to is not None]
    lo, hi = min(edges), max(edges)
    return Reach(None if lo == _NEG_INF else lo, None if hi == _NEG_INF else hi)


def in_window(at: datetime | None, r: Reach) -> bool:
    """Whether a start at `at` lies in [lo, hi] (the window's part past its first start)."""
    return _k(r.lo) <= _k(at) <= _k(r.hi)


def window_of(run: Sequence[Timed], r: Reach) -> tuple[int, int]:
    """The slice `run[i:j]` that is the window for `r` in a whole line's sorted starts,
    and `run[j]` (if any) is the start after it. A store with every start at hand uses
    it; one that keeps them in pages fetches the same slice."""
    lo, hi = _k(r.lo), _k(r.hi)
    i = 0
    while i < len(run) and _k(run[i].at) < lo:
        i += 1
    i = max(0, i - 1)  # the last start strictly before lo
    j = i
    while j < len(run) and _k(run[j].at) <= hi:
        j += 1
    return i, j


def advance(window: Sequence[Start], after: datetime | None, entries: Sequence[LogEntry]) -> Step:
    """Apply believed `entries` (in recording order, all recorded after every start of
    the line) to a window of one line's starts.

    `window` must hold every start of the line from the last one strictly before
    `reach(entries).lo` through the last one at or before `reach(entries).hi`, in
    order; `after` is the line's first start past them (None: there is none).
    """
    tl = _Timeline.of(window)
    for e in entries:
        _apply(tl, e)
    run = tl.run()
    gone, new = diff(segments_of(window, after), segments_of(run, after))
    return Step(run, gone, new)
