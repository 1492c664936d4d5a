"""Rules that turn one parsed text (a spaCy ``Doc``) into candidate facts.

>>> facts = read_facts(nlp("My sister Mira lives in Berlin."), speaker="user",
...                    addressee=None, reference=ref)          # doctest: +SKIP
>>> [(f.subject, f.predicate, f.object) for f in facts]       # doctest: +SKIP
[('user', 'sibling', 'Mira'), ('Mira', 'lives_in', 'Berlin')]

How a sentence is read, and why:

1. Sentence filters first. Questions, hypotheticals, hedges, reported speech and
   sentences about "nobody" yield nothing: a false fact is worse than a missing
   one, so anything not plainly asserted is dropped whole.
2. Memory-directed wrappers ("remember that", "for the record,", "sorry, I
   meant") are peeled off so the statement inside is read normally.
3. The sentence is cut into clauses where a new subject (or a new finite verb
   sharing the old subject) follows "and", "but", a comma or a semicolon.
4. Each clause: a subject (the speaker, a name, "my sister", "my job", ...), a
   verb group read into flags (negation, "no longer", tense, modality), then
   the rest as a lemma string matched against ordered regex rules. Matching
   lemma strings rather than the dependency tree keeps the rules legible and
   makes them robust to the small model's attachment errors; spaCy still
   supplies tokens, lemmas, tags, sentence bounds and entity labels.
5. Time expressions found by ``_dates`` are masked out of the lemma string (so
   they never leak into objects) and attached to the clause they sit in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from ._dates import TimeMention, TimeWindow, find_time_mentions
from ._lexicon import (
    ATTRIBUTES,
    BOUNDARY_ADVERBS,
    FALLBACK_BLOCKLIST,
    JOB_NOUNS,
    JOB_SUFFIXES,
    KIN,
    LANGUAGES,
    NATIONALITIES,
    NOT_JOBS,
    NUMBER_WORDS,
    OTHER_KIN,
    OWNABLE,
    PETS,
    SCHOOL_WORDS,
    SKIP_ADVERBS,
    VERB_FORMS,
)
from ._types import CandidateEntity, CandidateFact, Op, Precision

Token = Any  # spacy.tokens.Token; spaCy ships no type information
Doc = Any

__all__ = ["read_entities", "read_facts"]

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
    "might", "someday", "presumably", "apparently", "allegedly",
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
_STATE_START_VERBS = {"start", "join", "move", "relocate", "begin"}
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
    )


# --------------------------------------------------------------------------- sentence filters


def _skip_sentence(toks: list[Token]) -> bool:
    words = [t for t in toks if not t.is_punct and not t.is_space]
    if not words:
        return True
    if any(t.text == "?" or "?" in t.text for t in toks):
        return True
    first = words[0]
    if _lw(first) in _QUESTION_STARTERS and first.pos_ != "PROPN":
        return True
    lowers = [_lw(t) for t in words]
    for i, t in enumerate(words):
        lw = lowers[i]
        if lw in _HEDGE_WORDS:
            return True
        if t.tag_ == "MD" and lw in _HEDGE_MODALS:
            nxt = lowers[i + 1] if i + 1 < len(lowers) else ""
            if nxt != "rather":
                return True
        if t.pos_ == "VERB" and str(t.lemma_).lower() in _REPORT_LEMMAS:
            return True
        if lw in _NOBODY or (lw == "no" and i + 1 < len(lowers) and lowers[i + 1] == "one"):
            return True
        if lw in ("let", "let's") and i == 0:
            return True
    return False


def _wrapper_end(sent_toks: list[Token]) -> int:
    """Index of the first token after a memory-directed wrapper ("remember that ...")."""
    if not sent_toks:
        return 0
    start_char = sent_toks[0].idx
    text = "".join(t.text_with_ws for t in sent_toks)
    m = _WRAPPER_RE.match(text)
    if m is None:
        return 0
    cut = start_char + m.end()
    for i, t in enumerate(sent_toks):
        if t.idx >= cut:
            return i
    return len(sent_toks)


def _clauses(toks: list[Token]) -> list[tuple[list[Token], bool]]:
    """Split a sentence into clauses; the flag says the clause shares the previous subject."""
    out: list[tuple[list[Token], bool]] = []
    cur: list[Token] = []
    shared = False
    i = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        lw = _lw(t)
        only_name = all(_is_name_token(c) or _is_loose_name(c) for c in cur)
        if (
            lw in (",", ";", ":", "and", "but", "so", "—", "–")
            and cur
            and not (lw == "and" and only_name)
        ):
            j = i + 1
            while j < n and _lw(toks[j]) in (",", "and", "but", "so", "then", "also", "now"):
                j += 1
            if j < n:
                nxt = toks[j]
                nlw = _lw(nxt)
                new_subject = nlw in ("i", "we", "he", "she", "they", "you") or (
                    nlw in ("my", "our", "his", "her", "their") and _has_verb_after(toks, j)
                )
                if not new_subject and _is_name_token(nxt):
                    k = j
                    while k < n and _is_name_token(toks[k]):
                        k += 1
                    new_subject = k < n and toks[k].pos_ in ("VERB", "AUX")
                shares = nxt.pos_ in ("VERB", "AUX") and nxt.tag_ in ("VBZ", "VBD", "VBP")
                if lw in (";", ":") and not shares:
                    new_subject = True
                if new_subject or (shares and lw in ("and", "but", ",")):
                    out.append((cur, shared))
                    cur = []
                    shared = not new_subject
                    i = j
                    continue
        cur.append(t)
        i += 1
    if cur:
        out.append((cur, shared))
    return out


def _has_verb_after(toks: list[Token], j: int) -> bool:
    for t in toks[j + 1 : j + 6]:
        if t.pos_ in ("VERB", "AUX"):
            return True
        if t.is_punct and _lw(t) not in ("'s", "’s"):
            return False
    return False


# --------------------------------------------------------------------------- subjects


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
        lemma = base[:-1] if base.endswith("s") and base[:-1] in KIN else base
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
    if lw in ("my", "our"):
        return ctx.speaker
    if lw == "your":
        return ctx.addressee
    return ctx.last_person


def _subject(ctx: _Ctx, toks: list[Token]) -> _Subject | None:
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        lw = _lw(t)
        if t.i in ctx.masked or t.is_punct or t.pos_ in ("INTJ", "CCONJ") or lw in _DISCOURSE:
            i += 1
            continue
        break
    if i >= n:
        return None
    t = toks[i]
    lw = _lw(t)
    if lw in ("i", "we"):
        return _Subject(ctx.speaker, "speaker", i + 1)
    if lw == "you":
        return _Subject(ctx.addressee, "person", i + 1) if ctx.addressee else None
    if lw in ("he", "she", "they"):
        return _Subject(ctx.last_person, "person", i + 1) if ctx.last_person else None
    if lw == "the" and i + 1 < n and _lw(toks[i + 1]) == "user":
        # tools, documents and other agents speak of the memory's owner as "the user"
        return _Subject("user", "person", i + 2)
    if (
        lw in ("his", "her", "its", "their")
        and ctx.pending is not None
        and i + 1 < n
        and _lw(toks[i + 1]) == "name"
    ):
        # "I got a kitten, her name is Mochi": the name belongs to the pending pet.
        powner, prel = ctx.pending
        return _Subject(None, "kinname", i + 2, owner=powner, rel=prel)
    if lw in ("my", "our", "his", "her", "their", "your"):
        owner = _owner_of(ctx, lw)
        if owner is None:
            return None
        group, j = _noun_group(toks, i + 1)
        if not group:
            return None
        words = [_lw(g) for g in group]
        phrase = " ".join(words)
        head, rel, is_ex = _kin_head(group)
        if len(words) > 1 and " ".join(words[-2:]) in ATTRIBUTES:
            # "my mother tongue" is an attribute, not my mother.
            head, rel = "", None
        if phrase in ("family", "household") or words[-1] in ("family", "household"):
            return _Subject(owner, "speaker" if owner == ctx.speaker else "person", j)
        if head and (head in KIN or head in PETS or head in OTHER_KIN or rel == "pet"):
            k = j + 1 if j < n and _lw(toks[j]) == "," else j
            end = _name_span(toks, k, loose=True)
            if end > k:
                name = _text(toks[k:end])
                via = (owner, rel) if rel and not is_ex else None
                end = end + 1 if end < n and _lw(toks[end]) == "," else end
                return _Subject(name, "person", end, owner=owner, rel=rel, via=via)
            if j + 1 < n and _lw(toks[j]) in ("'s", "’s") and _lw(toks[j + 1]) == "name":
                return _Subject(None, "kinname", j + 2, owner=owner, rel=rel, noun=head)
            if is_ex:
                return None
            label = f"{owner}'s {_text(group)}"
            return _Subject(label, "kin", j, owner=owner, rel=rel, noun=head)
        attr = _attribute(words)
        if attr is not None:
            return _Subject(None, "attr", j, owner=owner, rel=attr, noun=phrase)
        return None
    loose_start = (
        _is_loose_name(t)
        and i + 1 < n
        and (
            toks[i + 1].pos_ in ("VERB", "AUX")
            or _lw(toks[i + 1]) in VERB_FORMS
            or _lw(toks[i + 1]) in ("'s", "’s", "and")
            or _is_loose_name(toks[i + 1])
        )
    )
    if (
        _is_name_token(t)
        or loose_start
        or (lw in _TITLES and i + 1 < n and _is_name_token(toks[i + 1]))
    ):
        end = _name_span(toks, i, loose=True)
        if end == i:
            return None
        span = toks[i:end]
        labels = {_ent(s) for s in span} - {""}
        if labels & _BAD_SUBJECT_LABELS and "PERSON" not in labels:
            return None
        name = _text(span)
        if end + 1 < n and _lw(toks[end]) == "and" and _lw(toks[end + 1]) == "i":
            return _Subject(ctx.speaker, "speaker", end + 2, co=name)
        if end < n and _lw(toks[end]) in ("'s", "’s"):
            group, j = _noun_group(toks, end + 1)
            if group:
                words = [_lw(g) for g in group]
                head, rel, is_ex = _kin_head(group)
                if rel is not None and not is_ex:
                    k = j + 1 if j < n and _lw(toks[j]) == "," else j
                    nend = _name_span(toks, k)
                    if nend > k:
                        return _Subject(
                            _text(toks[k:nend]),
                            "person",
                            nend,
                            owner=name,
                            rel=rel,
                            via=(name, rel),
                        )
                    if j < n and _lw(toks[j]) in ("'s", "’s"):
                        return _Subject(None, "kinname", j + 2, owner=name, rel=rel)
                    return _Subject(
                        f"{name}'s {_text(group)}", "kin", j, owner=name, rel=rel, noun=head
                    )
                attr = _attribute(words)
                if attr is not None:
                    return _Subject(None, "attr", j, owner=name, rel=attr, noun=" ".join(words))
            return None
        return _Subject(name, "person", end)
    if t.pos_ == "NOUN" and t.tag_ in ("NNS", "NN") and i + 1 < n and toks[i + 1].pos_ == "AUX":
        return _Subject(t.text, "plain", i + 1)
    return None


def _attribute(words: list[str]) -> str | None:
    phrase = " ".join(words)
    if words and words[0] in ("favorite", "favourite"):
        return "prefers"
    if phrase == "name":
        return "name"
    for size in (3, 2, 1):
        key = " ".join(words[-size:])
        if len(words) >= size and key in ATTRIBUTES:
            return ATTRIBUTES[key]
    return None


# --------------------------------------------------------------------------- verb groups


def _skip_flags(toks: list[Token], j: int, vg: _Verb, ctx: _Ctx) -> int:
    n = len(toks)
    while j < n:
        t = toks[j]
        lw = _lw(t)
        if lw in ("not", "n't", "n’t", "never"):
            vg.neg = True
        elif lw == "no" and j + 1 < n and _lw(toks[j + 1]) in ("longer", "more"):
            vg.nolonger = True
            j += 1
        elif t.i in ctx.masked or (lw in SKIP_ADVERBS and t.pos_ in ("ADV", "ADJ", "DET", "PART")):
            pass
        else:
            return j
        j += 1
    return j


def _verb_group(toks: list[Token], j: int, ctx: _Ctx) -> _Verb:
    vg = _Verb()
    n = len(toks)
    while True:
        j = _skip_flags(toks, j, vg, ctx)
        if j >= n:
            return vg
        t = toks[j]
        lw = _lw(t)
        lemma = _norm(t)
        if t.tag_ == "MD" or lw in ("will", "'ll", "wo", "shall", "’ll"):
            if lemma in ("will", "shall") or lw in ("'ll", "’ll", "wo"):
                vg.future = True
            elif lemma in ("would",) or lw in ("'d", "’d"):
                k = _skip_flags(toks, j + 1, vg, ctx)
                if k < n and _lw(toks[k]) == "rather":
                    vg.rather = True
                    j = k + 1
                    continue
                vg.hedge = True
            elif lemma == "can":
                vg.can = True
            else:
                vg.hedge = True
            j += 1
            continue
        if lw == "used" and j + 1 < n and _lw(toks[j + 1]) == "to":
            vg.habitual = vg.past = True
            j += 2
            continue
        k = _skip_flags(toks, j + 1, _Verb(), ctx)
        nxt = toks[k] if k < n else None
        if lemma == "have" and t.pos_ == "AUX" and nxt is not None and nxt.pos_ in ("VERB", "AUX"):
            vg.perfect = True
            vg.past = vg.past or t.tag_ == "VBD"
            j += 1
            continue
        if lemma == "do" and t.pos_ == "AUX":
            vg.past = vg.past or t.tag_ == "VBD"
            j += 1
            continue
        if lw in ("'s", "’s") and t.tag_ == "POS":
            lemma = "be"  # "my birthday's on ...": the model reads a possessive
        if lemma == "be" and nxt is not None:
            k2 = _skip_flags(toks, j + 1, vg, ctx)
            nxt = toks[k2] if k2 < n else None
            vg.past = vg.past or t.tag_ == "VBD"
            if nxt is not None and nxt.pos_ == "VERB" and nxt.tag_ == "VBG":
                if (
                    _lw(nxt) == "going"
                    and k2 + 2 < n
                    and _lw(toks[k2 + 1]) == "to"
                    and toks[k2 + 2].pos_ in ("VERB", "AUX")
                    and toks[k2 + 2].tag_ == "VB"
                ):
                    vg.future = True
                    j = k2 + 2
                    vg.main = j
                    return vg
                vg.progressive = True
                vg.main = k2
                return vg
            if nxt is not None and (
                (nxt.pos_ == "VERB" and nxt.tag_ == "VBN")
                or _lw(nxt) in _VERBATIM - {"allergic", "fluent", "favorite", "favourite"}
            ):
                vg.passive = True
                vg.main = k2
                return vg
            vg.main = j
            return vg
        if lemma == "get" and nxt is not None and nxt.tag_ == "VBN":
            vg.passive = True
            vg.past = vg.past or t.tag_ == "VBD"
            vg.main = k
            return vg
        if t.pos_ in ("VERB", "AUX") or lw in VERB_FORMS:
            vg.main = j
            vg.past = vg.past or (t.tag_ == "VBD") or (t.tag_ == "VBN" and not vg.perfect)
            vg.past = (
                vg.past
                or (lw.endswith("ed") and lw in VERB_FORMS)
                or lw
                in ("left", "went", "flew", "bought", "sold", "ran", "spoke", "taught", "drove")
            )
            return vg
        return vg


# --------------------------------------------------------------------------- objects


@dataclass
class _Obj:
    tokens: list[Token]
    end: int

    @property
    def text(self) -> str:
        return _text(self.tokens)


def _np(ctx: _Ctx, toks: list[Token], k: int, *, place: bool = False) -> _Obj:
    n = len(toks)
    while k < n:
        lw = _lw(toks[k])
        if lw in _DETERMINERS or lw in ("new", "brand", "several", "many", "few"):
            k += 1
        elif (toks[k].like_num and not toks[k].text[:1].isdigit()) or (
            toks[k].like_num and k + 1 < n and toks[k + 1].tag_ == "NNS"
        ):
            k += 1  # "two bikes" -> "bikes"
        elif lw in ("little", "bit") and k + 1 < n and _lw(toks[k + 1]) in {"of"} | LANGUAGES:
            k += 2 if _lw(toks[k + 1]) == "of" else 1
        elif (
            lw in ("some", "basic", "fluent", "conversational")
            and k + 1 < n
            and _lw(toks[k + 1]) in LANGUAGES
        ):
            k += 1
        else:
            break
    items: list[Token] = []
    gerund = k < n and toks[k].tag_ == "VBG" and toks[k].pos_ == "VERB"
    while k < n:
        t = toks[k]
        lw = _lw(t)
        if t.i in ctx.masked:
            break
        if lw in BOUNDARY_ADVERBS and t.pos_ in ("ADV", "ADJ", "NOUN", "INTJ"):
            break
        if t.tag_ == "POS" or lw in ("'s", "’s"):
            if items:
                items.append(t)
                k += 1
                continue
            break
        if t.is_punct:
            if lw in ("-", "&", "+", "#", "/") and items:
                items.append(t)
                k += 1
                continue
            if lw == "," and place and items and k + 1 < n:
                e = _name_span(toks, k + 1)
                if (
                    e > k + 1
                    and _ent(toks[k + 1]) in ("GPE", "LOC")
                    and (e >= n or toks[e].is_punct or toks[e].i in ctx.masked)
                ):
                    items.extend(toks[k:e])
                    k = e
                    continue
            break
        if t.pos_ in ("CCONJ", "SCONJ") or not any(ch.isalnum() for ch in t.text):
            break  # emoji and symbols end an object too
        if t.pos_ == "ADP":
            nxt = toks[k + 1] if k + 1 < n else None
            if items and lw == "of":
                items.append(t)
                k += 1
                continue
            if (
                items
                and lw == "in"
                and nxt is not None
                and _ent(nxt) in ("GPE", "LOC")
                and items[-1].pos_ == "NOUN"
                and not place
            ):
                items.append(t)
                k += 1
                continue
            if items and lw in ("before", "after") and nxt is not None and nxt.like_num:
                items.append(t)
                k += 1
                continue
            if gerund and lw not in ("with", "for", "on", "over", "than", "as", "because"):
                items.append(t)
                k += 1
                continue
            break
        if lw in ("called", "named") and items and k + 1 < n:
            end = _name_span(toks, k + 1, loose=True)
            if end > k + 1:
                # "a small startup called Lumen" -> "Lumen"
                return _Obj(toks[k + 1 : end], end)
            break
        if (
            t.pos_ in ("VERB", "AUX")
            and not items
            and t.tag_ == "VB"
            and (k + 1 >= n or toks[k + 1].is_punct or _lw(toks[k + 1]) in ("and", "or"))
        ):
            # The small model tags some nouns as base verbs ("allergic to shellfish").
            items.append(t)
            k += 1
            continue
        if (
            t.pos_ in ("VERB", "AUX")
            and not (gerund and not items)
            and t.tag_ not in ("VBN", "VBG")
        ):
            break
        if t.pos_ == "VERB" and t.tag_ == "VBG" and items and not gerund:
            break
        if t.pos_ == "PRON" and (items or lw in _BAD_OBJECT_START):
            break
        if t.pos_ == "PART" and lw != "to":
            break
        if t.pos_ == "ADV" and not gerund and lw not in ("lactose",):
            break
        items.append(t)
        k += 1
    while items and (items[-1].pos_ in ("DET", "ADP", "CCONJ", "PART") or items[-1].tag_ == "POS"):
        items.pop()
    return _Obj(items, k)


def _np_list(ctx: _Ctx, toks: list[Token], k: int) -> list[_Obj]:
    out: list[_Obj] = []
    n = len(toks)
    while k < n:
        obj = _np(ctx, toks, k)
        if not obj.tokens:
            break
        out.append(obj)
        k = obj.end
        if k < n and _lw(toks[k]) in (",", "and", "or", "&"):
            j = k + 1
            while j < n and _lw(toks[j]) in (",", "and", "or", "&"):
                j += 1
            if j < n and _lw(toks[j]) in ("i", "we", "he", "she", "they", "you", "my"):
                break
            if j < n and toks[j].pos_ in ("VERB", "AUX") and toks[j].tag_ != "VBG":
                break
            k = j
            continue
        break
    return out


def _valid_obj(obj: _Obj) -> bool:
    if not obj.tokens:
        return False
    first = _lw(obj.tokens[0])
    if first in _BAD_OBJECT_START:
        return False
    nouny = any(t.pos_ in ("NOUN", "PROPN", "NUM", "X") or t.tag_ == "VBG" for t in obj.tokens)
    # The small model tags some food and hobby words as adjectives ("cilantro").
    lone_word = len(obj.tokens) == 1 and obj.tokens[0].pos_ in ("ADJ", "ADV", "VERB")
    if not nouny and not lone_word:
        return False
    return len(obj.tokens) <= 8


def _has_propn(obj: _Obj) -> bool:
    return any(
        t.pos_ == "PROPN" or _ent(t) in ("ORG", "GPE", "PRODUCT", "FAC", "PERSON")
        for t in obj.tokens
    )


def _is_place(obj: _Obj) -> bool:
    return any(_ent(t) in ("GPE", "LOC", "FAC") or t.pos_ == "PROPN" for t in obj.tokens)


def _is_job(words: list[str]) -> bool:
    if not words:
        return False
    phrase = " ".join(words)
    head = words[-1]
    if phrase in NOT_JOBS or head in NOT_JOBS:
        return False
    if phrase in JOB_NOUNS or head in JOB_NOUNS:
        return True
    return head.endswith(JOB_SUFFIXES) and len(head) > 5


def _person(ctx: _Ctx, toks: list[Token], k: int) -> str | None:
    while k < len(toks) and _lw(toks[k]) in _DETERMINERS:
        k += 1
    end = _name_span(toks, k)
    if end == k:
        return None
    return _text(toks[k:end])


def _verb_phrase(ctx: _Ctx, toks: list[Token], k: int) -> str | None:
    """'move to Denver' from 'move to Denver next year': lemma of the verb + the rest."""
    n = len(toks)
    if k >= n or toks[k].pos_ not in ("VERB", "AUX"):
        return None
    words = [str(toks[k].lemma_).lower()]
    j = k + 1
    while j < n:
        t = toks[j]
        lw = _lw(t)
        if t.i in ctx.masked or t.pos_ in ("SCONJ",) or lw in ("because", "so", "but", "and"):
            break
        if t.is_punct and lw not in ("-", "'", "’"):
            break
        if lw in BOUNDARY_ADVERBS or lw in ("with",):
            break
        words.append(t.text)
        j += 1
    phrase = " ".join(words).replace(" 's", "'s")
    return phrase if len(words) <= 8 else None


# --------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class _Rule:
    name: str
    rx: re.Pattern[str]
    predicate: str
    confidence: float
    obj: str  # object reader, see _read_object
    op: Op = "assert"
    state: bool = False  # a state whose simple past means it has ended
    neg_predicate: str | None = None  # negated form ("don't like" -> dislikes)
    needs: frozenset[str] = frozenset()
    many: bool = False  # "French and Spanish" -> two facts


def _r(name: str, rx: str, predicate: str, confidence: float, obj: str, **kw: Any) -> _Rule:
    needs = frozenset(kw.pop("needs", ()))
    return _Rule(name, re.compile(rx), predicate, confidence, obj, needs=needs, **kw)


_O = r"(?P<o>\S)"
# Rules whose verb is shared with a later rule: when the object does not fit, try the next.
_TRY_NEXT = {"quit"}
# "I left Acme" vs "I left Phoenix": the small model often labels companies GPE, so a
# place-like object ends both readings. An end of a value that does not hold is a no-op
# in the engine, so the wrong half costs nothing; a guessed assert would.
_NUMWORDS = "(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")"
_RULES: list[_Rule] = [
    # residence
    _r("live_in", rf"^live (?:in|at|on) {_O}", "lives_in", 0.9, "place", state=True),
    _r("reside_in", rf"^reside in {_O}", "lives_in", 0.9, "place", state=True),
    _r("based_in", rf"^(?:be )?based (?:in|out of) {_O}", "lives_in", 0.85, "place", state=True),
    _r("move_out_of", rf"^move out of {_O}", "lives_in", 0.85, "place", op="end"),
    _r(
        "move_to",
        rf"^(?:move|relocate) (?:back |over |here |there |away )?to {_O}",
        "lives_in",
        0.85,
        "place",
    ),
    _r("move_into", rf"^move into {_O}", "lives_in", 0.8, "place_inside"),
    _r("settle_in", rf"^settle (?:down )?in {_O}", "lives_in", 0.8, "place"),
    # work
    _r("work_at", rf"^work (?:at|for) {_O}", "works_at", 0.9, "org", state=True),
    _r("work_as", rf"^work as {_O}", "job_title", 0.9, "job_free", state=True),
    _r("been_at_org", rf"^be at {_O}", "works_at", 0.75, "org_entity", needs={"perfect"}),
    _r("resign", rf"^(?:resign|retire) from {_O}", "works_at", 0.85, "org", op="end"),
    _r(
        "laid_off",
        rf"^(?:lay off|laid off|fire|sack|let go|make redundant) (?:from|by|at) {_O}",
        "works_at",
        0.8,
        "org",
        op="end",
    ),
    _r("employed_by", rf"^employed by {_O}", "works_at", 0.85, "org", state=True),
    _r(
        "get_job_at",
        r"^(?:get|land|take|accept|start|find) (?:a |an |the |my )?(?:new )?"
        rf"(?:job|position|role) (?:at|with) {_O}",
        "works_at",
        0.85,
        "org",
    ),
    _r(
        "quit_job_at",
        rf"^(?:quit|leave) (?:my |his |her |their |the |a )?job (?:at|with) {_O}",
        "works_at",
        0.85,
        "org",
        op="end",
    ),
    _r("join", rf"^join {_O}", "works_at", 0.75, "org_propn"),
    _r(
        "start_at", rf"^start (?:work |working )?(?:at|with) {_O}", "works_at", 0.8, "org_or_school"
    ),
    _r("quit", rf"^(?:quit|leave) {_O}", "works_at", 0.75, "org_not_place", op="end"),
    _r("leave_place", rf"^leave {_O}", "lives_in|works_at", 0.6, "gpe", op="end"),
    _r("promoted_to", rf"^promoted to {_O}", "job_title", 0.85, "job_free"),
    _r("become_citizen", rf"^become (?:an? )?{_O}\S* citizen", "nationality", 0.85, "nat"),
    _r("become", rf"^become {_O}", "job_title", 0.8, "job"),
    _r("retired", r"^(?:be )?retired(?: [.,§]|$)", "job_title", 0.7, "const:retired"),
    # study
    _r("study_at", rf"^study at {_O}", "studies_at", 0.9, "org", state=True),
    _r(
        "study_x_at", rf"^study (?:\S+ ){{1,3}}at {_O}", "studies_at", 0.85, "org_propn", state=True
    ),
    _r(
        "student_at",
        r"^be (?:an? )?(?:\S+ )?(?:student|undergrad|undergraduate|postgrad|freshman|"
        rf"sophomore|grad student) (?:at|of) {_O}",
        "studies_at",
        0.85,
        "org_propn",
    ),
    _r(
        "degree_at",
        r"^do (?:my |a |an |his |her )?(?:phd|ph\.d\.|masters|master|degree|bachelor|"
        rf"doctorate|mba|undergrad|postdoc)(?: 's)?(?: degree)? (?:at|in) {_O}",
        "studies_at",
        0.85,
        "org_propn",
    ),
    _r("attend", rf"^attend {_O}", "studies_at", 0.8, "org_propn", state=True),
    _r("go_to_school", rf"^go to {_O}", "studies_at", 0.8, "school", needs={"present"}),
    _r("graduate", rf"^graduate from {_O}", "studies_at", 0.8, "org_propn", op="end"),
    _r(
        "finish_degree",
        r"^(?:finish|complete) (?:my |a |an |his |her |their )?(?:phd|ph\.d\.|masters|master|"
        rf"degree|bachelor|doctorate|mba|studies|diploma)(?: 's)?(?: degree)? (?:at|in) {_O}",
        "studies_at",
        0.8,
        "org_propn",
        op="end",
    ),
    _r("drop_out", rf"^drop out of {_O}", "studies_at", 0.8, "org_propn", op="end"),
    # age
    _r(
        "age",
        rf"^be (?P<o>\d{{1,3}}|{_NUMWORDS})"
        r"(?: year old| years old| yo| yrs old)?(?: [.,!§]| and|$)",
        "age",
        0.9,
        "num",
    ),
    _r("turn_age", rf"^turn (?P<o>\d{{1,3}}|{_NUMWORDS})\b", "age", 0.85, "num"),
    # nationality
    _r("citizen", rf"^be (?:an? )?{_O}\S* citizen", "nationality", 0.85, "nat"),
    _r(
        "citizenship",
        rf"^(?:have|hold) (?:an? )?{_O}\S* (?:citizenship|passport|nationality)",
        "nationality",
        0.85,
        "nat",
    ),
    _r("be_nationality", r"^be (?P<o>[a-z.]+)(?: [.,!§]| and|$)", "nationality", 0.8, "nat"),
    # relations
    _r("married_to", rf"^(?:be |get )?married to {_O}", "spouse", 0.9, "person"),
    _r("engaged_to", rf"^(?:be |get )?engaged to {_O}", "partner", 0.85, "person"),
    _r("marry", rf"^marry {_O}", "spouse", 0.85, "person"),
    _r("date", rf"^date {_O}", "partner", 0.8, "person", state=True),
    _r("break_up", rf"^(?:break|split) up with {_O}", "partner", 0.85, "person", op="end"),
    _r("divorced", rf"^divorced (?:from )?{_O}", "spouse", 0.85, "person", op="end"),
    _r("divorce", rf"^divorce {_O}", "spouse", 0.85, "person", op="end"),
    # preferences
    _r(
        "fan_of",
        rf"^be (?:an? )?(?:big |huge |massive |great |real |die-hard )?fan of {_O}",
        "likes",
        0.85,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r("into", rf"^be into {_O}", "likes", 0.8, "pref", neg_predicate="dislikes", many=True),
    _r("get_into", rf"^get into {_O}", "likes", 0.75, "pref", many=True),
    _r(
        "keen_on",
        r"^be (?:obsessed with|crazy about|passionate about|keen on|fond of|hooked on|"
        rf"mad about|addicted to) {_O}",
        "likes",
        0.8,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r(
        "like",
        rf"^(?:love|like|enjoy|adore) {_O}",
        "likes",
        0.85,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r(
        "hate",
        rf"^(?:hate|dislike|detest|loathe|despise|abhor) {_O}",
        "dislikes",
        0.85,
        "pref",
        many=True,
    ),
    _r("cant_stand", rf"^stand {_O}", "dislikes", 0.85, "pref", needs={"can", "neg"}, many=True),
    _r("prefer", rf"^prefer {_O}", "prefers", 0.85, "pref"),
    # languages, instruments, allergies
    _r(
        "speak",
        r"^speak (?:a little |a bit of |some |fluent |basic |conversational |decent |good |"
        rf"native )?{_O}",
        "speaks",
        0.9,
        "lang",
        many=True,
        state=True,
    ),
    _r("fluent_in", rf"^be fluent in {_O}", "speaks", 0.9, "lang", many=True),
    _r("play", rf"^play {_O}", "plays", 0.85, "thing", many=True, state=True),
    _r("allergic_to", rf"^be allergic to {_O}", "allergic_to", 0.9, "np", many=True),
    _r("allergy", rf"^have (?:an? |severe |bad )*{_O}.* allerg", "allergic_to", 0.85, "allergen"),
    # ownership and tools
    _r("own", rf"^own {_O}", "owns", 0.85, "thing", state=True, many=True),
    _r("buy", rf"^(?:buy|purchase) {_O}", "owns", 0.8, "ownable"),
    _r("drive_car", rf"^drive {_O}", "owns", 0.7, "vehicle", needs={"present"}),
    _r("sell", rf"^sell {_O}", "owns", 0.8, "thing", op="end"),
    _r("have_thing", rf"^have {_O}", "owns", 0.7, "ownable", needs={"present"}, many=True),
    _r("get_thing", rf"^get {_O}", "owns", 0.7, "ownable", needs={"past"}),
    _r("use", rf"^use {_O}", "uses", 0.85, "tool", state=True),
    _r("run_tool", rf"^run {_O}", "uses", 0.75, "tool_propn"),
    _r("be_on", rf"^be on {_O}", "uses", 0.7, "tool_propn", needs={"present"}),
    _r(
        "switch_to",
        rf"^switch (?:over )?(?:from (?:\S+ ){{1,4}})?to {_O}",
        "uses",
        0.75,
        "tool_propn",
    ),
    # visits
    _r("been_to", rf"^be to {_O}", "visited", 0.85, "place", needs={"perfect"}),
    _r("visit", rf"^visit {_O}", "visited", 0.85, "place_any", needs={"past"}),
    _r(
        "go_to",
        rf"^(?:go|travel|fly|drive|head|come) (?:back )?to {_O}",
        "visited",
        0.8,
        "gpe",
        needs={"past"},
    ),
    _r("spend_in", rf"^spend .*?\bin {_O}", "visited", 0.75, "gpe", needs={"past"}),
    _r("was_in", rf"^be in {_O}", "visited", 0.7, "gpe", needs={"past", "time"}),
]


# --------------------------------------------------------------------------- clause reading


def _lemma_string(ctx: _Ctx, toks: list[Token], start: int) -> tuple[str, list[int]]:
    """Lemmas from ``start`` on, time masked as '§', with char offset -> clause index."""
    parts: list[str] = []
    offsets: list[int] = []
    index: list[int] = []
    pos = 0
    prev_masked = False
    for k in range(start, len(toks)):
        t = toks[k]
        lw = _lw(t)
        if t.i in ctx.masked:
            if prev_masked:
                continue
            word = "§"
            prev_masked = True
        else:
            prev_masked = False
            if lw in SKIP_ADVERBS and t.pos_ == "ADV" and k > start:
                continue
            if (
                k == start + 1
                and lw in ("not", "n't", "n’t", "never")
                and _norm(toks[start]) == "be"
            ):
                continue
            word = _norm(t)
            if k == start and lw in ("'s", "’s"):
                word = "be"
        offsets.append(pos)
        index.append(k)
        parts.append(word)
        pos += len(word) + 1
    s = " ".join(parts)
    char_to_tok = [len(toks)] * (len(s) + 1)
    for off, k, word in zip(offsets, index, parts, strict=True):
        for c in range(off, min(off + len(word) + 1, len(s) + 1)):
            char_to_tok[c] = k
    return s, char_to_tok


def _clause_window(ctx: _Ctx, toks: list[Token], tense: Tense | None) -> TimeWindow | None:
    seen: set[int] = set()
    for t in toks:
        idx = ctx.masked.get(t.i)
        if idx is None or idx in seen:
            continue
        seen.add(idx)
        w = ctx.mentions[idx].resolve(ctx.reference, tense)
        if w is not None:
            return w
    return None


def _clause_mention(ctx: _Ctx, toks: list[Token]) -> TimeMention | None:
    for t in toks:
        idx = ctx.masked.get(t.i)
        if idx is not None:
            return ctx.mentions[idx]
    return None


def _tense(vg: _Verb, toks: list[Token]) -> Tense:
    if vg.future:
        return "future"
    if vg.past or vg.perfect or vg.habitual:
        return "past"
    if vg.progressive:
        return "present"
    return "present"


def _read_object(ctx: _Ctx, rule: _Rule, toks: list[Token], k: int) -> list[str]:
    kind = rule.obj
    if kind.startswith("const:"):
        return [kind.split(":", 1)[1]]
    if kind == "num":
        t = toks[k]
        if t.text.isdigit() and 0 < int(t.text) <= 120:
            return [t.text]
        value = NUMBER_WORDS.get(_lw(t))
        if value is not None and k + 1 < len(toks) and _lw(toks[k + 1]) in ("-",):
            return []
        return [str(value)] if value else []
    if kind == "person":
        name = _person(ctx, toks, k)
        return [name] if name else []
    if kind == "nat":
        while k < len(toks) and _lw(toks[k]) in ("a", "an"):
            k += 1
        for size in (2, 1):
            span = toks[k : k + size]
            phrase = " ".join(_lw(t) for t in span)
            if len(span) == size and (
                phrase in NATIONALITIES or (size == 1 and _ent(span[0]) == "NORP")
            ):
                nxt = toks[k + size] if k + size < len(toks) else None
                if (
                    nxt is not None
                    and nxt.pos_ == "NOUN"
                    and _lw(nxt)
                    not in ("citizen", "citizenship", "passport", "nationality", "national")
                ):
                    return []  # "I'm Italian-food obsessed", "a German car"
                return [_text(span)]
        return []
    if kind in ("lang", "pref", "np", "thing", "ownable") and rule.many:
        objs = _np_list(ctx, toks, k)
    else:
        objs = [_np(ctx, toks, k, place=kind in ("place", "gpe", "place_any"))]
    out: list[str] = []
    for obj in objs:
        if not _valid_obj(obj):
            continue
        words = [_lw(t) for t in obj.tokens]
        if kind == "lang":
            if " ".join(words) in LANGUAGES:
                out.append(obj.text)
        elif kind in ("place", "gpe"):
            if (
                _is_place(obj)
                if kind == "gpe"
                else (_is_place(obj) or obj.tokens[-1].pos_ == "NOUN")
            ):
                out.append(obj.text)
        elif kind == "place_inside":
            gpes = [t for t in obj.tokens if _ent(t) in ("GPE", "LOC")]
            if gpes:
                out.append(_text(gpes))
        elif kind == "org_not_place":
            if _has_propn(obj) and not any(_ent(t) in ("GPE", "LOC") for t in obj.tokens):
                out.append(obj.text)
        elif kind == "org_entity":
            if any(_ent(t) == "ORG" for t in obj.tokens):
                out.append(obj.text)
        elif kind == "vehicle":
            if _has_propn(obj) or words[-1] in (
                "car",
                "truck",
                "van",
                "motorbike",
                "motorcycle",
                "scooter",
            ):
                out.append(obj.text)
        elif kind == "org_propn":
            if _has_propn(obj):
                out.append(obj.text)
        elif kind == "org_or_school" or kind == "school":
            if _has_propn(obj) and (kind != "school" or set(words) & SCHOOL_WORDS):
                out.append(obj.text)
        elif kind == "job":
            if _is_job(words):
                out.append(obj.text)
        elif kind == "job_free":
            if words[-1] not in NOT_JOBS and obj.tokens[-1].pos_ in ("NOUN", "PROPN", "ADJ"):
                out.append(obj.text)
        elif kind == "ownable":
            if _has_propn(obj) or any(t.lemma_.lower() in OWNABLE for t in obj.tokens):
                out.append(obj.text)
        elif kind in ("tool_propn",):
            if _has_propn(obj):
                out.append(obj.text)
        elif kind == "allergen":
            kept = [t for t in obj.tokens if not _lw(t).startswith("allerg")]
            if kept:
                out.append(_text(kept))
        else:
            out.append(obj.text)
    return out


def _rule_hits(
    ctx: _Ctx,
    subj: _Subject,
    toks: list[Token],
    vg: _Verb,
    rstr: str,
    char_to_tok: list[int],
    *,
    has_time: bool,
    tense: Tense,
) -> tuple[list[_Hit], bool]:
    """Matches of the rule table; the flag says a rule's verb matched at all."""
    for rule in _RULES:
        m = rule.rx.search(rstr)
        if m is None:
            continue
        needs = rule.needs
        if "perfect" in needs and not vg.perfect:
            continue
        if "past" in needs and not (vg.past or vg.perfect):
            continue
        if "present" in needs and (vg.past or vg.future or vg.habitual):
            continue
        if "time" in needs and not has_time:
            continue
        if "can" in needs and not vg.can:
            continue
        if "neg" in needs and not vg.neg:
            continue
        predicate = rule.predicate
        op: Op = rule.op
        negated = vg.neg and "neg" not in needs
        if negated or vg.nolonger:
            if vg.nolonger and op == "assert":
                op = "end"
            elif negated and rule.neg_predicate and not vg.nolonger:
                predicate = rule.neg_predicate
            else:
                return [], True
        k = char_to_tok[m.start("o")] if "o" in rule.rx.groupindex else 0
        objects = _read_object(ctx, rule, toks, k)
        if not objects and rule.name in _TRY_NEXT:
            continue
        if (
            rule.obj == "org_or_school"
            and objects
            and set(objects[0].lower().split()) & SCHOOL_WORDS
        ):
            predicate = "studies_at"
        hits = [
            _Hit(pred, o, rule.name, rule.confidence, op, state=rule.state)
            for o in objects
            for pred in predicate.split("|")
        ]
        if rule.name == "work_as" and hits:
            # "works as a nurse at Mount Sinai": the employer follows the title.
            title = _np(ctx, toks, k)
            j = title.end
            if j < len(toks) and _lw(toks[j]) in ("at", "for"):
                org = _np(ctx, toks, j + 1)
                if _valid_obj(org) and _has_propn(org):
                    hits.append(_Hit("works_at", org.text, "work_as_at", 0.85, op, state=True))
        return hits, True
    return [], False


