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
        if lw in _DETERMINERS or lw in ("new", "brand", "several", "many", "few", "another"):
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
            if items and _glued(toks, k):
                items.extend(toks[k : k + 2])  # "CS:GO", "Node.js": one name, no spaces
                k += 2
                continue
            if items and _adjective_series(toks, k):
                items.extend(toks[k : k + 2])  # "a safe, inviting place"
                k += 2
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
        if items and lw in ("a", "an", "the", "some") and items[-1].pos_ in ("NOUN", "PROPN"):
            items = []  # "made my friend some ice cream": the thing made, not the friend
            k += 1
            continue
        if t.pos_ == "PART" and lw != "to":
            break
        if t.pos_ == "ADV" and not gerund and lw not in ("lactose",):
            break
        items.append(t)
        k += 1
    while items and (items[-1].pos_ in ("DET", "ADP", "CCONJ", "PART") or items[-1].tag_ == "POS"):
        items.pop()
    if items and _cut_short(items):
        return _Obj([], k)  # a piece of a longer name is no name: nothing rather than a part
    return _Obj(items, k)


# Punctuation that joins the parts of one name written without spaces ("CS:GO").
_GLUE = {":", ".", "/", "-", "+", "&", "'", "’"}


def _glued(toks: list[Token], k: int) -> bool:
    """``toks[k]`` is punctuation inside a word: no space before it or after it, and a
    letter or digit follows ("CS:GO", "AC/DC"), so the name runs on."""
    if k == 0 or k + 1 >= len(toks) or toks[k].text not in _GLUE:
        return False
    return (
        not toks[k - 1].whitespace_
        and not toks[k].whitespace_
        and toks[k + 1].i == toks[k].i + 1
        and toks[k + 1].text[:1].isalnum()
    )


def _adjective_series(toks: list[Token], k: int) -> bool:
    """``toks[k]`` is a comma between two adjectives of one noun ("a safe, inviting
    place"): the phrase goes on to its noun."""
    if toks[k].text != "," or k == 0 or k + 2 >= len(toks):
        return False
    before, after = toks[k - 1], toks[k + 1]
    adjective = after.pos_ == "ADJ" or after.tag_ in ("VBG", "VBN", "JJ")
    return (
        before.pos_ == "ADJ"
        and adjective
        and any(t.pos_ in ("NOUN", "PROPN") for t in toks[k + 2 : k + 4])
    )


def _cut_short(items: list[Token]) -> bool:
    """The phrase stops inside a longer one: its last word runs on without a space
    ("CS" of "CS:GO"), or modifies a noun that comes after it ("creating a safe" of
    "creating a safe, inviting place"), or its first word follows such a modifier
    ("inviting place"). Reading it would store a fragment as a name."""
    first, last = items[0], items[-1]
    doc = last.doc
    if last.i + 1 < len(doc):
        nxt = doc[last.i + 1]
        if not last.whitespace_ and (
            nxt.text[:1].isalnum()
            or (
                nxt.text in _GLUE
                and not nxt.whitespace_
                and nxt.i + 1 < len(doc)
                and doc[nxt.i + 1].text[:1].isalnum()
            )
        ):
            return True
        gap = [t for t in doc[last.i + 1 : last.head.i]] if last.head.i > last.i else None
        if (
            gap is not None
            and (last.pos_ == "ADJ" or last.dep_ in ("amod", "compound"))
            and len(gap) <= 2
            and all(t.text == "," or t.pos_ in ("ADJ", "NOUN") or t.tag_ == "VBG" for t in gap)
            and (len(items) > 1 or last.pos_ == "ADJ")
        ):
            return True
    if first.i >= 2:
        comma, before = doc[first.i - 1], doc[first.i - 2]
        if comma.text == "," and before.pos_ == "ADJ" and before.head.i >= first.i:
            return True  # "inviting place" after "a safe,"
    return False


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
    while j < n and len(items) < 10:
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
                if _glued(toks, j) or _adjective_series(toks, j):
                    items.extend(toks[j : j + 2])  # the name or the phrase goes on
                    j += 2
                    continue
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
    if len(items) > 8 or (len(items) > 1 and _cut_short(items)):
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
            tail = _np(ctx, toks, j) if j < n and _lw(toks[k]) in ("and", "or") else None
            if tail is not None and tail.tokens and _one_phrase(obj, tail):
                # "action and sci-fi movies", "improving education and infrastructure"
                out[-1] = _Obj([*obj.tokens, *toks[k:j], *tail.tokens], tail.end)
                k = tail.end
                continue
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


def _one_phrase(first: _Obj, second: _Obj) -> bool:
    """Two conjuncts that are one phrase: a modifier sharing the second's noun ("action"
    and "sci-fi movies", "chocolate" and "vanilla swirl"), or a second object of the
    first's gerund ("improving education" and "infrastructure")."""
    a, b = first.tokens, second.tokens
    modifier = a[0].dep_ in ("nmod", "compound", "amod") and a[0].head == b[-1]
    if len(a) == 1 and a[0].tag_ in ("NN", "JJ") and len(b) >= 2 and b[0].tag_ != "VBG":
        return b[-1].tag_ == "NNS" or modifier
    return (
        len(a) >= 2
        and a[0].tag_ == "VBG"
        and b[0].tag_ != "VBG"
        and b[-1].dep_ == "conj"
        and b[-1].head in a[1:]
    )


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
