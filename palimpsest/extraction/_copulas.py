"""Copulas and possessives: "my job is ...", "Mira is my sister", "born in ...".

>>> [h.predicate for h in _born_hits(ctx, toks, 2)]          # doctest: +SKIP
['birthday', 'born_in']

Their meaning depends on the subject's shape (a name, a relative, an attribute
of someone), so they are read outside the regex table.
"""

from __future__ import annotations

from ._lexicon import LANGUAGES, NOT_JOBS
from ._objects import _has_propn, _is_job, _is_place, _np, _Obj, _person, _valid_obj
from ._tokens import (
    _DETERMINERS,
    Token,
    _Ctx,
    _Hit,
    _is_name_token,
    _kin_head,
    _lw,
    _name_span,
    _noun_group,
    _owner_of,
    _Subject,
    _text,
    _Verb,
)
from ._types import Op
from ._verbs import _clause_mention


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
        obj = _np(ctx, toks, k, located=False)
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
    while j < n and (
        _lw(toks[j]) in _DETERMINERS
        or _lw(toks[j]) == "another"
        or toks[j].like_num
        or toks[j].pos_ == "ADJ"
    ):
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
