"""Document mode: prose about one topic, read paragraph by paragraph.

>>> facts = read_document(paragraph_docs, speaker="Wikipedia", reference=ref,
...                       lexicon=lex)                                # doctest: +SKIP
>>> [(f.subject, f.predicate, f.object) for f in facts][:1]          # doctest: +SKIP
[('Preston Smith (governor)', 'position_held', 'lieutenant governor')]

How a document is read, and why:

1. The topic (``_topic``) is found first: the title line, or the name opening
   the first sentence. "He", "Smith", "the house" then stand for it, so the
   facts attach to the page's subject rather than to short or partial names.
2. Paragraphs are read in turn with one running context: the topic, the
   section heading last seen, and the time last spoken of ("later that year").
   A long document is read section by section, never skipped.
3. Sentences go through the same clause rules as a conversation turn, plus
   the relations of biographies and organisations (``_rules_doc``); a person
   who bought the house, headed the club or lived in it is a fact *of the
   topic* (owned_by, led_by, resident).
4. A list item under a heading ("Managers." / "- Stoycho Stoev (22 December
   2014 – 15 May 2016)") is a dated holder of what the heading names.
5. A document is a timeline: for a predicate that holds one value at a time,
   an open-ended statement ends where the next one of the same predicate
   starts ("joined Avellino in 2007" ... "in 2008 he moved to Perugia"). A dated
   event (an award "in 2010") holds over the period named.
6. What no rule reads still leaves its names: the organisations, places and
   people a dated sentence names become the topic's ``timeline`` then
   (``_mentions``); a verb the vocabulary does not know gives no fact of its own
   in prose (its open predicate would say less than the name does).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from ._dates import TimeWindow
from ._doc_lexicon import EVENT_PREDICATES, ONE_PREDICATES, heading_predicate
from ._mentions import dated_mentions, end_of, place_mentions
from ._patterns import _dedupe, mask_times, read_sentences
from ._spacy import Lexicon
from ._tokens import Doc, Token, _Ctx, _ent, _lw, _text
from ._topic import Topic, _is_heading, find_topic
from ._types import CandidateFact

__all__ = ["read_document"]

_BULLET = re.compile(r"^\s*(?:[-*•–]|\d{1,3}[.)])\s+")


def read_document(
    paragraphs: list[Doc], *, speaker: str, reference: datetime, lexicon: Lexicon
) -> list[CandidateFact]:
    """Candidate facts of a document parsed paragraph by paragraph."""
    topic = find_topic(paragraphs)
    ctx = _Ctx(speaker, None, reference, {}, [], lexicon=lexicon)
    ctx.topic = topic
    facts: list[CandidateFact] = []
    mentions: list[list[CandidateFact]] = []
    section = ""
    named: str | None = None
    for n, doc in enumerate(paragraphs):
        text = doc.text.strip()
        if not text:
            continue
        if n == 0 and topic is not None and _is_heading(doc):
            continue  # the title
        if _BULLET.match(text) and not _has_finite_verb(doc):
            facts.extend(_list_item(ctx, doc, section))
            continue
        if _is_heading(doc):
            section = text.rstrip(".: ")
            named = _named_heading(doc)
            continue
        before = ctx.narrative
        facts.extend(read_sentences(ctx, doc))
        if topic is not None:
            facts.extend(_inline_spans(ctx, doc, section))
            mentions.extend(dated_mentions(ctx, doc))
            if named and ctx.narrative is not None and ctx.narrative != before:
                # "GP3 Series." then "He raced in 2010 ...": the section names a stage
                facts.append(_fact(topic, "timeline", named, ctx.narrative, "section_heading"))
                named = None
    # a verb the vocabulary does not know says little of prose: the names are kept below
    facts = [f for f in facts if f.cardinality_hint is None]
    if topic is not None:
        facts = _timeline([_by_role(f, topic) for f in facts], topic)
        # a name a rule read already needs no bare mention beside it
        facts += place_mentions(mentions, {f.object.casefold() for f in facts})
    return _dedupe(facts)


_COACHES = {"manager", "coach", "trainer"}
_ATHLETES = {
    "footballer", "player", "goalkeeper", "defender", "midfielder", "forward", "striker",
    "winger", "cricketer", "athlete", "pitcher", "rugby", "hockey", "basketball",
}  # fmt: skip


def _by_role(f: CandidateFact, topic: Topic) -> CandidateFact:
    """A football manager's clubs are clubs coached; a footballer's employers, teams."""
    if f.subject != topic.name or f.predicate not in ("plays_for", "works_at"):
        return f
    if topic.role in _COACHES:
        return replace(f, predicate="coaches")
    if topic.role in _ATHLETES and f.predicate == "works_at":
        return replace(f, predicate="plays_for")
    return f


def _fact(topic: Topic, predicate: str, obj: str, start: datetime, pattern: str) -> CandidateFact:
    return CandidateFact(topic.name, predicate, obj, "assert", start, None, "year", 0.6, pattern)


def _named_heading(doc: Doc) -> str | None:
    """A heading that is a name ("FC Biel-Bienne.", "Formula Three."), not a topic word."""
    toks = [t for t in doc if not t.is_punct]
    if not toks or not all(t.text[:1].isupper() or t.like_num for t in toks):
        return None
    if not any(t.pos_ == "PROPN" or _ent(t) in ("ORG", "GPE", "FAC", "EVENT") for t in toks):
        return None
    return _text(toks)


_SPAN_AFTER = re.compile(r"^\s*\(([^()]{4,40})\)")


def _inline_spans(ctx: _Ctx, doc: Doc, section: str) -> list[CandidateFact]:
    """'Gold Key Comics (1962–1984), Gladstone Publishing (1986–1990)': a name with its
    span in parentheses is one holder in the topic's timeline."""
    topic = ctx.topic
    assert topic is not None
    out: list[CandidateFact] = []
    toks = list(doc)
    text = doc.text
    role = heading_predicate(section, person=topic.person) if section else "timeline"
    for i, t in enumerate(toks):
        if t.text != "(" or i == 0 or toks[i - 1].pos_ != "PROPN":
            continue
        m = _SPAN_AFTER.match(text[t.idx :])
        if m is None:
            continue
        idx = ctx.masked.get(toks[i + 1].i) if i + 1 < len(toks) else None
        if idx is None:
            continue
        w = ctx.mentions[idx].resolve(ctx.reference, "past", narrative=ctx.narrative, history=True)
        if w is None or w.role not in ("range", "since") or _LIFE_DATES.search(m.group(1)):
            continue
        j = i - 1
        while j > 0 and (toks[j - 1].pos_ == "PROPN" or _lw(toks[j - 1]) in _CONNECTORS):
            j -= 1
        name = _text(toks[j:i])
        if topic.refers(name):
            continue
        out.append(
            CandidateFact(
                topic.name, role, name, "assert", w.valid_from, w.valid_to, w.precision, 0.6,
                "inline_span",
            )
        )  # fmt: skip
    return out


