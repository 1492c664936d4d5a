"""Rules for the events and doings of a life, tried after the profile rules.

>>> next(r for r in LIFE_RULES if r.name == "attend_event").predicate
'attended'

What people tell each other in a chat is mostly what they did: went to a
parade, joined a group, signed up for a class, painted a sunset, read a book,
won a tournament, took up running. The predicates come from what LoCoMo's
development observations record (see ``palimpsest/data/predicates.json``); each rule
needs the verb group to describe something done (past, perfect or ongoing),
so "I'd love to go to a concert" or "you should join a club" say nothing.
The object readers (``life_object``) check the kind of thing named, so "went
to the park" is a visit and "went to a parade" an event.
"""

from __future__ import annotations

from ._lexicon_life import (
    ACTIVITY_GERUNDS,
    CREATION_NOUNS,
    EVENT_NOUNS,
    GROUP_NOUNS,
    PRIZE_NOUNS,
    VENUE_NOUNS,
)
from ._objects import _has_propn, _is_place, _Obj
from ._rules import _O, _r, _Rule
from ._tokens import _lw

__all__ = ["LIFE_RULES", "life_object"]

_DONE = {"done"}  # past, perfect or ongoing: something that happened or is happening
_POSS = r"(?:my |his |her |their |our |the |a |an )?"
LIFE_RULES: list[_Rule] = [
    # events attended
    _r(
        "attend_event",
        rf"^(?:attend|participate in|take part in|partake in|compete in) {_O}",
        "attended",
        0.8,
        "event_any",
        needs=_DONE,
    ),
    _r(
        "go_to_event",
        rf"^(?:go|come|head|get|make it|travel) (?:back |out |over |down |up )?to {_O}",
        "attended|visited",
        0.75,
        "event_or_venue",
        needs={"past"},
    ),
    _r("go_on", rf"^go on {_O}", "attended", 0.75, "event_any", needs={"past"}),
    _r(
        "go_for",
        r"^go (?:out )?for (?:a |an )?(?:\S+ )?"
        r"(?P<o>run|hike|walk|swim|ride|jog|bike ride|drive)\b",
        "activity",
        0.75,
        "word",
        needs={"past"},
    ),
    _r("go_gerund", r"^go (?P<o>[a-z]+)\b", "activity", 0.75, "gerund", needs={"past"}),
    _r(
        "take_to",
        r"^(?:take|bring) (?:my |our |the |his |her )?(?:\S+ ){0,2}?to " + _O,
        "attended|visited",
        0.75,
        "event_or_venue",
        needs={"past"},
    ),
    _r(
        "take_trip",
        rf"^(?:take|go on|make) {_POSS}(?:\S+ )?(?:trip|vacation|holiday|getaway) "
        rf"(?:\S+ )?(?:to|in) {_O}",
        "visited",
        0.75,
        "place",
        needs={"past"},
    ),
    _r(
        "accepted",
        rf"^(?:accept|admit) (?:for|into|to|at|in) {_O}",
        "enrolled_in",
        0.75,
        "np",
        needs={"passive"},
    ),
    _r(
        "have_event",
        # "had a crazy game", "had some thrilling games": a game played, not attended
        rf"^have (?!(?:\S+ ){{0,3}}(?:game|match|season|practice|time|day|night)s?\b){_O}",
        "attended",
        0.7,
        "event_noun",
        needs={"past"},
    ),
    _r(
        "ran_race",
        rf"^(?:run|race|complete|finish) (?=(?:\S+ ){{0,4}}?(?:race|marathon|5k|10k)\b){_POSS}{_O}",
        "attended",
        0.75,
        "np",
        needs={"past"},
    ),
    _r(
        "host",
        # not "plan": "I'm planning a trip" is a plan, not something organised
        rf"^(?:host|organize|organise|throw|hold|put together|run|arrange) {_O}",
        "organized",
        0.75,
        "event_noun",
        needs=_DONE,
    ),
    # groups, classes, applications, volunteering
    _r("join_group", rf"^join {_O}", "member_of", 0.75, "group"),
    _r(
        "sign_up",
        rf"^(?:sign up|enroll|enrol|register) (?:for|in|at|with) {_O}",
        "enrolled_in",
        0.8,
        "np",
        needs=_DONE,
    ),
    _r(
        "take_class",
        r"^take (?:a |an |the |some |my |up )?"
        r"(?P<o>(?:\S+ ){0,3}(?:class|classes|course|lesson|lessons|workshop))\b",
        "enrolled_in",
        0.75,
        "np",
        needs=_DONE,
    ),
    _r("apply", rf"^apply (?:to|for) {_O}", "applied_to", 0.75, "np", needs=_DONE),
    _r(
        "volunteer",
        rf"^volunteer (?:at|with|for|in) {_O}",
        "volunteers_at",
        0.8,
        "np",
        state=True,
    ),
    _r("work_on", rf"^work on {_O}", "works_on", 0.75, "np", needs=_DONE),
    _r("mentor", rf"^(?:mentor|coach) {_O}", "mentors", 0.75, "np"),
    # making, reading, watching, winning
    _r(
        "make_art",
        rf"^(?:paint|draw|sketch|write|bake|knit|sew|compose|sculpt|craft|crochet|publish) {_O}",
        "made",
        0.75,
        "creation_any",
        needs=_DONE,
    ),
    _r(
        "make",
        rf"^(?:make|create|build|finish|complete|cook|design|record|film|release|print) {_O}",
        "made",
        0.75,
        "creation",
        needs=_DONE,
    ),
    _r(
        "read",
        rf"^(?:read|reread|re-read|finish reading|start reading) {_O}",
        "read",
        0.75,
        "np",
        needs=_DONE,
    ),
    _r("watch", rf"^(?:watch|rewatch|see) {_O}", "watched", 0.7, "title", needs=_DONE),
    _r("win", rf"^win {_O}", "won", 0.8, "np", needs=_DONE),
    _r(
        "receive",
        rf"^(?:receive|earn|be award|get award|be give) {_O}",
        "received",
        0.75,
        "np",
        needs=_DONE,
    ),
    _r(
        "awarded",
        rf"^(?:award|give|grant|present|offer) (?:with )?{_O}",
        "received",
        0.75,
        "np",
        needs={"passive"},
    ),
    _r("get_prize", rf"^get {_POSS}{_O}", "received", 0.7, "prize", needs={"past"}),
    _r(
        "research",
        rf"^(?:research|look into|read up on|learn about|look up) {_O}",
        "researched",
        0.75,
        "np",
        needs=_DONE,
    ),
    _r("learn", rf"^(?:learn|practice|practise) {_O}", "learn", 0.75, "np", needs=_DONE),
    _r(
        "take_up",
        r"^(?:take up|pick up|start|begin|try|try out|get into) (?P<o>[a-z]+)\b",
        "activity",
        0.75,
        "gerund",
        needs=_DONE,
    ),
    _r("do_activity", rf"^(?:do|try|try out) {_O}", "activity", 0.7, "activity", needs=_DONE),
    _r(
        "lose_job_as",
        rf"^lose {_POSS}job as {_O}",
        "job_title",
        0.8,
        "np",
        op="end",
    ),
    _r("lose_job_at", rf"^lose {_POSS}job (?:at|with) {_O}", "works_at", 0.8, "org", op="end"),
    _r("buy_any", rf"^(?:buy|purchase) {_O}", "owns", 0.75, "np", needs={"past"}),
]
# Kinds of film, show and game titles are named by ("watched a documentary").
_WATCHABLE = {
    "movie", "movies", "film", "films", "show", "series", "documentary", "play",
    "musical", "game", "match", "concert", "episode", "episodes", "season",
    "performance", "ballet", "opera", "sitcom", "anime", "cartoon", "video",
}  # fmt: skip


