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
class Start:
    """One start of a line's believed timeline: from `at` until the next start, `object`
    holds, said by assertion `source`. `object` None is an absence: an explicit end, or
    the gap a bounded put restores (its `source` may then be None). Absences are part of
    the timeline: they bound later open-ended assertions.
    """

    at: datetime | None  # None = since always
    object: str | None
    source: str | None


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

    @classmethod
    def of(cls, run: Iterable[Start]) -> _Timeline:
        tl = cls()
        for s in run:
            value = _Absent(s.source) if s.object is None else _Present(s.object, s.source or "")
            tl._set(_key(s.at), value)
        return tl

    def run(self) -> list[Start]:
        """The starts in order, as `Start`s."""
        out = []
        for sk in self._order:
            k = _unsort(sk)
            v = self.starts[k]
            if isinstance(v, _Present):
                out.append(Start(k[1], v.object, v.source))
            else:
                out.append(Start(k[1], None, v.source))
        return out

    def segments(self) -> list[Segment]:
        return segments_of(self.run(), None)


def segments_of(run: Sequence[Start], after: datetime | None) -> list[Segment]:
    """The versions a run of consecutive starts shows, the last one lasting until `after`
    (the next start past the run; None: there is none, it lasts forever).

    >>> segments_of([Start(t(2024), "sydney", "a1"), Start(t(2025), None, "e1")], None)
    [Segment(object='sydney', valid_from=..., valid_to=datetime(2025...), source='a1')]
    """
    out: list[Segment] = []
    for i, s in enumerate(run):
        if s.object is None:
            continue
        end = run[i + 1].at if i + 1 < len(run) else after
        source = s.source or ""  # a present start always has its assertion
        prev = out[-1] if out else None
        if prev and prev.valid_to == s.at and (prev.object, prev.source) == (s.object, source):
            out[-1] = Segment(s.object, prev.valid_from, end, source)
        else:
            out.append(Segment(s.object, s.at, end, source))
    return out


def _apply(tl: _Timeline, e: LogEntry) -> None:
    """One believed entry applied to one line's timeline."""
    if e.op == "assert":
        assert e.object is not None
        tl.put(e.valid_from, e.valid_to, _Present(e.object, e.id))
        return
    cur = tl.at(e.valid_from)
    if isinstance(cur, _Present) and e.object in (None, cur.object):
        tl.put(e.valid_from, None, _Absent(e.id))


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
    lines = _fold(log, cardinality, known_at)
    return sorted((s for tl in lines.values() for s in tl.segments()), key=Segment.sort_key)


def _fold(
    log: Sequence[LogEntry], cardinality: Cardinality, known_at: datetime
) -> dict[str | None, _Timeline]:
    """The slot's lines after every entry believed at `known_at`, in recording order."""
    lines: dict[str | None, _Timeline] = {}

    def line(obj: str | None) -> _Timeline:
        return lines.setdefault(None if cardinality == "one" else obj, _Timeline())

    for e in believed(log, known_at):
        if e.op == "assert" or e.object is not None:
            _apply(line(e.object), e)
            continue
        for tl in lines.values():  # an end of whatever holds: every line of the slot
            _apply(tl, e)
    return lines


def timelines(
    log: Sequence[LogEntry], cardinality: Cardinality, *, known_at: datetime
) -> dict[str | None, list[Start]]:
    """Each line's believed starts at `known_at`: the slot's one line (key None) for a
    `one` predicate, a line per object for `many`. What `replay` shows, with its absences.

    >>> timelines(log, "one", known_at=t(2025))
    {None: [Start(at=datetime(2024...), object='sydney', source='a1')]}
    """
    lines = _fold(log, cardinality, known_at)
    return {k: tl.run() for k, tl in lines.items() if tl.starts}


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
