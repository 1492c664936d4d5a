"""The dashboard in a real headless Chromium against a real `palimpsest serve` (uvicorn, a
tokens file, the demo memory, spaCy and MiniLM loaded as users get them).

Every tab records its requests: at its end the test fails if any went to a host other
than 127.0.0.1 or a page raised a JavaScript error. Chromium is Debian's
(`/usr/bin/chromium`, installed by `make setup`), driven through Playwright; no browser
is downloaded. Screenshots go to `$PALIMPSEST_SCREENSHOTS` when set (`make screenshots`
writes the ones in docs/), else to a temporary directory.
"""

# ruff: noqa: F811 - the shared fixtures are imported by name, then requested by name
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from palimpsest.api.tokens import create_token

from .ui_browser import (  # noqa: F401 - fixtures, requested by name
    SLOW_MS,
    OpenTab,
    Tab,
    axe_serious,
    believed,
    browser,
    open_tab,
    rows,
    serve,
    shots,
    stop,
)
from .ui_demo import build_demo_memory

SEPT = "2024-09-15T00:00:00Z"


@dataclass
class Server:
    base: str
    ids: dict[str, str]
    writer: str
    reader: str
    other: str
    log: Path

    def get(self, path: str, token: str | None = None, **params: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token or self.writer}"}
        return httpx.get(self.base + path, params=params, headers=headers, timeout=60.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("ui-browser")
    ids = build_demo_memory(root / "mem")
    tokens = root / "tokens.json"
    writer, _ = create_token(tokens, namespaces=["default"])
    reader, _ = create_token(tokens, namespaces=["default"], rights="read")
    other, _ = create_token(tokens, namespaces=["other"])
    log = root / "serve.log"
    proc, base = serve(root / "mem", log, "--tokens", str(tokens))
    try:
        yield Server(base, ids, writer, reader, other, log)
    finally:
        stop(proc)
    assert "Traceback" not in log.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def base(server: Server) -> str:
    return server.base


# --- signing in ----------------------------------------------------------------------------------
def test_serve_prints_the_dashboard_url(server: Server) -> None:
    assert f"dashboard at {server.base}/ui/" in server.log.read_text(encoding="utf-8")


def test_sign_in_keeps_the_token_in_the_tab_and_sends_it_on_every_request(
    open_tab: OpenTab, server: Server
) -> None:
    tab = open_tab()
    tab.go("/ui/entity/Mira")
    tab.page.wait_for_selector("form.signin")
    tab.page.fill("#token", "pal_not-a-token")
    tab.page.click("form.signin button[type=submit]")
    tab.page.wait_for_selector("form.signin .error")
    assert "not accepted" in tab.text("form.signin .error")
    tab.page.fill("#token", server.writer)
    tab.page.click("form.signin button[type=submit]")
    tab.page.wait_for_selector("#timelines section[data-predicate=lives_in]")
    assert tab.text("h1") == "Mira"
    api = [r for r in tab.requests if "/v1/" in r.url and not r.url.endswith("/v1/health")]
    accepted = [r for r in api if r.headers.get("authorization") == f"Bearer {server.writer}"]
    assert len(accepted) >= 3
    assert all(r.headers.get("authorization", "").startswith("Bearer pal_") for r in api)
    assert tab.context.cookies() == []  # nothing ambient for another site to borrow
    stored = tab.page.evaluate("() => [sessionStorage.length, localStorage.length]")
    assert stored == [1, 0]
    tab.page.click("text=Sign out")
    tab.page.wait_for_selector("form.signin")
    assert tab.page.evaluate("() => sessionStorage.length") == 0


# --- the entity page -----------------------------------------------------------------------------
def test_entity_page_shows_timelines_with_every_version(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/entity/user")
    tab.page.wait_for_selector("#timelines section[data-predicate=lives_in] li.row")
    lives = rows(tab, "lives_in")
    assert ("Sydney", "current", "2024-10-01 → open") in lives
    assert ("Sydney", "superseded", "2024-04-27 → open") in lives
    assert ("Melbourne", "ended", "2024-04-27 → 2024-10-01") in lives
    assert ("cello", "ended", "2024-05-20 08:30Z → 2024-12-25") in rows(tab, "plays")
    # statuses read without colour: each row names its status in words, with an icon
    for status in ("current", "ended", "superseded"):
        assert tab.page.locator(f"#timelines .badge.s-{status}").first.inner_text().endswith(status)
    assert believed(tab, "lives_in") == ["Sydney"]
    tab.go("/ui/entity/Mira?valid_at=2025-04-16T00:00:00Z")  # during her April visit
    tab.page.wait_for_selector("#incoming li")
    assert "sibling" in tab.text("#incoming")  # user sibling Mira points at her
    assert believed(tab, "staying_with") == ["user"]


def test_known_at_slider_replays_the_sydney_melbourne_story(
    open_tab: OpenTab, server: Server
) -> None:
    tab = open_tab(server.writer)
    tab.go(f"/ui/entity/user?valid_at={SEPT}&known_at={SEPT}")
    tab.page.wait_for_selector("#believed li[data-predicate=lives_in]")
    # as known in September 2024: the move to Sydney on 27 April stood
    assert believed(tab, "lives_in") == ["Sydney"]
    assert ("Sydney", "current", "2024-04-27 → open") in rows(tab, "lives_in")
    assert not any(w == "2024-04-27 → 2024-10-01" for _, _, w in rows(tab, "lives_in"))
    slider = tab.page.locator("#known-at")
    slider.focus()
    tab.page.keyboard.press("End")  # to the latest change: the November correction is known
    tab.page.wait_for_function(
        "() => [...document.querySelectorAll('#believed li[data-predicate=lives_in]')]"
        ".map(e => e.dataset.object).join() === 'Melbourne'"
    )
    lives = rows(tab, "lives_in")
    assert ("Melbourne", "current", "2024-04-27 → 2024-10-01") in lives  # at valid 2024-09-15
    assert ("Sydney", "superseded", "2024-04-27 → open") in lives
    assert "known_at" not in tab.page.url
    tab.page.keyboard.press("Home")  # the first thing ever recorded: Melbourne since 2019
    tab.page.wait_for_function(
        "() => document.querySelectorAll('#timelines section[data-predicate=lives_in] li.row')"
        ".length === 1"
    )
    assert rows(tab, "lives_in") == [("Melbourne", "current", "2019-01-01 → open")]
    assert "known_at=2023-03-04T09%3A15%3A30Z" in tab.page.url
    tab.page.reload()  # the URL alone brings the same view back: it can be bookmarked
    tab.page.wait_for_selector("#timelines section[data-predicate=lives_in] li.row")
    assert rows(tab, "lives_in") == [("Melbourne", "current", "2019-01-01 → open")]
    assert tab.page.locator("#known-at").input_value() == "0"


def test_a_version_shows_its_evidence_and_what_replaced_it(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/entity/user")
    tab.page.wait_for_selector("#timelines section[data-predicate=lives_in] li.row")
    lives = "#timelines section[data-predicate=lives_in]"
    tab.page.click(f"{lives} li.row[data-status=superseded][data-object=Sydney] button.bar")
    tab.page.wait_for_selector("#detail ul.evidence")
    tab.page.evaluate("() => window.scrollTo(0, 0)")
    top = {"x": 0, "y": 0, "width": 1280, "height": 1400}
    tab.page.screenshot(path=str(shots / "ui-entity.png"), full_page=True, clip=top)
    detail = tab.text("#detail")
    assert "So we're moving up to Sydney on 27 April." in detail
    assert "Speaker" in detail and "user" in detail and "2024-02-10 11:02Z" in detail
    replaced = tab.text("#detail ul.plain")
    assert "Melbourne" in replaced and "2024-04-27 → 2024-10-01" in replaced


def test_keyboard_reaches_a_version_and_opens_it(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/entity/Mira")
    tab.page.wait_for_selector("#timelines li.row button.bar")
    # from the top of the page, as after loading it
    tab.page.evaluate(
        "() => { const b = document.body; b.tabIndex = -1; b.focus();"
        " b.removeAttribute('tabindex'); }"
    )
    tab.page.keyboard.press("Tab")
    assert tab.page.evaluate("() => document.activeElement.textContent") == "Skip to content"
    tab.page.keyboard.press("Enter")
    assert tab.page.evaluate("() => document.activeElement.id") == "main"
    for _ in range(80):
        tab.page.keyboard.press("Tab")
        if tab.page.evaluate("() => document.activeElement.classList.contains('bar')"):
            break
    else:
        raise AssertionError("Tab never reached a version bar")
    label = tab.page.evaluate("() => document.activeElement.getAttribute('aria-label')")
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_selector("#detail h3")
    assert tab.page.evaluate("() => document.activeElement.id") == "detail-h"
    assert label.split(",")[0] in tab.text("#detail .statement")


# --- graph, recall -------------------------------------------------------------------------------
def test_graph_view_is_bounded_and_links_to_entity_pages(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/graph/Mira?hops=2")
    tab.page.wait_for_selector("svg.graph a.node")
    names = tab.page.eval_on_selector_all(
        "svg.graph a.node text", "els => els.map(e => e.textContent)"
    )
    assert {"Mira", "Auckland", "user", "Sydney"} <= set(names)
    assert "within 2 hop(s), at most 50 nodes" in tab.text("#graph-count")
    tab.page.screenshot(path=str(shots / "ui-graph.png"))
    tab.go("/ui/graph/user?limit=4")
    tab.page.wait_for_selector("#graph-count")
    assert tab.page.locator("svg.graph a.node").count() == 4
    assert "More lay within reach" in tab.text("#graph-count")
    tab.page.click('svg.graph a.node[aria-label^="user"]')
    tab.page.wait_for_selector("#timelines li.row")
    assert tab.text("h1") == "user" and tab.page.url.endswith("/ui/entity/user")


def test_recall_explorer_shows_a_hit_and_an_abstention(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/recall?q=where+does+my+sister+Mira+live%3F")
    tab.page.wait_for_selector("ol.hits li.hit", timeout=SLOW_MS)
    hits = tab.page.locator("ol.hits li.hit")
    texts = hits.all_inner_texts()
    assert any("My sister Mira lives in Auckland" in t for t in texts)
    first = hits.first
    assert float(first.get_attribute("data-score") or 0) >= 0.26
    assert "bm25" in first.inner_text() and "dense" in first.inner_text()
    assert "Speaker" in first.inner_text()
    tab.page.screenshot(path=str(shots / "ui-recall.png"), full_page=False)
    tab.page.fill("#rq", "who is my dentist?")
    tab.page.click("form button[type=submit]")
    tab.page.wait_for_selector("#abstained", timeout=SLOW_MS)
    said = tab.text("#abstained")
    assert "abstained" in said and "The best it saw scored 0." in said
    assert tab.page.locator("li.hit.missed").count() >= 1


# --- review, in the order a person would: look, then decide --------------------------------------
def test_review_lists_quarantine_reports_merges_and_changes(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/review?since=2025-01-01T00:00:00Z")
    tab.page.wait_for_selector("#quarantine-list")
    waiting = tab.text("#quarantine-list")
    assert "chess" in waiting and "Radiohead" in waiting
    assert "said by a third party" in waiting and "promotion needs 2 in 2" in waiting
    assert "Ana told me the user plays chess every Sunday." in waiting
    tab.page.click("#report-list summary")
    reports = tab.text("#report-list")
    assert "1 merged" in reports and "Melbourne wins" in reports
    assert "Dr Okafor" in tab.text("#merges") and "Unmerge" in tab.text("#merges")
    tab.page.wait_for_selector("#changes-out .change-group")
    assert "learned" in tab.text("#changes-out") and "analytics lead" in tab.text("#changes-out")
    tab.page.evaluate("() => window.scrollTo(0, 0)")
    top = {"x": 0, "y": 0, "width": 1280, "height": 1400}
    tab.page.screenshot(path=str(shots / "ui-review.png"), full_page=True, clip=top)


def test_promote_and_reject_change_what_the_api_returns(open_tab: OpenTab, server: Server) -> None:
    chess, band = server.ids["chess"], server.ids["band"]
    assert server.get("/v1/facts", subject="user", predicate="plays").json()["items"] == []
    tab = open_tab(server.writer)
    tab.go("/ui/review")
    tab.page.wait_for_selector(f'li[data-fact="{chess}"]')
    item = tab.page.locator(f'li[data-fact="{chess}"]')
    item.get_by_role("button", name="Promote").click()  # no reason yet: refused, nothing sent
    assert "Say why first" in tab.text("#status")
    item.get_by_label("Reason").fill("the user confirmed it on the phone")
    item.get_by_role("button", name="Promote").click()
    tab.page.wait_for_selector(f'li[data-fact="{chess}"]', state="detached")
    plays = server.get("/v1/facts", subject="user", predicate="plays").json()["items"]
    assert [f["object"] for f in plays] == ["chess"]
    why = server.get(f"/v1/facts/{plays[0]['id']}/explanation").json()["assertion"]
    assert why["decision_reason"] == "review: the user confirmed it on the phone"
    item = tab.page.locator(f'li[data-fact="{band}"]')
    item.get_by_label("Reason").fill("a search result, not the user's taste")
    item.get_by_role("button", name="Reject").click()
    tab.page.wait_for_selector("#quarantine-empty")
    assert server.get("/v1/quarantine").json()["items"] == []
    likes = server.get("/v1/history", subject="user", predicate="likes").json()
    assert ("Radiohead", "retracted") in {(f["object"], f["status"]) for f in likes}


def test_unmerge_from_the_review_page(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab(server.writer)
    tab.go("/ui/review")
    tab.page.wait_for_selector("#merges table")
    tab.page.click("#merges button:has-text('Unmerge')")
    tab.page.wait_for_selector("dialog[open]")
    tab.page.click("dialog[open] button[type=submit]")
    tab.page.wait_for_selector("#merges td:has-text('unmerged')")
    merges = server.get("/v1/merges").json()
    assert merges[0]["unmerged_at"] is not None
    sees = server.get("/v1/facts", subject="Mira", predicate="sees").json()["items"]
    assert [f["object"] for f in sees] == ["Dr Okafor"]


# --- who sees what -------------------------------------------------------------------------------
def test_a_token_for_another_namespace_sees_nothing(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab(server.other)
    tab.go("/ui/entity/Mira")
    tab.page.wait_for_selector("#not-found")
    assert "namespace other" in tab.text("#not-found")
    tab.go("/ui/")
    tab.page.wait_for_selector("#all-h")
    assert tab.text("#counts-h") == "Namespace other"
    assert "This namespace holds no entities." in tab.text("main")
    tab.page.fill("#q", "mira")
    tab.page.press("#q", "Enter")
    tab.page.wait_for_selector("#results p")
    assert "No entity" in tab.text("#results")
    assert tab.page.eval_on_selector_all("#ns-select option", "o => o.map(x => x.value)") == [
        "other"
    ]
    tab.go("/ui/entity/Mira?ns=default")  # asking for another namespace by hand: refused
    tab.page.wait_for_selector("main .error")
    assert "[forbidden]" in tab.text("main .error")
    assert "Auckland" not in tab.text("main")


def test_a_read_only_token_is_offered_no_writes(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab(server.reader)
    tab.go("/ui/entity/user")
    tab.page.wait_for_selector("#timelines li.row button.bar")
    assert tab.text(".rights") == "read only"
    tab.page.locator("#timelines li.row button.bar").first.click()
    tab.page.wait_for_selector("#detail h3")
    assert tab.page.locator("#detail button.danger").count() == 0
    tab.go("/ui/review")
    tab.page.wait_for_selector("#merges h2")
    assert tab.page.get_by_role("button", name="Promote").count() == 0
    assert tab.page.get_by_role("button", name=re.compile("Unmerge")).count() == 0


# --- forget --------------------------------------------------------------------------------------
def test_erase_a_fact_and_an_episode_from_their_pages(
    open_tab: OpenTab, server: Server, shots: Path
) -> None:
    likes = server.get("/v1/facts", subject="user", predicate="likes").json()["items"]
    jazz = next(f for f in likes if f["object"] == "jazz")
    tab = open_tab(server.writer)
    tab.go("/ui/entity/user")
    tab.page.wait_for_selector("#timelines li.row")
    tab.page.click("#timelines section[data-predicate=likes] li.row[data-object=jazz] button.bar")
    tab.page.click("#detail button:has-text('Erase this fact')")
    dialog = tab.page.locator("dialog[open]")
    dialog.wait_for()
    assert "Erase is the privacy verb" in dialog.inner_text()
    assert "tombstone" in dialog.inner_text()
    dialog.get_by_label(re.compile("Reason")).fill("the user asked to forget it")
    tab.page.screenshot(path=str(shots / "ui-forget.png"), full_page=False)
    dialog.get_by_role("button", name="Erase for good").click()
    tab.page.wait_for_function(
        "() => !document.querySelector("
        "'#timelines section[data-predicate=likes] li.row[data-object=jazz]')"
    )
    now = server.get("/v1/facts", subject="user", predicate="likes").json()["items"]
    assert "jazz" not in [f["object"] for f in now]
    hist = server.get("/v1/history", subject="user", predicate="likes").json()
    assert {"id": jazz["id"], "status": "erased"}.items() <= next(
        f for f in hist if f["id"] == jazz["id"]
    ).items()
    assert "jazz" not in str(hist)

    prefers = server.get("/v1/facts", subject="user", predicate="prefers").json()["items"]
    episode = prefers[0]["evidence"][0]
    tab.go(f"/ui/episode/{episode}")
    tab.page.wait_for_selector("#erase-episode")
    assert "Oat flat white" in tab.text("#episode")
    tab.page.click("#erase-episode")
    tab.page.locator("dialog[open]").get_by_role("button", name="Erase for good").click()
    tab.page.wait_for_selector("#erased")
    gone = server.get(f"/v1/episodes/{episode}")
    assert gone.status_code == 404
    assert server.get("/v1/facts", subject="user", predicate="prefers").json()["items"] == []


# --- accessibility and the docs ------------------------------------------------------------------
PAGES = {
    "sign-in": ("/ui/", "form.signin"),
    "home": ("/ui/?q=mi", "#results ul"),
    "entity": ("/ui/entity/user", "#timelines li.row"),
    "graph": ("/ui/graph/Mira?hops=2", "svg.graph a.node"),
    "recall": ("/ui/recall?q=where+does+Mira+live%3F", "#recall-out h2"),
    "abstain": ("/ui/recall?q=who+is+my+dentist%3F", "#recall-out h2"),
    "review": ("/ui/review", "#changes-out .change-group"),
    "not-found": ("/ui/entity/nobody", "#not-found"),
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_pages_have_no_serious_accessibility_violations(
    open_tab: OpenTab, server: Server, name: str
) -> None:
    path, ready = PAGES[name]
    # axe is injected as an inline script, which the pages' policy forbids: this tab only
    tab = open_tab(None if name == "sign-in" else server.writer, bypass_csp=True)
    tab.go(path)
    tab.page.wait_for_selector(ready, timeout=SLOW_MS)
    if name == "entity":  # with a version's details open, and the erase dialog over it
        tab.page.locator("#timelines li.row button.bar").first.click()
        tab.page.wait_for_selector("#detail h3")
        assert axe_serious(tab) == []
        tab.page.click("#detail button.danger")
        tab.page.wait_for_selector("dialog[open]")
    assert axe_serious(tab) == []


def test_the_accessibility_check_finds_what_it_is_for(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab(server.writer, bypass_csp=True)
    tab.go("/ui/")
    tab.page.wait_for_selector("#all-h")
    tab.page.evaluate(
        "() => document.querySelector('main').append(Object.assign("
        "document.createElement('button'), {className: 'bar'}))"
    )  # a button with no name
    assert "button-name" in {v["id"] for v in axe_serious(tab)}


def test_docs_and_redoc_render_from_this_server_alone(open_tab: OpenTab, server: Server) -> None:
    tab = open_tab()
    tab.go("/docs")
    tab.page.wait_for_selector(".swagger-ui .opblock-summary-path")
    paths = tab.page.eval_on_selector_all(
        ".opblock-summary-path", "els => els.map(e => e.textContent)"
    )
    assert "/v1/timeline" in " ".join(paths).replace("\u200b", "")
    tab.go("/redoc")
    tab.page.wait_for_function(
        "() => document.body.innerText.includes('/v1/neighbourhood')", timeout=SLOW_MS
    )
    assert "Palimpsest" in tab.page.title()
