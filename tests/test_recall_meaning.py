"""Recall by meaning alone, at the defaults, with the real MiniLM and spaCy parts.

    >>> mem.recall("have I stopped using cigarettes?")   # "I quit smoking three months ago."

Each question shares no content word (after the word channel's own tokenising,
stop words and stemming: checked below) with the memory it asks about, and the
memories sit among each other and among unrelated ones. At the defaults at
least 90% must be found in the top 3; with `embedder=None` (words only) the same
set must fail, which shows the dense channel is what answers it. Plus the
floor's decisions: a question naming a day answers from that day's episode,
off-domain questions get nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.recall._text import INDEX_STOPWORDS, query_words

from .conftest import Clock, utc

# (memory, question): no content word in common
PAIRS = [
    ("I quit smoking three months ago.", "have I stopped using cigarettes?"),
    ("The surgeon said my knee operation went well.", "how did the procedure on my leg go?"),
    ("Mira visits next Friday.", "when does my sister arrive?"),
    ("We adopted a puppy from the shelter last weekend.", "did we get a new dog recently?"),
    (
        "My flight to Tokyo got cancelled because of the typhoon.",
        "why was the plane trip to Japan called off?",
    ),
    ("I started taking piano lessons on Tuesdays.", "what musical instrument am I learning?"),
    ("My daughter broke her arm at the playground.", "which of my children was injured?"),
    ("The bakery on Elm Street closed down for good.", "is that bread shop still open?"),
    ("I've been vegetarian since college.", "do I eat meat?"),
    ("Our rent went up by two hundred dollars.", "how much more do we pay for the apartment?"),
    ("I passed my driving test on the first try.", "did I get my licence?"),
    ("My grandmother turned ninety in March.", "how old is my nan?"),
    ("The car needs new brakes before winter.", "what repairs is my vehicle due for?"),
    ("I'm allergic to peanuts.", "which nuts make me sick?"),
    ("We're expecting twins in the spring.", "is my wife pregnant?"),
    ("I got promoted to senior engineer.", "what is my new job title?"),
    ("My laptop screen cracked when I dropped it.", "what happened to my computer display?"),
    ("Jonas moved to Berlin for a new job.", "which city did my friend relocate to?"),
    ("I ran my first marathon in under four hours.", "how fast did I finish the long race?"),
    (
        "The doctor told me my blood pressure is too high.",
        "what did the physician say about my hypertension?",
    ),
    (
        "I've been learning Spanish with an app every morning.",
        "which foreign language am I studying?",
    ),
    ("My cat Luna died last spring.", "is my pet still alive?"),
    ("We booked a cabin by the lake for August.", "where are we staying on our summer holiday?"),
    ("I lost my wallet on the train.", "where did I misplace my purse?"),
    ("My brother is getting married in June.", "when is my sibling's wedding?"),
    ("I can't sleep more than five hours a night lately.", "do I have insomnia?"),
    ("The dentist pulled two of my teeth.", "what happened at my oral surgery appointment?"),
    ("I sold my old bike online for fifty euros.", "how much did I get for the bicycle?"),
    ("My manager approved my vacation request.", "did my boss say yes to time off?"),
    ("I'm training for a triathlon.", "what endurance event am I preparing for?"),
    ("We painted the kitchen yellow.", "what colour did we choose for the cooking room walls?"),
    ("My son got into the university he wanted.", "was my boy accepted to college?"),
    ("I burned my hand on the stove.", "how did I injure my fingers?"),
    ("I've been drinking too much coffee.", "is my caffeine intake high?"),
    ("The heating broke and the house is freezing.", "why is our home so cold?"),
    ("I finished reading War and Peace.", "did I complete that long Tolstoy novel?"),
    ("My mother is recovering from pneumonia.", "is mum over her lung infection?"),
    (
        "I've planted tomatoes and basil in the garden.",
        "what vegetables and herbs am I growing?",
    ),
    ("We switched our electricity provider to save money.", "did we change power companies?"),
    (
        "I have a job interview at the bank on Monday.",
        "what appointment with a potential employer is coming up?",
    ),
    ("My neighbour's dog barks all night.", "why is the pet next door keeping me awake?"),
    ("I donated blood yesterday.", "did I give plasma recently?"),
    ("I broke up with Sam after three years.", "am I still in a relationship?"),
    ("My knee hurts whenever it rains.", "does wet weather cause me joint pain?"),
]

DISTRACTORS = [
    "I bought a new umbrella at the market.",
    "The meeting with the accountant is at noon.",
    "I watched a documentary about volcanoes.",
    "We had pizza for dinner with the Garcias.",
    "The printer at work is out of toner again.",
    "I reorganised the bookshelf by author.",
    "Traffic on the bridge was terrible this morning.",
    "I need to renew the insurance on the boat.",
    "The concert tickets arrived in the post.",
    "I tried a new recipe for lemon cake.",
]

OFF_DOMAIN = [
    "What is my favourite football team?",
    "Which bitcoin wallet do I use?",
    "How many goldfish live in the aquarium?",
    "What did the plumber charge for the bathroom sink?",
    "Which opera did we see in Vienna?",
]


def _stems(mem: Memory, text: str) -> set[str]:
    words = [w for w in query_words(text) if w not in INDEX_STOPWORDS]
    return set(mem._store.recall.stems(words))


def _fill(mem: Memory) -> dict[str, str]:
    """The memories, and each one's episode id."""
    texts = [m for m, _ in PAIRS] + DISTRACTORS
    eps = mem.remember_many(
        [
            {"text": t, "occurred_at": f"2029-0{1 + i % 9}-{10 + i % 15}T10:00:00Z"}
            for i, t in enumerate(texts)
        ]
    )
    return {e.text: e.id for e in eps}


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Memory, dict[str, str]]]:
    clock = Clock(utc("2030-01-01T00:00:00"))
    with Memory.open(tmp_path_factory.mktemp("meaning") / "m", clock=clock) as m:
        yield m, _fill(m)


