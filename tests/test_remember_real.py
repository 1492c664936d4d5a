"""remember() on real conversations and documents (issue 16), through the engine.

Real spaCy model and real Kùzu; no embedder (these are about facts). Turns are
quoted from LoCoMo's development conversations (conv-26, conv-41) and
passages from TimeQA's ``human_annotated_train.json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest import Memory, ValidationError

from .conftest import Clock, utc

pytestmark = pytest.mark.models

CAROLINE = "I went to a LGBTQ support group yesterday and it was so powerful."  # conv-26 D1:3
MELANIE = "Yeah, I painted that lake sunrise last year! It's special to me."  # conv-26 D1:14
WHEN = "2023-05-08T13:56:00Z"


def test_named_participants_speak_for_themselves(tmp_path: Path, clock: Clock) -> None:
    people = ["Caroline", "Melanie"]
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        a = mem.remember(CAROLINE, speaker="Caroline", occurred_at=WHEN, participants=people)
        b = mem.remember(
            MELANIE, speaker="Melanie", occurred_at="2023-05-08T13:57:00Z", participants=people
        )
        assert a.author_kind == b.author_kind == "user"
        assert [(f.subject, f.predicate, f.object) for f in a.facts] == [
            ("Caroline", "attended", "LGBTQ support group")
        ]
        assert a.facts[0].valid_from == utc("2023-05-07T00:00:00")
        assert not a.facts[0].quarantined
        # the snapshot of a two-person chat holds what each said of themselves
        snap = mem.snapshot(valid_at="2023-06-01T00:00:00Z")
        held = {(e.entity, f.predicate, f.object) for e in snap.entities for f in e.facts}
        assert ("Caroline", "attended", "LGBTQ support group") in held
        assert ("Melanie", "made", "lake sunrise") in held
        # with no participants a named speaker is a third party, as before: quarantined
        c = mem.remember(CAROLINE, speaker="Caroline", occurred_at="2023-05-08T14:00:00Z")
        assert c.author_kind == "third_party" and all(f.quarantined for f in c.facts)


def test_with_two_participants_you_is_the_other_one(tmp_path: Path, clock: Clock) -> None:
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        ep = mem.remember(
            "You live in Boston.",
            speaker="Caroline",
            occurred_at=WHEN,
            participants=["Caroline", "Melanie"],
        )
        # what Caroline says of Melanie is Melanie's only when she confirms it
        assert [(f.subject, f.object, f.quarantined) for f in ep.facts] == [
            ("Melanie", "Boston", True)
        ]


@pytest.mark.parametrize(
    "participants", ["Caroline", [""], [None], ["x" * 600], [f"p{i}" for i in range(101)]]
)
def test_bad_participants_are_refused_and_store_nothing(
    tmp_path: Path, clock: Clock, participants: object
) -> None:
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        with pytest.raises(ValidationError):
            mem.remember(CAROLINE, speaker="Caroline", participants=participants)  # type: ignore[arg-type]
        assert mem.stats().episodes == 0


def test_he_across_turns_is_the_same_in_a_batch_and_one_by_one(tmp_path: Path) -> None:
    # conv-41 D21:5 names Maria's cousin; the next turn says "she"
    turns = [
        {
            "text": "Besides that, my cousin just had a tough time recently, so I'm lending a hand "
            "in helping her find a new place.",
            "speaker": "Maria",
            "occurred_at": "2023-07-03T20:43:00Z",
            "session": "conv-41/session_21",
            "participants": ["John", "Maria"],
        },
        {
            "text": "She moved to Denver last month.",
            "speaker": "Maria",
            "occurred_at": "2023-07-03T20:44:00Z",
            "session": "conv-41/session_21",
            "participants": ["John", "Maria"],
        },
    ]

    def shape(eps: list) -> list:  # type: ignore[type-arg]
        return [sorted((f.subject, f.predicate, f.object) for f in e.facts) for e in eps]

    with (
        Memory.open(tmp_path / "one", embedder=None) as one,
        Memory.open(tmp_path / "bulk", embedder=None) as bulk,
    ):
        singles = [one.remember(**t) for t in turns]
        batch = bulk.remember_many(turns)
        assert shape(singles) == shape(batch)
        assert ("Maria's cousin", "lives_in", "Denver") in shape(batch)[1]


# --------------------------------------------------------------------------- documents

_SECTION = (
    "Newton D. Baker House\n\n"
    "Newton D. Baker House, also known as Jacqueline Kennedy House, is a historic house at 3017 "
    "N Street NW in Washington, D.C..\n\n"
)
_OWNER = "In 1915, Col. William E. Pattison French purchased the house, and began renting it to Newton D. Baker in 1916."  # noqa: E501
# A paragraph of the same passage with no facts of its own, repeated to pass 60,000 characters.
_FILLER = (
    "The house was built in 1794 by Thomas Beall. During its early years, the house was situated "
    "on a large plot of land and was said to have had a servants wing attached to the east side. "
    "At that time N Street was known as Gay Street and was situated higher than today.\n\n"
)


def test_a_long_document_is_stored_whole_and_read_in_sections(tmp_path: Path, clock: Clock) -> None:
    text = _SECTION + _FILLER * (60_000 // len(_FILLER) + 1) + _OWNER
    assert len(text) > 60_000
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        ep = mem.remember(text, speaker="Wikipedia", author_kind="document", occurred_at=WHEN)
        assert mem.episode(ep.id).text == text  # nothing lost
        # the last section, 60,000 characters in, is read; its facts wait in quarantine
        owners = mem.facts(
            "Newton D. Baker House",
            "owned_by",
            valid_at="1920-01-01T00:00:00Z",
            include_quarantined=True,
        )
        assert [f.object for f in owners] == ["Col. William E. Pattison French"]
        assert owners[0].quarantined
        assert mem.facts("Newton D. Baker House", valid_at="1920-01-01T00:00:00Z") == []


def test_a_turn_of_only_emoji_is_an_episode_without_facts(tmp_path: Path, clock: Clock) -> None:
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        ep = mem.remember("😂😂🎉🙌", speaker="Melanie", participants=["Caroline", "Melanie"])
        assert ep.facts == [] and mem.episode(ep.id).text == "😂😂🎉🙌"


def test_a_speaker_name_that_looks_like_cypher_is_only_a_name(tmp_path: Path, clock: Clock) -> None:
    evil = "Robert'}) MATCH (n) DETACH DELETE n //"
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        first = mem.remember(CAROLINE, speaker="Caroline", participants=["Caroline", evil])
        before = mem.stats()
        ep = mem.remember(MELANIE, speaker=evil, participants=["Caroline", evil])
        assert ep.speaker == evil
        assert [(f.subject, f.predicate) for f in ep.facts] == [(evil, "made")]
        after = mem.stats()
        assert after.episodes == before.episodes + 1  # nothing deleted, one added
        assert mem.episode(first.id).text == CAROLINE
        assert mem.facts("Caroline", "attended")[0].object == "LGBTQ support group"
        assert mem.facts(evil, "made", include_quarantined=True)[0].object == "lake sunrise"


def test_a_year_first_slash_date_dates_the_fact_and_leaves_the_object(
    tmp_path: Path, clock: Clock
) -> None:
    # TimelineQA's lifelog writes days as 2010/06/17; the object used to keep the date.
    with Memory.open(tmp_path / "m", clock=clock, embedder=None) as mem:
        ep = mem.remember("I did swimming on 2010/06/17.", occurred_at=utc("2010-06-20T09:00:00Z"))
        assert [(f.predicate, f.object, f.valid_from) for f in ep.facts] == [
            ("activity", "swimming", utc("2010-06-17T00:00:00Z"))
        ]
