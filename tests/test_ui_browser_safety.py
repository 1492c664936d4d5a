"""Without a tokens file, in a real Chromium: loopback only, no sign-in, and no page of
another site can act through the browser (a forged form POST, DNS rebinding).

A `palimpsest serve` with no tokens file on a small memory; the attacker's page is
served by a second HTTP server on this machine, under another origin (localhost).
"""

# ruff: noqa: F811 - the shared fixtures are imported by name, then requested by name
from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from palimpsest import Memory

from .ui_browser import (  # noqa: F401 - fixtures, requested by name
    CHROMIUM,
    FLAGS,
    OpenTab,
    browser,
    open_tab,
    rows,
    serve,
    stop,
)


@pytest.fixture(scope="module")
def loopback(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    root = tmp_path_factory.mktemp("ui-loopback")
    with Memory.open(root / "mem", extractor=None, embedder=None) as mem:
        fact = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    proc, base = serve(root / "mem", root / "serve.log")
    try:
        yield base, fact.id, root
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def base(loopback: tuple[str, str, Path]) -> str:
    return loopback[0]


def test_without_tokens_the_dashboard_needs_no_sign_in(open_tab: OpenTab) -> None:
    tab = open_tab()
    tab.go("/ui/entity/user")
    tab.page.wait_for_selector("#timelines li.row")
    assert rows(tab, "lives_in") == [("Sydney", "current", "2024-06-01 → open")]
    assert tab.page.locator("form.signin").count() == 0


def test_a_page_on_another_site_cannot_change_anything(
    open_tab: OpenTab, loopback: tuple[str, str, Path]
) -> None:
    base, fact, root = loopback
    target = f"{base}/v1/facts/{fact}:retract"
    site = root / "site"
    site.mkdir(exist_ok=True)
    # a form POST and a no-cors fetch are "simple" requests: a browser sends them
    # cross-site without asking first, and without tokens no credential is needed
    (site / "attack.html").write_text(
        f'<!doctype html><title>attack</title><form id="f" method="post" action="{target}">'
        '<input name="reason" value="forged"></form><script>'
        f'fetch("{target}", {{method: "POST", mode: "no-cors", body: "{{}}"}})'
        '.finally(() => document.getElementById("f").submit());</script>',
        encoding="utf-8",
    )
    handler = partial(SimpleHTTPRequestHandler, directory=str(site))
    other = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        tab = open_tab()
        # another origin (localhost, another port) on this same machine
        tab.page.goto(f"http://localhost:{other.server_address[1]}/attack.html")
        tab.page.wait_for_url(target)
        assert "may not use this API" in tab.page.inner_text("body")
        tab.requests.clear()  # localhost is this machine, but not 127.0.0.1 by name
    finally:
        other.shutdown()
        thread.join(timeout=10)
    r = httpx.get(f"{base}/v1/facts", params={"subject": "user"}, timeout=30.0)
    assert [f["object"] for f in r.json()["items"]] == ["Sydney"]  # not retracted
    assert r.json()["items"][0]["status"] == "current"


def test_a_rebound_host_name_is_refused(browser: Any, loopback: tuple[str, str, Path]) -> None:
    base, _, _ = loopback
    port = urlsplit(base).port
    # DNS rebinding: a name of the attacker's that now resolves to this machine
    rule = "--host-resolver-rules=MAP rebound.test 127.0.0.1"
    b = browser.browser_type.launch(executable_path=CHROMIUM, args=[*FLAGS, rule])
    try:
        page = b.new_page()
        page.goto(f"http://rebound.test:{port}/ui/")
        assert "serves loopback clients only" in page.inner_text("body")
        page.goto(f"{base}/ui/")  # by its own name it is served
        page.wait_for_selector("#main h1")
    finally:
        b.close()