def _copula_hits(
    ctx: _Ctx, subj: _Subject, toks: list[Token], vg: _Verb, rstr: str, char_to_tok: list[int]
) -> list[_Hit] | None:
    """Copular sentences whose meaning depends on the subject's shape."""
    if not rstr.startswith("be "):
        return None
    k = char_to_tok[3] if len(rstr) > 3 else len(toks)
    n = len(toks)
    if vg.neg:
        return None
    if subj.kind == "kinname" and subj.owner and subj.rel:
        name = _person(ctx, toks, k)
        return [_Hit(subj.rel, name, "possessed_name", 0.9, subject=subj.owner)] if name else []
    if subj.kind == "attr" and subj.owner and subj.rel:
        return _attribute_hits(ctx, subj, toks, k)
    if subj.kind == "kin" and subj.owner and subj.rel and k < n and _is_name_token(toks[k]):
        names: list[str] = []
        j = k
        while j < n:
            end = _name_span(toks, j)
            if end == j:
                break
            names.append(_text(toks[j:end]))
            j = end
            while j < n and _lw(toks[j]) in (",", "and", "&"):
                j += 1
        if j < n and not toks[j].is_punct:
            return []
        return [_Hit(subj.rel, nm, "kin_is_name", 0.85, subject=subj.owner) for nm in names]
    # "Mira is my sister", "Cats are my favourite animals"
    if k < n and _lw(toks[k]) in ("my", "our", "his", "her", "their"):
        owner = _owner_of(ctx, _lw(toks[k]))
        group, j = _noun_group(toks, k + 1)
        words = [_lw(g) for g in group]
        if owner and group and subj.name:
            if words[0] in ("favorite", "favourite"):
                return [_Hit("prefers", subj.name, "is_my_favourite", 0.85, subject=owner)]
            _head, rel, is_ex = _kin_head(group)
            if rel and subj.kind in ("person",):
                op: Op = "end" if is_ex else "assert"
                if is_ex and rel == "friend":
                    return []
                return [_Hit(rel, subj.name, "is_my_kin", 0.9, op=op, subject=owner)]
        return []
    if subj.kind == "plain":
        return []
    if k < n and _lw(toks[k]) in ("a", "an"):
        obj = _np(ctx, toks, k)
        words = [_lw(t) for t in obj.tokens]
        if obj.tokens and _is_job(words) and "student" not in words:
            hits = [_Hit("job_title", obj.text, "is_a_job", 0.9, state=True)]
            j = obj.end
            if j < n and _lw(toks[j]) in ("at", "for", "with"):
                org = _np(ctx, toks, j + 1)
                if _valid_obj(org) and _has_propn(org):
                    hits.append(_Hit("works_at", org.text, "is_a_job_at", 0.85, state=True))
            return hits
        return None
    return None


