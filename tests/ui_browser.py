"""What the browser tests share: Debian's Chromium through Playwright, tabs that record
every request, a real `palimpsest serve`, and the axe-core check.

    >>> tab = open_tab(token)        # a fixture: a fresh context and page
    >>> tab.go("/ui/entity/user"); rows(tab, "lives_in")

A tab's requests are checked when its test ends: any to a host other than
127.0.0.1, or any JavaScript error on the page, fails the test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .test_api_serve import free_port, wait_healthy

playwright_api = pytest.importorskip("playwright.sync_api")

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
SLOW_MS = 180_000  # the first recall loads MiniLM in the server

if not Path(CHROMIUM).is_file():  # pragma: no cover - `make setup` installs it
    raise RuntimeError(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium")


def serve(mem: Path, log: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["HF_HUB_OFFLINE"] = "1"
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(mem), "serve", "--host",
            "127.0.0.1", "--port", str(port), "--no-consolidate", *extra]  # fmt: skip
    out = log.open("wb")
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    wait_healthy(proc, base)  # type: ignore[arg-type]
    return proc, base


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError("server did not stop on SIGINT") from None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = os.environ.get("PALIMPSEST_SCREENSHOTS")
    path = Path(where) if where else tmp_path_factory.mktemp("shots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Tab:
    """One browser context and page, recording every request and every page error."""

    page: Any
    context: Any
    base: str
    requests: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def go(self, path: str) -> None:
        self.page.goto(self.base + path)

    def text(self, selector: str) -> str:
        return str(self.page.locator(selector).inner_text())

    def outside(self) -> list[str]:
        """Requests to any host but 127.0.0.1 (blob: and data: URLs are local)."""
        bad = []
        for r in self.requests:
            url = r.url[5:] if r.url.startswith("blob:") else r.url
            if url.startswith("data:"):
                continue
            if urlsplit(url).hostname != "127.0.0.1":
                bad.append(r.url)
        return bad


OpenTab = Callable[..., Tab]


@pytest.fixture
def open_tab(browser: Any, base: str) -> Iterator[OpenTab]:
    tabs: list[Tab] = []

    def make(token: str | None = None, *, url: str | None = None, bypass_csp: bool = False) -> Tab:
        context = browser.new_context(
            viewport={"width": 1280, "height": 900}, bypass_csp=bypass_csp
        )
        if token is not None:
            context.add_init_script(f"sessionStorage.setItem('palimpsest.token', {token!r})")
        page = context.new_page()
        page.set_default_timeout(60_000)
        tab = Tab(page, context, url or base)
        page.on("request", lambda r: tab.requests.append(r))
        page.on("pageerror", lambda e: tab.errors.append(str(e)))
        page.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" else None)
        tabs.append(tab)
        return tab

    yield make
    for tab in tabs:
        outside = tab.outside()
        errors = [e for e in tab.errors if "status of 40" not in e]  # expected refusals
        tab.context.close()
        assert not outside, f"requests left 127.0.0.1: {outside}"
        assert not errors, f"page errors: {errors}"


def axe_serious(tab: Tab) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it stands."""
    tab.page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = tab.page.evaluate(
        """async () => {
            const r = await axe.run(document, {resultTypes: ["violations"]});
            return r.violations.filter(v => ["serious", "critical"].includes(v.impact))
              .map(v => ({id: v.id, impact: v.impact, help: v.help,
                          nodes: v.nodes.slice(0, 5).map(n => n.target.join(" "))}));
        }"""
    )
    return found


def rows(tab: Tab, predicate: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = tab.page.eval_on_selector_all(
        f'#timelines section[data-predicate="{predicate}"] li.row',
        "els => els.map(e => [e.dataset.object, e.dataset.status, e.dataset.window])",
    )
    return [tuple(r) for r in out]  # type: ignore[misc]


def believed(tab: Tab, predicate: str) -> list[str]:
    out: list[str] = tab.page.eval_on_selector_all(
        f'#believed li[data-predicate="{predicate}"]', "els => els.map(e => e.dataset.object)"
    )
    return out
