"""The PostgreSQL store's names and pages slices answer as the Kùzu store's do.

    >>> pytest tests/test_postgres_names.py            # doctest: +SKIP

The same calls on both stores, the same rows back (keys in the same order, aware UTC
times). Reads Kùzu leaves unordered are compared sorted. The fact, slot and assertion
tables belong to the slots slice: where it has not created them the test does, with
the columns it needs (IF NOT EXISTS: the slice's own tables win).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import graph, postgres
from palimpsest.graph._columns import FACT_COLUMNS

T0 = datetime(2026, 1, 1, tzinfo=UTC)
K = T0 + timedelta(days=30)  # the moment the pages are read as of

_T = 'text COLLATE "C"'
_SLOTS_DDL = (
    f"CREATE TABLE IF NOT EXISTS slot (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" subject_id {_T}, predicate {_T}, subject {_T}, pages bigint, tail_n bigint,"
    f" tail {_T}, PRIMARY KEY (namespace, id))",
    f"CREATE TABLE IF NOT EXISTS assertion (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" slot_id {_T}, op {_T}, object_id {_T}, valid_from timestamptz,"
    " valid_to timestamptz, recorded_at timestamptz, seq bigint,"
    f" confidence double precision, author_kind {_T}, evidence text[], quarantined boolean,"
    f" retracted_at timestamptz, retract_reason {_T}, origin {_T},"
    " PRIMARY KEY (namespace, id))",
    f"CREATE TABLE IF NOT EXISTS fact (id {_T} NOT NULL, namespace {_T} NOT NULL,"
    f" slot_id {_T}, assertion_id {_T}, subject_id {_T}, subject {_T}, predicate {_T},"
    f" object_id {_T}, object {_T}, statement {_T}, valid_from timestamptz,"
    " valid_to timestamptz, recorded_at timestamptz, expired_at timestamptz,"
    f" confidence double precision, author_kind {_T}, evidence text[], quarantined boolean,"
    " PRIMARY KEY (namespace, id))",
)


@pytest.fixture
def stores(pg_url: str, tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    pg = postgres.Store.open(pg_url)
    kz = graph.Store.open(tmp_path / "kuzu")
    with pg.write():
        for stmt in _SLOTS_DDL:
            pg.db.execute(stmt)
    try:
        yield kz, pg
    finally:
        pg.close()
        kz.close()


def both(stores: tuple[Any, Any], call: Any) -> tuple[Any, Any]:
    """`call(store)` on each store: (Kùzu's answer, PostgreSQL's)."""
    return call(stores[0]), call(stores[1])


def write(stores: tuple[Any, Any], call: Any) -> None:
    for s in stores:
        with s.write():
            call(s)


def same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]], *, by: Any = None) -> None:
    if by is not None:
        a, b = sorted(a, key=by), sorted(b, key=by)
    assert [list(r) for r in a] == [list(r) for r in b]
    assert a == b
    for row in b:
        for v in row.values():
            if isinstance(v, datetime):
                assert v.utcoffset() == timedelta(0)


def entity(ns: str, eid: str, name: str, key: str, *, aliases: list[str] | None = None) -> dict:
    return {
        "id": eid,
        "namespace": ns,
        "key": key,
        "name": name,
        "type": None,
        "aliases": aliases or [],
        "created_at": T0 + timedelta(minutes=len(eid)),
    }


def episode(ns: str, eid: str, minutes: int, session: str | None, **kw: Any) -> dict:
    return {
        "id": eid,
        "namespace": ns,
        "text": f"text of {eid}",
        "speaker": kw.get("speaker", "user"),
        "author_kind": "user",
        "source": kw.get("source"),
        "session": session,
        "reply_to": None,
        "occurred_at": T0 + timedelta(minutes=minutes),
        "recorded_at": T0 + timedelta(minutes=minutes, seconds=1, microseconds=7),
        "fingerprint": f"fp{minutes % 3}",
        "importance": 0.25 * (minutes % 4),
        "kind": "turn",
        "quarantined": minutes % 5 == 0,
        "archived": False,
    }


def fact(ns: str, fid: str, s: str, p: str, o: str, names: dict[str, str], **kw: Any) -> dict:
    row = {c: None for c in FACT_COLUMNS}
    row.update(
        id=fid,
        namespace=ns,
        slot_id=f"{ns}\x1f{s}\x1f{p}",
        assertion_id=kw.pop("aid", f"as_{fid}"),
        subject_id=s,
        subject=names[s],
        predicate=p,
        object_id=o,
        object=names[o],
        statement=f"{names[s]} {p} {names[o]}",
        valid_from=T0,
        recorded_at=T0 + timedelta(days=1),
        confidence=0.9,
        author_kind="user",
        evidence=["ep_1"],
        quarantined=False,
    )
    row.update(kw)
    return row


def insert_facts(stores: tuple[Any, Any], rows: list[dict]) -> None:
    kz, pg = stores
    with kz.write():
        kz.slots.create_versions(rows)
    cols = ", ".join(FACT_COLUMNS)
    marks = ", ".join("%s" for _ in FACT_COLUMNS)
    with pg.write():
        pg.db.execute_many(
            f"INSERT INTO fact ({cols}) VALUES ({marks})",
            [tuple(r[c] for c in FACT_COLUMNS) for r in rows],
        )


# --- names ---------------------------------------------------------------------------------
def test_predicates_match(stores: tuple[Any, Any]) -> None:
    def fill(s: Any) -> None:
        for ns, name, card in [("default", "lives_in", "one"), ("default", "likes", "many")]:
            s.names.upsert_predicate(
                ns,
                {
                    "name": name,
                    "cardinality": card,
                    "aliases": ("dwells in",) if name == "lives_in" else [],
                    "inverse": None,
                    "object_kind": "entity",
                    "origin": "default",
                },
            )
        s.names.upsert_predicate(
            "other",
            {
                "name": "likes",
                "cardinality": "one",
                "aliases": ["enjoys"],
                "inverse": "liked_by",
                "object_kind": None,
                "origin": "user",
            },
        )
        # a change of definition keeps one row
        s.names.upsert_predicate(
            "default",
            {
                "name": "likes",
                "cardinality": "one",
                "aliases": ["fancies", "enjoys"],
                "inverse": "liked_by",
                "object_kind": "value",
                "origin": "user",
            },
        )

    write(stores, fill)
    for ns in ("default", "other", "none"):
        a, b = both(stores, lambda s, ns=ns: s.names.predicates(ns))
        same_rows(a, b, by=lambda r: r["id"])


def _people(n: int, ns: str = "default") -> list[dict]:
    names = ["Mira", "Émile", "ÄÖÜ Straße", "İstanbul", "Bob", "bobby", "Alice"]
    return [
        entity(ns, f"en_{ns[0]}{i:03d}", names[i % len(names)] + f" {i}", f"key {i}")
        for i in range(n)
    ]


@pytest.mark.parametrize("n", [5, 40])  # 40: Kùzu's bulk path (LOAD FROM)
def test_entities_and_keys_match(stores: tuple[Any, Any], n: int) -> None:
    people = _people(n)
    people[1]["aliases"] = ["emile", "em"]
    people[2]["type"] = "place"

    def fill(s: Any) -> None:
        s.names.create_entities(people)
        s.names.create_entities(_people(3, "other"))
        s.names.add_entity_keys(
            [
                ("default", "emile", people[1]["id"]),
                ("default", "em", people[1]["id"]),
                ("default", "key 0", people[2]["id"]),  # a key moved to another entity
                ("other", "em", "en_o001"),
                ("default", "mirabel", people[0]["id"]),
            ]
        )

    write(stores, fill)
    kz, pg = stores
    for ns in ("default", "other", "none"):
        assert kz.names.entity_keys(ns) == pg.names.entity_keys(ns)
        assert kz.names.entity_key_count(ns) == pg.names.entity_key_count(ns)
        assert kz.names.entity_names(ns) == pg.names.entity_names(ns)
        same_rows(kz.names.entities(ns), pg.names.entities(ns), by=lambda r: r["id"])
    for key in ("key 0", "key 1", "emile", "em", "nobody", ""):
        assert kz.names.entity_id_for_key("default", key) == pg.names.entity_id_for_key(
            "default", key
        )
    keys = ["key 3", "nobody", "em", "key 1", "key 3", "mirabel"]
    assert kz.names.entity_ids_for_keys("default", keys) == pg.names.entity_ids_for_keys(
        "default", keys
    )
    assert pg.names.entity_ids_for_keys("default", []) == {}
    for eid in (people[1]["id"], people[2]["id"], "en_o002", "missing"):
        a, b = kz.names.entity(eid), pg.names.entity(eid)
        assert (a is None) == (b is None)
        if a is not None:
            same_rows([a], [b])
    ids = [people[3]["id"], "missing", people[0]["id"], "en_o000"]
    same_rows(kz.names.entities_by_ids(ids), pg.names.entities_by_ids(ids))
    assert pg.names.entities_by_ids([]) == []
    for text in ("em", "key 1", "e", "", "zz", "ey 3"):
        for limit in (1, 3, 50):
            a, b = both(
                stores, lambda s, t=text, m=limit: s.names.search_entity_keys("default", t, m)
            )
            same_rows(a, b)


def test_orphan_entities_match(stores: tuple[Any, Any]) -> None:
    ns = "default"
    rows = [
        entity(ns, eid, eid.title(), eid, aliases=[eid + " alias"])
        for eid in ("subj", "obj", "slotted", "asserted", "kept", "orphan_a", "orphan_b")
    ]
    names = {r["id"]: r["name"] for r in rows}

    def fill(s: Any) -> None:
        s.names.create_entities(rows)
        s.names.create_entities([entity("other", "lonely", "Lonely", "lonely")])
        s.names.add_entity_keys(
            [(ns, r["id"] + " alias", r["id"]) for r in rows] + [("other", "x", "lonely")]
        )

    write(stores, fill)
    insert_facts(stores, [fact(ns, "f1", "subj", "knows", "obj", names)])
    kz, pg = stores
    with kz.write():
        kz.db.query(
            "CREATE (:Slot {id: $id, namespace: $ns, subject_id: $s})",
            id="sl1",
            ns=ns,
            s="slotted",
        )
        kz.db.query(
            "CREATE (:Assertion {id: $id, namespace: $ns, object_id: $o})",
            id="as1",
            ns=ns,
            o="asserted",
        )
    with pg.write():
        pg.db.execute(
            "INSERT INTO slot (id, namespace, subject_id) VALUES (%s, %s, %s)",
            ("sl1", ns, "slotted"),
        )
        pg.db.execute(
            "INSERT INTO assertion (id, namespace, object_id) VALUES (%s, %s, %s)",
            ("as1", ns, "asserted"),
        )
    out: list[list[str]] = []
    for s in stores:
        with s.write():
            out.append(sorted(s.names.delete_orphan_entities(ns, ["kept"])))
    assert out[0] == out[1] == ["orphan_a", "orphan_b"]
    for n in (ns, "other"):
        assert kz.names.entity_keys(n) == pg.names.entity_keys(n)
        same_rows(kz.names.entities(n), pg.names.entities(n), by=lambda r: r["id"])
    with pg.write():
        assert pg.names.delete_orphan_entities(ns, ["kept"]) == []
        assert pg.names.delete_orphan_entities(ns, []) == ["kept"]


def test_episodes_match(stores: tuple[Any, Any]) -> None:
    rows = [
        episode("default", f"ep_{i:02d}", (i * 7) % 23, f"s{i % 3}" if i % 4 else None)
        for i in range(12)
    ]
    rows.append(episode("default", "ep_tie", (3 * 7) % 23, "s0", source="import"))
    rows.append(episode("other", "ep_x", 1, "s1"))

    write(stores, lambda s: s.names.create_episodes(rows))
    kz, pg = stores
    for eid in ("ep_03", "ep_tie", "ep_x", "missing"):
        a, b = kz.names.episode(eid), pg.names.episode(eid)
        assert (a is None) == (b is None)
        if a is not None:
            same_rows([a], [b])
    ids = ["ep_05", "missing", "ep_x", "ep_01", "ep_05"]
    a, b = kz.names.episodes_by_id(ids), pg.names.episodes_by_id(ids)
    assert list(a) == list(b)
    same_rows(list(a.values()), list(b.values()))
    for limit, offset in ((100, 0), (5, 0), (5, 5), (3, 11), (4, 40)):
        same_rows(
            kz.names.episodes("default", limit, offset), pg.names.episodes("default", limit, offset)
        )
    write(stores, lambda s: s.names.delete_episode("ep_03"))
    same_rows(kz.names.episodes("default", 100), pg.names.episodes("default", 100))
    assert pg.names.episode("ep_03") is None


# --- pages ---------------------------------------------------------------------------------
NAMES = {
    "mira": "Mira",
    "berlin": "Berlin",
    "alice": "Alice",
    "bob": "Bob",
    "emile": "Émile",
    "person": "person",
    "tea": "Likes TEA",
    "ghost": "Ghost",
    "paris": "Paris",
    "city": "City",
}
OWN = sorted(("note", "type"))


def _graph(stores: tuple[Any, Any]) -> None:
    ents = [entity("default", eid, name, name.lower()) for eid, name in NAMES.items()]
    ents.append(entity("other", "zed", "Zed", "zed"))

    def fill(s: Any) -> None:
        s.names.create_entities(ents)
        s.names.add_entity_keys([("default", "em", "emile")])

    write(stores, fill)
    day = timedelta(days=1)
    ns = "default"
    f = [
        fact(ns, "f01", "mira", "lives_in", "berlin", NAMES),
        fact(ns, "f02", "mira", "knows", "alice", NAMES, recorded_at=T0 + 2 * day),
        fact(ns, "f03", "alice", "knows", "mira", NAMES, recorded_at=T0 + 2 * day),
        fact(ns, "f04", "bob", "type", "person", NAMES),
        fact(ns, "f05", "bob", "knows", "bob", NAMES),  # a self-loop
        fact(ns, "f06", "mira", "note", "tea", NAMES, recorded_at=T0 + 3 * day),
        fact(ns, "f07", "mira", "note", "person", NAMES, recorded_at=T0 + 3 * day, aid="as_a"),
        fact(ns, "f08", "emile", "knows", "mira", NAMES, expired_at=T0 + 2 * day),
        fact(ns, "f09", "emile", "lives_in", "paris", NAMES, recorded_at=K + day),
        fact(ns, "f10", "ghost", "knows", "bob", NAMES, quarantined=True),
        fact(ns, "f11", "emile", "lives_in", "berlin", NAMES, valid_to=T0 + 5 * day),
        fact(ns, "f12", "emile", "type", "person", NAMES, valid_from=K + day),
        fact(ns, "f13", "alice", "type", "person", NAMES),
        fact(ns, "f14", "alice", "type", "city", NAMES, recorded_at=T0 + 4 * day),
        fact(ns, "f15", "emile", "note", "tea", NAMES, recorded_at=T0 + 4 * day),
        fact(ns, "f16", "emile", "knows", "alice", NAMES, expired_at=K + day),
        fact("other", "f17", "zed", "knows", "zed", {"zed": "Zed"}),
    ]
    insert_facts(stores, f)


def test_pages_match(stores: tuple[Any, Any]) -> None:
    _graph(stores)
    kp, pp = (s.pages("default", K, OWN) for s in stores)
    for needle in ("", "mi", "émile", "person", "tea", "value", "thing", "zz", "city"):
        for offset, limit in ((0, 50), (0, 2), (2, 3), (9, 5)):
            a = kp.entities(
                needle=needle,
                type_predicate="type",
                value_predicates=["lives_in"],
                kinds=("thing", "value"),
                offset=offset,
                limit=limit,
            )
            b = pp.entities(
                needle=needle,
                type_predicate="type",
                value_predicates=["lives_in"],
                kinds=("thing", "value"),
                offset=offset,
                limit=limit,
            )
            same_rows(a[0], b[0])
            assert a[1:] == b[1:], needle
    # nothing valued
    args: dict[str, Any] = {
        "needle": "",
        "type_predicate": "type",
        "value_predicates": [],
        "kinds": ("thing", "value"),
        "offset": 0,
        "limit": 50,
    }
    a, b = kp.entities(**args), pp.entities(**args)
    same_rows(a[0], b[0])
    assert a[1:] == b[1:]

    (kf, ke), (pf, pe) = kp.believed(), pp.believed()
    same_rows(kf, pf, by=lambda r: (r["aid"], r["s"], r["p"]))
    same_rows(ke, pe, by=lambda r: r["id"])

    for eid in ("mira", "emile", "alice", "nobody"):
        for pred in ("note", "type", "knows"):
            for limit in (1, 5):
                assert kp.own(eid, pred, limit) == pp.own(eid, pred, limit)
    keys = ["mira", "em", "nobody", "émile", "mira"]
    assert kp.ids(keys) == pp.ids(keys)
    ids = ["mira", "berlin", "ghost", "paris", "person", "tea", "nobody", "city", "bob"]
    assert kp.mentioned(ids) == pp.mentioned(ids)
    more = [*ids, "alice", "emile"]
    for pred in ("note", "type", "knows"):
        for limit in (1, 2, 10):
            assert kp.own_lists(more, pred, limit) == pp.own_lists(more, pred, limit)
        if pred != "note":  # mira's two notes tie on recorded_at: either may come first
            assert kp.own_first(more, pred) == pp.own_first(more, pred)
        assert kp.own_counts(more, pred) == pp.own_counts(more, pred)
    for group in (["mira", "alice"], ["bob"], ["berlin"], ["mira", "alice", "bob", "berlin"]):
        for limit in (0, 1, 2, 3, 10):
            a, b = kp.relations(group, limit), pp.relations(group, limit)
            same_rows(a[0], b[0])
            assert a[1] == b[1]


def test_pages_of_an_empty_namespace(stores: tuple[Any, Any]) -> None:
    kp, pp = (s.pages("none", K, OWN) for s in stores)
    args: dict[str, Any] = {
        "needle": "",
        "type_predicate": "type",
        "value_predicates": ["lives_in"],
        "kinds": ("thing", "value"),
        "offset": 0,
        "limit": 10,
    }
    assert kp.entities(**args) == pp.entities(**args) == ([], 0, 0)
    assert kp.believed() == pp.believed() == ([], [])
    assert kp.relations(["x"], 5) == pp.relations(["x"], 5) == ([], 0)
    assert kp.mentioned([]) == pp.mentioned([]) == set()
