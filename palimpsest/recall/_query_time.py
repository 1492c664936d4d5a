"""Time named in a question: the window it denotes, and how it moves candidates.

>>> w = query_time("what did I eat on 2014/01/29?", datetime(2015, 1, 1, tzinfo=UTC))
>>> (w.start.date().isoformat(), w.end.date().isoformat())
('2014-01-29', '2014-01-30')

Pure functions over plain data, re-exported by :mod:`palimpsest.recall.ranking`
(:func:`query_time`, :class:`TimeWindow`, :func:`time_boost`, :func:`time_narrow`).
Relative phrases resolve against the reference time recall passes (valid_at).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]


@dataclass(frozen=True)
class TimeWindow:
    """A half-open window ``[start, end)`` named in a question, and the words that named it.

    >>> w = TimeWindow(datetime(2023, 3, 1, tzinfo=UTC), datetime(2023, 4, 1, tzinfo=UTC), "x")
    >>> w.contains(datetime(2023, 3, 31, tzinfo=UTC))
    True
    """

    start: datetime
    end: datetime
    phrase: str

    def contains(self, when: datetime) -> bool:
        return self.start <= when < self.end


_MONTH_NAMES = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTH_NAMES.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH_NAMES["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTH_NAMES, key=len, reverse=True))
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "several": 3,
}  # fmt: skip
_YEAR = r"(?:19|20)\d\d"


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def _month_window(y: int, m: int) -> tuple[datetime, datetime]:
    start = _day(y, m, 1)
    end = _day(y + 1, 1, 1) if m == 12 else _day(y, m + 1, 1)
    return start, end


def _season_window(y: int, season: str) -> tuple[datetime, datetime]:
    # Northern-hemisphere meteorological seasons; winter Y is Dec Y .. end of Feb Y+1.
    m = _SEASONS[season]
    start = _day(y, m, 1)
    end_m, end_y = m + 3, y
    if end_m > 12:
        end_m, end_y = end_m - 12, y + 1
    return start, _day(end_y, end_m, 1)


def _latest_season(ref: datetime, season: str, *, completed: bool) -> tuple[datetime, datetime]:
    """The latest ``season`` that has begun (or, if ``completed``, ended) by ``ref``."""
    for y in (ref.year, ref.year - 1, ref.year - 2):
        start, end = _season_window(y, season)
        if (end <= ref) if completed else (start <= ref):
            return start, end
    return _season_window(ref.year - 2, season)


def _parse_int(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


def _windows(text: str, ref: datetime) -> list[tuple[datetime, datetime, str]]:
    t = text.lower()
    found: list[tuple[datetime, datetime, str]] = []
    taken: list[tuple[int, int]] = []

    def claim(m: re.Match[str], start: datetime, end: datetime) -> None:
        span = m.span()
        if any(a < span[1] and span[0] < b for a, b in taken):
            return  # a longer, more specific phrase already covered these words
        taken.append(span)
        found.append((start, end, text[span[0] : span[1]].strip()))

    # Full dates first: they are the most specific.
    for m in re.finditer(rf"\b({_YEAR})[-/.](\d{{1,2}})[-/.](\d{{1,2}})\b", t):
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if 1 <= mo <= 12 and 1 <= d <= calendar.monthrange(y, mo)[1]:
            s = _day(y, mo, d)
            claim(m, s, s + timedelta(days=1))
    pat_dmy = rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_RE})\.?,?\s+({_YEAR})\b"
    for m in re.finditer(pat_dmy, t):
        d, mo, y = int(m.group(1)), _MONTH_NAMES[m.group(2)], int(m.group(3))
        if 1 <= d <= calendar.monthrange(y, mo)[1]:
            s = _day(y, mo, d)
            claim(m, s, s + timedelta(days=1))
    pat_mdy = rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+({_YEAR})\b"
    for m in re.finditer(pat_mdy, t):
        mo, d, y = _MONTH_NAMES[m.group(1)], int(m.group(2)), int(m.group(3))
        if 1 <= d <= calendar.monthrange(y, mo)[1]:
            s = _day(y, mo, d)
            claim(m, s, s + timedelta(days=1))
    # Year and month as digits: "2002/05", "2002-05" (not a day's prefix: claimed above).
    for m in re.finditer(rf"\b({_YEAR})[-/](\d{{1,2}})\b(?![-/.]\d)", t):
        if 1 <= int(m.group(2)) <= 12:
            s, e = _month_window(int(m.group(1)), int(m.group(2)))
            claim(m, s, e)
    # Month and year: "March 2023", "in mar 2023".
    for m in re.finditer(rf"\b({_MONTH_RE})\.?,?\s+(?:of\s+)?({_YEAR})\b", t):
        s, e = _month_window(int(m.group(2)), _MONTH_NAMES[m.group(1)])
        claim(m, s, e)
    # Season and year: "summer 2022", "the summer of 2022".
    for m in re.finditer(rf"\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?({_YEAR})\b", t):
        s, e = _season_window(int(m.group(2)), m.group(1))
        claim(m, s, e)
    # Month and day without a year: "August 11" = the latest one on or before ref.
    pat_md = rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!\s*,?\s*\d)"
    for m in re.finditer(pat_md, t):
        if m.group(1) == "may" and text[m.start(1)] != "M":
            continue  # "they may 3 times…": a verb, not a month
        mo, d = _MONTH_NAMES[m.group(1)], int(m.group(2))
        for y in (ref.year, ref.year - 1):
            if d <= calendar.monthrange(y, mo)[1] and _day(y, mo, d) <= ref:
                s = _day(y, mo, d)
                claim(m, s, s + timedelta(days=1))
                break
    # Relative phrases count back from the latest full date the question names
    # ("last Friday, as mentioned on 23 January 2022"), else from ref.
    named_days = [f[0] for f in found if f[1] - f[0] == timedelta(days=1)]
    anchor = max(named_days) + timedelta(hours=12) if named_days else ref
    ref = anchor
    day0 = ref.replace(hour=0, minute=0, second=0, microsecond=0)

    # Relative phrases.
    rel = {
        "today": (day0, day0 + timedelta(days=1)),
        "tonight": (day0, day0 + timedelta(days=1)),
        "yesterday": (day0 - timedelta(days=1), day0),
        "last night": (day0 - timedelta(days=1), day0 + timedelta(hours=6)),
        "this week": (day0 - timedelta(days=day0.weekday()), day0 + timedelta(days=1)),
        "last week": (
            day0 - timedelta(days=day0.weekday() + 7),
            day0 - timedelta(days=day0.weekday()),
        ),
        "this month": (_month_window(ref.year, ref.month)[0], day0 + timedelta(days=1)),
        "last month": _month_window(
            ref.year if ref.month > 1 else ref.year - 1, ref.month - 1 if ref.month > 1 else 12
        ),
        "this year": (_day(ref.year, 1, 1), day0 + timedelta(days=1)),
        "last year": (_day(ref.year - 1, 1, 1), _day(ref.year, 1, 1)),
    }
    for phrase, (s, e) in rel.items():
        for m in re.finditer(rf"\b{phrase}\b", t):
            claim(m, s, e)
    for m in re.finditer(r"\b(last|this|past)\s+(spring|summer|autumn|fall|winter)\b", t):
        s, e = _latest_season(ref, m.group(2), completed=m.group(1) != "this")
        claim(m, s, e)
    for m in re.finditer(r"\b(?:last|this past|past)\s+(" + "|".join(_WEEKDAYS) + r")\b", t):
        back = (ref.weekday() - _WEEKDAYS[m.group(1)]) % 7 or 7
        s = day0 - timedelta(days=back)
        claim(m, s, s + timedelta(days=1))
    num = r"(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|a couple of|a few|several)"
    for m in re.finditer(rf"\b{num}\s+(day|week|month|year)s?\s+ago\b", t):
        n = _parse_int(m.group(1))
        if n is None:
            continue
        unit = _UNITS[m.group(2)]
        centre = day0 - timedelta(days=n * unit)
        # "three weeks ago" is fuzzy by about one unit either way.
        half = timedelta(days=max(1, unit))
        claim(m, centre - half, centre + half)
    # Bare month or year after a preposition: "in March" = the latest March begun
    # by ref; "since 2022" runs from 2022 up to ref.
    prep = r"(in|during|since|by|of|early|late|mid|until|through|before|after)"
    for m in re.finditer(rf"\b{prep}\s+(?:-\s*)?({_MONTH_RE})\b(?!\s*\d)", t):
        if m.group(2) == "may" and text[m.start(2)] != "M":
            continue
        mo = _MONTH_NAMES[m.group(2)]
        y = ref.year if mo <= ref.month else ref.year - 1
        s, e = _month_window(y, mo)
        claim(m, s, max(e, ref) if m.group(1) == "since" else e)
    for m in re.finditer(rf"\b{prep}\s+({_YEAR})\b", t):
        y = int(m.group(2))
        s, e = _day(y, 1, 1), _day(y + 1, 1, 1)
        claim(m, s, max(e, ref) if m.group(1) == "since" else e)
    return found


def query_time(text: str, reference: datetime) -> TimeWindow | None:
    """Find the dates or periods a question names and return the window covering them.

    >>> ref = datetime(2023, 7, 10, 12, tzinfo=UTC)
    >>> w = query_time("What did I do in March 2023?", ref)
    >>> (w.start.date().isoformat(), w.end.date().isoformat())
    ('2023-03-01', '2023-04-01')
    >>> query_time("What is my favourite colour?", ref) is None
    True

    Understands full dates ("on 2014/01/29", "29 January 2014", "Jan 29, 2014"),
    months ("in March 2023", "on 2002/05", and "in March" = the latest March begun by
    ``reference``), years ("in 2022"), seasons ("summer 2022", "last summer"),
    relative days and periods ("yesterday", "last week", "last month", "last
    Friday", "three weeks ago"). Several phrases give the window spanning them
    all ("between May and July 2023"). ``reference`` must be timezone-aware.
    """
    if reference.tzinfo is None:
        raise ValueError("reference must be timezone-aware")
    ref = reference.astimezone(UTC)
    found = _windows(text, ref)
    if not found:
        return None
    start = min(f[0] for f in found)
    end = max(f[1] for f in found)
    phrase = ", ".join(f[2] for f in sorted(found, key=lambda f: text.lower().find(f[2].lower())))
    return TimeWindow(start, end, phrase)


def time_boost(
    scores: npt.ArrayLike,
    occurred_at: npt.ArrayLike,
    window: TimeWindow,
    *,
    boost: float = 0.2,
    slack_before: timedelta = timedelta(0),
    slack_after: timedelta = timedelta(0),
    cap: bool = True,
) -> F32:
    """Raise candidates that occurred inside ``window`` (widened by the slacks).

    >>> t = [datetime(2023, m, 5, tzinfo=UTC).timestamp() for m in (3, 6)]
    >>> w = query_time("in March 2023", datetime(2023, 7, 1, tzinfo=UTC))
    >>> [round(x, 3) for x in time_boost([0.5, 0.5], t, w, boost=0.2).tolist()]
    [0.6, 0.5]

    ``occurred_at`` is POSIX seconds (NaN = unknown, left alone). A mention is
    usually recorded after the event it tells of ("we went camping last week"),
    hence ``slack_after``. Scores are multiplied by ``1 + boost`` and, with
    ``cap``, clipped to 1 to stay on the 0..1 scale.
    """
    s = np.asarray(scores, dtype=np.float64)
    t = np.asarray(occurred_at, dtype=np.float64)
    lo = (window.start - slack_before).timestamp()
    hi = (window.end + slack_after).timestamp()
    with np.errstate(invalid="ignore"):
        inside = (t >= lo) & (t < hi)
    out = np.where(inside, s * (1.0 + boost), s)
    if cap:
        out = np.minimum(out, 1.0)
    return out.astype(np.float32)


def time_narrow(
    scores: npt.ArrayLike,
    occurred_at: npt.ArrayLike,
    window: TimeWindow,
    *,
    factor: float = 0.5,
    max_span: timedelta = timedelta(days=31),
    slack_before: timedelta = timedelta(0),
    slack_after: timedelta = timedelta(0),
    slack_factor: float = 1.0,
) -> F32:
    """Lower candidates outside a narrow ``window`` (widened by the slacks) by ``factor``,
    and those only inside the slack by ``slack_factor``.

    >>> t = [datetime(2014, 1, d, 12, tzinfo=UTC).timestamp() for d in (29, 30, 2)]
    >>> w = query_time("what did I eat on 2014/01/29?", datetime(2015, 1, 1, tzinfo=UTC))
    >>> [round(x, 3) for x in time_narrow([0.4, 0.4, 0.5], t, w, factor=0.5,
    ...                                   slack_after=timedelta(days=3), slack_factor=0.9).tolist()]
    [0.4, 0.36, 0.25]

    A question that names a day or a month ("on 2014/01/29", "in March 2023")
    asks about that time: a lifelog holds hundreds of breakfasts, and the
    episode's text rarely carries its own date, so words alone cannot choose.
    Boosting the window's candidates (:func:`time_boost`) cannot lift them past
    an equally worded one elsewhere; lowering the rest does, keeps the order
    within the window and the 0..1 scale, and never raises an irrelevant
    candidate above the floor. The slack keeps a mention made days after the
    event in play (a conversation's "we went camping last week"), a little below
    the day itself. Wider windows (a year, "since 2022") only boost. Unknown
    times (NaN) are left alone.
    """
    s = np.asarray(scores, dtype=np.float64)
    if window.end - window.start > max_span:
        return s.astype(np.float32)
    t = np.asarray(occurred_at, dtype=np.float64)
    lo = (window.start - slack_before).timestamp()
    hi = (window.end + slack_after).timestamp()
    with np.errstate(invalid="ignore"):
        outside = (t < lo) | (t >= hi)
        near = ~outside & ((t < window.start.timestamp()) | (t >= window.end.timestamp()))
    out = np.where(outside, s * max(factor, 0.0), s)
    out = np.where(near, out * max(slack_factor, 0.0), out)
    return out.astype(np.float32)
