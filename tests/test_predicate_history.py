"""A predicate redefined with another cardinality, then an erase: the erase rebuilds the
slot with the cardinality each past view had, so only the erased content changes.

Real Kùzu on disk; the oracle is the pure replay (`temporal.replay`, itself checked
against the naive reference model in test_temporal.py) with the schedule the script ran.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest import Memory
from palimpsest.models import Fact
from palimpsest.temporal import LogEntry, cardinality_at, materialise, replay, value_at

from .conftest import Clock, utc

DAY0 = datetime(2020, 1, 1, tzinfo=UTC)
_epochs = itertools.count()


def day(d: float) -> datetime:
    return DAY0 + timedelta(days=d)


def objects(facts: list[Fact]) -> list[str]:
    return sorted(str(f.object) for f in facts)


def redefined(m: Memory, clock: Clock) -> datetime:
    """`plays` many-valued; piano and chess; then `plays` one-valued. A transaction
    time before the redefinition."""
    m.define_predicate("plays", "many")
    clock.tick()
    m.assert_fact("user", "plays", "piano")
    m.assert_fact("user", "plays", "chess")
    before = clock.tick()
    clock.tick()
    m.define_predicate("plays", "one")
    return before


# --- the case, and its variants ------------------------------------------------
def test_erase_keeps_answers_from_before_a_redefinition(mem: Memory, clock: Clock) -> None:
    before = redefined(mem, clock)
    after = clock.tick()
    clock.tick()
    go = mem.assert_fact("user", "plays", "go")
    clock.tick()
    assert objects(mem.facts("user", "plays", known_at=before)) == ["chess", "piano"]
    assert objects(mem.facts("user", "plays", known_at=after)) == ["chess"]
    mem.erase(go.id)
    assert objects(mem.facts("user", "plays", known_at=before)) == ["chess", "piano"]
    assert objects(mem.facts("user", "plays", known_at=after)) == ["chess"]
    assert objects(mem.facts("user", "plays")) == ["chess"]
    # the Fact nodes were rebuilt the same way
    assert objects(mem.facts("user", known_at=before)) == ["chess", "piano"]
    assert [f.status for f in mem.history("user", "plays") if f.id == go.id] == ["erased"]


def test_the_history_survives_a_reopen(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "mem"
    with Memory.open(path, clock=clock, embedder=None) as m:
        before = redefined(m, clock)
        changed = clock.now
    clock.now = changed - timedelta(hours=1)  # a clock set back: the change still counts
    with Memory.open(path, clock=clock, embedder=None) as m:
        go = m.assert_fact("user", "plays", "go")
        assert go.recorded_at == changed
        m.erase(go.id)
        at = changed  # valid time: the clock's default would be before the facts began
        assert objects(m.facts("user", "plays", valid_at=at, known_at=before)) == [
            "chess",
            "piano",
        ]
        assert objects(m.facts("user", "plays", valid_at=at, known_at=changed)) == ["chess"]
    # the erase rewrote the file on close (compaction): the history is still there
    clock.now = changed + timedelta(hours=1)
    with Memory.open(path, clock=clock, embedder=None) as m:
        m.erase(m.assert_fact("user", "plays", "tennis").id)
        assert objects(m.facts("user", "plays", valid_at=at, known_at=before)) == [
            "chess",
            "piano",
        ]


def test_the_history_travels_through_export_and_restore(
    mem: Memory, clock: Clock, tmp_path: Path
) -> None:
    before = redefined(mem, clock)
    clock.tick()
    go = mem.assert_fact("user", "plays", "go")
    clock.tick()
    mem.define_predicate("rides", "one")  # the last change; no fact moves at it
    changed = clock.now
    lines = list(mem.export_lines())
    behind = Clock(before)  # the copy's clock lags: the restored changes still count
    with Memory.open(tmp_path / "copy", clock=behind, embedder=None) as copy:
        copy.restore(lines, namespace="copy")
        assert copy.assert_fact("user", "rides", "bike", namespace="copy").recorded_at == changed
        copy.erase(go.id, namespace="copy")
        got = copy.facts("user", "plays", valid_at=changed, known_at=before, namespace="copy")
        assert objects(got) == ["chess", "piano"]


def test_a_default_predicate_overridden_keeps_its_default_reading(
    mem: Memory, clock: Clock
) -> None:
    assert mem.predicate("lives_in").cardinality == "one"  # from the vocabulary in data/
    mem.assert_fact("user", "lives_in", "Sydney", valid_from=utc("2024-01-01"))
    clock.tick()
    mem.assert_fact("user", "lives_in", "Melbourne", valid_from=utc("2025-01-01"))
    before = clock.tick()
    clock.tick()
    mem.define_predicate("lives_in", "many")
    clock.tick()
    perth = mem.assert_fact("user", "lives_in", "Perth", valid_from=utc("2025-06-01"))
    clock.tick()
    at = utc("2026-01-01")
    assert objects(mem.facts("user", "lives_in", valid_at=at, known_at=before)) == ["Melbourne"]
    mem.erase(perth.id)
    assert objects(mem.facts("user", "lives_in", valid_at=at, known_at=before)) == ["Melbourne"]
    assert objects(mem.facts("user", "lives_in", valid_at=at)) == ["Melbourne", "Sydney"]


def test_a_predicate_never_redefined_reads_as_before(mem: Memory, clock: Clock) -> None:
    # no recorded change of `likes` (like every predicate of a memory older than the
    # history): its definition today counts since always, as erase always did
    mem.assert_fact("user", "likes", "jazz")
    clock.tick()
    tea = mem.assert_fact("user", "likes", "tea")
    k = clock.tick()
    mem.erase(tea.id)
    assert objects(mem.facts("user", "likes", known_at=k)) == ["jazz"]


# --- random scripts through the engine --------------------------------------------------
@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, Clock]]:
    clock = Clock()
    path: Path = tmp_path_factory.mktemp("history") / "mem"
    with Memory.open(path, clock=clock, embedder=None) as m:
        yield m, clock


Step = tuple[Any, ...]


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, list[Step], int]:
    """Writes, one or two redefinitions somewhere in the middle (sometimes at the same
    instant as the write before), then an erase of the assertion at a drawn index."""
    first = draw(st.sampled_from(["one", "many"]))

    def writes(n: int) -> list[Step]:
        out: list[Step] = []
        for _ in range(n):
            kind = draw(st.sampled_from(["assert", "assert", "assert", "end", "retract"]))
            if kind == "assert":
                start = draw(st.one_of(st.none(), st.integers(0, 20)))
                lo = -5 if start is None else start
                end = draw(st.one_of(st.none(), st.integers(lo + 1, lo + 8)))
                out.append(("assert", draw(st.sampled_from("ABC")), start, end))
            elif kind == "end":
                out.append(("end", draw(st.sampled_from("ABC")), draw(st.integers(0, 20))))
            else:
                out.append(("retract", draw(st.integers(0, 50))))
        return out

    steps = writes(draw(st.integers(1, 5)))
    card = first
    for _ in range(draw(st.integers(1, 2))):
        card = "one" if card == "many" else "many"
        steps.append(("define", card, draw(st.booleans())))  # bool: same instant as before
        steps += writes(draw(st.integers(0, 4)))
    return first, steps, draw(st.integers(0, 50))


def _versions(mem: Memory, ns: str) -> set[tuple[Any, ...]]:
    return {
        (f.id, f.object, f.valid_from, f.valid_to, f.recorded_at, f.expired_at)
        for f in mem.history("s", "rel", namespace=ns)
        if f.status != "erased"
    }


def _coalesced(rows: set[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """One belief split at an instant (two writes at one K expired a version and put it
    back) joined into one row: every as-of answer is the same either way."""
    out: list[list[Any]] = []
    for r in sorted(rows, key=lambda r: (r[0], r[1], str(r[2]), str(r[3]), r[4])):
        if out and tuple(out[-1][:4]) == r[:4] and out[-1][5] == r[4]:
            out[-1][5] = r[5]
        else:
            out.append(list(r))
    return [tuple(r) for r in out]


def _expected(entries: list[LogEntry], schedule: Any) -> list[tuple[Any, ...]]:
    return _coalesced(
        {
            (
                v.segment.source,
                v.segment.object,
                v.segment.valid_from,
                v.segment.valid_to,
                v.recorded_at,
                v.expired_at,
            )
            for v in materialise(entries, schedule)
        }
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=scripts())
def test_erase_after_a_redefinition_changes_only_the_erased(
    shared: tuple[Memory, Clock], case: tuple[str, list[Step], int]
) -> None:
    mem, clock = shared
    first, steps, victim = case
    ns = f"h{next(_epochs)}"
    clock.now += timedelta(days=1)
    mem.define_predicate("rel", cardinality=first, namespace=ns)
    schedule: list[tuple[datetime | None, str]] = [(None, first)]
    entries: list[LogEntry] = []
    ticks: list[datetime] = []
    for i, step in enumerate(steps):
        if not (step[0] == "define" and step[2]):
            clock.now += timedelta(minutes=1)
        ticks.append(clock.now)
        if step[0] == "define":
            mem.define_predicate("rel", cardinality=step[1], namespace=ns)
            schedule.append((clock.now, step[1]))
            continue
        if step[0] == "retract":
            live = [j for j, e in enumerate(entries) if e.retracted_at is None]
            if live:
                j = live[step[1] % len(live)]
                mem.retract(entries[j].id, namespace=ns)
                entries[j] = LogEntry(**{**_fields(entries[j]), "retracted_at": clock.now})
            continue
        if step[0] == "assert":
            _, obj, start, end = step
            vf, vt = (None if start is None else day(start)), (None if end is None else day(end))
            f = mem.assert_fact("s", "rel", obj, valid_from=vf, valid_to=vt, namespace=ns)
            entries.append(LogEntry(f.id, "assert", obj, vf, vt, clock.now, i))
        else:
            _, obj, at = step
            f = mem.end_fact("s", "rel", obj, at=day(at), namespace=ns)
            entries.append(LogEntry(f.id, "end", obj, day(at), None, clock.now, i))
    if not entries:
        return
    # before the erase the engine holds exactly the schedule's materialisation
    before = _versions(mem, ns)
    assert _coalesced(before) == _expected(entries, schedule)
    known = [ticks[0] - timedelta(seconds=30)]
    known += sorted({t + timedelta(seconds=d) for t in ticks for d in (0, 30)})
    valid = [day(d / 2) for d in range(-2, 58, 5)]

    def grid() -> dict[tuple[datetime, datetime], tuple[list[str], list[str]]]:
        return {
            (v, k): (
                objects(mem.facts("s", "rel", valid_at=v, known_at=k, namespace=ns)),
                # through the graph's Fact nodes, not the slot's packed state
                objects(
                    [
                        f
                        for f in mem.facts("s", valid_at=v, known_at=k, namespace=ns)
                        if f.predicate == "rel"
                    ]
                ),
            )
            for v in valid
            for k in known
        }

    answers = grid()
    gone = entries[victim % len(entries)]
    clock.now += timedelta(minutes=1)
    mem.erase(gone.id, namespace=ns)
    rest = [e for e in entries if e.id != gone.id]
    after = grid()
    for (v, k), got in after.items():
        card = cardinality_at(schedule, k)  # type: ignore[arg-type]
        want = value_at(replay(rest, card, known_at=k), v)
        assert got == (want, want), ("after", v, k)
        with_it = value_at(replay(entries, card, known_at=k), v)
        assert answers[(v, k)] == (with_it, with_it), ("before", v, k)
        # an answer the erased assertion had no part in is unchanged
        if with_it == want:
            assert got == answers[(v, k)], ("unchanged", v, k)
    # the history is what the log without it materialises to; what was recorded before
    # the erased assertion keeps its content and recording time
    now = _versions(mem, ns)
    assert _coalesced(now) == _expected(rest, schedule)
    assert not any(r[0] == gone.id for r in now)
    early = {r[:5] for r in _coalesced(before) if r[4] < gone.recorded_at}
    assert early <= {r[:5] for r in _coalesced(now)}


def _fields(e: LogEntry) -> dict[str, Any]:
    return {f: getattr(e, f) for f in LogEntry.__slots__}  # type: ignore[attr-defined]
