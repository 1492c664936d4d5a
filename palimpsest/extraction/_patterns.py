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

Where each step lives: ``_sentences`` (filters, wrappers, clauses), ``_subjects``
(who a clause is about), ``_verbs`` (verb flags, tense, time, lemma string),
``_clause`` (one clause, special forms first), ``_copulas`` (copulas and
possessives, births), ``_rules`` (the regex table) and ``_rule_match`` (matching
it, reading objects), ``_objects`` (noun phrases, names), ``_tokens`` (shared word
lists, clause state, token tests). This module applies time and collects facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

from ._clause import _read_clause
from ._coref import context_people, kin_pronoun
from ._dates import TimeWindow, find_time_mentions
from ._sentences import _clauses, _skip_sentence, _wrapper_end
from ._spacy import Lexicon
from ._subjects import _subject
from ._tokens import (
    _ENTITY_LABELS,
    Doc,
    Token,
    _Ctx,
    _Hit,
    _kin_head,
    _lw,
    _name_span,
    _noun_group,
    _owner_of,
    _Subject,
    _text,
)
from ._types import CandidateEntity, CandidateFact, Op, Precision
from ._verbs import _clause_window, _tense, _verb_group

__all__ = ["mask_times", "read_entities", "read_facts", "read_sentences"]

# Preferences are not states in simple past ("I loved that film"), but "used to" ends them.
_HABIT_ENDS = {"likes", "dislikes", "prefers"}
# A claim about the listener is read below the engine's confidence floor (0.6).
LISTENER_CONFIDENCE = 0.55
# Predicates of a person's standing facts, which a listener may be told of themselves.
_PROFILE = {
    "lives_in", "works_at", "job_title", "studies_at", "born_in", "birthday", "age",
    "nationality", "spouse", "partner", "sibling", "parent", "child", "friend", "pet",
    "speaks", "allergic_to", "owns",
}  # fmt: skip
_LISTENER_SILENT = {"fallback_lemma", "future", "plan_to", "progressive_future"}
_PEOPLE_AND_PETS = {"spouse", "partner", "sibling", "parent", "child", "friend", "pet"}


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
    doc: Doc,
    *,
    speaker: str,
    addressee: str | None,
    reference: datetime,
    lexicon: Lexicon | None = None,
    context: Sequence[tuple[str, str]] = (),
) -> list[CandidateFact]:
    """Candidate facts from a parsed text (see the module docstring for the rules).

    ``context``: the conversation's turns before this one, ``(speaker, text)``.
    """
    ctx = _Ctx(speaker, addressee, reference, {}, [], lexicon=lexicon or Lexicon())
    ctx.names.update(n for n in (speaker, addressee) if n)
    if context:
        ctx.people = context_people(context, ctx.lexicon)
    return _dedupe(read_sentences(ctx, doc))


def mask_times(ctx: _Ctx, doc: Doc) -> None:
    """Find the time expressions of ``doc`` and mark their tokens, for ``ctx``."""
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
    ctx.masked, ctx.mentions = masked, mentions


def read_sentences(ctx: _Ctx, doc: Doc) -> list[CandidateFact]:
    """The facts of every sentence of ``doc``; ``ctx`` carries who was last spoken of."""
    mask_times(ctx, doc)
    facts: list[CandidateFact] = []
    carried: TimeWindow | None = None
    for sent in doc.sents:
        # "Last night was amazing! We celebrated her birthday": a sentence that only
        # names a time dates the events the next one tells (simple past, no date of
        # their own); a sentence that states facts keeps its time to itself
        ctx.sentence_time = carried
        before = len(facts)
        for part in _dash_parts(list(sent)):
            facts.extend(_sentence_facts(ctx, part))
        carried = _announced_time(ctx, list(sent)) if len(facts) == before else None
    return facts


def _announced_time(ctx: _Ctx, toks: list[Token]) -> TimeWindow | None:
    """The past day, week or month a sentence with no fact of its own names (a turn's)."""
    if ctx.topic is not None:
        return None
    window = _clause_window(ctx, toks, "past")
    if (
        window is None
        or window.valid_from is None
        or window.valid_from > ctx.reference
        or window.precision == "year"
        or window.role != "point"
    ):
        return None
    return window


def _dash_parts(toks: list[Token]) -> list[list[Token]]:
    """'Guess what - I got a puppy!': a spaced dash joins two sentences in a chat."""
    parts: list[list[Token]] = [[]]
    for i, t in enumerate(toks):
        spaced = i > 0 and bool(toks[i - 1].whitespace_) and bool(t.whitespace_)
        if t.text in ("-", "–", "—", "--") and spaced and parts[-1]:
            parts.append([])
            continue
        parts[-1].append(t)
    return [p for p in parts if p]


