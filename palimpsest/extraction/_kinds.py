"""What kind of thing a fact's subject or object is: person, place, organization, ...

>>> object_kind("pet", "Luna", None)
'animal'
>>> object_kind("likes", "hiking in the mountains", None)
'activity'

A type comes from the surest source that speaks, in this order:

1. the reader's own context: the speaker and the person spoken to are people;
   the relatives, friends and pets a text names are people and animals;
2. the predicate, when it fixes what its object is (``lives_in`` a place,
   ``works_at`` an organization, ``attended`` an event, ``pet`` an animal);
3. a gerund ("hiking in the mountains") is an activity;
4. spaCy's named-entity label of the words (PERSON, GPE, ORG, WORK_OF_ART, ...);
5. WordNet's lexicographer class of the head noun (``noun.artifact`` -> object,
   ``noun.act`` -> activity; see ``_wordnet``);
6. otherwise ``thing``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ._lexicon_life import EVENT_NOUNS
from ._tokens import Token, _ent, _lw
from ._wordnet import noun_class

__all__ = ["TYPES", "object_kind", "subject_kind"]

TYPES = (
    "person", "animal", "place", "organization", "event", "activity", "object", "work",
    "thing",
)  # fmt: skip
# Objects whose kind the predicate fixes, whatever their words.
_RANGES = {
    "lives_in": "place", "born_in": "place", "visited": "place", "located_in": "place",
    "headquarters": "place", "capital": "place", "home_venue": "place", "detained_in": "place",
    "works_at": "organization", "studies_at": "organization", "member_of": "organization",
    "plays_for": "organization", "coaches": "organization", "political_party": "organization",
    "league": "organization", "record_label": "organization", "publisher": "organization",
    "broadcaster": "organization", "made_by": "organization", "operated_by": "organization",
    "served_in": "organization",
    "spouse": "person", "partner": "person", "sibling": "person", "parent": "person",
    "child": "person", "friend": "person", "met": "person", "mentors": "person",
    "led_by": "person", "owned_by": "person", "resident": "person",
    "pet": "animal",
    "attended": "event", "organized": "event",
    "activity": "activity", "plans": "activity",
    "read": "work", "watched": "work",
}  # fmt: skip
_PEOPLE = {"spouse", "partner", "sibling", "parent", "child", "friend", "met", "mentors"}
_NER = {
    "PERSON": "person", "GPE": "place", "LOC": "place", "FAC": "place",
    "ORG": "organization", "EVENT": "event", "WORK_OF_ART": "work", "PRODUCT": "object",
}  # fmt: skip
# WordNet's noun classes that name a kind of thing a user would look for.
_CLASSES = {
    "person": "person", "animal": "animal", "location": "place", "group": "organization",
    "event": "event", "act": "activity", "artifact": "object", "food": "object",
    "object": "object", "plant": "object", "substance": "object", "communication": "work",
}  # fmt: skip
_HEAD_ENDS = {"of", "in", "at", "on", "with", "for", "from", "to", "about", "by"}


def named_kinds(
    facts: Iterable[tuple[str, str]], speaker: str, addressee: str | None
) -> dict[str, str]:
    """The kinds a text itself gives names: its speaker and listener, and the people
    and pets its facts name (``(predicate, object)`` pairs).

    >>> named_kinds([("pet", "Luna"), ("sibling", "Mira")], "Ana", "Bo")["luna"]
    'animal'
    """
    out: dict[str, str] = {}
    for predicate, obj in facts:
        if predicate == "pet":
            out[obj.casefold()] = "animal"
        elif predicate in _PEOPLE:
            out[obj.casefold()] = "person"
    for who in (speaker, addressee):
        if who:
            out[who.casefold()] = "person"  # a participant is a person, whatever the NER says
    return out


def _ner(span: Sequence[Token] | None) -> str | None:
    labels = [_ent(t) for t in span or () if _ent(t)]
    return _NER.get(labels[-1]) if labels else None


def _head(words: Sequence[str]) -> str:
    """The head word of a phrase: its last word, or the last before "of", "in", ..."""
    for i, w in enumerate(words):
        if w in _HEAD_ENDS and i > 0:
            return words[i - 1]
    return words[-1] if words else ""


def noun_kind(word: str) -> str | None:
    """The kind WordNet's class of a noun (or of its singular) gives, if any.

    >>> noun_kind("paintings"), noun_kind("nephew"), noun_kind("confidence")
    ('object', 'person', None)
    """
    w = word.casefold()
    cls = noun_class(w)
    for cut, add in ((1, ""), (2, ""), (3, "y")):
        if cls is None and w.endswith("s") and len(w) > cut + 2:
            cls = noun_class(w[:-cut] + add)
    return _CLASSES.get(cls or "")


def object_kind(
    predicate: str,
    obj: str,
    span: Sequence[Token] | None,
    named: dict[str, str] | None = None,
) -> str:
    """The kind of a fact's object (``span``: its tokens in the text, if found)."""
    known = (named or {}).get(obj.casefold())
    if known is not None:
        return known
    fixed = _RANGES.get(predicate)
    if fixed is not None:
        return fixed
    words = [_lw(t) for t in span] if span else obj.casefold().split()
    if not words:
        return "thing"
    if (span and span[0].tag_ == "VBG") or (not span and words[0].endswith("ing")):
        return "activity"  # "hiking in the mountains", 'reading "Charlotte's Web"'
    ner = _ner(span)
    if ner is not None:
        return ner
    head = _head(words)
    if span:  # the head's lemma: "leaves" -> "leaf"
        head = next((str(t.lemma_).lower() for t in span if _lw(t) == head), head)
    if head in EVENT_NOUNS:
        return "event"  # the project's own list first: "parade", "party", "class"
    return noun_kind(head) or "thing"


def subject_kind(
    subject: str, span: Sequence[Token] | None, named: dict[str, str], *, document: bool
) -> str:
    """The kind of a fact's subject. In a conversation the subject of a fact is the
    speaker, the listener or someone (or some pet) they speak of; a capitalised
    common word ("Fingers") is no one. A document's topic is what its name's
    entity label says."""
    known = named.get(subject.casefold())
    if known is not None:
        return known
    ner = _ner(span)
    if ner is not None:
        return ner
    if document:
        return "thing"
    common = noun_kind(subject) if subject[:1].isupper() and " " not in subject else None
    if common is not None and common != "person" and span and span[0].pos_ != "PROPN":
        return common
    return "person"
