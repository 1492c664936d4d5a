"""One error format for the whole server: RFC 9457 problem details.

    HTTP/1.1 422 Unprocessable Content
    Content-Type: application/problem+json

    {"type": "urn:palimpsest:problem:naive_datetime", "title": "Naive datetime",
     "status": 422, "detail": "valid_at: naive datetime ...", "code": "naive_datetime",
     "instance": "/v1/facts", "details": {"field": "valid_at"}}

`code` is the engine's stable `PalimpsestError.code` (or one of the server's own
codes below); clients switch on it, never on `detail`. `STATUS` is the one table
from codes to HTTP statuses: an engine error whose code is not in it is looked
up by its base classes' codes (a `schema_error` is a `store_error`), and anything
still unknown is a 500 with code `internal` and no internals in the body.
`RETRY_AFTER` names the codes worth retrying: their problems carry a `Retry-After`
header (a store that cannot be reached: 503 `store_unavailable`, nothing written).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse
from starlette.types import Send

from ..errors import PalimpsestError

log = logging.getLogger("palimpsest.api")

PROBLEM_JSON = "application/problem+json"
TYPE_PREFIX = "urn:palimpsest:problem:"

# The one table: error code -> HTTP status. Engine codes first, then the server's own.
STATUS: dict[str, int] = {
    # engine (palimpsest.errors)
    "invalid_input": 422,
    "naive_datetime": 422,
    "invalid_time": 422,
    "invalid_window": 422,
    "invalid_name": 422,
    "unknown_predicate": 422,
    "idempotency_key_reused": 422,
    # a value over its bound (every bound is in the schema, so this is a schema violation,
    # like any other 422); only a request body over the server's byte limit is HTTP's own
    # 413 Content Too Large, answered by `security.BodyLimit` with the same code
    "too_large": 422,
    "not_found": 404,
    "conflict": 409,
    "erased": 409,
    "not_quarantined": 409,
    "consolidation_taken": 409,
    "lease_lost": 409,
    "memory_locked": 423,
    "owner_unavailable": 503,
    "owner_lost": 503,
    "closed": 503,
    "store_error": 503,
    "store_unavailable": 503,
    "embedder_mismatch": 503,
    "palimpsest_error": 500,
    # server
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "method_not_allowed": 405,
    "not_acceptable": 406,
    "unsupported_media_type": 415,
    "internal": 500,
}

# Codes after which the same request may well succeed, and how many seconds to say to wait
# (`Retry-After`) when the error does not say (`details["retry_after"]`)
RETRY_AFTER: dict[str, int] = {"store_unavailable": 5}

# HTTP statuses raised by the framework itself (routing, body parsing) -> code
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    422: "invalid_input",
}


class Problem(Exception):
    """A problem the server (not the engine) reports: auth, limits."""

    def __init__(
        self,
        code: str,
        detail: str,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        **details: Any,
    ) -> None:
        super().__init__(detail)
        self.code = code
        self.status = status if status is not None else STATUS.get(code, 500)
        self.detail = detail
        self.headers = dict(headers or {})
        self.details = details


def status_for(error: PalimpsestError) -> int:
    """The HTTP status of an engine error: its code, else its nearest base class's code."""
    for cls in type(error).__mro__:
        code = getattr(cls, "code", None)
        if isinstance(code, str) and code in STATUS:
            return STATUS[code]
    return 500


def _title(code: str, status: int) -> str:
    if code in ("internal", "palimpsest_error"):
        return "Internal error"
    return code.replace("_", " ").capitalize() if code else HTTPStatus(status).phrase


