"""Periods and their arithmetic: what a resolved time expression stands for.

>>> _year_period(2021).start.isoformat()
'2021-01-01T00:00:00+00:00'

The normative rules are in ``_dates``' docstring; this module holds the period
types (``Period``, ``TimeWindow``, the parsed ``_Anchor``) and the pure functions
that turn an anchor and a reference moment into a period.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

Precision = Literal["day", "month", "year"]
Tense = Literal["past", "present", "future"]
Role = Literal["point", "since", "until", "through", "range", "duration", "vague"]


@dataclass(frozen=True)
class Period:
    """A named stretch of time, half-open ``[start, end)``.

    >>> june = datetime(2024, 6, 1, tzinfo=UTC)
    >>> Period(june, datetime(2024, 7, 1, tzinfo=UTC), "month").precision
    'month'
    """

    start: datetime
    end: datetime
    precision: Precision


@dataclass(frozen=True)
class TimeWindow:
    """A resolved expression, in the shape a fact takes.

    >>> resolve_time("since 2021", datetime(2024, 7, 2, tzinfo=UTC)).valid_from.year
    2021
    """

    valid_from: datetime | None
    valid_to: datetime | None
    precision: Precision | None
    role: Role
    period: Period | None = None


@dataclass(frozen=True)
class _Anchor:
    kind: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    n: int = 0
    unit: str = ""
    mode: str = ""  # last / this / next / "" (bare)
    weekday: int = -1
    word: str = ""


def _to_utc(dt: datetime) -> datetime:
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("reference datetime must be timezone-aware")
    return dt.astimezone(UTC)


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def _add_months(y: int, m: int, k: int) -> tuple[int, int]:
    idx = y * 12 + (m - 1) + k
    return idx // 12, idx % 12 + 1


def _month_period(y: int, m: int) -> Period:
    ny, nm = _add_months(y, m, 1)
    return Period(_day(y, m, 1), _day(ny, nm, 1), "month")


def _year_period(y: int) -> Period:
    return Period(_day(y, 1, 1), _day(y + 1, 1, 1), "year")


def _day_period(dt: datetime) -> Period:
    start = dt.replace(hour=0, minute=0, second=0, microsecond=0)
    return Period(start, start + timedelta(days=1), "day")


def _shift_units(ref: datetime, unit: str, n: int) -> tuple[datetime, Precision]:
    midnight = ref.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        return midnight + timedelta(days=n), "day"
    if unit == "week":
        return midnight + timedelta(days=7 * n), "day"
    if unit == "month":
        y, m = _add_months(ref.year, ref.month, n)
        return _day(y, m, 1), "month"
    return _day(ref.year + n, 1, 1), "year"


def _valid_day(y: int, m: int, d: int) -> bool:
    try:
        datetime(y, m, d)
    except ValueError:
        return False
    return True


def _infer_year(ref: datetime, month: int, day: int | None, tense: Tense | None) -> int:
    year = ref.year
    here = (ref.month, ref.day if day is not None else 0)
    there = (month, day if day is not None else 0)
    if tense == "past" and there > here:
        year -= 1
    elif tense == "future" and there < here:
        year += 1
    return year


def _season_start(ref: datetime, start_month: int, mode: str, tense: Tense | None) -> Period:
    # Latest start of this season at or before the reference month.
    y = ref.year if (ref.month >= start_month) else ref.year - 1
    cy, cm = _add_months(y, start_month, 3)
    in_progress = ref < _day(cy, cm, 1)
    if mode == "last":
        y = y - 1 if in_progress else y
    elif mode in ("next", "coming"):
        y = y + 1
    elif mode == "this":
        if not in_progress and tense != "past":
            y = y + 1
    else:  # bare "in the summer"
        if not in_progress and tense == "future":
            y = y + 1
    ey, em = _add_months(y, start_month, 3)
    return Period(_day(y, start_month, 1), _day(ey, em, 1), "month")


def _resolve_anchor(a: _Anchor, ref: datetime, tense: Tense | None) -> Period | None:
    today = _day_period(ref)
    if a.kind == "date":
        if a.month is None:
            return _year_period(a.year) if a.year is not None else None
        year = a.year if a.year is not None else _infer_year(ref, a.month, a.day, tense)
        if a.day is None:
            return _month_period(year, a.month)
        if not _valid_day(year, a.month, a.day):
            return None
        return _day_period(_day(year, a.month, a.day))
    if a.kind == "rel_day":
        return _day_period(today.start + timedelta(days=a.n))
    if a.kind == "shift":
        if a.unit in ("week", "weekend"):
            monday = today.start - timedelta(days=today.start.weekday())
            start = monday + timedelta(days=7 * a.n)
            if a.unit == "weekend":
                start += timedelta(days=5)
                return Period(start, start + timedelta(days=2), "day")
            return Period(start, start + timedelta(days=7), "day")
        if a.unit == "month":
            y, m = _add_months(ref.year, ref.month, a.n)
            return _month_period(y, m)
        return _year_period(ref.year + a.n)
    if a.kind == "weekday":
        delta = a.weekday - today.start.weekday()
        mode = a.mode
        if mode == "":
            mode = "last" if tense == "past" else "next"
            if delta == 0 and tense != "past":
                mode = "this"
        if mode == "last":
            delta = delta if delta < 0 else delta - 7
        elif mode in ("next", "coming"):
            delta = delta if delta > 0 else delta + 7
        else:  # this: the one in the current Monday-Sunday week
            pass
        return _day_period(today.start + timedelta(days=delta))
    if a.kind == "month_mod":
        assert a.month is not None
        if a.mode == "last":
            y = ref.year if a.month < ref.month else ref.year - 1
        elif a.mode in ("next", "coming"):
            y = ref.year if a.month > ref.month else ref.year + 1
        else:
            y = ref.year
        return _month_period(y, a.month)
    if a.kind == "season":
        return _season_start(ref, a.month or 3, a.mode, tense)
    if a.kind == "units":
        start, prec = _shift_units(ref, a.unit, a.n)
        if prec == "day":
            return _day_period(start)
        if prec == "month":
            return _month_period(start.year, start.month)
        return _year_period(start.year)
    return None
