"""The HTTP server through the real app (FastAPI TestClient), on each store: a real Kùzu
directory and a PostgreSQL database (`every_store`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from palimpsest._names import MAX_TEXT
from palimpsest.api import create_app
from palimpsest.api.problems import PROBLEM_JSON, STATUS
from palimpsest.api.schemas import MAX_BATCH

from .conftest import Clock

pytestmark = pytest.mark.every_store

LOOPBACK = ("127.0.0.1", 50000)
T = "T00:00:00Z"


@pytest.fixture
def client(place: str | Path, clock: Clock) -> Iterator[TestClient]:
    app = create_app(place, extractor=None, clock=clock)
    with TestClient(app, client=LOOPBACK) as c:
        yield c


def ok(r: Response, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    return r.json()


def problem(r: Response, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert an RFC 9457 problem response and return its body."""
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == PROBLEM_JSON
    body: dict[str, Any] = r.json()
    assert {"type", "title", "status", "detail", "code"} <= set(body)
    assert body["status"] == status
    assert body["type"] == "urn:palimpsest:problem:" + body["code"]
    assert isinstance(body["detail"], str) and body["detail"]
    if code is not None:
        assert body["code"] == code, body
    return body


def assert_fact(c: TestClient, s: str, p: str, o: str, **kw: Any) -> dict[str, Any]:
    out: dict[str, Any] = ok(
        c.post("/v1/facts", json={"subject": s, "predicate": p, "object": o, **kw}), 201
    )
    return out


def objects(c: TestClient, **params: Any) -> list[str]:
    page = ok(c.get("/v1/facts", params=params))
    return [f["object"] for f in page["items"]]


# --- the as-of semantics through HTTP ------------------------------------------------------------
def test_design_worked_example_over_http(client: TestClient, clock: Clock) -> None:
    k1 = clock.tick().isoformat()
    sydney = assert_fact(client, "user", "lives_in", "Sydney", valid_from="2024-06-01" + T)
    k2 = clock.tick().isoformat()
    assert_fact(client, "user", "lives_in", "Melbourne", valid_from="2023-01-01" + T)
    k3 = clock.tick().isoformat()
    end = ok(
        client.post(
            "/v1/facts:end",
            json={
                "subject": "user",
                "predicate": "lives_in",
                "object": "Sydney",
                "at": "2025-02-01" + T,
            },
        ),
        201,
    )
    assert end["op"] == "end" and end["applied"] is True
    k4 = clock.tick().isoformat()
    retracted = ok(
        client.post(f"/v1/facts/{sydney['id']}:retract", json={"reason": "user corrected it"})
    )
    assert retracted["status"] == "retracted" and retracted["reason"] == "user corrected it"

    q = {"subject": "user", "predicate": "lives_in"}
    assert objects(client, **q, valid_at="2024-09-01" + T, known_at=k3) == ["Sydney"]
    assert objects(client, **q, valid_at="2024-09-01" + T, known_at=k4) == ["Melbourne"]
    assert objects(client, **q, valid_at="2023-05-01" + T, known_at=k1) == []
    assert objects(client, **q, valid_at="2023-05-01" + T, known_at=k2) == ["Melbourne"]
    assert objects(client, **q, valid_at="2025-03-01" + T, known_at=k3) == []
    assert objects(client, **q, valid_at="2025-03-01" + T, known_at=k4) == ["Melbourne"]
    # other time zones are the same instants
    assert objects(client, **q, valid_at="2024-09-01T10:00:00+10:00", known_at=k3) == ["Sydney"]

    hist = ok(client.get("/v1/history", params=q))
    assert {(f["object"], f["status"]) for f in hist} >= {
        ("Sydney", "retracted"),
        ("Melbourne", "current"),
    }
    assert all(f["recorded_at"].endswith("Z") for f in hist)


