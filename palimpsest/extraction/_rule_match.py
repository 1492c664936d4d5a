"""Matching the rule table against a clause and reading the matched object.

>>> _rule_hits(ctx, subj, toks, vg, "live in Berlin", c2t,   # doctest: +SKIP
...            has_time=False, tense="present")[0][0].obj
'Berlin'
"""

from __future__ import annotations

from ._gate import deictic, empty_object, phatic_object
from ._lexicon import (
    KIN,
    LANGUAGES,
    NATIONALITIES,
    NOT_JOBS,
    NUMBER_WORDS,
    OTHER_KIN,
    OWNABLE,
    SCHOOL_WORDS,
)
from ._lexicon_life import EVENT_NOUNS, GROUP_NOUNS
from ._objects import _has_propn, _is_job, _is_place, _np, _np_list, _Obj, _person, _valid_obj
from ._rules import _RULES, _TRY_NEXT, _Rule
from ._rules_life import LIFE_RULES, life_object
from ._tokens import Tense, Token, _Ctx, _ent, _Hit, _lw, _Subject, _text, _Verb
from ._types import Op


def _is_personal(obj: _Obj) -> bool:
    """A relative, friend or named person rather than a place ("my grandmother")."""
    head = _lw(obj.tokens[-1]) if obj.tokens else ""
    stem = head[:-1] if head.endswith("s") else head
    return bool(
        {head, stem} & (KIN.keys() | OTHER_KIN) or any(_ent(t) == "PERSON" for t in obj.tokens)
    )


# The profile rules first, then the doings of a life; a rule whose object does not
# fit hands the clause on to the next rule with the same verb.
_ALL_RULES = _RULES + LIFE_RULES
_LIFE_NAMES = {r.name for r in LIFE_RULES}
_HAND_ON = _TRY_NEXT | {r.name for r in LIFE_RULES} | {
    "go_to", "visit", "join", "get_thing", "buy", "have_thing", "run_tool", "attend",
    "been_at_org", "was_in", "spend_in", "start_at",
}  # fmt: skip


def _life_objects(ctx: _Ctx, rule: _Rule, toks: list[Token], k: int) -> list[tuple[str, str]]:
    """(object, predicate) for a life rule; the object reader names the predicate of
    a two-way rule ("went to a parade" is an event, "went to the park" a visit)."""
    obj = _np(ctx, toks, k)
    if not _valid_obj(obj) or phatic_object(obj.tokens) or empty_object(obj.tokens):
        return []
    if rule.obj not in ("gerund", "word") and obj.tokens[0].pos_ == "PRON":
        return []
    if deictic(obj.tokens) and len(obj.tokens) <= 1:
        return []  # "that book", "this pic": what was just shown, not named
    pred = life_object(rule.obj, obj)
    if pred is None:
        return []
    text = _text(obj.tokens[:1]) if rule.obj in ("gerund", "word") else obj.text
    return [(text, pred or rule.predicate)]


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
        # where a job is done is no part of its title ("a chef in Paris")
        objs = [
            _np(
                ctx,
                toks,
                k,
                place=kind in ("place", "gpe", "place_any"),
                located=kind not in ("job", "job_free"),
            )
        ]
    if kind == "pref" and objs and deictic(objs[0].tokens, definite=True):
        return []  # "I love the colour and texture": the pointing covers the whole list
    out: list[str] = []
    for obj in objs:
        if not _valid_obj(obj):
            continue
        if kind == "tool" and deictic(obj.tokens):
            continue  # "I've been using this app": the one just shown, not named
        if rule.name == "play" and _lw(obj.tokens[-1]) in ("team", "teams", "opponent"):
            continue  # "we played a top team": an opponent, not a game one plays
        if kind == "pref" and (deictic(obj.tokens) or phatic_object(obj.tokens)):
            continue  # "I love the colour", "I love your turtles": a reaction, not a taste
        if kind == "pref" and empty_object(obj.tokens):
            continue
        words = [_lw(t) for t in obj.tokens]
        if kind == "lang":
            if " ".join(words) in LANGUAGES:
                out.append(obj.text)
        elif kind in ("place", "gpe"):
            if rule.predicate == "visited" and words[-1].rstrip("s") in EVENT_NOUNS:
                continue  # "went to a LGBTQ support group": an event attended, not a place
            if (
                _is_place(obj)
                if kind == "gpe"
                else (_is_place(obj) or obj.tokens[-1].pos_ == "NOUN")
            ):
                out.append(obj.text)
        elif kind == "place_any" and _is_personal(obj):
            # "visited my grandmother in Krakow": the place is what was visited.
            j = obj.end
            if j + 1 < len(toks) and _lw(toks[j]) == "in":
                where = _np(ctx, toks, j + 1, place=True)
                if _valid_obj(where) and _is_place(where):
                    out.append(where.text)
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
            # "joined a new LGBTQ activist group" is a group, not an employer
            if _has_propn(obj) and not (rule.name == "join" and words[-1] in GROUP_NOUNS):
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
    for rule in _ALL_RULES:
        m = rule.rx.search(rstr)
        if m is None:
            continue
        needs = rule.needs
        life = rule.name in _LIFE_NAMES
        if life and vg.passive != ("passive" in needs):
            continue
        if "done" in needs and not (vg.past or vg.perfect or vg.progressive):
            continue
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
        if "nolonger" in needs and not vg.nolonger:
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
        if life:
            pairs = _life_objects(ctx, rule, toks, k)
            if not pairs:
                continue
            return [
                _Hit(p, o, rule.name, rule.confidence, op, state=rule.state) for o, p in pairs
            ], True
        objects = _read_object(ctx, rule, toks, k)
        if not objects and rule.name in _HAND_ON:
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
        if rule.name == "switch_to" and hits and m.group("f") and op == "assert":
            # "switched from Android to iPhone": the old tool is left behind
            old = _np(ctx, toks, char_to_tok[m.start("f")])
            if _valid_obj(old) and _has_propn(old):
                hits.append(_Hit(predicate, old.text, "switch_from", rule.confidence, "end"))
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