def _attribute_hits(ctx: _Ctx, subj: _Subject, toks: list[Token], k: int) -> list[_Hit]:
    rel = subj.rel
    owner = subj.owner
    assert owner is not None
    n = len(toks)
    if rel == "name":
        name = _person(ctx, toks, k)
        if name and ctx.pending and ctx.pending[0] and subj.owner != ctx.speaker:
            powner, prel = ctx.pending
            return [_Hit(prel, name, "pending_name", 0.85, subject=powner)]
        return []
    if rel == "birthday":
        mention = _clause_mention(ctx, toks)
        if mention is None or not mention.anchors:
            return []
        a = mention.anchors[0]
        if a.kind != "date" or a.month is None or a.day is None:
            return []
        return [
            _Hit(
                "birthday",
                _format_birthday(a.month, a.day, a.year),
                "birthday_is",
                0.9,
                subject=owner,
                timeless=True,
            )
        ]
    if k < n and _lw(toks[k]) in ("on",) and rel != "uses":
        k += 1
    title_end = _name_span(toks, k, loose=True)
    if title_end > k and (title_end >= n or toks[title_end].is_punct):
        # A capitalised title the tagger splits up: "Spirited Away", "The Wire".
        obj = _Obj(toks[k:title_end], title_end)
    else:
        obj = _np(ctx, toks, k, place=rel in ("born_in",))
    if not _valid_obj(obj):
        return []
    words = [_lw(t) for t in obj.tokens]
    if rel == "speaks" and " ".join(words) not in LANGUAGES:
        return []
    if rel == "job_title" and (words[-1] in NOT_JOBS):
        return []
    if rel in ("owns", "uses", "works_at", "studies_at") and not _has_propn(obj) and rel != "owns":
        return []
    timeless = rel in ("born_in", "birthday")
    return [
        _Hit(
            rel or "",
            obj.text,
            f"my_{(subj.noun or rel or '').replace(' ', '_')}_is",
            0.85,
            subject=owner,
            timeless=timeless,
            state=True,
        )
    ]


