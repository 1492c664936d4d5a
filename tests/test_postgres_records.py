"""The PostgreSQL consolidation, predicate-log and transfer slices give Kùzu's rows.

One small namespace (entities, keys, episodes, slots, assertions, versions, a
tombstone, a predicate, an episode use) is laid into a Kùzu store and a PostgreSQL
store alike, raw; every method of the three slices is then asked of both and the
answers compared (sorted by id where the protocol leaves the order open).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.graph import Store as KuzuStore
from palimpsest.postgres import Store as PgStore

NS, OTHER = "default", "other"
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def t(days: float) -> datetime:
    return T0 + timedelta(days=days)


# Tables other slices own, with Kùzu's columns (created here while those slices are
# stubs on this branch; IF NOT EXISTS leaves their owners' tables alone).
OTHERS = (
    'CREATE TABLE IF NOT EXISTS predicate (id text COLLATE "C", namespace text COLLATE "C",'
    ' name text COLLATE "C", cardinality text, aliases text[], inverse text,'
    " object_kind text, origin text, PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS entity (id text COLLATE "C", namespace text COLLATE "C",'
    ' key text COLLATE "C", name text COLLATE "C", type text, aliases text[],'
    " created_at timestamptz, PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS entity_key (namespace text COLLATE "C", key text COLLATE "C",'
    " entity_id text, PRIMARY KEY (namespace, key))",
    'CREATE TABLE IF NOT EXISTS episode (id text COLLATE "C", namespace text COLLATE "C",'
    " text text, speaker text, author_kind text, source text, session text, reply_to text,"
    " occurred_at timestamptz, recorded_at timestamptz, fingerprint text,"
    " importance double precision, kind text, quarantined boolean, archived boolean,"
    " PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS slot (id text COLLATE "C", namespace text COLLATE "C",'
    " subject_id text, predicate text, subject text, PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS assertion (id text COLLATE "C", namespace text COLLATE "C",'
    " slot_id text, op text, object_id text, valid_from timestamptz, valid_to timestamptz,"
    " recorded_at timestamptz, seq bigint, confidence double precision, author_kind text,"
    " evidence text[], quarantined boolean, retracted_at timestamptz, retract_reason text,"
    " origin text, PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS fact (id text COLLATE "C", namespace text COLLATE "C",'
    " slot_id text, assertion_id text, subject_id text, subject text, predicate text,"
    " object_id text, object text, statement text, valid_from timestamptz,"
    " valid_to timestamptz, recorded_at timestamptz, expired_at timestamptz,"
    " confidence double precision, author_kind text, evidence text[], quarantined boolean,"
    " PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS tombstone (id text COLLATE "C", namespace text COLLATE "C",'
    " kind text, slot_id text, erased_at timestamptz, reason text,"
    " PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS episode_use (id text COLLATE "C",'
    ' namespace text COLLATE "C", last_used_at timestamptz, use_count bigint,'
    " PRIMARY KEY (namespace, id))",
)

# Kùzu types of the seeded columns that need a CAST when a parameter is NULL or a list
KUZU_TYPES = {
    **dict.fromkeys(
        (
            "created_at",
            "occurred_at",
            "recorded_at",
            "valid_from",
            "valid_to",
            "expired_at",
            "retracted_at",
            "erased_at",
            "last_used_at",
        ),
        "TIMESTAMP",
    ),
    **dict.fromkeys(("aliases", "evidence"), "STRING[]"),
    **dict.fromkeys(("importance", "confidence"), "DOUBLE"),
    **dict.fromkeys(("seq", "use_count"), "INT64"),
    **dict.fromkeys(("quarantined", "archived"), "BOOLEAN"),
}


def slot(ns: str, subject: str, predicate: str) -> str:
    return f"{ns}\x1f{subject}\x1f{predicate}"


S1, S2, S3 = slot(NS, "e1", "lives_in"), slot(NS, "e2", "sibling"), slot(NS, "e3", "likes")


def _entity(i: str, key: str, days: float, ns: str = NS) -> dict[str, Any]:
    return {
        "id": i,
        "namespace": ns,
        "key": key,
        "name": key.title(),
        "type": "person",
        "aliases": [key[:2]],
        "created_at": t(days),
    }


def _episode(i: str, text: str, days: float, importance: float, **more: Any) -> dict[str, Any]:
    return {
        "id": i,
        "namespace": more.pop("namespace", NS),
        "text": text,
        "speaker": "user",
        "author_kind": "user",
        "source": None,
        "session": "s1",
        "reply_to": None,
        "occurred_at": t(days),
        "recorded_at": t(days),
        "fingerprint": f"fp-{text.lower()}",
        "importance": importance,
        "kind": "message",
        "quarantined": False,
        "archived": False,
    } | more


def _assertion(i: str, sid: str, obj: str | None, seq: int, **more: Any) -> dict[str, Any]:
    return {
        "id": i,
        "namespace": NS,
        "slot_id": sid,
        "op": "assert",
        "object_id": obj,
        "valid_from": t(0),
        "valid_to": None,
        "recorded_at": t(seq),
        "seq": seq,
        "confidence": 0.9,
        "author_kind": "user",
        "evidence": ["ep1"],
        "quarantined": False,
        "retracted_at": None,
        "retract_reason": None,
        "origin": None,
    } | more


def _fact(i: str, a: str, sid: str, obj: str, **more: Any) -> dict[str, Any]:
    _, subject, predicate = sid.split("\x1f")
    return {
        "id": i,
        "namespace": NS,
        "slot_id": sid,
        "assertion_id": a,
        "subject_id": subject,
        "subject": subject.title(),
        "predicate": predicate,
        "object_id": obj,
        "object": obj.title(),
        "statement": f"{subject} {predicate} {obj}",
        "valid_from": t(0),
        "valid_to": None,
        "recorded_at": t(1),
        "expired_at": None,
        "confidence": 0.9,
        "author_kind": "user",
        "evidence": ["ep1"],
        "quarantined": False,
    } | more


SEED: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("Predicate", "predicate"): [
        {
            "id": f"{NS}\x1flives_in",
            "namespace": NS,
            "name": "lives_in",
            "cardinality": "one",
            "aliases": ["resides_in"],
            "inverse": None,
            "object_kind": "place",
            "origin": "user",
        },
        {
            "id": f"{OTHER}\x1fknows",
            "namespace": OTHER,
            "name": "knows",
            "cardinality": "many",
            "aliases": [],
            "inverse": "knows",
            "object_kind": "entity",
            "origin": "user",
        },
    ],
    ("Entity", "entity"): [
        _entity("e1", "alice", 0),
        _entity("e2", "al", 2),
        _entity("e3", "bob", 1),
        _entity("e4", "user", 0.5),
        _entity("x1", "carol", 0, ns=OTHER),
    ],
    ("Episode", "episode"): [
        _episode("ep1", "Alice lives in Paris", 0, 0.8),
        _episode("ep2", "Alice lives in Paris", 1, 0.8),
        _episode("ep3", "ok", 2, 0.05),
        _episode("ep4", "héllo ✓ wörld", 40, 0.1),
        _episode("ep5", "old and archived", 0.5, 0.01, archived=True),
        _episode("xp1", "elsewhere", 0, 0.5, namespace=OTHER),
    ],
    ("Slot", "slot"): [
        {
            "id": S1,
            "namespace": NS,
            "subject_id": "e1",
            "predicate": "lives_in",
            "subject": "Alice",
        },
        {"id": S2, "namespace": NS, "subject_id": "e2", "predicate": "sibling", "subject": "Al"},
        {"id": S3, "namespace": NS, "subject_id": "e3", "predicate": "likes", "subject": "Bob"},
    ],
    ("Assertion", "assertion"): [
        _assertion("a1", S1, "paris", 1),
        _assertion("a2", S1, "rome", 2),  # one start, another object: a conflict
        _assertion("a3", S2, "e3", 3),
        _assertion("a4", S3, "e2", 4, retracted_at=t(6), retract_reason="wrong"),
        _assertion("a5", S3, "jazz", 5, quarantined=True, valid_from=t(3)),
        _assertion("a6", S3, "e1", 6, valid_from=None, evidence=[]),
    ],
    ("Fact", "fact"): [
        _fact("f1", "a1", S1, "paris", valid_to=t(10)),
        _fact("f2", "a2", S1, "rome", valid_to=t(20)),
        _fact("f3", "a3", S2, "e3"),
        _fact("f4", "a6", S3, "e1", valid_to=t(15), expired_at=t(16)),
        _fact("f5", "a5", S3, "jazz", valid_to=t(12), quarantined=True),
        _fact("f6", "a4", S3, "e2", valid_to=t(5)),
    ],
    ("Tombstone", "tombstone"): [
        {
            "id": "tb1",
            "namespace": NS,
            "kind": "fact",
            "slot_id": S3,
            "erased_at": t(7),
            "reason": "asked to forget",
        }
    ],
    ("EpisodeUse", "episode_use"): [
        {"id": "ep1", "namespace": NS, "last_used_at": t(30), "use_count": 3}
    ],
}
KEYS = {
    NS: {"alice": "e1", "al": "e2", "ali": "e1", "bob": "e3", "user": "e4"},
    OTHER: {"carol": "x1"},
}


def _kuzu_create(store: KuzuStore, label: str, row: dict[str, Any]) -> None:
    props = ", ".join(
        f"{c}: CAST(${c} AS {KUZU_TYPES[c]})" if c in KUZU_TYPES else f"{c}: ${c}" for c in row
    )
    # the test's own constants, on the test's own store
    store.db.query(f"CREATE (:{label} {{{props}}})", **row)


def seed_kuzu(store: KuzuStore) -> None:
    with store.write():
        for (label, _), rows in SEED.items():
            for r in rows:
                _kuzu_create(store, label, r)
        for ns, keys in KEYS.items():
            for key, eid in keys.items():
                _kuzu_create(store, "EntityKey", {"id": f"{ns}\x1f{key}", "entity_id": eid})


def seed_pg(store: PgStore) -> None:
    with store.write():
        for (_, table), rows in SEED.items():
            cols = list(rows[0])
            # the test's own constants
            store.db.execute_many(
                f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join(['%s'] * len(cols))})",
                [[r[c] for c in cols] for r in rows],
            )
        store.db.execute_many(
            "INSERT INTO entity_key (namespace, key, entity_id) VALUES (%s, %s, %s)",
            [(ns, key, eid) for ns, keys in KEYS.items() for key, eid in keys.items()],
        )


def open_pg(url: str) -> PgStore:
    store = PgStore.open(url)
    with store.write():
        for stmt in OTHERS:
            store.db.execute(stmt)
    return store


@pytest.fixture
def kz(tmp_path: Path) -> Iterator[KuzuStore]:
    store = KuzuStore.open(tmp_path / "kuzu")
    seed_kuzu(store)
    yield store
    store.close()


@pytest.fixture
def pg(pg_url: str) -> Iterator[PgStore]:
    store = open_pg(pg_url)
    seed_pg(store)
    yield store
    store.close()


def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r.get("id") or "", repr(sorted(r.items()))))


# --- consolidation: reads -------------------------------------------------------------------
def test_consolidation_reads_equal_kuzu(kz: KuzuStore, pg: PgStore) -> None:
    k, p = kz.consolidation, pg.consolidation
    for ns in (NS, OTHER, "empty"):
        for since in (None, t(2), t(6), t(100)):
            assert p.changed_slots(ns, since) == k.changed_slots(ns, since), (ns, since)
            assert p.new_episode_count(ns, since) == k.new_episode_count(ns, since)
            assert p.new_entity_count(ns, since) == k.new_entity_count(ns, since)
        assert p.conflicting_slots(ns) == k.conflicting_slots(ns)
        assert by_id(p.episode_digest(ns)) == by_id(k.episode_digest(ns))
        assert by_id(p.entity_rows(ns)) == by_id(k.entity_rows(ns))
        for below, before in ((0.2, t(10)), (0.2, t(50)), (0.9, t(50)), (0.01, t(50))):
            got = p.cold_candidates(ns, below=below, before=before)
            assert by_id(got) == by_id(k.cold_candidates(ns, below=below, before=before))
        for lo, hi, limit in ((None, t(30), 10), (t(11), t(30), 10), (None, t(30), 1)):
            assert p.ended_between(ns, lo, hi, limit=limit) == k.ended_between(
                ns, lo, hi, limit=limit
            )
    assert p.conflicting_slots(NS) == {S1}
    assert {r["id"]: r["length"] for r in p.episode_digest(NS)}["ep4"] == len("héllo ✓ wörld")
    assert p.changed_slots(NS, t(6)) == {S3}  # a retraction counts
    assert p.ended_between(NS, None, t(30), limit=1) == (
        3,
        [{"id": "a2", "statement": "e1 lives_in rome", "valid_to": t(20)}],
    )
    for eid in ("e1", "e2", "x1", "nobody"):
        assert p.keys_of(eid) == k.keys_of(eid)
    assert p.keys_of("e1") == [f"{NS}\x1fali", f"{NS}\x1falice"]
    for ids in ([], ["e1"], ["e2", "e3"], ["e1", "e2", "e3", "e4"], ["x1"]):
        got, want = p.touching(NS, ids), k.touching(NS, ids)
        assert by_id(got) == by_id(want), ids
    assert sorted(a["id"] for a in p.touching(NS, ["e3"])) == ["a3", "a5", "a6"]
    for subject in ("e1", "e2", "e3", "e4"):
        got = sorted(p.relation_facts(NS, subject), key=repr)
        assert got == sorted(k.relation_facts(NS, subject), key=repr)
    assert p.relation_facts(NS, "e2") == [{"predicate": "sibling", "object_id": "e3"}]
    assert p.duplicates(NS) == k.duplicates(NS) == {}
    assert p.merges(NS) == k.merges(NS) == []
    assert p.contests(NS) == k.contests(NS) == []
    assert p.merge("m1") is None and p.decision("a1") is None


# --- consolidation: writes ------------------------------------------------------------------
def _both(kz: KuzuStore, pg: PgStore, method: str, *args: Any) -> None:
    for store in (kz, pg):
        with store.write():
            getattr(store.consolidation, method)(*args)


def test_consolidation_writes_equal_kuzu(kz: KuzuStore, pg: PgStore) -> None:
    k, p = kz.consolidation, pg.consolidation
    dup = {"id": "ep2", "namespace": NS, "canonical": "ep1", "similarity": 1.0}
    _both(kz, pg, "record_duplicates", [dup | {"recorded_at": t(50)}])
    _both(kz, pg, "archive", ["ep3"])
    _both(kz, pg, "archive", [])
    assert p.duplicates(NS) == k.duplicates(NS) == {"ep2": "ep1"}
    assert by_id(p.episode_digest(NS)) == by_id(k.episode_digest(NS))
    assert {r["id"] for r in p.episode_digest(NS) if r["archived"]} == {"ep2", "ep3", "ep5"}
    assert by_id(p.cold_candidates(NS, below=0.9, before=t(100))) == by_id(
        k.cold_candidates(NS, below=0.9, before=t(100))
    )

    _both(kz, pg, "set_aliases", "e1", ["Ali", "Alice B."])
    assert by_id(p.entity_rows(NS)) == by_id(k.entity_rows(NS))
    merge = {
        "id": "m1",
        "namespace": NS,
        "winner": "e1",
        "loser": "e2",
        "keys": [f"{NS}\x1fal"],
        "moved": ["a3>a7"],
        "reason": "same name",
        "merged_at": t(51),
    }
    _both(kz, pg, "create_merge", merge)
    _both(kz, pg, "create_merge", merge | {"id": "m0", "merged_at": t(49), "moved": []})
    assert p.merge("m1") == k.merge("m1") == merge | {"unmerged_at": None}
    assert p.merges(NS) == k.merges(NS)
    assert [m["id"] for m in p.merges(NS)] == ["m0", "m1"]
    _both(kz, pg, "set_unmerged", "m1", t(52))
    assert p.merge("m1") == k.merge("m1")
    assert p.merge("m1")["unmerged_at"] == t(52)  # type: ignore[index]
    assert p.merges(OTHER) == []

    contest = {
        "id": "c1",
        "namespace": NS,
        "slot_id": S1,
        "valid_from": t(0),
        "objects": ["paris", "rome"],
        "reason": "two cities",
        "recorded_at": t(53),
    }
    _both(kz, pg, "create_contest", contest)
    _both(kz, pg, "create_contest", contest | {"id": "c2", "valid_from": None, "objects": []})
    assert by_id(p.contests(NS)) == by_id(k.contests(NS))
    _both(kz, pg, "resolve_contest", "c1", t(54))
    assert by_id(p.contests(NS)) == by_id(k.contests(NS))
    assert {c["id"]: c["resolved_at"] for c in p.contests(NS)} == {"c1": t(54), "c2": None}

    decisions = [
        {"id": "a7", "namespace": NS, "step": "merge", "reason": "undo m1", "recorded_at": t(51)},
        {"id": "a8", "namespace": NS, "step": "promote", "reason": "r", "recorded_at": t(52)},
        {"id": "a9", "namespace": NS, "step": "merge", "reason": "undo m1", "recorded_at": t(53)},
    ]
    _both(kz, pg, "record_decisions", decisions)
    # a second reason for a8 does not replace the first (MERGE ON CREATE)
    _both(kz, pg, "record_decisions", [decisions[1] | {"reason": "later"}])
    _both(kz, pg, "record_decisions", [])
    for since, steps in ((t(0), ["merge"]), (t(52), ["merge", "promote"]), (t(60), ["merge"])):
        got = sorted(p.decisions_since(NS, since, steps), key=repr)
        assert got == sorted(k.decisions_since(NS, since, steps), key=repr)
    assert p.decided_by(NS, "merge", "undo m1") == k.decided_by(NS, "merge", "undo m1")
    assert p.decided_by(NS, "merge", "undo m1") == ["a7", "a9"]
    for aid in ("a7", "a8", "nope"):
        assert p.decision(aid) == k.decision(aid)
    assert p.decision("a8") == {"step": "promote", "reason": "r"}


def test_watermark_and_reports_equal_kuzu(kz: KuzuStore, pg: PgStore) -> None:
    k, p = kz.consolidation, pg.consolidation
    assert p.watermark(NS) is None and k.watermark(NS) is None
    _both(kz, pg, "set_watermark", NS, t(5))
    _both(kz, pg, "set_watermark", NS, t(6))
    assert p.watermark(NS) == k.watermark(NS) == t(6)
    assert p.watermark(OTHER) is None

    assert p.reports(NS) == k.reports(NS) == []
    first = {"namespace": NS, "started_at": t(5).isoformat(), "n": 1, "nested": {"b": 1, "a": [2]}}
    # three runs at one clock reading (a frozen clock), then an earlier one
    runs = [
        (t(6), first),
        (t(6), first | {"n": 2}),
        (t(6), first | {"n": 3}),
        (t(4), first | {"n": 0}),
    ]
    for at, data in runs:
        k.keep_report(NS, at, data, f"run {data['n']}")
        p.keep_report(NS, at, data, f"run {data['n']}")
    p.keep_report(OTHER, t(6), {"namespace": OTHER}, "other")
    assert p.reports(NS) == k.reports(NS)
    assert [r["n"] for r in p.reports(NS)] == [0, 1, 2, 3]
    assert list(p.reports(NS)[1]["nested"]) == ["b", "a"]  # as written
    assert p.reports(OTHER) == [{"namespace": OTHER}]
    text = pg.db.scalar("SELECT text FROM consolidation_report WHERE namespace = %s", (OTHER,))
    assert text == "other"


def test_report_kept_inside_a_rolled_back_write_is_gone(pg: PgStore) -> None:
    with pytest.raises(RuntimeError), pg.write():
        pg.consolidation.keep_report(NS, t(1), {"namespace": NS}, "x")
        raise RuntimeError("the run failed")
    assert pg.consolidation.reports(NS) == []


# --- predicate log --------------------------------------------------------------------------
def test_predicate_log_equals_kuzu(kz: KuzuStore, pg: PgStore) -> None:
    base = {
        "name": "plays",
        "cardinality": "many",
        "aliases": ["plays_for"],
        "inverse": None,
        "object_kind": "entity",
        "origin": "user",
    }
    changes = [
        (NS, base, None, t(3)),
        (NS, base | {"cardinality": "one", "aliases": []}, "many", t(3)),  # one moment
        (NS, base | {"origin": "auto"}, "one", t(2)),  # recorded later, stamped earlier
        (OTHER, base, None, t(9)),
    ]
    assert pg.predicate_log.latest() is None and kz.predicate_log.latest() is None
    for store in (kz, pg):
        with store.write():
            for ns, row, previous, at in changes:
                store.predicate_log.record(ns, row, previous=previous, at=at)
    for ns, name in ((NS, "plays"), (OTHER, "plays"), (NS, "nothing")):
        assert pg.predicate_log.history(ns, name) == kz.predicate_log.history(ns, name)
    got = pg.predicate_log.history(NS, "plays")
    assert [(c["n"], c["changed_at"], c["previous"]) for c in got] == [
        (2, t(2), "one"),
        (0, t(3), None),
        (1, t(3), "many"),
    ]
    assert got[1]["aliases"] == ["plays_for"] and got[0]["origin"] == "auto"
    assert pg.predicate_log.latest() == kz.predicate_log.latest() == t(9)
    assert pg.transfer.aux_rows("PredicateChange", NS) == kz.transfer.aux_rows(
        "PredicateChange", NS
    )


# --- transfer: reads ------------------------------------------------------------------------
KINDS = ("entity", "entity_key", "episode", "slot", "assertion", "version", "tombstone")


def _with_aux(kz: KuzuStore, pg: PgStore) -> None:
    merge = {
        "id": "m1",
        "namespace": NS,
        "winner": "e1",
        "loser": "e2",
        "keys": [f"{NS}\x1fal"],
        "moved": ["a3>a7"],
        "reason": "same name",
        "merged_at": t(51),
    }
    _both(kz, pg, "create_merge", merge)
    _both(kz, pg, "set_unmerged", "m1", t(52))
    contest = {
        "id": "c1",
        "namespace": NS,
        "slot_id": S1,
        "valid_from": None,
        "objects": ["paris", "rome"],
        "reason": "two cities",
        "recorded_at": t(53),
    }
    _both(kz, pg, "create_contest", contest)
    dup = {"id": "ep2", "namespace": NS, "canonical": "ep1", "similarity": 0.97}
    _both(kz, pg, "record_duplicates", [dup | {"recorded_at": t(50)}])
    rows = [{"id": "a7", "namespace": NS, "step": "merge", "reason": "r", "recorded_at": t(51)}]
    _both(kz, pg, "record_decisions", rows)
    row = {
        "name": "lives_in",
        "cardinality": "one",
        "aliases": ["resides_in"],
        "inverse": None,
        "object_kind": "place",
        "origin": "user",
    }
    for store in (kz, pg):
        with store.write():
            store.predicate_log.record(NS, row, previous=None, at=t(0))


def test_transfer_reads_equal_kuzu(kz: KuzuStore, pg: PgStore) -> None:
    _with_aux(kz, pg)
    k, p = kz.transfer, pg.transfer
    assert p.aux_columns() == k.aux_columns()
    assert p.namespaces() == k.namespaces() == [NS, OTHER]
    for ns in (NS, OTHER, "empty"):
        assert p.predicates(ns) == k.predicates(ns)
        assert p.entities(ns) == k.entities(ns)
        assert p.entity_keys(ns) == k.entity_keys(ns)
        assert p.episodes(ns) == k.episodes(ns)
        assert p.slots(ns) == k.slots(ns)
        assert p.assertions(ns) == k.assertions(ns)
        assert p.versions(ns) == k.versions(ns)
        assert p.tombstones(ns) == k.tombstones(ns)
        assert list(p.stream("predicate", ns)) == list(k.stream("predicate", ns))
        for kind in (*KINDS, *k.aux_columns()):
            assert list(p.stream(kind, ns)) == list(k.stream(kind, ns)), (ns, kind)
            assert p.count(kind, ns) == k.count(kind, ns), (ns, kind)
        for table in k.aux_columns():
            assert p.aux_rows(table, ns) == k.aux_rows(table, ns), (ns, table)
        assert p.occupied(ns) == k.occupied(ns)
    assert p.count("assertion", NS) == 6 and p.count("Contest", NS) == 1
    assert [a["id"] for a in p.assertions(NS)] == ["a1", "a2", "a3", "a4", "a5", "a6"]
    for bad in ("predicate", "Meta", "nothing"):
        with pytest.raises(ValueError):
            p.count(bad, NS)
        with pytest.raises(ValueError):
            list(p.stream(bad if bad != "predicate" else "Meta", NS))
    with pytest.raises(ValueError):
        p.aux_rows("Entity", NS)

    probes = {
        "Entity": ["e1", "x1", "zz"],
        "EntityKey": [f"{NS}\x1falice", f"{OTHER}\x1falice", "no-separator"],
        "Episode": ["ep1", "xp1", "ep9"],
        "Slot": [S1, "s9"],
        "Assertion": ["a1", "a6", "a9"],
        "Fact": ["f1", "f9"],
        "Tombstone": ["tb1", "tb2"],
        "Predicate": [f"{NS}\x1flives_in", "lives_in"],
        "EntityMerge": ["m1", "m2"],
        "Contest": ["c1", "c2"],
        "EpisodeDup": ["ep2", "ep1"],
        "Decision": ["a7", "a1"],
        "EpisodeUse": ["ep1", "ep2"],
        "PredicateChange": [f"{NS}\x1flives_in\x1f0", "x"],
    }
    for table, ids in probes.items():
        assert p.existing_ids(table, ids) == k.existing_ids(table, ids), table
        assert p.existing_ids(table, []) == set()
    assert p.existing_ids("Entity", ["e1", "x1", "zz"]) == {"e1", "x1"}
    with pytest.raises(ValueError):
        p.existing_ids("entity; DROP TABLE entity", ["e1"])


def test_stream_inside_a_write_sees_its_rows(pg: PgStore) -> None:
    row = _entity("e9", "zed", 90)
    with pg.write():
        pg.transfer.restore_entities([row], [{"id": f"{NS}\x1fzed", "entity_id": "e9"}])
        rows = pg.transfer.stream("entity", NS)
        first = next(rows)
        assert pg.transfer.count("entity", NS) == 5  # another statement, mid-stream
        assert [first, *rows][-1] == row
        assert {"key": "zed", "entity_id": "e9"} in pg.transfer.entity_keys(NS)
    # abandoned half-way, outside a write: the connection goes back to the pool
    it = pg.transfer.stream("episode", NS)
    next(it)
    it.close()
    assert len(pg.transfer.episodes(NS)) == 5


# --- transfer: restores ---------------------------------------------------------------------
def test_restore_gives_kuzu_rows(kz: KuzuStore, pg_url: str) -> None:
    _with_aux_kuzu_only(kz)
    k = kz.transfer
    pg = open_pg(pg_url)
    try:
        p = pg.transfer
        assert {k2: v for k2, v in p.occupied(NS).items() if v} == {}
        keys = [
            {"id": f"{NS}\x1f{r['key']}", "entity_id": r["entity_id"]} for r in k.entity_keys(NS)
        ]
        columns = p.aux_columns()
        with pg.write():
            p.restore_entities(k.entities(NS), keys)
            p.restore_episodes(k.episodes(NS))
            for table, cols in columns.items():
                rows = k.aux_rows(table, NS)
                if table == "Contest":  # naive times are UTC, as the import gives them
                    rows = [
                        r | {"recorded_at": r["recorded_at"].replace(tzinfo=None)} for r in rows
                    ]
                p.restore_aux(table, cols, rows)
            p.restore_aux("Decision", columns["Decision"], [])
        assert p.entities(NS) == k.entities(NS)
        assert p.entity_keys(NS) == k.entity_keys(NS)
        assert p.episodes(NS) == k.episodes(NS)
        for table in columns:
            assert p.aux_rows(table, NS) == k.aux_rows(table, NS), table
        assert p.existing_ids("EntityKey", [k["id"] for k in keys]) == {k["id"] for k in keys}
        with pytest.raises(ValueError):
            p.restore_aux("Entity", {"id": "STRING"}, [{"id": "x"}])
        with pytest.raises(ValueError):
            p.restore_aux("Decision", {"id": "STRING", "id) --": "STRING"}, [{"id": "x"}])
    finally:
        pg.close()


def _with_aux_kuzu_only(kz: KuzuStore) -> None:
    with kz.write():
        cs = kz.consolidation
        cs.create_merge(
            {
                "id": "m1",
                "namespace": NS,
                "winner": "e1",
                "loser": "e2",
                "keys": [],
                "moved": ["a3>a7"],
                "reason": "same name",
                "merged_at": t(51),
            }
        )
        cs.create_contest(
            {
                "id": "c1",
                "namespace": NS,
                "slot_id": S1,
                "valid_from": t(0),
                "objects": ["paris"],
                "reason": "r",
                "recorded_at": t(53),
            }
        )
        cs.record_duplicates(
            [
                {
                    "id": "ep2",
                    "namespace": NS,
                    "canonical": "ep1",
                    "similarity": 1.0,
                    "recorded_at": t(50),
                }
            ]
        )
        cs.record_decisions(
            [{"id": "a7", "namespace": NS, "step": "merge", "reason": "r", "recorded_at": t(51)}]
        )


def test_indexes_on_other_slices_tables_once_they_exist(pg: PgStore) -> None:
    from palimpsest.postgres import _consolidation

    wanted = [
        "cons_assertion_recorded",
        "cons_assertion_retracted",
        "cons_assertion_object",
        "cons_entity_created",
        "cons_episode_recorded",
        "cons_fact_ended",
    ]
    # migration 1 ran before this test made those tables: the guarded statements skipped
    with pg.write():
        for stmt in _consolidation.DDL:
            pg.db.execute(stmt)
    rows = pg.db.query("SELECT indexname FROM pg_indexes WHERE indexname = ANY(%s)", (wanted,))
    assert sorted(r["indexname"] for r in rows) == sorted(wanted)
