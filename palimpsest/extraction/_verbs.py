"""A clause's verb group read into flags, its tense and time, and its lemma string.

>>> _verb_group(list(nlp("I no longer live here")), 1, ctx).nolonger   # doctest: +SKIP
True

Flags record negation, "no longer", tense, modality and voice; the lemma string
(time masked as "§") is what the rule table's regexes match.
"""

from __future__ import annotations

from ._dates import TimeMention, TimeWindow
from ._lexicon import SKIP_ADVERBS, VERB_FORMS
from ._tokens import _VERBATIM, Tense, Token, _Ctx, _lw, _norm, _Verb


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
                    _lw(nxt) in ("going", "gon")
                    and k2 + 2 < n
                    and _lw(toks[k2 + 1]) in ("to", "na")
                    and toks[k2 + 2].pos_ in ("VERB", "AUX")
                    and toks[k2 + 2].tag_ == "VB"
                ):
                    vg.future = vg.going = True
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
            # a bare gerund ("Researching adoption agencies") is going on now
            vg.progressive = vg.progressive or (t.tag_ == "VBG" and t.pos_ == "VERB")
            vg.past = vg.past or (t.tag_ == "VBD") or (t.tag_ == "VBN" and not vg.perfect)
            vg.past = (
                vg.past
                or (lw.endswith("ed") and lw in VERB_FORMS)
                or lw
                in ("left", "went", "flew", "bought", "sold", "ran", "spoke", "taught", "drove")
            )
            return vg
        return vg


def _in_no_longer(toks: list[Token], start: int, k: int) -> bool:
    """Token ``k`` is part of "no longer" / "no more" right after the verb at ``start``."""
    words = [_lw(t) for t in toks[start + 1 : start + 3]]
    return (
        len(words) == 2
        and words[0] == "no"
        and words[1] in ("longer", "more")
        and (k in (start + 1, start + 2))
    )


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
            manner = t.pos_ == "ADV" and lw.endswith("ly") and len(lw) >= 5
            if (lw in SKIP_ADVERBS or manner) and t.pos_ == "ADV" and k > start:
                continue
            if (
                k == start + 1
                and lw in ("not", "n't", "n’t", "never")
                and _norm(toks[start]) == "be"
            ):
                continue
            if _norm(toks[start]) == "be" and _in_no_longer(toks, start, k):
                continue  # "be no longer with X" reads as "be with X"; the flag keeps "no longer"
            word = _norm(t)
            if k == start and lw in ("'s", "’s"):
                word = "be"
            elif (
                k == start
                and t.tag_ in ("VB", "NN", "JJ")
                and lw not in _VERBATIM
                and lw in ctx.lexicon.irregular
            ):
                word = ctx.lexicon.irregular[lw]  # "Lost my job": a past form tagged as a base
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
    """The clause's time: its first resolvable time expression.

    In a document, a date in parentheses ("Smith (March 7, 1912 - October 18, 2003)
    was governor from 1969 to 1973") is an aside, used only when nothing else is
    said; and a statement with no date of its own belongs to the time the text
    last spoke of (the narrative), as a history reads.
    """
    history = ctx.topic is not None
    found: list[tuple[bool, TimeWindow]] = []
    seen: set[int] = set()
    for t in toks:
        idx = ctx.masked.get(t.i)
        if idx is None or idx in seen:
            continue
        seen.add(idx)
        w = ctx.mentions[idx].resolve(
            ctx.reference, tense, narrative=ctx.narrative, history=history
        )
        if w is not None:
            found.append((history and _in_parentheses(t), w))
            if not found[-1][0]:
                break
    best = next((w for aside, w in found if not aside), found[0][1] if found else None)
    if best is not None and best.valid_from is not None:
        ctx.narrative = best.valid_from  # what "later that year" counts from
    if best is None and history and ctx.narrative is not None:
        year = ctx.narrative.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
        return TimeWindow(year, None, "year", "point")
    return best


def _in_parentheses(t: Token) -> bool:
    """Whether a token sits inside a parenthesis opened earlier in its sentence."""
    depth = 0
    for u in t.sent:
        if u.i >= t.i:
            break
        depth += {"(": 1, ")": -1}.get(u.text, 0)
    return depth > 0


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
