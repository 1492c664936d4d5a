"""Replay one slot's assertion log into the timeline believed at a transaction time.

    >>> from datetime import datetime, UTC
    >>> t = lambda y: datetime(y, 1, 1, tzinfo=UTC)
    >>> log = [LogEntry("a1", "assert", "sydney", t(2024), None, t(2025), 1)]
    >>> replay(log, "one", known_at=t(2025))
    [Segment(object='sydney', valid_from=datetime..., valid_to=None, source='a1')]

A slot is (subject, predicate). For `one` predicates the whole slot is one
timeline; for `many` predicates each object has its own timeline, which is the
key `(subject, predicate, object)` of DESIGN.md. Each timeline is a map from a
start time to what holds from there until the next start (XTDB v1's entity
history): putting an open-ended value only sets its start, so it naturally
lasts until the next start; a bounded put overwrites every start inside its
window and restores, at its end, whatever held there before.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

Op = Literal["assert", "end"]
_NEG_INF = datetime.min.replace(tzinfo=UTC)
_POS_INF = datetime.max.replace(tzinfo=UTC)
Cardinality = Literal["one", "many"]


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One assertion as the replay sees it (ids only, no content)."""

    id: str
    op: Op
    object: str | None  # None only for "end": whatever holds
    valid_from: datetime | None  # None = since always
    valid_to: datetime | None  # None = open-ended
    recorded_at: datetime
    seq: int  # recording order among equal recorded_at
    retracted_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    """A believed version: `object` holds over [valid_from, valid_to)."""

    object: str
    valid_from: datetime | None
    valid_to: datetime | None
    source: str  # the assertion it comes from

    def sort_key(self) -> tuple[datetime, str, datetime, str]:
        """Order by start ("since always" first), then object, end, source."""
        start = self.valid_from if self.valid_from is not None else _NEG_INF
        end = self.valid_to if self.valid_to is not None else _POS_INF
        return (start, self.object, end, self.source)


@dataclass(frozen=True, slots=True)
class _Present:
    object: str
    source: str


@dataclass(frozen=True, slots=True)
class _Absent:
    """An explicit end ("no longer"), or the gap a bounded put restores."""

    source: str | None


_Value = _Present | _Absent
_Key = tuple[int, datetime | None]


def _key(t: datetime | None) -> _Key:
    return (0, None) if t is None else (1, t)


def _sortkey(k: _Key) -> tuple[int, datetime]:
    # "since always" sorts before every finite start
    return (k[0], k[1] if k[1] is not None else _NEG_INF)


def _unsort(sk: tuple[int, datetime]) -> _Key:
    return (0, None) if sk[0] == 0 else (1, sk[1])


class _Timeline:
    """Starts kept in order beside the map (a much-described slot has thousands: a
    scan per put made a replay quadratic, 1-3 s a `remember` at 100k episodes)."""

    def __init__(self) -> None:
        self.starts: dict[_Key, _Value] = {}
        self._order: list[tuple[int, datetime]] = []  # sort keys of `starts`, ascending

    def _set(self, k: _Key, value: _Value) -> None:
        if k not in self.starts:
            bisect.insort(self._order, _sortkey(k))
        self.starts[k] = value

    def at(self, t: datetime | None) -> _Value | None:
        i = bisect.bisect_right(self._order, _sortkey(_key(t)))  # the last start <= t
        return None if i == 0 else self.starts[_unsort(self._order[i - 1])]

    def put(self, start: datetime | None, end: datetime | None, value: _Value) -> None:
        if end is None:
            self._set(_key(start), value)
            return
        end_key = _key(end)
        resume = self.starts.get(end_key) or self.at(end) or _Absent(None)
        lo = bisect.bisect_left(self._order, _sortkey(_key(start)))
        hi = bisect.bisect_left(self._order, _sortkey(end_key))
        for sk in self._order[lo:hi]:  # every start inside [start, end)
            del self.starts[_unsort(sk)]
        del self._order[lo:hi]
        self._set(_key(start), value)
        if end_key not in self.starts:
            self._set(end_key, resume)

    def segments(self) -> list[Segment]:
        keys = [_unsort(sk) for sk in self._order]
        out: list[Segment] = []
        for i, k in enumerate(keys):
            v = self.starts[k]
            if not isinstance(v, _Present):
                continue
            end = keys[i + 1][1] if i + 1 < len(keys) else None
            prev = out[-1] if out else None
            if (
                prev
                and prev.valid_to == k[1]
                and (prev.object, prev.source) == (v.object, v.source)
            ):
                out[-1] = Segment(v.object, prev.valid_from, end, v.source)
            else:
                out.append(Segment(v.object, k[1], end, v.source))
        return out


def believed(log: Iterable[LogEntry], known_at: datetime) -> list[LogEntry]:
    """The entries that count at transaction time `known_at`, in recording order."""
    live = [
        e
        for e in log
        if e.recorded_at <= known_at and (e.retracted_at is None or e.retracted_at > known_at)
    ]
    return sorted(live, key=lambda e: (e.recorded_at, e.seq))


def replay(
    log: Sequence[LogEntry], cardinality: Cardinality, *, known_at: datetime
) -> list[Segment]:
    """The versions of one slot believed at `known_at`, sorted."""
    if len(log) == 1:
        lone = _lone(log[0], known_at)
        if lone is not None:
            return lone
    lines: dict[str | None, _Timeline] = {}

    def line(obj: str | None) -> _Timeline:
        return lines.setdefault(None if cardinality == "one" else obj, _Timeline())

    for e in believed(log, known_at):
        if e.op == "assert":
            assert e.object is not None
            line(e.object).put(e.valid_from, e.valid_to, _Present(e.object, e.id))
            continue
        targets = list(lines.values()) if e.object is None else [line(e.object)]
        for tl in targets:
            cur = tl.at(e.valid_from)
            if isinstance(cur, _Present) and e.object in (None, cur.object):
                tl.put(e.valid_from, None, _Absent(e.id))
    return sorted((s for tl in lines.values() for s in tl.segments()), key=Segment.sort_key)


def _lone(e: LogEntry, known_at: datetime) -> list[Segment] | None:
    """What `replay` makes of a log of one entry (every brand-new slot of a bulk write),
    without building timelines; None where the general path must decide. One believed
    put over a proper window is that window; an end finds nothing to end."""
    if e.recorded_at > known_at or (e.retracted_at is not None and e.retracted_at <= known_at):
        return []
    if e.op != "assert":
        return []
    assert e.object is not None
    if e.valid_to is not None and e.valid_from is not None and e.valid_to <= e.valid_from:
        return None  # an inverted window: the timeline rules decide what it means
    return [Segment(e.object, e.valid_from, e.valid_to, e.id)]


def value_at(segments: Iterable[Segment], valid_at: datetime) -> list[str]:
    """Objects whose segment covers `valid_at` (a point query over a replay)."""
    return sorted(
        s.object
        for s in segments
        if (s.valid_from is None or s.valid_from <= valid_at)
        and (s.valid_to is None or valid_at < s.valid_to)
    )
