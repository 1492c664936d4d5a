"""The bitemporal core through the `Memory` facade, on each store: a real Kùzu directory
and a PostgreSQL database (`every_store`; the tests that read Kùzu's files run on it alone)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import networkx as nx
import pytest

from palimpsest import (
    AlreadyErased,
    Conflict,
    InvalidName,
    InvalidTime,
    InvalidWindow,
    Memory,
    MemoryLocked,
    NaiveDatetime,
    NotFound,
    PalimpsestError,
    TooLarge,
    ValidationError,
)

from .conftest import Clock, Places, utc

pytestmark = pytest.mark.every_store


def objects(facts: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(f.object for f in facts)


def test_design_worked_example_verbatim(mem: Memory, clock: Clock) -> None:
    """DESIGN.md, "Temporal semantics": the (user, lives_in) table, row by row."""
    k1 = clock.tick()
    sydney = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    k2 = clock.tick()
    mem.assert_fact("user", "lives_in", "Melbourne", valid_from="2023-01-01T00:00:00Z")
    k3 = clock.tick()
    mem.end_fact("user", "lives_in", "Sydney", at="2025-02-01T00:00:00Z")
    k4 = clock.tick()
    mem.retract(sydney.id)

    def timeline(k: datetime) -> list[tuple[str, datetime | None, datetime | None]]:
        return [
            (f.object, f.valid_from, f.valid_to)
            for f in mem.history("user", "lives_in")
            if f.recorded_at <= k and (f.expired_at is None or f.expired_at > k)
        ]

    assert timeline(k1) == [("Sydney", utc("2024-06-01"), None)]
    assert sorted(timeline(k2), key=lambda r: r[1]) == [
        ("Melbourne", utc("2023-01-01"), utc("2024-06-01")),
        ("Sydney", utc("2024-06-01"), None),
    ]
    assert sorted(timeline(k3), key=lambda r: r[1]) == [
        ("Melbourne", utc("2023-01-01"), utc("2024-06-01")),
        ("Sydney", utc("2024-06-01"), utc("2025-02-01")),
    ]
    assert timeline(k4) == [("Melbourne", utc("2023-01-01"), None)]

    q = mem.facts
    assert objects(q("user", "lives_in", valid_at="2024-09-01T00:00:00Z", known_at=k3)) == [
        "Sydney"
    ]
    assert objects(q("user", "lives_in", valid_at="2024-09-01T00:00:00Z", known_at=k4)) == [
        "Melbourne"
    ]
    assert q("user", "lives_in", valid_at="2023-05-01T00:00:00Z", known_at=k1) == []
    # after K3 nothing is believed for 2025-03 (absent), after K4 Melbourne again
    assert q("user", "lives_in", valid_at="2025-03-01T00:00:00Z", known_at=k3) == []
    assert objects(q("user", "lives_in", valid_at="2025-03-01T00:00:00Z", known_at=k4)) == [
        "Melbourne"
    ]


def test_history_statuses_and_times(mem: Memory, clock: Clock) -> None:
    clock.tick()
    a = mem.assert_fact("user", "works_at", "Acme", valid_from="2020-01-01T00:00:00Z")
    clock.tick()
    mem.assert_fact("user", "works_at", "Globex", valid_from="2022-01-01T00:00:00Z")
    clock.tick()
    mem.assert_fact(
        "user", "likes", "jazz", valid_from="2020-01-01T00:00:00Z", valid_to="2021-01-01T00:00:00Z"
    )
    clock.tick()
    wrong = mem.assert_fact("user", "likes", "opera", valid_from="2020-01-01T00:00:00Z")
    clock.tick()
    mem.retract(wrong.id, reason="misheard")
    hist = mem.history("user")
    status = {(f.predicate, f.object, f.status) for f in hist}
    assert ("works_at", "Acme", "superseded") in status  # [2020, ∞) covered by Globex
    assert ("works_at", "Acme", "ended") in status  # [2020, 2022) still believed, over
    assert ("works_at", "Globex", "current") in status
    assert ("likes", "jazz", "ended") in status
    assert ("likes", "opera", "retracted") in status
    for f in hist:
        assert f.recorded_at.tzinfo is not None
        if f.status in ("superseded", "retracted"):
            assert f.expired_at is not None and f.expired_at > f.recorded_at
    clock.tick()
    mem.erase(a.id, reason="user asked")
    hist = mem.history("user", "works_at")
    assert [f.status for f in hist if f.id == a.id] == ["erased"]
    assert all(f.object != "Acme" for f in hist)
    tomb = next(f for f in hist if f.status == "erased")
    assert tomb.object is None and tomb.reason == "user asked"


def test_valid_from_defaults_to_reference_time_and_none_means_always(
    mem: Memory, clock: Clock
) -> None:
    now = clock.tick()
    f = mem.assert_fact("user", "plays", "chess")
    assert f.valid_from == now
    g = mem.assert_fact("user", "plays", "go", occurred_at="2021-03-04T05:06:07Z")
    assert g.valid_from == utc("2021-03-04T05:06:07")
    h = mem.assert_fact("user", "speaks", "English", valid_from=None)
    assert h.valid_from is None
    assert objects(mem.facts("user", "speaks", valid_at="1900-01-01T00:00:00Z")) == ["English"]
    assert mem.facts("user", "plays", object="chess", valid_at=now - timedelta(days=1)) == []


def test_many_predicate_keeps_objects_apart_and_one_replaces(mem: Memory, clock: Clock) -> None:
    clock.tick()
    mem.assert_fact("user", "likes", "jazz", valid_from="2020-01-01T00:00:00Z")
    mem.assert_fact("user", "likes", "tea", valid_from="2021-01-01T00:00:00Z")
    assert objects(mem.facts("user", "likes")) == ["jazz", "tea"]
    mem.assert_fact("user", "job_title", "nurse", valid_from="2020-01-01T00:00:00Z")
    mem.assert_fact("user", "job_title", "doctor", valid_from="2021-01-01T00:00:00Z")
    assert objects(mem.facts("user", "job_title")) == ["doctor"]
    e = mem.end_fact("user", "likes", "jazz", at="2022-01-01T00:00:00Z")
    assert e.op == "end" and e.applied is True
    assert objects(mem.facts("user", "likes")) == ["tea"]
    noop = mem.end_fact("user", "likes", "polka", at="2022-01-01T00:00:00Z")
    assert noop.applied is False


def test_define_predicate_override_and_aliases(mem: Memory) -> None:
    p = mem.define_predicate("mentor", cardinality="one", aliases=["Guided By"])
    assert p.cardinality == "one"
    mem.assert_fact("user", "guided by", "Ada", valid_from="2020-01-01T00:00:00Z")
    assert objects(mem.facts("user", "mentor")) == ["Ada"]
    assert mem.predicate("resides in").name == "lives_in"  # vocabulary alias
    # override: `likes` becomes one-valued; existing slots are re-read at once
    mem.assert_fact("user", "likes", "jazz", valid_from="2020-01-01T00:00:00Z")
    mem.assert_fact("user", "likes", "tea", valid_from="2021-01-01T00:00:00Z")
    mem.define_predicate("likes", cardinality="one")
    assert objects(mem.facts("user", "likes")) == ["tea"]
    unknown = mem.assert_fact("user", "adopted", "Rex")
    assert unknown.predicate == "adopted" and mem.predicate("adopted").origin == "auto"


def test_snapshot_groups_by_entity_and_exports_networkx(mem: Memory, clock: Clock) -> None:
    clock.tick()
    mem.assert_fact("user", "sibling", "Mira", valid_from=None)
    mem.assert_fact("Mira", "lives_in", "Berlin", valid_from="2020-01-01T00:00:00Z")
    mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    snap = mem.snapshot(valid_at="2025-01-01T00:00:00Z")
    groups = {g.entity: sorted((f.predicate, f.object) for f in g.facts) for g in snap.entities}
    assert groups == {
        "Mira": [("lives_in", "Berlin")],
        "user": [("lives_in", "Sydney"), ("sibling", "Mira")],
    }
    g = snap.to_networkx()
    assert isinstance(g, nx.MultiDiGraph) and g.number_of_edges() == 3
    names = nx.get_node_attributes(g, "name")
    mira = next(n for n, v in names.items() if v == "Mira")
    assert g.in_degree(mira) == 1 and g.out_degree(mira) == 1
    before = mem.snapshot(valid_at="2023-01-01T00:00:00Z")
    assert sorted(f.object for f in before.facts) == ["Berlin", "Mira"]
    only = mem.snapshot(valid_at="2025-01-01T00:00:00Z", entities=["mira"])
    assert [g.entity for g in only.entities] == ["Mira"]


def test_entity_profile(mem: Memory, clock: Clock) -> None:
    clock.tick()
    mem.assert_fact("user", "sibling", "Mira", valid_from=None)
    mem.assert_fact("Mira", "lives_in", "Berlin", valid_from="2020-01-01T00:00:00Z")
    prof = mem.entity("  MIRA ")
    assert prof.entity.name == "Mira"
    assert [(f.predicate, f.object) for f in prof.outgoing] == [("lives_in", "Berlin")]
    assert [(f.subject, f.predicate) for f in prof.incoming] == [("user", "sibling")]
    with pytest.raises(NotFound):
        mem.entity("Nobody")


def test_changes_between_times(mem: Memory, clock: Clock) -> None:
    k0 = clock.tick()
    mem.assert_fact("user", "lives_in", "Melbourne", valid_from="2023-01-01T00:00:00Z")
    k1 = clock.tick(days=1)
    mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    clock.tick(days=1)
    ch = mem.changes(since="2024-01-01T00:00:00Z", until="2025-01-01T00:00:00Z")
    assert [f.object for f in ch.started] == ["Sydney"]
    assert [f.object for f in ch.ended] == ["Melbourne"]
    learned = mem.changes(since=k1, until=k1 + timedelta(hours=1))
    assert sorted(f.object for f in learned.learned) == ["Melbourne", "Sydney"]
    assert [f.object for f in learned.revised] == ["Melbourne"]  # the open-ended version
    assert mem.changes(since=k0 - timedelta(days=9), until=k0 - timedelta(days=8)).learned == []
    with pytest.raises(InvalidWindow):
        mem.changes(since=k1, until=k0)
    empty = mem.changes(since=k1, until=k1)  # [t, t) holds nothing: an empty answer
    assert (empty.started, empty.ended, empty.learned, empty.revised) == ([], [], [], [])


def test_namespaces_isolate_everything(mem: Memory) -> None:
    f = mem.assert_fact("user", "lives_in", "Oslo", namespace="alice", valid_from=None)
    mem.assert_fact("user", "lives_in", "Lima", namespace="bob", valid_from=None)
    assert objects(mem.facts("user", "lives_in", namespace="alice")) == ["Oslo"]
    assert objects(mem.facts("user", "lives_in", namespace="bob")) == ["Lima"]
    assert mem.facts("user", "lives_in") == []
    assert mem.snapshot(namespace="bob").facts[0].object == "Lima"
    with pytest.raises(NotFound):
        mem.retract(f.id, namespace="bob")
    with pytest.raises(NotFound):
        mem.erase(f.id, namespace="bob")
    with pytest.raises(NotFound):
        mem.entity("Oslo", namespace="bob")
    assert mem.history("user", namespace="bob")[0].object == "Lima"
    with pytest.raises(InvalidName):
        mem.facts(namespace="../etc")


def snapshot_state(mem: Memory) -> list[tuple]:  # type: ignore[type-arg]
    return sorted(
        (f.subject, f.predicate, f.object, f.valid_from, f.valid_to, f.recorded_at, f.expired_at)
        for f in mem.history("user")
    )


@pytest.mark.parametrize(
    "bad",
    [
        {"valid_from": datetime(2024, 1, 1)},  # naive
        {"valid_from": "2024-01-01T00:00:00"},  # naive string
        {"valid_from": "yesterday-ish"},
        {"valid_from": "2024-02-01T00:00:00Z", "valid_to": "2024-01-01T00:00:00Z"},
        {"valid_from": "2024-01-01T00:00:00Z", "valid_to": "2024-01-01T00:00:00Z"},
        {"subject": ""},
        {"subject": "   "},
        {"object": "x" * 10_000},
        {"predicate": "not a predicate!"},
        {"predicate": ""},
        {"confidence": 1.5},
        {"author_kind": "god"},
        {"evidence": ["ep_missing"]},
        {"subject": "bad\x00name"},
        {"subject": 42},
    ],
)
def test_bad_input_is_rejected_and_changes_nothing(mem: Memory, bad: dict) -> None:  # type: ignore[type-arg]
    mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    before, stats = snapshot_state(mem), mem.stats()
    args = {"subject": "user", "predicate": "lives_in", "object": "Perth", **bad}
    with pytest.raises(PalimpsestError) as info:
        mem.assert_fact(**args)
    assert isinstance(info.value.code, str) and info.value.code
    assert snapshot_state(mem) == before and mem.stats() == stats


def test_error_classes_and_codes(mem: Memory) -> None:
    with pytest.raises(NaiveDatetime) as e1:
        mem.facts("user", valid_at=datetime(2024, 1, 1))
    assert e1.value.code == "naive_datetime"
    with pytest.raises(InvalidTime):
        mem.facts("user", known_at="not a time")
    with pytest.raises(InvalidWindow) as e2:
        mem.assert_fact(
            "u", "likes", "x", valid_from="2024-01-02T00:00:00Z", valid_to="2024-01-01T00:00:00Z"
        )
    assert e2.value.code == "invalid_window"
    with pytest.raises(NotFound) as e3:
        mem.retract("fa_does_not_exist")
    assert e3.value.code == "not_found"
    with pytest.raises(TooLarge):
        mem.remember("x" * 1_000_001)
    with pytest.raises(ValidationError):
        mem.remember("   ")
    f = mem.assert_fact("user", "likes", "x")
    mem.retract(f.id)
    with pytest.raises(Conflict):
        mem.retract(f.id)
    mem.erase(f.id)
    with pytest.raises(AlreadyErased) as e4:
        mem.erase(f.id)
    assert e4.value.code == "erased"
    with pytest.raises(AlreadyErased):
        mem.retract(f.id)


def test_cypher_looking_names_are_just_names(mem: Memory) -> None:
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    mem.assert_fact("user", "likes", "tea", valid_from=None)
    mem.assert_fact(evil, "likes", "$k RETURN 1", valid_from=None)
    assert objects(mem.facts(evil, "likes")) == ["$k RETURN 1"]
    assert objects(mem.facts("user", "likes")) == ["tea"]


def test_erase_removes_the_bytes_from_every_file(tmp_path: Path, clock: Clock) -> None:
    # Kùzu only: it reads the directory's files
    path = tmp_path / "mem"
    secret, episode_secret = "Zanzibarquux", "my passport number is QX93817265"
    with Memory.open(path, clock=clock) as mem:
        for i in range(50):
            mem.assert_fact("user", "likes", f"filler {i}", valid_from=None)
        clock.tick()
        ep = mem.remember(episode_secret, occurred_at="2024-01-01T00:00:00Z")
        f = mem.assert_fact(
            "user", "lives_in", secret, valid_from="2024-01-01T00:00:00Z", evidence=[ep.id]
        )
        mem.assert_fact("user", "lives_in", "Perth", valid_from="2025-01-01T00:00:00Z")
        clock.tick()
        mem.retract(f.id)  # retraction keeps history: the bytes are still there
    blob = b"".join(p.read_bytes() for p in path.rglob("*") if p.is_file())
    assert secret.encode() in blob
    with Memory.open(path, clock=clock) as mem:
        clock.tick()
        mem.erase(ep.id, reason="privacy")  # cascades to the fact resting on it alone
        assert all(secret not in (f.object or "") for f in mem.history("user"))
        assert (
            mem.facts("user", "lives_in", valid_at="2024-06-01T00:00:00Z", known_at=f.recorded_at)
            == []
        )
        assert objects(mem.facts("user", "lives_in", valid_at="2025-06-01T00:00:00Z")) == ["Perth"]
        tombs = {t.id: t for t in mem.history("user", "lives_in") if t.status == "erased"}
        assert f.id in tombs
    blob = b"".join(p.read_bytes() for p in path.rglob("*") if p.is_file())
    assert secret.encode() not in blob
    assert b"QX93817265" not in blob
    assert ep.id.encode() in blob  # the content-free tombstone remains
    with Memory.open(path, clock=clock) as mem:
        assert len(mem.facts("user", "likes", valid_at="2024-01-01T00:00:00Z")) == 50
        with pytest.raises(NotFound):
            mem.episode(ep.id)


def test_remember_is_idempotent(mem: Memory) -> None:
    a = mem.remember("I moved to Sydney.", occurred_at="2024-07-02T10:00:00Z", session="s1")
    b = mem.remember("I moved to Sydney.", occurred_at="2024-07-02T10:00:00Z", session="s1")
    c = mem.remember("I moved to Sydney.", occurred_at="2024-07-03T10:00:00Z", session="s2")
    assert a.id == b.id != c.id
    assert a.fingerprint == c.fingerprint  # same content, different episode
    assert mem.stats().episodes == 2
    assert mem.episode(a.id).text == "I moved to Sydney."
    assert mem.remember("tool output", speaker="search", author_kind="tool").quarantined


def test_quarantined_facts_stay_out_of_facts_and_snapshot(mem: Memory) -> None:
    q = mem.assert_fact("user", "lives_in", "Atlantis", author_kind="tool", valid_from=None)
    assert q.quarantined and q.status == "quarantined"
    assert mem.facts("user", "lives_in") == []
    assert mem.snapshot().facts == []
    seen = mem.facts("user", "lives_in", include_quarantined=True)
    assert [(f.object, f.status) for f in seen] == [("Atlantis", "quarantined")]
    mem.retract(q.id)
    assert mem.facts("user", "lives_in", include_quarantined=True) == []


@pytest.mark.parametrize("n, people", [(300, 17), (700, 110)])  # per-row and LOAD FROM paths
def test_bulk_equals_one_by_one(places: Places, n: int, people: int) -> None:
    rows = []
    for i in range(n):
        rows.append(
            {
                "subject": f"p{i % people}",
                "predicate": ["lives_in", "likes", "works_at"][i % 3],
                "object": f"o{i % 11}",
                "valid_from": f"20{10 + i % 13}-0{1 + i % 9}-01T00:00:00Z",
            }
        )
        if i % 7 == 0:
            rows[-1]["valid_to"] = f"20{24 + i % 3}-01-01T00:00:00Z"
    fixed = datetime(2030, 1, 1, tzinfo=UTC)
    with (
        Memory.open(places(), clock=lambda: fixed) as one,
        Memory.open(places(), clock=lambda: fixed) as bulk,
    ):
        for r in rows:
            one.assert_fact(**r)
        bulk.assert_many(rows)
        for subject in {r["subject"] for r in rows}:
            for pred in ("lives_in", "likes", "works_at"):
                for year in range(2009, 2028):
                    v = f"{year}-06-01T00:00:00Z"
                    assert objects(one.facts(subject, pred, valid_at=v)) == objects(
                        bulk.facts(subject, pred, valid_at=v)
                    )
            assert _hist(one, subject) == _hist(bulk, subject)


def _hist(m: Memory, subject: str) -> list[tuple]:  # type: ignore[type-arg]
    return sorted(
        (f.predicate, f.object, f.valid_from, f.valid_to, f.status) for f in m.history(subject)
    )


def test_import_facts_from_json_lines(mem: Memory, tmp_path: Path) -> None:
    lines = [
        json.dumps(
            {
                "subject": "user",
                "predicate": "likes",
                "object": f"band {i}",
                "valid_from": "2020-01-01T00:00:00Z",
            }
        )
        for i in range(25)
    ]
    assert mem.import_facts([*lines, ""], batch=10) == 25
    assert len(mem.facts("user", "likes")) == 25
    with pytest.raises(ValidationError):
        mem.import_facts(["{not json"])


def test_one_writer_per_directory(tmp_path: Path) -> None:
    # Kùzu only: a database takes any number of processes (tests/test_postgres_processes.py)
    with Memory.open(tmp_path / "m"), pytest.raises(MemoryLocked):
        Memory.open(tmp_path / "m")
    Memory.open(tmp_path / "m").close()  # released on close


def test_transaction_time_never_goes_backwards(place: str | Path) -> None:
    times = iter([utc("2030-01-02"), utc("2030-01-01"), utc("2030-01-03")])
    with Memory.open(place, clock=lambda: next(times)) as mem:
        a = mem.assert_fact("user", "likes", "a", valid_from=None)
        b = mem.assert_fact("user", "likes", "b", valid_from=None)
        assert b.recorded_at >= a.recorded_at


def test_a_reader_ranging_over_many_names_loads_every_key_once(place: str | Path) -> None:
    from palimpsest.engine.name_map import PRELOAD_AFTER

    n = PRELOAD_AFTER + 40
    with Memory.open(place, extractor=None, embedder=None) as mem:
        mem.assert_many(
            [
                {"subject": f"person {i}", "predicate": "lives_in", "object": f"town {i % 5}"}
                for i in range(n)
            ]
        )
        mem.define_predicate("lives_in", cardinality="one", aliases=["resides in"])
    with Memory.open(place, extractor=None, embedder=None) as mem:  # cold caches
        lookups: list[str] = []
        real = mem._store.names.entity_ids_for_keys

        def counting(ns: str, keys: Sequence[str]) -> dict[str, str]:
            lookups.extend(keys)
            return real(ns, keys)

        mem._store.names.entity_ids_for_keys = counting  # type: ignore[method-assign]
        for i in range(n):
            assert [f.object for f in mem.facts(f"person {i}", "lives_in")] == [f"town {i % 5}"]
        assert len(lookups) == PRELOAD_AFTER  # then every key came in one scan
        assert mem.facts("nobody at all", "lives_in") == []  # unknown names still answer
        mem.assert_fact("person 0", "lives_in", "Elsewhere")  # writes keep the map right
        assert [f.object for f in mem.facts("person 0", "lives_in")] == ["Elsewhere"]
