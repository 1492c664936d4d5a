"""Relations of biographies and organisations, read in document mode only.

>>> next(r for r in DOC_RULES if r.name == "signed_for").predicate
'plays_for'

The relations TimeQA's passages ask about (see ``relations.json`` of that
corpus): teams, clubs coached, positions held, parties, employers, schools,
detentions, names, territories, owners and heads. ``DOC_RULES`` read a clause
whose subject is the topic; ``inverse_hits`` read one whose subject is
someone else acting on the topic ("Jacqueline Kennedy purchased the house",
"X was appointed manager of the club", "the post has been held by X").
"""

from __future__ import annotations

import re

from ._doc_lexicon import LEADER_ROLES
from ._objects import _has_propn, _np, _Obj, _valid_obj
from ._rules import _O, _r, _Rule
from ._tokens import Token, _Ctx, _Hit, _lw, _Subject, _Verb

__all__ = ["DOC_RULES", "doc_hits", "doc_object", "inverse_hits"]

_ROLE = r"(?:the |a |an |his |her |its )?(?:new |first |interim |caretaker |acting |permanent )?"
_COACH = r"(?:head coach|manager|coach|trainer|boss|head|technical director)"
_PASSIVE = {"passive"}


def _d(name: str, rx: str, predicate: str, kind: str, **kw: object) -> _Rule:
    return _r(name, rx, predicate, 0.6, kind, **kw)


