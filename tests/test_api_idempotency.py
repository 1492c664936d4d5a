"""The `Idempotency-Key` header (IETF draft) on the HTTP writes, on each store: a retry
with the same key gets the first answer and writes nothing; the same key with another
request is refused (a retry on another server: tests/test_postgres_reads.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from palimpsest.api import create_app

from .conftest import Clock
from .test_api import LOOPBACK, ok, problem

pytestmark = pytest.mark.every_store

FACT = {"subject": "user", "predicate": "lives_in", "object": "Lisbon"}


@pytest.fixture
def client(place: str | Path, clock: Clock) -> Iterator[TestClient]:
    with TestClient(create_app(place, extractor=None, clock=clock), client=LOOPBACK) as c:
        yield c


def post(c: TestClient, url: str, body: Any, key: str | None) -> Any:
    return c.post(url, json=body, headers={} if key is None else {"Idempotency-Key": key})


def state(c: TestClient) -> Any:
    """What a replay must leave as it was: every version and tombstone, the counts."""
    return ok(c.get("/v1/history", params={"subject": "user"})), ok(c.get("/v1/stats"))


def replays(c: TestClient, clock: Clock, method: str, url: str, body: Any, key: str) -> Any:
    """Send a keyed write, then again a second later: the same answer, nothing written."""
    headers = {"Idempotency-Key": key}
    first = c.request(method, url, json=body, headers=headers)
    assert first.status_code < 300, first.text
    before = state(c)
    clock.tick()
    again = c.request(method, url, json=body, headers=headers)
    assert (again.status_code, again.json()) == (first.status_code, first.json())
    assert state(c) == before
    return first.json()


def test_a_retried_post_returns_the_first_answer_and_writes_once(
    client: TestClient, clock: Clock
) -> None:
    first = replays(client, clock, "POST", "/v1/facts", FACT, "req-1")
    assert [f["id"] for f in state(client)[0]] == [first["id"]]
    # without a key, the same request is a new write (its own assertion)
    clock.tick()
    fresh = ok(post(client, "/v1/facts", FACT, None), 201)
    assert fresh["id"] != first["id"] and fresh["id"] in [f["id"] for f in state(client)[0]]


def test_the_same_key_for_another_request_is_422(client: TestClient, clock: Clock) -> None:
    ok(post(client, "/v1/facts", FACT, "req-1"), 201)
    clock.tick()
    other = {**FACT, "object": "Porto"}
    problem(post(client, "/v1/facts", other, "req-1"), 422, "idempotency_key_reused")
    ended = {"subject": "user", "predicate": "lives_in"}
    problem(post(client, "/v1/facts:end", ended, "req-1"), 422, "idempotency_key_reused")
    assert [f["object"] for f in ok(client.get("/v1/facts"))["items"]] == ["Lisbon"]


@pytest.mark.parametrize("key", ["x" * 256, " padded", "tab\there"])
def test_a_malformed_key_is_refused_before_anything_is_written(
    client: TestClient, key: str
) -> None:
    r = post(client, "/v1/facts", FACT, key)
    assert r.status_code == 422, r.text
    assert state(client)[0] == []


def test_every_write_verb_replays(client: TestClient, clock: Clock) -> None:
    items = [{**FACT, "predicate": "likes", "object": o} for o in ("jazz", "tea")]
    batch = replays(client, clock, "POST", "/v1/facts:batch", {"items": items}, "b-1")
    text = {"text": "We met at the harbour."}
    ep = replays(client, clock, "POST", "/v1/episodes", text, "e-1")
    url = f"/v1/facts/{batch[0]['id']}:retract"
    replays(client, clock, "POST", url, {"reason": "wrong"}, "r-1")
    end = {"subject": "user", "predicate": "likes", "object": "tea"}
    replays(client, clock, "POST", "/v1/facts:end", end, "n-1")
    replays(client, clock, "PUT", "/v1/predicates/mentor", {"cardinality": "one"}, "p-1")
    replays(client, clock, "DELETE", f"/v1/items/{ep['id']}", None, "x-1")
    assert ok(client.get("/v1/stats"))["episodes"] == 0
    assert [f["object"] for f in ok(client.get("/v1/facts"))["items"]] == []
