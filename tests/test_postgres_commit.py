"""A COMMIT whose answer never comes: the store asks PostgreSQL, on a fresh connection,
what became of the transaction, so the caller hears the truth instead of a guess.

    >>> mem.assert_fact("user", "likes", "jazz")   # the answer to COMMIT was lost...
    Fact(...)                                     # ...but it committed: it stands

Real PostgreSQL: the connection is really cut (`pg_terminate_backend`) or its answer
really dropped after the server committed.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from palimpsest import Memory
from palimpsest.errors import StoreUnavailable
from palimpsest.postgres import _db


def cut_at_commit(mem: Memory, monkeypatch: pytest.MonkeyPatch, *, after: bool) -> list[int]:
    """Make the next COMMIT lose its connection: after the server committed (the
    answer lost), or before it was sent (the backend terminated: rolled back)."""
    db = mem._store.db  # type: ignore[attr-defined]
    real = db._send
    cut: list[int] = []

    def send(conn: Any, sql: str, params: Any = None) -> Any:
        if sql != "COMMIT" or cut:
            return real(conn, sql, params)
        cut.append(conn.info.backend_pid)
        if after:
            real(conn, sql, params)
        else:
            with psycopg.connect(db.url, autocommit=True) as admin:
                admin.execute("SELECT pg_terminate_backend(%s)", (conn.info.backend_pid,))
        raise psycopg.OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(db, "_send", send)
    return cut


def test_a_commit_whose_answer_was_lost_stands(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "likes", "tea")
        cut = cut_at_commit(mem, monkeypatch, after=True)
        fact = mem.assert_fact("user", "likes", "jazz")  # no error: it was stored
        assert cut and fact.object == "jazz"
        assert sorted(f.object for f in mem.facts("user", "likes")) == ["jazz", "tea"]
        assert [f.id for f in mem.history("user") if f.object == "jazz"] == [fact.id]


def test_a_commit_cut_before_the_server_had_it_is_unavailable_and_wrote_nothing(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "likes", "tea")
        cut = cut_at_commit(mem, monkeypatch, after=False)
        with pytest.raises(StoreUnavailable, match="rolled back") as e:
            mem.assert_fact("user", "likes", "jazz")
        assert cut and "outcome" not in e.value.details
        assert [f.object for f in mem.facts("user", "likes")] == ["tea"]
        mem.assert_fact("user", "likes", "jazz")  # and the retry writes it once
        assert sorted(f.object for f in mem.facts("user", "likes")) == ["jazz", "tea"]


def test_a_commit_the_server_cannot_account_for_says_so(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server never answers about it (still down after the wait): the error says
    the write may be stored, and to retry with the same key."""
    monkeypatch.setattr(_db, "OUTCOME_WAIT_S", 0.5)
    with Memory.open(pg_url, extractor=None, embedder=None) as mem:
        db = mem._store.db  # type: ignore[attr-defined]
        cut_at_commit(mem, monkeypatch, after=True)
        monkeypatch.setattr(db, "_xact_status", lambda xid: None)  # unreachable
        with pytest.raises(StoreUnavailable, match="same idempotency key") as e:
            mem.assert_fact("user", "likes", "jazz")
        assert e.value.details == {"outcome": "unknown"}