# A passive clause's lemma string starts at its participle ("was renamed X" -> "rename X").
DOC_RULES: list[_Rule] = [
    _d("signed_for", r"^(?:sign|play) (?:for|with) " + _O, "plays_for", "signing"),
    _d(
        "moved_to_club",
        r"^(?:transfer|return|move|switch|go) (?:back )?(?:for|with|to|at) " + _O,
        "plays_for",
        "club",
    ),
    _d(
        "loaned_to",
        r"^(?:loan|transfer|sell|sign) (?:out )?(?:to|by) " + _O,
        "plays_for",
        "signing",
    ),
    _d("joined_club", r"^(?:join|rejoin) " + _O, "plays_for", "club"),
    _d("coached", r"^(?:coach|manage|take charge of|take over at|train) " + _O, "coaches", "club"),
    _d(
        "appointed_coach",
        rf"^(?:appoint|name|hire|install|unveil|confirm|announce|become|be) (?:as )?{_ROLE}"
        rf"(?:\S+ ){{0,2}}?{_COACH} (?:of|at|for) {_O}",
        "coaches",
        "org_like",
    ),
    _d(
        "party",
        r"^(?:join|rejoin|found|co-found|form|lead|represent|stand for|defect to) " + _O,
        "political_party",
        "party",
    ),
    _d("member_of_party", r"^be (?:a )?member of " + _O, "political_party", "party"),
    _d(
        "appointed",
        r"^(?:elect|appoint|name|sworn in|promote|commission|install|nominate|confirm|"
        r"choose|select|pick|make|return|re-elect|reelect|designate) "
        r"(?:as |to |to the rank of |to the post of )?" + _O,
        "position_held",
        "role",
        needs=_PASSIVE,
    ),
    _d(
        "position",
        r"^(?:serve|become|hold the (?:post|office|position|rank|title) of|"
        r"assume the (?:post|office) of|succeed \S+(?: \S+)? as|take office as|work) "
        r"(?:as |to )?" + _O,
        "position_held",
        "role",
    ),
    _d("copula_role", r"^be " + _O, "position_held", "role"),
    _d(
        "became_name",
        r"^(?:become|evolve into|reorganize as|merge to form) " + _O,
        "official_name",
        "org_name",
    ),
    _d(
        "published_by",
        r"^(?:publish|print|issue) by " + _O,
        "publisher",
        "org_like",
        needs=_PASSIVE,
    ),
    _d(
        "label",
        r"^(?:sign|sign a (?:\S+ )?(?:deal|contract)) (?:to|with) " + _O,
        "record_label",
        "label",
    ),
    _d(
        "educated_at",
        r"^(?:educate|enrol|enroll|matriculate|school|train) (?:at|in) " + _O,
        "studies_at",
        "org_like",
        needs=_PASSIVE,
    ),
    _d(
        "degree_from",
        r"^(?:receive|earn|obtain|take|get|complete) (?:\S+ ){0,5}?(?:degree|diploma|doctorate|"
        r"phd|bachelor|master|ba|bs|ma|ms|llb|jd|mba)(?: 's)? (?:\S+ ){0,3}?(?:from|at) " + _O,
        "studies_at",
        "org_like",
    ),
    _d(
        "detained",
        r"^(?:send|imprison|incarcerate|hold|transfer|move|detain|intern|jail|confine|return) "
        r"(?:back )?(?:from \S+(?: \S+){0,3} )?(?:to|at|in) " + _O,
        "detained_in",
        "prison",
        needs=_PASSIVE,
    ),
    _d(
        "served_time",
        r"^serve (?:time|\S+ years?|a sentence) (?:at|in) " + _O,
        "detained_in",
        "prison",
    ),
    _d(
        "renamed",
        r"^(?:rename|know as|call|name|rebrand|redesignate|retitle) (?:as )?" + _O,
        "official_name",
        "name",
        needs=_PASSIVE,
    ),
    _d(
        "took_name",
        r"^(?:change (?:its|his|her|their) name to|take the name|adopt the name|"
        r"become known as|go by) " + _O,
        "official_name",
        "name",
    ),
    _d(
        "located",
        r"^(?:located in|situate in|incorporate into|merge into|annex by|transfer to|cede to|"
        r"assign to|place under|attach to) " + _O,
        "located_in",
        "place_like",
        needs=_PASSIVE,
    ),
    _d(
        "part_of",
        r"^(?:be part of|become part of|lie in|belong to|pass to|fall under|come under) " + _O,
        "located_in",
        "place_like",
    ),
    _d(
        "led_by_passive",
        r"^(?:lead|head|chair|coach|manage|edit|command|host|present|direct|govern|rule|run|"
        r"captain|skipper|helm) by " + _O,
        "led_by",
        "person",
        needs=_PASSIVE,
    ),
    _d(
        "owned_by",
        r"^(?:own|buy|purchase|acquire|inherit|take over|sell to|lease to|sell) (?:by |to )?" + _O,
        "owned_by",
        "owner",
        needs=_PASSIVE,
    ),
    _d(
        "made_by",
        r"^(?:build|manufacture|produce|design|construct|make) by " + _O,
        "made_by",
        "org_like",
        needs=_PASSIVE,
    ),
    _d(
        "operated_by",
        r"^(?:operate|run|use|fly) by " + _O,
        "operated_by",
        "org_like",
        needs=_PASSIVE,
    ),
    _d(
        "broadcast_on",
        r"^(?:broadcast|air|show|screen|televise|transmit) on " + _O,
        "broadcaster",
        "org_like",
        needs=_PASSIVE,
    ),
    _d("moved_hq", r"^move (?:its|the|their) headquarters to " + _O, "headquarters", "place_like"),
    _d(
        "based_in",
        r"^(?:headquarter|base) (?:in|at) " + _O,
        "headquarters",
        "place_like",
        needs=_PASSIVE,
    ),
    _d(
        "league",
        r"^(?:play in|compete in|promote to|relegate to|join|win promotion to|return to) " + _O,
        "league",
        "league",
    ),
    _d(
        "home_games",
        r"^play (?:its |their )?home (?:games|matches) at " + _O,
        "home_venue",
        "org_like",
    ),
    _d("race_in", r"^(?:race|compete|drive) in " + _O, "competes_in", "org_like"),
    _d("served_in", r"^serve (?:in|with) " + _O, "served_in", "org_like"),
    _d(
        "returned_to",
        r"^(?:return|move back|come back|go back|relocate|move) to " + _O,
        "lives_in",
        "place_like",
    ),
]
_CLUB_WORDS = {
    "fc", "f.c.", "afc", "cf", "club", "united", "city", "athletic", "sporting", "real",
    "rovers", "wanderers", "town", "albion", "county", "team", "sc", "ac", "as", "ssc",
    "cd", "fk", "sk", "bk", "if", "calcio", "dynamo", "lokomotiv", "spartak", "red",
}  # fmt: skip
_PARTY_WORDS = {
    "party", "movement", "union", "front", "alliance", "coalition", "bloc", "congress",
    "league", "forces", "democrats", "republicans", "socialists", "greens", "labour",
    "cause", "forum", "caucus", "federation",
}  # fmt: skip
_LEAGUE_WORDS = {
    "league", "liga", "division", "serie", "bundesliga", "ligue", "premiership",
    "conference", "championship", "primera", "eredivisie", "superliga", "nba", "nhl",
}  # fmt: skip


