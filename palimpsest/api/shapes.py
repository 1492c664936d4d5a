"""What the server accepts in a name, a predicate, a text or a time: one pattern each, both
stated in the OpenAPI document and enforced at the boundary, so the two cannot disagree.

    >>> check_time("2024-06-01T00:00:00Z", "valid_at")
    '2024-06-01T00:00:00Z'
    >>> check_predicate("lives in", "predicate")
    'lives in'

A value outside its pattern is refused with the engine's own code (`invalid_name`,
`naive_datetime`, `invalid_time`, `too_large`), so clients keep switching on the codes
they know. The patterns spell character classes out (no `\\s`), because regex engines
disagree about what whitespace is: these are Python's whitespace characters. One rule
is enforced but not in a pattern: no lone surrogates (undecodable bytes smuggled into
a JSON string), since many regex engines cannot name them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Header
from pydantic import AfterValidator, ValidationInfo

from .. import _names as names
from .._time import to_utc
from ..errors import InvalidName, InvalidTime, TooLarge

# Python's whitespace (what the engine collapses); the control characters the engine refuses
# that are not whitespace.
_WS = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680"
    "\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
_CTRL = "\\x00-\\x08\\x0e-\\x1b\\x7f-\\x84\\x86-\\x9f"

NAME_PATTERN = f"^[^{_CTRL}]*[^{_WS}{_CTRL}][^{_CTRL}]*$"
# ASCII words that fold to snake_case: "lives in", "Works-At", "can't_stand"
PREDICATE_PATTERN = "^[A-Za-z][A-Za-z0-9_' -]{0,63}$"
# an episode's text: a NUL byte or nothing but whitespace is refused. Said as `not` rather
# than one anchored pattern: a text runs to MAX_TEXT characters, and a pattern beside so
# large a maxLength leaves schemathesis 4.32 unable to build any valid text at all
_BLANK = {"pattern": f"^[{_WS}]*$"}
TEXT_SHAPE: dict[str, Any] = {
    "minLength": 1,
    "maxLength": names.MAX_TEXT,
    "not": {"anyOf": [{"pattern": "\\x00"}, _BLANK]},
}
NOT_BLANK: dict[str, Any] = {"not": _BLANK}  # a review's reason: something said
QUERY_SHAPE = {"pattern": "\\S"}  # a recall query: something to look for
# RFC 3339 with a timezone, years 0002-9998 (the store holds 0001-9999; its ends stay clear)
_YEAR = "(000[2-9]|00[1-9][0-9]|0[1-9][0-9]{2}|[1-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])"
TIME_PATTERN = (
    f"^{_YEAR}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]"
    ":[0-5][0-9](\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)
MAX_TIME = 64

_NAME = re.compile(NAME_PATTERN)
_PREDICATE = re.compile(PREDICATE_PATTERN)
_SURROGATE = re.compile("[\\ud800-\\udfff]")
_TIME = re.compile(TIME_PATTERN)


def _bounded(value: str, field: str, limit: int) -> None:
    if len(value) > limit:
        raise TooLarge(f"{field}: longer than {limit} characters", field=field)


def check_name(value: str, field: str) -> str:
    """An entity name: not blank, no control characters or lone surrogates, 512 at most."""
    _bounded(value, field, names.MAX_NAME)
    if not _NAME.match(value) or _SURROGATE.search(value):
        names.clean_name(value, field=field)  # the engine's own reason, when it has one
        raise InvalidName(f"{field}: not valid Unicode text (a lone surrogate)", field=field)
    return value


def check_predicate(value: str, field: str) -> str:
    """A predicate name: ASCII letters first, then letters, digits, `_`, `-`, `'`, spaces."""
    if not _PREDICATE.match(value):
        raise InvalidName(
            f"{field}: {value[:64]!r} is not a predicate name (an ASCII letter, then letters, "
            "digits, _, -, ' or spaces; 64 at most)",
            field=field,
        )
    return value


def check_text(value: str, field: str) -> str:
    """An episode's text: not blank, no NUL bytes or lone surrogates, MAX_TEXT characters
    at most (TEXT_SHAPE, checked without a regex: texts run to a megabyte)."""
    _bounded(value, field, names.MAX_TEXT)
    if not value.strip() or "\x00" in value or _SURROGATE.search(value):
        detail = "must not be blank, nor hold NUL bytes or lone surrogates (binary data?)"
        raise InvalidName(f"{field}: {detail}", field=field)
    return value


def check_plain(value: str, field: str) -> str:
    """A label (session, source, reply_to): 512 characters at most, no lone surrogates."""
    _bounded(value, field, names.MAX_NAME)
    if _SURROGATE.search(value):
        raise InvalidName(f"{field}: not valid Unicode text (a lone surrogate)", field=field)
    return value


def check_time(value: str, field: str) -> str:
    """An RFC 3339 time with a timezone, years 0002-9998."""
    _bounded(value, field, MAX_TIME)
    if not _TIME.match(value):
        to_utc(value, name=field)  # naive_datetime or invalid_time, when the engine says so
        raise InvalidTime(
            f"{field}: {value[:64]!r}: write an RFC 3339 time, e.g. 2024-06-01T00:00:00Z "
            "(years 0002-9998)",
            field=field,
        )
    return value


Check = Callable[[str, str], str]

SHAPES: dict[Check, dict[str, Any]] = {
    check_name: {"minLength": 1, "maxLength": names.MAX_NAME, "pattern": NAME_PATTERN},
    check_predicate: {"minLength": 1, "maxLength": 64, "pattern": PREDICATE_PATTERN},
    check_text: TEXT_SHAPE,
    check_plain: {"maxLength": names.MAX_NAME},
    check_time: {"format": "date-time", "maxLength": MAX_TIME, "pattern": TIME_PATTERN},
}


def enforced(check: Check, field: str | None = None) -> AfterValidator:
    """The pydantic validator running `check` (on the field's own name unless given)."""

    def run(value: Any, info: ValidationInfo) -> Any:
        if value is None:
            return None
        return check(value, field or info.field_name or "value")

    return AfterValidator(run)


# An Idempotency-Key header (IETF draft): visible ASCII, inner spaces allowed, at most the
# engine's 255 characters (what a header can carry; HTTP strips outer spaces).
KEY_PATTERN = "^[!-~]([ -~]{0,253}[!-~])?$"
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        max_length=255,
        pattern=KEY_PATTERN,
        description=(
            "Retry a write with the same key after a lost answer, on any server: the first"
            " outcome comes back and nothing is written twice. The same key with another"
            " request: 422 `idempotency_key_reused`."
        ),
    ),
]
