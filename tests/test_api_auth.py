"""Tenancy over HTTP: tokens, namespaces, rights, loopback-only mode, and the token tools."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from palimpsest.api import create_app
from palimpsest.api.tokens import (
    create_token,
    hash_token,
    list_tokens,
    load_tokens,
    revoke_token,
    verify,
)
from palimpsest.errors import NotFound, ValidationError

from .conftest import Clock

LOOPBACK = ("127.0.0.1", 50000)
REMOTE = ("203.0.113.9", 40000)
T = "T00:00:00Z"


@dataclass
class Tenants:
    client: TestClient
    tokens_file: Path
    alice: str
    bob: str
    alice_ro: str
    ids: dict[str, str]

    def as_(self, token: str | None) -> dict[str, str]:
        return {} if token is None else {"Authorization": f"Bearer {token}"}


def problem(r: Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = r.json()
    assert body["code"] == code and body["status"] == status, body
    assert body["type"].endswith(code) and body["title"] and body["detail"]
    return body


@pytest.fixture
def tenants(tmp_path: Path, clock: Clock) -> Iterator[Tenants]:
    tokens_file = tmp_path / "tokens.json"
    alice, _ = create_token(tokens_file, namespaces=["alice"])
    bob, _ = create_token(tokens_file, namespaces=["bob"])
    alice_ro, _ = create_token(tokens_file, namespaces=["alice"], rights="read")
    app = create_app(tmp_path / "mem", tokens_file=tokens_file, extractor=None, clock=clock)
    with TestClient(app, client=LOOPBACK) as c:
        h = {"Authorization": f"Bearer {alice}"}
        fact = c.post(
            "/v1/facts",
            headers=h,
            json={
                "subject": "Alice",
                "predicate": "lives_in",
                "object": "Lisbon",
                "valid_from": "2020-01-01" + T,
            },
        )
        assert fact.status_code == 201, fact.text
        assert fact.json()["namespace"] == "alice"  # the token's namespace by default
        ep = c.post("/v1/episodes", headers=h, json={"text": "Alice's secret diary entry"})
        assert ep.status_code == 201, ep.text
        hb = {"Authorization": f"Bearer {bob}"}
        bob_fact = c.post(
            "/v1/facts", headers=hb, json={"subject": "Bob", "predicate": "likes", "object": "tea"}
        )
        assert bob_fact.status_code == 201, bob_fact.text
        clock.tick()
        yield Tenants(
            c,
            tokens_file,
            alice,
            bob,
            alice_ro,
            {
                "fact": fact.json()["id"],
                "episode": ep.json()["id"],
                "bob_fact": bob_fact.json()["id"],
            },
        )


# method, path (with {fact} / {episode} of alice's), request kwargs, is it a write
ENDPOINTS: list[tuple[str, str, dict[str, Any], bool]] = [
    ("GET", "/v1/stats", {}, False),
    ("POST", "/v1/episodes", {"json": {"text": "hello"}}, True),
    ("POST", "/v1/episodes:batch", {"json": {"items": [{"text": "hello"}]}}, True),
    ("GET", "/v1/episodes/{episode}", {}, False),
    ("POST", "/v1/facts", {"json": {"subject": "x", "predicate": "likes", "object": "y"}}, True),
    (
        "POST",
        "/v1/facts:batch",
        {"json": {"items": [{"subject": "x", "predicate": "likes", "object": "y"}]}},
        True,
    ),
    ("POST", "/v1/facts:end", {"json": {"subject": "Alice", "predicate": "lives_in"}}, True),
    ("POST", "/v1/facts/{fact}:retract", {"json": {"reason": "r"}}, True),
    ("DELETE", "/v1/items/{fact}", {}, True),
    ("DELETE", "/v1/items/{episode}", {}, True),
    ("GET", "/v1/facts", {"params": {"subject": "Alice"}}, False),
    ("GET", "/v1/history", {"params": {"subject": "Alice"}}, False),
    ("GET", "/v1/entities/Alice", {}, False),
    ("GET", "/v1/entities", {}, False),
    ("GET", "/v1/predicates", {}, False),
    ("PUT", "/v1/predicates/hobby", {"json": {"cardinality": "many"}}, True),
    ("GET", "/v1/snapshot", {}, False),
    ("GET", "/v1/snapshot", {"params": {"format": "node-link"}}, False),
    ("GET", "/v1/changes", {"params": {"since": "2000-01-01" + T}}, False),
    ("GET", "/v1/recall", {"params": {"query": "where does Alice live? Lisbon"}}, False),
    ("POST", "/v1/consolidation", {"params": {"dry_run": "true"}}, True),
    ("GET", "/v1/consolidation/reports", {}, False),
    # what the dashboard reads and writes (api/routes_explore.py, api/routes_review.py)
    ("GET", "/v1/access", {}, False),
    ("GET", "/v1/entities:search", {"params": {"q": "ali"}}, False),
    ("GET", "/v1/timeline", {"params": {"subject": "Alice"}}, False),
    ("GET", "/v1/facts/{fact}/explanation", {}, False),
    ("GET", "/v1/neighbourhood", {"params": {"entity": "Alice", "hops": 2}}, False),
    ("GET", "/v1/recall:explain", {"params": {"query": "where does Alice live? Lisbon"}}, False),
    ("GET", "/v1/quarantine", {}, False),
    ("POST", "/v1/facts/{fact}:promote", {"json": {"reason": "r"}}, True),
    ("POST", "/v1/facts/{fact}:reject", {"json": {"reason": "r"}}, True),
    ("GET", "/v1/merges", {}, False),
    ("POST", "/v1/merges/mg_none:unmerge", {}, True),
]


def test_the_isolation_tests_cover_every_endpoint(tenants: Tenants) -> None:
    schema = tenants.client.get("/openapi.json").json()
    served = {
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        for method in ops
        if path != "/v1/health"
    }
    tried = {(m, p.replace("{fact}", "{fact_id}")) for m, p, _, _ in ENDPOINTS}
    tried = {
        (
            m,
            p.replace("/v1/items/{fact_id}", "/v1/items/{item_id}")
            .replace("/v1/items/{episode}", "/v1/items/{item_id}")
            .replace("/v1/episodes/{episode}", "/v1/episodes/{episode_id}")
            .replace("/v1/entities/Alice", "/v1/entities/{name}")
            .replace("/v1/predicates/hobby", "/v1/predicates/{name}")
            .replace("/v1/merges/mg_none", "/v1/merges/{merge_id}"),
        )
        for m, p in tried
    }
    assert served <= tried, served - tried


def call(
    t: Tenants, method: str, path: str, kw: dict[str, Any], token: str | None, **params: str
) -> Response:
    kw = dict(kw)
    if params:
        kw["params"] = {**kw.get("params", {}), **params}
    url = path.format(**t.ids)
    return t.client.request(method, url, headers={**t.as_(token), **kw.pop("headers", {})}, **kw)


def alice_intact(t: Tenants) -> None:
    r = t.client.get("/v1/facts", headers=t.as_(t.alice), params={"subject": "Alice"})
    assert [f["object"] for f in r.json()["items"]] == ["Lisbon"]
    assert t.client.get(f"/v1/episodes/{t.ids['episode']}", headers=t.as_(t.alice)).is_success
    st = t.client.get("/v1/stats", headers=t.as_(t.alice)).json()
    assert (st["namespace"], st["episodes"], st["assertions"]) == ("alice", 1, 1)


@pytest.mark.parametrize(("method", "path", "kw", "write"), ENDPOINTS)
def test_every_endpoint_refuses_missing_or_wrong_tokens(
    tenants: Tenants, method: str, path: str, kw: dict[str, Any], write: bool
) -> None:
    for headers in (
        {},
        {"Authorization": "Bearer pal_wrong"},
        {"Authorization": f"Bearer {tenants.alice}x"},
        {"Authorization": f"Basic {tenants.alice}"},
        {"Authorization": "Bearer"},
    ):
        r = call(tenants, method, path, {**kw, "headers": headers}, None)
        problem(r, 401, "unauthorized")
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert "Lisbon" not in r.text
    alice_intact(tenants)


@pytest.mark.parametrize(("method", "path", "kw", "write"), ENDPOINTS)
def test_every_endpoint_refuses_a_foreign_namespace(
    tenants: Tenants, method: str, path: str, kw: dict[str, Any], write: bool
) -> None:
    # alice's token on bob's namespace; bob's token on alice's (with alice's ids)
    problem(call(tenants, method, path, kw, tenants.alice, namespace="bob"), 403, "forbidden")
    r = call(tenants, method, path, kw, tenants.bob, namespace="alice")
    problem(r, 403, "forbidden")
    assert "Lisbon" not in r.text
    alice_intact(tenants)
    bob = tenants.client.get("/v1/stats", headers=tenants.as_(tenants.bob)).json()
    assert (bob["namespace"], bob["assertions"]) == ("bob", 1)


@pytest.mark.parametrize(("method", "path", "kw", "write"), ENDPOINTS)
def test_nothing_leaks_into_another_tenants_namespace(
    tenants: Tenants, method: str, path: str, kw: dict[str, Any], write: bool
) -> None:
    """Bob, in his own namespace, addressing alice's ids and names, sees nothing of hers."""
    r = call(tenants, method, path, kw, tenants.bob)
    assert r.status_code < 500, r.text
    for secret in ("Lisbon", "secret diary"):
        assert secret not in r.text, (path, r.text)
    if "{fact}" in path or "{episode}" in path:
        # alice's ids look exactly like ids that do not exist: no existence oracle
        problem(r, 404, "not_found")
        fake = {"fact": "fa_" + "0" * 32, "episode": "ep_" + "0" * 32}
        r2 = tenants.client.request(
            method, path.format(**fake), headers=tenants.as_(tenants.bob), **kw
        )
        text = r.text
        for key, fake_id in fake.items():
            text = text.replace(tenants.ids[key], fake_id)
        assert text == r2.text
    alice_intact(tenants)