_MONTH_NAMES = [
    "January", "February", "March", "April", "May", "June", "July", "August",
    "September", "October", "November", "December",
]  # fmt: skip


def _format_birthday(month: int, day: int, year: int | None) -> str:
    base = f"{_MONTH_NAMES[month - 1]} {day}"
    return f"{base}, {year}" if year else base


def _born_hits(ctx: _Ctx, toks: list[Token], start: int) -> list[_Hit]:
    hits: list[_Hit] = []
    mention = _clause_mention(ctx, toks)
    if mention is not None and mention.anchors:
        a = mention.anchors[0]
        if a.kind == "date" and a.month is not None and a.day is not None:
            hits.append(
                _Hit(
                    "birthday",
                    _format_birthday(a.month, a.day, a.year),
                    "born_on",
                    0.9,
                    timeless=True,
                )
            )
    n = len(toks)
    for k in range(start, n - 1):
        if _lw(toks[k]) == "in" and toks[k].i not in ctx.masked and toks[k + 1].i not in ctx.masked:
            obj = _np(ctx, toks, k + 1, place=True)
            if _valid_obj(obj) and _is_place(obj):
                hits.append(_Hit("born_in", obj.text, "born_in", 0.9, timeless=True))
                break
    return hits


def _have_named(ctx: _Ctx, subj_name: str, toks: list[Token], k: int) -> tuple[list[_Hit], bool]:
    """'have a dog named Rex', 'have two kids, Emma and Noah', 'adopted a puppy called Biscuit'."""
    n = len(toks)
    j = k
    while j < n and (_lw(toks[j]) in _DETERMINERS or toks[j].like_num or toks[j].pos_ == "ADJ"):
        j += 1
    group: list[Token] = []
    while j < n and toks[j].pos_ in ("NOUN", "PROPN") and not (group and _is_name_token(toks[j])):
        group.append(toks[j])
        j += 1
    if not group:
        return [], False
    _head, rel, is_ex = _kin_head(group)
    if rel is None or is_ex:
        return [], False
    names: list[str] = []
    if (j < n and _lw(toks[j]) in ("named", "called")) or (j < n and _lw(toks[j]) == ","):
        j += 1
    while j < n:
        end = _name_span(toks, j)
        if end == j:
            break
        names.append(_text(toks[j:end]))
        j = end
        if j < n and _lw(toks[j]) in (",", "and", "&"):
            j += 1
            while j < n and _lw(toks[j]) in (",", "and", "&"):
                j += 1
            continue
        break
    if not names:
        ctx.pending = (subj_name, rel)
        return [], True
    return [_Hit(rel, nm, "has_named", 0.9) for nm in names], True


