"""What a browser needs on top of `security`: no cross-site writes, no DNS rebinding, and
pages that can load nothing from outside.

    app.add_middleware(BrowserGuard, loopback_only=tokens is None)

The API's credentials are never ambient (no cookies; a bearer token the page
holds), so a page on another site cannot borrow them. Without a tokens file,
though, being on this machine is the credential, and a page on another site
could still send a "simple" cross-origin request (a form POST) or, through DNS
rebinding, read answers under its own host name. So:

- a browser request to `/v1/` from a page of another origin, and an unsafe
  method (anything but GET, HEAD, OPTIONS) from one anywhere, is refused
  (`Sec-Fetch-Site: cross-site | same-site`, or an `Origin` that is not this
  host) before any endpoint runs (a link from elsewhere to a `/ui/` page still
  opens it);
- without tokens, every request must name this machine in its Host header: a
  loopback address (`127.0.0.1`, `[::1]`), `localhost`, or a name without a dot.
  A rebinding attack names a domain its author controls (it has a dot), and
  browsers send it no Sec-Fetch headers over plain http, so only the Host tells;
- the dashboard's pages and the API docs carry a Content-Security-Policy that
  lets them fetch, run and show only what this server serves, and may not be
  framed. Every response says `nosniff`.

Clients that are not browsers (the CLI, httpx, curl) send none of these headers
and are not affected.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .problems import send_problem

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PAGE_PREFIXES = ("/ui", "/docs", "/redoc")

# the dashboard: ES modules and CSS of its own, JSON from /v1 on this origin
UI_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:;"
    " connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none';"
    " form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI and Redoc set inline styles and Redoc starts a worker from a blob
DOCS_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline';"
    " img-src 'self' data:; connect-src 'self'; font-src 'self' data:;"
    " worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self';"
    " frame-ancestors 'none'"
)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            text: str = value.decode("latin-1")
            return text
    return None


def local_host(host: str | None) -> bool:
    """Whether a Host header names this machine: `127.0.0.1:8000`, `[::1]`, `localhost`,
    `x.localhost`, or a single label (`testserver`); no request without one is rebound."""
    if not host:
        return True
    try:
        name = urlsplit(f"//{host}").hostname or ""
    except ValueError:
        return False
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return "." not in name and ":" not in name


def same_origin(origin: str, host: str | None) -> bool:
    """Whether an Origin header names the host the request was sent to."""
    if not host or origin == "null":
        return False
    return urlsplit(origin).netloc.lower() == host.lower()


class BrowserGuard:
    """Refuse cross-site writes and (without tokens) rebound host names; secure pages."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool) -> None:
        self.app = app
        self.loopback_only = loopback_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        host = _header(scope, b"host")
        origin = _header(scope, b"origin")
        site = _header(scope, b"sec-fetch-site")
        if self.loopback_only and not local_host(host):
            await send_problem(
                send,
                "forbidden",
                "this server has no tokens file and serves loopback clients only: open it"
                " as http://127.0.0.1:<port>/ui/",
                instance=path,
            )
            return
        foreign = site in ("cross-site", "same-site") or (
            origin is not None and not same_origin(origin, host)
        )
        if foreign and (path.startswith("/v1/") or scope.get("method") not in SAFE_METHODS):
            await send_problem(
                send,
                "forbidden",
                "a page of another origin may not use this API through the browser",
                instance=path,
            )
            return
        policy = None
        if path.startswith(PAGE_PREFIXES) or path == "/":
            policy = UI_POLICY if path.startswith("/ui") or path == "/" else DOCS_POLICY

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-content-type-options", b"nosniff"))
                if policy is not None:
                    headers += [
                        (b"content-security-policy", policy.encode()),
                        (b"x-frame-options", b"DENY"),
                        (b"referrer-policy", b"no-referrer"),
                        (b"cross-origin-opener-policy", b"same-origin"),
                    ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_secured)
