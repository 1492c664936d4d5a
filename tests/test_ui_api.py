"""The `/v1` routes the dashboard needs, the pages' shell and the browser guard, through the
real app (FastAPI TestClient, real Kùzu on disk, the demo memory; no models)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx import Response

from palimpsest import Memory, NotQuarantined
from palimpsest.api import create_app
from palimpsest.api.tokens import create_token
from palimpsest.ui import STATIC

from .conftest import Clock
from .ui_demo import build_demo_memory

LOOPBACK = ("127.0.0.1", 50000)
SEPT = "2024-09-15T00:00:00Z"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("ui") / "mem"
    return path, build_demo_memory(path)


@pytest.fixture
def client(tmp_path: Path, demo: tuple[Path, dict[str, str]]) -> Iterator[TestClient]:
    # each test gets its own copy: several of them write
    import shutil

    copy = tmp_path / "mem"
    shutil.copytree(demo[0], copy)
    app = create_app(copy, extractor=None, embedder=None)
    with TestClient(app, client=LOOPBACK) as c:
        yield c


def ok(r: Response, status: int = 200) -> Any:
    assert r.status_code == status, r.text
    return r.json()


def rows(timeline: dict[str, Any], predicate: str) -> list[tuple[str, str, str | None, str]]:
    return [
        (v["object"], v["valid_from"][:10] if v["valid_from"] else "always",
         v["valid_to"][:10] if v["valid_to"] else None, v["status"])
        for v in timeline["versions"]
        if v["predicate"] == predicate
    ]  # fmt: skip


# --- reads -----------------------------------------------------------------------------------
def test_timeline_replays_the_sydney_melbourne_story_over_known_at(client: TestClient) -> None:
    q = {"subject": "user", "predicate": "lives_in"}
    early = ok(client.get("/v1/timeline", params={**q, "known_at": "2024-02-11T00:00:00Z"}))
    assert rows(early, "lives_in") == [
        ("Melbourne", "2019-01-01", None, "superseded"),
        ("Melbourne", "2019-01-01", "2024-04-27", "ended"),
        ("Sydney", "2024-04-27", None, "current"),
    ]
    late = ok(client.get("/v1/timeline", params=q))
    assert ("Sydney", "2024-04-27", None, "superseded") in rows(late, "lives_in")
    assert ("Sydney", "2024-10-01", None, "current") in rows(late, "lives_in")
    assert ("Melbourne", "2024-04-27", "2024-10-01", "ended") in rows(late, "lives_in")
    # before anything was said about the user: nothing, yet the slider's stops are all there
    before = ok(client.get("/v1/timeline", params={**q, "known_at": "2020-01-01T00:00:00Z"}))
    assert before["versions"] == [] and before["moments"] == late["moments"]
    stops = late["moments"]
    assert stops == sorted(stops) and len(stops) >= 3
    assert "2024-11-03T10:00:30Z" in stops  # the correction was learned then
    # the whole entity: every predicate, each version once
    every = ok(client.get("/v1/timeline", params={"subject": "user"}))
    assert {"lives_in", "works_at", "plays", "pet"} <= {v["predicate"] for v in every["versions"]}
    assert ok(client.get("/v1/timeline", params={"subject": "nobody"}), 404) is not None


def test_search_finds_entities_by_name_or_alias_prefixes_first(client: TestClient) -> None:
    found = ok(client.get("/v1/entities:search", params={"q": "m"}))
    names = [e["name"] for e in found]
    assert names[:2] == ["Mira", "Melbourne"]  # starts with it, shortest first
    assert "oat milk" in names  # contains it
    assert [e["name"] for e in ok(client.get("/v1/entities:search", params={"q": "MIRA"}))] == [
        "Mira"
    ]
    # a merged spelling is an alias of the winner now, and finds it
    okafor = ok(client.get("/v1/entities:search", params={"q": "dr okafor"}))
    assert [e["name"] for e in okafor] == ["Dr. Okafor"]
    assert ok(client.get("/v1/entities:search", params={"q": "zzz"})) == []
    assert ok(client.get("/v1/entities:search", params={"q": ""}), 422)["code"] == "invalid_input"


def test_explanation_gives_evidence_assertion_and_what_replaced_it(client: TestClient) -> None:
    tl = ok(client.get("/v1/timeline", params={"subject": "user", "predicate": "lives_in"}))
    old = next(v for v in tl["versions"] if v["object"] == "Sydney" and v["status"] == "superseded")
    x = ok(
        client.get(f"/v1/facts/{old['id']}/explanation", params={"version_id": old["version_id"]})
    )
    assert x["fact"]["version_id"] == old["version_id"] and x["fact"]["status"] == "superseded"
    assert [e["text"] for e in x["evidence"]] == ["So we're moving up to Sydney on 27 April."]
    assert x["evidence"][0]["speaker"] == "user" and x["evidence"][0]["session"] == "s04"
    assert x["assertion"]["op"] == "assert" and x["assertion"]["author_kind"] == "user"
    replaced = {(v["object"], (v["valid_to"] or "open")[:10]) for v in x["superseded_by"]}
    assert ("Melbourne", "2024-10-01") in replaced
    missing = client.get("/v1/facts/fa_nothing/explanation")
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    bad = client.get(f"/v1/facts/{old['id']}/explanation", params={"version_id": "fv_x"})
    assert bad.status_code == 404


def test_neighbourhood_is_bounded_and_says_what_it_left_out(client: TestClient) -> None:
    g = ok(client.get("/v1/neighbourhood", params={"entity": "Mira", "hops": 2}))
    names = {n["name"]: n["hops"] for n in g["nodes"]}
    assert names["Mira"] == 0 and names["Auckland"] == 1 and names["user"] == 1
    assert names["Sydney"] == 2 and not g["truncated"]
    ids = {n["id"] for n in g["nodes"]}
    assert all(e["subject_id"] in ids and e["object_id"] in ids for e in g["edges"])
    small = ok(client.get("/v1/neighbourhood", params={"entity": "user", "limit": 3}))
    assert len(small["nodes"]) == 3 and small["truncated"] and small["limit"] == 3
    # as believed in 2024-09, known then: Sydney, not Melbourne
    then = ok(
        client.get(
            "/v1/neighbourhood", params={"entity": "user", "valid_at": SEPT, "known_at": SEPT}
        )
    )
    lives = [e["object"] for e in then["edges"] if e["predicate"] == "lives_in"]
    assert lives == ["Sydney"]
    assert client.get("/v1/neighbourhood", params={"entity": "Mira", "hops": 3}).status_code == 422


def test_recall_explain_shows_hits_or_the_abstention_with_its_best_score(
    client: TestClient,
) -> None:
    hit = ok(client.get("/v1/recall:explain", params={"query": "where does Mira live?"}))
    assert not hit["abstained"] and hit["hits"] and hit["floor"] == pytest.approx(0.26)
    assert any("Auckland" in h["text"] for h in hit["hits"])
    assert all(h["score"] >= hit["floor"] * 0.4 for h in hit["hits"])
    none = ok(client.get("/v1/recall:explain", params={"query": "who is my dentist?"}))
    assert none["abstained"] and none["hits"] == []
    assert none["best_score"] is not None and none["best_score"] < none["floor"]
    assert none["near_misses"] and none["near_misses"][0]["score"] == none["best_score"]


# --- review ----------------------------------------------------------------------------------
def test_quarantine_lists_claims_with_why_and_evidence(
    client: TestClient, demo: tuple[Path, dict[str, str]]
) -> None:
    page = ok(client.get("/v1/quarantine"))
    by_id = {q["fact"]["id"]: q for q in page["items"]}
    assert set(by_id) == {demo[1]["chess"], demo[1]["band"]}
    chess = by_id[demo[1]["chess"]]
    assert chess["fact"]["status"] == "quarantined" and chess["fact"]["object"] == "chess"
    assert any("third party" in w for w in chess["why"])
    assert any("promotion needs 2 in 2" in w for w in chess["why"])
    assert [e["speaker"] for e in chess["evidence"]] == ["Ana"]
    assert page["next_offset"] is None
    one = ok(client.get("/v1/quarantine", params={"limit": 1}))
    assert len(one["items"]) == 1 and one["next_offset"] == 1


def test_promote_and_reject_are_recorded_as_assertions_with_reasons(
    client: TestClient, demo: tuple[Path, dict[str, str]]
) -> None:
    chess, band = demo[1]["chess"], demo[1]["band"]
    assert (
        ok(client.get("/v1/facts", params={"subject": "user", "predicate": "plays"}))["items"] == []
    )
    new = ok(client.post(f"/v1/facts/{chess}:promote", json={"reason": "the user said so"}), 201)
    assert new["object"] == "chess" and not new["quarantined"] and new["id"] != chess
    believed = ok(client.get("/v1/facts", params={"subject": "user", "predicate": "plays"}))
    assert [f["id"] for f in believed["items"]] == [new["id"]]
    x = ok(client.get(f"/v1/facts/{new['id']}/explanation"))
    assert x["assertion"]["origin"] == "review" and x["assertion"]["decided_by"] == "promote"
    assert x["assertion"]["decision_reason"] == "review: the user said so"
    assert [e["speaker"] for e in x["evidence"]] == ["Ana"]  # the claim's evidence, cited
    claim = ok(client.get(f"/v1/facts/{chess}/explanation"))["assertion"]
    assert claim["retract_reason"] == f"review: the user said so; promoted as {new['id']}"

    rejected = ok(client.post(f"/v1/facts/{band}:reject", json={"reason": "not a fact"}))
    assert (
        rejected["status"] == "retracted" and rejected["reason"] == "review: rejected: not a fact"
    )
    assert ok(client.get("/v1/quarantine"))["items"] == []
    hist = ok(client.get("/v1/history", params={"subject": "user", "predicate": "likes"}))
    assert {(f["object"], f["status"]) for f in hist} >= {("Radiohead", "retracted")}

    again = client.post(f"/v1/facts/{band}:promote", json={"reason": "changed my mind"})
    assert (again.status_code, again.json()["code"]) == (409, "not_quarantined")
    trusted = ok(client.get("/v1/facts", params={"subject": "user", "predicate": "likes"}))
    jazz = trusted["items"][0]["id"]
    not_q = client.post(f"/v1/facts/{jazz}:reject", json={"reason": "x"})
    assert (not_q.status_code, not_q.json()["code"]) == (409, "not_quarantined")
    empty = client.post(f"/v1/facts/{band}:reject", json={"reason": "  "})
    assert empty.status_code == 422


def test_promote_verb_refuses_what_is_not_a_standing_claim(tmp_path: Path, clock: Clock) -> None:
    with Memory.open(tmp_path / "m", clock=clock, extractor=None, embedder=None) as mem:
        trusted = mem.assert_fact("user", "likes", "tea")
        with pytest.raises(NotQuarantined) as e:
            mem.promote(trusted.id, reason="why not")
        assert e.value.code == "not_quarantined"
        claim = mem.assert_fact("user", "likes", "coffee", author_kind="agent")
        clock.tick()
        new = mem.promote(claim.id, reason="asked the user")
        assert [f.object for f in mem.facts("user", "likes")] == ["coffee", "tea"]
        versions = {(f.id, f.status) for f in mem.timeline("user", "likes").versions}
        assert versions == {(trusted.id, "current"), (claim.id, "retracted"), (new.id, "current")}
        before = mem.timeline("user", "likes", known_at=claim.recorded_at).versions
        assert {(f.id, f.status) for f in before} == {
            (trusted.id, "current"),
            (claim.id, "quarantined"),
        }
        with pytest.raises(NotQuarantined):
            mem.reject(claim.id, reason="too late: it was promoted")


def test_merges_list_and_unmerge_over_http(client: TestClient) -> None:
    merges = ok(client.get("/v1/merges"))
    assert [(m["loser"], m["winner"], m["unmerged_at"]) for m in merges] == [
        ("Dr Okafor", "Dr. Okafor", None)
    ]
    change = ok(client.post(f"/v1/merges/{merges[0]['id']}:unmerge"))
    assert change["action"] == "unmerged"
    assert ok(client.get("/v1/merges"))[0]["unmerged_at"] is not None
    sees = ok(client.get("/v1/facts", params={"subject": "Mira", "predicate": "sees"}))
    assert [f["object"] for f in sees["items"]] == ["Dr Okafor"]
    twice = client.post(f"/v1/merges/{merges[0]['id']}:unmerge")
    assert (twice.status_code, twice.json()["code"]) == (409, "conflict")


# --- access and the browser guard --------------------------------------------------------------
def test_access_and_write_rights_follow_the_token(
    tmp_path: Path, demo: tuple[Path, dict[str, str]]
) -> None:
    import shutil

    shutil.copytree(demo[0], tmp_path / "mem")
    tokens = tmp_path / "tokens.json"
    reader, _ = create_token(tokens, namespaces=["default"], rights="read")
    other, _ = create_token(tokens, namespaces=["other"])
    app = create_app(tmp_path / "mem", tokens_file=tokens, extractor=None, embedder=None)
    with TestClient(app, client=("10.0.0.5", 40000)) as c:
        as_reader = {"Authorization": f"Bearer {reader}"}
        a = ok(c.get("/v1/access", headers=as_reader))
        assert (a["auth"], a["namespaces"], a["can_write"]) == ("tokens", ["default"], False)
        r = c.post(f"/v1/facts/{demo[1]['chess']}:promote", headers=as_reader, json={"reason": "x"})
        assert (r.status_code, r.json()["code"]) == (403, "forbidden")
        assert c.delete(f"/v1/items/{demo[1]['chess']}", headers=as_reader).status_code == 403
        as_other = {"Authorization": f"Bearer {other}"}
        assert ok(c.get("/v1/access", headers=as_other))["namespaces"] == ["other"]
        assert ok(c.get("/v1/entities:search", params={"q": "mira"}, headers=as_other)) == []
        assert (
            c.get("/v1/timeline", params={"subject": "user"}, headers=as_other).status_code == 404
        )
        r = c.get("/v1/quarantine", params={"namespace": "default"}, headers=as_other)
        assert r.status_code == 403
        assert c.get("/v1/quarantine").status_code == 401
        # the pages hold no data: served to anyone the server serves, then they ask for a token
        assert c.get("/ui/").status_code == 200


def test_cross_site_writes_and_rebound_host_names_are_refused(client: TestClient) -> None:
    target = "/v1/facts/fa_x:retract"
    site = client.post(target, headers={"Sec-Fetch-Site": "cross-site"})
    assert (site.status_code, site.json()["code"]) == (403, "forbidden")
    other = client.post(
        target, headers={"Origin": "http://localhost:9999", "Host": "127.0.0.1:8000"}
    )
    assert other.status_code == 403
    same = client.post(
        target,
        headers={"Origin": "http://127.0.0.1:8000", "Host": "127.0.0.1:8000",
                 "Sec-Fetch-Site": "same-origin"},
    )  # fmt: skip
    assert (same.status_code, same.json()["code"]) == (404, "not_found")  # reached the engine
    # a cross-site read is refused too (recall counts uses), a link to a page is not
    here = {"Host": "127.0.0.1:8000"}
    read = client.get("/v1/stats", headers={**here, "Sec-Fetch-Site": "cross-site"})
    assert read.status_code == 403
    assert client.get("/ui/", headers={**here, "Sec-Fetch-Site": "cross-site"}).status_code == 200
    assert (
        client.get("/v1/stats", headers={**here, "Sec-Fetch-Site": "same-origin"}).status_code
        == 200
    )
    # without tokens a request must name this machine: no DNS rebinding
    rebound = client.get(
        "/v1/stats", headers={"Host": "evil.example:8000", "Sec-Fetch-Site": "same-origin"}
    )
    assert (rebound.status_code, rebound.json()["code"]) == (403, "forbidden")
    assert (
        client.get(
            "/ui/", headers={"Host": "evil.example:8000", "Sec-Fetch-Site": "none"}
        ).status_code
        == 403
    )
    local = {"Host": "localhost:8000", "Origin": "http://localhost:8000"}
    assert client.get("/v1/stats", headers=local).status_code == 200
    assert client.get("/v1/stats", headers={"Host": "evil.example"}).status_code == 403
    assert client.get("/v1/stats", headers={"Host": "[::1]:8000"}).status_code == 200
    assert client.get("/v1/stats").status_code == 200  # TestClient's "testserver"


def test_pages_and_docs_are_served_from_the_package_with_a_strict_policy(
    client: TestClient,
) -> None:
    for page in ("/ui/", "/ui/entity/user", "/ui/entity/a%2Fb", "/ui/graph/Mira", "/ui/recall",
                 "/ui/review", "/ui/episode/ep_1"):  # fmt: skip
        r = client.get(page)
        assert r.status_code == 200 and "<main" in r.text, page
        policy = r.headers["content-security-policy"]
        assert "default-src 'self'" in policy and "script-src 'self';" in policy
        assert "frame-ancestors 'none'" in policy and r.headers["x-frame-options"] == "DENY"
    assert client.get("/ui/nowhere").status_code == 404
    assert client.get("/", follow_redirects=False).headers["location"] == "/ui/"
    for page in ("/docs", "/redoc"):
        r = client.get(page)
        assert r.status_code == 200 and "connect-src 'self'" in r.headers["content-security-policy"]
        # every asset a page names is one of ours, and is served
        for src in re.findall(r'(?:src|href)="([^"]+)"', r.text):
            assert src.startswith("/"), src
            assert client.get(src).status_code == 200, src
    assert client.get("/openapi.json").status_code == 200
    js = client.get("/ui/static/app.js")
    assert js.status_code == 200 and "javascript" in js.headers["content-type"]
    assert js.headers["x-content-type-options"] == "nosniff"
    # the shell loads only files served here
    shell = (STATIC / "index.html").read_text(encoding="utf-8")
    assert not re.search(r'(?:src|href)="(?:https?:)?//', shell)


def test_every_vendored_file_keeps_its_licence() -> None:
    vendor = STATIC / "vendor"
    for lib in ("swagger-ui", "redoc"):
        assert (vendor / lib / "LICENSE").is_file(), lib
    manifest = (vendor / "VENDOR.md").read_text(encoding="utf-8")
    for f in vendor.rglob("*.js"):
        assert f.name in manifest, f
