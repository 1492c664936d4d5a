"""The PostgreSQL slots slice answers as the Kùzu one does.

Written directly (rows in, rows back), and as a mirror: a Kùzu memory runs the real
engine while every call it makes to its slots slice is made on the PostgreSQL one
too; reads made outside a write are compared as they happen, and after each verb
the whole state (every slot's history, every line's starts, point queries at many
moments) is read from both and compared.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.storage.rows import FactWrite, LineAsk, LineEdit, LineStart, LineWindow
from palimpsest.temporal import Reach

T0 = datetime(2030, 1, 1, tzinfo=UTC)
NS = "default"


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


@pytest.fixture
def pg(pg_url: str) -> Iterator[Any]:
    from palimpsest.postgres import Store

    store = Store.open(pg_url)
    try:
        yield store
    finally:
        store.close()


# --- the slice on its own ----------------------------------------------------------------
def _assertion(aid: str, slot: str, obj: str, seq: int, k: datetime, **kw: Any) -> dict[str, Any]:
    return {
        "id": aid,
        "namespace": NS,
        "slot_id": slot,
        "op": "assert",
        "object_id": obj,
        "valid_from": kw.get("valid_from"),
        "valid_to": None,
        "recorded_at": k,
        "seq": seq,
        "confidence": 1.0,
        "author_kind": "user",
        "evidence": kw.get("evidence", []),
        "quarantined": False,
        "retracted_at": None,
        "retract_reason": None,
        "origin": None,
    }


def _version(vid: str, a: dict[str, Any], k: datetime, **kw: Any) -> dict[str, Any]:
    _, subject_id, predicate = a["slot_id"].split("\x1f")
    return {
        "id": vid,
        "namespace": NS,
        "slot_id": a["slot_id"],
        "assertion_id": a["id"],
        "subject_id": subject_id,
        "subject": "Mira",
        "predicate": predicate,
        "object_id": a["object_id"],
        "object": a["object_id"].upper(),
        "statement": f"Mira {predicate} {a['object_id']}",
        "valid_from": kw.get("valid_from", a["valid_from"]),
        "valid_to": kw.get("valid_to"),
        "recorded_at": k,
        "expired_at": None,
        "confidence": 1.0,
        "author_kind": "user",
        "evidence": a["evidence"],
        "quarantined": False,
    }


SLOT = f"{NS}\x1fen_mira\x1flives_in"
SLOT_ROW = {
    "id": SLOT,
    "namespace": NS,
    "subject_id": "en_mira",
    "predicate": "lives_in",
    "subject": "Mira",
}


def _no_statement(v: dict[str, Any]) -> dict[str, Any]:
    return {c: x for c, x in v.items() if c != "statement"}


def _window(store: Any, reach: Reach | None) -> LineWindow:
    return store.slots.line_windows({SLOT: LineAsk(SLOT, NS, "Mira", reach)})[SLOT]


def _write_two(store: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Mira lives in Oslo from day 0, then (known a day later) in Rome from day 10."""
    a1 = _assertion("fa_1", SLOT, "oslo", 1, day(0), valid_from=day(0), evidence=["ep_1"])
    v1 = _version("fv_1", a1, day(0))
    with store.write():
        win = _window(store, Reach(day(0), day(0)))
        assert win.new and win.run == []
        store.slots.write_facts(
            FactWrite(
                at=day(0),
                slots=[SLOT_ROW],
                assertions=[a1],
                insert=[v1],
                lines=[LineEdit(win, [LineStart(day(0), "fa_1", v1)])],
            )
        )
    a2 = _assertion("fa_2", SLOT, "rome", 2, day(1), valid_from=day(10))
    v1b = _version("fv_2", a1, day(1), valid_to=day(10))
    v2 = _version("fv_3", a2, day(1))
    with store.write():
        heads = store.slots.slot_heads([SLOT])
        win = _window(store, Reach(day(10), day(10)))
        assert [s.source for s in win.run] == ["fa_1"] and not win.new
        store.slots.write_facts(
            FactWrite(
                at=day(1),
                assertions=[a2],
                insert=[v1b, v2],
                expire=[v1],
                lines=[
                    LineEdit(win, [LineStart(day(0), "fa_1", v1b), LineStart(day(10), "fa_2", v2)])
                ],
            ),
            heads=heads,
        )
    return [a1, a2], [v1, v1b, v2]


