"""How a stored version reads to a caller at a given moment.

>>> from datetime import datetime, UTC
>>> now = datetime(2026, 1, 1, tzinfo=UTC)
>>> version_status(valid_to=None, expired_at=None, retracted_at=None,
...                quarantined=False, now=now)
'current'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

Status = Literal[
    "current", "ended", "superseded", "retracted", "erased", "quarantined", "contested"
]


def version_status(
    *,
    valid_to: datetime | None,
    expired_at: datetime | None,
    retracted_at: datetime | None,
    quarantined: bool,
    known_at: datetime,
    valid_at: datetime,
    contested: bool = False,
) -> Status:
    """Status of a version as seen from (valid_at, known_at)."""
    if expired_at is not None and expired_at <= known_at:
        # a version stops being believed either because its own assertion was
        # withdrawn at that instant, or because something newer covered it
        return (
            "retracted"
            if retracted_at is not None and retracted_at == expired_at
            else ("superseded")
        )
    if quarantined:
        return "quarantined"
    if valid_to is not None and valid_to <= valid_at:
        return "ended"
    return "contested" if contested else "current"


_MIN = datetime.min.replace(tzinfo=UTC)
_MAX = datetime.max.replace(tzinfo=UTC)
T = TypeVar("T")


def within(start: T, end: T, at: T) -> Any:
    """The one rule for a window: half-open, `start <= at < end`. The bounds are resolved
    (no None): datetimes, or numpy arrays of them as integers, whose `&` is elementwise.

    >>> within(t(2024), t(2025), t(2024))
    True
    """
    return (start <= at) & (at < end)  # type: ignore[operator]


def visible(
    version: Mapping[str, Any], *, known_at: datetime | None, valid_at: datetime | None
) -> bool:
    """Whether a stored version is believed at `known_at` and covers `valid_at`.

    >>> visible({"recorded_at": now, "expired_at": None, "valid_from": None,
    ...          "valid_to": None}, known_at=now, valid_at=now)
    True

    Either time may be None to leave that axis unchecked. Windows are half-open.
    """
    if known_at is not None and not within(
        version["recorded_at"], version["expired_at"] or _MAX, known_at
    ):
        return False
    return valid_at is None or bool(
        within(version["valid_from"] or _MIN, version["valid_to"] or _MAX, valid_at)
    )