def _words(obj: _Obj) -> set[str]:
    return {_lw(t).strip(".") for t in obj.tokens}


def doc_object(kind: str, obj: _Obj) -> bool:
    """Whether the object read for a document rule is the kind of thing it names."""
    if not _valid_obj(obj):
        return False
    words = _words(obj)
    named = _has_propn(obj)
    if kind == "signing":
        return named  # "signed for Sansovino": whatever the tagger thinks Sansovino is
    if kind == "club":
        if words & (_PARTY_WORDS - {"league", "union"}):
            return False
        labels = {t.ent_type_ for t in obj.tokens} - {""}
        return named and (bool(words & _CLUB_WORDS) or ("ORG" in labels and "GPE" not in labels))
    if kind == "party":
        return named and bool(words & _PARTY_WORDS)
    if kind == "league":
        return named and bool(words & _LEAGUE_WORDS)
    if kind == "role":
        heads = {w[:-1] if w.endswith("s") else w for w in words}
        return bool(heads & LEADER_ROLES or words & _TITLE_WORDS) and len(obj.tokens) <= 9
    if kind == "org_name":
        return named and not any(t.ent_type_ == "PERSON" for t in obj.tokens)
    if kind == "label":
        return named and bool(words & {"records", "recordings", "music", "entertainment", "label"})
    if kind == "prison":
        return named or bool(words & {"prison", "penitentiary", "jail", "camp", "facility"})
    if kind in ("org_like", "place_like", "owner", "name", "person"):
        return named
    return False


_TITLE_WORDS = {
    "senator", "representative", "governor", "minister", "ambassador", "judge",
    "justice", "deputy", "member", "councillor", "councilor", "delegate", "mp",
    "lieutenant", "colonel", "major", "captain", "general", "sergeant", "admiral",
    "commodore", "marshal", "brigadier", "ensign", "kapitänleutnant", "oberleutnant",
    "leutnant", "fähnrich", "korvettenkapitän", "fregattenkapitän", "professor",
    "lecturer", "fellow", "count", "countess", "duke", "duchess", "earl", "baron",
    "viscount", "marquess", "lord", "king", "queen", "emperor", "empress", "pope",
    "cardinal", "bishop", "archbishop", "grandmaster", "master", "champion",
    "attorney", "solicitor", "treasurer", "auditor", "comptroller", "speaker",
    "whip", "vice", "premier", "chancellor", "consul", "envoy", "prefect",
}  # fmt: skip
# "X was appointed (the club's) manager", "X became chairman", "X was the editor-in-chief"
_INVERSE_ROLE = re.compile(
    r"^(?:be elect|be appoint|be name|be hire|be instal|become|serve|be|take over|succeed \S+)"
    r"(?: as| to)? (?:the |a |an |its |their )?(?:new |first |interim |acting |longtime |"
    r"\S+ )?(?P<role>[a-z-]+(?: [a-z-]+)?)\b"
)
_INVERSE_VERBS = [
    (re.compile(r"^(?:buy|purchase|acquire|inherit|own|rent|lease) (?=\S)"), "owned_by"),
    (re.compile(r"^(?:sell|give|bequeath|lease|transfer) (?=\S)"), "sold_to"),
    (re.compile(r"^(?:live in|reside in|occupy|move into|settle in) (?=\S)"), "resident"),
    (
        re.compile(
            r"^(?:coach|manage|lead|head|chair|command|edit|direct|host|present|govern|rule) (?=\S)"
        ),
        "led_by",
    ),
]