@pytest.mark.parametrize(("method", "path", "kw", "write"), ENDPOINTS)
def test_read_only_tokens_read_but_never_write(
    tenants: Tenants, method: str, path: str, kw: dict[str, Any], write: bool
) -> None:
    r = call(tenants, method, path, kw, tenants.alice_ro)
    if write:
        problem(r, 403, "forbidden")
    else:
        assert r.status_code == 200, r.text
    alice_intact(tenants)


def test_namespace_lists_and_wildcards(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.json"
    both, _ = create_token(tokens_file, namespaces=["a", "b"])
    admin, _ = create_token(tokens_file, namespaces=["*"], rights="read")
    app = create_app(tmp_path / "mem", tokens_file=tokens_file, extractor=None)
    with TestClient(app, client=LOOPBACK) as c:
        h = {"Authorization": f"Bearer {both}"}
        fact = {"subject": "s", "predicate": "likes", "object": "o"}
        assert c.post("/v1/facts", headers=h, json=fact).json()["namespace"] == "a"
        assert c.post("/v1/facts", headers=h, params={"namespace": "b"}, json=fact).is_success
        problem(c.get("/v1/facts", headers=h, params={"namespace": "c"}), 403, "forbidden")
        ha = {"Authorization": f"Bearer {admin}"}
        for ns in ("a", "b", "zzz"):
            assert c.get("/v1/stats", headers=ha, params={"namespace": ns}).is_success
        assert c.get("/v1/stats", headers=ha).json()["namespace"] == "default"
        problem(c.post("/v1/facts", headers=ha, json=fact), 403, "forbidden")
        problem(c.get("/v1/stats", headers=ha, params={"namespace": "no/pe"}), 422, "invalid_name")


def test_revoked_token_is_refused_from_the_next_request(tenants: Tenants) -> None:
    h = tenants.as_(tenants.bob)
    assert tenants.client.get("/v1/stats", headers=h).status_code == 200
    bob_id = next(r.id for r in list_tokens(tenants.tokens_file) if verify([r], tenants.bob))
    revoke_token(tenants.tokens_file, bob_id)
    problem(tenants.client.get("/v1/stats", headers=h), 401, "unauthorized")
    assert tenants.client.get("/v1/stats", headers=tenants.as_(tenants.alice)).status_code == 200


def test_health_and_docs_need_no_token(tenants: Tenants) -> None:
    r = tenants.client.get("/v1/health")
    assert r.status_code == 200 and r.json()["auth"] == "tokens"
    assert tenants.client.get("/docs").status_code == 200
    assert tenants.client.get("/openapi.json").status_code == 200


def test_without_tokens_only_loopback_clients_are_served(tmp_path: Path) -> None:
    app = create_app(tmp_path / "mem", extractor=None)
    with TestClient(app, client=REMOTE) as remote:
        for path in ("/v1/facts", "/v1/health", "/docs", "/v1/nowhere"):
            problem(remote.get(path), 403, "forbidden")
        problem(remote.post("/v1/facts", json={}), 403, "forbidden")
    for host in ("127.0.0.1", "::1", "127.5.6.7"):
        with TestClient(app, client=(host, 1)) as local:
            assert local.get("/v1/health").status_code == 200


def test_with_tokens_remote_clients_are_served(tmp_path: Path) -> None:
    tokens_file = tmp_path / "tokens.json"
    secret, _ = create_token(tokens_file, namespaces=["x"])
    app = create_app(tmp_path / "mem", tokens_file=tokens_file, extractor=None)
    with TestClient(app, client=REMOTE) as remote:
        assert remote.get("/v1/stats", headers={"Authorization": f"Bearer {secret}"}).is_success
        problem(remote.get("/v1/stats"), 401, "unauthorized")


# --- the tokens file -----------------------------------------------------------------------------
def test_tokens_file_keeps_only_hashes(tmp_path: Path) -> None:
    path = tmp_path / "t" / "tokens.json"
    secret, rec = create_token(path, namespaces=["alice", "alice"], rights="write")
    assert secret.startswith("pal_") and len(secret) > 40
    text = path.read_text()
    assert secret not in text and hash_token(secret) in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert rec.namespaces == ("alice",) and rec.can_write
    [loaded] = load_tokens(path)
    assert loaded == rec
    assert verify(load_tokens(path), secret) == rec
    assert verify(load_tokens(path), secret + "x") is None
    assert revoke_token(path, rec.id) == rec
    assert list_tokens(path) == []
    with pytest.raises(NotFound):
        revoke_token(path, rec.id)
    with pytest.raises(ValidationError):
        create_token(path, namespaces=[])
    with pytest.raises(ValidationError):
        create_token(path, namespaces=["bad/namespace"])


def test_create_app_refuses_a_missing_or_malformed_tokens_file(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        create_app(tmp_path / "mem", tokens_file=tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    for content in (
        "{",
        '{"id": 1}',
        '[{"id": "t"}]',
        '[{"id": "t", "sha256": "ab", "namespaces": []}]',
    ):
        bad.write_text(content)
        with pytest.raises(ValidationError):
            create_app(tmp_path / "mem", tokens_file=bad)


def _cli(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    proc = subprocess.run(
        [sys.executable, "-m", "palimpsest.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def test_token_commands(tmp_path: Path) -> None:
    tf = str(tmp_path / "tokens.json")
    made = json.loads(
        _cli("token", "create", "--namespace", "alice", "--tokens", tf, "--json").stdout
    )
    assert made["rights"] == "write" and made["namespaces"] == ["alice"]
    plain = _cli("token", "create", "-n", "a", "-n", "b", "--read-only", "--tokens", tf)
    secret = plain.stdout.strip()
    assert secret.startswith("pal_") and "shown once" in plain.stderr
    listed = json.loads(_cli("token", "list", "--tokens", tf, "--json").stdout)
    assert [(t["id"], t["rights"], t["namespaces"]) for t in listed] == [
        (made["id"], "write", ["alice"]),
        (listed[1]["id"], "read", ["a", "b"]),
    ]
    assert all("sha256" not in t and "token" not in t for t in listed)
    table = _cli("token", "list", "--tokens", tf).stdout
    assert made["id"] in table and made["token"] not in table and secret not in table
    assert _cli("token", "revoke", made["id"], "--tokens", tf).stdout.strip() == (
        f"revoked {made['id']}"
    )
    assert (
        "error [not_found]" in _cli("token", "revoke", made["id"], "--tokens", tf, expect=2).stderr
    )
    assert [t.rights for t in load_tokens(Path(tf))] == ["read"]
