"""The throwaway PostgreSQL of the tests (tests/pg_server.py) is a real server: psycopg
connects over loopback, a table takes and gives back a row with an aware time and bytes,
a second database is apart from the first, and the cluster sorts text as Python does."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from .pg_server import SUPERUSER, PostgresServer


def test_a_row_round_trips_with_timestamptz_and_bytea(pg_url: str) -> None:
    import numpy as np
    import psycopg

    at = datetime(2024, 6, 1, 12, 30, 15, 123456, tzinfo=timezone(timedelta(hours=10)))
    vector = np.arange(384, dtype=np.float32) / 7
    with psycopg.connect(pg_url) as conn:
        conn.execute(
            "CREATE TABLE episode (namespace text NOT NULL, id text NOT NULL,"
            " occurred_at timestamptz NOT NULL, vec bytea NOT NULL, PRIMARY KEY (namespace, id))"
        )
        conn.execute(
            "INSERT INTO episode VALUES (%s, %s, %s, %s)",
            ("default", "ep_1", at, vector.tobytes()),
        )
        conn.commit()
    with psycopg.connect(pg_url) as conn:  # a new session: what was committed, not cached
        got = conn.execute(
            "SELECT occurred_at, vec FROM episode WHERE namespace = %s AND id = %s",
            ("default", "ep_1"),
        ).fetchone()
    assert got is not None
    when, raw = got
    assert when == at and when.utcoffset() is not None  # the same instant, still aware
    assert when.astimezone(UTC) == datetime(2024, 6, 1, 2, 30, 15, 123456, tzinfo=UTC)
    assert np.array_equal(np.frombuffer(raw, dtype=np.float32), vector)


def test_databases_are_apart_and_text_sorts_as_python_does(
    postgres: PostgresServer, pg_url: str
) -> None:
    import psycopg

    other = postgres.create_database("apart")
    with psycopg.connect(pg_url) as conn:
        conn.execute("CREATE TABLE t (x text)")
        words = ["b", "B", "a", "Ä", "é", "_x", "Z"]
        conn.cursor().executemany("INSERT INTO t VALUES (%s)", [(w,) for w in words])
        rows = conn.execute("SELECT x FROM t ORDER BY x").fetchall()
        assert [r[0] for r in rows] == sorted(words)
        conn.commit()
    with psycopg.connect(other) as conn:
        assert conn.execute("SELECT to_regclass('t')").fetchone() == (None,)


def test_the_server_listens_on_loopback_only_and_needs_its_password(
    postgres: PostgresServer,
) -> None:
    import psycopg

    with psycopg.connect(postgres.url()) as conn:
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN"
                " ('listen_addresses', 'port', 'fsync', 'server_encoding', 'lc_collate')"
            ).fetchall()
        )
        user = conn.execute("SELECT current_user").fetchone()
    assert settings == {
        "listen_addresses": "127.0.0.1",
        "port": str(postgres.port),
        "fsync": "off",
        "server_encoding": "UTF8",
        "lc_collate": "C",
    }
    assert user == (SUPERUSER,)
    wrong = postgres.url().replace(postgres.password, "not-the-password")
    with pytest.raises(psycopg.OperationalError, match="password"):
        psycopg.connect(wrong, connect_timeout=5)
    if os.geteuid() == 0:  # PostgreSQL refuses root: the server runs as `postgres`
        pid = int((postgres.data / "postmaster.pid").read_text().split()[0])
        assert Path(f"/proc/{pid}").stat().st_uid == postgres.account.pw_uid  # type: ignore[union-attr]


def test_a_server_stops_and_leaves_nothing_behind(postgres: PostgresServer) -> None:
    import psycopg

    with PostgresServer.start() as pg:  # a second server beside the session's
        folder, url = pg.folder, pg.url()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert pg.version.startswith(("15", "16", "17", "18")), pg.version
    assert not folder.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)
    with psycopg.connect(postgres.url()) as conn:  # the session's server runs on
        assert conn.execute("SELECT 1").fetchone() == (1,)
