"""The PostgreSQL store's recall, vectors, embeddings and uses slices give back what the
Kùzu store gives back for the same writes: search texts, episode vectors, what ranking
needs of the episodes (the same Arrow columns and types), uses, name and statement
vectors, porter stems; vector search is exact, and generations are bookkeeping only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest.errors import StoreError
from palimpsest.graph import Store as KuzuStore
from palimpsest.postgres import Store as PgStore
from palimpsest.recall._vectors import ExactVectors
from palimpsest.storage.rows import EMB_DIM

# The tables other slices own, as their Kùzu node tables (the names and slots slices
# are written elsewhere; IF NOT EXISTS leaves theirs alone once they are).
OTHERS = (
    'CREATE TABLE IF NOT EXISTS episode (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, text text, speaker text COLLATE "C",'
    ' author_kind text COLLATE "C", source text COLLATE "C", session text COLLATE "C",'
    ' reply_to text COLLATE "C", occurred_at timestamptz, recorded_at timestamptz,'
    ' fingerprint text COLLATE "C", importance double precision, kind text COLLATE "C",'
    " quarantined boolean, archived boolean, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS episode_session_time ON episode (namespace, session, occurred_at)",
    'CREATE TABLE IF NOT EXISTS entity (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, key text COLLATE "C", name text COLLATE "C",'
    ' type text COLLATE "C", aliases text[], created_at timestamptz, PRIMARY KEY (namespace, id))',
    'CREATE TABLE IF NOT EXISTS fact (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, subject text COLLATE "C",'
    ' predicate text COLLATE "C", object text COLLATE "C", PRIMARY KEY (namespace, id))',
)
T0 = datetime(2024, 3, 1, 9, 0, 0, 123456, tzinfo=UTC)


def _episode(i: int, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": f"ep_{i}",
        "namespace": "default",
        "text": f"turn {i}",
        "speaker": "user" if i % 2 else "Mira",
        "author_kind": "user",
        "source": "chat",
        "session": "s1",
        "reply_to": None,
        "occurred_at": T0 + timedelta(minutes=i),
        "recorded_at": T0 + timedelta(hours=1, seconds=i),
        "fingerprint": f"f{i}",
        "importance": 0.25 * i,
        "kind": "turn",
        "quarantined": False,
        "archived": False,
    }
    row.update(kw)
    return row


EPISODES = [
    _episode(1),
    _episode(2),
    _episode(3, session="s2", quarantined=True),
    _episode(4, archived=True, importance=None),
    # one transaction time shared by two (a batch): insertion order within it
    _episode(6, recorded_at=T0 + timedelta(hours=2), occurred_at=T0 - timedelta(days=1)),
    _episode(5, recorded_at=T0 + timedelta(hours=2), speaker=None, session=None),
    _episode(7, namespace="other", session="s1"),
]
TEXTS = [
    {"id": e["id"], "namespace": e["namespace"], "text": f"{e['text']} moving sisters", "prev": p}
    for e, p in zip(EPISODES, [None, "ep_1", None, "ep_2", None, "ep_6", None], strict=True)
] + [{"id": "ep_gone", "namespace": "default", "text": "an orphan", "prev": "ep_1"}]


def _vectors(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, EMB_DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


EMB_IDS = ["ep_1", "ep_2", "ep_3", "ep_4", "ep_6", "ep_7", "ep_gone"]
EMB_NS = ["default"] * 5 + ["other", "default"]
EMB, CTX = _vectors(len(EMB_IDS), 1), _vectors(len(EMB_IDS), 2)
ENTITIES = [
    {"id": "en_1", "namespace": "default", "key": "mira", "name": "Mira", "type": "person",
     "aliases": [], "created_at": T0},
    {"id": "en_2", "namespace": "default", "key": "sydney", "name": "Sydney", "type": None,
     "aliases": ["syd"], "created_at": T0},
    {"id": "en_3", "namespace": "default", "key": "42", "name": "42", "type": "value",
     "aliases": [], "created_at": T0},
    {"id": "en_4", "namespace": "other", "key": "bo", "name": "Bo", "type": "person",
     "aliases": [], "created_at": T0},
]  # fmt: skip
FACTS = [
    ("fa_1", "default", "Mira", "lives_in", "Sydney"),
    ("fa_2", "default", "Mira", "lives_in", "Sydney"),  # a second version: one statement
    ("fa_3", "default", "Mira", "age", None),
    ("fa_4", "other", "Bo", "likes", "tea"),
]


def _fill(store: Any, *, kuzu: bool) -> None:
    """The same writes on either store (episodes, entities, facts by each one's own means)."""
    if kuzu:
        with store.write():
            store.names.create_episodes(EPISODES)
            store.names.create_entities(ENTITIES)
            for fid, ns, s, p, o in FACTS:
                store.db.query(
                    "CREATE (:Fact {id: $id, namespace: $ns, subject: $s, predicate: $p,"
                    " object: $o})",
                    id=fid,
                    ns=ns,
                    s=s,
                    p=p,
                    o=o,
                )
    else:
        db = store.db
        with store.write():
            for stmt in OTHERS:
                db.execute(stmt)
            _insert(db, "episode", EPISODES)
            _insert(db, "entity", ENTITIES)
            db.execute_many(
                "INSERT INTO fact (id, namespace, subject, predicate, object)"
                " VALUES (%s, %s, %s, %s, %s)",
                FACTS,
            )
    with store.write():
        store.recall.create_texts(TEXTS)
        store.recall.create_embeddings(EMB_IDS, EMB_NS, EMB, CTX)
        store.recall.set_embedder_identity("minilm-test")
        store.uses.record(
            [
                {"id": "ep_1", "namespace": "default", "at": T0 + timedelta(days=1), "n": 2},
                {"id": "ep_2", "namespace": "default", "at": T0 + timedelta(days=2), "n": 1},
            ]
        )
        # never the same episode twice in one batch: Kùzu's LOAD FROM MERGE then leaves
        # the row's columns null (the engine's buffer holds one row per episode)
        store.uses.record(
            [
                {"id": "ep_1", "namespace": "default", "at": T0 + timedelta(hours=5), "n": 1},
                {
                    "id": "ep_7",
                    "namespace": "other",
                    "at": T0 + timedelta(days=3, microseconds=7),
                    "n": 4,
                },
            ]
        )
        store.embeddings.create_names(["en_1", "en_4"], ["default", "other"], _vectors(2, 3))
        store.embeddings.create_names(["en_1", "en_9"], ["default", "default"], _vectors(2, 4))
        store.embeddings.create_statements(
            ["st_a", "st_b"], ["default", "other"], [_vectors(2, 5), _vectors(2, 6)]
        )
        store.embeddings.create_statements(["st_a"], ["default"], [_vectors(1, 7), _vectors(1, 8)])


def _insert(db: Any, table: str, rows: list[dict[str, Any]]) -> None:
    cols = list(rows[0])  # names of ours: the values are bound
    marks = ", ".join(["%s"] * len(cols))
    db.execute_many(
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})",
        [[r[c] for c in cols] for r in rows],
    )