def _read_clause(ctx: _Ctx, toks: list[Token], subj: _Subject) -> list[_Hit]:
    vg = _verb_group(toks, subj.end, ctx)
    if vg.main < 0 or vg.hedge:
        return []
    if (
        any(
            _lw(t) == "anymore" or (_lw(t) == "more" and _lw(toks[i - 1]) == "any")
            for i, t in enumerate(toks)
            if i > 0
        )
        and vg.neg
    ):
        vg.neg = False
        vg.nolonger = True
    tense = _tense(vg, toks)
    rstr, c2t = _lemma_string(ctx, toks, vg.main)
    if not rstr:
        return []
    window = _clause_window(ctx, toks, tense)
    has_time = window is not None
    future_time = (
        window is not None and window.valid_from is not None and window.valid_from > ctx.reference
    )
    main_lemma = rstr.split(" ", 1)[0]
    n = len(toks)

    # Co-subject marriage: "Tom and I got married in 2015".
    if subj.co and not vg.neg:
        co_rules: list[tuple[str, str, Op]] = [
            (r"^(?:married|marry)\b", "spouse", "assert"),
            (r"^(?:be together|date|be a couple|be engaged|engaged)\b", "partner", "assert"),
            (r"^(?:break|split) up\b", "partner", "end"),
            (r"^(?:divorced|divorce|get divorced)\b", "spouse", "end"),
        ]
        for rx, pred, co_op in co_rules:
            if re.match(rx, rstr):
                return [_Hit(pred, subj.co, "co_subject", 0.85, op=co_op)]
        return []
    if subj.kind == "kin" and main_lemma in ("called", "named") and subj.owner and subj.rel:
        name = _person(ctx, toks, c2t[rstr.index(" ") + 1]) if " " in rstr else None
        return [_Hit(subj.rel, name, "kin_called", 0.9, subject=subj.owner)] if name else []
    if subj.via and main_lemma in ("die", "pass") and not vg.neg:
        owner, rel = subj.via
        return [_Hit(rel, subj.name or "", "died", 0.8, op="end", subject=owner)]
    if main_lemma == "born" and not vg.neg:
        return _born_hits(ctx, toks, vg.main)

    # Preference for an action: "I'd rather take the train".
    if vg.rather and not vg.neg:
        phrase = _verb_phrase(ctx, toks, vg.main)
        return [_Hit("prefers", phrase, "would_rather", 0.75, timeless=True)] if phrase else []

    # Plans: "plan to", "intend to", "be going to", "will", progressive with a future date.
    m = re.match(r"^(?:plan|intend|aim|hope|decide|prepare) (?:on )?to ", rstr)
    if m and not vg.neg:
        k = c2t[m.end()]
        phrase = _verb_phrase(ctx, toks, k)
        return [_Hit("plans", phrase, "plan_to", 0.8, timeless=True)] if phrase else []
    starts_state = main_lemma in _STATE_START_VERBS and future_time
    if vg.future and not vg.neg and main_lemma not in ("be", "have") and not starts_state:
        phrase = _verb_phrase(ctx, toks, vg.main)
        return [_Hit("plans", phrase, "future", 0.75, timeless=True)] if phrase else []
    if vg.future and main_lemma == "be" and not future_time:
        return []
    if vg.progressive and future_time and not vg.neg and main_lemma not in _STATE_START_VERBS:
        if main_lemma in _PLAN_VERBS_PROGRESSIVE:
            phrase = _verb_phrase(ctx, toks, vg.main)
            if phrase and " " in phrase:
                return [_Hit("plans", phrase, "progressive_future", 0.75, timeless=True)]
            return []
        return []

    # Stopping an activity: "I stopped using Windows", "quit playing the piano".
    m = re.match(r"^(?:stop|quit|give up) (?=\S+)", rstr)
    if m and vg.main + 1 < n and toks[c2t[m.end()]].tag_ == "VBG":
        sub_rstr, sub_c2t = _lemma_string(ctx, toks, c2t[m.end()])
        hits, _ = _rule_hits(
            ctx, subj, toks, _Verb(main=vg.main), sub_rstr, sub_c2t, has_time=has_time, tense=tense
        )
        return [replace(h, op="end") for h in hits if h.op == "assert"] if not vg.neg else []

    # Possession or adoption of named relatives and pets.
    if main_lemma in ("have", "adopt", "get", "rescue") and not vg.neg and subj.name:
        hits, matched = _have_named(ctx, subj.name, toks, vg.main + 1)
        if matched:
            return hits

    copula = _copula_hits(ctx, subj, toks, vg, rstr, c2t)
    if copula is not None:
        return copula
    if subj.kind in ("attr", "kinname", "plain"):
        return []

    hits, matched = _rule_hits(ctx, subj, toks, vg, rstr, c2t, has_time=has_time, tense=tense)
    if matched:
        if rstr.startswith("move from "):
            pass
        return hits
    move = re.match(r"^(?:move|relocate) from ", rstr)
    if move and not vg.neg:
        return _move_from_to(ctx, toks, c2t[move.end()])

    return _fallback(ctx, subj, toks, vg, rstr, c2t)


