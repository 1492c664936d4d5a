"""A large write that reads its stored slots' states on a second thread ends exactly as
one that reads them in line: same versions, same history, same answers."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.engine.read_ahead import ReadAhead

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


@pytest.mark.parametrize("seed", [1, 2])
def test_reading_ahead_changes_nothing(tmp_path: Path, seed: int) -> None:
    results: list[Any] = []
    used: list[int] = []
    for mode, min_slots in (("ahead", 1), ("in line", 10**9)):
        clock = Clock()
        with Memory.open(tmp_path / mode, clock=clock, embedder=None) as mem:
            mem._writer.ahead = ReadAhead(mem._store, min_slots=min_slots)
            start = mem._writer.ahead.start

            def counted(ids: Any, start: Any = start) -> Any:
                job = start(ids)
                used.append(job is not None)
                return job

            mem._writer.ahead.start = counted  # type: ignore[method-assign]
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
            for _ in range(3):
                clock.tick()
                written.append(mem.assert_many(_batch(r, PEOPLE)))
            clock.tick()
            facts = [
                [(f.op, f.predicate, f.object, f.status, f.applied, f.quarantined) for f in b]
                for b in written
            ]
            results.append((facts, _view(mem, PEOPLE, clock)))
    assert any(used[:4]), "the first memory never read ahead"
    assert not any(used[4:]), "the second memory read ahead"
    assert results[0] == results[1]