@pytest.fixture
def stores(pg_url: str, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    pg = PgStore.open(pg_url)
    kz = KuzuStore.open(tmp_path / "kuzu")
    try:
        _fill(pg, kuzu=False)
        _fill(kz, kuzu=True)
        yield pg, kz
    finally:
        pg.close()
        kz.close()


def _vectors_by_id(ids: list[str], *ms: np.ndarray) -> dict[str, list[bytes]]:
    return {i: [m[j].tobytes() for m in ms] for j, i in enumerate(ids)}


def test_recall_reads_equal_kuzu(stores: tuple[Any, Any]) -> None:
    pg, kz = stores
    for ns in ("default", "other", "none"):
        a, b = pg.recall.episodes(ns), kz.recall.episodes(ns)
        assert a.schema == b.schema
        assert a.to_pylist() == b.to_pylist()  # the same rows in the same (insertion) order
        assert pg.recall.texts(ns) == kz.recall.texts(ns)
        assert pg.recall.text_ids(ns) == kz.recall.text_ids(ns)
        assert pg.recall.orphans(ns) == kz.recall.orphans(ns)
        assert pg.recall.archived(ns) == kz.recall.archived(ns)
        ids, emb, ctx = pg.recall.embeddings(ns)
        kids, kemb, kctx = kz.recall.embeddings(ns)
        assert emb.dtype == np.float32 and emb.shape == (len(ids), EMB_DIM)
        assert _vectors_by_id(ids, emb, ctx) == _vectors_by_id(kids, kemb, kctx)
    assert pg.recall.orphans("default") == ["ep_gone"]
    assert pg.recall.namespaces_with_episodes() == kz.recall.namespaces_with_episodes()
    asked = ["ep_2", "ep_9", "ep_gone", "ep_7"]
    assert pg.recall.texts_of(asked) == kz.recall.texts_of(asked)
    assert sorted(pg.recall.texts_citing("ep_1")) == sorted(kz.recall.texts_citing("ep_1"))
    assert pg.recall.episode_rows(asked) == kz.recall.episode_rows(asked)
    assert pg.recall.episode_rows(asked)["ep_2"]["occurred_at"].utcoffset() == timedelta(0)
    assert pg.recall.stored_embeddings(asked) == kz.recall.stored_embeddings(asked)
    many = asked + [f"ep_x{i}" for i in range(6000)]  # a backfill's worth: one scan
    assert (
        pg.recall.stored_embeddings(many)
        == kz.recall.stored_embeddings(many)
        == {"ep_2", "ep_7", "ep_gone"}
    )
    for session, before in [
        ("s1", None),
        ("s1", T0 + timedelta(minutes=2)),
        ("s2", T0),
        ("x", None),
    ]:
        assert pg.recall.predecessor("default", session, before) == kz.recall.predecessor(
            "default", session, before
        )
    assert pg.recall.predecessor("default", "s1", None)["id"] == "ep_4"
    assert pg.recall.embedder_identity() == kz.recall.embedder_identity() == "minilm-test"


def test_stems_are_kuzus_porter_and_no_fts_index(stores: tuple[Any, Any]) -> None:
    pg, kz = stores
    words = ["moving", "sisters", "generously", "relational", "zqdbdg", "ponies", "moving", ""]
    assert pg.recall.stems(words) == kz.recall.stems(words)
    assert pg.recall.stems([]) == []
    many = [f"walking{i}s" for i in range(100)]  # a vocabulary's worth at once
    assert pg.recall.stems(many) == kz.recall.stems(many)
    assert pg.recall.drop_fts_index() is False
    with pytest.raises(StoreError, match="not supported by the PostgreSQL store"):
        pg.recall.term_hits("default", "move")
    with pytest.raises(StoreError, match="not supported by the PostgreSQL store"):
        pg.recall.create_reference_index()


def test_recall_deletes_equal_kuzu(stores: tuple[Any, Any]) -> None:
    pg, kz = stores
    for store in (pg, kz):
        with store.write():
            store.recall.delete_for(["ep_gone", "ep_3"])
            store.recall.delete_embeddings(["ep_2"])
    for ns in ("default", "other"):
        assert pg.recall.texts(ns) == kz.recall.texts(ns)
        assert pg.recall.orphans(ns) == kz.recall.orphans(ns) == []
        assert sorted(pg.recall.embeddings(ns)[0]) == sorted(kz.recall.embeddings(ns)[0])
    assert pg.vectors.vector_counts("default") == (3, 3)
    with pg.write():
        n = pg.recall.delete_all_embeddings()
    with kz.write():
        assert n == kz.recall.delete_all_embeddings() == 4
    assert pg.recall.embeddings("default")[0] == [] and pg.embeddings.names_of("default")[0] == []
    assert pg.embeddings.statement_keys_of("default") == set()


def test_vector_search_is_exact_and_generations_are_bookkeeping(
    stores: tuple[Any, Any],
) -> None:
    pg, kz = stores
    vs = pg.vectors
    assert vs.vector_generation() is None and vs.last_vector_generation() == 0
    assert vs.vector_counts("default") == (6, 6)  # every stored vector is searched
    assert vs.vector_counts("none") == (0, 0)
    g = vs.build_vector_generation()
    assert g == 1 and vs.last_vector_generation() == 1 and vs.vector_generation() is None
    g2 = vs.build_vector_generation(publish=False)
    vs.empty_generation(g2)
    vs.publish_vector_generation(g2)
    vs.delete_from_generation(["ep_1"])
    vs.retire_vector_generation()
    assert vs.last_vector_generation() == 2 and vs.vector_generation() is None
    assert sorted(vs.generation_ids(g2, "default")) == sorted(kz.recall.embeddings("default")[0])

    ids, emb, ctx = pg.recall.embeddings("default")
    exact = ExactVectors.of(emb, ctx)
    for q in (EMB[1], CTX[4], _vectors(1, 9)[0]):
        rows, cos = exact.top(q, 3)
        hits = vs.nearest(g, "emb", q, 3, "default", efs=400)
        assert [h[0] for h in hits] == [ids[r] for r in rows]
        assert np.allclose([h[1] for h in hits], cos, atol=1e-6)
        hits = vs.nearest(g, "ctx", q, 10, "default", efs=400)
        assert len(hits) == 6 and hits[0][0] == ids[int(np.argmax(ctx @ q))]
    assert vs.nearest(g, "emb", EMB[0], 5, "other", efs=10)[0][0] == "ep_7"
    assert vs.nearest(g, "emb", EMB[0], 5, "none", efs=10) == []
    with pytest.raises(ValueError):
        vs.nearest(g, "text", EMB[0], 5, "default", efs=10)

    asked = ["ep_6", "ep_9", "ep_1", "ep_7"]
    got, e, c = vs.embeddings_of(asked)
    kgot, ke, kc = kz.vectors.embeddings_of(asked)
    assert got == kgot == ["ep_6", "ep_1", "ep_7"]
    assert e.tobytes() == ke.tobytes() and c.tobytes() == kc.tobytes()
    assert vs.embeddings_of([])[1].shape == (0, EMB_DIM)


def test_uses_equal_kuzu(stores: tuple[Any, Any]) -> None:
    pg, kz = stores
    for ns in ("default", "other", "none"):
        assert pg.uses.uses(ns) == kz.uses.uses(ns)
        ids, times, counts = pg.uses.columns(ns)
        kids, ktimes, kcounts = kz.uses.columns(ns)
        assert dict(zip(ids, times.tolist(), strict=True)) == dict(
            zip(kids, ktimes.tolist(), strict=True)
        )
        assert dict(zip(ids, counts.tolist(), strict=True)) == dict(
            zip(kids, kcounts.tolist(), strict=True)
        )
        assert times.dtype == np.float64 and counts.dtype == np.int64
    assert pg.uses.uses("default")["ep_1"] == (T0 + timedelta(days=1), 3)
    for store in (pg, kz):
        with store.write():
            store.uses.delete(["ep_1", "ep_9"])
    assert pg.uses.uses("default") == kz.uses.uses("default")
    assert list(pg.uses.uses("default")) == ["ep_2"]
    at = T0 + timedelta(days=9)
    with pg.write():  # here the same episode twice in a batch adds up, as two batches would
        pg.uses.record([{"id": "ep_2", "namespace": "default", "at": a, "n": 1} for a in (at, T0)])
    assert pg.uses.uses("default") == {"ep_2": (at, 3)}


def test_embeddings_equal_kuzu(stores: tuple[Any, Any]) -> None:
    pg, kz = stores
    pe, ke = pg.embeddings, kz.embeddings
    asked = ["en_1", "en_2", "en_9", "en_4"]
    assert pe.name_ids(asked) == ke.name_ids(asked) == {"en_1", "en_4", "en_9"}
    for ns in ("default", "other"):
        ids, m = pe.names_of(ns)
        kids, km = ke.names_of(ns)
        assert _vectors_by_id(ids, m) == _vectors_by_id(kids, km)
        assert pe.entities_without_names(ns) == ke.entities_without_names(ns)
        assert pe.orphan_names(ns) == ke.orphan_names(ns)
        assert sorted(pe.statement_rows(ns)) == sorted(ke.statement_rows(ns))
        assert pe.statement_keys_of(ns) == ke.statement_keys_of(ns)
    assert pe.entities_without_names("default") == [("en_2", "Sydney")]
    assert pe.orphan_names("default") == ["en_9"]
    assert pe.names_of("default")[1][0].tobytes() == _vectors(2, 3)[0].tobytes()  # kept first
    keys = ["st_a", "st_b", "st_z"]
    assert pe.statement_ids(keys) == ke.statement_ids(keys) == {"st_a", "st_b"}
    got, kgot = pe.statement_vectors(keys), ke.statement_vectors(keys)
    assert got.keys() == kgot.keys()
    for k in got:
        assert [v.tobytes() for v in got[k]] == [v.tobytes() for v in kgot[k]]
    assert got["st_a"][1].tobytes() == _vectors(2, 6)[0].tobytes()
    assert pe.namespaces_with_entities() == ke.namespaces_with_entities() == ["default", "other"]
    for store in (pg, kz):
        with store.write():
            store.embeddings.delete_names(["en_9"])
            store.embeddings.delete_statements(["st_b"])
    assert pe.name_ids(asked) == ke.name_ids(asked)
    assert pe.statement_keys_of("other") == ke.statement_keys_of("other") == set()
    with pg.write():
        n = pe.delete_all_derived()
    with kz.write():
        assert n == ke.delete_all_derived() == 3
    assert pe.name_ids(asked) == set()


def test_a_second_store_on_the_database_reads_the_same(
    stores: tuple[Any, Any], pg_url: str
) -> None:
    pg, _ = stores
    other = PgStore.open(pg_url)
    try:
        assert other.recall.texts("default") == pg.recall.texts("default")
        assert other.uses.uses("default") == pg.uses.uses("default")
        assert other.recall.embedder_identity() == "minilm-test"
        with pytest.raises(ValueError):
            other.recall.create_embeddings(["ep_x"], ["default"], EMB[:1, :10], CTX[:1, :10])
    finally:
        other.close()
