from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The CLI run in this process opens memories itself instead of starting an owner process
# in the background (tests/test_owner.py runs owners for real)
os.environ.setdefault("PALIMPSEST_OWNER", "off")

from palimpsest import Memory

from .pg_server import PostgresServer, Unavailable


class Clock:
    """A transaction clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, **delta: float) -> datetime:
        self.now += timedelta(**delta) if delta else timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    # the core tests need no embeddings; recall tests open their own memories with MiniLM
    with Memory.open(tmp_path / "mem", clock=clock, embedder=None) as m:
        yield m


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL for the whole session (tests/pg_server.py). Skipped only
    where its server programs are missing, and not even then under `make test`
    (PALIMPSEST_REQUIRE_POSTGRES=1), which installs them first."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.fail("psycopg is not installed (make setup installs the `postgres` extra)")
    try:
        server = PostgresServer.start()
    except Unavailable as e:
        if os.environ.get("PALIMPSEST_REQUIRE_POSTGRES") == "1":
            pytest.fail(str(e))
        pytest.skip(str(e))
    with server:
        yield server


@pytest.fixture
def pg_url(postgres: PostgresServer, request: pytest.FixtureRequest) -> str:
    """A fresh, empty database on the session's server, for one test."""
    stem = "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:40]
    return postgres.create_database(f"t{len(postgres.databases)}_{stem}")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)
