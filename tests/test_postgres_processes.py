"""Several OS processes on one PostgreSQL database, through `Memory.open(url)` (issue 28).

    >>> run = _run(pg_url, writers=4, rounds=30)     # spawned processes, as test_... does
    >>> run.acks, run.seen, run.export                 # what each process was told and saw

Writers (their clocks skewed: one an hour behind, one ahead) assert into their own
slots, a many-valued slot they share and a one-valued slot they fight over, and
remember episodes; a reader in another process is told of each write once it returned
and reads it back at once, through its caches. Then: no acknowledged write is lost,
each was visible to the other process as soon as it was acknowledged, transaction time
never went backwards across the processes (in commit order, and after any write another
process had seen acknowledged), sequence numbers are unique, and the one-valued slot
believes its last write.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing as mp
import queue
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

WRITERS = 4
ROUNDS = 30
SKEWS = (0.0, -3600.0, 5.0, 0.0)  # seconds: one clock an hour behind, one ahead
JOIN_S = 300.0


def _writer(url: str, wid: int, rounds: int, skew: float, start: Any, out: Any) -> None:
    """Write `rounds` rounds; after each write returns, tell the reader (`out`)."""
    try:
        from palimpsest import Memory

        def clock() -> datetime:
            return datetime.now(UTC) + timedelta(seconds=skew)

        with Memory.open(url, clock=clock, extractor=None, embedder=None) as mem:
            start.wait(timeout=120)
            for i in range(rounds):
                own = mem.assert_fact(f"writer {wid}", "likes", f"item {i}", valid_from=None)
                out.put(("fact", wid, i, f"writer {wid}", "likes", f"item {i}", _ack(own)))
                shared = mem.assert_fact("everyone", "likes", f"w{wid} r{i}", valid_from=None)
                out.put(("fact", wid, i, "everyone", "likes", f"w{wid} r{i}", _ack(shared)))
                office = mem.assert_fact("office", "lives_in", f"city {wid}.{i}", valid_from=None)
                out.put(("fact", wid, i, "office", "lives_in", f"city {wid}.{i}", _ack(office)))
                ep = mem.remember(f"note {i} from writer {wid}", session=f"w{wid}")
                out.put(("episode", wid, i, ep.id, ep.text, ep.recorded_at.isoformat()))
        out.put(("done", wid))
    except BaseException:
        out.put(("error", wid, traceback.format_exc()))


def _ack(fact: Any) -> tuple[str, str]:
    return fact.id, fact.recorded_at.isoformat()


def _reader(url: str, writers: int, start: Any, acks: Any, out: Any) -> None:
    """Read back every acknowledged write as soon as it is announced, until every writer
    has finished; report what was seen (and what was not)."""
    try:
        from palimpsest import Memory
        from palimpsest.errors import NotFound

        seen: list[tuple[Any, ...]] = []
        with Memory.open(url, extractor=None, embedder=None) as mem:
            start.wait(timeout=120)
            finished = 0
            while finished < writers:
                msg = acks.get(timeout=JOIN_S)
                kind = msg[0]
                if kind in ("done", "error"):
                    out.put(msg)  # the writer's word, passed on
                    finished += 1
                    continue
                if kind == "fact":
                    _, wid, i, subject, predicate, _obj, (fid, _at) = msg
                    believed = [f.id for f in mem.facts(subject, predicate)]
                    ever = [f.id for f in mem.history(subject, predicate)]
                    seen.append(("fact", wid, i, fid, fid in believed, fid in ever))
                else:
                    _, wid, i, eid, text, _at = msg
                    try:
                        found = mem.episode(eid).text == text
                    except NotFound:
                        found = False
                    seen.append(("episode", wid, i, eid, found, found))
                out.put(("ack", msg))
        out.put(("seen", seen))
    except BaseException:
        out.put(("error", "reader", traceback.format_exc()))


@dataclass
class Run:
    acks: list[tuple[Any, ...]] = field(default_factory=list)  # in the order announced
    seen: list[tuple[Any, ...]] = field(default_factory=list)
    done: set[int] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    export: list[dict[str, Any]] = field(default_factory=list)


def _run(url: str, *, writers: int = WRITERS, rounds: int = ROUNDS) -> Run:
    """Spawn the writers and the reader on the database at `url`; what they reported."""
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(writers + 1)
    acks, out = ctx.Queue(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(url, w, rounds, SKEWS[w % len(SKEWS)], start, acks))
        for w in range(writers)
    ]
    procs.append(ctx.Process(target=_reader, args=(url, writers, start, acks, out)))
    for p in procs:
        p.start()
    run = Run()
    try:
        while True:
            try:
                msg = out.get(timeout=JOIN_S)
            except queue.Empty:
                run.errors.append("no word from the processes for 300 s")
                break
            if msg[0] == "ack":
                run.acks.append(msg[1])
            elif msg[0] == "done":
                run.done.add(msg[1])
            elif msg[0] == "error":
                run.errors.append(f"process {msg[1]}:\n{msg[2]}")
                if msg[1] == "reader":
                    break
            elif msg[0] == "seen":
                run.seen = msg[1]
                break
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():  # pragma: no cover - a hung process of this test's own
                p.terminate()
                p.join(timeout=10)
    from palimpsest import Memory

    with Memory.open(url, extractor=None, embedder=None) as mem:
        run.export = [json.loads(line) for line in mem.export_lines()]
    return run


@pytest.fixture(scope="module")
def run(postgres: Any) -> Run:
    return _run(postgres.create_database("processes"))


def test_every_process_finished(run: Run) -> None:
    assert run.errors == []
    assert run.done == set(range(WRITERS))
    assert len(run.acks) == WRITERS * ROUNDS * 4 and len(run.seen) == len(run.acks)


def test_no_acknowledged_write_is_lost(run: Run) -> None:
    facts = {a[6][0] for a in run.acks if a[0] == "fact"}
    episodes = {a[3] for a in run.acks if a[0] == "episode"}
    stored = {r["id"] for r in run.export if r["record"] == "assertion"}
    assert len(facts) == WRITERS * ROUNDS * 3 and facts <= stored
    assert stored - facts == set()  # nor any invented
    assert episodes == {r["id"] for r in run.export if r["record"] == "episode"}
    assert len(episodes) == WRITERS * ROUNDS


def test_a_write_acknowledged_elsewhere_is_read_at_once(run: Run) -> None:
    """The reader asked right after the writer's call returned: through its caches, in
    its own process, it saw every write (the one-valued slot's may already be
    superseded by a later one: that one was still in its history)."""
    unseen = [s for s in run.seen if not s[5]]
    assert unseen == []
    # what no other write can supersede (many-valued slots) was believed at once
    many = {a[6][0] for a in run.acks if a[0] == "fact" and a[4] == "likes"}
    missed = [s for s in run.seen if s[0] == "fact" and s[3] in many and not s[4]]
    assert missed == []


def test_transaction_time_never_goes_backwards_across_processes(run: Run) -> None:
    assertions = [r for r in run.export if r["record"] == "assertion"]
    seqs = [r["seq"] for r in assertions]
    assert len(set(seqs)) == len(seqs)  # unique
    by_seq = sorted(assertions, key=lambda r: r["seq"])
    times = [datetime.fromisoformat(r["recorded_at"]) for r in by_seq]
    backwards = [(a, b) for a, b in itertools.pairwise(times) if b < a]
    assert backwards == []  # in commit order, whoever's clock
    # each process's own writes, episodes too, in the order its calls returned
    for w in range(WRITERS):
        mine = [datetime.fromisoformat(a[6][1] if a[0] == "fact" else a[5])
                for a in run.acks if a[1] == w]  # fmt: skip
        assert mine == sorted(mine), w


def test_the_fought_over_slot_believes_its_last_write(run: Run) -> None:
    office = [r for r in run.export if r["record"] == "assertion" and r["predicate"] == "lives_in"]
    last = max(office, key=lambda r: r["seq"])
    versions = [r for r in run.export if r["record"] == "version"]
    open_now = {v["assertion_id"] for v in versions if v["expired_at"] is None}
    assert last["id"] in open_now
    assert not ({r["id"] for r in office} - {last["id"]}) & open_now  # one believed