def test_a_write_reads_back_as_history_point_queries_and_windows(pg: Any) -> None:
    log, versions = _write_two(pg)
    heads = pg.slots.slot_heads([SLOT, "nope"])
    assert list(heads) == [SLOT] and heads[SLOT].row == SLOT_ROW
    row, got_log, got_versions = pg.slots.histories([SLOT])[SLOT]
    assert row == SLOT_ROW and got_log == log
    expired = {**versions[0], "expired_at": day(1)}
    assert got_versions == [_no_statement(v) for v in (expired, versions[1], versions[2])]
    # as believed on day 0 and now, at valid times before and after the move
    at = pg.slots.versions_at
    assert [v["id"] for v in at(SLOT, valid_at=day(20), known_at=day(0))] == ["fv_1"]
    assert [v["id"] for v in at(SLOT, valid_at=day(20), known_at=day(1))] == ["fv_3"]
    assert [v["id"] for v in at(SLOT, valid_at=day(5), known_at=day(1))] == ["fv_2"]
    assert [v["id"] for v in at(SLOT, valid_at=None, known_at=day(1))] == ["fv_2", "fv_3"]
    assert at(SLOT, valid_at=day(5), known_at=day(-1)) == []
    # windows: the last start before the reach, those in it, the first after
    win = _window(pg, Reach(day(3), day(4)))
    assert [s.at for s in win.run] == [day(0)] and win.after == day(10)
    assert win.changed_at == day(1) and win.run[0].version == _no_statement(versions[1])
    whole = _window(pg, None)
    assert [s.at for s in whole.run] == [day(0), day(10)] and whole.after is None and whole.whole
    assert pg.slots.assertion("fa_2") == log[1]
    assert pg.slots.assertions_by_id(["fa_1", "x"]) == {"fa_1": log[0]}
    assert pg.slots.assertions_citing(NS, "ep_1") == [log[0]]
    assert pg.slots.slots_of_predicate(NS, "lives_in") == [SLOT]
    assert pg.slots.slot_version_ids(SLOT) == ["fv_1", "fv_2", "fv_3"]
    # a deleted version leaves its line too; the slice answers the same again
    with pg.write():
        pg.slots.delete_versions(["fv_3"])
    assert [s.at for s in _window(pg, None).run] == [day(0)]
    pg.slots.retract_assertion("fa_1", day(2), "wrong")
    assert pg.slots.assertion("fa_1")["retracted_at"] == day(2)


def test_the_slice_answers_as_the_kuzu_slice(pg: Any, tmp_path: Path) -> None:
    from palimpsest.graph import Store as KuzuStore

    kz = KuzuStore.open(tmp_path / "k")
    try:
        with kz.write():  # Kùzu's versions hang off their entities; PostgreSQL's need none
            kz.names.create_entities(
                [
                    {"id": i, "namespace": NS, "key": i, "name": i, "type": None,
                     "aliases": [], "created_at": T0}
                    for i in ("en_mira", "oslo", "rome")
                ]
            )  # fmt: skip
        for store in (kz, pg):
            _write_two(store)
        for store in (kz, pg):
            with store.write():
                # as the engine retracts: the row, then the slot's journal
                store.slots.retract_assertion("fa_2", day(3), "no")
                store.slots.write_facts(FactWrite(at=day(3), retract=[("fa_2", SLOT, "no")]))
        _same_state(kz.slots, pg.slots, [SLOT], [SLOT])
    finally:
        kz.close()


# --- the mirror ----------------------------------------------------------------------------
_WRITES = {
    "write_facts",
    "create_assertions",
    "retract_assertion",
    "set_assertion_evidence",
    "delete_assertion",
    "create_versions",
    "expire_versions",
    "delete_versions",
    "write_histories",
}


