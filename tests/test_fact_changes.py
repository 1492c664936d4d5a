"""The fact generation: which writes may change a fact version, and what they did.

    >>> store.fact_generation; store.facts_changed_since(g)   # deltas, or None: re-read all

Pure rules first (`graph/_changes.py`), then what real writes through a real Kùzu
memory report: a declared fact write reports the versions it made and ended, a write
of episodes, uses or vectors moves nothing, and any other fact write (retract) is an
unknown change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.graph._changes import FactChanges, touches_facts
from palimpsest.storage import VersionDelta

from .conftest import Clock, utc

T = utc("2030-01-01T00:00:00")


@pytest.mark.parametrize(
    ("cypher", "touches"),
    [
        ("MATCH (u:EpisodeUse {id: $id}) SET u.n = $n", False),
        ("CREATE (:Episode {id: $id, text: $t})", False),
        ("MATCH (x:StatementEmb) WHERE x.id IN $ids DELETE x", False),
        ("MATCH (f:Fact {id: $id}) SET f.expired_at = $at", True),
        ("MATCH (e:Entity {id: $id}) DETACH DELETE e", True),  # takes SUBJ edges with it
        ("MATCH (a:Episode)-[:SUBJ]->(b) SET b.x = 1", True),  # any fact table named
        ("MATCH (n) WHERE n.id = $id DETACH DELETE n", True),  # no table named: anything
        ("UNWIND $ids AS i MATCH (s:SlotState {id: i}) DELETE s", True),
    ],
)
def test_a_statement_touches_facts_unless_it_names_only_tables_no_fact_read_reads(
    cypher: str, touches: bool
) -> None:
    assert touches_facts(cypher) is touches


def _delta(n: int) -> VersionDelta:
    return VersionDelta(at=T, inserted=({"id": f"fv_{n}"},), expired=(), vanished=())


def _declared_write(c: FactChanges, *deltas: VersionDelta, committed: bool = True) -> None:
    c.begin()
    with c.declared() as scope:
        c.wrote(touches=True)
        for d in deltas:
            scope.report(d)
    c.end(committed=committed)


def test_a_declared_transaction_carries_what_it_reported() -> None:
    c = FactChanges()
    c.begin()
    with c.declared() as scope:
        c.wrote(touches=True)
        scope.report(_delta(1))
    with c.declared():
        c.wrote(touches=False)  # wrote no fact: needs no report
    assert c.generation == 0  # not until it is over
    c.end(committed=True)
    assert c.generation == 1 and c.since(0) == (_delta(1),) and c.since(1) == ()


def test_one_undeclared_or_unreported_write_makes_the_transaction_unknown() -> None:
    c = FactChanges()
    c.begin()
    with c.declared() as scope:
        c.wrote(touches=True)
        scope.report(_delta(1))
    c.wrote(touches=True)  # outside the declaration
    c.end(committed=True)
    assert c.generation == 1 and c.since(0) is None
    _declared_write(c)  # declared, wrote, reported nothing
    assert c.generation == 2 and c.since(1) is None


def test_a_rolled_back_write_is_unknown() -> None:
    c = FactChanges()
    _declared_write(c, _delta(1), committed=False)
    assert c.generation == 1 and c.since(0) is None


def test_changes_add_up_in_order_and_an_unknown_one_among_them_wins() -> None:
    c = FactChanges()
    _declared_write(c, _delta(1))
    _declared_write(c, _delta(2), _delta(3))
    assert c.since(0) == (_delta(1), _delta(2), _delta(3)) and c.since(1) == (_delta(2), _delta(3))
    c.wrote(touches=True)  # a statement outside any transaction: at once, undeclared
    assert c.generation == 3 and c.since(2) is None and c.since(0) is None
    assert c.since(-1) is None and c.since(99) is None


def test_a_transaction_that_writes_no_fact_moves_nothing() -> None:
    c = FactChanges()
    c.begin()
    c.wrote(touches=False)
    c.end(committed=True)
    assert c.generation == 0


def test_a_copy_older_than_the_kept_changes_is_told_to_re_read() -> None:
    c = FactChanges()
    for n in range(600):  # more than are kept
        _declared_write(c, _delta(n))
    assert c.since(0) is None and c.since(599) == (_delta(599),)


def test_a_declaration_covers_its_own_thread_only() -> None:
    c = FactChanges()
    c.begin()
    with c.declared() as scope:
        t = threading.Thread(target=lambda: c.wrote(touches=True))  # another writer
        t.start()
        t.join()
        c.wrote(touches=True)
        scope.report(_delta(1))
    c.end(committed=True)
    assert c.since(0) is None  # the other thread's statement was not declared


# --- through a real memory -------------------------------------------------------------
@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=None) as m:
        yield m


def test_a_fact_write_reports_the_versions_it_made_and_ended(mem: Memory, clock: Clock) -> None:
    store = mem._store
    g = store.fact_generation
    rome = mem.assert_fact("Ana", "lives_in", "Rome")
    clock.tick()
    deltas = store.facts_changed_since(g)
    assert deltas is not None and [r["object"] for d in deltas for r in d.inserted] == ["Rome"]
    g = store.fact_generation
    mem.assert_many([{"subject": "Ana", "predicate": "lives_in", "object": "Oslo"},
                     {"subject": "Tom", "predicate": "likes", "object": "tea"}])  # fmt: skip
    clock.tick()
    deltas = store.facts_changed_since(g)
    assert deltas is not None
    # lives_in is one-valued: Rome's open version ended, a closed one replaced it
    made = sorted((r["object"], r["valid_to"] is None) for d in deltas for r in d.inserted)
    assert made == [("Oslo", True), ("Rome", False), ("tea", True)]
    [(fact_id, ns, subject_id, object_id)] = [e for d in deltas for e in d.expired]
    [stored] = [r for r in store.facts.facts_asof(namespace="default", valid_at=None, known_at=None)
                if r["id"] == fact_id]  # fmt: skip
    assert stored["object"] == "Rome" and stored["expired_at"] == deltas[0].at
    assert (ns, subject_id, object_id) == ("default", stored["subject_id"], stored["object_id"])
    assert rome.subject == "Ana"


def test_episodes_and_uses_move_no_fact_generation(mem: Memory, clock: Clock) -> None:
    store = mem._store
    mem.assert_fact("Ana", "lives_in", "Rome")
    clock.tick()
    g = store.fact_generation
    mem.remember("Ana showed me the pottery studio.")  # no extractor: an episode only
    clock.tick()
    mem.recall("pottery studio")
    mem._uses.flush()  # the uses of that answer, written
    assert store.generation > 0 and store.fact_generation == g


def test_a_retract_is_an_unknown_change(mem: Memory, clock: Clock) -> None:
    store = mem._store
    f = mem.assert_fact("Ana", "lives_in", "Rome")
    clock.tick()
    g = store.fact_generation
    mem.retract(f.id)
    assert store.fact_generation > g and store.facts_changed_since(g) is None


def test_remember_with_the_real_extractor_names_the_slots_it_read(
    tmp_path: Path, clock: Clock
) -> None:
    # the spaCy extractor's facts go through the same declared write, episodes beside
    with Memory.open(tmp_path / "r", clock=clock, embedder=None) as m:
        store = m._store
        g = store.fact_generation
        m.remember("I moved to Lisbon in 2019.", speaker="user")
        deltas = store.facts_changed_since(g)
        assert deltas  # what it did, not None (unknown) and not nothing
        assert "Lisbon" in {r["object"] for d in deltas for r in d.inserted}
