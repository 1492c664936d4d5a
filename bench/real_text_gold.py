"""Gold answers of the real-text bench (`real_text.py`): content words, dates, TimeQA times.

    >>> sorted(content("She painted the sunsets"))
    ['paint', 'sunset']

LoCoMo's temporal answers name a period ("7 May 2023", "the Friday before 15
July 2023"); TimeQA's questions name a time ("from 1811 to 1827") and are
space-tokenised. Pure functions, no engine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from urllib.parse import unquote

# --------------------------------------------------------------------------- words

STOP = {
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "from",
    "by", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did",
    "doing", "have", "has", "had", "having", "i", "me", "my", "mine", "we", "us", "our", "you",
    "your", "yours", "he", "him", "his", "she", "her", "hers", "it", "its", "they", "them",
    "their", "this", "that", "these", "those", "there", "here", "what", "which", "who", "whom",
    "whose", "when", "where", "why", "how", "not", "no", "so", "too", "very", "just", "also",
    "than", "then", "about", "into", "over", "after", "before", "up", "down", "out", "off",
    "again", "once", "all", "any", "both", "each", "few", "more", "most", "other", "some",
    "such", "only", "own", "same", "can", "will", "would", "should", "could", "may", "might",
    "must", "shall", "s", "t", "d", "ll", "m", "re", "ve", "y", "o", "let", "lets", "get",
    "got", "really", "much", "many", "thing", "things", "something", "anything", "stuff",
    "lot", "bit", "way",
}  # fmt: skip
_WORD = re.compile(r"[a-z0-9]+")


def stem(w: str) -> str:
    """Crude suffix stripping, enough to match painting/painted/paints, create/creating.

    >>> [stem(w) for w in ("painting", "painted", "paints", "agencies", "class")]
    ['paint', 'paint', 'paint', 'agency', 'class']
    >>> stem("creating") == stem("create"), stem("running") == stem("run")
    (True, True)
    """
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    for suf in ("ing", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3 and not w.endswith("ss"):
            w = w[: -len(suf)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiouls":
                w = w[:-1]  # running -> run
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


def words(text: str) -> list[str]:
    return _WORD.findall(text.casefold().replace("'", "").replace("\u2019", ""))


def content(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOP and len(w) > 1}


def half_in(part: set[str], whole: set[str]) -> bool:
    """At least half of `part` (non-empty) is in `whole`."""
    return bool(part) and 2 * len(part & whole) >= len(part)


# --------------------------------------------------------------------------- gold dates

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
_MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES.split())}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTHS.update({"sept": 9, "janury": 1, "januarty": 1})
_DAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday"
_WEEKDAYS = {d: i for i, d in enumerate(_DAY_NAMES.split())}
_NUM = {"one": 1, "two": 2, "three": 3, "four": 4, "a": 1}


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


def _month_span(y: int, m: int) -> tuple[datetime, datetime]:
    ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
    return _day(y, m, 1), _day(ny, nm, 1)


def _find_date(text: str) -> tuple[datetime, datetime] | None:
    """The period a plain date names: day, month or year."""
    t = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text.casefold())
    t = re.sub(r"(\d)([a-z])", r"\1 \2", t)  # "6October" -> "6 October"
    t = t.replace("`", "").replace(".", " ")
    mon = r"(?P<mon>[a-z]+)"
    for rx in (
        rf"\b(?P<d>\d{{1,2}})\s+{mon},?\s+(?P<y>\d{{4}})\b",
        rf"\b{mon}\s+(?P<d>\d{{1,2}}),?\s+(?P<y>\d{{4}})\b",
    ):
        for m in re.finditer(rx, t):
            if m.group("mon") in _MONTHS:
                try:
                    start = _day(int(m.group("y")), _MONTHS[m.group("mon")], int(m.group("d")))
                except ValueError:
                    return None
                return start, start + timedelta(days=1)
    for m in re.finditer(rf"\b{mon},?\s+(?P<y>\d{{4}})\b", t):
        if m.group("mon") in _MONTHS:
            return _month_span(int(m.group("y")), _MONTHS[m.group("mon")])
    m = re.search(r"\b(?P<y>(?:19|20)\d\d)\b", t)
    if m:
        y = int(m.group("y"))
        return _day(y, 1, 1), _day(y + 1, 1, 1)
    return None


_RELATIVE = re.compile(
    r"^(?:the )?(?P<n>\w+ )?(?P<what>week|weekend|weekends|weeks|\w+day) (?P<rel>before|after|of) "
)


def gold_period(answer: str) -> tuple[datetime, datetime] | None:
    """The period a LoCoMo temporal answer names, or None when it names none.

    >>> gold_period("7 May 2023")[0].date().isoformat()
    '2023-05-07'
    >>> [d.date().isoformat() for d in gold_period("The Friday before 15 July 2023")]
    ['2023-07-14', '2023-07-15']
    """
    a = " ".join(answer.split()).casefold().strip(" .")
    base = _find_date(a)
    if base is None:
        return None
    start, end = base
    m = _RELATIVE.match(a)
    if m:
        what, rel = m.group("what"), m.group("rel")
        n = _NUM.get((m.group("n") or "").strip(), 1) if m.group("n") else 1
        ref = start
        if what in _WEEKDAYS:
            back = (ref.weekday() - _WEEKDAYS[what]) % 7 or 7
            ahead = (_WEEKDAYS[what] - ref.weekday()) % 7 or 7
            d = ref - timedelta(days=back) if rel == "before" else ref + timedelta(days=ahead)
            return d, d + timedelta(days=1)
        if what in ("week", "weeks"):
            if rel == "of":
                monday = ref - timedelta(days=ref.weekday())
                return monday, monday + timedelta(days=7)
            if rel == "before":
                monday = ref - timedelta(days=ref.weekday())
                return monday - timedelta(days=7 * n), ref - timedelta(days=7 * (n - 1))
            return ref, ref + timedelta(days=7 * n + 7)
        if what in ("weekend", "weekends"):
            sat = ref - timedelta(days=(ref.weekday() - 5) % 7 or 7)  # the Saturday before
            if rel == "before":
                sat = sat - timedelta(days=7 * (n - 1))
            elif rel == "after":
                sat = ref + timedelta(days=(5 - ref.weekday()) % 7 or 7)
            elif ref.weekday() >= 5:  # "the weekend of" a Saturday or Sunday
                sat = ref - timedelta(days=ref.weekday() - 5)
            else:
                sat = ref + timedelta(days=5 - ref.weekday())
            return sat, sat + timedelta(days=2)
    if re.match(r"^(?:the )?(?:summer)\b|\bsummer\b", a) and end - start > timedelta(days=40):
        return _day(start.year, 6, 1), _day(start.year, 9, 1)
    if a.startswith("last week of") and end - start > timedelta(days=20):
        return end - timedelta(days=7), end
    if a.startswith("first weekend of") and end - start > timedelta(days=20):
        d = start + timedelta(days=(5 - start.weekday()) % 7)
        return d, d + timedelta(days=2)
    return start, end


# --------------------------------------------------------------------------- TimeQA


def detokenise(text: str) -> str:
    """Undo the corpus's space tokenisation.

    >>> detokenise("Newton D . Baker House , also known as J . F . K . ( 1917 – 1963 ) .")
    'Newton D. Baker House, also known as J. F. K. (1917 – 1963).'
    """
    t = " ".join(text.split())
    t = re.sub(r"\s+([,.;:!?%)\]}])", r"\1", t)
    t = re.sub(r"([(\[{$])\s+", r"\1", t)
    t = re.sub(r"\s+('s|'|n't)\b", r"\1", t)
    return t


def page_title(link: str) -> str:
    return unquote(link.rsplit("/", 1)[-1]).replace("_", " ")


_QMON = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"


def _qpoint(text: str) -> tuple[datetime, datetime] | None:
    m = re.fullmatch(rf"\s*(?:(?P<mon>{_QMON})\s+)?(?P<y>\d{{3,4}})\s*", text, re.I)
    if not m:
        return None
    y = int(m.group("y"))
    if m.group("mon"):
        mo = _MONTHS.get(m.group("mon").rstrip(".").casefold()[:3])
        if mo is None:
            return None
        return _month_span(y, mo)
    return _day(y, 1, 1), _day(y + 1, 1, 1)


def question_time(q: str) -> datetime | None:
    """The middle of the time a TimeQA question asks about.

    >>> question_time("Who owned the house from 1811 to 1827?").date().isoformat()
    '1819-07-02'
    """
    pt = rf"(?:{_QMON}\s+)?\d{{3,4}}"
    m = re.search(
        rf"\b(?:from|between)\s+(?P<a>{pt})\s+(?:to|and|until|till)\s+(?P<b>{pt})\b", q, re.I
    )
    if m:
        a, b = _qpoint(m.group("a")), _qpoint(m.group("b"))
        if a is None or b is None or b[1] <= a[0]:
            return None
        return a[0] + (b[1] - a[0]) / 2
    m = re.search(rf"\b(?:in|during|by|of|around|since|after|before)\s+(?P<a>{pt})\b", q, re.I)
    if m is None:
        m = re.search(rf"(?P<a>\b{pt})\b", q, re.I)
    if m:
        a = _qpoint(m.group("a"))
        if a is not None:
            return a[0] + (a[1] - a[0]) / 2
    return None


def answer_hit(objects: Iterable[str], answers: Sequence[str]) -> bool:
    objs = [content(o) for o in objects]
    for ans in answers:
        aw = content(detokenise(ans))
        if not aw:
            continue
        for ow in objs:
            if aw <= ow and len(ow) <= 2 * len(aw) + 2:
                return True
            if ow and ow <= aw and 2 * len(ow) >= len(aw):
                return True
    return False