def _found_in_top3(mem: Memory, ids: dict[str, str]) -> list[bool]:
    """Per pair: whether one of the top 3 hits is its memory, or a fact citing it."""
    out = []
    for memory, question in PAIRS:
        hits = mem.recall(question)[:3]
        out.append(any(h.episode_id == ids[memory] or ids[memory] in h.evidence for h in hits))
    return out


def test_the_pairs_share_no_content_word(minilm: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = minilm
    for memory, question in PAIRS:
        assert not (_stems(mem, memory) & _stems(mem, question)), (memory, question)
    assert len(PAIRS) >= 40


def test_meaning_alone_answers_at_the_defaults(minilm: tuple[Memory, dict[str, str]]) -> None:
    found = _found_in_top3(*minilm)
    missed = [q for (_, q), ok in zip(PAIRS, found, strict=True) if not ok]
    assert sum(found) >= 0.9 * len(PAIRS), missed


def test_the_same_set_fails_without_an_embedder(tmp_path: Path) -> None:
    clock = Clock(utc("2030-01-01T00:00:00"))
    with Memory.open(tmp_path / "words", clock=clock, embedder=None) as m:
        found = _found_in_top3(m, _fill(m))
    assert sum(found) < 0.5 * len(PAIRS)


def test_off_domain_questions_get_nothing(minilm: tuple[Memory, dict[str, str]]) -> None:
    mem, _ = minilm
    for q in OFF_DOMAIN:
        assert mem.recall(q) == [], q


def test_a_dated_question_answers_from_that_days_episode(tmp_path: Path) -> None:
    clock = Clock(utc("2011-01-01T00:00:00"))
    with Memory.open(tmp_path / "log", clock=clock) as m:
        days = [f"2010/06/{d:02d}" for d in range(1, 29)]
        things = ["swimming", "yoga", "cycling", "running"]
        m.remember_many(
            [
                {
                    "text": f"I did {things[i % 4]} on {day}.",
                    "occurred_at": day.replace("/", "-") + "T12:00:00Z",
                }
                for i, day in enumerate(days)
            ]
            + [
                {
                    "text": "I had lunch with Mike, Mason. I ate chinese food.",
                    "occurred_at": "2010-03-02T12:00:00Z",
                },
                {
                    "text": "I had lunch with Ana. I ate a salad.",
                    "occurred_at": "2010-03-05T12:00:00Z",
                },
            ]
        )
        hits = m.recall("What exercise I did on 2010/06/17?", k=5)
        # the day's episode, or the fact read from it, comes first; the episode is returned
        assert hits and "swimming" in hits[0].text and "2010/06/17" in hits[0].text
        assert "I did swimming on 2010/06/17." in [h.text for h in hits]
        lunch = m.recall("what did I eat for lunch on 2010/03/02", k=5)
        assert lunch and "chinese" in lunch[0].text
        assert m.recall("Which opera did I see on 2010/06/17?") == []