# --- every endpoint ------------------------------------------------------------------------------
def test_episodes_remember_batch_get_and_erase(client: TestClient) -> None:
    ep = ok(
        client.post(
            "/v1/episodes",
            json={
                "text": "I moved to Sydney in June 2024.",
                "occurred_at": "2024-07-02T10:00:00Z",
                "session": "s1",
            },
        ),
        201,
    )
    assert ep["id"].startswith("ep_") and ep["occurred_at"] == "2024-07-02T10:00:00Z"
    again = ok(
        client.post(
            "/v1/episodes",
            json={
                "text": "I moved to Sydney in June 2024.",
                "occurred_at": "2024-07-02T10:00:00Z",
                "session": "s1",
            },
        ),
        201,
    )
    assert again["id"] == ep["id"]  # idempotent replay
    batch = ok(
        client.post(
            "/v1/episodes:batch",
            json={"items": [{"text": "hello", "speaker": "Mira"}, {"text": "second"}]},
        ),
        201,
    )
    assert [e["text"] for e in batch] == ["hello", "second"]
    assert batch[0]["author_kind"] == "third_party" and batch[0]["quarantined"] is True

    got = ok(client.get(f"/v1/episodes/{ep['id']}"))
    assert got["text"] == "I moved to Sydney in June 2024."

    tombs = ok(client.delete(f"/v1/items/{ep['id']}", params={"reason": "user asked"}))
    assert [(t["id"], t["kind"], t["reason"]) for t in tombs] == [
        (ep["id"], "episode", "user asked")
    ]
    problem(client.get(f"/v1/episodes/{ep['id']}"), 404, "not_found")
    problem(client.delete(f"/v1/items/{ep['id']}"), 409, "erased")


def test_fact_writes_batch_end_retract_erase(client: TestClient, clock: Clock) -> None:
    facts = ok(
        client.post(
            "/v1/facts:batch",
            json={
                "items": [
                    {
                        "subject": "user",
                        "predicate": "likes",
                        "object": "jazz",
                        "valid_from": "2020-01-01" + T,
                    },
                    {"subject": "user", "predicate": "likes", "object": "tea", "valid_from": None},
                    {
                        "subject": "Mira",
                        "predicate": "lives_in",
                        "object": "Auckland",
                        "author_kind": "third_party",
                    },
                ]
            },
        ),
        201,
    )
    jazz, tea, mira = facts
    assert tea["valid_from"] is None  # explicit null: since always
    assert mira["valid_from"] == "2030-01-01T00:00:00Z"  # left out: the clock's now
    assert mira["quarantined"] is True and mira["status"] == "quarantined"
    clock.tick()
    assert sorted(objects(client, subject="user", predicate="likes")) == ["jazz", "tea"]
    assert objects(client, subject="Mira") == []  # quarantined: not in facts...
    assert objects(client, subject="Mira", include_quarantined=True) == ["Auckland"]

    noop = ok(
        client.post(
            "/v1/facts:end", json={"subject": "user", "predicate": "likes", "object": "polka"}
        ),
        201,
    )
    assert noop["applied"] is False
    clock.tick()
    ok(client.post(f"/v1/facts/{jazz['id']}:retract"))  # no body: no reason
    problem(client.post(f"/v1/facts/{jazz['id']}:retract"), 409, "conflict")
    clock.tick()
    tombs = ok(client.delete(f"/v1/items/{tea['id']}"))
    assert tombs[0]["kind"] == "fact" and tombs[0]["id"] == tea["id"]
    clock.tick()
    assert objects(client, subject="user", predicate="likes") == []
    hist = ok(client.get("/v1/history", params={"subject": "user"}))
    assert {f["status"] for f in hist} == {"retracted", "erased"}
    assert all(f["object"] != "tea" for f in hist)
    problem(client.post(f"/v1/facts/{tea['id']}:retract"), 409, "erased")


def test_entities_profile_and_pagination(client: TestClient) -> None:
    assert_fact(client, "user", "knows", "Mira", valid_from="2020-01-01" + T)
    assert_fact(client, "Mira", "lives_in", "Auckland", valid_from="2020-01-01" + T)
    profile = ok(client.get("/v1/entities/Mira"))
    assert profile["entity"]["name"] == "Mira"
    assert [f["object"] for f in profile["outgoing"]] == ["Auckland"]
    assert [f["subject"] for f in profile["incoming"]] == ["user"]
    past = ok(client.get("/v1/entities/mira", params={"valid_at": "2019-01-01" + T}))
    assert past["outgoing"] == [] and past["incoming"] == []
    problem(client.get("/v1/entities/Nobody"), 404, "not_found")
    # a name with a slash is one path parameter
    assert_fact(client, "user", "likes", "AC/DC", valid_from=None)
    assert ok(client.get("/v1/entities/AC%2FDC"))["entity"]["name"] == "AC/DC"

    names: list[str] = []
    offset: int | None = 0
    pages = 0
    while offset is not None and pages < 10:  # bounded
        page = ok(client.get("/v1/entities", params={"limit": 2, "offset": offset}))
        assert page["limit"] == 2 and page["offset"] == offset and len(page["items"]) <= 2
        names += [e["name"] for e in page["items"]]
        offset = page["next_offset"]
        pages += 1
    assert sorted(names) == sorted(["user", "Mira", "Auckland", "AC/DC"]) and pages == 2


