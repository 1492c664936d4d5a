"""Shared pieces of the extraction rules: word lists, clause state and token tests.

>>> _lw(nlp("Berlin")[0])                                   # doctest: +SKIP
'berlin'

Everything the other rule modules agree on lives here: the closed word classes
(question starters, hedges, determiners, titles), the per-clause state objects
(``_Subject``, ``_Verb``, ``_Ctx``, ``_Hit``) and small token predicates such as
"is this a name" or "where does this proper-name run end".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from ._dates import TimeMention, TimeWindow
from ._lexicon import KIN, OTHER_KIN, PETS, VERB_FORMS
from ._spacy import Lexicon

if TYPE_CHECKING:
    from ._coref import Mention
from ._types import CandidateFact, Op, Topic

Token = Any  # spacy.tokens.Token; spaCy ships no type information
Doc = Any


_ENTITY_LABELS = {
    "PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "PRODUCT", "EVENT", "WORK_OF_ART",
    "LANGUAGE",
}  # fmt: skip
# The small model labels many first names GPE, NORP or ORG ("Kenji"/GPE, "Jake"/NORP),
# so only labels that are never people disqualify a subject.
_BAD_SUBJECT_LABELS = {
    "FAC", "PRODUCT", "EVENT", "WORK_OF_ART", "LANGUAGE", "DATE", "TIME", "MONEY",
    "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL",
}  # fmt: skip
_QUESTION_STARTERS = {
    "do", "does", "did", "is", "are", "was", "were", "can", "could", "would", "should",
    "will", "shall", "have", "has", "had", "may", "might", "what", "where", "when",
    "who", "whom", "why", "how", "which", "whose", "wanna", "am", "ca", "wo",
}  # fmt: skip
_HEDGE_WORDS = {
    "if", "unless", "whether", "wish", "imagine", "suppose", "supposing",
    "hypothetically", "maybe", "perhaps", "possibly", "probably", "ought", "assuming",
    "might", "someday", "presumably", "apparently", "allegedly", "supposedly",
    "reportedly", "seemingly", "purportedly", "rumoured", "rumored", "evidently",
}  # fmt: skip
_HEDGE_MODALS = {"could", "should", "might", "may", "must", "would", "'d"}
_REPORT_LEMMAS = {
    "say", "tell", "think", "believe", "want", "wish", "hope", "suggest", "mention",
    "claim", "guess", "doubt", "wonder", "expect", "reckon", "assume", "hear",
    "insist", "recommend", "remind", "pretend", "dream", "consider", "seem",
    "remember", "forget", "ask", "argue", "feel", "know", "promise", "bet", "imagine",
    "would", "need",
}  # fmt: skip
_NOBODY = {"nobody", "noone", "neither", "none", "nothing", "everybody", "everyone"}
_WRAPPER_RE = re.compile(
    r"^(?:(?:please|pls|also|and|oh|ok|okay|so|btw|by the way|fyi|for the record|"
    r"for your information|just so you know|just fyi|quick update|update|correction|"
    r"fun fact|in fact|actually|sorry|oops|wait|no|yes|yeah|yep|well|hi|hey|hello|"
    r"remember|note|keep in mind|don't forget|do not forget|make a note|bear in mind|"
    r"i meant|i mean|to clarify|just to clarify|small correction|anyway|also note|"
    r"honestly|oh and|and also|for context)(?: that)?(?:\s*[,:;!.-]+\s*|\s+))+",
    re.I,
)
_DISCOURSE = {
    "actually", "honestly", "so", "well", "also", "anyway", "btw", "oh", "ok", "okay",
    "yes", "yeah", "hey", "hi", "hello", "now", "then", "plus", "besides", "sorry",
    "basically", "lol", "right", "and", "but", "because", "though", "finally",
}  # fmt: skip
_DETERMINERS = {
    "a", "an", "the", "my", "our", "your", "his", "her", "their", "its", "some", "this",
    "that", "these", "those",
}  # fmt: skip
_BAD_OBJECT_START = {
    "no", "any", "none", "nothing", "anything", "someone", "something", "it", "that",
    "this", "there", "anyone", "everything", "everyone", "you", "me", "him", "them",
    "us", "her", "what", "which", "who", "myself", "yourself", "one", "lot", "bit",
    "stuff", "thing", "things", "way", "time", "kind", "sort",
}  # fmt: skip
_TITLES = {
    "dr.", "dr", "mr.", "mr", "mrs.", "mrs", "ms.", "ms", "prof.", "prof", "grandpa",
    "grandma", "granny", "aunt", "uncle", "auntie", "sir", "dame", "st.", "saint",
}  # fmt: skip
_CONTRACTIONS = {
    "n't": "not", "ca": "can", "wo": "will", "'m": "be", "'re": "be", "'ve": "have",
    "'ll": "will", "'d": "would", "’m": "be", "’re": "be", "’ve": "have", "’ll": "will",
    "’d": "would", "n’t": "not",
}  # fmt: skip
# Participles and adjectives kept verbatim: their lemmas vary or mislead ("born" -> "bear").
_VERBATIM = {
    "born", "based", "called", "named", "married", "divorced", "retired", "allergic",
    "fluent", "employed", "promoted", "favorite", "favourite", "engaged", "located",
}  # fmt: skip
# Verbs that begin a state on a future date ("I'm turning 30 next month" -> age 30 then).
_STATE_START_VERBS = {"start", "join", "move", "relocate", "begin", "turn"}
_PLAN_VERBS_PROGRESSIVE = {"go", "fly", "travel", "visit", "drive", "head", "take", "see"}

Tense = Literal["past", "present", "future"]


# --------------------------------------------------------------------------- clause state


@dataclass
class _Subject:
    name: str | None
    kind: str  # speaker | person | kin | kinname | attr | plain
    end: int  # clause index just after the subject
    owner: str | None = None
    rel: str | None = None  # kin predicate or attribute predicate
    noun: str = ""
    co: str | None = None  # "Tom and I": Tom
    via: tuple[str, str] | None = None  # (owner, rel) when named by apposition


@dataclass
class _Verb:
    main: int = -1
    neg: bool = False
    nolonger: bool = False
    future: bool = False
    going: bool = False  # "be going to" / "gonna": a plan more than a promise
    perfect: bool = False
    progressive: bool = False
    passive: bool = False
    habitual: bool = False
    hedge: bool = False
    rather: bool = False
    can: bool = False
    past: bool = False


@dataclass
class _Ctx:
    speaker: str
    addressee: str | None
    reference: datetime
    masked: dict[int, int]  # token.i -> mention index
    mentions: list[TimeMention]
    last_person: str | None = None
    pending: tuple[str, str] | None = None
    names: set[str] = field(default_factory=set)  # people and pets this text has named
    lexicon: Lexicon = field(default_factory=Lexicon)  # English words (the lemmatizer's)
    narrative: datetime | None = None  # the time the text last spoke of
    sentence_time: TimeWindow | None = None  # the time the current sentence named
    topic: Topic | None = None  # what a document is about; None for a conversation turn
    last_pronoun: str | None = None  # "he"/"she"/"they" for last_person, None if unknown
    people: list[Mention] = field(default_factory=list)  # named in the turns before
    facts: list[CandidateFact] = field(default_factory=list)


@dataclass(frozen=True)
class _Hit:
    predicate: str
    obj: str
    pattern: str
    confidence: float
    op: Op = "assert"
    state: bool = False
    timeless: bool = False
    subject: str | None = None  # overrides the clause subject
    window: TimeWindow | None = None  # overrides the clause time
    cardinality: Literal["one", "many"] | None = None


# --------------------------------------------------------------------------- helpers


def _lw(t: Token) -> str:
    return str(t.lower_)


def _norm(t: Token) -> str:
    lw = _lw(t)
    if lw in _VERBATIM:
        return "favorite" if lw == "favourite" else lw
    if lw in _CONTRACTIONS:
        return _CONTRACTIONS[lw]
    if t.pos_ == "PROPN" or t.like_num:
        return lw
    if lw in VERB_FORMS and t.pos_ != "NOUN":
        return VERB_FORMS[lw]
    return str(t.lemma_).lower() or lw


def _text(tokens: Iterable[Token]) -> str:
    toks = list(tokens)
    if not toks:
        return ""
    out = "".join(t.text_with_ws for t in toks[:-1]) + toks[-1].text
    return re.sub(r"\s+", " ", out).strip()


def _ent(t: Token) -> str:
    return str(t.ent_type_) if t.ent_type_ else ""


def _is_name_token(t: Token) -> bool:
    return bool(t.pos_ == "PROPN" or (t.ent_type_ == "PERSON" and t.text[:1].isupper()))


def _is_loose_name(t: Token) -> bool:
    """A capitalised word the tagger may have mislabelled ("Raj"/ADV, "Grace"/NOUN)."""
    lw = _lw(t)
    return bool(
        t.text[:1].isupper()
        and t.is_alpha
        and not t.is_stop
        and lw not in _DISCOURSE
        and lw not in _QUESTION_STARTERS
        and lw not in _DETERMINERS
        and lw not in VERB_FORMS
        and lw != "i"
        # a sentence-initial manner adverb ("Honestly", "Supposedly") is not a name
        and not (t.pos_ == "ADV" and lw.endswith("ly") and len(lw) >= 7 and not t.ent_type_)
    )


def _noun_group(toks: list[Token], j: int) -> tuple[list[Token], int]:
    """Modifiers and nouns after a possessive, up to a name, verb or punctuation."""
    group: list[Token] = []
    n = len(toks)
    while j < n:
        t = toks[j]
        if [_lw(x) for x in toks[j : j + 4]] == ["-", "in", "-", "law"]:
            group.extend(toks[j : j + 4])
            j += 4
            continue
        if (
            t.pos_ in ("NOUN", "ADJ")
            or (t.pos_ == "PROPN" and _lw(t) in KIN)
            or (_lw(t) in ("ex", "-", "best", "older", "younger", "little", "big", "twin"))
        ):
            if (
                group
                and t.text[:1].isupper()
                and _is_loose_name(t)
                and _kin_head(group)[0] in (KIN.keys() | PETS | OTHER_KIN)
            ):
                break
            group.append(t)
            j += 1
            continue
        break
    return group, j


def _kin_head(group: list[Token]) -> tuple[str, str | None, bool]:
    """(head noun, predicate, is_ex) for a possessed noun group."""
    words = [_lw(t) for t in group]
    if "law" in words:
        return (words[0] if words else ""), None, False  # "brother-in-law": no vocabulary
    is_ex = any(w.startswith("ex") for w in words)
    for w in reversed(words):
        base = w.removeprefix("ex-")
        plural = base.endswith("s") and (base[:-1] in KIN or base[:-1] in OTHER_KIN)
        lemma = base[:-1] if plural else base
        if lemma in KIN:
            return lemma, KIN[lemma], is_ex
        if lemma in PETS or (w.endswith("s") and w[:-1] in PETS):
            return lemma, "pet", is_ex
        if lemma in OTHER_KIN:
            return lemma, None, is_ex
    return (words[-1] if words else ""), None, is_ex


def _name_span(toks: list[Token], j: int, *, loose: bool = False) -> int:
    """End index of a proper-name run starting at ``j`` (titles and initials allowed)."""
    n = len(toks)
    k = j
    while k < n:
        t = toks[k]
        lw = _lw(t)
        if (
            (_is_name_token(t) or (loose and _is_loose_name(t)))
            and lw not in ("i",)
            and not t.like_num
        ):
            k += 1
            continue
        if lw in _TITLES and k + 1 < n and _is_name_token(toks[k + 1]):
            k += 1
            continue
        break
    return k


def _owner_of(ctx: _Ctx, lw: str) -> str | None:
    if ctx.topic is not None:
        # in a document "his wife" is the topic's, unless "his" is someone else's pronoun
        pronoun = {"his": "he", "her": "she", "its": "it"}.get(lw)
        return ctx.topic.name if pronoun == ctx.topic.pronoun else None
    if lw in ("my", "our"):
        return ctx.speaker
    if lw == "your":
        return ctx.addressee
    return ctx.last_person
