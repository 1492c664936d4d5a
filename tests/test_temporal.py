"""The pure temporal rules, checked against the naive reference model."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.temporal import LogEntry, Segment, diff, materialise, replay, value_at
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
