"""Schemathesis hooks: the one rule of the API that no JSON Schema can state, and one
check more (`problem_details`).

A window does not end before it starts: an assertion's `valid_to` comes after its start
(`valid_from`, else `occurred_at`, else now), since a fact true over no time is no fact;
`/v1/changes`'s `until` (default now) does not come before `since` (equal: an empty
window, answered with nothing). The schema says so in those fields' descriptions and the
server refuses a reversed window with 422 `invalid_window`. Generated *valid* requests
are kept to that rule here, so `positive_data_acceptance` still fails on every other
422. Invalid (negative) requests are left as generated: their windows may be reversed.

An `Idempotency-Key` names one request: the same key with another body is refused (422
`idempotency_key_reused`, as the IETF draft asks). The generator reuses its few short
keys across operations, so a valid request's key is made its own before it is sent.

Loaded through `hooks` in tests/schemathesis.toml (tests/test_api_openapi.py).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import schemathesis


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value[:-1] + "+00:00" if value[-1:] in "Zz" else value)
    except ValueError:
        return None


def _reversed(start: datetime | None, end: datetime | None, *, allow_empty: bool = False) -> bool:
    """Whether `end` comes before `start` (or at it, unless an empty window is allowed)."""
    if start is None or end is None:
        return False
    return end < start if allow_empty else end <= start


def _assertion_reversed(item: Any) -> bool:
    if not isinstance(item, dict) or item.get("valid_to") is None:
        return False
    if "valid_from" in item:
        start = _time(item["valid_from"])  # null: since always, nothing to reverse
    else:
        start = _time(item.get("occurred_at")) or datetime.now(UTC)
    return _reversed(start, _time(item["valid_to"]))


@schemathesis.hook
def filter_case(ctx: Any, case: Any) -> bool:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return True
    path = case.operation.path
    if path in ("/v1/facts", "/v1/facts:batch") and case.method.upper() == "POST":
        body = case.body if isinstance(case.body, dict) else {}
        items = body.get("items") if path.endswith(":batch") else [body]
        return not any(_assertion_reversed(i) for i in items or [])
    if path == "/v1/changes":
        query = case.query or {}
        until = _time(query.get("until")) if "until" in query else datetime.now(UTC)
        return not _reversed(_time(query.get("since")), until, allow_empty=True)
    return True


@schemathesis.hook
def before_call(ctx: Any, case: Any, **kwargs: Any) -> None:
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or not case.headers:
        return
    for name in list(case.headers):
        if name.lower() == "idempotency-key":
            case.headers[name] = f"st-{uuid.uuid4().hex}"


@schemathesis.check
def problem_details(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every refusal is an RFC 9457 problem whose `type` and `status` agree with its code
    and the response (what the schema's Problem object cannot say)."""
    if response.status_code < 400:
        return None
    body = response.json()
    code = body.get("code")
    assert body.get("status") == response.status_code, f"status {body.get('status')!r}"
    assert body.get("type") == f"urn:palimpsest:problem:{code}", f"type {body.get('type')!r}"
    assert isinstance(body.get("detail"), str) and body["detail"], "no detail"
    return None
