"""Reading one clause: special forms first, then copulas, the rule table, the fallback.

>>> [h.predicate for h in _read_clause(ctx, toks, subj)]     # doctest: +SKIP
['lives_in']

Order matters: co-subject marriage, relatives' names, births, "would rather",
plans and futures, stopping an activity, named relatives and pets, copulas,
the rule table, "moved from X to Y", and last an unknown verb's lemma
predicate (cardinality ``many``, low confidence).
"""

from __future__ import annotations

import re
from dataclasses import replace

from ._copulas import _born_hits, _copula_hits, _have_named
from ._gate import phatic_object, social_plan
from ._lexicon import FALLBACK_BLOCKLIST
from ._life import ASPECT, activity_hits, good_time_at, met_hits
from ._objects import _is_place, _np, _person, _valid_obj, _verb_phrase
from ._rule_match import _rule_hits
from ._rules_doc import doc_hits, inverse_hits
from ._tokens import (
    _PLAN_VERBS_PROGRESSIVE,
    _STATE_START_VERBS,
    Token,
    _Ctx,
    _Hit,
    _lw,
    _Subject,
    _Verb,
)
from ._types import Op
from ._verbs import _clause_window, _lemma_string, _tense, _verb_group


def _read_clause(ctx: _Ctx, toks: list[Token], subj: _Subject) -> list[_Hit]:
    vg = _verb_group(toks, subj.end, ctx)
    if vg.main < 0 or vg.hedge:
        return []
    near = [_lw(t) for t in toks[subj.end : vg.main + 3]]
    if any(near[i : i + 2] == ["off", "to"] for i in range(len(near))):
        return []  # "I'm off to bake some cakes": about to, not done
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
        if subj.kind != "speaker":
            return []
        # "My mom and I made dinner": what the speaker did with someone is theirs too
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
        if not phrase or social_plan(phrase):
            return []  # "I decided to include this": no plan one could keep
        return [_Hit("plans", phrase, "plan_to", 0.8, timeless=True)]
    starts_state = main_lemma in _STATE_START_VERBS and future_time
    if vg.future and not vg.neg and main_lemma not in ("be", "have") and not starts_state:
        phrase = _verb_phrase(ctx, toks, vg.main)
        if not phrase or not _plan_ok(ctx, subj, vg, phrase, future_time):
            return []
        return [_Hit("plans", phrase, "future", 0.75, timeless=True)]
    if vg.future and main_lemma == "be" and not future_time:
        return []
    if vg.progressive and future_time and not vg.neg and main_lemma not in _STATE_START_VERBS:
        if main_lemma in _PLAN_VERBS_PROGRESSIVE:
            phrase = _verb_phrase(ctx, toks, vg.main)
            if phrase and " " in phrase:
                return [_Hit("plans", phrase, "progressive_future", 0.75, timeless=True)]
            return []
        return []

    # Aspect wrappers: "I just started volunteering at a shelter", "got to see the band".
    m = ASPECT.match(rstr)
    if m and not vg.neg and c2t[m.end()] < n and toks[c2t[m.end()]].tag_ in ("VBG", "VB"):
        sub_rstr, sub_c2t = _lemma_string(ctx, toks, c2t[m.end()])
        sub_vg = replace(vg, main=c2t[m.end()], progressive=vg.progressive or not vg.past)
        hits, matched = _rule_hits(
            ctx, subj, toks, sub_vg, sub_rstr, sub_c2t, has_time=has_time, tense=tense
        )
        if matched:
            # a state begun or kept up holds on ("started working at Pfizer")
            return [replace(h, state=False) for h in hits]
        hits = activity_hits(ctx, toks, sub_vg, sub_rstr)
        if hits:
            return hits

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

    if ctx.topic is not None and subj.name is not None:
        # a document: the topic's relations first, and what others did to the topic
        if subj.name == ctx.topic.name:
            hits = doc_hits(ctx, toks, vg, rstr, c2t)
        else:
            hits = inverse_hits(ctx, subj, toks, vg, rstr, c2t)
        if hits:
            return hits

    copula = _copula_hits(ctx, subj, toks, vg, rstr, c2t)
    if copula is not None:
        return copula
    if subj.kind in ("attr", "kinname", "plain"):
        return []

    hits, matched = _rule_hits(ctx, subj, toks, vg, rstr, c2t, has_time=has_time, tense=tense)
    if matched:
        return hits
    if subj.kind in ("speaker", "person") and subj.name != ctx.addressee:
        hits = good_time_at(ctx, toks, rstr, c2t) or met_hits(ctx, toks, vg, rstr, c2t)
        hits = hits or activity_hits(ctx, toks, vg, rstr)
        if hits:
            return hits
    if starts_state and vg.future and not vg.neg:
        # "I will start a PhD next year": no state begins that the table knows, so a plan.
        phrase = _verb_phrase(ctx, toks, vg.main)
        return [_Hit("plans", phrase, "future", 0.75, timeless=True)] if phrase else []
    move = re.match(r"^(?:move|relocate) (?:here |there |back |away )?from ", rstr)
    if move and not vg.neg:
        return _move_from_to(ctx, toks, c2t[move.end()])

    return _fallback(ctx, subj, toks, vg, rstr, c2t)


def _plan_ok(ctx: _Ctx, subj: _Subject, vg: _Verb, phrase: str, dated: bool) -> bool:
    """A future that is the speaker's plan, not a promise to the listener or a cheer.

    "I'll keep you posted" and "you'll get there" are talk; "I'm going to
    visit Japan" is a plan, and so is "I'll start a course next month".
    """
    if subj.name is not None and subj.name == ctx.addressee:
        return False
    if social_plan(phrase):
        return False
    # a bare "I'll ..." without a date is mostly a promise made in passing
    return vg.going or dated


def _move_from_to(ctx: _Ctx, toks: list[Token], k: int) -> list[_Hit]:
    src = _np(ctx, toks, k, place=True)
    j = src.end
    if not _valid_obj(src) or not _is_place(src):
        return []
    if j >= len(toks) or _lw(toks[j]) != "to":
        # "I moved here from Manchester": the old home ends, the new one is unnamed
        return [_Hit("lives_in", src.text, "move_from", 0.8, op="end")]
    dst = _np(ctx, toks, j + 1, place=True)
    if not _valid_obj(dst) or not _is_place(dst):
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
    if len(obj.tokens) > 7 or phatic_object(obj.tokens):
        return []  # "crossing my fingers", "I value your opinion"
    return [_Hit(predicate, obj.text, "fallback_lemma", 0.5, cardinality="many")]
