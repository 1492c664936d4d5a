"""A write applied to the window it touches equals a replay of the whole log (issue 27).

The write path stores each line's believed starts and, for a new write, reads only the
window `reach` names; these properties check that the window holds all a write needs.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.temporal import (
    LogEntry,
    Start,
    advance,
    reach,
    replay,
    segments_of,
    timelines,
    window_of,
)

from .reference import Op
from .test_temporal import logs, tick, to_entries


def _lines_of(entry: LogEntry, cardinality: str, known: dict[str | None, list[Start]]) -> list:
    """The lines an entry touches (an end of whatever holds: every line of a `many` slot)."""
    if cardinality == "one":
        return [None]
    if entry.op == "end" and entry.object is None:
        return list(known)
    return [entry.object]


def _advance_all(
    prefix: list[LogEntry], suffix: list[LogEntry], cardinality: str, k
) -> dict[str | None, list[Start]]:
    """The suffix (recorded at `k`, after the prefix) applied window by window."""
    lines = timelines(prefix, cardinality, known_at=k)  # type: ignore[arg-type]
    touched: dict[str | None, list[LogEntry]] = {}
    for e in suffix:
        for line in _lines_of(e, cardinality, lines):
            touched.setdefault(line, []).append(e)
            lines.setdefault(line, [])
    for line, entries in touched.items():
        run = lines[line]
        i, j = window_of(run, reach(entries))
        after = run[j].at if j < len(run) else None
        step = advance(run[i:j], after, entries)
        # the segments of the window stitch into the line's: nothing outside moved
        lines[line] = run[:i] + step.run + run[j:]
    return {k: v for k, v in lines.items() if v}


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["one", "many"]).flatmap(
        lambda c: st.tuples(st.just(c), logs(c), logs(c), st.integers(0, 3))
    )
)
def test_a_window_step_equals_the_whole_replay(case: tuple[str, list[Op], list[Op], int]) -> None:
    cardinality, first, second, size = case
    # the prefix, its retractions included (all at or before `before`); the suffix: a write
    # of a few entries at one later transaction time (retract is not an append)
    prefix = to_entries(first)
    before = tick(len(first) + 4)
    k_write = tick(len(first) + 5)
    suffix = [
        LogEntry(
            id=f"w{i}",
            op=e.op,
            object=e.object,
            valid_from=e.valid_from,
            valid_to=e.valid_to,
            recorded_at=k_write,
            seq=1000 + i,
        )
        for i, e in enumerate(to_entries(second)[: size + 1])
    ]
    got = _advance_all(prefix, suffix, cardinality, before)
    want = timelines(prefix + suffix, cardinality, known_at=k_write)  # type: ignore[arg-type]
    assert got == want
    segs = sorted(
        (s for run in got.values() for s in segments_of(run, None)), key=lambda s: s.sort_key()
    )
    assert segs == replay(prefix + suffix, cardinality, known_at=k_write)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["one", "many"]).flatmap(lambda c: st.tuples(st.just(c), logs(c))))
def test_step_gone_and_new_are_the_version_changes(case: tuple[str, list[Op]]) -> None:
    """Writing one entry at a time, `gone`/`new` of each step turn the believed versions
    before it into those after it, exactly as a full replay diff would."""
    cardinality, ops = case
    entries = [
        LogEntry(e.id, e.op, e.object, e.valid_from, e.valid_to, tick(i), i)
        for i, e in enumerate(to_entries(ops))
    ]
    believed: set = set()
    for i, e in enumerate(entries):
        lines = timelines(entries[:i], cardinality, known_at=tick(i))  # type: ignore[arg-type]
        for line in _lines_of(e, cardinality, lines):
            run = lines.get(line, [])
            i0, j0 = window_of(run, reach([e]))
            step = advance(run[i0:j0], run[j0].at if j0 < len(run) else None, [e])
            assert not set(step.gone) - believed
            believed = (believed - set(step.gone)) | set(step.new)
        assert believed == set(replay(entries[: i + 1], cardinality, known_at=tick(i)))  # type: ignore[arg-type]


def test_reach_spans_every_edge() -> None:
    k = tick(0)
    a = LogEntry("a", "assert", "x", tick(5), tick(9), k, 1)
    b = LogEntry("b", "end", None, tick(2), None, k, 2)
    r = reach([a, b])
    assert (r.lo, r.hi) == (tick(2), tick(9))
    assert reach([LogEntry("c", "assert", "x", None, None, k, 3)]).lo is None
