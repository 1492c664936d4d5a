"""Who may call, on which namespace, and how much they may send.

Two ASGI middlewares run before routing, so a refused request is refused before
its body is read or validated:

- `Gate`: with no tokens file, only loopback clients are served (403 otherwise);
  with one, every `/v1/` request except `/v1/health` needs
  `Authorization: Bearer <token>` (401 otherwise). The token record found is
  left in `scope["state"]` for the endpoint dependencies.
- `BodyLimit`: a request body larger than the limit is a 413, whether it
  announces its length or streams it.

The dependencies `read_access` / `write_access` then settle the namespace (the
`namespace` query parameter, else the token's first namespace, else the
server's default), check it against the token (403) and check write rights.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from fastapi import Depends, Query, Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import _names as names
from .problems import Problem, send_problem
from .tokens import TokenRecord, TokenStore

if TYPE_CHECKING:
    from ..memory import Memory

STATE_TOKEN = "palimpsest_token"
PUBLIC_PATHS = frozenset({"/v1/health"})


def is_loopback(host: str | None) -> bool:
    if not host:
        return False
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return host == "localhost"


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"authorization":
            text: str = value.decode("latin-1")
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None


class Gate:
    """Loopback-only without tokens; bearer tokens on `/v1/` with them."""

    def __init__(self, app: ASGIApp, *, tokens: TokenStore | None) -> None:
        self.app = app
        self.tokens = tokens

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        if self.tokens is None:
            client = scope.get("client")
            if not is_loopback(client[0] if client else None):
                await send_problem(
                    send,
                    "forbidden",
                    "this server has no tokens file and serves loopback clients only",
                    instance=path,
                )
                return
        elif path.startswith("/v1/") and path not in PUBLIC_PATHS:
            presented = _bearer(scope)
            record = None if presented is None else self.tokens.verify(presented)
            if record is None:
                await send_problem(
                    send,
                    "unauthorized",
                    "a valid bearer token is required"
                    if presented is None
                    else "the bearer token is not valid",
                    instance=path,
                    headers={"WWW-Authenticate": 'Bearer realm="palimpsest"'},
                )
                return
            scope.setdefault("state", {})[STATE_TOKEN] = record
        await self.app(scope, receive, send)


class BodyLimit:
    """Refuse request bodies over `limit` bytes with a 413 problem (the body is buffered)."""

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        declared = None
        for key, value in scope.get("headers", ()):
            if key == b"content-length":
                declared = value.decode("latin-1").strip()
        if declared is not None:
            if not declared.isdigit():
                await send_problem(send, "bad_request", "invalid Content-Length", instance=path)
                return
            if int(declared) > self.limit:
                await self._too_large(send, path)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body: bytes = message.get("body", b"")
            size += len(body)
            if size > self.limit:
                await self._too_large(send, path)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        pending: list[Message] = [
            {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        ]

        async def replay() -> Message:
            if pending:
                return pending.pop()
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, send: Send, path: str) -> None:
        await send_problem(
            send,
            "too_large",
            f"the request body is larger than {self.limit} bytes",
            instance=path,
            headers={"Connection": "close"},
            status=413,
        )


# --- per-endpoint access -------------------------------------------------------------------------
@dataclass(frozen=True)
class Access:
    """What an endpoint works with: the memory, the namespace, and who is asking."""

    memory: Memory
    namespace: str
    token_id: str | None


NamespaceQuery = Annotated[
    str | None,
    Query(
        description="Namespace to read or write (default: the token's first namespace, "
        "else the server's default).",
        max_length=64,
        # documented, not enforced here: the engine refuses a bad name as `invalid_name`
        json_schema_extra={"pattern": r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"},
    ),
]


def _access(request: Request, namespace: str | None, *, write: bool) -> Access:
    server = request.app.state.palimpsest
    record: TokenRecord | None = request.scope.get("state", {}).get(STATE_TOKEN)
    if server.tokens is not None and record is None:  # pragma: no cover - Gate ran first
        raise Problem("unauthorized", "a valid bearer token is required")
    if namespace is None:
        namespace = record.default_namespace if record else server.default_namespace
    ns = names.check_namespace(namespace)
    if record is not None:
        if not record.allows(ns):
            raise Problem("forbidden", f"this token may not use namespace {ns!r}", namespace=ns)
        if write and not record.can_write:
            raise Problem("forbidden", "this token is read-only")
    return Access(memory=server.memory(), namespace=ns, token_id=record.id if record else None)


async def read_access(request: Request, namespace: NamespaceQuery = None) -> Access:
    return _access(request, namespace, write=False)


async def write_access(request: Request, namespace: NamespaceQuery = None) -> Access:
    return _access(request, namespace, write=True)


Reader = Annotated[Access, Depends(read_access)]
Writer = Annotated[Access, Depends(write_access)]
