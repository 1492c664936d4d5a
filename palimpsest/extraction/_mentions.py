"""Dated mentions: the names a document's dated sentences put in its topic's story.

>>> groups = dated_mentions(ctx, paragraph_doc)                  # doctest: +SKIP
>>> [(f.predicate, f.object) for f in groups[0]]                 # doctest: +SKIP
[('timeline', 'Baldwin Locomotive Works'), ('timeline', 'USA')]

A history says "The first batch came from the Baldwin Locomotive Works, USA in
1947" with no relation the rules know. The names still belong to the topic's
timeline then. Each dated sentence gives its named organisations, places and
people (as objects: after a verb or preposition, in apposition, in a list;
never the sentence's own subject), nearest to the main verb first.
``place_mentions`` then keeps the first as the sentence's *lead*, holding until
the next dated sentence's lead begins (what the story was about then), and the
others for the period the sentence names. A name a rule read already is not
repeated. Weak readings (below the confidence floor): quarantined, never in a
snapshot, read with ``include_quarantined=True``.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from ._tokens import Doc, Token, _Ctx
from ._types import CandidateFact

__all__ = ["MENTION_CONFIDENCE", "dated_mentions", "end_of", "place_mentions"]

MENTION_CONFIDENCE = 0.5
_KINDS = {"PERSON", "ORG", "NORP", "GPE", "LOC", "FAC"}
# what a name is to its sentence: an object, a complement, an apposition, a list member
_OBJECT_DEPS = {
    "pobj", "dobj", "appos", "attr", "oprd", "conj", "nsubjpass", "dative", "npadvmod",
}  # fmt: skip


def _hops(t: Token) -> int:
    """How far a token hangs from its sentence's main verb."""
    n = 0
    while t.dep_ != "ROOT" and n < 9:
        t, n = t.head, n + 1
    return n


def dated_mentions(ctx: _Ctx, doc: Doc) -> list[list[CandidateFact]]:
    """Per dated sentence of ``doc``, its named objects with the sentence's date."""
    topic = ctx.topic
    if topic is None:
        return []
    out: list[list[CandidateFact]] = []
    narrative: datetime | None = None
    for sent in doc.sents:
        window = None
        for t in sent:
            idx = ctx.masked.get(t.i)
            if idx is None:
                continue
            w = ctx.mentions[idx].resolve(ctx.reference, "past", narrative=narrative, history=True)
            if w is not None and w.valid_from is not None:
                window = w
                break
        if window is None or window.valid_from is None:
            continue
        narrative = window.valid_from
        found: list[tuple[int, int, CandidateFact]] = []
        for n, ent in enumerate(sent.ents):
            if ent.label_ not in _KINDS or ent.root.dep_ not in _OBJECT_DEPS:
                continue
            if any(t.i in ctx.masked for t in ent):
                continue
            name = ent.text.strip(" ,.;:'\"()")
            if len(name) < 2 or topic.refers(name):
                continue
            f = CandidateFact(
                topic.name, "timeline", name, "assert", window.valid_from, window.valid_to,
                window.precision, MENTION_CONFIDENCE, "dated_mention",
            )  # fmt: skip
            found.append((_hops(ent.root), n, f))
        if found:
            out.append([f for _, _, f in sorted(found, key=lambda x: x[:2])])
    return out


def end_of(f: CandidateFact) -> datetime | None:
    """The end of the period a dated statement names ("in 2010" -> the end of 2010)."""
    start = f.valid_from
    if start is None:
        return None
    if f.precision == "year":
        return start.replace(year=start.year + 1)
    if f.precision == "month":
        y, m = (start.year + 1, 1) if start.month == 12 else (start.year, start.month + 1)
        return start.replace(year=y, month=m)
    return start + timedelta(days=1)


def place_mentions(groups: list[list[CandidateFact]], read: set[str]) -> list[CandidateFact]:
    """The mentions' windows: each sentence's lead until the next lead, the rest for
    the sentence's own period; names in ``read`` (casefolded) are left out."""
    kept = [[f for f in g if f.object.casefold() not in read] for g in groups]
    leads = [g[0] for g in kept if g]
    starts = sorted({f.valid_from for f in leads if f.valid_from is not None})
    out: list[CandidateFact] = []
    for g in kept:
        for k, f in enumerate(g):
            if f.valid_to is not None or f.valid_from is None:
                out.append(f)
            elif k == 0:
                later = [s for s in starts if s > f.valid_from]
                out.append(replace(f, valid_to=later[0]) if later else f)
            else:
                out.append(replace(f, valid_to=end_of(f)))
    return out
