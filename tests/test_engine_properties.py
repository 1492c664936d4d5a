"""Random assert / end / retract / erase sequences through the real engine (on each store:
Kùzu on disk and PostgreSQL), every point query checked against the naive reference model."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest import Memory

from .conftest import Places
from .reference import INF, NEG, Op, believed_objects

pytestmark = pytest.mark.every_store

DAY0 = datetime(2020, 1, 1, tzinfo=UTC)
_epochs = itertools.count()


def day(d: float) -> datetime:
    return DAY0 + timedelta(days=d)


class _Clock:
    now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture(scope="module")
def shared(module_places: Places) -> Iterator[tuple[Memory, _Clock]]:
    clock = _Clock()
    with Memory.open(module_places(), clock=clock) as m:
        yield m, clock


@st.composite
def scripts(draw: st.DrawFn) -> tuple[str, list[tuple]]:  # type: ignore[type-arg]
    cardinality = draw(st.sampled_from(["one", "many"]))
    steps: list[tuple] = []  # type: ignore[type-arg]
    for _ in range(draw(st.integers(1, 9))):
        kind = draw(st.sampled_from(["assert", "assert", "assert", "end", "retract", "erase"]))
        if kind == "assert":
            start = draw(st.one_of(st.none(), st.integers(0, 20)))
            lo = -5 if start is None else start
            end = draw(st.one_of(st.none(), st.integers(lo + 1, lo + 8)))
            steps.append(("assert", draw(st.sampled_from("ABC")), start, end))
        elif kind == "end":
            objs = list("ABC") + ([None] if cardinality == "one" else [])
            steps.append(("end", draw(st.sampled_from(objs)), draw(st.integers(0, 20))))
        else:
            steps.append((kind, draw(st.integers(0, 50))))
    return cardinality, steps


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=scripts())
def test_engine_matches_reference(shared: tuple[Memory, _Clock], case: tuple) -> None:  # type: ignore[type-arg]
    mem, clock = shared
    cardinality, steps = case
    ns = f"p{next(_epochs)}"  # a fresh namespace per example: isolation is part of the claim
    # every example gets its own stretch of transaction time, after all earlier ones
    base = clock.now + timedelta(days=1)
    mem.define_predicate("rel", cardinality=cardinality, namespace=ns)
    ops: list[Op] = []
    ids: list[str] = []
    ticks: list[datetime] = []
    for i, step in enumerate(steps):
        clock.now = base + timedelta(minutes=i)
        ticks.append(clock.now)
        if step[0] == "assert":
            _, obj, start, end = step
            f = mem.assert_fact(
                "s",
                "rel",
                obj,
                valid_from=None if start is None else day(start),
                valid_to=None if end is None else day(end),
                namespace=ns,
            )
            ops.append(
                Op("assert", obj, NEG if start is None else start, INF if end is None else end, i)
            )
            ids.append(f.id)
        elif step[0] == "end":
            _, obj, at = step
            f = mem.end_fact("s", "rel", obj, at=day(at), namespace=ns)
            ops.append(Op("end", obj, at, INF, i))
            ids.append(f.id)
        else:
            live = [
                j
                for j, o in enumerate(ops)
                if not o.erased and (step[0] == "erase" or o.retracted is None)
            ]
            if not live:
                continue
            j = live[step[1] % len(live)]
            if step[0] == "retract":
                mem.retract(ids[j], namespace=ns)
                ops[j].retracted = i
            else:
                mem.erase(ids[j], namespace=ns)
                ops[j].erased = True
    known = [(-1, base - timedelta(seconds=30))]
    for i, t in enumerate(ticks):
        known += [(i, t), (i, t + timedelta(seconds=30))]
    for k_index, k in known:
        for v in [d / 2 for d in range(-2, 58, 3)]:
            got = {
                f.object for f in mem.facts("s", "rel", valid_at=day(v), known_at=k, namespace=ns)
            }
            want = believed_objects(ops, cardinality, v, k_index)
            assert got == want, (k_index, v)
            # the same question through the graph (Fact nodes), not the slot's packed state
            via_nodes = {
                f.object
                for f in mem.facts("s", valid_at=day(v), known_at=k, namespace=ns)
                if f.predicate == "rel"
            }
            assert via_nodes == want, ("nodes", k_index, v)
    # nothing leaks into the default namespace
    assert mem.facts("s", "rel", valid_at=day(5)) == []
