"""The pure temporal rules, checked against the naive reference model."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.temporal import (
    LogEntry,
    Segment,
    cardinality_at,
    diff,
    materialise,
    replay,
    schedule_of,
    value_at,
)
from palimpsest.temporal._status import version_status

from .reference import INF, NEG, Op, believed_objects

DAY0 = datetime(2020, 1, 1, tzinfo=UTC)
K0 = datetime(2030, 1, 1, tzinfo=UTC)


def day(d: float) -> datetime:
    return DAY0 + timedelta(days=d)


def tick(i: int) -> datetime:
    return K0 + timedelta(minutes=i)


@st.composite
def logs(draw: st.DrawFn, cardinality: str) -> list[Op]:
    ops: list[Op] = []
    for i in range(draw(st.integers(1, 10))):
        kind = draw(st.sampled_from(["assert", "assert", "assert", "end"]))
        if kind == "assert":
            obj: str | None = draw(st.sampled_from("ABC"))
            start = draw(st.one_of(st.none(), st.integers(0, 20)))
            lo = -5 if start is None else start
            end = draw(st.one_of(st.none(), st.integers(lo + 1, lo + 8)))
            ops.append(
                Op("assert", obj, NEG if start is None else start, INF if end is None else end, i)
            )
        else:
            choices = list("ABC") + ([None] if cardinality == "one" else [])
            obj = draw(st.sampled_from(choices))
            ops.append(Op("end", obj, draw(st.integers(0, 20)), INF, i))
    # some are later retracted, at a tick after they were recorded
    n = len(ops)
    for o in ops:
        if draw(st.integers(0, 4)) == 0:
            o.retracted = draw(st.integers(o.recorded + 1, n + 1))
    return ops


def to_entries(ops: list[Op]) -> list[LogEntry]:
    return [
        LogEntry(
            id=f"a{i}",
            op="assert" if o.kind == "assert" else "end",
            object=o.obj,
            valid_from=None if o.start == NEG else day(o.start),
            valid_to=None if o.end == INF else day(o.end),
            recorded_at=tick(o.recorded),
            seq=i,
            retracted_at=None if o.retracted is None else tick(o.retracted),
        )
        for i, o in enumerate(ops)
    ]


POINTS = [d / 2 for d in range(-4, 60)]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["one", "many"]).flatmap(lambda c: st.tuples(st.just(c), logs(c))))
def test_replay_matches_reference(case: tuple[str, list[Op]]) -> None:
    cardinality, ops = case
    entries = to_entries(ops)
    for k in range(-1, len(ops) + 2):
        segs = replay(entries, cardinality, known_at=tick(k))  # type: ignore[arg-type]
        for v in POINTS:
            want = believed_objects(ops, cardinality, v, k)
            assert set(value_at(segs, day(v))) == want, (k, v)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["one", "many"]).flatmap(lambda c: st.tuples(st.just(c), logs(c))))
def test_materialised_history_answers_every_known_at(case: tuple[str, list[Op]]) -> None:
    cardinality, ops = case
    versions = materialise(to_entries(ops), cardinality)  # type: ignore[arg-type]
    for k in range(-1, len(ops) + 2):
        believed = [
            v.segment
            for v in versions
            if v.recorded_at <= tick(k) and (v.expired_at is None or v.expired_at > tick(k))
        ]
        for v in POINTS:
            assert set(value_at(believed, day(v))) == believed_objects(ops, cardinality, v, k)


def test_segments_never_overlap_for_one() -> None:
    ops = [
        Op("assert", "A", NEG, INF, 0),
        Op("assert", "B", 5, 10, 1),
        Op("assert", "C", 7, INF, 2),
    ]
    segs = replay(to_entries(ops), "one", known_at=tick(5))
    spans = sorted((s.valid_from or DAY0 - timedelta(days=999), s.valid_to) for s in segs)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end is not None and end <= start


def test_diff_only_touches_changes() -> None:
    a = Segment("x", day(0), None, "a1")
    b = Segment("y", day(1), None, "a2")
    c = Segment("x", day(0), day(1), "a1")
    assert diff([a], [a]) == ([], [])
    assert diff([a], [c, b]) == ([a], [c, b])


def test_status_reads() -> None:
    now = day(100)
    kw = {"quarantined": False, "known_at": now, "valid_at": now}
    assert version_status(valid_to=None, expired_at=None, retracted_at=None, **kw) == "current"
    assert version_status(valid_to=day(5), expired_at=None, retracted_at=None, **kw) == "ended"
    assert version_status(valid_to=None, expired_at=day(3), retracted_at=None, **kw) == "superseded"
    assert (
        version_status(valid_to=None, expired_at=day(3), retracted_at=day(3), **kw) == "retracted"
    )
    assert (
        version_status(
            valid_to=None,
            expired_at=None,
            retracted_at=None,
            quarantined=True,
            known_at=now,
            valid_at=now,
        )
        == "quarantined"
    )


# --- a cardinality that changes over transaction time (define_predicate) -----------------
def half(j: int) -> datetime:
    """Change times fall on ticks (ties with writes) or between them."""
    return K0 + timedelta(seconds=30 * j)


@st.composite
def scheduled(draw: st.DrawFn) -> tuple[list[LogEntry], list[tuple[datetime, int, str]]]:
    """A log and cardinality changes `(at, tie-break, cardinality)`, ties with writes
    broken either way (a redefinition just before or just after a write at one K)."""
    ops = draw(logs(draw(st.sampled_from(["one", "many"]))))
    n = len(ops)
    changes = [
        (half(draw(st.integers(-2, 2 * n + 4))), draw(st.integers(0, 1)), c)
        for c in draw(st.lists(st.sampled_from(["one", "many"]), max_size=4))
    ]
    return to_entries(ops), changes


def simulate(
    entries: list[LogEntry], initial: str, changes: list[tuple[datetime, int, str]]
) -> tuple[list[tuple[Segment, datetime, datetime | None]], list[tuple[datetime | None, str]]]:
    """The runtime, event by event: each write and each redefinition replays the slot
    at its K with the cardinality then in force and diffs against what is believed (a
    version written and overwritten at one K leaves no row). Also the schedule it ran."""
    events: list[tuple[datetime, int, int, str, object]] = []
    for i, e in enumerate(entries):
        events.append((e.recorded_at, 1, e.seq, "record", i))
        if e.retracted_at is not None:
            events.append((e.retracted_at, 1, e.seq, "retract", i))
    for j, (at, tie, card) in enumerate(changes):
        events.append((at, 2 * tie, j, "define", card))  # 0: before the writes at K, 2: after
    events.sort(key=lambda ev: ev[:3])
    card = initial
    schedule: list[tuple[datetime | None, str]] = [(None, initial)]
    known: dict[int, LogEntry] = {}
    rows: list[list] = []  # type: ignore[type-arg]
    for k, _, _, kind, what in events:
        if kind == "define":
            card = str(what)
            schedule.append((k, card))
        elif kind == "record":
            e = entries[int(str(what))]
            known[int(str(what))] = LogEntry(**{**_fields(e), "retracted_at": None})
        else:
            known[int(str(what))] = entries[int(str(what))]
        now = replay(list(known.values()), card, known_at=k)  # type: ignore[arg-type]
        believed = [r[0] for r in rows if r[2] is None]
        gone, new = diff(believed, now)
        for seg in gone:
            row = next(r for r in rows if r[0] == seg and r[2] is None)
            if row[1] == k:
                rows.remove(row)
            else:
                row[2] = k
        rows += [[seg, k, None] for seg in new]
    return [(r[0], r[1], r[2]) for r in rows], schedule


def coalesced(
    rows: Iterable[tuple[Segment, datetime, datetime | None]],
) -> list[tuple[tuple[datetime, str, datetime, str], datetime, datetime | None]]:
    """Rows with one belief split at an instant joined up: two writes at one K may expire
    a version and put it back (two rows), where a replay at K never saw it go (one row).
    Every as-of answer is the same either way."""
    out: list[list] = []  # type: ignore[type-arg]
    for seg, rec, exp in sorted(rows, key=lambda r: (r[0].sort_key(), r[1])):
        if out and out[-1][0] == seg.sort_key() and out[-1][2] == rec:
            out[-1][2] = exp
        else:
            out.append([seg.sort_key(), rec, exp])
    return [(a, b, c) for a, b, c in out]


def _fields(e: LogEntry) -> dict[str, object]:
    return {f: getattr(e, f) for f in LogEntry.__slots__}  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["one", "many"]), scheduled())
def test_materialise_with_a_schedule_is_the_runtime_step_by_step(
    initial: str, case: tuple[list[LogEntry], list[tuple[datetime, int, str]]]
) -> None:
    entries, changes = case
    want, schedule = simulate(entries, initial, changes)
    got = materialise(entries, schedule)  # type: ignore[arg-type]
    assert coalesced((v.segment, v.recorded_at, v.expired_at) for v in got) == coalesced(want)
    # every view known at K reads with the cardinality in force at K
    for k in sorted({e.recorded_at for e in entries} | {at for at, _, _ in changes}):
        believed = [
            v.segment
            for v in got
            if v.recorded_at <= k and (v.expired_at is None or v.expired_at > k)
        ]
        card = cardinality_at(schedule, k)  # type: ignore[arg-type]
        assert sorted(believed, key=Segment.sort_key) == replay(entries, card, known_at=k)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["one", "many"]).flatmap(lambda c: st.tuples(st.just(c), logs(c))))
def test_a_schedule_that_never_changes_is_a_plain_cardinality(
    case: tuple[str, list[Op]],
) -> None:
    cardinality, ops = case
    entries = to_entries(ops)
    plain = materialise(entries, cardinality)  # type: ignore[arg-type]
    assert materialise(entries, [(None, cardinality)]) == plain  # type: ignore[list-item]
    # a redefinition to the same cardinality changes nothing either
    assert materialise(entries, [(None, cardinality), (tick(2), cardinality)]) == plain  # type: ignore[list-item]


def test_cardinality_at_and_schedule_of() -> None:
    steps = schedule_of(
        [(tick(3), "one", "many"), (tick(3), "many", "one"), (tick(5), "one", "many")], "one"
    )
    assert steps == [(None, "many"), (tick(3), "one"), (tick(3), "many"), (tick(5), "one")]
    assert cardinality_at(steps, tick(0)) == "many"
    assert cardinality_at(steps, tick(3)) == "many"  # of two changes at one K the last counts
    assert cardinality_at(steps, tick(4)) == "many"
    assert cardinality_at(steps, tick(5)) == "one"
    assert cardinality_at("one", tick(0)) == "one"
    # no recorded change (a memory older than the history): today's definition, always
    assert schedule_of([], "one") == [(None, "one")]
    # a name first defined by its first change: that definition, since always
    assert schedule_of([(tick(1), "many", None)], "many") == [(None, "many"), (tick(1), "many")]
    # the case: many, then one at K; a view before K reads `many`
    log = [
        LogEntry("piano", "assert", "piano", day(0), None, tick(0), 0),
        LogEntry("chess", "assert", "chess", day(1), None, tick(1), 1),
        LogEntry("go", "assert", "go", day(2), None, tick(3), 2),
    ]
    history = materialise(log[:2], [(None, "many"), (tick(2), "one")])  # go erased
    before = [
        v.segment
        for v in history
        if v.recorded_at <= tick(1) and (v.expired_at or tick(99)) > tick(1)
    ]
    assert value_at(before, day(5)) == ["chess", "piano"]