def test_facts_pagination_walks_every_fact_once(client: TestClient) -> None:
    items = [
        {"subject": "user", "predicate": "likes", "object": f"thing {i:02d}", "valid_from": None}
        for i in range(7)
    ]
    ok(client.post("/v1/facts:batch", json={"items": items}), 201)
    everything = ok(client.get("/v1/facts", params={"subject": "user"}))
    assert everything["next_offset"] is None and len(everything["items"]) == 7
    seen: list[str] = []
    offset: int | None = 0
    for _ in range(10):  # bounded
        if offset is None:
            break
        page = ok(client.get("/v1/facts", params={"subject": "user", "limit": 3, "offset": offset}))
        seen += [f["object"] for f in page["items"]]
        offset = page["next_offset"]
    assert seen == [f["object"] for f in everything["items"]]
    assert len(set(seen)) == 7
    beyond = ok(client.get("/v1/facts", params={"limit": 3, "offset": 50}))
    assert beyond["items"] == [] and beyond["next_offset"] is None
    problem(client.get("/v1/facts", params={"limit": 0}), 422, "invalid_input")
    problem(client.get("/v1/facts", params={"limit": 5000}), 422, "invalid_input")
    problem(client.get("/v1/facts", params={"offset": -1}), 422, "invalid_input")


def test_predicates_list_and_define(client: TestClient) -> None:
    preds = {p["name"]: p for p in ok(client.get("/v1/predicates"))}
    assert preds["lives_in"]["cardinality"] == "one"
    defined = ok(
        client.put(
            "/v1/predicates/favourite_colour",
            json={"cardinality": "one", "aliases": ["Favorite Color"], "object_kind": "value"},
        )
    )
    assert defined == {
        "name": "favourite_colour",
        "cardinality": "one",
        "aliases": ["favorite color"],
        "inverse": None,
        "object_kind": "value",
        "origin": "user",
    }
    assert "favourite_colour" in {p["name"] for p in ok(client.get("/v1/predicates"))}
    assert_fact(client, "user", "favorite color", "blue", valid_from="2020-01-01" + T)
    assert_fact(client, "user", "favourite_colour", "green", valid_from="2021-01-01" + T)
    assert objects(client, subject="user", predicate="favourite_colour") == ["green"]
    problem(client.put("/v1/predicates/Bad Name!", json={}), 422, "invalid_name")
    problem(client.put("/v1/predicates/x", json={"cardinality": "some"}), 422, "invalid_input")


def test_snapshot_json_node_link_and_changes(client: TestClient, clock: Clock) -> None:
    k0 = clock.now.isoformat()
    clock.tick()
    assert_fact(client, "user", "lives_in", "Sydney", valid_from="2024-06-01" + T)
    assert_fact(client, "user", "likes", "jazz", valid_from="2024-01-01" + T)
    assert_fact(client, "Mira", "lives_in", "Auckland", valid_from="2020-01-01" + T)
    clock.tick()
    snap = ok(client.get("/v1/snapshot", params={"valid_at": "2024-09-01" + T}))
    assert snap["namespace"] == "default"
    by = {g["entity"]: sorted(f["object"] for f in g["facts"]) for g in snap["entities"]}
    assert by == {"Mira": ["Auckland"], "user": ["Sydney", "jazz"]}
    only = ok(client.get("/v1/snapshot", params=[("entity", "Mira"), ("entity", "nobody")]))
    assert [g["entity"] for g in only["entities"]] == ["Mira"]

    graph = ok(
        client.get("/v1/snapshot", params={"valid_at": "2024-09-01" + T, "format": "node-link"})
    )
    assert graph["directed"] is True and graph["multigraph"] is True
    assert {n["name"] for n in graph["nodes"]} == {"user", "Sydney", "jazz", "Mira", "Auckland"}
    assert len(graph["edges"]) == 3
    assert graph["graph"]["valid_at"] == "2024-09-01T00:00:00Z"
    edge = next(
        e
        for e in graph["edges"]
        if e["predicate"] == "lives_in" and e["valid_from"] == "2024-06-01T00:00:00Z"
    )
    assert edge["valid_to"] is None and edge["recorded_at"].endswith("Z")
    problem(client.get("/v1/snapshot", params={"format": "xml"}), 422, "invalid_input")

    ch = ok(
        client.get("/v1/changes", params={"since": "2024-01-01" + T, "until": "2025-01-01" + T})
    )
    assert sorted(f["object"] for f in ch["started"]) == ["Sydney", "jazz"]
    learned = ok(client.get("/v1/changes", params={"since": k0}))
    assert len(learned["learned"]) == 3
    problem(
        client.get("/v1/changes", params={"since": "2025-01-01" + T, "until": "2024-01-01" + T}),
        422,
        "invalid_window",
    )
    problem(client.get("/v1/changes"), 422, "invalid_input")  # since is required
    # an empty window (the same instant, however written) holds nothing: it is no error
    empty = {"since": "2024-06-01" + T, "until": "2024-06-01T02:00:00+02:00"}
    none = ok(client.get("/v1/changes", params=empty))
    assert none["since"] == none["until"] == "2024-06-01T00:00:00Z"
    assert none["known_at"] == clock.now.isoformat().replace("+00:00", "Z")
    assert [none[k] for k in ("started", "ended", "learned", "revised")] == [[], [], [], []]
    at_k0 = ok(client.get("/v1/changes", params={**empty, "known_at": k0}))
    assert at_k0["known_at"] == k0.replace("+00:00", "Z")