def _has_finite_verb(doc: Doc) -> bool:
    """'- In 2005, the government awarded Clark the Star ...' is prose in a list."""
    return any(t.tag_ in ("VBD", "VBZ", "VBP") and t.pos_ == "VERB" for t in doc)


def _list_item(ctx: _Ctx, doc: Doc, section: str) -> list[CandidateFact]:
    """'- Stoycho Stoev (22 December 2014 – 15 May 2016)' under 'Managers'."""
    topic = ctx.topic
    if topic is None or not section:
        return []
    mask_times(ctx, doc)
    toks = list(doc)
    window = _item_window(ctx, doc)
    if window is None or (window.valid_from is None and window.valid_to is None):
        return []
    name = _item_name(ctx, toks)
    if name is None or topic.refers(name):
        return []
    predicate = heading_predicate(section, person=topic.person)
    return [
        CandidateFact(
            topic.name,
            predicate,
            name,
            "assert",
            window.valid_from,
            window.valid_to,
            window.precision,
            0.7,
            "list_item",
        )
    ]


_LIFE_DATES = re.compile(r"\b(?:born|b\.|died|d\.|née)\s*$", re.I)


def _item_window(ctx: _Ctx, doc: Doc) -> TimeWindow | None:
    """A list item's dates: a span if it gives one, never its holder's birth or death."""
    found: list[TimeWindow] = []
    for m in ctx.mentions:
        if _LIFE_DATES.search(doc.text[max(0, m.start - 8) : m.start]):
            continue
        w = m.resolve(ctx.reference, "past", narrative=ctx.narrative, history=True)
        if w is not None:
            found.append(w)
    spans = [w for w in found if w.role in ("range", "since", "until")]
    best = spans or found
    return best[0] if best else None


_CONNECTORS = {"of", "de", "von", "van", "der", "den", "del", "da", "di", "la", "le", "bin", "al"}


def _item_name(ctx: _Ctx, toks: list[Token]) -> str | None:
    """The first name in a list item, connectors included ("Prince Leopold of Bavaria")."""
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t.i in ctx.masked or t.is_punct or not (t.pos_ == "PROPN" or _ent(t)):
            i += 1
            continue
        j = i
        while j < n and toks[j].i not in ctx.masked:
            u = toks[j]
            if (
                u.pos_ == "PROPN"
                or (_ent(u) and not u.is_punct)
                or _lw(u) in ("'s",)
                or (_lw(u) in _CONNECTORS and j + 1 < n and toks[j + 1].pos_ == "PROPN")
            ):
                j += 1
            elif u.text == "." and j - i <= 3 and len(toks[j - 1].text) == 1:
                j += 1  # an initial: "Hans P. Bull"
            else:
                break
        name = _text(toks[i:j]).strip(" ,;:-")
        return name if len(name) > 1 else None
    return None


def _timeline(facts: list[CandidateFact], topic: Topic) -> list[CandidateFact]:
    """Close each open-ended value of a one-valued predicate where the next begins."""
    out: list[CandidateFact] = []
    by_predicate: dict[str, list[CandidateFact]] = {}
    for f in facts:
        if f.subject != topic.name or f.op != "assert":
            out.append(f)
        elif f.predicate in EVENT_PREDICATES and f.valid_to is None and f.valid_from:
            out.append(replace(f, valid_to=end_of(f)))
        elif f.predicate in ONE_PREDICATES or f.pattern == "list_item":
            by_predicate.setdefault(f.predicate, []).append(f)
        else:
            out.append(f)
    for group in by_predicate.values():
        starts = sorted({f.valid_from for f in group if f.valid_from is not None})
        for f in group:
            if f.valid_to is None and f.valid_from is not None:
                later = [s for s in starts if s > f.valid_from]
                if later:
                    f = replace(f, valid_to=later[0])
            out.append(f)
    return out