def _sentence_facts(ctx: _Ctx, stoks: list[Token]) -> list[CandidateFact]:
    if len(stoks) > 200:
        # Run-ons this long are pasted text, not statements about oneself.
        return []
    start = _wrapper_end(stoks)
    body = stoks[start:]
    if _skip_sentence(body):
        return []
    sent_facts: list[CandidateFact] = []
    prev: _Subject | None = None
    for clause, shared in _with_leading_time(ctx, _clauses(body)):
        # A shared-subject clause ("... and works at X") starts at its verb.
        subj = replace(prev, end=0) if shared and prev is not None else _subject(ctx, clause)
        if subj is None or (subj.name is None and subj.kind not in ("kinname", "attr")):
            prev = None
            # "While volunteering yesterday, I met Jean": a clause read for no fact still
            # names the time of the sentence's events
            ctx.sentence_time = _announced_time(ctx, clause) or ctx.sentence_time
            continue
        sent_facts.extend(_clause_facts(ctx, clause, subj))
        if subj.kind == "person" and subj.name and subj.name != ctx.addressee:
            ctx.last_person, ctx.last_pronoun = subj.name, None
        elif subj.kind == "kin" and subj.name:
            ctx.last_person, ctx.last_pronoun = subj.name, kin_pronoun(subj.noun)
        prev = subj
    # After the clauses, so "his wife Noor" can find "his" in this sentence's subject.
    appositions = _appositions(ctx, body)
    sent_facts = appositions + sent_facts
    for f in appositions:
        ctx.last_person = f.object
    ctx.names.update(f.object for f in sent_facts if f.predicate in _PEOPLE_AND_PETS)
    return sent_facts


def _with_leading_time(
    ctx: _Ctx, clauses: list[tuple[list[Token], bool]]
) -> list[tuple[list[Token], bool]]:
    """'In 2000, Sarri signed for Sansovino': a clause that is only a time belongs to
    the clause after it, not to nothing."""
    out: list[tuple[list[Token], bool]] = []
    carry: list[Token] = []
    for toks, shared in clauses:
        words = [t for t in toks if not t.is_punct]
        if words and all(t.i in ctx.masked or t.pos_ in ("ADP", "DET") for t in words):
            carry += toks
            continue
        out.append((carry + toks, shared and not carry))
        carry = []
    return out


def _clause_facts(ctx: _Ctx, clause: list[Token], subj: _Subject) -> list[CandidateFact]:
    hits = _read_clause(ctx, clause, subj)
    vg = _verb_group(clause, subj.end, ctx)
    window = _clause_window(ctx, clause, _tense(vg, clause))
    if window is not None:
        ctx.sentence_time = window
    elif vg.past and not vg.perfect and ctx.topic is None:
        # "I had a day out last weekend - we went biking": one time for the sentence
        window = ctx.sentence_time
    # a turn's simple past ends a state ("I lived in Paris"); a document's past tense is
    # its narrative, whose states its timeline ends
    past_state = ((vg.past and not vg.perfect) or vg.habitual) and ctx.topic is None
    out: list[CandidateFact] = []
    for h in hits:
        if not h.obj:
            continue
        if vg.habitual and h.predicate in _HABIT_ENDS:
            # "I used to love sushi": a taste that held then, and holds no more.
            h = replace(h, state=True)
        s = h.subject or subj.name
        if not s:
            continue
        if s == ctx.addressee and s != ctx.speaker:
            # what one says of the listener is a reading of them, not their word:
            # praise and cheer ("you captured it perfectly") say nothing; plain
            # statements wait in quarantine until the listener confirms them
            if h.pattern in _LISTENER_SILENT or h.predicate not in _PROFILE:
                continue
            h = replace(h, confidence=min(h.confidence, LISTENER_CONFIDENCE))
        # "we played chess", "I used my contacts": a chat's past of a pastime is an
        # occasion, not the end of it ("used to" still ends it)
        occasion = h.predicate in ("plays", "uses") and not vg.habitual and ctx.topic is None
        ended = past_state and not occasion
        timed = _apply_time(h, h.window or window, ended, vg.perfect or vg.progressive)
        if timed is None:
            continue
        vf, vt, prec, op = timed
        if vf is None and vt is None:
            prec = None
        out.append(
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
    return out


def _dedupe(facts: list[CandidateFact]) -> list[CandidateFact]:
    """One copy of each fact; an apposition the text also ends is dropped."""
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
