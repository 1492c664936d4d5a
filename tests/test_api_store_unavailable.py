"""A store that cannot be reached: 503 `store_unavailable` with `Retry-After`, nothing
half-written, and the server answers again by itself once the store is back.

Through the real app (FastAPI TestClient, real Kùzu in tmp_path). An embedded store
is never unreachable, so `Outage` makes the memory's database behave like a server's
that went away: every statement raises `StoreUnavailable` (as a server-backed store
reports a lost connection), optionally after letting a few through, so a write
fails half way through its transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from palimpsest.api import create_app
from palimpsest.api.problems import RETRY_AFTER, STATUS
from palimpsest.errors import StoreError, StoreUnavailable

from .conftest import Clock
from .test_api import LOOPBACK, ok, problem

FACT = {"subject": "user", "predicate": "likes", "object": "jazz"}


class Outage:
    """The database of a memory, down while `down` is set: each statement raises once
    `allow` more statements have run."""

    def __init__(self, db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.down = False
        self.allow = 0
        self.refused = 0
        for verb in ("query", "arrow"):  # query_arrow reads through arrow
            monkeypatch.setattr(db, verb, self._guard(getattr(db, verb)))

    def _guard(self, real: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                if self.allow > 0:
                    self.allow -= 1
                else:
                    self.refused += 1
                    raise StoreUnavailable("cannot reach the database (connection refused)")
            return real(*args, **kwargs)

        return run

    def start(self, *, allow: int = 0) -> None:
        self.down, self.allow = True, allow

    def end(self) -> None:
        self.down = False


@pytest.fixture
def served(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TestClient, Outage]]:
    app = create_app(tmp_path / "mem", extractor=None, embedder=None, clock=clock)
    with TestClient(app, client=LOOPBACK) as c:
        memory = app.state.palimpsest.memory()
        yield c, Outage(memory._store.db, monkeypatch)


def unavailable(r: Any) -> dict[str, Any]:
    body = problem(r, 503, "store_unavailable")
    assert r.headers["retry-after"] == str(RETRY_AFTER["store_unavailable"])
    assert "connection refused" in body["detail"]
    return body


def test_the_code_is_a_store_error_answered_503() -> None:
    error = StoreUnavailable("down")
    assert isinstance(error, StoreError) and error.code == "store_unavailable"
    assert STATUS["store_unavailable"] == 503


def test_unreachable_store_is_503_with_retry_after_and_recovers(
    served: tuple[TestClient, Outage], clock: Clock
) -> None:
    c, outage = served
    first = ok(c.post("/v1/facts", json=FACT), 201)
    clock.tick()
    before = ok(c.get("/v1/stats"))

    outage.start()
    unavailable(c.post("/v1/facts", json={**FACT, "object": "blues"}))
    unavailable(c.get("/v1/facts", params={"subject": "user"}))
    unavailable(c.get("/v1/history", params={"subject": "user"}))
    assert ok(c.get("/v1/health"))["status"] == "ok"  # the server itself is up
    # a write that fails half way through its transaction leaves nothing behind: this
    # batch reads two entity keys, then writes entities, keys, assertions in one
    # transaction (15 statements); the fifth fails
    db = c.app.state.palimpsest.memory()._store.db  # type: ignore[attr-defined]
    rollbacks = db.rollbacks
    outage.start(allow=4)
    batch = [
        {**FACT, "object": "soul"},
        {"subject": "Mira", "predicate": "likes", "object": "blues"},
    ]
    unavailable(c.post("/v1/facts:batch", json={"items": batch}))
    assert db.rollbacks == rollbacks + 1  # it failed inside the transaction

    outage.end()  # the database is back: no restart, the same app answers
    clock.tick()
    assert ok(c.get("/v1/stats")) == before
    history = ok(c.get("/v1/history", params={"subject": "user"}))
    assert [f["object"] for f in history] == ["jazz"]
    assert history[0]["id"] == first["id"]
    ok(c.post("/v1/facts", json={**FACT, "object": "blues"}), 201)
    ok(c.post("/v1/facts:batch", json={"items": batch}), 201)  # the retry, now whole
    page = ok(c.get("/v1/facts", params={"subject": "user", "predicate": "likes"}))
    assert sorted(f["object"] for f in page["items"]) == ["blues", "jazz", "soul"]
    assert [f["object"] for f in ok(c.get("/v1/facts", params={"subject": "Mira"}))["items"]] == [
        "blues"
    ]
    after = ok(c.get("/v1/stats"))
    assert (after["assertions"], after["entities"]) == (before["assertions"] + 3, 5)


def test_retry_after_follows_the_error_when_it_says(
    served: tuple[TestClient, Outage], monkeypatch: pytest.MonkeyPatch
) -> None:
    c, _ = served
    memory = c.app.state.palimpsest.memory()  # type: ignore[attr-defined]

    def failing_over(**_: Any) -> Any:
        raise StoreUnavailable("the primary is failing over", retry_after=1)

    monkeypatch.setattr(memory, "stats", failing_over)
    r = c.get("/v1/stats")
    body = problem(r, 503, "store_unavailable")
    assert r.headers["retry-after"] == "1"
    assert body["details"] == {"retry_after": 1}


def test_the_document_names_retry_after_on_503(served: tuple[TestClient, Outage]) -> None:
    c, _ = served
    doc = ok(c.get("/openapi.json"))
    for path, item in doc["paths"].items():
        for method, op in item.items():
            answer = op["responses"]["503"]
            assert "Retry-After" in answer["headers"], (method, path)
            assert "store_unavailable" in answer["description"]


def test_a_worker_started_while_its_database_is_down_serves_it_once_it_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A real PostgreSQL, down when `serve` starts: the worker comes up anyway, answers
    503 `store_unavailable` with `Retry-After`, and opens the database by itself once
    it is back (no restart); down again later, health answers 503 until it is back."""
    import time

    from palimpsest.api import app as app_module
    from palimpsest.memory import Memory

    from .pg_server import PostgresServer

    monkeypatch.setattr(app_module, "OPEN_RETRY_S", 0.2)
    pg = PostgresServer.start()
    try:
        url = pg.create_database("late")
        Memory.open(url, extractor=None, embedder=None).close()  # the schema
        pg.kill()
        with TestClient(create_app(url, extractor=None), client=LOOPBACK) as c:
            down = problem(c.post("/v1/facts", json=FACT), 503, "store_unavailable")
            assert "cannot reach PostgreSQL" in down["detail"]
            assert pg.password not in down["detail"]
            assert c.post("/v1/facts", json=FACT).headers["Retry-After"] == "5"
            assert c.get("/v1/health").status_code == 503
            pg.restart()
            deadline = time.monotonic() + 60
            while c.get("/v1/health").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            ok(c.post("/v1/facts", json=FACT), 201)
            assert [f["object"] for f in ok(c.get("/v1/facts"))["items"]] == ["jazz"]
            pg.kill()  # down again while open: health says so (a balancer stops sending)
            problem(c.get("/v1/health"), 503, "store_unavailable")
            pg.restart()
            deadline = time.monotonic() + 60
            while c.get("/v1/health").status_code != 200 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert [f["object"] for f in ok(c.get("/v1/facts"))["items"]] == ["jazz"]
    finally:
        pg.stop()
