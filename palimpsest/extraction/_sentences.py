"""Sentence filters and clause splitting: what is read at all, and in which pieces.

>>> _skip_sentence(list(nlp("Do you live in Oslo?")))      # doctest: +SKIP
True

Questions, hypotheticals, hedges, reported speech and sentences about "nobody"
are dropped whole (a false fact is worse than a missing one); memory-directed
wrappers ("remember that ...") are peeled off; the rest is cut into clauses at
a new subject or a new finite verb sharing the old one.
"""

from __future__ import annotations

from ._tokens import (
    _HEDGE_MODALS,
    _HEDGE_WORDS,
    _NOBODY,
    _QUESTION_STARTERS,
    _REPORT_LEMMAS,
    _WRAPPER_RE,
    Token,
    _is_loose_name,
    _is_name_token,
    _lw,
)


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
            and not (lw == ":" and _inside_word(toks, i))
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
        if (
            lw in ("after", "before", "because", "while", "once")  # "since I was six" is a time
            and cur
            and i + 1 < n
            and _lw(toks[i + 1]) in ("i", "we", "he", "she", "they")
            and any(c.pos_ in ("VERB", "AUX") for c in cur)
        ):
            # "I had a quiet weekend after we went camping": a clause of its own
            out.append((cur, shared))
            cur, shared = [], False
            i += 1
            continue
        if (
            lw in ("before", "after", "while", "by")
            and cur
            and i + 1 < n
            and toks[i + 1].tag_ == "VBG"
            and any(c.pos_ in ("VERB", "AUX") for c in cur)
        ):
            # "played for Auxerre before moving to Triestina in 2007": the same subject
            out.append((cur, shared))
            cur, shared = [], True
            i += 1
            continue
        cur.append(t)
        i += 1
    if cur:
        out.append((cur, shared))
    return out


def _inside_word(toks: list[Token], i: int) -> bool:
    """'CS:GO': a colon with no space on either side joins one name, no clauses."""
    return 0 < i < len(toks) - 1 and not toks[i - 1].whitespace_ and not toks[i].whitespace_


def _has_verb_after(toks: list[Token], j: int) -> bool:
    for t in toks[j + 1 : j + 6]:
        if t.pos_ in ("VERB", "AUX"):
            return True
        if t.is_punct and _lw(t) not in ("'s", "’s"):
            return False
    return False
