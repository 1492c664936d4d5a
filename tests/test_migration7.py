"""Migrations 7 to 9: a memory at schema 6 (slots linked to their log and versions by
LOGS and HAS_VERSION; a slot's columns on Slot, its packed state on SlotState, its
tombstones hung off Slot) opens, becomes one SlotState row per slot with no slot
relationships (7, 8), then journals and lines (9), and answers every read as before.

The schema-6 memory is made by writing with today's engine and then laying its slots
out as schema 6 had them (`_to_schema_6`): the rows' content is what the old writers
wrote (a packed state lists the journal's packed fields), only the tables differ. The
memories of real older releases are in tests/test_upgrade_release.py."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import palimpsest.graph._store as store_module
from palimpsest import Memory
from palimpsest.graph import MIGRATIONS, SCHEMA_VERSION, Store

from .conftest import Clock, utc

T0 = utc("2020-01-01T00:00:00")
# what the schema-6 writers linked: every assertion and every version to its slot
_LINK = (
    "MATCH (s:Slot), (a:Assertion) WHERE a.slot_id = s.id CREATE (s)-[:LOGS]->(a)",
    "MATCH (s:Slot), (f:Fact) WHERE f.slot_id = s.id CREATE (s)-[:HAS_VERSION]->(f)",
)
_WALK_LOG = "MATCH (s:Slot {id: $id})-[:LOGS]->(a:Assertion) RETURN a.id AS id"
_WALK_VERSIONS = "MATCH (s:Slot {id: $id})-[:HAS_VERSION]->(f:Fact) RETURN f.id AS id"
_KEYS = (("user", "lives_in"), ("user", "likes"), ("user", "works_at"), ("p1", "lives_in"))


# today's slots laid out as schema 6 had them (inside one write transaction)
_DOWN = (
    "CREATE NODE TABLE Slot(id STRING PRIMARY KEY, namespace STRING,"
    " subject_id STRING, predicate STRING, subject STRING)",
    "CREATE NODE TABLE SlotOld(id STRING PRIMARY KEY, log STRING, versions STRING)",
    "CREATE REL TABLE HAS_TOMBSTONE(FROM Slot TO Tombstone)",
    "CREATE REL TABLE LOGS(FROM Slot TO Assertion)",
    "CREATE REL TABLE HAS_VERSION(FROM Slot TO Fact)",
    "MATCH (x:SlotState) CREATE (:Slot {id: x.id, namespace: x.namespace,"
    " subject_id: x.subject_id, predicate: x.predicate, subject: x.subject}),"
    " (:SlotOld {id: x.id, log: x.log, versions: x.versions})",
    "MATCH (s:Slot), (t:Tombstone) WHERE t.slot_id = s.id CREATE (s)-[:HAS_TOMBSTONE]->(t)",
    "DROP TABLE SlotState",
    "ALTER TABLE SlotOld RENAME TO SlotState",
    "MATCH (m:Migration) WHERE m.version > 6 DELETE m",
)


def _to_schema_8(store: Store) -> None:
    """Today's journals folded back into one packed SlotState row a slot (schema 8)."""
    import orjson

    from palimpsest.graph._slots import LOG_FIELDS, VERSION_FIELDS, pack_values

    ids = [r["id"] for r in store.db.query("MATCH (s:Slot) RETURN s.id AS id")]
    histories = store.slots.histories(ids)
    store.db.ddl(
        "CREATE NODE TABLE SlotState(id STRING PRIMARY KEY, namespace STRING,"
        " subject_id STRING, predicate STRING, subject STRING, log STRING, versions STRING)"
    )
    with store.write():
        for row, log, versions in histories.values():
            store.db.query(
                "CREATE (:SlotState {id: $id, namespace: $ns, subject_id: $sid, predicate: $p,"
                " subject: $s, log: $log, versions: $versions})",
                id=row["id"],
                ns=row["namespace"],
                sid=row["subject_id"],
                p=row["predicate"],
                s=row["subject"],
                log=orjson.dumps([pack_values(a, LOG_FIELDS) for a in log]).decode(),
                versions=orjson.dumps([pack_values(v, VERSION_FIELDS) for v in versions]).decode(),
            )
    for table in ("LinePage", "Line", "SlotPage", "Slot"):
        store.db.ddl(f"DROP TABLE {table}")


