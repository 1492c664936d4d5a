"""The store's choke point: parameter checks, UTC handling, migrations, plans."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from palimpsest import Memory, SchemaError, StoreError
from palimpsest.graph import SCHEMA_VERSION, Database, Store, check_params


def test_parameter_names_must_match_exactly() -> None:
    check_params("MATCH (e:Entity {id: $id}) RETURN e", {"id": "x"})
    with pytest.raises(StoreError):  # a missing PK parameter would match every row in 0.11.3
        check_params("MATCH (e:Entity {id: $id}) DETACH DELETE e", {})
    with pytest.raises(StoreError):
        check_params("MATCH (e:Entity {id: $id}) RETURN e", {"id": "x", "extra": 1})


def test_unbound_parameter_never_reaches_kuzu(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m")
    try:
        with store.write():
            store.set_meta("a", "1")
            store.set_meta("b", "2")
        with pytest.raises(StoreError):
            store.db.query("MATCH (m:Meta) WHERE m.key = $key DELETE m")
        assert store.get_meta("a") == "1" and store.get_meta("b") == "2"
    finally:
        store.close()


def test_aware_times_keep_their_instant(tmp_path: Path) -> None:
    plus2 = timezone(timedelta(hours=2))
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        f = mem.assert_fact(
            "user", "likes", "tea", valid_from=datetime(2024, 3, 10, 12, 30, tzinfo=plus2)
        )
        stored = mem.facts("user", "likes", valid_at="2024-03-10T10:30:00Z")
        assert [x.object for x in stored] == ["tea"]
        assert stored[0].valid_from == datetime(2024, 3, 10, 10, 30, tzinfo=UTC)
        assert stored[0].valid_from.tzinfo is not None and f.valid_from == stored[0].valid_from
        assert mem.facts("user", "likes", valid_at="2024-03-10T10:29:59Z") == []


def test_migrations_are_recorded_and_newer_schemas_refused(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m")
    rows = store.db.query("MATCH (m:Migration) RETURN m.version AS v ORDER BY v")
    assert [r["v"] for r in rows] == list(range(1, SCHEMA_VERSION + 1))
    with store.write():
        store.db.query(
            "CREATE (:Migration {version: $v, name: $n, applied_at: $t})",
            v=SCHEMA_VERSION + 1,
            n="from the future",
            t=datetime.now(UTC),
        )
    store.close()
    with pytest.raises(SchemaError):
        Store.open(tmp_path / "m")
    Store.open(tmp_path / "other").close()  # the failed open released its lock


def test_failed_write_rolls_back_everything(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "m")
    try:
        with pytest.raises(RuntimeError), store.write():
            store.set_meta("x", "1")
            raise RuntimeError("boom")
        assert store.get_meta("x") is None
    finally:
        store.close()


def test_point_query_plan_is_anchored_on_the_primary_key(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "lives_in", "Sydney")
        store = mem._store
        slot = next(iter(store.db.query("MATCH (s:Slot) RETURN s.id AS id")))["id"]
        now = datetime.now(UTC)
        plan = store.facts.facts_asof(
            namespace="default", valid_at=now, known_at=now, slot_id=slot, explain=True
        )[0]["plan"]
        assert "PRIMARY_KEY_SCAN" in plan
        # Fact may only be read through the semi-mask the anchored side builds
        assert "SCAN_NODE_TABLE" not in plan or "SEMI_MASKER" in plan


def test_database_is_single_per_process(tmp_path: Path) -> None:
    db = Database.open(tmp_path / "g.kuzu")
    try:
        from palimpsest import MemoryLocked

        with pytest.raises(MemoryLocked):
            Database.open(tmp_path / "g.kuzu")
    finally:
        db.close()


def test_bulk_writes_go_to_the_wal_not_a_forced_checkpoint(tmp_path: Path) -> None:
    # a COPY makes Kùzu checkpoint the whole database at commit (the cost that grew
    # with its size); LOAD FROM ... CREATE is logged, so the WAL keeps the batch
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        mem.assert_many(
            [{"subject": f"p{i}", "predicate": "likes", "object": f"o{i % 7}"} for i in range(200)]
        )
        wal = tmp_path / "m" / "graph.kuzu.wal"
        assert wal.exists() and wal.stat().st_size > 0
        assert len(mem.facts("p3", "likes")) == 1
        assert mem.entity("o3") is not None


def test_one_statement_write_refuses_a_missing_slot(tmp_path: Path) -> None:
    # a write to a stored slot replaces its row: a MATCH that finds nothing fails the
    # whole statement, and nothing of it is written
    from palimpsest.storage import FactWrite, SlotHead

    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        f = mem.assert_fact("user", "likes", "tea")
        store = mem._store
        before = store.db.query("MATCH (a:Assertion) RETURN count(*) AS c")[0]["c"]
        a = store.slots.assertion(f.id)
        assert a is not None
        ghost = {
            "id": "default\x1fnobody\x1flikes",
            "namespace": "default",
            "subject_id": "nobody",
            "predicate": "likes",
            "subject": "nobody",
        }
        head = SlotHead(ghost)
        with pytest.raises(StoreError), store.write():
            store.slots.write_facts(
                FactWrite(
                    at=datetime.now(UTC),
                    assertions=[{**a, "id": "fa_ghost", "slot_id": ghost["id"]}],
                ),
                heads={ghost["id"]: head},
            )
        assert store.db.query("MATCH (a:Assertion) RETURN count(*) AS c")[0]["c"] == before
        assert store.slots.assertion("fa_ghost") is None


def test_remembered_batches_index_each_text_under_its_own_words(tmp_path: Path) -> None:
    # LOAD FROM / UNWIND + CREATE would index every row under the first row's text;
    # small batches are written row by row (WAL-logged, no forced checkpoint)
    words = ["avocado", "bassoon", "cathedral", "dolphin"]
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        mem.remember("A first turn, so that the full-text index exists.", session="s0")
        assert mem.recall("first turn")  # builds the index before the batch below
        eps = mem.remember_many(
            [{"text": f"We talked about the {w} for a while.", "session": "s1"} for w in words]
        )
        assert (tmp_path / "m" / "graph.kuzu.wal").stat().st_size > 0
        for w, ep in zip(words, eps, strict=True):
            hits = mem.recall(f"the {w}", k=3)
            assert hits and hits[0].episode_id == ep.id, w


def test_seeks_find_existing_keys_and_skip_missing(tmp_path: Path) -> None:
    # 101 distinct keys (a repeated one too): statements of 64, 32, 4 and 1 keys, each
    # a UNION ALL of primary-key seeks
    from palimpsest.graph._cypher import READ_SIZES, seek_chunks

    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        facts = mem.assert_many(
            [{"subject": f"p{i}", "predicate": "likes", "object": "tea"} for i in range(90)]
        )
        store = mem._store
        slot_ids = [f"default\x1f{f.subject_id}\x1flikes" for f in facts]
        asked = [*slot_ids, *(f"nope{i}" for i in range(10)), slot_ids[3], "also-missing"]
        assert [len(c) for c in seek_chunks(asked, READ_SIZES)] == [64, 32, 4, 1]
        from palimpsest.graph._cypher import Keys

        states = Keys(store.db).seek("Slot", asked, ("tail_n", "tail"))
        assert sorted(states) == sorted(slot_ids)
        assert all(r["tail_n"] == 2 and r["tail"] for r in states.values())  # assertion, version
        ents = store.names.entities_by_ids([f.subject_id for f in facts if f.subject_id] + ["en_x"])
        assert sorted(r["name"] for r in ents) == sorted(f"p{i}" for i in range(90))
        keys = store.names.entity_ids_for_keys("default", ["p0", "p8", "nobody"])
        assert set(keys) == {"p0", "p8"}


@pytest.mark.parametrize("rows_per_seek", [0, 10**9])
def test_bulk_updates_replace_slot_rows_by_seeks_or_one_scan_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows_per_seek: int
) -> None:
    # beyond FEW keys, a batch replaces slot rows by seeks while they cost less than
    # one scan-and-join of the table (a large memory), else by the scan: same answers
    import palimpsest.graph._cypher as cypher

    monkeypatch.setattr(cypher, "SCAN_ROWS_PER_SEEK", rows_per_seek)
    n = cypher.FEW + 22
    t0 = datetime(2020, 1, 1, tzinfo=UTC)
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        mem.assert_many(
            [
                {"subject": f"p{i}", "predicate": "lives_in", "object": "Oslo", "valid_from": t0}
                for i in range(n)
            ]
        )
        seen: list[str] = []
        real = mem._store.db.query

        def spy(cypher_text: str, /, **params: object) -> object:
            seen.append(cypher_text)
            return real(cypher_text, **params)

        monkeypatch.setattr(mem._store.db, "query", spy)
        later = t0 + timedelta(days=30)
        mem.assert_many(
            [
                {"subject": f"p{i}", "predicate": "lives_in", "object": "Rome", "valid_from": later}
                for i in range(n)
            ]
        )
        seeks = [c for c in seen if "MATCH (x0:Slot {id: $k0})" in c]
        scans = [c for c in seen if "UNWIND $ids AS i MATCH (x:Slot " in c]
        assert bool(seeks) == (rows_per_seek == 0) and bool(scans) == (rows_per_seek > 0)
        for i in (0, n // 2, n - 1):
            assert [f.object for f in mem.facts(f"p{i}", "lives_in", valid_at=later)] == ["Rome"]
            assert [f.object for f in mem.facts(f"p{i}", "lives_in", valid_at=t0)] == ["Oslo"]
            assert len(mem.history(f"p{i}", "lives_in")) == 3  # superseded, cut back, new


def test_bulk_tables_fill_missing_lists_and_flags_like_single_writes() -> None:
    from palimpsest.graph._bulk import arrow_table

    rows = [{"evidence": None, "quarantined": None}, {"evidence": ("e1",), "quarantined": 1}]
    filled = arrow_table(("evidence", "quarantined"), rows, fill=True).to_pylist()
    assert filled == [
        {"evidence": [], "quarantined": False},
        {"evidence": ["e1"], "quarantined": True},
    ]
    raw = arrow_table(("evidence", "quarantined"), rows[:1]).to_pylist()
    assert raw == [{"evidence": None, "quarantined": None}]


def test_only_statements_anchored_on_primary_keys_run_on_one_thread() -> None:
    from palimpsest.graph._cypher import SLOT_FACTS
    from palimpsest.graph._db import serial

    assert serial("MATCH (s:Slot {id: $id}), (x:Line {id: $id}) RETURN s.id")
    assert serial("MATCH (x:Fact {id: $k0}) RETURN 0 UNION ALL MATCH (x:Fact {id: $k1}) RETURN 1")
    assert serial(f"{SLOT_FACTS} RETURN f.id AS id")
    assert serial("CREATE (:Entity {id: $id, aliases: CAST($a AS STRING[])})")
    assert not serial("MATCH (s:Slot {id: $id}), (f:Fact) RETURN f.id")
    assert not serial("MATCH (a:Assertion) RETURN max(a.seq) AS s")
    assert not serial("UNWIND $ids AS i MATCH (f:Fact {id: i}) RETURN f.id")
    assert not serial("CALL QUERY_FTS_INDEX('EpisodeText', 'fts', $q, top := 5) RETURN node.id")


def test_vector_rows_from_plain_lists_or_arrow_come_back_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a few rows go without pyarrow while it is not loaded (a cold remember never loads
    # it), many through it; either way a float32 reads back as written, and existing
    # ids are skipped
    import numpy as np

    from palimpsest.graph import _embeddings

    rng = np.random.default_rng(7)
    few, many = 3, _embeddings._ROWWISE_MAX + 5
    whole = rng.standard_normal((few + many, 384)).astype(np.float32)
    nosubj = rng.standard_normal((few + many, 384)).astype(np.float32)
    ids = [f"k{i}" for i in range(few + many)]
    written: list[int] = []
    arrow = _embeddings._fixed
    monkeypatch.setattr(_embeddings, "_arrow_loaded", lambda: False)
    monkeypatch.setattr(_embeddings, "_fixed", lambda m: written.append(len(m)) or arrow(m))
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        es = mem._store.embeddings
        es.create_statements(ids[:few], ["default"] * few, [whole[:few], nosubj[:few]])
        assert written == []  # from plain lists
        es.create_statements(ids, ["default"] * len(ids), [whole, nosubj])  # few are skipped
        assert written == [many, many]  # through Arrow
        got = es.statement_vectors(ids)
        assert sorted(got) == sorted(ids)
        for i, k in enumerate(ids):
            assert np.array_equal(got[k][0], whole[i]) and np.array_equal(got[k][1], nosubj[i])
        assert es.statement_ids([*ids, "nope"]) == set(ids)
        with pytest.raises(ValueError, match="vectors must be"):
            es.create_statements(["x"], ["default"], [whole[:1, :100], nosubj[:1, :100]])


def test_opening_a_memory_leaves_the_import_system_alone(tmp_path: Path) -> None:
    """`quiet_module_probes` patches `importlib.util.find_spec` process-wide: only the
    project's own processes call it (owner, mcp, serve), never a library user's open."""
    import importlib.util

    from palimpsest import Memory

    before = importlib.util.find_spec
    Memory.open(tmp_path / "m", extractor=None, embedder=None).close()
    assert importlib.util.find_spec is before
