"""Objects of a clause: noun phrases, lists of them, names and verb phrases.

>>> _np(ctx, list(nlp("a small startup called Lumen")), 0).text   # doctest: +SKIP
'Lumen'
"""

from __future__ import annotations

from dataclasses import dataclass

from ._lexicon import BOUNDARY_ADVERBS, JOB_NOUNS, JOB_SUFFIXES, LANGUAGES, NOT_JOBS
from ._tokens import _BAD_OBJECT_START, _DETERMINERS, Token, _Ctx, _ent, _lw, _name_span, _text


@dataclass
class _Obj:
    tokens: list[Token]
    end: int

    @property
    def text(self) -> str:
        return _text(self.tokens)


def _np(ctx: _Ctx, toks: list[Token], k: int, *, place: bool = False, located: bool = True) -> _Obj:
    """The noun phrase at ``k``; ``located`` keeps "in <place>" ("a house in Leeds")."""
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
    if k < n and toks[k].text in ('"', "“"):
        # a quoted title is the object whole: 'read "The Lean Startup"'
        end = next((j for j in range(k + 1, min(n, k + 14)) if toks[j].text in ('"', "”")), -1)
        if end > k + 1:
            return _Obj(toks[k + 1 : end], end + 1)
    gerund = k < n and toks[k].tag_ == "VBG" and toks[k].pos_ in ("VERB", "AUX")
    if gerund and not place:
        return _gerund_phrase(ctx, toks, k)
    while k < n:
        t = toks[k]
        lw = _lw(t)
        if items and t.text == ctx.addressee and (k + 1 >= n or toks[k + 1].is_punct):
            break  # "I love the thought, Nate!": the listener's name is no part of it
        if t.i in ctx.masked or (k + 1 < n and _lw(toks[k + 1]) == "ago"):
            break  # "years ago", "a while ago": vague times the date reader leaves out
        if (
            items
            and (t.like_num or lw in ("a", "few", "couple"))
            and k + 2 < n
            and _lw(toks[k + 2]) in ("later", "earlier", "ago", "before", "after")
        ):
            break  # "a gaming party two weekends later"
        if lw in BOUNDARY_ADVERBS and t.pos_ in ("ADV", "ADJ", "NOUN", "INTJ"):
            break
        if t.tag_ == "POS" or lw in ("'s", "’s"):
            if items:
                items.append(t)
                k += 1
                continue
            break
        if t.is_punct:
            spaced = lw == "-" and (t.whitespace_ or toks[k - 1].whitespace_)
            if lw in ("-", "&", "+", "#", "/") and items and not spaced:
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
                and located
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
            if toks[k + 1].text in ('"', "“"):
                quoted = _np(ctx, toks, k + 1)  # 'a fantasy novel called "The Name of the Wind"'
                if quoted.tokens:
                    return quoted
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
            t.pos_ == "VERB"
            and t.tag_ == "VB"
            and not items
            and k + 1 < n
            and toks[k + 1].tag_ in ("NN", "NNS")
            and k > 0
            and (toks[k - 1].pos_ in ("ADP", "DET") or _after_go_to(toks, k))
        ):
            items.append(t)  # "to boot camps", "a dance class": a noun the tagger read as a verb
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


# Words that end a gerund's phrase: a new clause, a comparison, a purpose.
_GERUND_STOPS = {
    "because", "cause", "'cause", "when", "while", "so", "which", "who", "that",
    "as", "than", "like", "since", "until", "if", "whenever", "where", "but", "and",
    "or", "nor", "plus", "though", "although", "whether",
}  # fmt: skip
_QUOTES = {'"', "'", "“", "”", "‘", "’"}


def _gerund_phrase(ctx: _Ctx, toks: list[Token], k: int) -> _Obj:
    """'hiking in the mountains', 'reading "Charlotte's Web"': a gerund and what it
    governs, up to the next clause; empty when its object is only a pronoun
    ("having them around") or nothing follows a light verb ("being")."""
    n = len(toks)
    items = [toks[k]]
    j = k + 1
    quoted = False
    while j < n and len(items) < 9:
        t = toks[j]
        lw = _lw(t)
        if t.text in _QUOTES:
            quoted = not quoted
            items.append(t)
            j += 1
            continue
        if not quoted:
            stop = lw in _GERUND_STOPS and lw != "and" and not (lw == "that" and t.pos_ == "DET")
            if t.i in ctx.masked or lw in BOUNDARY_ADVERBS or stop:
                break
            if t.is_punct and lw not in ("-", "&", "'s"):
                break
            adjectives = (
                lw == "and"
                and items[-1].pos_ == "ADJ"
                and j + 2 < n
                and (toks[j + 1].pos_ == "ADJ" or toks[j + 1].tag_ == "VBG")
                and toks[j + 2].pos_ in ("NOUN", "ADJ")
            )  # "a safe and inviting place"
            if (t.pos_ in ("CCONJ", "SCONJ") and not adjectives) or (
                t.pos_ == "VERB" and t.tag_ == "VBG"
            ):
                break
            if lw == "to" and j + 1 < n and toks[j + 1].tag_ == "VB":
                break  # "trying to ...": a purpose, not the activity
        items.append(t)
        j += 1
    while items and (items[-1].pos_ in ("DET", "ADP", "CCONJ", "PART") or items[-1].is_punct):
        if items[-1].text in _QUOTES and any(x.text in _QUOTES for x in items[:-1]):
            break
        items.pop()
    if len(items) > 1 and items[1].pos_ == "PRON" and _lw(items[1]) not in ("myself", "ourselves"):
        return _Obj([], j)  # "having them around", "seeing them eat": about something unnamed
    if len(items) > 8:
        return _Obj([], j)
    return _Obj(items, j)


_GO = {"go", "going", "went", "gone", "goes", "come", "came", "coming", "head", "headed"}


def _after_go_to(toks: list[Token], k: int) -> bool:
    """'going to boot camps': the tagger reads "to" as an infinitive's, "boot" as a verb."""
    return k >= 2 and _lw(toks[k - 1]) == "to" and _lw(toks[k - 2]) in _GO


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
            if (
                _lw(toks[k]) == "and"
                and any(t.pos_ == "ADP" for t in obj.tokens[1:])
                and j < n
                and toks[j].pos_ in ("NOUN", "PROPN")
            ):
                # "road trips with friends and family": the "and" is inside the phrase
                tail = _np(ctx, toks, j)
                if tail.tokens:
                    out[-1] = _Obj([*obj.tokens, toks[k], *tail.tokens], tail.end)
                    k = tail.end
                    continue
            if j < n and _lw(toks[j]) in ("their", "his", "her", "its"):
                break  # "veterans and their rights": the second belongs to the first
            if j < n and _lw(toks[j]) in ("i", "we", "he", "she", "they", "you", "my"):
                break
            if j < n and toks[j].pos_ in ("VERB", "AUX") and toks[j].tag_ != "VBG":
                break
            k = j
            continue
        break
    return out


# Descriptions of a person that introduce a name ("dating a woman called Ana").
_PERSON_NOUNS = {
    "guy", "girl", "woman", "man", "lady", "boy", "person", "fellow", "chap", "bloke",
}  # fmt: skip


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
    n = len(toks)
    while k < n and _lw(toks[k]) in _DETERMINERS:
        k += 1
    if (
        k + 2 < n
        and _lw(toks[k]) in _PERSON_NOUNS
        and _lw(toks[k + 1]) in ("named", "called")
        and _name_span(toks, k + 2) > k + 2
    ):
        k += 2  # "a guy named Ollie": the name, not the description
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