def inverse_hits(
    ctx: _Ctx, subj: _Subject, toks: list[Token], vg: _Verb, rstr: str, c2t: list[int]
) -> list[_Hit]:
    """A named person acting on the topic, as a fact of the topic."""
    topic = ctx.topic
    if topic is None or subj.name is None or topic.refers(subj.name) or vg.neg:
        return []
    if not subj.name[:1].isupper():
        return []
    for rx, predicate in _INVERSE_VERBS:
        m = rx.match(rstr)
        if m is None:
            continue
        k = c2t[m.end()]
        if k < len(toks) and _lw(toks[k]) == topic.pronoun and topic.pronoun == "it":
            obj = _Obj([toks[k]], k + 1)  # "William Redin ... purchased it"
        else:
            obj = _np(ctx, toks, k)
            if not obj.tokens or not (topic.refers(obj.text) or topic.refers("the " + obj.text)):
                return []
        if predicate != "sold_to":
            return [_Hit(predicate, subj.name, "inverse_" + predicate, 0.6, subject=topic.name)]
        # "Ames's heirs sold the villa to Count Guido Monzino": the buyer owns it
        j = obj.end
        if j + 1 < len(toks) and _lw(toks[j]) == "to":
            buyer = _np(ctx, toks, j + 1)
            if _valid_obj(buyer) and _has_propn(buyer):
                return [_Hit("owned_by", buyer.text, "inverse_sold_to", 0.6, subject=topic.name)]
        return []
    m = _INVERSE_ROLE.match(rstr)
    if m is None:
        return []
    role = m.group("role")
    head = role.split()[-1]
    if (
        head not in LEADER_ROLES
        and role not in LEADER_ROLES
        and head.rstrip("s") not in LEADER_ROLES
    ):
        return []
    # "manager of Juventus" is another body's head; "of the club" or nothing is the topic's
    rest = rstr[m.end() :]
    tail = rest.lstrip()
    if tail.startswith(("of ", "at ", "for ")):
        k = c2t[m.end() + (len(rest) - len(tail)) + tail.index(" ") + 1]
        obj = _np(ctx, toks, k)
        if not obj.tokens or not (topic.refers(obj.text) or topic.refers("the " + obj.text)):
            return []
    return [_Hit("led_by", subj.name, "inverse_role", 0.6, subject=topic.name)]


def _role_place(ctx: _Ctx, toks: list[Token], obj: _Obj) -> _Obj:
    """'pastor at St. Remigius Church': where a role is held is part of its name."""
    j = obj.end
    if (
        j + 1 < len(toks)
        and _lw(toks[j]) in ("at", "of", "for", "in")
        and toks[j].i not in ctx.masked
    ):
        where = _np(ctx, toks, j + 1, place=True)
        if _valid_obj(where) and _has_propn(where) and len(obj.tokens) + len(where.tokens) <= 9:
            return _Obj(toks[toks.index(obj.tokens[0]) : where.end], where.end)
    return obj


def doc_hits(ctx: _Ctx, toks: list[Token], vg: _Verb, rstr: str, c2t: list[int]) -> list[_Hit]:
    """The topic's relations: the first document rule whose object fits decides."""
    if vg.neg or vg.future or vg.hedge:
        return []
    for rule in DOC_RULES:
        if ("passive" in rule.needs) and not vg.passive:
            continue
        m = rule.rx.search(rstr)
        if m is None:
            continue
        obj = _np(ctx, toks, c2t[m.start("o")])
        if not doc_object(rule.obj, obj):
            continue
        if rule.obj == "role":
            obj = _role_place(ctx, toks, obj)
        # a document's past tense starts what it tells ("in 2000 he signed for X"); the
        # timeline ends it where the next one begins; a copula names a held state
        state = rule.name == "copula_role"
        return [_Hit(rule.predicate, obj.text, rule.name, rule.confidence, state=state)]
    return []
