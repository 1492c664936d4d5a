"""The in-process name map (palimpsest/_entity_map.py): exact after every path that changes
names (merge, unmerge, erase, rollbacks), and invisible in results: each test runs with the
namespace loaded whole at the first lookup, with every name looked up in the store, and with
the preload refused for size (`MAX_KEYS`)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.engine import name_map as _entity_map
from palimpsest.models import Fact

from .conftest import Clock

V = "2025-01-01T00:00:00Z"
# (PRELOAD_AFTER, MAX_KEYS): load at the first miss; never; try at once but find it too big
EVERY = {"preloaded": (0, 10**9), "looked_up": (10**9, 10**9), "capped": (0, -1)}


def _mode(monkeypatch: pytest.MonkeyPatch, label: str) -> None:
    after, most = EVERY[label]
    monkeypatch.setattr(_entity_map, "PRELOAD_AFTER", after)
    monkeypatch.setattr(_entity_map, "MAX_KEYS", most)


@pytest.fixture(params=sorted(EVERY))
def preload(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    _mode(monkeypatch, request.param)
    return str(request.param)


@pytest.fixture
def mem(tmp_path: Path, clock: Clock, preload: str) -> Iterator[Memory]:
    with Memory.open(tmp_path / "m", clock=clock, embedder=None, extractor=None) as m:
        yield m


def objects(mem: Memory, s: str, p: str | None = None, **kw: Any) -> list[str]:
    return sorted(f.object or "" for f in mem.facts(s, p, valid_at=V, **kw))


def mapped(mem: Memory) -> bool:
    """Whether the default namespace is loaded whole (so no lookup would catch a stale map)."""
    space = mem._entities.map._spaces.get("default")
    return space is not None and space.complete


def test_the_preload_loads_the_namespace_whole(mem: Memory, preload: str) -> None:
    mem.assert_fact("Mira", "likes", "jazz", valid_from=None)
    assert mapped(mem) == (preload == "preloaded")
    assert objects(mem, "mira") == ["jazz"] and objects(mem, "nobody") == []


def test_a_write_after_a_merge_and_an_unmerge_goes_where_the_name_points(
    mem: Memory, clock: Clock, preload: str
) -> None:
    mem.assert_fact("my sister", "lives_in", "Auckland", valid_from="2024-01-01T00:00:00Z")
    mem.assert_fact("Mira", "job_title", "paramedic", valid_from=None)
    mem.assert_fact("user", "sibling", "Mira", valid_from=None)
    assert mapped(mem) == (preload == "preloaded")
    clock.tick()
    report = mem.consolidate()
    assert report.counts == {"merged": 1}
    entities = len(mem.entities())
    clock.tick()
    # "my sister" is now an alias of Mira: a stale map would still say the old entity
    f = mem.assert_fact("my sister", "likes", "jazz", valid_from=None)
    assert f.subject == "Mira" and f.subject_id == mem.entity("Mira").entity.id
    assert objects(mem, "Mira", "likes") == ["jazz"]
    assert len(mem.entities()) == entities + 1  # jazz
    clock.tick()
    mem.unmerge(report.changes[0].targets[0])
    clock.tick()
    g = mem.assert_fact("my sister", "likes", "tea", valid_from=None)
    assert g.subject == "my sister" and g.subject_id != f.subject_id
    assert objects(mem, "my sister", "likes") == ["tea"]
    assert objects(mem, "Mira", "likes") == ["jazz"]
    assert len(mem.entities()) == entities + 2  # jazz, tea


def test_a_write_after_an_erase_makes_the_erased_names_again(
    mem: Memory, clock: Clock, preload: str
) -> None:
    mem.assert_fact("user", "likes", "tea", valid_from=None)
    f = mem.assert_fact("Zed", "likes", "quokkas", valid_from=None)
    assert mapped(mem) == (preload == "preloaded")
    clock.tick()
    mem.erase(f.id)
    assert "quokkas" not in {e.name for e in mem.entities()}  # nothing refers to it now
    clock.tick()
    # a stale map would hand out the id of the deleted entity
    g = mem.assert_fact("zed", "likes", "Quokkas", valid_from=None)
    assert (g.subject, g.object) == ("Zed", "Quokkas")
    assert g.subject_id == f.subject_id and g.object_id != f.object_id
    assert objects(mem, "Zed") == ["Quokkas"]
    assert mem.entity("QUOKKAS").entity.id == g.object_id


def test_a_write_after_the_callers_transaction_rolled_back(
    mem: Memory, clock: Clock, preload: str
) -> None:
    mem.assert_fact("user", "likes", "tea", valid_from=None)
    with pytest.raises(RuntimeError, match="caller"), mem._store.write():
        ghost = mem.assert_fact("Ghost", "likes", "phantoms", valid_from=None)
        raise RuntimeError("the caller's transaction fails after the write")
    assert "Ghost" not in {e.name for e in mem.entities()}
    clock.tick()
    # the entities created in the undone transaction must not be handed out again
    f = mem.assert_fact("Ghost", "likes", "phantoms", valid_from=None)
    assert {f.subject_id, f.object_id}.isdisjoint({ghost.subject_id, ghost.object_id})
    assert objects(mem, "ghost") == ["phantoms"]
    assert mem.entity("Ghost").entity.id == f.subject_id


def test_a_write_after_its_own_transaction_rolled_back(
    mem: Memory, clock: Clock, preload: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem.assert_fact("user", "likes", "tea", valid_from=None)

    def failing(*args: Any, **kw: Any) -> None:
        raise RuntimeError("disk full")

    with monkeypatch.context() as m:
        m.setattr(mem._store.slots, "write_facts", failing)
        with pytest.raises(RuntimeError, match="disk full"):
            mem.assert_many(
                [
                    {"subject": "Ann", "predicate": "likes", "object": "figs"},
                    {"subject": "Bo", "predicate": "likes", "object": "figs"},
                ]
            )
    clock.tick()
    done = mem.assert_many(
        [
            {"subject": "Ann", "predicate": "likes", "object": "figs", "valid_from": None},
            {"subject": "Bo", "predicate": "likes", "object": "Figs", "valid_from": None},
        ]
    )
    assert done[0].object_id == done[1].object_id  # one entity for both spellings
    assert objects(mem, "Ann") == ["figs"] and objects(mem, "bo") == ["figs"]
    assert sorted(e.name for e in mem.entities()) == ["Ann", "Bo", "figs", "tea", "user"]


# --- the same scenario with and without the preload gives the same answers ---------------
NAMES = ["Mira", "mira", "MIRA ", "Sydney", "Ann", "ann", "Bo", "Jazz", "jazz", "Tea", "Lin"]
PREDS = ["likes", "lives_in", "works_at", "friend"]


def _fact(f: Fact) -> tuple[Any, ...]:
    return (f.subject, f.predicate, f.object, f.valid_from, f.valid_to, f.status, f.op, f.applied)


def _scenario(path: Path, seed: int) -> list[Any]:
    """A seeded mix of writes and reads over names that differ only in case and spacing;
    everything it sees, without ids (they are random)."""
    rng = random.Random(seed)
    clock = Clock()
    out: list[Any] = []
    written: list[Fact] = []
    with Memory.open(path, clock=clock, embedder=None, extractor=None) as mem:
        for _ in range(60):
            clock.tick(minutes=1)
            x = rng.random()
            day = f"20{rng.randrange(20, 26)}-0{rng.randrange(1, 10)}-01T00:00:00Z"
            if x < 0.35:
                batch = [
                    {
                        "subject": rng.choice(NAMES),
                        "predicate": rng.choice(PREDS),
                        "object": rng.choice(NAMES),
                        "valid_from": day,
                    }
                    for _ in range(rng.randrange(1, 8))
                ]
                got = mem.assert_many(batch)
                written += got
                out.append([_fact(f) for f in got])
            elif x < 0.5:
                f = mem.assert_fact(rng.choice(NAMES), rng.choice(PREDS), rng.choice(NAMES))
                written.append(f)
                out.append(_fact(f))
            elif x < 0.55:
                out.append(_fact(mem.end_fact(rng.choice(NAMES), "lives_in", at=day)))
            elif x < 0.6 and written:
                f = rng.choice(written)
                try:
                    out.append(("retract", _fact(mem.retract(f.id))))
                except Exception as e:  # already retracted or erased: the same in both runs
                    out.append(("retract", type(e).__name__))
            elif x < 0.64 and written:
                f = written.pop(rng.randrange(len(written)))
                try:
                    out.append(("erase", len(mem.erase(f.id))))
                except Exception as e:
                    out.append(("erase", type(e).__name__))
            elif x < 0.68:
                out.append(("consolidate", sorted(mem.consolidate().counts.items())))
            else:
                name = rng.choice([*NAMES, "nobody"])
                out.append(sorted((_fact(f) for f in mem.facts(name, valid_at=day)), key=repr))
                out.append(sorted((_fact(f) for f in mem.history(name)), key=repr))
        out.append(sorted((e.name, e.key, tuple(e.aliases), e.type) for e in mem.entities()))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reads_and_writes_are_the_same_with_and_without_the_preload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    runs = {}
    for label in EVERY:
        _mode(monkeypatch, label)
        runs[label] = _scenario(tmp_path / label, seed)
    assert runs["preloaded"] == runs["looked_up"] == runs["capped"]
