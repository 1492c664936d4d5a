"""Schemathesis over the app's own OpenAPI schema, in process: no 5xx, every 4xx a problem.

Each operation gets a few derandomised examples (the same ones every run), sent
through the real ASGI app over a real Kùzu memory (extractor and embedder off,
so the run stays fast). A second test sends hand-made bad writes (broken JSON,
a batch with one bad item, a naive time) and checks that none of them stored anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.python.asgi import shutdown_lifespans
from starlette.types import ASGIApp, Receive, Scope, Send

from palimpsest.api import create_app
from palimpsest.api.problems import PROBLEM_JSON

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def loopback(app: ASGIApp) -> ASGIApp:
    """The app as a loopback client sees it (schemathesis's client is `testclient`)."""

    async def shim(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope = {**scope, "client": ("127.0.0.1", 50000)}
        await app(scope, receive, send)

    return shim


# The schema needs no open memory; the app it is sent to gets a fresh one per module.
# (schemathesis.pytest.from_fixture does not work with pytest 9: it reads `node._nodeid`.)
schema = schemathesis.openapi.from_dict(
    create_app(Path("unused"), extractor=None, embedder=None).openapi()
)
# valid requests (that must work) and invalid ones (that must be refused as problems)
schema.config.generation.update(modes=["positive", "negative"], deterministic=True)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ASGIApp]:
    path: Path = tmp_path_factory.mktemp("fuzz") / "mem"
    yield loopback(create_app(path, extractor=None, embedder=None))
    shutdown_lifespans()  # schemathesis started the lifespan; this closes the memory


def check_problem(response: Any, where: str) -> None:
    status = response.status_code
    assert status < 500, f"{where}: {status} {response.text[:500]}"
    if status < 400:
        return
    ctype = response.headers.get("content-type", [""])  # schemathesis keeps lists
    assert ctype == [PROBLEM_JSON], f"{where}: {ctype} {response.text[:300]}"
    body = response.json()
    assert {"type", "title", "status", "detail", "code"} <= set(body), f"{where}: {body}"
    assert body["status"] == status, f"{where}: {body}"
    assert body["type"] == "urn:palimpsest:problem:" + body["code"], f"{where}: {body}"
    assert isinstance(body["detail"], str) and body["detail"], f"{where}: {body}"


@schema.parametrize()
@settings(
    max_examples=6,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_errors_and_every_refusal_is_a_problem(case: Any, app: ASGIApp) -> None:
    response = case.call(app=app)
    check_problem(response, f"{case.method} {case.formatted_path}")


def test_bad_writes_store_nothing(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    app = create_app(tmp_path / "mem", extractor=None, embedder=None)
    good = {"subject": "user", "predicate": "lives_in", "object": "Sydney"}
    bad_writes: list[tuple[str, Any]] = [
        ("/v1/facts", {**good, "valid_from": "2024-06-01T00:00:00"}),  # naive
        ("/v1/facts", {**good, "valid_from": "2025-01-01Z", "valid_to": "2024-01-01Z"}),
        ("/v1/facts", {**good, "subject": "a\x00b"}),
        ("/v1/facts:batch", {"items": [good, {**good, "valid_to": "not a time"}]}),
        ("/v1/facts:batch", {"items": [good, {**good, "predicate": "0bad"}]}),
        ("/v1/episodes:batch", {"items": [{"text": "hi"}, {"text": "x", "occurred_at": "x"}]}),
        ("/v1/episodes", {"text": "hi", "importance": 2}),
        ("/v1/facts:end", {"subject": "user", "predicate": "lives_in", "at": "soon"}),
    ]
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        before = c.get("/v1/stats").json()
        for url, body in bad_writes:
            r = c.post(url, json=body)
            check_problem(_Adapted(r), f"POST {url} {body}")
            assert r.status_code in (400, 413, 422), (url, body, r.text)
        r = c.post(
            "/v1/facts",
            content=b'{"subject": "user",',
            headers={"content-type": "application/json"},
        )
        check_problem(_Adapted(r), "POST /v1/facts (broken JSON)")
        assert r.status_code in (400, 422), r.text
        assert c.get("/v1/stats").json() == before
        assert c.get("/v1/history", params={"subject": "user"}).json() == []


class _Adapted:
    """A TestClient response seen through the schemathesis response shape."""

    def __init__(self, r: Any) -> None:
        self.status_code = r.status_code
        self.text = r.text
        self.headers = {k: [v] for k, v in r.headers.items()}
        self.json = r.json
