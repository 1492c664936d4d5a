"""The bounded write path ends exactly as a replay of whole slots: same versions, same
history, same answers, on real Kùzu (issue 27).

A write reads only the windows of the lines it touches and advances them
(engine/append.py); the whole-slot path reads each slot's journal, replays its whole
log at K and rewrites its lines (engine/materialise.py). Random batches of moves,
bounded windows, ends, quarantined claims and new slots go through each in a memory
of its own; every fact, history and as-of answer must agree."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.engine.append import Draft
from palimpsest.engine.materialise import Materialiser, Plan

from .conftest import Clock

PEOPLE = [f"person {i}" for i in range(40)]
PLACES = ["Oslo", "Lima", "Pune", "Kyoto", "Accra"]
LIKES = ["jazz", "tea", "chess", "rain", "maps"]


def _day(r: random.Random) -> datetime:
    return datetime(2020, 1, 1, tzinfo=UTC) + timedelta(days=r.randrange(2000))


def _batch(r: random.Random, people: list[str]) -> list[dict[str, Any]]:
    """Moves, jobs, likes, ends, bounded windows, agent claims (quarantined) and a
    stored subject's first fact of a predicate, several per slot."""
    out: list[dict[str, Any]] = []
    for _ in range(160):
        who = r.choice(people)
        x = r.random()
        if x < 0.25:
            out.append(
                {
                    "subject": who,
                    "predicate": "lives_in",
                    "object": r.choice(PLACES),
                    "valid_from": _day(r),
                }
            )
        elif x < 0.45:
            item = {
                "subject": who,
                "predicate": "likes",
                "object": r.choice(LIKES),
                "valid_from": _day(r),
            }
            if r.random() < 0.4:
                item["valid_to"] = item["valid_from"] + timedelta(days=r.randrange(1, 400))
            out.append(item)
        elif x < 0.55:
            out.append(
                {
                    "subject": who,
                    "predicate": "lives_in",
                    "object": None,
                    "op": "end",
                    "at": _day(r),
                }
            )
        elif x < 0.65:
            out.append(
                {
                    "subject": who,
                    "predicate": "works_at",
                    "object": r.choice(PLACES) + " Labs",
                    "valid_from": _day(r),
                    "author_kind": "agent",
                }
            )
        elif x < 0.8:
            p = r.choice(["speaks", "plays", "owns"])  # often a stored subject's first
            out.append(
                {"subject": who, "predicate": p, "object": r.choice(LIKES), "valid_from": _day(r)}
            )
        else:
            out.append(
                {
                    "subject": f"newcomer {r.randrange(10**6)}",
                    "predicate": "likes",
                    "object": r.choice(LIKES),
                    "valid_from": _day(r),
                }
            )
    return out


def _view(mem: Memory, people: list[str], clock: Clock) -> list[Any]:
    rows: list[Any] = []
    for who in people:
        for f in mem.history(who):
            rows.append(
                (
                    who,
                    f.predicate,
                    f.object,
                    f.valid_from,
                    f.valid_to,
                    f.recorded_at,
                    f.expired_at,
                    f.status,
                    f.quarantined,
                )
            )
        for k in (clock.now - timedelta(seconds=2), clock.now):
            for v in (datetime(2021, 6, 1, tzinfo=UTC), datetime(2024, 6, 1, tzinfo=UTC)):
                rows.append(
                    sorted(
                        (f.predicate, f.object, f.valid_from, f.valid_to)
                        for f in mem.facts(who, valid_at=v, known_at=k, include_quarantined=True)
                    )
                )
    return sorted(map(repr, rows))


class WholeSlots:
    """Every write as a replay of whole slots: the path retract and erase take."""

    def __init__(self, mat: Materialiser) -> None:
        self.mat = mat
        self.writes = 0

    def write(self, d: Draft) -> Plan:
        self.writes += 1
        states = self.mat.states(d.slots, new=d.new)
        claims = []
        for a in d.assertions:
            st = states[a["slot_id"]]
            st.log.append(a)
            if a["quarantined"] and a["op"] == "assert":
                row = self.mat.version_row(a, a["valid_from"], a["valid_to"], d.k)
                claims.append(row)
                st.versions.append(row)
        plan = self.mat.plan(states, d.cards, d.k)
        plan.insert[:0] = claims
        self.mat.apply(
            plan,
            states,
            d.k,
            d.cards,
            assertions=d.assertions,
            entities=d.entities,
        )
        return plan


