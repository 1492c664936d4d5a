"""Time coercion at the boundary: aware UTC datetimes everywhere.

    >>> to_utc("2024-06-01T10:00:00+02:00").isoformat()
    '2024-06-01T08:00:00+00:00'

Naive datetimes are rejected rather than guessed at: a memory dated in the
wrong timezone is a wrong memory.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from .errors import InvalidTime, NaiveDatetime

TimeLike = datetime | str
Clock = Callable[[], datetime]

# Kùzu TIMESTAMP holds years 1..9999; keep clear of both ends so arithmetic stays safe.
_MIN = datetime(1, 1, 2, tzinfo=UTC)
_MAX = datetime(9999, 12, 30, tzinfo=UTC)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)


def epoch_us(t: datetime) -> int:
    """Microseconds since 1970 of an aware time, exactly (a float timestamp rounds).

    >>> epoch_us(datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC))
    1000000
    """
    return (t - _EPOCH) // _US


def from_epoch_us(us: int) -> datetime:
    """The aware UTC time `us` microseconds after 1970 (`epoch_us` undone)."""
    return _EPOCH + timedelta(microseconds=us)


def utcnow() -> datetime:
    """The default transaction clock."""
    return datetime.now(UTC)


def to_utc(value: TimeLike | date, *, name: str = "time") -> datetime:
    """Coerce an aware datetime or ISO-8601 string to an aware UTC datetime."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidTime(f"{name}: not an ISO-8601 time: {value[:64]!r}", field=name) from None
        value = parsed
    elif isinstance(value, date) and not isinstance(value, datetime):
        raise NaiveDatetime(
            f"{name}: a bare date has no timezone; pass an aware datetime or ISO string",
            field=name,
        )
    if not isinstance(value, datetime):
        raise InvalidTime(f"{name}: expected a datetime or ISO-8601 string", field=name)
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise NaiveDatetime(
            f"{name}: naive datetime {value.isoformat()} rejected; add a timezone (e.g. 'Z')",
            field=name,
        )
    out = value.astimezone(UTC)
    if not _MIN <= out <= _MAX:
        raise InvalidTime(f"{name}: {out.isoformat()} is outside the supported range", field=name)
    return out


def opt_utc(value: TimeLike | date | None, *, name: str = "time") -> datetime | None:
    """`to_utc`, letting None through (an unbounded window end)."""
    return None if value is None else to_utc(value, name=name)
