"""The grammar of time expressions: month names, regexes, and the atoms they find.

>>> [(a.anchor.year, a.anchor.month) for a in _atoms("from March 2019 to June 2021")]
[(2019, 3), (2021, 6)]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._date_periods import _Anchor, _valid_day

_MONTHS: dict[str, int] = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3,
    "april": 4, "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7,
    "august": 8, "aug": 8, "september": 9, "sep": 9, "sept": 9, "october": 10,
    "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
# Month names that are also ordinary words count only when capitalised.
_CASE_SENSITIVE_MONTHS = {"may", "march", "mar", "jan", "aug", "august", "dec", "sep", "oct"}
_WEEKDAY_ABBR: dict[str, int] = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
    "sat": 5, "sun": 6,
}  # fmt: skip
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
# Years 1000-2099: history is written about too ("In 1796, John Laird lived there").
_YEAR_RE = r"(?P<{g}>(?:1\d|20)\d\d)"
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
    # Year first with slashes ("2010/06/17", lifelogs and logs) is as unambiguous as ISO;
    # "06/17/2010" is not (US or European order), so it stays unread.
    ("iso", re.compile(r"\b(?P<y>(?:1[6-9]|20)\d\d)/(?P<m>\d{1,2})/(?P<d>\d{1,2})\b")),
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
            r"the day after tomorrow|last night|this (?:morning|afternoon|evening))\b",
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
    # "last Tues", "Last Fri": abbreviations only after a word that makes them a day
    (
        "weekday",
        re.compile(
            r"\b(?P<k>last|this|next|coming|on)\s+(?P<wd>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\b\.?",
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
    # "(1881–1887)", "2000-2001", "2005–06": a span of years needs no word before it
    (
        "year_span",
        re.compile(
            rf"\b{_y('y')}\s*[-–—]\s*(?P<y2>(?:1\d|20)\d\d|\d\d|present|now|today)\b(?![-–/]\d)",
            re.I,
        ),
    ),
    # "later that year", "the following year": a year named earlier in the text
    (
        "anaphor",
        re.compile(
            r"\b(?:(?:later|earlier) )?(?P<k>that|the same|that same|the following|the next|"
            r"the previous|the prior|the preceding) (?P<unit>year|month)\b",
            re.I,
        ),
    ),
    ("year", re.compile(rf"\b{_y('y')}\b")),
]

_PREFIX_RE = re.compile(
    r"(?P<p>\b(?:since|until|till|til|up to|up until|through|thru|from|between|during|"
    r"in|on|at|as of|starting|beginning|by|before|after|back in|of|for|"
    r"(?:in )?(?:approximately|about|around|circa|c\.))\s+)$",
    re.I,
)
_SPAN_AHEAD = re.compile(r"\s+(?:to|through|until|till)\s+(?:1\d|20)\d\d\b")
_RANGE_JOIN_RE = re.compile(r"^\s*(?P<j>to|until|till|through|thru|-|–|and)\s*", re.I)
# A bare year is only a date after a word that introduces a time.
_YEAR_PREFIXES = {
    "since", "until", "till", "til", "through", "thru", "from", "between", "during",
    "in", "as of", "by", "before", "after", "back in", "of", "up to", "up until",
    "starting", "beginning", "approximately", "about", "around", "circa", "c.",
    "in approximately", "in about", "in around", "in circa", "in c.",
}  # fmt: skip


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
    if kind == "year_span":
        y, y2 = int(g["y"]), g["y2"]
        if not y2.isdigit():
            return _Anchor("year_span", y, n=0)  # "2019–present": open at its end
        end = int(y2) if len(y2) == 4 else (y // 100) * 100 + int(y2)
        return _Anchor("year_span", y, n=end) if end > y else None
    if kind == "anaphor":
        shift = {"the following": 1, "the next": 1, "the previous": -1, "the prior": -1}
        shift["the preceding"] = -1
        return _Anchor("anaphor", n=shift.get(g["k"].lower(), 0), unit=g["unit"].lower())
    if kind == "rel_word":
        w = g["w"].lower()
        offsets = {
            "yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1,
            "the day before yesterday": -2, "the day after tomorrow": 2, "last night": -1,
            "this morning": 0, "this afternoon": 0, "this evening": 0,
        }  # fmt: skip
        return _Anchor("rel_day", n=offsets[w])
    if kind == "shift":
        k = g["k"].lower()
        n = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[k]
        return _Anchor("shift", n=n, unit=g["unit"].lower())
    if kind == "weekday":
        wd = g["wd"].lower()
        mode = (g["k"] or "").lower()
        day = _WEEKDAYS[wd] if wd in _WEEKDAYS else _WEEKDAY_ABBR[wd]
        return _Anchor("weekday", weekday=day, mode="" if mode == "on" else mode)
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
                # "... to 2021" is fine when it closes a range; checked later. "1910 through
                # 1914" opens one.
                opens = _SPAN_AHEAD.match(text, end) is not None
                closes = re.search(r"\b(?:to|and|through|until|till|-|–)\s*$", before)
                if not introduced and not closes and not opens:
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