def _plain(name: str, out: Any) -> Any:
    """A read's answer without what each store keeps for itself (`handle`), in an order
    both give (scans return rows in storage order)."""
    if name == "slot_heads":
        return {k: (h.row, h.new) for k, h in out.items()}
    if name == "line_windows":
        return {k: _plain_window(w) for k, w in out.items()}
    if name in ("quarantined_claims", "assertions_citing"):
        return sorted(out, key=lambda r: r["id"])
    if name in ("slots_of_predicate", "slot_version_ids"):
        return sorted(out)
    return out


def _plain_window(w: LineWindow) -> tuple[Any, ...]:
    return (w.line_id, w.slot_id, w.namespace, w.subject, w.run, w.after, w.changed_at, w.new)


class Mirror:
    """The Kùzu slots slice, every call also made on the PostgreSQL one."""

    def __init__(self, kz_store: Any, pg: Any) -> None:
        self.kz_store, self.kz, self.pg = kz_store, kz_store.slots, pg
        self.compared = 0
        self.erasing = False
        self.differences: list[tuple[str, Any, Any]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        ours, theirs = getattr(self.kz, name), getattr(self.pg.slots, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            out = ours(*args, **kwargs)
            writing = self.kz_store.in_transaction()
            self.erasing = self.erasing and writing
            if name in _WRITES:
                self.erasing = self.erasing or name == "delete_versions"
                with self.pg.write():
                    theirs(*args, **kwargs)
            elif not (writing and (name == "histories" or self.erasing)):
                # inside a write, the Kùzu journal lags the rows the engine has just
                # changed (a retraction, an erased assertion), and its lines keep copies
                # of versions an erase deleted (PostgreSQL's starts go with them) until
                # the erase rewrites them: compared after the verb
                got = theirs(*args, **kwargs)
                self.compared += 1
                if _plain(name, out) != _plain(name, got):
                    self.differences.append((name, out, got))
            return out

        return call


def _kuzu_ids(store: Any, table: str) -> list[str]:
    return sorted(r["id"] for r in store.db.query(f"MATCH (x:{table}) RETURN x.id AS id"))


def _same_state(kz: Any, pg: Any, slots: list[str], lines: list[str]) -> None:
    """Every read of the slice, of every slot and line, gives the same answer."""
    assert _plain("slot_heads", kz.slot_heads(slots)) == _plain("slot_heads", pg.slot_heads(slots))
    assert kz.histories(slots) == pg.histories(slots)
    times: set[datetime] = set()
    for _, log, versions in pg.histories(slots).values():
        for r in [*log, *versions]:
            times |= {
                t
                for c in ("valid_from", "valid_to", "recorded_at", "expired_at", "retracted_at")
                if (t := r.get(c)) is not None
            }
        ids = [a["id"] for a in log]
        assert kz.assertions_by_id(ids) == pg.assertions_by_id(ids)
        for a in ids[:3]:
            assert kz.assertion(a) == pg.assertion(a)
    moments = sorted(times)
    moments += [t + timedelta(microseconds=d) for t in list(moments) for d in (-1, 1)]
    rng = random.Random(7)
    sample = rng.sample(moments, min(40, len(moments)))
    for sid in slots:
        assert sorted(kz.slot_version_ids(sid)) == sorted(pg.slot_version_ids(sid))
        for k in sample[:12]:
            for v in [None, *sample[:10]]:
                assert kz.versions_at(sid, valid_at=v, known_at=k) == pg.versions_at(
                    sid, valid_at=v, known_at=k
                ), (sid, v, k)
    for k in sample[:6]:
        for v in [None, *sample[:4]]:
            each = kz.versions_at_each([*slots, "ns\x1fno\x1fslot"], valid_at=v, known_at=k)
            assert each == pg.versions_at_each(slots, valid_at=v, known_at=k), (v, k)
            assert each == {
                s: found for s in slots if (found := pg.versions_at(s, valid_at=v, known_at=k))
            }
    by_line = {lid: lid.split("\x1f") for lid in lines}
    asks: list[dict[str, LineAsk]] = [
        {lid: LineAsk("\x1f".join(p[:3]), p[0], "", None) for lid, p in by_line.items()}
    ]
    for _ in range(8):
        a, b = _sorted_none(rng.sample([None, *moments], 2) if moments else [None, None])
        reach = Reach(a, b)
        asks.append(
            {lid: LineAsk("\x1f".join(p[:3]), p[0], "", reach) for lid, p in by_line.items()}
        )
    for ask in asks:
        assert _plain("line_windows", kz.line_windows(ask)) == _plain(
            "line_windows", pg.line_windows(ask)
        )


def _sorted_none(values: list[datetime | None]) -> list[datetime | None]:
    return sorted(values, key=lambda t: (t is not None, t or T0))


class _Entities:
    """Stands in for the names slice where it is not written yet: the entities a write
    creates are not the slots slice's rows."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def create_entities(self, rows: list[dict[str, Any]]) -> None:
        self.rows += rows


@pytest.fixture
def mirrored(pg: Any, tmp_path: Path) -> Iterator[tuple[Memory, Mirror]]:
    clock = iter(T0 + timedelta(hours=h) for h in range(1, 100_000))
    mem = Memory.open(tmp_path / "m", embedder=None, extractor=None, clock=lambda: next(clock))
    if not hasattr(pg.names, "create_entities"):  # the names slice is written elsewhere
        pg.slots._names = _Entities()
    mirror = Mirror(mem._store, pg)
    mem._store.slots = mirror  # type: ignore[misc]
    try:
        yield mem, mirror
    finally:
        mem._store.slots = mirror.kz  # type: ignore[misc]
        mem.close()


def _first_difference(found: list[tuple[str, Any, Any]]) -> str:
    name, ours, theirs = found[0]
    a, b = _plain(name, ours), _plain(name, theirs)
    if isinstance(a, dict) and isinstance(b, dict):
        return repr([(k, a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)])
    return repr((name, a, b))


def _check(mem: Memory, mirror: Mirror) -> None:
    assert mirror.differences == [], _first_difference(mirror.differences)
    kz = mirror.kz
    slots = _kuzu_ids(mem._store, "Slot")
    pg_slots = [r["id"] for r in mirror.pg.db.query("SELECT id FROM slot ORDER BY id")]
    assert slots == pg_slots
    lines = _kuzu_ids(mem._store, "Line")
    assert lines == [r["id"] for r in mirror.pg.db.query("SELECT id FROM line ORDER BY id")]
    _same_state(kz, mirror.pg.slots, slots, lines)


def test_the_engine_on_both_slices_leaves_the_same_state(
    mirrored: tuple[Memory, Mirror],
) -> None:
    mem, mirror = mirrored
    mem.define_predicate("lives_in", "one")
    mem.define_predicate("likes", "many")
    rng = random.Random(3)
    cities, things = ["Oslo", "Rome", "Lima", "Kyiv"], ["jazz", "tea", "chess"]
    facts = []
    for i in range(60):
        when = (T0 + timedelta(days=rng.randint(-400, 400))).isoformat()
        until = (T0 + timedelta(days=rng.randint(401, 900))).isoformat()
        who = rng.choice(["Mira", "Ole"])
        pick = rng.random()
        if pick < 0.45:
            facts.append(mem.assert_fact(who, "lives_in", rng.choice(cities), valid_from=when))
        elif pick < 0.7:
            facts.append(
                mem.assert_fact(who, "likes", rng.choice(things), valid_from=when, valid_to=until)
            )
        elif pick < 0.8:
            mem.end_fact(who, rng.choice(["lives_in", "likes"]), at=when)
        elif pick < 0.9 and facts:
            f = facts.pop(rng.randrange(len(facts)))
            if mem.explain(f.id).assertion.retracted_at is None:
                mem.retract(f.id, reason="test")
        else:
            mem.assert_many(
                [
                    {"subject": who, "predicate": "likes", "object": t, "valid_from": when}
                    for t in rng.sample(things, 2)
                ]
                + [{"subject": "Ole", "predicate": "lives_in", "object": rng.choice(cities)}]
            )
        if i % 10 == 9:
            _check(mem, mirror)
    _check(mem, mirror)
    # an erasure rebuilds a slot's history, journal and lines
    for f in facts[:3]:
        mem.erase(f.id, reason="privacy")
    _check(mem, mirror)
    assert mirror.compared > 100