def _move_from_to(ctx: _Ctx, toks: list[Token], k: int) -> list[_Hit]:
    src = _np(ctx, toks, k, place=True)
    j = src.end
    if not _valid_obj(src) or j >= len(toks) or _lw(toks[j]) != "to":
        return []
    dst = _np(ctx, toks, j + 1, place=True)
    if not _valid_obj(dst):
        return []
    return [
        _Hit("lives_in", dst.text, "move_from_to", 0.85),
        _Hit("lives_in", src.text, "move_from_to", 0.8, op="end"),
    ]


def _fallback(
    ctx: _Ctx, subj: _Subject, toks: list[Token], vg: _Verb, rstr: str, c2t: list[int]
) -> list[_Hit]:
    """Unknown verb + direct object -> a lemma predicate, marked many, low confidence."""
    if vg.neg or vg.nolonger or vg.future or vg.passive or vg.habitual or vg.can:
        return []
    if subj.kind not in ("speaker", "person") or not subj.name:
        return []
    main = toks[vg.main]
    lemma = str(main.lemma_).lower()
    if main.pos_ != "VERB" or lemma in FALLBACK_BLOCKLIST or not re.fullmatch(r"[a-z]+", lemma):
        return []
    k = vg.main + 1
    n = len(toks)
    predicate = lemma
    if k < n and toks[k].dep_ == "prt":
        predicate = f"{lemma}_{_lw(toks[k])}"
        k += 1
    if k >= n or toks[k].dep_ not in ("dobj", "det", "amod", "compound", "poss", "nummod"):
        return []
    obj = _np(ctx, toks, k)
    if not _valid_obj(obj) or obj.tokens[-1].pos_ not in ("NOUN", "PROPN"):
        return []
    if len(obj.tokens) > 5:
        return []
    return [_Hit(predicate, obj.text, "fallback_lemma", 0.5, cardinality="many")]