def test_health_stats_and_docs(client: TestClient) -> None:
    health = ok(client.get("/v1/health"))
    assert health["status"] == "ok" and health["auth"] == "loopback"
    assert_fact(client, "user", "likes", "jazz")
    ok(client.post("/v1/episodes", json={"text": "hi"}), 201)
    st = ok(client.get("/v1/stats"))
    assert (st["namespace"], st["episodes"], st["assertions"]) == ("default", 1, 1)
    other = ok(client.get("/v1/stats", params={"namespace": "other"}))
    assert (other["episodes"], other["assertions"]) == (0, 0)
    assert client.get("/docs").status_code == 200
    spec = ok(client.get("/openapi.json"))
    for path in (
        "/v1/facts",
        "/v1/facts:batch",
        "/v1/facts/{fact_id}:retract",
        "/v1/snapshot",
        "/v1/items/{item_id}",
        "/v1/entities/{name}",
        "/v1/predicates/{name}",
    ):
        assert path in spec["paths"], path
    params = {p["name"] for p in spec["paths"]["/v1/facts"]["get"]["parameters"]}
    assert {"namespace", "subject", "valid_at", "known_at", "limit", "offset"} <= params


def test_namespaces_are_separate_without_tokens(client: TestClient) -> None:
    a = assert_fact(client, "user", "likes", "jazz")
    ok(
        client.post(
            "/v1/facts",
            params={"namespace": "work"},
            json={"subject": "user", "predicate": "likes", "object": "spreadsheets"},
        ),
        201,
    )
    assert objects(client, subject="user") == ["jazz"]
    assert objects(client, subject="user", namespace="work") == ["spreadsheets"]
    problem(
        client.post(f"/v1/facts/{a['id']}:retract", params={"namespace": "work"}), 404, "not_found"
    )
    problem(client.get("/v1/facts", params={"namespace": "../etc"}), 422, "invalid_name")


# --- one error format ----------------------------------------------------------------------------
def test_problem_details_for_engine_errors(client: TestClient) -> None:
    body = problem(
        client.get("/v1/facts", params={"valid_at": "2024-06-01T00:00:00"}), 422, "naive_datetime"
    )
    assert body["details"] == {"field": "valid_at"} and body["instance"] == "/v1/facts"
    problem(
        client.post(
            "/v1/facts",
            json={
                "subject": "user",
                "predicate": "likes",
                "object": "x",
                "valid_from": "2024-06-01T00:00:00",
            },
        ),
        422,
        "naive_datetime",
    )
    problem(client.get("/v1/facts", params={"known_at": "yesterday"}), 422, "invalid_time")
    problem(
        client.post(
            "/v1/facts",
            json={
                "subject": "user",
                "predicate": "likes",
                "object": "x",
                "valid_from": "2024-06-01" + T,
                "valid_to": "2024-01-01" + T,
            },
        ),
        422,
        "invalid_window",
    )
    problem(client.get("/v1/episodes/ep_nope"), 404, "not_found")
    problem(client.post("/v1/facts/fa_nope:retract"), 404, "not_found")
    problem(client.delete("/v1/items/fa_nope"), 404, "not_found")
    problem(
        client.post(
            "/v1/facts",
            json={
                "subject": "user",
                "predicate": "likes",
                "object": "x",
                "evidence": ["ep_missing"],
            },
        ),
        404,
        "not_found",
    )
    problem(  # a value over its bound (the schema's maxLength) is invalid input: 422
        client.post("/v1/facts", json={"subject": "x" * 600, "predicate": "likes", "object": "y"}),
        422,
        "too_large",
    )
    problem(client.get("/v1/facts", params={"valid_at": "a" * 65}), 422, "too_large")
    problem(
        client.post("/v1/facts", json={"subject": "a\x01b", "predicate": "likes", "object": "y"}),
        422,
        "invalid_name",
    )


