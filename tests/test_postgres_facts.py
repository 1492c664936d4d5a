"""The PostgreSQL `facts` slice (palimpsest/postgres/_facts.py) answers as the Kùzu one
(palimpsest/graph/_store_reads.py) does: the same versions as of any (valid time,
known time) on every anchor, in the same order, as the same dicts; the same changes,
entity slots, tombstones, counts and namespaces. The same random version sets go
into both stores (hypothesis), and every read is compared at many points, boundary
instants included. The point query runs on an index, never a scan of the table.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from palimpsest.storage.columns import (
    ASSERTION_COLUMNS,
    ENTITY_COLUMNS,
    EPISODE_COLUMNS,
    FACT_COLUMNS,
)
from palimpsest.storage.rows import fact_order

pytest.importorskip("psycopg")

# The tables this slice reads but other slices own, with the Kùzu columns (the
# convention every slice follows): created here when the schema lacks them.
PG_TABLES = (
    'CREATE TABLE IF NOT EXISTS fact (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, slot_id text COLLATE "C",'
    ' assertion_id text COLLATE "C", subject_id text COLLATE "C", subject text COLLATE "C",'
    ' predicate text COLLATE "C", object_id text COLLATE "C", object text COLLATE "C",'
    ' statement text COLLATE "C", valid_from timestamptz, valid_to timestamptz,'
    " recorded_at timestamptz, expired_at timestamptz, confidence double precision,"
    ' author_kind text COLLATE "C", evidence text[], quarantined boolean,'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS fact_id ON fact (id)",
    "CREATE INDEX IF NOT EXISTS fact_slot ON fact (namespace, slot_id)",
    "CREATE INDEX IF NOT EXISTS fact_subject ON fact (namespace, subject_id, predicate)",
    "CREATE INDEX IF NOT EXISTS fact_object ON fact (namespace, object_id)",
    "CREATE INDEX IF NOT EXISTS fact_recorded ON fact (namespace, recorded_at)",
    "CREATE INDEX IF NOT EXISTS fact_expired ON fact (namespace, expired_at)",
    'CREATE TABLE IF NOT EXISTS entity (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, key text COLLATE "C", name text COLLATE "C",'
    ' type text COLLATE "C", aliases text[], created_at timestamptz,'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS entity_id ON entity (id)",
    'CREATE TABLE IF NOT EXISTS slot (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, subject_id text COLLATE "C",'
    ' predicate text COLLATE "C", subject text COLLATE "C", PRIMARY KEY (namespace, id))',
    'CREATE TABLE IF NOT EXISTS episode (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, text text COLLATE "C", speaker text COLLATE "C",'
    ' author_kind text COLLATE "C", source text COLLATE "C", session text COLLATE "C",'
    ' reply_to text COLLATE "C", occurred_at timestamptz, recorded_at timestamptz,'
    ' fingerprint text COLLATE "C", importance double precision, kind text COLLATE "C",'
    " quarantined boolean, archived boolean, PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS assertion (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, slot_id text COLLATE "C", op text COLLATE "C",'
    ' object_id text COLLATE "C", valid_from timestamptz, valid_to timestamptz,'
    " recorded_at timestamptz, seq bigint, confidence double precision,"
    ' author_kind text COLLATE "C", evidence text[], quarantined boolean,'
    ' retracted_at timestamptz, retract_reason text COLLATE "C", origin text COLLATE "C",'
    " PRIMARY KEY (namespace, id))",
    'CREATE TABLE IF NOT EXISTS predicate (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, name text COLLATE "C",'
    ' cardinality text COLLATE "C", aliases text[], inverse text COLLATE "C",'
    ' object_kind text COLLATE "C", origin text COLLATE "C", PRIMARY KEY (namespace, id))',
)


T0 = datetime(2030, 1, 1, tzinfo=UTC)
# a grid of instants: stored times (starts, ends: whole hours apart) and asked times
# meet exactly, so every boundary rule is exercised
GRID = [T0 + timedelta(hours=h, microseconds=123456) for h in range(8)]
ASKED = [None, T0 - timedelta(days=1), *GRID, T0 + timedelta(days=30)]
# names that sort differently by bytes than by a locale (upper case, accents)
NAMES = ["mira", "Mira", "Øystein", "bob", "Zoë"]
PREDICATES = ["likes", "lives_in", "Zed", "été"]


def _insert(db: Any, table: str, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        marks = ", ".join(["%s"] * len(columns))
        db.execute_many(
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})",
            [tuple(r.get(c) for c in columns) for r in rows],
        )


class Pair:
    """The same rows in a Kùzu store and a PostgreSQL one."""

    def __init__(self, kuzu: Any, pg: Any) -> None:
        from palimpsest.postgres._facts import FactStore

        self.kuzu = kuzu
        self.pg = pg
        self.k = kuzu.facts
        self.p = FactStore(pg.db)

    def add(
        self,
        *,
        entities: Sequence[dict[str, Any]] = (),
        facts: Sequence[dict[str, Any]] = (),
        tombstones: Sequence[dict[str, Any]] = (),
        slots: Sequence[dict[str, Any]] = (),
        episodes: Sequence[dict[str, Any]] = (),
        assertions: Sequence[dict[str, Any]] = (),
        predicates: Sequence[tuple[str, dict[str, Any]]] = (),
    ) -> None:
        with self.kuzu.write():
            self.kuzu.names.create_entities(list(entities))
            # in recording order: Kùzu's scan order, which ties keep
            self.kuzu.slots.create_versions(list(facts))
            for t in tombstones:
                self.kuzu.facts.create_tombstone(t)
            for s in slots:
                self.kuzu.db.query(
                    "CREATE (:Slot {id: $id, namespace: $namespace, subject_id: $subject_id,"
                    " predicate: $predicate, subject: $subject})",
                    **s,
                )
            self.kuzu.names.create_episodes(list(episodes))
            self.kuzu.slots.create_assertions(list(assertions))
            for ns, p in predicates:
                self.kuzu.names.upsert_predicate(ns, p)
        db = self.pg.db
        _insert(db, "entity", ENTITY_COLUMNS, entities)
        _insert(db, "fact", FACT_COLUMNS, facts)
        for t in tombstones:
            self.p.create_tombstone(t)
        _insert(db, "slot", ("id", "namespace", "subject_id", "predicate", "subject"), slots)
        _insert(db, "episode", EPISODE_COLUMNS, episodes)
        _insert(db, "assertion", ASSERTION_COLUMNS, assertions)
        _insert(
            db,
            "predicate",
            ("id", "namespace", "name", "cardinality", "aliases", "inverse", "object_kind"),
            [{**p, "id": f"{ns}\x1f{p['name']}", "namespace": ns} for ns, p in predicates],
        )


@pytest.fixture
def pair(tmp_path: Path, pg_url: str) -> Iterator[Pair]:
    from palimpsest.graph import Store as KuzuStore
    from palimpsest.postgres import Store as PgStore

    kuzu = KuzuStore.open(tmp_path / "kuzu")
    pg = PgStore.open(pg_url)
    try:
        for stmt in PG_TABLES:
            pg.db.execute(stmt)
        yield Pair(kuzu, pg)
    finally:
        kuzu.close()
        pg.close()


# --- comparing results -----------------------------------------------------------------
def _limit_key(r: dict[str, Any]) -> tuple[Any, ...]:
    vf = r["valid_from"]
    return (r["subject"], r["predicate"], vf is None, vf or T0, r["object"])


def _frozen(r: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in r.items())


def assert_same(
    kuzu: list[dict[str, Any]], pg: list[dict[str, Any]], key: Any, *, cut: bool = False
) -> None:
    """The same rows with the same keys, in the same order of `key`; rows tied on it
    may come in any order (Kùzu's order among them is its scan's). With `cut` (a
    LIMIT), the last tied group may hold different members of the same tie."""
    assert [list(r) for r in pg] == [list(r) for r in kuzu]  # the same keys, in order
    assert [key(r) for r in pg] == [key(r) for r in kuzu]
    for r in pg:
        for v in r.values():
            assert not isinstance(v, datetime) or v.utcoffset() == timedelta(0)
    groups_k = [list(g) for _, g in itertools.groupby(kuzu, key=key)]
    groups_p = [list(g) for _, g in itertools.groupby(pg, key=key)]
    for i, (gk, gp) in enumerate(zip(groups_k, groups_p, strict=True)):
        if cut and i == len(groups_k) - 1:
            continue
        assert sorted(map(_frozen, gp), key=repr) == sorted(map(_frozen, gk), key=repr)


# --- random version sets ---------------------------------------------------------------
_time = st.sampled_from(GRID)
_version = st.fixed_dictionaries(
    {
        "subject": st.integers(0, 2),  # few slots: lines with many versions
        "object": st.integers(0, len(NAMES) - 1),
        "predicate": st.sampled_from(PREDICATES),
        "other_ns": st.booleans(),
        "valid_from": st.none() | _time,
        "valid_for": st.none() | st.integers(0, 4),
        "recorded_at": _time,
        "kept_for": st.none() | st.integers(0, 4),
        "quarantined": st.booleans(),
        "confidence": st.floats(0, 1),
        "evidence": st.lists(st.sampled_from(["ep_1", "ep_2", "é"]), max_size=2),
    }
)
_runs = itertools.count()


def _rows(run: int, drawn: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
    nss = (f"ns{run}", f"ns{run}b")
    entities = [
        {
            "id": f"en_{run}_{n}_{i}",
            "namespace": ns,
            "key": name.lower(),
            "name": name,
            "type": None,
            "aliases": [],
            "created_at": T0,
        }
        for n, ns in enumerate(nss)
        for i, name in enumerate(NAMES)
    ]
    facts = []
    for j, d in enumerate(drawn):
        n = int(d["other_ns"])
        ns = nss[n]
        sid, oid = f"en_{run}_{n}_{d['subject']}", f"en_{run}_{n}_{d['object']}"
        vf, rec = d["valid_from"], d["recorded_at"]
        vt = None
        if d["valid_for"] is not None:
            vt = (vf or GRID[0] - timedelta(hours=1)) + timedelta(hours=d["valid_for"])
        exp = None if d["kept_for"] is None else rec + timedelta(hours=d["kept_for"])
        facts.append(
            {
                "id": f"fa_{run}_{j:03d}",
                "namespace": ns,
                "slot_id": f"{ns}\x1f{sid}\x1f{d['predicate']}",
                "assertion_id": f"as_{run}_{j}",
                "subject_id": sid,
                "subject": NAMES[d["subject"]],
                "predicate": d["predicate"],
                "object_id": oid,
                "object": NAMES[d["object"]],
                "statement": f"{NAMES[d['subject']]} {d['predicate']} {NAMES[d['object']]}",
                "valid_from": vf,
                "valid_to": vt,
                "recorded_at": rec,
                "expired_at": exp,
                "confidence": d["confidence"],
                "author_kind": "user",
                "evidence": d["evidence"],
                "quarantined": d["quarantined"],
            }
        )
    facts.sort(key=lambda f: (f["recorded_at"], f["id"]))  # as a store records them
    return entities, facts


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=st.lists(_version, max_size=24))
def test_reads_equal_kuzus_on_random_versions(pair: Pair, drawn: list[dict[str, Any]]) -> None:
    run = next(_runs)  # a namespace pair of its own per example: the stores are shared
    entities, facts = _rows(run, drawn)
    pair.add(entities=entities, facts=facts)
    ns = f"ns{run}"
    slots = sorted({f["slot_id"] for f in facts if f["namespace"] == ns})
    anchors: list[dict[str, Any]] = [{}]
    anchors += [{"slot_id": s} for s in slots[:3]]
    anchors += [{"slot_id": f"{ns}\x1fen_none\x1flikes"}]
    anchors += [{"subject_id": f"en_{run}_0_{i}"} for i in (0, 1)]
    anchors += [{"object_id": f"en_{run}_0_{i}"} for i in (0, 2)]
    anchors += [{"predicate": "likes"}, {"subject_id": f"en_{run}_0_0", "predicate": "Zed"}]
    anchors += [{"subject_id": f"en_{run}_0_1", "object_id": f"en_{run}_0_1"}]
    anchors += [{"object_id": f"en_{run}_0_3", "predicate": "été"}]
    if slots:
        anchors += [{"slot_id": slots[0], "predicate": "other", "object_id": f"en_{run}_0_2"}]
    for anchor in anchors:
        for v, k in itertools.product(ASKED[::2], ASKED):
            for quarantined in (False, True):  # (Kùzu: ~0.5 ms a point query)
                ask = dict(
                    namespace=ns, valid_at=v, known_at=k, include_quarantined=quarantined, **anchor
                )
                assert_same(pair.k.facts_asof(**ask), pair.p.facts_asof(**ask), fact_order)
        for limit in (1, 3, 5):
            ask = dict(namespace=ns, valid_at=GRID[3], known_at=GRID[4], limit=limit, **anchor)
            got_k, got_p = pair.k.facts_asof(**ask), pair.p.facts_asof(**ask)
            assert_same(got_k, got_p, _limit_key, cut=True)
            ask["known_at"] = ask["valid_at"] = None
            got_k, got_p = pair.k.facts_asof(**ask), pair.p.facts_asof(**ask)
            assert_same(got_k, got_p, _limit_key, cut=True)
    for field in ("valid_from", "valid_to", "recorded_at", "expired_at"):
        for lo, hi in ((GRID[0], GRID[7]), (GRID[2], GRID[3]), (GRID[3], GRID[3])):
            got_k = pair.k.changed_versions(ns, field, lo, hi)
            got_p = pair.p.changed_versions(ns, field, lo, hi)
            assert_same(got_k, got_p, lambda r, f=field: (r[f], r["subject"], r["predicate"]))
    for i in range(len(NAMES)):
        for incoming in (False, True):
            for limit in (1, 2, 10):
                eid = f"en_{run}_0_{i}"
                assert pair.p.entity_slots(
                    eid, incoming=incoming, limit=limit
                ) == pair.k.entity_slots(eid, incoming=incoming, limit=limit)
    assert pair.p.version_count(ns) == pair.k.version_count(ns)
    assert pair.p.counts(f"ns{run}b") == pair.k.counts(f"ns{run}b")


def test_tombstones_counts_and_namespaces_equal_kuzus(pair: Pair) -> None:
    slot = "ns\x1fen_1\x1flikes"
    tombs = [
        {
            "id": "as_2",
            "namespace": "ns",
            "kind": "fact",
            "slot_id": slot,
            "erased_at": GRID[2],
            "reason": "wrong",
        },
        {
            "id": "as_1",
            "namespace": "ns",
            "kind": "fact",
            "slot_id": slot,
            "erased_at": GRID[2],
            "reason": None,
        },
        {
            "id": "as_0",
            "namespace": "ns",
            "kind": "fact",
            "slot_id": slot,
            "erased_at": GRID[5],
            "reason": "é",
        },
        {
            "id": "ep_9",
            "namespace": "other",
            "kind": "episode",
            "slot_id": None,
            "erased_at": GRID[1],
            "reason": None,
        },
    ]
    episode = {c: None for c in EPISODE_COLUMNS} | {
        "id": "ep_1",
        "namespace": "ns",
        "text": "hi",
        "recorded_at": GRID[0],
        "importance": 0.5,
        "quarantined": False,
        "archived": False,
    }
    assertion = {c: None for c in ASSERTION_COLUMNS} | {
        "id": "as_5",
        "namespace": "ns",
        "slot_id": slot,
        "op": "assert",
        "recorded_at": GRID[0],
        "seq": 1,
        "evidence": [],
        "quarantined": False,
    }
    predicate = {
        "name": "likes",
        "cardinality": "many",
        "aliases": [],
        "inverse": None,
        "object_kind": "entity",
        "origin": "user",
    }
    pair.add(
        tombstones=tombs,
        slots=[
            {"id": slot, "namespace": "ns", "subject_id": "en_1", "predicate": "l", "subject": "m"},
            {"id": "z\x1fa\x1fb", "namespace": "zz", "subject_id": "a", "predicate": "b"}
            | {"subject": "m"},
        ],
        episodes=[episode, {**episode, "id": "ep_2", "namespace": "Ép"}],
        assertions=[assertion],
        predicates=[("ns", predicate), ("pred_only", predicate)],
    )
    for t in ("as_0", "as_1", "ep_9", "missing"):
        got, want = pair.p.tombstone(t), pair.k.tombstone(t)
        assert got == want and (got is None or list(got) == list(want or {}))
    for s in (slot, "other\x1fen_1\x1flikes", "no slot"):
        got_all, want_all = pair.p.slot_tombstones(s), pair.k.slot_tombstones(s)
        assert got_all == want_all
        assert [list(r) for r in got_all] == [list(r) for r in want_all]
    assert [r["id"] for r in pair.p.slot_tombstones(slot)] == ["as_1", "as_2", "as_0"]
    for ns in ("ns", "other", "zz", "Ép", "pred_only", "none"):
        assert pair.p.counts(ns) == pair.k.counts(ns)
        assert list(pair.p.counts(ns)) == list(pair.k.counts(ns))
    assert pair.p.counts("ns")["Tombstone"] == 3
    assert pair.p.namespaces() == pair.k.namespaces() == ["ns", "zz", "Ép"]


def test_point_query_runs_on_an_index(pair: Pair) -> None:
    """The slot, subject and object reads seek their namespace-leading index, even on a
    table the planner knows is big (fresh statistics)."""
    many = [
        {
            **{c: None for c in FACT_COLUMNS},
            "id": f"fa_{i:05d}",
            "namespace": "ns0",
            "slot_id": f"ns0\x1fen_{i % 500}\x1flikes",
            "subject_id": f"en_{i % 500}",
            "object_id": f"en_{i % 300}",
            "subject": "s",
            "predicate": "likes",
            "object": "o",
            "recorded_at": GRID[i % 8],
            "evidence": [],
            "quarantined": False,
        }
        for i in range(5000)
    ]
    _insert(pair.pg.db, "fact", FACT_COLUMNS, many)
    pair.pg.db.execute("ANALYZE fact")
    k = GRID[4]
    for anchor, index in (
        ({"slot_id": "ns0\x1fen_7\x1flikes"}, "fact_slot"),
        ({"subject_id": "en_7"}, "fact_subject"),
        ({"object_id": "en_7"}, "fact_object"),
    ):
        ask = dict(namespace="ns0", valid_at=k, known_at=k, **anchor)
        plan = pair.p.facts_asof(**ask, explain=True)[0]["plan"]
        assert index in plan and "Seq Scan" not in plan, plan
        assert len(pair.p.facts_asof(**ask)) > 0


def test_tombstone_ddl_indexes_the_slot_reads(pair: Pair) -> None:
    rows = pair.pg.db.query(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'tombstone'"
    )
    defs = " ".join(r["indexdef"] for r in rows)
    assert "(namespace, slot_id)" in defs and "(namespace, id)" in defs and "(id)" in defs
