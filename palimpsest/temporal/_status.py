"""How a stored version reads to a caller at a given moment.

>>> from datetime import datetime, UTC
>>> now = datetime(2026, 1, 1, tzinfo=UTC)
>>> version_status(valid_to=None, expired_at=None, retracted_at=None,
...                quarantined=False, now=now)
'current'
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

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


def visible(
    version: Mapping[str, Any], *, known_at: datetime | None, valid_at: datetime | None
) -> bool:
    """Whether a stored version is believed at `known_at` and covers `valid_at`.

    >>> visible({"recorded_at": now, "expired_at": None, "valid_from": None,
    ...          "valid_to": None}, known_at=now, valid_at=now)
    True

    Either time may be None to leave that axis unchecked. Windows are half-open.
    """
    if known_at is not None and not (
        version["recorded_at"] <= known_at
        and (version["expired_at"] is None or version["expired_at"] > known_at)
    ):
        return False
    return valid_at is None or (
        (version["valid_from"] is None or version["valid_from"] <= valid_at)
        and (version["valid_to"] is None or valid_at < version["valid_to"])
    )