def test_problem_details_for_framework_errors(client: TestClient) -> None:
    body = problem(client.post("/v1/facts", json={"subject": "user"}), 422, "invalid_input")
    locs = [tuple(e["loc"]) for e in body["details"]["errors"]]
    assert ("body", "predicate") in locs and ("body", "object") in locs
    problem(
        client.post(
            "/v1/facts", json={"subject": "u", "predicate": "p", "object": "o", "surprise": 1}
        ),
        422,
        "invalid_input",
    )
    problem(
        client.post(
            "/v1/facts", content=b"{not json", headers={"content-type": "application/json"}
        ),
        422,
        "invalid_input",
    )
    problem(client.get("/v1/nowhere"), 404, "not_found")
    r = client.put("/v1/facts")
    problem(r, 405, "method_not_allowed")
    assert r.headers["allow"]


def test_request_size_limits(client: TestClient) -> None:
    big = b'{"text": "' + b"x" * (2 * 1024 * 1024) + b'"}'
    body = problem(
        client.post("/v1/episodes", content=big, headers={"content-type": "application/json"}),
        413,
        "too_large",
    )
    assert "bytes" in body["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit counts what streams in
        yield b'{"text": "'
        for _ in range(3):
            yield b"y" * (1024 * 1024)
        yield b'"}'

    problem(
        client.post("/v1/episodes", content=chunks(), headers={"content-type": "application/json"}),
        413,
        "too_large",
    )
    # under the body limit but over the text's maxLength: a bound the schema states, 422
    long_text = {"text": "z" * (MAX_TEXT + 1)}
    body = problem(client.post("/v1/episodes", json=long_text), 422, "too_large")
    assert body["details"] == {"field": "text"}
    items = [
        {"subject": "u", "predicate": "likes", "object": f"o{i}"} for i in range(MAX_BATCH + 1)
    ]
    # a batch over its maxItems breaks a bound the schema states: 422, as any value over one
    problem(client.post("/v1/facts:batch", json={"items": items}), 422, "too_large")
    ok(client.get("/v1/facts", params={"subject": "u"}))  # nothing from the batch was stored
    assert objects(client, subject="u") == []


BAD_INPUTS: list[tuple[str, str, dict[str, Any]]] = [
    ("POST", "/v1/facts", {"json": {"subject": 1, "predicate": [], "object": None}}),
    ("POST", "/v1/facts", {"json": {"subject": "", "predicate": "likes", "object": "x"}}),
    ("POST", "/v1/facts", {"json": {"subject": "u", "predicate": "", "object": "x"}}),
    ("POST", "/v1/facts", {"json": {"subject": "u", "predicate": "p" * 300, "object": "x"}}),
    (
        "POST",
        "/v1/facts",
        {"json": {"subject": "u", "predicate": "likes", "object": "x", "confidence": 7}},
    ),
    (
        "POST",
        "/v1/facts",
        {"json": {"subject": "u", "predicate": "likes", "object": "x", "valid_from": "0000-00-00"}},
    ),
    (
        "POST",
        "/v1/facts",
        {
            "json": {
                "subject": "u",
                "predicate": "likes",
                "object": "x",
                "valid_from": "0001-01-01T00:00:00Z",
            }
        },
    ),
    ("POST", "/v1/facts", {"json": ["not", "an", "object"]}),
    (
        "POST",
        "/v1/facts",
        {"content": b"\xff\xfe\x00", "headers": {"content-type": "application/json"}},
    ),
    ("POST", "/v1/facts:batch", {"json": {"items": "nope"}}),
    ("POST", "/v1/facts:end", {"json": {"subject": "u", "predicate": "lives_in", "at": 5}}),
    ("POST", "/v1/facts:end", {"json": {"subject": "u", "predicate": "likes", "at": "soon"}}),
    ("POST", "/v1/episodes", {"json": {"text": ""}}),
    ("POST", "/v1/episodes", {"json": {"text": "nul \x00 byte"}}),
    ("POST", "/v1/episodes", {"json": {"text": "hi", "importance": 2}}),
    ("POST", "/v1/episodes", {"json": {"text": "hi", "speaker": "\x07"}}),
    ("POST", "/v1/episodes:batch", {"json": {"items": [{}]}}),
    ("GET", "/v1/facts", {"params": {"valid_at": "2024-13-45T99:00:00Z"}}),
    ("GET", "/v1/facts", {"params": {"subject": "\x00"}}),
    ("GET", "/v1/facts", {"params": {"limit": "ten"}}),
    ("GET", "/v1/facts", {"params": {"namespace": "x" * 100}}),
    ("GET", "/v1/facts", {"params": {"namespace": ""}}),
    ("GET", "/v1/history", {}),
    ("GET", "/v1/history", {"params": {"subject": ""}}),
    ("GET", "/v1/entities/%00", {}),
    ("GET", "/v1/snapshot", {"params": {"known_at": "9999-12-31T23:59:59Z"}}),
    ("GET", "/v1/changes", {"params": {"since": "then"}}),
    ("PUT", "/v1/predicates/x", {"json": {"aliases": [""]}}),
    ("PUT", "/v1/predicates/x", {"json": {"inverse": "not a valid one!"}}),
    ("DELETE", "/v1/items/%20", {}),
    ("POST", "/v1/facts/%20:retract", {}),
    ("GET", "/v1/recall", {}),
    ("GET", "/v1/recall", {"params": {"query": ""}}),
    ("GET", "/v1/recall", {"params": {"query": "x", "k": 0}}),
    ("GET", "/v1/recall", {"params": {"query": "x", "min_score": 2}}),
    ("GET", "/v1/recall", {"params": {"query": "x", "known_at": "2024-06-01T00:00:00"}}),
]


@pytest.mark.parametrize(("method", "path", "kwargs"), BAD_INPUTS)
def test_bad_input_is_a_problem_never_a_500(
    client: TestClient, method: str, path: str, kwargs: dict[str, Any]
) -> None:
    r = client.request(method, path, **kwargs)
    assert 400 <= r.status_code < 500, (r.status_code, r.text)
    body = problem(r, r.status_code)
    assert STATUS.get(body["code"]) == r.status_code


def test_recall_over_http_by_words_as_of(place: str | Path, clock: Clock) -> None:
    app = create_app(place, extractor=None, embedder=None, clock=clock)
    with TestClient(app, client=LOOPBACK) as c:
        ok(c.post("/v1/episodes", json={"text": "My sister Mira arrives on Friday."}), 201)
        before = clock.now.isoformat()
        clock.tick()
        ok(c.post("/v1/episodes", json={"text": "The violin lesson moved to Tuesday."}), 201)
        hits = ok(c.get("/v1/recall", params={"query": "violin lesson", "k": 3}))
        assert hits and "violin" in hits[0]["text"]
        assert {"kind", "text", "score", "episode_id", "quarantined"} <= set(hits[0])
        # as known before the violin lesson was remembered: not there
        earlier = ok(c.get("/v1/recall", params={"query": "violin lesson", "known_at": before}))
        assert all("violin" not in h["text"] for h in earlier)


def test_consolidation_trigger_and_reports(client: TestClient, clock: Clock) -> None:
    assert_fact(
        client, "user", "works_at", "Acme", valid_from="2020-01-01" + T, valid_to="2021-01-01" + T
    )
    clock.tick()
    dry = ok(client.post("/v1/consolidation", params={"dry_run": "true"}))
    assert dry["dry_run"] is True and dry["changes"], dry
    assert ok(client.get("/v1/consolidation/reports"))["items"] == []  # a dry run keeps none

    run = ok(client.post("/v1/consolidation"))
    assert [c["action"] for c in run["changes"]] == [c["action"] for c in dry["changes"]]
    assert all(c["reason"] for c in run["changes"])
    clock.tick()
    again = ok(client.post("/v1/consolidation"))
    assert again["changes"] == []  # idempotent: nothing left to do

    page = ok(client.get("/v1/consolidation/reports", params={"limit": 1}))
    assert len(page["items"]) == 1 and page["next_offset"] == 1  # newest first
    assert page["items"][0]["changes"] == []
    older = ok(client.get("/v1/consolidation/reports", params={"offset": 1}))["items"]
    assert [c["action"] for c in older[0]["changes"]] == [c["action"] for c in run["changes"]]
    problem(client.post("/v1/consolidation", params={"dry_run": "maybe"}), 422)
