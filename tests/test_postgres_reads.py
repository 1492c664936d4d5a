"""How a process on PostgreSQL sees the database's changes: one look per call, at the
sequences of the call's namespace (and the database's), so writes of other namespaces
leave its copies alone; each namespace keeps its own transaction clock; a read on a
connection broken by a restart is sent again; a keyed HTTP write retried on another
server.

    >>> mem.facts("user", "likes")      # looks once: namespace_clock and store_clock
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg

from palimpsest import Memory

from .conftest import Clock


@contextmanager
def write_held(mem: Memory, namespace: str) -> Iterator[None]:
    """Another thread holds a write transaction of `namespace` in `mem` for the block."""
    release, holding = threading.Event(), threading.Event()

    def hold() -> None:
        with mem._store.write(namespace):  # type: ignore[attr-defined]
            holding.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(30)
    try:
        yield
    finally:
        release.set()
        holder.join(30)


def looks(mem: Memory, run: Any) -> list[str]:
    """The statements `run()` sent that looked at the change sequences."""
    seen: list[str] = []
    db = mem._store.db  # type: ignore[attr-defined]
    db.observer = lambda sql, params: seen.append(sql)
    try:
        run()
    finally:
        db.observer = None
    return [s for s in seen if "clock" in s]


def test_a_call_looks_at_the_changes_once(pg_url: str) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        store = mem._store  # type: ignore[attr-defined]
        mem.assert_fact("user", "likes", "jazz")
        assert len(looks(mem, lambda: mem.facts("user", "likes"))) == 1
        assert len(looks(mem, lambda: mem.recall("what does the user like?"))) == 1
        before = (store.generation, store.fact_generation)
        assert looks(mem, lambda: (store.generation, store.fact_generation)) == []
        mem.assert_fact("user", "likes", "tea")  # this process's write moves them on
        assert store.generation != before[0] and store.fact_generation != before[1]


def test_another_process_write_is_seen_by_the_next_call(pg_url: str) -> None:
    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=None) as b,
    ):
        store = a._store  # type: ignore[attr-defined]
        assert a.facts("user", "likes") == []
        before = (store.foreign_generation, store.fact_generation)
        b.assert_fact("user", "likes", "jazz")
        assert (store.foreign_generation, store.fact_generation) == before  # until a looks
        assert [f.object for f in a.facts("user", "likes")] == ["jazz"]
        assert store.foreign_generation != before[0] and store.fact_generation != before[1]


def test_a_write_of_another_namespace_leaves_this_ones_copies(pg_url: str) -> None:
    """Each namespace has its own change sequences: another process writing namespace y
    moves nothing a call in x looks at; writing x does."""
    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=None) as b,
    ):
        store = a._store  # type: ignore[attr-defined]
        b.assert_fact("user", "likes", "tea", namespace="x")
        b.assert_fact("user", "likes", "tea", namespace="y")
        assert [f.object for f in a.facts("user", "likes", namespace="x")] == ["tea"]
        a.facts("user", "likes", namespace="y")
        seen = store.foreign_generation
        b.assert_fact("user", "likes", "jazz", namespace="y")
        assert [f.object for f in a.facts("user", "likes", namespace="x")] == ["tea"]
        assert store.foreign_generation == seen  # y's write: not looked at, not counted
        b.assert_fact("user", "likes", "chess", namespace="x")
        assert sorted(f.object for f in a.facts("user", "likes", namespace="x")) == [
            "chess",
            "tea",
        ]
        assert store.foreign_generation != seen
        assert sorted(f.object for f in a.facts("user", "likes", namespace="y")) == [
            "jazz",
            "tea",
        ]


def test_a_write_moves_its_namespace_sequence_only(pg_url: str) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "likes", "jazz", namespace="x")
        sent: list[tuple[str, Any]] = []
        db = mem._store.db  # type: ignore[attr-defined]
        db.observer = lambda sql, params: sent.append((sql, params))
        try:
            mem.assert_fact("user", "likes", "tea", namespace="x")
        finally:
            db.observer = None
        moves = [(q, p) for q, p in sent if q.startswith(("UPDATE", "INSERT")) and "clock" in q]
        assert len(moves) == 1 and "namespace_clock" in moves[0][0]
        assert moves[0][1][0] == "x"
        with psycopg.connect(pg_url, autocommit=True) as conn:
            rows = conn.execute("SELECT namespace, change_seq FROM namespace_clock").fetchall()
            db_row = conn.execute("SELECT change_seq FROM store_clock").fetchone()
        assert dict(rows)["x"] >= 2 and db_row is not None


def test_each_namespace_keeps_its_own_transaction_clock(pg_url: str) -> None:
    """A worker whose clock runs a day ahead writes namespace y: K in y never goes back
    (a worker behind it writes y after it), while x keeps the clock of those writing x."""
    behind, ahead = Clock(), Clock()
    ahead.tick(days=1)
    with (
        Memory.open(pg_url, clock=behind, extractor=None, embedder=None) as a,
        Memory.open(pg_url, clock=ahead, extractor=None, embedder=None) as b,
    ):
        b.assert_fact("user", "lives_in", "Oslo", namespace="y")
        a.assert_fact("user", "lives_in", "Rome", namespace="x")
        a.assert_fact("user", "lives_in", "Bergen", namespace="y")
        (x,) = a.history("user", namespace="x")
        assert x.recorded_at == behind.now  # not pushed past y's day-ahead K
        y = a.history("user", namespace="y")
        (bergen,) = [f for f in y if f.object == "Bergen"]
        assert bergen.recorded_at == ahead.now + timedelta(microseconds=1)
        assert min(f.recorded_at for f in y if f.object == "Oslo") == ahead.now
        assert [f.object for f in b.facts("user", "lives_in", namespace="y")] == ["Bergen"]


def test_a_read_on_a_connection_broken_by_a_restart_is_sent_again(pg_url: str) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "likes", "jazz")

        def terminate() -> None:  # what a restart does to the pooled connections
            with psycopg.connect(pg_url, autocommit=True) as admin:
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )

        terminate()
        assert [f.object for f in mem.facts("user", "likes")] == ["jazz"]
        terminate()  # and a write: its transaction begins on a fresh connection
        mem.assert_fact("user", "likes", "tea")
        assert len(mem.facts("user", "likes")) == 2


def test_an_http_retry_on_another_server_returns_the_first_answer(pg_url: str) -> None:
    """Two servers on one database: the first acknowledged a keyed write (its answer
    lost on the way), the client retries on the second with the same key."""
    from fastapi.testclient import TestClient

    from palimpsest.api import create_app

    from .test_api_idempotency import FACT, LOOPBACK, ok, post, state

    one = TestClient(create_app(pg_url, extractor=None), client=LOOPBACK)
    two = TestClient(create_app(pg_url, extractor=None), client=LOOPBACK)
    with one, two:
        first = ok(post(one, "/v1/facts", FACT, "req-9"), 201)
        assert ok(post(two, "/v1/facts", FACT, "req-9"), 201) == first
        assert state(two) == state(one) and [f["id"] for f in state(one)[0]] == [first["id"]]


def test_writers_wait_only_for_writers_of_their_namespace(pg_url: str) -> None:
    """Two processes' memories: while one holds a write transaction in namespace a,
    a write in b goes through; one in a waits for it, and one that may write any
    namespace (re-embedding, say) waits too."""
    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=None) as b,
    ):
        b.assert_fact("user", "likes", "tea", namespace="a")  # the schema and vocabulary
        with write_held(a, "a"):
            b.assert_fact("user", "likes", "jazz", namespace="b")  # not held up
            same = threading.Thread(
                target=b.assert_fact, args=("user", "likes", "chess"), kwargs={"namespace": "a"}
            )
            same.start()
            same.join(1.0)
            assert same.is_alive()  # queued behind the holder of a
        same.join(30)
        assert not same.is_alive()
        assert sorted(f.object for f in b.facts("user", "likes", namespace="a")) == ["chess", "tea"]
        assert [f.object for f in a.facts("user", "likes", namespace="b")] == ["jazz"]


def test_the_embedding_worker_waits_only_for_writers_of_its_namespaces(pg_url: str) -> None:
    """Its batch of vectors for namespace b goes through while another process holds a
    write of namespace a (it took the database's lock alone before: every writer's)."""
    from palimpsest.recall import HashingEmbedder

    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=HashingEmbedder()) as b,
    ):
        b.assert_fact("Mira", "likes", "tea", namespace="a")  # the schema, a's vectors
        b._embed.drain()
        with write_held(a, "a"):
            b.assert_fact("Mira", "lives_in", "Sydney", namespace="b")
            drained = threading.Thread(target=b._embed.drain)
            drained.start()
            drained.join(20)
            assert not drained.is_alive()  # the worker stored b's vectors meanwhile
            ids, _ = b._store.embeddings.names_of("b")  # type: ignore[attr-defined]
            assert len(ids) == 2  # Mira and Sydney
