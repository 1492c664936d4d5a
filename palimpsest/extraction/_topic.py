"""A document's topic: who or what it is about, and the words that refer to it.

>>> t = Topic("Preston Smith (governor)", {"preston smith", "smith"}, set(), "he")
>>> t.refers("Smith"), t.refers("the governor")
(True, False)

Encyclopaedic prose names its subject once and then says "Smith", "he", "the
house" or "the club". The topic is the document's title (its first line, when
that line is a heading) or else the name that opens the first sentence; its
forms are the title with and without a parenthetical, the full name of the
first sentence and, for a person, the surname; its heads are the nouns that
stand for it ("house" in "Newton D. Baker House", "club" in "... is a football
club"); its pronoun is the first "he", "she" or "it" the text uses for it.
"""

from __future__ import annotations

import re

from ._tokens import Doc, Token, _lw, _name_span, _text
from ._types import Topic

__all__ = ["Topic", "find_topic"]

# Words that say a page is about a person ("X is an Italian football manager").
_PERSON_HEADS = {
    "politician", "player", "footballer", "manager", "coach", "actor", "actress",
    "singer", "musician", "writer", "author", "poet", "painter", "artist", "scientist",
    "engineer", "businessman", "businesswoman", "lawyer", "judge", "officer", "general",
    "admiral", "soldier", "athlete", "cyclist", "driver", "boxer", "wrestler", "priest",
    "bishop", "cardinal", "king", "queen", "prince", "princess", "emperor", "duke",
    "scholar", "professor", "economist", "journalist", "diplomat", "activist",
    "composer", "conductor", "director", "producer", "architect", "philosopher",
    "historian", "physician", "surgeon", "chemist", "physicist", "mathematician",
    "criminal", "pilot", "astronaut", "explorer", "inventor", "entrepreneur",
    "goalkeeper", "defender", "midfielder", "forward", "striker", "pitcher",
    "rapper", "dancer", "comedian", "model", "designer", "photographer", "swimmer",
    "runner", "skier", "tennis", "golfer", "jockey", "chess", "grandmaster",
    "man", "woman", "person", "statesman", "nobleman", "noblewoman", "monarch",
    "ruler", "governor", "senator", "mayor", "minister", "president", "official",
    "commander", "nun", "monk", "rabbi", "imam", "theologian", "teacher", "aviator",
    "aviatrix", "socialite", "heir", "heiress", "consort", "lord", "lady", "sir",
}  # fmt: skip
_PRONOUNS = {"he": "he", "his": "he", "him": "he", "she": "she", "her": "she"}


def _clean(title: str) -> str:
    return " ".join(re.sub(r"\s*\([^)]*\)", "", title).split())


def _is_heading(doc: Doc) -> bool:
    """A short line with no finite verb: a title or a section heading."""
    words = [t for t in doc if not t.is_punct and not t.is_space]
    if not words or len(words) > 12:
        return False
    return not any(t.tag_ in ("VBZ", "VBD", "VBP", "MD") for t in words)


def _lead_name(sent: list[Token]) -> str | None:
    """The name that opens a sentence ("Preston Earnest Smith (...) was ...")."""
    end = _name_span(sent, 0)
    return _text(sent[:end]) if end > 0 else None


def _copula_head(sent: list[Token]) -> str | None:
    """'... is a historic house at ...' -> 'house'."""
    for i, t in enumerate(sent):
        if _lw(t) in ("is", "was", "are", "were") and t.pos_ == "AUX":
            for u in sent[i + 1 : i + 12]:
                if u.pos_ == "NOUN" and (u.dep_ in ("attr", "ROOT") or u.head.i == t.i):
                    return _lw(u)
            return None
    return None


def find_topic(paragraphs: list[Doc]) -> Topic | None:
    """The topic of a document parsed paragraph by paragraph (None when it has none).

    The first paragraph is the title when it reads as a heading; else the
    topic is the name that opens the first sentence.
    """
    if not paragraphs:
        return None
    body = paragraphs
    title: str | None = None
    if _is_heading(paragraphs[0]) and len(paragraphs) > 1:
        title = paragraphs[0].text.strip().rstrip(".:").strip()
        body = paragraphs[1:]
    first = next((list(s) for d in body for s in d.sents if len(s) > 3), None)
    lead = _lead_name(first) if first else None
    name = title or lead
    if not name:
        return None
    forms = {name.casefold(), _clean(name).casefold()}
    if lead:
        forms.add(lead.casefold())
    heads: set[str] = set()
    head = _copula_head(first) if first else None
    pronoun = _first_pronoun(body)
    if head in _PERSON_HEADS or pronoun in ("he", "she"):
        pronoun = pronoun or "he"
        for full in (_clean(name), lead or ""):
            parts = full.split()
            if len(parts) >= 2:
                forms.add(parts[-1].casefold())  # the surname
                forms.add(f"{parts[0]} {parts[-1]}".casefold())
    else:
        pronoun = "it"
        if head:
            heads.add(head)
        # "Senate of the Kingdom of Italy" -> "senate"; "Newton D. Baker House" -> "house"
        words = _clean(name).split(" of ")[0].split()
        if words and words[-1].isalpha():
            heads.add(words[-1].casefold())
    return Topic(name, forms, heads, pronoun, head)


def _first_pronoun(paragraphs: list[Doc]) -> str | None:
    """The first personal pronoun a subject position takes ("he", "she")."""
    for doc in paragraphs[:4]:
        for t in doc:
            if t.dep_ in ("nsubj", "nsubjpass", "poss") and _lw(t) in _PRONOUNS:
                return _PRONOUNS[_lw(t)]
            if t.dep_ in ("nsubj", "nsubjpass") and _lw(t) == "it":
                return None
    return None