@pytest.fixture(params=["default pages", "tiny pages"])
def pages(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The layout as shipped, or with pages of a few entries: every line and journal
    of the test then spans several pages, split and rewritten as writes land."""
    if request.param == "tiny pages":
        import palimpsest.graph._lines as lines
        import palimpsest.graph._store_slots as slots

        monkeypatch.setattr(slots, "INLINE", 3)
        monkeypatch.setattr(slots, "PAGE_EVENTS", 5)
        monkeypatch.setattr(lines, "PAGE", 4)
        monkeypatch.setattr(lines, "SPLIT", 2)
    return str(request.param)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_bounded_path_ends_as_whole_slot_replays(tmp_path: Path, seed: int, pages: str) -> None:
    results: list[Any] = []
    for mode in ("bounded", "whole"):
        clock = Clock()
        with Memory.open(tmp_path / mode, clock=clock, embedder=None) as mem:
            whole = WholeSlots(mem._writer._mat)
            if mode == "whole":
                mem._writer._append = whole  # type: ignore[assignment]
            r = random.Random(seed)
            intro = [
                {
                    "subject": p,
                    "predicate": "lives_in",
                    "object": r.choice(PLACES),
                    "valid_from": _day(r),
                }
                for p in PEOPLE
            ]
            written = [mem.assert_many(intro)]
            for i in range(6):
                clock.tick()
                batch = _batch(r, PEOPLE)
                if i % 2:  # single writes too: the fused statement
                    written.append([mem.assert_many([item])[0] for item in batch[:25]])
                else:
                    written.append(mem.assert_many(batch))
            clock.tick()
            facts = [
                [(f.op, f.predicate, f.object, f.status, f.applied, f.quarantined) for f in b]
                for b in written
            ]
            results.append((facts, _view(mem, PEOPLE, clock)))
            assert (whole.writes > 0) == (mode == "whole")
    assert results[0] == results[1]


def test_a_long_line_in_tiny_pages_answers_as_its_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One slot written 150 times, one write a transaction, anywhere in its history
    (moves, bounded stays, ends): its pages split and rewrite; every answer agrees with
    the whole-slot replay at every known-at time."""
    import palimpsest.graph._lines as lines
    import palimpsest.graph._store_slots as slots

    monkeypatch.setattr(slots, "INLINE", 3)
    monkeypatch.setattr(slots, "PAGE_EVENTS", 5)
    monkeypatch.setattr(lines, "PAGE", 4)
    monkeypatch.setattr(lines, "SPLIT", 2)
    views = []
    for mode in ("bounded", "whole"):
        clock = Clock()
        r = random.Random(9)
        marks = []
        with Memory.open(tmp_path / mode, clock=clock, embedder=None, extractor=None) as mem:
            if mode == "whole":
                mem._writer._append = WholeSlots(mem._writer._mat)  # type: ignore[assignment]
            for i in range(150):
                x, day = r.random(), _day(r)
                if x < 0.6:
                    mem.assert_fact("ann", "lives_in", r.choice(PLACES), valid_from=day)
                elif x < 0.8:
                    end = day + timedelta(days=r.randrange(1, 300))
                    mem.assert_fact(
                        "ann", "lives_in", r.choice(PLACES), valid_from=day, valid_to=end
                    )
                else:
                    mem.end_fact("ann", "lives_in", None, at=day)
                clock.tick()
                if i % 25 == 0:
                    marks.append(clock.now)
            assert (
                mode == "whole"
                or mem._store.db.query("MATCH (p:LinePage) RETURN count(*) AS c")[0]["c"] > 10
            )
            view = [
                sorted((f.object, f.valid_from, f.valid_to) for f in mem.facts(
                    "ann", "lives_in", valid_at=_day(random.Random(d)), known_at=k))
                for k in [*marks, clock.now]
                for d in range(40)
            ]  # fmt: skip
            view.append(
                sorted(
                    repr(
                        (f.object, f.valid_from, f.valid_to, f.recorded_at, f.expired_at, f.status)
                    )
                    for f in mem.history("ann")
                )
            )
            views.append(view)
    assert views[0] == views[1]
