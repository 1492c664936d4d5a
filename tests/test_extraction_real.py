"""Extraction on real text (issue 16), with the real spaCy model.

Every sentence below is quoted from a development split of the evaluation
data (never a holdout item): LoCoMo conversations conv-26/30/41/42 (the
conversation and turn id are given with each), TimeQA's
``human_annotated_train.json`` passages (the page is given). Dates are each
LoCoMo session's own date.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from palimpsest.engine.vocabulary import default_predicates
from palimpsest.extraction import ExtractRequest, SpacyExtractor, find_time_mentions
from palimpsest.extraction._coref import context_people, pick
from palimpsest.extraction._doc_lexicon import ONE_PREDICATES
from palimpsest.extraction._rule_match import _ALL_RULES
from palimpsest.extraction._rules_doc import DOC_RULES
from palimpsest.extraction._spacy import english_lexicon

pytestmark = pytest.mark.models

ROOT = Path(__file__).resolve().parents[1]
Fact = tuple[str, str, str, str]


@pytest.fixture(scope="module")
def ex() -> SpacyExtractor:
    return SpacyExtractor()


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def read(
    ex: SpacyExtractor,
    text: str,
    when: str,
    speaker: str,
    addressee: str,
    context: tuple[tuple[str, str], ...] = (),
) -> list[tuple[str, str, str, str, str | None]]:
    req = ExtractRequest(
        text, occurred_at=at(when), speaker=speaker, addressee=addressee, context=context
    )
    (e,) = ex.extract_many([req])
    return [
        (
            f.subject,
            f.predicate,
            f.object,
            f.op,
            f.valid_from.date().isoformat() if f.valid_from else None,
        )
        for f in e.facts
    ]


def triples(rows: list[tuple[str, str, str, str, str | None]]) -> set[Fact]:
    return {r[:4] for r in rows}


# --------------------------------------------------------------------------- the gate


@pytest.mark.parametrize(
    ("where", "when", "speaker", "addressee", "text"),
    [
        # a promise to keep in touch is no plan
        ("conv-26 D5:15", "2023-07-03T13:36", "Caroline", "Melanie",
         "Cool, thanks Mel! Can't wait. I'll keep ya posted. Bye!"),
        # nor is a cheer about what "we" will do
        ("conv-26 D12:19", "2023-08-17T13:50", "Caroline", "Melanie",
         "Sounds great, Mel! We'll make some awesome memories!"),
        # encouragement of the listener says nothing about them
        ("conv-30 D17:13", "2023-07-09T13:25", "Gina", "Jon",
         "Keep pushing and you'll get there. Your dreams are so close!"),
        # praise of the listener's work is no fact of theirs
        ("conv-26 D14:8", "2023-08-25T13:33", "Melanie", "Caroline",
         "Wow, the beach really inspired you. The art really took me to that moment and I can "
         "feel the serenity. You captured the sunset perfectly, so peaceful!"),
        # an echo of the other's news: "Sounds" is no subject
        ("conv-30 D18:11", "2023-07-21T17:44", "Gina", "Jon",
         "Sounds like a great plan, Jon! An online platform can really show off your studio and "
         "get investors. Need help with anything?"),
        # a generic statement has no entity for a subject
        ("conv-26 D8:12", "2023-07-15T13:51", "Melanie", "Caroline",
         "Flowers bring joy. They represent growth, beauty and reminding us to appreciate the "
         "small moments. They were an important part of my wedding decor and always remind me "
         "of that day."),
        # "Stuff like this mural": the capital of a common word opening a sentence
        ("conv-26 D14:13", "2023-08-25T13:33", "Caroline", "Melanie",
         "Finding a community where I'm accepted, loved and supported has really meant a lot to "
         "me. It's made a huge difference to have people who get what I'm going through. Stuff "
         "like this mural are really special to me!"),
        # a reaction to a shared photo is no lasting taste; the question says nothing
        ("conv-42 D11:6", "2022-05-12T15:35", "Nate", "Joanna",
         "Wow, looks great! Where did you take this picture? I love the dark sky and green "
         "scenery."),
        # a negated expectation ("I don't expect to win") yields nothing
        ("conv-42 D2:20", "2022-01-23T14:01", "Nate", "Joanna",
         "Absolutely! I don't expect to win big here, I just like playing for fun!  You "
         "mentioned you were allergic to pets earlier, how bad is it?"),
    ],
)  # fmt: skip
def test_the_gate_lets_nothing_through(
    ex: SpacyExtractor, where: str, when: str, speaker: str, addressee: str, text: str
) -> None:
    assert read(ex, text, when, speaker, addressee) == [], where


def test_objects_are_whole_phrases(ex: SpacyExtractor) -> None:
    # conv-26 D5:6: a spaced dash ends the object ("pottery", not "pottery - the creativity")
    rows = read(
        ex,
        "I'm a big fan of pottery - the creativity and skill is awesome. Plus, making it is so "
        "calming. Look at this!",
        "2023-07-03T13:36",
        "Melanie",
        "Caroline",
    )
    assert triples(rows) == {("Melanie", "likes", "pottery", "assert")}
    # conv-30 D15:16: a light gerund keeps what it governs ("being around friends")
    rows = read(
        ex,
        "I love being around friends and having such a great time. Can't wait to have fun at "
        "your dance studio!",
        "2023-06-19T10:04",
        "Gina",
        "Jon",
    )
    assert ("Gina", "likes", "being around friends", "assert") in triples(rows)
    assert all(r[2] != "being" for r in rows)


# --------------------------------------------------------------------------- what is read


@pytest.mark.parametrize(
    ("where", "when", "speaker", "addressee", "text", "expected"),
    [
        ("conv-26 D1:3", "2023-05-08T13:56", "Caroline", "Melanie",
         "I went to a LGBTQ support group yesterday and it was so powerful.",
         ("Caroline", "attended", "LGBTQ support group", "assert", "2023-05-07")),
        ("conv-26 D1:14", "2023-05-08T13:56", "Melanie", "Caroline",
         "Yeah, I painted that lake sunrise last year! It's special to me.",
         ("Melanie", "made", "lake sunrise", "assert", "2022-01-01")),
        # a chat sentence with its "I" left out
        ("conv-26 D2:8", "2023-05-25T13:14", "Caroline", "Melanie",
         "Researching adoption agencies — it's been a dream to have a family and give a loving "
         "home to kids who need it.",
         ("Caroline", "researched", "adoption agencies", "assert", None)),
        ("conv-30 D1:2", "2023-01-20T16:04", "Jon", "Gina",
         "Hey Gina! Good to see you too. Lost my job as a banker yesterday, so I'm gonna take a "
         "shot at starting my own business.",
         ("Jon", "job_title", "banker", "end", "2023-01-19")),
        ("conv-26 D5:4", "2023-07-03T13:36", "Melanie", "Caroline",
         "Wow, Caroline! That's great! I just signed up for a pottery class yesterday. It's like "
         "therapy for me, letting me express myself and get creative.",
         ("Melanie", "enrolled_in", "pottery class", "assert", "2023-07-02")),
        # a spaced dash joins two sentences; "last Tues" is a day
        ("conv-26 D10:3", "2023-07-20T20:56", "Caroline", "Melanie",
         "Hey Mel! A lot's happened since we last chatted - I just joined a new LGBTQ activist "
         "group last Tues.",
         ("Caroline", "member_of", "LGBTQ activist group", "assert", "2023-07-18")),
        ("conv-26 D6:4", "2023-07-06T20:18", "Melanie", "Caroline",
         "That's awesome, Caroline! Congrats on following your dreams. Yesterday I took the kids "
         "to the museum - it was so cool spending time with them and seeing their eyes light up!",
         ("Melanie", "visited", "museum", "assert", "2023-07-05")),
        # the time the sentence named holds for its next part too
        ("conv-26 D16:1", "2023-09-13T00:09", "Caroline", "Melanie",
         "Hey Mel, long time no chat! I had a wicked day out with the gang last weekend - we went "
         "biking and saw some pretty cool stuff.",
         ("Caroline", "activity", "biking", "assert", "2023-09-09")),
        # a pet introduced by name
        ("conv-26 D13:4", "2023-08-23T15:31", "Melanie", "Caroline",
         "Yeah, it's normal to be both excited and nervous with a big decision. And thanks for "
         "asking, they're good- we got another cat named Bailey too.",
         ("Melanie", "pet", "Bailey", "assert", None)),
        # a pet named in the next sentence ("Her name's Coco")
        ("conv-41 D30:1", "2023-08-11T00:10", "Maria", "John",
         "Hey John! Long time no talk! Guess what - I got a puppy two weeks ago! Her name's Coco "
         "and she's adorable.",
         ("Maria", "pet", "Coco", "assert", None)),
    ],
)  # fmt: skip
def test_what_people_said_is_read(
    ex: SpacyExtractor,
    where: str,
    when: str,
    speaker: str,
    addressee: str,
    text: str,
    expected: tuple[str, str, str, str, str | None],
) -> None:
    assert expected in read(ex, text, when, speaker, addressee), where


def test_the_listener_is_you_and_waits_in_quarantine(ex: SpacyExtractor) -> None:
    # what Melanie is told about herself is read below the confidence floor
    req = ExtractRequest("You live in Boston.", at("2023-05-08T13:56"), "Caroline", "Melanie")
    (e,) = ex.extract_many([req])
    assert [(f.subject, f.predicate, f.object) for f in e.facts] == [
        ("Melanie", "lives_in", "Boston")
    ]
    assert e.facts[0].confidence < 0.6


# --------------------------------------------------------------------------- coreference


def test_she_is_the_relative_named_in_the_turn_before(ex: SpacyExtractor) -> None:
    # conv-41 D21:5 (Maria), then D21:7: "She had to leave ..." is the cousin
    before = (
        "Maria",
        "A car ran a red light and hit us, but thankfully everyone is okay. Besides that, my "
        "cousin just had a tough time recently, so I'm lending a hand in helping her find a new "
        "place.",
    )
    people = context_people([before], english_lexicon(ex.nlp))
    assert pick(people, "she", exclude=("Maria", "John")) == "Maria's cousin"
    assert pick(people, "they", exclude=("Maria", "John")) is None
    # a fact stated with the pronoun lands on the relative
    rows = read(
        ex, "She moved to Denver last month.", "2023-07-03T20:43", "Maria", "John", (before,)
    )
    assert ("Maria's cousin", "lives_in", "Denver", "assert") in triples(rows)


def test_he_follows_gender_and_skips_the_participants(ex: SpacyExtractor) -> None:
    # conv-26 D18:1: Melanie's son is "he"; Caroline and Melanie are never "he"
    before = (
        "Melanie",
        "Hey Caroline, that roadtrip this past weekend was insane! We were all freaked when my "
        "son got into an accident. We were so lucky he was okay.",
    )
    people = context_people([before], english_lexicon(ex.nlp))
    assert pick(people, "he", exclude=("Caroline", "Melanie")) == "Melanie's son"
    assert pick(people, "she", exclude=("Caroline", "Melanie")) is None
    # conv-26 D13:4: a name mid-sentence ("a pic of Oliver") is a candidate of either gender
    names = context_people(
        [("Melanie", "Here's a pic of Oliver. Can you show me one of Oscar?")],
        english_lexicon(ex.nlp),
    )
    assert pick(names, "he", exclude=("Caroline", "Melanie")) == "Oscar"


def test_a_pronoun_within_the_turn_is_the_last_person_it_named(ex: SpacyExtractor) -> None:
    rows = read(
        ex,
        "My son got into an accident. He loves playing soccer now.",
        "2023-10-20T18:55",
        "Melanie",
        "Caroline",
    )
    assert ("Melanie's son", "likes", "playing soccer", "assert") in triples(rows)


# --------------------------------------------------------------------------- the span grammar


def spans(
    text: str, narrative: datetime | None = None
) -> list[tuple[str, str, str | None, str | None]]:
    ref = at("2025-01-01T00:00")
    out = []
    for m in find_time_mentions(text):
        w = m.resolve(ref, "past", narrative=narrative)
        assert w is not None, m
        out.append(
            (
                m.text,
                w.role,
                w.valid_from.date().isoformat() if w.valid_from else None,
                w.valid_to.date().isoformat() if w.valid_to else None,
            )
        )
    return out


@pytest.mark.parametrize(
    ("page", "text", "expected"),
    [
        ("PFC Levski Sofia", "- Stoycho Stoev (22 December 2014 – 15 May 2016)",
         [("22 December 2014 – 15 May 2016", "range", "2014-12-22", "2016-05-15")]),
        ("1st Royal Bavarian Division", "- Prince Leopold of Bavaria (1881–1887) - Later a "
         "Generalfeldmarschall", [("1881–1887", "range", "1881-01-01", "1887-01-01")]),
        ("Powszechny Zakład Ubezpieczeń", "- Jerzy Zdrzałka, 2000-2001",
         [("2000-2001", "range", "2000-01-01", "2001-01-01")]),
        ("Preston Smith (governor)", "Preston Earnest Smith was the 40th Governor of Texas from "
         "1969 to 1973", [("from 1969 to 1973", "range", "1969-01-01", "1973-01-01")]),
        ("British Rail Class 15", "built by the Yorkshire Engine Company and the Clayton "
         "Equipment Company, between 1957 and 1961",
         [("between 1957 and 1961", "range", "1957-01-01", "1961-01-01")]),
        ("Newton D. Baker House", "In 1796, John Laird, a wealthy merchant, lived in the house, "
         "and later Maj. George Peter purchased the house who lived there until 1827",
         [("In 1796", "point", "1796-01-01", None), ("until 1827", "until", None, "1827-01-01")]),
        ("Gáivuotna – Kåfjord – Kaivuono", "- 2019–present: Bernt Eirik Isaksen Lyngstad (Ap)",
         [("2019–present", "since", "2019-01-01", None)]),
        # "through" ends after its year (the normative rule of _dates)
        ("Joseph Chaikov", "Chaikov studied in Paris in the years 1910 through 1914.",
         [("1910 through 1914", "range", "1910-01-01", "1915-01-01")]),
        ("Affari tuoi", "Antonella Clerici (March – June 2006)",
         [("March – June 2006", "range", "2006-03-01", "2006-06-01")]),
    ],
)  # fmt: skip
def test_spans_become_windows(
    page: str, text: str, expected: list[tuple[str, str, str | None, str | None]]
) -> None:
    assert spans(text) == expected, page


def test_later_that_year_counts_from_the_narrative() -> None:
    # Jacqueline Cochran: "Circa 1920 ... she married Robert Cochran" ... "later that year"
    assert spans("Later that year she moved.", narrative=at("1920-05-01T00:00")) == [
        ("Later that year", "point", "1920-01-01", None)
    ]
    assert spans("the following year", narrative=at("1920-05-01T00:00")) == [
        ("the following year", "point", "1921-01-01", None)
    ]
    # with no narrative to count from it names nothing
    (m,) = find_time_mentions("later that year")
    assert m.resolve(at("2025-01-01T00:00")) is None


# --------------------------------------------------------------------------- document mode

# Paragraphs of TimeQA train passages, detokenised as bench/real_text.py does.
_BAKER = [
    "Newton D. Baker House",
    "Newton D. Baker House, also known as Jacqueline Kennedy House, is a historic house at 3017 "
    "N Street NW in Washington, D.C.. Built in 1794, it was home of Newton D. Baker, who was "
    "Secretary of War, during 1916-1920.",
    "History.",
    "In 1796, John Laird, a wealthy merchant, lived in the house, and later Maj. George Peter, a "
    "War of 1812 commander and Maryland Congressman, purchased the house who lived there until "
    "1827, when the same Laird bought the house for his son. In 1834, William Redin, the first "
    "auditor of the Circuit Court for the District of Columbia, purchased it.",
    "In 1915, Col. William E. Pattison French purchased the house, and began renting it to "
    "Newton D. Baker in 1916.",
]
_LEVSKI = [
    "PFC Levski Sofia",
    "PFC Levski Sofia is a Bulgarian professional football club based in Sofia.",
    "Managers.",
    "- Stoycho Stoev (22 December 2014 – 15 May 2016)",
    "- Elin Topuzakov (20 March 2014 – June 2014)",
]
_SARRI = [
    "Maurizio Sarri",
    "Maurizio Sarri is an Italian professional football manager.",
    "In 2000, Sarri signed for Sansovino in Eccellenza, and achieved promotion to Serie D with "
    "the side in his first season.",
    "On 18 July 2007 Sarri joined Avellino in the second tier, but resigned on 23 August after "
    "severe altercations with the clubs board.",
]


def document(
    ex: SpacyExtractor, paragraphs: list[str]
) -> list[tuple[str, str, str, str | None, str | None]]:
    req = ExtractRequest(
        "\n\n".join(paragraphs), at("2025-01-01T00:00"), "Wikipedia", kind="document"
    )
    (e,) = ex.extract_many([req])
    day = lambda d: d.date().isoformat() if d else None  # noqa: E731
    return [(f.subject, f.predicate, f.object, day(f.valid_from), day(f.valid_to)) for f in e.facts]


def test_a_document_states_facts_of_its_topic(ex: SpacyExtractor) -> None:
    rows = document(ex, _BAKER)
    # "the house" and "the building" are the title's house; the buyers are its owners
    topic = "Newton D. Baker House"
    owners = [(o, vf, vt) for s, p, o, vf, vt in rows if s == topic and p == "owned_by"]
    # "it" and "the house" are the page's house; a buyer owns it until the next one
    assert ("William Redin", "1834-01-01", "1915-01-01") in owners
    assert ("Col. William E. Pattison French", "1915-01-01", None) in owners
    residents = [(o, vf) for s, p, o, vf, _ in rows if s == topic and p == "resident"]
    assert ("John Laird", "1796-01-01") in residents


def test_list_items_under_a_heading_are_dated_holders(ex: SpacyExtractor) -> None:
    rows = document(ex, _LEVSKI)
    assert ("PFC Levski Sofia", "led_by", "Stoycho Stoev", "2014-12-22", "2016-05-15") in rows
    assert ("PFC Levski Sofia", "led_by", "Elin Topuzakov", "2014-03-20", "2014-06-01") in rows


def test_a_later_move_ends_the_earlier_in_a_document(ex: SpacyExtractor) -> None:
    rows = document(ex, _SARRI)
    clubs = {o: (vf, vt) for s, p, o, vf, vt in rows if s == "Maurizio Sarri" and p == "coaches"}
    # "Sarri" (the surname) is the topic, a manager: the clubs he signed for he coached,
    # and 2000's club holds until the next one, in 2007
    assert clubs == {"Sansovino": ("2000-01-01", "2007-07-18"), "Avellino": ("2007-07-18", None)}


# TimeQA train, "Indian locomotive class WP": no rule reads "came from"
_WP = [
    "Indian locomotive class WP",
    "The Indian locomotive class WP is a class of 4-6-2 Pacific type steam locomotives used in "
    "India.",
    "A total of 755 WPs were built between 1947 and 1967, bearing fleet numbers 7000 to 7754. "
    "The first batch of sixteen, numbers 7200–7215, came from the Baldwin Locomotive Works, USA "
    "in 1947, and these were classed WP/P.",
    "Between 1963 and 1966, 259 more were built, but these were ordered from Chittaranjan "
    "Locomotive Works (CLW), and were manufactured in India, and classified WP/I.",
]


def test_names_of_dated_sentences_are_the_topics_timeline(ex: SpacyExtractor) -> None:
    rows = document(ex, _WP)
    timeline = {(o, vf, vt) for s, p, o, vf, vt in rows if p == "timeline"}
    topic = "Indian locomotive class WP"
    assert {s for s, p, *_ in rows if p == "timeline"} == {topic}
    # the name nearest the main verb leads until the next dated sentence; the others
    # hold for the period their sentence names ("in 1947"; "between 1963 and 1966")
    assert ("the Baldwin Locomotive Works", "1947-01-01", "1963-01-01") in timeline
    assert ("USA", "1947-01-01", "1948-01-01") in timeline
    assert ("Chittaranjan Locomotive Works", "1963-01-01", "1966-01-01") in timeline
    # the topic itself, numbers and undated sentences give no mention
    assert not {o for o, *_ in timeline} & {topic, "WPs", "755", "7000 to 7754"}
    # prose gives no open-verb fact ("were ordered from", "came from"): the names stand
    known = {p.name for p in default_predicates()}
    assert {p for _, p, *_ in rows} <= known
    # a name a rule already read is not repeated as a bare mention
    sarri = document(ex, _SARRI)
    assert not any(p == "timeline" and o in ("Sansovino", "Avellino") for _, p, o, *_ in sarri)


def test_a_turn_is_not_read_as_a_document(ex: SpacyExtractor) -> None:
    text = "\n\n".join(_SARRI)
    (e,) = ex.extract_many([ExtractRequest(text, at("2025-01-01T00:00"), "Wikipedia")])
    assert all(f.subject != "Maurizio Sarri" for f in e.facts)


# --------------------------------------------------------------------------- the vocabulary


def test_every_rule_predicate_is_in_the_vocabulary() -> None:
    vocab = json.loads((ROOT / "palimpsest" / "data" / "predicates.json").read_text())["predicates"]
    names = {p["name"]: p["cardinality"] for p in vocab}
    emitted = {p for r in _ALL_RULES + DOC_RULES for p in r.predicate.split("|")}
    assert emitted - set(names) == set()
    # the document timeline closes exactly the one-valued predicates
    assert {n for n in ONE_PREDICATES if names.get(n) != "one"} == set()
    assert len({r.name for r in _ALL_RULES}) == len(_ALL_RULES), "rule names are unique"


def test_no_alias_names_another_predicate() -> None:
    vocab = json.loads((ROOT / "palimpsest" / "data" / "predicates.json").read_text())["predicates"]
    owner: dict[str, str] = {}
    for p in vocab:
        for a in p.get("aliases", []):
            key = re.sub(r"\s+", " ", a.casefold()).strip()
            assert owner.setdefault(key, p["name"]) == p["name"], (a, owner[key], p["name"])
    names = {p["name"] for p in vocab}
    assert {k for k, v in owner.items() if k in names and k != v} == set()