# --------------------------------------------------------------------------- time


def _apply_time(
    hit: _Hit, window: TimeWindow | None, vg_past_state: bool, perfect: bool
) -> tuple[datetime | None, datetime | None, Precision | None, Op] | None:
    op = hit.op
    if hit.timeless:
        return None, None, None, op
    if window is None:
        if vg_past_state and hit.state and op == "assert":
            return None, None, None, "end"
        return None, None, None, op
    prec = window.precision
    if op == "end":
        if window.role in ("point", "since"):
            return window.valid_from, None, prec, op
        return None, None, None, op
    role = window.role
    if role == "duration":
        return (window.valid_from, None, prec, op) if perfect else (None, None, None, op)
    if role == "point" and vg_past_state and hit.state and window.period is not None:
        return window.valid_from, window.period.end, prec, op
    return window.valid_from, window.valid_to, prec, op


# --------------------------------------------------------------------------- entry points


def _appositions(ctx: _Ctx, toks: list[Token]) -> list[CandidateFact]:
    """'my sister Mira', 'my wife, Sara,', 'our cat Luna' anywhere in a sentence."""
    out: list[CandidateFact] = []
    n = len(toks)
    for i, t in enumerate(toks):
        lw = _lw(t)
        if lw not in ("my", "our", "his", "her", "their"):
            continue
        owner = _owner_of(ctx, lw)
        if owner is None:
            continue
        group, j = _noun_group(toks, i + 1)
        if not group:
            continue
        _head, rel, is_ex = _kin_head(group)
        if rel is None or is_ex:
            continue
        k = j + 1 if j < n and _lw(toks[j]) == "," else j
        end = _name_span(toks, k, loose=True)
        if end == k:
            continue
        name = _text(toks[k:end])
        if name.lower() in ("i",):
            continue
        out.append(
            CandidateFact(
                owner, rel, name, "assert", None, None, None, 0.9, "possessive_apposition"
            )
        )
    return out


