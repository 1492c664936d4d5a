"""Facts a user can trust (issue 31): whole names, entity types, the learned precision gate.

The turns quoted below come from LoCoMo's development conversations (conv-26, conv-30,
conv-41, conv-42, conv-43; the turn id is given with each; CC BY-NC 4.0, quoted for
evaluation), never from a holdout one. Dates are each turn's session date.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.extraction import CandidateFact, Extraction, ExtractRequest, SpacyExtractor
from palimpsest.extraction._gate_features import feature_names
from palimpsest.extraction._kinds import named_kinds, noun_kind, object_kind
from palimpsest.extraction._precision import GATE_WEIGHTS, PrecisionGate
from palimpsest.extraction._wordnet import noun_class, verb_class

from .conftest import Clock

ROOT = Path(__file__).resolve().parents[1]
CAROLINE, MELANIE = "Caroline", "Melanie"
# conv-26, session 4 (27 June 2023) and session 16 (13 September 2023)
D4_15 = (
    "Thanks, Melanie. It really mattered. My own journey and the support I got made a huge "
    "difference. Now I want to help people go through it too. I saw how counseling and support "
    "groups improved my life, so I started caring more about mental health and understanding "
    "myself. Now I'm passionate about creating a safe, inviting place for people to grow."
)
D16_3 = (
    "Melanie, that photo's amazing! I love all the yellow leaves, it looks so cozy. That sounds "
    "like fun! Seeing how excited they get for the little things is awesome, it's so contagious."
)
D9_17 = (
    "Wow, Caroline! It really conveys unity and strength - such a gorgeous piece! My kids and I "
    "just finished another painting like our last one."
)
D12_2 = (
    "Hey Caroline, sorry about the hike. It sucks when people are so closed-minded. Strong "
    "support really helps. FYI, I finished another pottery project - want to see a pic?"
)
D1_3 = "I went to a LGBTQ support group yesterday and it was so powerful."
D13_4 = (
    "Yeah, it's normal to be both excited and nervous with a big decision. And thanks for "
    "asking, they're good- we got another cat named Bailey too. Here's a pic of Oliver. Can you "
    "show me one of Oscar?"
)


def turn(text: str, speaker: str, when: str, session: str = "s") -> dict[str, Any]:
    other = MELANIE if speaker == CAROLINE else CAROLINE
    return {
        "text": text,
        "speaker": speaker,
        "occurred_at": when,
        "session": session,
        "participants": [speaker, other],
    }


# --------------------------------------------------------------------------- plain data


def test_the_packaged_gate_is_plain_data_for_todays_features() -> None:
    raw = json.loads(GATE_WEIGHTS.read_text())  # JSON, not pickle: numbers and names only
    assert raw["features"] == list(feature_names())
    gate = PrecisionGate.load()
    assert 0.0 < gate.threshold < 1.0
    assert len(gate.coef) == len(feature_names())
    with pytest.raises(ValueError, match="other features"):
        PrecisionGate.from_dict({**raw, "features": raw["features"][:-1]})


def test_a_fact_below_the_threshold_is_held_with_its_reason() -> None:
    names = feature_names()
    gate = PrecisionGate.from_dict(
        {
            "features": list(names),
            "mean": [0.0] * len(names),
            "scale": [1.0] * len(names),
            "coef": [-3.0 if n == "object_after_another" else 0.0 for n in names],
            "intercept": 1.0,
            "threshold": 0.5,
        }
    )
    fact = CandidateFact("Melanie", "made", "painting", "assert", None, None, None, 0.75, "make")
    plain = [0.0] * len(names)
    another = [1.0 if n == "object_after_another" else 0.0 for n in names]
    kept, held = gate.judge(fact, plain), gate.judge(fact, another)
    assert kept.doubt is None and kept.gate == pytest.approx(0.7311, abs=1e-3)
    assert held.gate is not None and held.gate < 0.5
    assert held.doubt is not None and "'another'" in held.doubt and "0.50" in held.doubt


def test_types_come_from_context_predicate_and_wordnet() -> None:
    named = named_kinds([("pet", "Luna"), ("sibling", "Mira")], "Caroline", "Melanie")
    assert named == {"luna": "animal", "mira": "person", "caroline": "person", "melanie": "person"}
    assert object_kind("lives_in", "Oslo", None) == "place"
    assert object_kind("attended", "LGBTQ support group", None) == "event"
    assert object_kind("likes", "hiking in the mountains", None) == "activity"
    assert object_kind("likes", "clarinet", None) == "object"
    assert noun_kind("nephews") == "person" and noun_kind("confidence") is None
    assert (noun_class("wife"), verb_class("chase")) == ("person", "motion")


def test_the_wordnet_table_ships_with_its_licence() -> None:
    data = ROOT / "palimpsest" / "extraction" / "data"
    assert "Princeton University" in (data / "wordnet-LICENSE").read_text()
    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "data/*" in package_data["package-data"]["palimpsest.extraction"]


class Reader:
    """An extractor that reads one canned fact per text: what the engine does with a
    rating, a doubt and types, without spaCy."""

    def __init__(self, fact: CandidateFact) -> None:
        self.fact = fact

    def extract(self, text: str, **kw: Any) -> Extraction:  # pragma: no cover - protocol
        raise NotImplementedError

    def extract_many(self, items: Sequence[ExtractRequest]) -> list[Extraction]:
        return [Extraction((), (self.fact,), 0.5, "fact", False, None) for _ in items]


def test_the_gate_decides_quarantine_and_the_review_says_why(tmp_path: Path, clock: Clock) -> None:
    open_verb = CandidateFact(
        "Caroline",
        "pass",
        "adoption agency interviews",
        "assert",
        None,
        None,
        None,
        0.5,
        "fallback_lemma",
        subject_type="person",
        object_type="event",
    )
    rated = replace(open_verb, gate=0.93)
    doubted = replace(open_verb, object="mentor", gate=0.2, doubt="the precision gate ...: x")
    for i, fact in enumerate((rated, doubted, open_verb)):
        with Memory.open(tmp_path / f"m{i}", clock=clock, extractor=Reader(fact)) as mem:
            ep = mem.remember(
                "some turn", speaker=CAROLINE, occurred_at=clock(), participants=[CAROLINE, MELANIE]
            )
            (f,) = ep.facts
            # rated well: active though its rule alone was weak (0.5 < the floor 0.6);
            # doubted: kept, quarantined; unrated: the floor decides, as before
            assert f.quarantined is (fact is not rated)
            assert f.confidence == (fact.gate if fact.gate is not None else 0.5)
            assert mem.entity("Caroline").entity.type == "person"
            assert mem.entity(fact.object).entity.type == "event"
            why = [w for q in mem.quarantined() for w in q.why]
            assert ("the precision gate ...: x" in why) is (fact is doubted)
            if fact is doubted:
                assert mem.explain(f.id).assertion.decided_by == "gate"


# --------------------------------------------------------------------------- real spaCy


@pytest.fixture(scope="module")
def ex() -> SpacyExtractor:
    return SpacyExtractor()


def read(ex: SpacyExtractor, text: str, when: str, speaker: str, to: str) -> list[CandidateFact]:
    at = datetime.fromisoformat(when).replace(tzinfo=UTC)
    req = ExtractRequest(text, occurred_at=at, speaker=speaker, addressee=to)
    return list(ex.extract_many([req])[0].facts)


@pytest.mark.models
def test_no_fragment_becomes_an_entity(mem: Memory) -> None:
    mem.remember_many(
        [
            turn(D4_15, CAROLINE, "2023-06-27T13:00:00Z", "s4"),
            turn(D16_3, CAROLINE, "2023-09-13T00:10:00Z", "s16"),
            turn(D9_17, MELANIE, "2023-07-17T10:00:00Z", "s9"),
            turn(D12_2, MELANIE, "2023-08-17T13:50:00Z", "s12"),
        ]
    )
    names = {e.name for e in mem.entities()}
    # today these read "likes creating a safe", "likes inviting place", "likes all the
    # yellow leaves", "made another painting", "made another pottery project"
    for fragment in (
        "creating a safe",
        "inviting place",
        "all the yellow leaves",
        "another painting",
        "another pottery project",
    ):
        assert fragment not in names
    assert "creating a safe, inviting place" in names
    text = " ".join((D4_15, D16_3, D9_17, D12_2)).casefold()
    assert all(n.casefold() in text for n in names)  # every entity is a phrase of the text


@pytest.mark.models
def test_a_name_written_without_spaces_stays_whole(ex: SpacyExtractor) -> None:
    # conv-42 D10:6
    text = (
        "Thanks! I usually play CS:GO, but I tried my hand at the local Street Fighter "
        "tournament this time since I play that game a lot with my friends, and turns out I'm "
        "really good!"
    )
    facts = read(ex, text, "2022-05-02T11:54:00", "Nate", "Joanna")
    assert ("plays", "CS:GO") in {(f.predicate, f.object) for f in facts}


@pytest.mark.models
def test_every_speaker_is_a_person(mem: Memory) -> None:
    mem.remember_many(
        [
            turn(D1_3, CAROLINE, "2023-05-08T13:56:00Z"),
            turn(
                "Yeah, I painted that lake sunrise last year! It's special to me.",
                MELANIE,
                "2023-05-08T13:58:00Z",
            ),
            turn(D13_4, MELANIE, "2023-08-23T15:31:00Z"),
        ]
    )
    types = {e.name: e.type for e in mem.entities()}
    assert types[CAROLINE] == types[MELANIE] == "person"
    assert mem.entity(CAROLINE).entity.type == "person"
    assert types["LGBTQ support group"] == "event"
    assert types["Bailey"] == "animal"
    g = mem.snapshot().to_networkx()
    by_name = {d["name"]: d["type"] for _, d in g.nodes(data=True)}
    assert by_name[CAROLINE] == "person" and by_name["Bailey"] == "animal"


@pytest.mark.models
def test_hypothetical_modal_and_question_turns_give_no_active_fact(mem: Memory) -> None:
    turns = [
        # conv-30 D5:23 (Gina to Jon): a cheer and a suggestion
        (
            "Yeah Jon, I'm here for you! Chasing our dreams and helping each other out. Let's "
            "keep movin' forward!",
            "Gina",
            "Jon",
        ),
        # conv-42 D3:1 (Joanna to Nate): a hope, a conditional
        (
            "Hey Nate, long time no see! The screenplay I sent in to the film festival has been on "
            "my mind all day everyday. I keep bouncing between crazy emotions like relief, "
            "excitement and worry! Fingers crossed a producer or director falls in love with it "
            "and it ends up on the big screen - that would be awesome!",
            "Joanna",
            "Nate",
        ),
        # conv-42 D9:9 (Joanna), its first sentence: a hypothetical
        (
            "Thanks Nate! I'm gonna keep writing, but if acting calls out I might give it a try.",
            "Joanna",
            "Nate",
        ),
        # conv-26 D1:10 (Melanie): questions
        (
            "Wow, Caroline! What kinda jobs are you thinkin' of? Anything that stands out?",
            MELANIE,
            CAROLINE,
        ),
        # conv-43 D1:18 (Tim), its last sentences: a question and a wish
        (
            "Have you been to any of the real Potter places? I'd love to explore them someday!",
            "Tim",
            "John",
        ),
    ]
    eps = mem.remember_many(
        [
            {
                "text": t,
                "speaker": s,
                "occurred_at": f"2023-0{i + 1}-01T12:00:00Z",
                "participants": [s, to],
            }
            for i, (t, s, to) in enumerate(turns)
        ]
    )
    assert all(f.quarantined for ep in eps for f in ep.facts)
    assert mem.snapshot().facts == []
    # what the rules read of them is kept, quarantined, with the gate's reason
    held = mem.quarantined()
    assert held and all(any("precision gate" in w for w in q.why) for q in held)


@pytest.mark.models
def test_a_named_time_dates_the_next_sentence(ex: SpacyExtractor) -> None:
    # conv-26 D11:1, said 14 August 2023: the birthday was the night before
    text = (
        "Hey Caroline! Last night was amazing! We celebrated my daughter's birthday with a "
        "concert surrounded by music, joy and the warm summer breeze."
    )
    (f,) = read(ex, text, "2023-08-14T14:24:00", MELANIE, CAROLINE)
    assert f.valid_from == datetime(2023, 8, 13, tzinfo=UTC)


@pytest.mark.models
@pytest.mark.parametrize(
    ("text", "speaker", "to"),
    [
        ("I'm planning a trip to the East Coast.", "John", "Maria"),  # conv-41 D12:17
        (
            "Cheers, John! I'll let you know. I'm off to bake some cakes. Talk to you soon!",
            "Maria",
            "John",
        ),  # conv-41 D25:20
        ("Last week I had a crazy game - crazy intense!", "John", "Tim"),  # conv-43 D5:2
        (
            "Been having some wild games lately, we played a top team and it was tough, but we "
            "fought hard and got the win!",
            "John",
            "Tim",
        ),  # conv-43 D22:4
        (
            "Have you come across any good resources for learning Spanish? I've been using this "
            "app.",
            "Tim",
            "John",
        ),  # conv-43 D27:9
    ],
)
def test_intentions_games_and_pointed_things_are_no_facts(
    ex: SpacyExtractor, text: str, speaker: str, to: str
) -> None:
    assert read(ex, text, "2023-06-01T12:00:00", speaker, to) == []