def problem_body(
    code: str,
    status: int,
    detail: str,
    *,
    instance: str | None = None,
    details: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": TYPE_PREFIX + code,
        "title": _title(code, status),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if instance:
        body["instance"] = instance
    if details:
        body["details"] = jsonable_encoder(dict(details))
    return body


def problem_response(
    code: str,
    status: int,
    detail: str,
    *,
    instance: str | None = None,
    details: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        problem_body(code, status, detail, instance=instance, details=details),
        status_code=status,
        media_type=PROBLEM_JSON,
        headers=dict(headers or {}),
    )


async def send_problem(
    send: Send,
    code: str,
    detail: str,
    *,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    status: int | None = None,
) -> None:
    """A problem response straight from an ASGI middleware (before routing)."""
    status = STATUS[code] if status is None else status
    raw = json.dumps(problem_body(code, status, detail, instance=instance)).encode()
    head = [
        (b"content-type", PROBLEM_JSON.encode()),
        (b"content-length", str(len(raw)).encode()),
    ]
    head += [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": raw})


# --- exception handlers --------------------------------------------------------------------
def retry_after(error: PalimpsestError) -> int | None:
    """Seconds a client should wait before trying again, for the codes where that helps."""
    if error.code not in RETRY_AFTER:
        return None
    said = error.details.get("retry_after")
    ok = isinstance(said, int) and not isinstance(said, bool) and said >= 0
    return said if ok else RETRY_AFTER[error.code]


def _engine_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PalimpsestError)
    status = status_for(exc)
    wait = retry_after(exc)
    if exc.code == "store_unavailable":  # the database's outage, not a bug here: no traceback
        log.warning("store unavailable on %s: %s", request.url.path, exc.message)
    elif status >= 500 and exc.code not in ("closed", "store_error", "schema_error"):
        log.error("engine error %s on %s", exc.code, request.url.path, exc_info=exc)
    return problem_response(
        exc.code,
        status,
        exc.message,
        instance=request.url.path,
        details=exc.details,
        headers=None if wait is None else {"Retry-After": str(wait)},
    )


def _server_problem(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, Problem)
    return problem_response(
        exc.code,
        exc.status,
        exc.detail,
        instance=request.url.path,
        details=exc.details,
        headers=exc.headers,
    )


def _validation(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type")}
        for e in exc.errors()
    ]
    first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    detail = f"{where}: {first['msg']}" if where else str(first["msg"])
    return problem_response(
        "invalid_input", 422, detail, instance=request.url.path, details={"errors": errors}
    )


def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
    detail = exc.detail if isinstance(exc.detail, str) else HTTPStatus(exc.status_code).phrase
    headers = exc.headers
    if exc.status_code == 405 and (allowed := _allowed(request)):
        # Starlette names only the methods of the first route that matched the path
        headers = {**(headers or {}), "Allow": ", ".join(allowed)}
    return problem_response(
        code, exc.status_code, detail, instance=request.url.path, headers=headers
    )


_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def _allowed(request: Request) -> list[str]:
    """Every method the OpenAPI document lists for this path (the Allow header of a 405)."""
    paths: dict[str, Any] = request.app.openapi().get("paths", {})
    for template, item in paths.items():
        shape = "^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(shape, request.url.path):
            return sorted(m.upper() for m in item if m in _METHODS)
    return []


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error on %s", request.url.path, exc_info=exc)
    return problem_response(
        "internal", 500, "the server failed to handle this request", instance=request.url.path
    )


# What every operation may answer besides its success, all as problems: the gate (401,
# 403), a bad or oversized body (400, 413, 415), the engine's codes (STATUS) and a store
# that is closing or failing (503). Listed on every operation so a client generated
# from /openapi.json meets no status or content type it was not told about.
_ERRORS = {
    400: "Malformed request (e.g. a body that is not JSON).",
    401: "No token, or an unknown one.",
    403: "The token has no access to this namespace or verb.",
    404: "No such fact, episode, entity or item.",
    405: "Method not allowed on this path.",
    406: "Not acceptable.",
    409: "Conflict (e.g. erased, not quarantined, later work resting on it).",
    413: "The request body is larger than the server's limit (`too_large`).",
    415: "Unsupported media type.",
    422: "Invalid input: a bad name, time, window or value, or one over its bound "
    "(`too_large`); `details.field` says which.",
    423: "The memory is held by another process.",
    500: "Internal error.",
    503: "The store is closed, failing or cannot be reached (`store_unavailable`, with "
    "`Retry-After`: nothing was written, send the same request again after it).",
}
_RETRY_AFTER_HEADER = {
    "Retry-After": {
        "description": "Seconds to wait before trying again (with `store_unavailable`).",
        "schema": {"type": "integer", "minimum": 0},
    }
}
_PROBLEM_SCHEMA = {
    "type": "object",
    "required": ["type", "title", "status", "code"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {"type": "string", "description": "Stable error code: switch on this."},
        "instance": {"type": "string"},
        "details": {"type": "object"},
    },
}


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with every error status each operation may answer, as
    `application/problem+json` (FastAPI's own 422 is `application/json`: replaced)."""
    schema.setdefault("components", {}).setdefault("schemas", {})["Problem"] = _PROBLEM_SCHEMA
    ref = {"$ref": "#/components/schemas/Problem"}
    for item in schema.get("paths", {}).values():
        for op in item.values():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            for status, why in _ERRORS.items():
                op["responses"][str(status)] = {
                    "description": why,
                    "content": {PROBLEM_JSON: {"schema": ref}},
                }
            op["responses"]["503"]["headers"] = _RETRY_AFTER_HEADER
    for unused in ("HTTPValidationError", "ValidationError"):
        schema["components"]["schemas"].pop(unused, None)
    return schema


def install(app: FastAPI) -> None:
    """Route every error the app can raise through the problem format, and say so in the
    OpenAPI document."""
    plain = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(plain())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    app.add_exception_handler(PalimpsestError, _engine_error)
    app.add_exception_handler(Problem, _server_problem)
    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