# What one "makes" that is no made thing ("made some friends", "made a decision").
_NOT_MADE = {
    "friend", "difference", "decision", "plan", "mistake", "effort", "progress",
    "point", "sense", "money", "time", "call", "choice", "change", "impact", "memory",
    "connection", "move", "step", "deal", "trip", "appointment", "reservation",
    "breakthrough", "comeback", "splash", "list", "note", "promise", "friendship",
}  # fmt: skip


def _head(obj: _Obj) -> str:
    words = [_lw(t) for t in obj.tokens if _lw(t) not in ("'s", "’s")]
    head = words[-1] if words else ""
    two = " ".join(words[-2:])
    return two if two in EVENT_NOUNS or two in CREATION_NOUNS else head


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def life_object(kind: str, obj: _Obj) -> str | None:
    """Whether ``obj`` is the kind of thing the rule names; the predicate override for
    the two-way rules ("attended|visited"), else the empty string, or None to refuse.

    >>> life_object("gerund", _Obj([], 0)) is None
    True
    """
    if not obj.tokens:
        return None
    head = _head(obj)
    stem = _singular(head)
    last = obj.tokens[-1]
    if kind in ("np", "event_any", "creation_any"):
        return "" if last.pos_ in ("NOUN", "PROPN", "NUM") or len(obj.tokens) > 1 else None
    if kind == "event_or_venue":
        if head in EVENT_NOUNS or stem in EVENT_NOUNS:
            return "attended"
        if head in VENUE_NOUNS or stem in VENUE_NOUNS or _is_place(obj):
            return "visited"
        return None
    if kind == "event_noun":
        return "" if head in EVENT_NOUNS or stem in EVENT_NOUNS else None
    if kind == "group":
        return "" if head in GROUP_NOUNS or stem in GROUP_NOUNS else None
    if kind == "creation":
        if head in CREATION_NOUNS or stem in CREATION_NOUNS:
            return ""
        # "made a limited edition line": a named made thing, not "made some friends"
        nouns = [t for t in obj.tokens if t.pos_ in ("NOUN", "PROPN", "ADJ")]
        return "" if len(nouns) >= 2 and stem not in _NOT_MADE else None
    if kind == "prize":
        return "" if head in PRIZE_NOUNS or stem in PRIZE_NOUNS else None
    if kind == "title":
        quoted = any(t.text in ('"', "“") for t in obj.tokens)
        return "" if quoted or _has_propn(obj) or stem in _WATCHABLE else None
    if kind == "place":
        return "" if _is_place(obj) else None
    if kind == "org":
        return "" if _has_propn(obj) else None
    if kind in ("gerund", "word"):
        word = _lw(obj.tokens[0])
        if kind == "gerund" and obj.tokens[0].tag_ != "VBG" and word not in ACTIVITY_GERUNDS:
            return None
        return "" if kind == "word" or word in ACTIVITY_GERUNDS else None
    if kind == "activity":
        return "" if head in ACTIVITY_GERUNDS else None
    return None
