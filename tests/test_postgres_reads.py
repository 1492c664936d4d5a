"""How a read on PostgreSQL looks at the database's changes: once per read call (a
recall), and on a fresh connection when a pooled one was broken by a restart; a keyed
HTTP write retried on another server.

    >>> with store.reading():            # the change sequences are read once in here
    ...     store.generation, store.fact_generation
"""

from __future__ import annotations

from typing import Any

import psycopg

from palimpsest import Memory


def clock_reads(mem: Memory, run: Any) -> int:
    """How many times `run()` read the change sequences."""
    seen: list[str] = []
    db = mem._store.db  # type: ignore[attr-defined]
    db.observer = lambda sql, params: seen.append(sql)
    try:
        run()
    finally:
        db.observer = None
    return sum("FROM store_clock" in s for s in seen)


def test_a_read_call_looks_at_the_changes_once_until_this_process_writes(pg_url: str) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        store = mem._store  # type: ignore[attr-defined]
        mem.assert_fact("user", "likes", "jazz")

        def looks() -> None:
            for _ in range(3):
                assert store.generation == first[0] and store.fact_generation == first[1]

        with store.reading():
            first = (store.generation, store.fact_generation)
            assert clock_reads(mem, looks) == 0  # the first look holds for the call
            mem.assert_fact("user", "likes", "tea")  # this process writes: they move on
            assert clock_reads(mem, lambda: store.fact_generation) == 1
            assert store.fact_generation != first[1] and store.generation != first[0]
        assert clock_reads(mem, lambda: (store.generation, store.generation)) == 2  # unpinned


def test_another_process_write_is_seen_by_the_next_read_call(pg_url: str) -> None:
    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=None) as b,
    ):
        store = a._store  # type: ignore[attr-defined]
        with store.reading():
            before = store.fact_generation
            b.assert_fact("user", "likes", "jazz")
            assert store.fact_generation == before  # one look per call
        assert store.fact_generation != before
        assert [f.object for f in a.facts("user", "likes")] == ["jazz"]


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
    import threading

    with (
        Memory.open(pg_url, extractor=None, embedder=None) as a,
        Memory.open(pg_url, extractor=None, embedder=None) as b,
    ):
        b.assert_fact("user", "likes", "tea", namespace="a")  # the schema and vocabulary
        release, holding = threading.Event(), threading.Event()

        def hold() -> None:
            with a._store.write("a"):  # type: ignore[attr-defined]
                holding.set()
                release.wait(30)

        holder = threading.Thread(target=hold)
        holder.start()
        assert holding.wait(30)
        try:
            b.assert_fact("user", "likes", "jazz", namespace="b")  # not held up
            same = threading.Thread(
                target=b.assert_fact, args=("user", "likes", "chess"), kwargs={"namespace": "a"}
            )
            same.start()
            same.join(1.0)
            assert same.is_alive()  # queued behind the holder of a
        finally:
            release.set()
            holder.join(30)
        same.join(30)
        assert not same.is_alive()
        assert sorted(f.object for f in b.facts("user", "likes", namespace="a")) == ["chess", "tea"]
        assert [f.object for f in a.facts("user", "likes", namespace="b")] == ["jazz"]
