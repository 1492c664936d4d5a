from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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


STORES = ("kuzu", "pg")
EVERY_STORE = "every_store"
Places = Callable[[], "str | Path"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module marked `every_store` runs once per store (ids kuzu, pg): the behaviour
    suite says what the engine does, and that holds on either store (issue 28). Module
    scope, so each store's run of a module is one block and its module fixtures open
    once per store."""
    if "store_kind" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        EVERY_STORE
    ):
        metafunc.parametrize("store_kind", STORES, indirect=True, scope="module", ids=STORES)


@pytest.fixture(scope="module")
def store_kind(request: pytest.FixtureRequest) -> str:
    """The store this module runs on: "kuzu" unless the module is marked every_store."""
    return str(getattr(request, "param", "kuzu"))


def _places(kind: str, request: pytest.FixtureRequest, folder: Callable[[], Path]) -> Places:
    """Fresh memory locations of one store: a new directory for Kùzu, a new empty
    database on the session's PostgreSQL for pg (left for the server's removal)."""
    if kind == "kuzu":
        return lambda: folder() / "mem"
    server: PostgresServer = request.getfixturevalue("postgres")
    stem = "".join(c if c.isalnum() else "_" for c in request.node.name.lower())[:36]

    def new() -> str:
        return server.create_database(f"p{len(server.databases)}_{stem}")

    return new


@pytest.fixture
def places(
    store_kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Places:
    """`places()` -> a fresh memory location on this module's store, each call a new one."""
    return _places(store_kind, request, lambda: tmp_path_factory.mktemp("mem", numbered=True))


@pytest.fixture(scope="module")
def module_places(
    store_kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Places:
    """`places` for module-scoped fixtures."""
    return _places(store_kind, request, lambda: tmp_path_factory.mktemp("mem", numbered=True))


@pytest.fixture
def place(places: Places) -> str | Path:
    """One fresh memory location on this module's store."""
    return places()


@pytest.fixture
def mem(
    tmp_path: Path, clock: Clock, store_kind: str, request: pytest.FixtureRequest
) -> Iterator[Memory]:
    # the core tests need no embeddings; recall tests open their own memories with MiniLM
    marked = request.node.get_closest_marker(EVERY_STORE) is not None
    location = request.getfixturevalue("place") if marked else tmp_path / "mem"
    with Memory.open(location, clock=clock, embedder=None) as m:
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
