"""The fact generation: which writes may change a fact version, and in which slots.

    >>> store.fact_generation; store.facts_changed_since(g)   # slots, or None: re-read all

Pure rules first (`graph/_changes.py`), then what real writes through a real Kùzu
memory report: a declared fact write names its slots, a write of episodes, uses or
vectors moves nothing, and any other fact write (retract) is an unknown change.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.graph._changes import FactChanges, touches_facts

from .conftest import Clock


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


def test_a_declared_transaction_names_its_slots() -> None:
    c = FactChanges()
    c.begin()
    with c.declared({"s1"}):
        c.wrote(touches=True)
    with c.declared({"s2"}):
        c.wrote(touches=False)  # wrote nothing of s2's
    assert c.generation == 0  # not until it is over
    c.end()
    assert c.generation == 1 and c.since(0) == {"s1"} and c.since(1) == frozenset()


def test_one_undeclared_statement_makes_the_transaction_unknown() -> None:
    c = FactChanges()
    c.begin()
    with c.declared({"s1"}):
        c.wrote(touches=True)
    c.wrote(touches=True)  # outside the declaration
    c.end()
    assert c.generation == 1 and c.since(0) is None


def test_changes_add_up_and_an_unknown_one_among_them_wins() -> None:
    c = FactChanges()
    for slots in ({"a"}, {"b"}):
        c.begin()
        with c.declared(slots):
            c.wrote(touches=True)
        c.end()
    assert c.since(0) == {"a", "b"} and c.since(1) == {"b"}
    c.wrote(touches=True)  # a statement outside any transaction: at once, undeclared
    assert c.generation == 3 and c.since(2) is None and c.since(0) is None
    assert c.since(-1) is None and c.since(99) is None


def test_a_transaction_that_writes_no_fact_moves_nothing() -> None:
    c = FactChanges()
    c.begin()
    c.wrote(touches=False)
    c.end()
    assert c.generation == 0


def test_a_copy_older_than_the_kept_changes_is_told_to_re_read() -> None:
    c = FactChanges()
    for n in range(600):  # more than are kept
        c.begin()
        with c.declared({f"s{n}"}):
            c.wrote(touches=True)
        c.end()
    assert c.since(0) is None and c.since(599) == {"s599"}


def test_a_declaration_covers_its_own_thread_only() -> None:
    c = FactChanges()
    c.begin()
    with c.declared({"s1"}):
        t = threading.Thread(target=lambda: c.wrote(touches=True))  # another writer
        t.start()
        t.join()
        c.wrote(touches=True)
    c.end()
    assert c.since(0) is None  # the other thread's statement was not declared


# --- through a real memory -------------------------------------------------------------
@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=None) as m:
        yield m


def test_a_fact_write_names_its_slot(mem: Memory, clock: Clock) -> None:
    store = mem._store
    g = store.fact_generation
    mem.assert_fact("Ana", "lives_in", "Rome")
    clock.tick()
    changed = store.facts_changed_since(g)
    assert changed is not None and len(changed) == 1
    (slot,) = changed
    assert [r["object"] for r in store.slot_versions([slot])[slot]] == ["Rome"]
    g = store.fact_generation
    mem.assert_many([{"subject": "Ana", "predicate": "lives_in", "object": "Oslo"},
                     {"subject": "Tom", "predicate": "likes", "object": "tea"}])  # fmt: skip
    clock.tick()
    changed = store.facts_changed_since(g)
    assert changed is not None and len(changed) == 2 and slot in changed


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
        changed = store.facts_changed_since(g)
        assert changed  # a set of slots, not None (unknown) and not empty
        objects = {r["object"] for s in changed for r in store.slot_versions([s])[s]}
        assert "Lisbon" in objects
