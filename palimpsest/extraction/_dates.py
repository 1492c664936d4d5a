"""Find and resolve time expressions in English text. Pure: no spaCy, no I/O.

>>> from datetime import datetime, UTC
>>> ref = datetime(2024, 7, 2, 10, tzinfo=UTC)
>>> w = resolve_time("in June 2024", ref)
>>> (w.valid_from.date().isoformat(), w.precision)
('2024-06-01', 'month')

Rules (normative for the extraction room):

* Every expression names a *period* (a day, a week, a month, a season, a year).
  A period is represented by its first moment, and ``precision`` records its
  granularity (weeks use ``day``; seasons use ``month``).
* ``valid_from`` of "in X", "X", "since X", "X ago" is the start of X.
* Ranges are half-open and an end bound names the moment the state stopped, so
  "until X" / "from A to B" end at the *start* of X / B:
  "from 2019 to 2021" -> [2019-01-01, 2021-01-01).  Only "through X" ends after X.
* "N units ago" / "in N units" shift the reference by N units and truncate to
  that unit (years -> 1 Jan, months -> the 1st, days and weeks -> midnight):
  "two years ago" said on 2024-07-02 -> 2022-01-01 (year).
* "last/next <weekday>" is the closest such day strictly before/after the
  reference date; "last June" is the latest June strictly before the current
  month; "last summer" excludes a summer in progress. Seasons are northern
  (spring=Mar, summer=Jun, autumn=Sep, winter=Dec).
* A month or day without a year takes the reference year, moved one year back
  for past tense when it would lie in the future, and forward for future tense
  when it would lie in the past.
* Vague expressions ("these days", "recently") are found, so callers can mask
  them, but resolve to nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

Precision = Literal["day", "month", "year"]
Tense = Literal["past", "present", "future"]
Role = Literal["point", "since", "until", "through", "range", "duration", "vague"]

__all__ = [
    "Period",
    "Precision",
    "Role",
    "Tense",
    "TimeMention",
    "TimeWindow",
    "find_time_mentions",
    "resolve_time",
]

_MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
    "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
    "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9, "october": 10,
    "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
# Month names that are also ordinary words count only when capitalised.
_CASE_SENSITIVE_MONTHS = {"may", "march", "mar", "jan", "aug", "august", "dec", "sep", "oct"}
_WEEKDAYS: dict[str, int] = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4,
    "saturday": 5, "sunday": 6,
}  # fmt: skip
_SEASONS: dict[str, int] = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2,
}  # fmt: skip

_MONTH_RE = (
    r"(?P<{g}>january|february|march|april|may|june|july|august|september|october|"
    r"november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_DAY_RE = r"(?P<{g}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR_RE = r"(?P<{g}>(?:19|20)\d\d)"
_NUM_RE = (
    r"(?P<n>\d{1,3}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|eleven|twelve)"
)
_UNIT_RE = r"(?P<unit>day|week|month|year)s?"


def _m(g: str) -> str:
    return _MONTH_RE.format(g=g)


def _d(g: str) -> str:
    return _DAY_RE.format(g=g)


def _y(g: str) -> str:
    return _YEAR_RE.format(g=g)


# Each atom regex names a period; earlier entries win ties at the same start.
_ATOMS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b")),
    ("mdy", re.compile(rf"\b{_m('mon')}\s+{_d('d')}\b(?:,?\s+{_y('y')}\b)?", re.I)),
    (
        "dmy",
        re.compile(rf"\b(?:the\s+)?{_d('d')}(?:\s+of)?\s+{_m('mon')}(?:,?\s+{_y('y')}\b)?", re.I),
    ),
    ("my", re.compile(rf"\b(?:(?:early|late|mid)[\s-]+)?{_m('mon')},?\s+{_y('y')}\b", re.I)),
    (
        "rel_word",
        re.compile(
            r"\b(?P<w>yesterday|today|tonight|tomorrow|the day before yesterday|"
            r"the day after tomorrow)\b",
            re.I,
        ),
    ),
    (
        "shift",
        re.compile(
            r"\b(?:(?P<early>earlier|later)\s+)?(?P<k>last|this|next|past|coming)\s+(?P<unit>week|month|year|weekend)\b",
            re.I,
        ),
    ),
    (
        "weekday",
        re.compile(
            r"\b(?:(?P<k>last|this|next|coming)\s+)?(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            re.I,
        ),
    ),
    (
        "season",
        re.compile(
            r"\b(?:(?P<k>last|this|next|coming)\s+|(?:the\s+))(?P<s>spring|summer|autumn|fall|winter)\b",
            re.I,
        ),
    ),
    ("season_bare", re.compile(r"(?<=\bin )(?P<s>spring|summer|autumn|winter)\b", re.I)),
    ("month_mod", re.compile(rf"\b(?P<k>last|this|next|coming)\s+{_m('mon')}(?!\s+\d)", re.I)),
    ("ago", re.compile(rf"\b{_NUM_RE}\s+{_UNIT_RE}\s+ago\b", re.I)),
    ("in_n", re.compile(rf"(?<=\bin )(?:about\s+)?{_NUM_RE}\s+{_UNIT_RE}\b(?!\s+ago)", re.I)),
    ("for_n", re.compile(rf"(?<=\bfor )(?:the\s+(?:past|last)\s+)?{_NUM_RE}\s+{_UNIT_RE}\b", re.I)),
    (
        "vague",
        re.compile(
            r"\b(?:these days|lately|nowadays|recently|currently|right now|at the moment|"
            r"at some point|some ?day|one day|the other day|a while (?:ago|back)|"
            r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|several|many|a few|"
            r"countless|multiple|a couple of) times|twice|"
            r"(?:every|each) (?:other )?(?:day|week|month|year|weekend|morning|evening|night|"
            r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|winter)|"
            r"a few (?:days|weeks|months|years) ago|earlier today|for now|"
            r"(?:several|many|a few) (?:days|weeks|months|years) ago)\b",
            re.I,
        ),
    ),
    ("month", re.compile(rf"\b{_m('mon')}\b", re.I)),
    ("year", re.compile(rf"\b{_y('y')}\b")),
]

_PREFIX_RE = re.compile(
    r"(?P<p>\b(?:since|until|till|til|up to|up until|through|thru|from|between|during|"
    r"in|on|at|as of|starting|beginning|by|before|after|back in|of|for)\s+)$",
    re.I,
)
_RANGE_JOIN_RE = re.compile(r"^\s*(?P<j>to|until|till|through|thru|-|–|and)\s*", re.I)
# A bare year is only a date after a word that introduces a time.
_YEAR_PREFIXES = {
    "since", "until", "till", "til", "through", "thru", "from", "between", "during",
    "in", "as of", "by", "before", "after", "back in", "of", "up to", "up until",
    "starting", "beginning",
}  # fmt: skip


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


@dataclass(frozen=True)
class TimeMention:
    """One time expression found in text, with its character span (prefix word included).

    >>> m = find_time_mentions("I lived in Paris from 2019 to 2021.")[0]
    >>> (m.text, m.role)
    ('from 2019 to 2021', 'range')
    """

    start: int
    end: int
    text: str
    role: Role
    anchors: tuple[_Anchor, ...]

    def resolve(self, reference: datetime, tense: Tense | None = None) -> TimeWindow | None:
        """Resolve against ``reference`` (aware); ``None`` for vague mentions.

        >>> find_time_mentions("yesterday")[0].resolve(datetime(2024, 7, 2, tzinfo=UTC)).precision
        'day'
        """
        ref = _to_utc(reference)
        if self.role == "vague" or not self.anchors:
            return None
        if self.role == "duration":
            a = self.anchors[0]
            start, prec = _shift_units(ref, a.unit, -a.n)
            return TimeWindow(start, None, prec, "duration")
        periods = [_resolve_anchor(a, ref, tense) for a in self.anchors]
        if any(p is None for p in periods):
            return None
        first = periods[0]
        assert first is not None
        if self.role == "range" and len(periods) == 2:
            last = periods[1]
            assert last is not None
            end = last.end if self._inclusive_end else last.start
            if end <= first.start:
                return None
            return TimeWindow(first.start, end, first.precision, "range", first)
        if self.role == "until":
            return TimeWindow(None, first.start, first.precision, "until", first)
        if self.role == "through":
            return TimeWindow(None, first.end, first.precision, "through", first)
        return TimeWindow(first.start, None, first.precision, self.role, first)

    @property
    def _inclusive_end(self) -> bool:
        return bool(re.search(r"\b(?:through|thru)\b", self.text, re.I))


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


def _month_ok(raw: str) -> bool:
    word = raw.rstrip(".")
    return word.lower() not in _CASE_SENSITIVE_MONTHS or word[:1].isupper()


def _anchor_from(kind: str, m: re.Match[str]) -> _Anchor | None:
    g = m.groupdict()
    if kind == "iso":
        y, mo, d = int(g["y"]), int(g["m"]), int(g["d"])
        return _Anchor("date", y, mo, d) if _valid_day(y, mo, d) else None
    if kind in ("mdy", "dmy", "my", "month", "month_mod"):
        if not _month_ok(g["mon"]):
            return None
        month = _MONTHS[g["mon"].rstrip(".").lower()]
        day = int(g["d"]) if g.get("d") else None
        if day is not None and not 1 <= day <= 31:
            return None
        year = int(g["y"]) if g.get("y") else None
        if kind == "month_mod":
            return _Anchor("month_mod", month=month, mode=g["k"].lower())
        return _Anchor("date", year, month, day)
    if kind == "year":
        return _Anchor("date", int(g["y"]))
    if kind == "rel_word":
        w = g["w"].lower()
        offsets = {
            "yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1,
            "the day before yesterday": -2, "the day after tomorrow": 2,
        }  # fmt: skip
        return _Anchor("rel_day", n=offsets[w])
    if kind == "shift":
        k = g["k"].lower()
        n = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[k]
        return _Anchor("shift", n=n, unit=g["unit"].lower())
    if kind == "weekday":
        return _Anchor("weekday", weekday=_WEEKDAYS[g["wd"].lower()], mode=(g["k"] or "").lower())
    if kind in ("season", "season_bare"):
        return _Anchor("season", month=_SEASONS[g["s"].lower()], mode=(g.get("k") or "").lower())
    if kind in ("ago", "in_n", "for_n"):
        count = int(g["n"]) if g["n"].isdigit() else _NUMBERS.get(g["n"].lower())
        if count is None:
            return None
        if kind == "for_n":
            return _Anchor("duration", n=count, unit=g["unit"].lower())
        sign = -1 if kind == "ago" else 1
        return _Anchor("units", n=sign * count, unit=g["unit"].lower())
    return _Anchor("vague")


@dataclass(frozen=True)
class _Atom:
    start: int
    end: int
    anchor: _Anchor


def _atoms(text: str) -> list[_Atom]:
    found: list[_Atom] = []
    for kind, rx in _ATOMS:
        for m in rx.finditer(text):
            anchor = _anchor_from(kind, m)
            if anchor is None:
                continue
            start, end = m.start(), m.end()
            if kind == "year":
                before = text[max(0, start - 20) : start]
                pm = _PREFIX_RE.search(before)
                introduced = pm is not None and pm.group("p").strip().lower() in _YEAR_PREFIXES
                # "... to 2021" is fine when it closes a range; checked later.
                if not introduced and not re.search(r"\b(?:to|and|-|–)\s*$", before):
                    continue
            found.append(_Atom(start, end, anchor))
    # Keep the longest non-overlapping atoms; earlier pattern wins a tie.
    found.sort(key=lambda a: (a.start, -(a.end - a.start)))
    chosen: list[_Atom] = []
    for atom in found:
        if chosen and atom.start < chosen[-1].end:
            continue
        chosen.append(atom)
    return chosen


def find_time_mentions(text: str) -> list[TimeMention]:
    """All time expressions in ``text``, in order, with roles from their prefix word.

    >>> [m.text for m in find_time_mentions("I moved to Sydney in June 2024 and quit last week.")]
    ['in June 2024', 'last week']
    """
    atoms = _atoms(text)
    mentions: list[TimeMention] = []
    i = 0
    while i < len(atoms):
        atom = atoms[i]
        start = atom.start
        prefix = ""
        pm = _PREFIX_RE.search(text[max(0, start - 20) : start])
        if pm is not None:
            prefix = pm.group("p").strip().lower()
            start = start - len(pm.group("p"))
        anchors = [atom.anchor]
        end = atom.end
        role: Role
        if atom.anchor.kind == "vague":
            role = "vague"
        elif atom.anchor.kind == "duration":
            role = "duration"
        elif prefix in ("since", "after", "starting", "beginning", "from"):
            role = "since"
        elif prefix in ("until", "till", "til", "up to", "up until"):
            role = "until"
        elif prefix in ("through", "thru"):
            role = "through"
        elif prefix in ("by", "before"):
            role = "vague"
        else:
            role = "point"
        if prefix in ("from", "between") and i + 1 < len(atoms):
            nxt = atoms[i + 1]
            jm = _RANGE_JOIN_RE.match(text[end : nxt.start])
            if jm is not None and jm.end() == nxt.start - end:
                joiner = jm.group("j").lower()
                if (joiner == "and") == (prefix == "between"):
                    anchors.append(nxt.anchor)
                    end = nxt.end
                    role = "range"
                    i += 1
        bare_year = atom.anchor.kind == "date" and atom.anchor.month is None
        if bare_year and role == "point" and prefix not in _YEAR_PREFIXES:
            i += 1
            continue
        mentions.append(TimeMention(start, end, text[start:end], role, tuple(anchors)))
        i += 1
    return mentions


def resolve_time(expr: str, reference: datetime, tense: Tense | None = None) -> TimeWindow | None:
    """Resolve the first resolvable time expression in ``expr``.

    >>> w = resolve_time("from 2019 to 2021", datetime(2024, 7, 2, tzinfo=UTC))
    >>> (w.valid_from.year, w.valid_to.year, w.precision)
    (2019, 2021, 'year')
    """
    for mention in find_time_mentions(expr):
        window = mention.resolve(reference, tense)
        if window is not None:
            return window
    return None
