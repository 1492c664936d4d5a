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
from dataclasses import dataclass, replace
from datetime import datetime

from ._date_grammar import _PREFIX_RE, _RANGE_JOIN_RE, _YEAR_PREFIXES, _atoms
from ._date_periods import (
    Period,
    Precision,
    Role,
    Tense,
    TimeWindow,
    _add_months,
    _Anchor,
    _month_period,
    _resolve_anchor,
    _shift_units,
    _to_utc,
    _year_period,
)

_DASH_JOIN_RE = re.compile(r"\s*[-–—]\s*")
_WORD_JOIN_RE = re.compile(r"\s+(?:to|through|until|till)\s+")  # "1910 through 1914"

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

    def resolve(
        self,
        reference: datetime,
        tense: Tense | None = None,
        *,
        narrative: datetime | None = None,
        history: bool = False,
    ) -> TimeWindow | None:
        """Resolve against ``reference`` (aware); ``None`` for vague mentions.

        >>> find_time_mentions("yesterday")[0].resolve(datetime(2024, 7, 2, tzinfo=UTC)).precision
        'day'

        ``narrative`` is the time the text was last talking about: "later that
        year" and "the following year" count from it, and name nothing without it.
        With ``history`` (a document telling a past), a month or day without a
        year ("on 9 July") is in the narrative's year, not the reference's.
        """
        ref = _to_utc(reference)
        if self.role == "vague" or not self.anchors:
            return None
        if self.anchors[0].kind == "anaphor":
            if narrative is None:
                return None
            a = self.anchors[0]
            at = _to_utc(narrative)
            if a.unit == "month":
                y, m = _add_months(at.year, at.month, a.n)
                period = _month_period(y, m)
            else:
                period = _year_period(at.year + a.n)
            return TimeWindow(period.start, None, period.precision, self.role, period)
        if self.role == "duration":
            a = self.anchors[0]
            start, prec = _shift_units(ref, a.unit, -a.n)
            return TimeWindow(start, None, prec, "duration")
        anchors = self.anchors
        if history and narrative is not None:
            year = _to_utc(narrative).year
            anchors = tuple(
                replace(a, year=year) if a.kind == "date" and a.year is None else a for a in anchors
            )
        periods = [_resolve_anchor(a, ref, tense) for a in anchors]
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
        if atom.anchor.kind == "year_span":
            a = atom.anchor
            if a.n == 0:  # "2019–present"
                since = (_Anchor("date", a.year),)
                mentions.append(TimeMention(start, end, text[start:end], "since", since))
            else:
                span = (_Anchor("date", a.year), _Anchor("date", a.n))
                mentions.append(TimeMention(start, end, text[start:end], "range", span))
            i += 1
            continue
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
        if role == "point" and atom.anchor.kind == "date" and i + 1 < len(atoms):
            # "(October 2003 – May 2005)", "March – June 2006": a dash between two dates
            nxt = atoms[i + 1]
            gap = text[end : nxt.start]
            years = atom.anchor.month is None and nxt.anchor.month is None
            if nxt.anchor.kind == "date" and (
                _DASH_JOIN_RE.fullmatch(gap) or (years and _WORD_JOIN_RE.fullmatch(gap))
            ):
                first = atom.anchor
                if first.year is None and nxt.anchor.year is not None:
                    first = replace(first, year=nxt.anchor.year)
                anchors = [first, nxt.anchor]
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
