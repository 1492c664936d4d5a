"""Date resolution for the extraction room: pure, no model."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from palimpsest.extraction import find_time_mentions, resolve_time

TUE = datetime(2024, 7, 2, 10, tzinfo=UTC)  # a Tuesday
WED_JAN = datetime(2025, 1, 15, 9, tzinfo=UTC)


def d(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


@pytest.mark.parametrize(
    ("expr", "ref", "tense", "valid_from", "valid_to", "precision"),
    [
        ("in June 2024", TUE, None, "2024-06-01", None, "month"),
        ("since 2021", TUE, None, "2021-01-01", None, "year"),
        ("from 2019 to 2021", TUE, None, "2019-01-01", "2021-01-01", "year"),
        ("from 2019 through 2021", TUE, None, "2019-01-01", "2022-01-01", "year"),
        ("between 2010 and 2012", TUE, None, "2010-01-01", "2012-01-01", "year"),
        ("from March 2020 to June 2021", TUE, None, "2020-03-01", "2021-06-01", "month"),
        ("until 2020", TUE, None, None, "2020-01-01", "year"),
        ("through 2021", TUE, None, None, "2022-01-01", "year"),
        ("last week", TUE, None, "2024-06-24", None, "day"),
        ("this week", TUE, None, "2024-07-01", None, "day"),
        ("next week", TUE, None, "2024-07-08", None, "day"),
        ("last month", TUE, None, "2024-06-01", None, "month"),
        ("last month", WED_JAN, None, "2024-12-01", None, "month"),
        ("next month", TUE, None, "2024-08-01", None, "month"),
        ("last year", TUE, None, "2023-01-01", None, "year"),
        ("this year", TUE, None, "2024-01-01", None, "year"),
        ("next Friday", TUE, None, "2024-07-05", None, "day"),
        ("last Friday", TUE, None, "2024-06-28", None, "day"),
        ("next Tuesday", TUE, None, "2024-07-09", None, "day"),
        ("on Monday", TUE, "past", "2024-07-01", None, "day"),
        ("on Monday", TUE, "future", "2024-07-08", None, "day"),
        ("two years ago", TUE, None, "2022-01-01", None, "year"),
        ("three months ago", TUE, None, "2024-04-01", None, "month"),
        ("ten days ago", TUE, None, "2024-06-22", None, "day"),
        ("a week ago", TUE, None, "2024-06-25", None, "day"),
        ("a couple of years ago", TUE, None, "2022-01-01", None, "year"),
        ("in two weeks", TUE, None, "2024-07-16", None, "day"),
        ("last June", TUE, None, "2024-06-01", None, "month"),
        ("last June", datetime(2024, 6, 10, tzinfo=UTC), None, "2023-06-01", None, "month"),
        ("last March", TUE, None, "2024-03-01", None, "month"),
        ("next March", TUE, None, "2025-03-01", None, "month"),
        ("last summer", TUE, None, "2023-06-01", None, "month"),
        ("last summer", WED_JAN, None, "2024-06-01", None, "month"),
        ("last winter", WED_JAN, None, "2023-12-01", None, "month"),
        ("next spring", TUE, None, "2025-03-01", None, "month"),
        ("yesterday", TUE, None, "2024-07-01", None, "day"),
        ("today", TUE, None, "2024-07-02", None, "day"),
        ("tomorrow", WED_JAN, None, "2025-01-16", None, "day"),
        ("in March", TUE, "past", "2024-03-01", None, "month"),
        ("in September", TUE, "past", "2023-09-01", None, "month"),
        ("in September", TUE, "future", "2024-09-01", None, "month"),
        ("in January", WED_JAN, "past", "2025-01-01", None, "month"),
        ("in June", WED_JAN, "future", "2025-06-01", None, "month"),
        ("on 12 May 1990", TUE, None, "1990-05-12", None, "day"),
        ("on July 4th, 1985", TUE, None, "1985-07-04", None, "day"),
        ("on the 14th of February", TUE, "past", "2024-02-14", None, "day"),
        ("2023-11-20", TUE, None, "2023-11-20", None, "day"),
        ("on 2010/06/17", TUE, None, "2010-06-17", None, "day"),
        ("on 2010/3/2", TUE, None, "2010-03-02", None, "day"),
        ("for three years", TUE, None, "2021-01-01", None, "year"),
        ("in 2030", TUE, None, "2030-01-01", None, "year"),
    ],
)
def test_resolution(
    expr: str,
    ref: datetime,
    tense: str | None,
    valid_from: str | None,
    valid_to: str | None,
    precision: str,
) -> None:
    w = resolve_time(expr, ref, tense)  # type: ignore[arg-type]
    assert w is not None, expr
    assert w.valid_from == (d(valid_from) if valid_from else None)
    assert w.valid_to == (d(valid_to) if valid_to else None)
    assert w.precision == precision


def test_results_are_aware_utc_even_for_other_zones() -> None:
    tokyo = timezone(timedelta(hours=9))
    # 2024-07-02 02:00 in Tokyo is still 2024-07-01 in UTC.
    w = resolve_time("yesterday", datetime(2024, 7, 2, 2, tzinfo=tokyo))
    assert w is not None and w.valid_from == d("2024-06-30")
    assert w.valid_from.tzinfo is UTC


def test_naive_reference_is_rejected() -> None:
    with pytest.raises(ValueError, match="aware"):
        resolve_time("yesterday", datetime(2024, 7, 2))


@pytest.mark.parametrize(
    "text",
    [
        "I may move soon",  # lower-case "may" is a modal, not a month
        "I have 2 cats",
        "Ubuntu 22.04 is fine",
        "I march every day",
        "the 1990s were fun",
        "my score was 2019 points",  # a bare year needs a time preposition
        "on 06/17/2010",  # month or day first: ambiguous, left unread
    ],
)
def test_no_false_time_expressions(text: str) -> None:
    assert resolve_time(text, TUE) is None


def test_vague_mentions_are_found_but_unresolved() -> None:
    mentions = find_time_mentions("These days I'm based in Austin, recently more than ever.")
    assert [m.role for m in mentions] == ["vague", "vague"]
    assert all(m.resolve(TUE) is None for m in mentions)


def test_every_weekday_is_habit_not_a_date() -> None:
    (m,) = find_time_mentions("I play badminton every Tuesday.")
    assert m.role == "vague"


def test_mention_spans_include_the_introducing_word() -> None:
    text = "I lived in Paris from 2019 to 2021 and moved to Lyon last week."
    spans = [(m.text, m.role) for m in find_time_mentions(text)]
    assert spans == [("from 2019 to 2021", "range"), ("last week", "point")]
    for m in find_time_mentions(text):
        assert text[m.start : m.end] == m.text


def test_point_keeps_its_period() -> None:
    w = resolve_time("in 2018", TUE)
    assert w is not None and w.period is not None
    assert (w.period.start, w.period.end) == (d("2018-01-01"), d("2019-01-01"))


def test_invalid_calendar_dates_are_ignored() -> None:
    assert resolve_time("on February 30, 2024", TUE) is None
    assert resolve_time("on 2010/13/45", TUE) is None


def test_long_text_finds_every_mention_in_place() -> None:
    """Every mention of a long text is found where it is (its speed is a bench's)."""
    line = "I moved to Oslo in 2019 and worked there until March 2021. "
    text = line * 2000
    mentions = find_time_mentions(text)
    assert len(mentions) == 4000
    texts = [text[m.start : m.end] for m in mentions]
    assert texts == ["in 2019", "until March 2021"] * 2000, texts[:4]
    assert mentions[-1].start == len(line) * 1999 + line.index("until March 2021")