def read_facts(
    doc: Doc, *, speaker: str, addressee: str | None, reference: datetime
) -> list[CandidateFact]:
    """Candidate facts from a parsed document (see the module docstring for the rules)."""
    mentions = find_time_mentions(doc.text)
    masked: dict[int, int] = {}
    mi = 0
    for t in doc if mentions else ():
        # Mentions are sorted and disjoint: one forward pass pairs them with tokens.
        while mi < len(mentions) and mentions[mi].end <= t.idx:
            mi += 1
        if mi == len(mentions):
            break
        if mentions[mi].start <= t.idx:
            masked[t.i] = mi
    ctx = _Ctx(speaker, addressee, reference, masked, mentions)
    facts: list[CandidateFact] = []
    for sent in doc.sents:
        stoks = list(sent)
        if len(stoks) > 200:
            # Run-ons this long are pasted text, not statements about oneself.
            continue
        start = _wrapper_end(stoks)
        body = stoks[start:]
        if _skip_sentence(body):
            continue
        sent_facts: list[CandidateFact] = []
        prev: _Subject | None = None
        for clause, shared in _clauses(body):
            # A shared-subject clause ("... and works at X") starts at its verb.
            subj = replace(prev, end=0) if shared and prev is not None else _subject(ctx, clause)
            if subj is None or (subj.name is None and subj.kind not in ("kinname", "attr")):
                prev = None
                continue
            hits = _read_clause(ctx, clause, subj)
            vg = _verb_group(clause, subj.end, ctx)
            window = _clause_window(ctx, clause, _tense(vg, clause))
            past_state = (vg.past and not vg.perfect) or vg.habitual
            for h in hits:
                if not h.obj:
                    continue
                s = h.subject or subj.name
                if not s:
                    continue
                timed = _apply_time(h, h.window or window, past_state, vg.perfect or vg.progressive)
                if timed is None:
                    continue
                vf, vt, prec, op = timed
                if vf is None and vt is None:
                    prec = None
                sent_facts.append(
                    CandidateFact(
                        subject=s,
                        predicate=h.predicate,
                        object=h.obj,
                        op=op,
                        valid_from=vf,
                        valid_to=vt,
                        precision=prec,
                        confidence=h.confidence,
                        pattern=h.pattern,
                        cardinality_hint=h.cardinality,
                    )
                )
            if subj.kind == "person" and subj.name and subj.name != ctx.addressee:
                ctx.last_person = subj.name
            prev = subj
        # After the clauses, so "his wife Noor" can find "his" in this sentence's subject.
        appositions = _appositions(ctx, body)
        sent_facts = appositions + sent_facts
        for f in appositions:
            ctx.last_person = f.object
        facts.extend(sent_facts)
    return _dedupe(facts)


def _dedupe(facts: list[CandidateFact]) -> list[CandidateFact]:
    ended = {(f.subject.lower(), f.predicate, f.object.lower()) for f in facts if f.op == "end"}
    out: list[CandidateFact] = []
    seen: set[tuple[str, str, str, str]] = set()
    for f in facts:
        key = (f.subject.lower(), f.predicate, f.object.lower())
        if f.op == "assert" and f.pattern == "possessive_apposition" and key in ended:
            continue
        full = (*key, f.op)
        if full in seen:
            continue
        seen.add(full)
        out.append(f)
    return out


def read_entities(
    doc: Doc, facts: Iterable[CandidateFact], *, speaker: str, addressee: str | None
) -> list[CandidateEntity]:
    """Named entities, proper nouns, the speaker and the addressee, deduplicated."""
    out: dict[str, CandidateEntity] = {}

    def add(name: str, label: str) -> None:
        name = re.sub(r"\s+", " ", name).strip()
        key = name.casefold()
        if name and key not in out:
            out[key] = CandidateEntity(name, label)

    first_person = any(
        _lw(t) in ("i", "me", "my", "myself", "mine", "we", "our", "us") for t in doc
    )
    if first_person:
        add(speaker, "SPEAKER")
    if addressee and any(_lw(t) in ("you", "your", "yours", "yourself") for t in doc):
        add(addressee, "ADDRESSEE")
    for ent in doc.ents:
        if ent.label_ in _ENTITY_LABELS:
            add(_strip_det(ent.text), ent.label_)
    people = {"spouse", "partner", "sibling", "parent", "child", "friend"}
    for f in facts:
        if f.predicate in people:
            add(f.object, "PERSON")
        elif f.predicate == "pet":
            add(f.object, "PET")
    i = 0
    toks = list(doc)
    while i < len(toks):
        t = toks[i]
        if t.pos_ == "PROPN" and not t.ent_type_ and t.text[:1].isupper():
            j = i
            while j < len(toks) and toks[j].pos_ == "PROPN" and not toks[j].ent_type_:
                j += 1
            add(_text(toks[i:j]), "PROPN")
            i = j
            continue
        i += 1
    return list(out.values())


def _strip_det(text: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)