def _to_schema_6(store: Store) -> None:
    _to_schema_8(store)  # its own transactions: Kùzu commits no table made and dropped in one
    with store.write():
        for cypher in _DOWN:
            store.db.ddl(cypher)
        for cypher in _LINK:
            store.db.query(cypher)


@contextmanager
def schema_6() -> Iterator[None]:
    """Open memories as the package did before migration 7 existed."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(store_module, "MIGRATIONS", MIGRATIONS[:6])
        m.setattr(store_module, "SCHEMA_VERSION", 6)
        yield


def _tables(store: Store) -> set[str]:
    return {r["name"] for r in store.db.query("CALL show_tables() RETURN name")}


def _write(mem: Memory, clock: Clock) -> dict[str, str]:
    """Single and bulk writes: supersede, bounded, end, retract, a LOAD FROM batch."""
    ids = {"oslo": mem.assert_fact("user", "lives_in", "Oslo", valid_from=T0).id}
    clock.tick()
    rome = mem.assert_fact("user", "lives_in", "Rome", valid_from=T0 + timedelta(days=400))
    ids["rome"] = rome.id
    clock.tick()
    mem.assert_fact("user", "works_at", "Acme", valid_from=T0, valid_to=T0 + timedelta(days=90))
    clock.tick()
    mem.assert_fact("user", "likes", "tea", valid_from=T0)
    ids["coffee"] = mem.assert_fact("user", "likes", "coffee", valid_from=T0).id
    clock.tick()
    mem.end_fact("user", "likes", "tea", at=T0 + timedelta(days=30))
    clock.tick()
    mem.retract(ids["coffee"], reason="misheard")
    clock.tick()
    # more rows than graph/_cypher.py LOAD_MIN: the LOAD FROM path
    mem.assert_many(
        [
            {
                "subject": f"p{i}",
                "predicate": "lives_in",
                "object": ("Oslo", "Rome", "Lima")[i % 3],
                "valid_from": T0 + timedelta(days=10 + i),
            }
            for i in range(40)
        ]
        + [{"subject": "p1", "predicate": "lives_in", "object": "Kyiv", "valid_from": T0}]
    )
    clock.tick()
    return ids


def _reads(mem: Memory, valid_at: datetime) -> dict[str, Any]:
    """Every read verb, as plain data."""
    return {
        "facts": [[f.model_dump() for f in mem.facts(s, p, valid_at=valid_at)] for s, p in _KEYS],
        "facts_then": [
            [f.model_dump() for f in mem.facts(s, p, valid_at=T0 + timedelta(days=5))]
            for s, p in _KEYS
        ],
        "history": [[f.model_dump() for f in mem.history(s, p)] for s, p in _KEYS],
        "entity": mem.entity("user", valid_at=valid_at).model_dump(),
        "object": mem.entity("Rome", valid_at=valid_at).model_dump(),
        "snapshot": mem.snapshot(valid_at=valid_at).model_dump(),
        "changes": mem.changes(since=T0 - timedelta(days=1)).model_dump(),
    }


@pytest.fixture
def v6(tmp_path: Path, clock: Clock) -> tuple[Path, dict[str, str], dict[str, Any]]:
    """A memory at schema 6 with the tables and relationships its writers made (an
    erased fact's tombstone included); its ids and reads."""
    path = tmp_path / "m"
    with Memory.open(path, clock=clock, embedder=None, extractor=None) as mem:
        ids = _write(mem, clock)
        jazz = mem.assert_fact("user", "likes", "jazz", valid_from=T0)
        clock.tick()
        mem.erase(jazz.id, reason="test")
        clock.tick()
        reads = _reads(mem, T0 + timedelta(days=500))
        assert any(f["status"] == "erased" for f in reads["history"][1]), "no tombstone"
        _to_schema_6(mem._store)
    with schema_6():
        store = Store.open(path)
    try:
        assert {"LOGS", "HAS_VERSION", "HAS_TOMBSTONE", "Slot"} <= _tables(store)
        walked = "MATCH (s:Slot)-[:HAS_TOMBSTONE]->(t:Tombstone) RETURN count(*) AS n"
        assert store.db.query(walked)[0]["n"] == 1
    finally:
        store.close()
    return path, ids, reads


def test_a_schema_6_memory_migrates_and_answers_as_before(
    v6: tuple[Path, dict[str, str], dict[str, Any]], clock: Clock
) -> None:
    path, ids, before = v6
    with Memory.open(path, clock=clock, embedder=None, extractor=None) as mem:
        store = mem._store
        done = [r["v"] for r in store.db.query("MATCH (m:Migration) RETURN m.version AS v")]
        assert sorted(done) == list(range(1, SCHEMA_VERSION + 1)) and SCHEMA_VERSION >= 8
        assert not {"LOGS", "HAS_VERSION", "HAS_TOMBSTONE", "SlotRow", "SlotState"} & _tables(store)
        assert {"SUBJ", "OBJ", "Slot", "SlotPage", "Line", "LinePage"} <= _tables(store)
        assert _reads(mem, T0 + timedelta(days=500)) == before
        # writes after the migration: single (fused) and bulk, to old and new slots
        clock.tick()
        mem.assert_fact("user", "lives_in", "Lima", valid_from=T0 + timedelta(days=600))
        mem.assert_fact("newcomer", "likes", "jazz", valid_from=T0)
        mem.assert_many(
            [{"subject": f"p{i}", "predicate": "lives_in", "object": "Quito"} for i in range(40)]
        )
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Lima"]
        assert [f.object for f in mem.facts("p7", "lives_in")] == ["Quito"]
        assert [f.object for f in mem.facts("newcomer", "likes")] == ["jazz"]
        # erase one assertion of a slot with several versions: the slot is rebuilt from
        # the rest of its log, at every known-at time
        clock.tick()
        mem.erase(ids["rome"], reason="test")
        later = T0 + timedelta(days=500)
        assert [f.object for f in mem.facts("user", "lives_in", valid_at=later)] == ["Oslo"]
        assert "Rome" not in {f.object for f in mem.history("user", "lives_in")}
        slot = store.slots.assertion(ids["oslo"])["slot_id"]  # type: ignore[index]
        _, log, versions = store.slots.histories([slot])[slot]
        assert ids["rome"] not in {a["id"] for a in log}  # nor in the rewritten journal
        assert {v["id"] for v in versions} == set(store.slots.slot_version_ids(slot))
        p1 = [f.model_dump() for f in mem.history("p1", "lives_in")]
    # and everything survives a reopen (which also compacts after the erase)
    with Memory.open(path, clock=clock, embedder=None, extractor=None) as mem:
        assert [f.object for f in mem.facts("user", "lives_in", valid_at=later)] == ["Oslo"]
        assert [f.object for f in mem.facts("p7", "lives_in")] == ["Quito"]
        assert [f.model_dump() for f in mem.history("p1", "lives_in")] == p1


def test_a_fresh_memory_has_no_slot_relationships(tmp_path: Path, clock: Clock) -> None:
    with Memory.open(tmp_path / "m", clock=clock, embedder=None, extractor=None) as mem:
        _write(mem, clock)
        tables = _tables(mem._store)
        assert not {"LOGS", "HAS_VERSION", "HAS_TOMBSTONE", "SlotState"} & tables
        assert mem._store.db.query("MATCH ()-[r:SUBJ]->() RETURN count(*) AS n")[0]["n"] > 40
