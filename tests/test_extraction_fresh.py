"""The once-fresh labelled sets (tuned on since their first runs) and the general fixes
those first runs pointed at (real spaCy model)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from palimpsest.extraction import SpacyExtractor

from .test_extraction import _load_eval

pytestmark = pytest.mark.models

REF = datetime(2025, 9, 15, 12, tzinfo=UTC)  # a Monday
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def ex() -> SpacyExtractor:
    return SpacyExtractor()


@pytest.mark.parametrize(
    "name",
    [
        # first, untouched runs: fresh P 0.95 / R 0.91, fresh2 (written after the fresh
        # set's fixes) P 0.96 / R 0.93; see bench/results/. Each tuned on since.
        "extraction_gold_fresh.jsonl",
        "extraction_gold_fresh2.jsonl",
        # untouched: P 0.97 / R 0.88 and one fact on a nothing-sentence; tuned on since
        "extraction_gold_fresh3.jsonl",
    ],
)
def test_once_fresh_sets_now_tuned_meet_targets(ex: SpacyExtractor, name: str) -> None:
    """A regression gate on TUNED sets: each was fresh (labelled before the extractor
    saw it) for its first run only, whose scores are the honest estimates
    (bench/results/extraction-fresh*-untouched-*.txt); the rules were fixed against
    them since, so passing here says nothing about unseen text. No fresh set gates
    the suite today."""
    bench = _load_eval()
    report = bench.evaluate(DATA / name, extractor=ex)
    summary = bench.format_report(report, verbose=True)
    assert report.rows >= 50 and report.nothing_rows >= 15
    assert report.nothing_facts == 0, summary
    assert report.precision >= 0.95, summary
    assert report.recall >= 0.93, summary
    assert report.time_agreement >= 0.95, summary


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "used to" ends a taste, as it ends a state
        ("I used to adore opera.", {("user", "likes", "opera", "end")}),
        # a vague "... ago" is no part of the object
        ("I stopped playing tennis years ago.", {("user", "plays", "tennis", "end")}),
        # visiting people somewhere is visiting the place
        ("We visited our friends in Porto last month.", {("user", "visited", "Porto", "assert")}),
        ("I visited my aunt.", set()),
        # acquiring a nationality
        ("I received my Irish passport in 2020.", {("user", "nationality", "Irish", "assert")}),
        # a person introduced by a description and a name
        ("I married a man named Tomás.", {("user", "spouse", "Tomás", "assert")}),
        # a start with no state the vocabulary knows is a plan
        (
            "I will start a pottery course next month.",
            {("user", "plans", "start a pottery course", "assert")},
        ),
        # "retired" is kept verbatim by the lemmatiser
        (
            "My father retired from Boeing in 2019.",
            {("user's father", "works_at", "Boeing", "end")},
        ),
        # universities named bare
        ("My niece goes to Yale.", {("user's niece", "studies_at", "Yale", "assert")}),
        # where a job is done is no part of its title
        ("My uncle works as a nurse in Leeds.", {("user's uncle", "job_title", "nurse", "assert")}),
        # a future age is a state that starts then, not a plan
        ("I'm turning 40 next week.", {("user", "age", "40", "assert")}),
        # switching from one tool to another ends the first
        (
            "I switched from Chrome to Firefox in May.",
            {("user", "uses", "Firefox", "assert"), ("user", "uses", "Chrome", "end")},
        ),
        # evidential hedges drop the sentence; a capitalised "-ly" adverb is not a name
        ("Reportedly Ana lives in Quito.", set()),
        # manner adverbs between a verb and its preposition
        ("Kate works remotely for Shopify.", {("Kate", "works_at", "Shopify", "assert")}),
        # plural relatives without a predicate of their own still own their facts
        ("My cousins live in Accra.", {("user's cousins", "lives_in", "Accra", "assert")}),
        # moving away from a place ends it; moving between non-places is no residence
        ("We moved away from Leeds.", {("user", "lives_in", "Leeds", "end")}),
        ("I moved from sales to marketing.", set()),
        # "no longer with X" ends a partnership; "with X" alone is mere company
        ("I'm not with Dana anymore.", {("user", "partner", "Dana", "end")}),
        ("I'm no longer with Dana.", {("user", "partner", "Dana", "end")}),
        ("I'm with Dana.", set()),
    ],
)
def test_general_fixes(
    ex: SpacyExtractor, text: str, expected: set[tuple[str, str, str, str]]
) -> None:
    got = {
        (f.subject, f.predicate, f.object, f.op) for f in ex.extract(text, occurred_at=REF).facts
    }
    assert got == expected
