"""The rule table: lemma-string regexes mapped onto the predicate vocabulary.

>>> next(r for r in _RULES if r.name == "live_in").predicate
'lives_in'

Rules are tried in order; the first whose regex matches (and whose ``needs``
the verb group meets) decides the clause. Families: residence, work, study,
age, nationality, relations, preferences, languages and allergies, ownership
and tools, visits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ._lexicon import NUMBER_WORDS
from ._types import Op


@dataclass(frozen=True)
class _Rule:
    name: str
    rx: re.Pattern[str]
    predicate: str
    confidence: float
    obj: str  # object reader, see _read_object
    op: Op = "assert"
    state: bool = False  # a state whose simple past means it has ended
    neg_predicate: str | None = None  # negated form ("don't like" -> dislikes)
    needs: frozenset[str] = frozenset()
    many: bool = False  # "French and Spanish" -> two facts


def _r(name: str, rx: str, predicate: str, confidence: float, obj: str, **kw: Any) -> _Rule:
    needs = frozenset(kw.pop("needs", ()))
    return _Rule(name, re.compile(rx), predicate, confidence, obj, needs=needs, **kw)


_O = r"(?P<o>\S)"
# Rules whose verb is shared with a later rule: when the object does not fit, try the next.
_TRY_NEXT = {"quit"}
# "I left Acme" vs "I left Phoenix": the small model often labels companies GPE, so a
# place-like object ends both readings. An end of a value that does not hold is a no-op
# in the engine, so the wrong half costs nothing; a guessed assert would.
_NUMWORDS = "(?:" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + ")"
_RULES: list[_Rule] = [
    # residence
    _r("live_in", rf"^live (?:in|at|on) {_O}", "lives_in", 0.9, "place", state=True),
    _r("reside_in", rf"^reside in {_O}", "lives_in", 0.9, "place", state=True),
    _r("based_in", rf"^(?:be )?based (?:in|out of) {_O}", "lives_in", 0.85, "place", state=True),
    _r("move_out_of", rf"^move out of {_O}", "lives_in", 0.85, "place", op="end"),
    _r(
        "move_to",
        rf"^(?:move|relocate) (?:back |over |here |there |away )?to {_O}",
        "lives_in",
        0.85,
        "place",
    ),
    _r("move_into", rf"^move into {_O}", "lives_in", 0.8, "place_inside"),
    _r("settle_in", rf"^settle (?:down )?in {_O}", "lives_in", 0.8, "place"),
    # work
    _r("work_at", rf"^work (?:at|for) {_O}", "works_at", 0.9, "org", state=True),
    _r("work_as", rf"^work as {_O}", "job_title", 0.9, "job_free", state=True),
    _r("been_at_org", rf"^be at {_O}", "works_at", 0.75, "org_entity", needs={"perfect"}),
    _r("resign", rf"^(?:resign|retire|retired) from {_O}", "works_at", 0.85, "org", op="end"),
    _r(
        "laid_off",
        rf"^(?:lay off|laid off|fire|sack|let go|make redundant) (?:from|by|at) {_O}",
        "works_at",
        0.8,
        "org",
        op="end",
    ),
    _r("employed_by", rf"^employed by {_O}", "works_at", 0.85, "org", state=True),
    _r(
        "get_job_at",
        r"^(?:get|land|take|accept|start|find) (?:a |an |the |my )?(?:new )?"
        rf"(?:job|position|role) (?:at|with) {_O}",
        "works_at",
        0.85,
        "org",
    ),
    _r(
        "quit_job_at",
        rf"^(?:quit|leave) (?:my |his |her |their |the |a )?job (?:at|with) {_O}",
        "works_at",
        0.85,
        "org",
        op="end",
    ),
    _r("join", rf"^join {_O}", "works_at", 0.75, "org_propn"),
    _r(
        "start_at", rf"^start (?:work |working )?(?:at|with) {_O}", "works_at", 0.8, "org_or_school"
    ),
    _r("quit", rf"^(?:quit|leave) {_O}", "works_at", 0.75, "org_not_place", op="end"),
    _r("leave_place", rf"^leave {_O}", "lives_in|works_at", 0.6, "gpe", op="end"),
    _r("promoted_to", rf"^promoted to {_O}", "job_title", 0.85, "job_free"),
    _r("become_citizen", rf"^become (?:an? )?{_O}\S* citizen", "nationality", 0.85, "nat"),
    _r("become", rf"^become {_O}", "job_title", 0.8, "job"),
    _r("retired", r"^(?:be )?retired(?: [.,§]|$)", "job_title", 0.7, "const:retired"),
    # study
    _r("study_at", rf"^study at {_O}", "studies_at", 0.9, "org", state=True),
    _r(
        "study_x_at", rf"^study (?:\S+ ){{1,3}}at {_O}", "studies_at", 0.85, "org_propn", state=True
    ),
    _r(
        "student_at",
        r"^be (?:an? )?(?:\S+ )?(?:student|undergrad|undergraduate|postgrad|freshman|"
        rf"sophomore|grad student) (?:at|of) {_O}",
        "studies_at",
        0.85,
        "org_propn",
    ),
    _r(
        "degree_at",
        r"^do (?:my |a |an |his |her )?(?:phd|ph\.d\.|masters|master|degree|bachelor|"
        rf"doctorate|mba|undergrad|postdoc)(?: 's)?(?: degree)? (?:at|in) {_O}",
        "studies_at",
        0.85,
        "org_propn",
    ),
    _r("attend", rf"^attend {_O}", "studies_at", 0.8, "org_propn", state=True),
    _r("go_to_school", rf"^go to {_O}", "studies_at", 0.8, "school", needs={"present"}),
    _r("graduate", rf"^graduate from {_O}", "studies_at", 0.8, "org_propn", op="end"),
    _r(
        "finish_degree",
        r"^(?:finish|complete) (?:my |a |an |his |her |their )?(?:phd|ph\.d\.|masters|master|"
        rf"degree|bachelor|doctorate|mba|studies|diploma)(?: 's)?(?: degree)? (?:at|in) {_O}",
        "studies_at",
        0.8,
        "org_propn",
        op="end",
    ),
    _r("drop_out", rf"^drop out of {_O}", "studies_at", 0.8, "org_propn", op="end"),
    # age
    _r(
        "age",
        rf"^be (?P<o>\d{{1,3}}|{_NUMWORDS})"
        r"(?: year old| years old| yo| yrs old)?(?: [.,!§]| and|$)",
        "age",
        0.9,
        "num",
    ),
    _r("turn_age", rf"^turn (?P<o>\d{{1,3}}|{_NUMWORDS})\b", "age", 0.85, "num"),
    # nationality
    _r("citizen", rf"^be (?:an? )?{_O}\S* citizen", "nationality", 0.85, "nat"),
    _r(
        "citizenship",
        rf"^(?:have|hold|get|obtain|receive|acquire|gain) (?:an? |my |his |her |their )?{_O}\S* "
        r"(?:citizenship|passport|nationality)",
        "nationality",
        0.85,
        "nat",
    ),
    _r("be_nationality", r"^be (?P<o>[a-z.]+)(?: [.,!§]| and|$)", "nationality", 0.8, "nat"),
    # relations
    _r("married_to", rf"^(?:be |get )?married to {_O}", "spouse", 0.9, "person"),
    _r("engaged_to", rf"^(?:be |get )?engaged to {_O}", "partner", 0.85, "person"),
    _r("marry", rf"^(?:marry|married) {_O}", "spouse", 0.85, "person"),
    _r("date", rf"^date {_O}", "partner", 0.8, "person", state=True),
    _r("break_up", rf"^(?:break|split) up with {_O}", "partner", 0.85, "person", op="end"),
    # "I'm no longer with Chris": only the ending form; "I'm with Ana" is often just company
    _r("no_longer_with", rf"^be with {_O}", "partner", 0.7, "person", needs={"nolonger"}),
    _r("divorced", rf"^divorced (?:from )?{_O}", "spouse", 0.85, "person", op="end"),
    _r("divorce", rf"^divorce {_O}", "spouse", 0.85, "person", op="end"),
    # preferences
    _r(
        "fan_of",
        rf"^be (?:an? )?(?:big |huge |massive |great |real |die-hard )?fan of {_O}",
        "likes",
        0.85,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r("into", rf"^be into {_O}", "likes", 0.8, "pref", neg_predicate="dislikes", many=True),
    _r("get_into", rf"^get into (?!a |an |trouble ){_O}", "likes", 0.75, "pref", many=True),
    _r(
        "keen_on",
        r"^be (?:obsessed with|crazy about|passionate about|keen on|fond of|hooked on|"
        rf"mad about|addicted to) {_O}",
        "likes",
        0.8,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r(
        "like",
        rf"^(?:love|like|enjoy|adore) {_O}",
        "likes",
        0.85,
        "pref",
        neg_predicate="dislikes",
        many=True,
    ),
    _r(
        "hate",
        rf"^(?:hate|dislike|detest|loathe|despise|abhor) {_O}",
        "dislikes",
        0.85,
        "pref",
        many=True,
    ),
    _r("cant_stand", rf"^stand {_O}", "dislikes", 0.85, "pref", needs={"can", "neg"}, many=True),
    _r("prefer", rf"^prefer {_O}", "prefers", 0.85, "pref"),
    # languages, instruments, allergies
    _r(
        "speak",
        r"^speak (?:a little |a bit of |some |fluent |basic |conversational |decent |good |"
        rf"native )?{_O}",
        "speaks",
        0.9,
        "lang",
        many=True,
        state=True,
    ),
    _r("fluent_in", rf"^be fluent in {_O}", "speaks", 0.9, "lang", many=True),
    _r("play", rf"^play {_O}", "plays", 0.85, "thing", many=True, state=True),
    _r("allergic_to", rf"^be allergic to {_O}", "allergic_to", 0.9, "np", many=True),
    _r("allergy", rf"^have (?:an? |severe |bad )*{_O}.* allerg", "allergic_to", 0.85, "allergen"),
    # ownership and tools
    _r("own", rf"^own {_O}", "owns", 0.85, "thing", state=True, many=True),
    _r("buy", rf"^(?:buy|purchase) {_O}", "owns", 0.8, "ownable"),
    _r("drive_car", rf"^drive {_O}", "owns", 0.7, "vehicle", needs={"present"}),
    _r("sell", rf"^sell {_O}", "owns", 0.8, "thing", op="end"),
    _r("have_thing", rf"^have {_O}", "owns", 0.7, "ownable", needs={"present"}, many=True),
    _r("get_thing", rf"^get {_O}", "owns", 0.7, "ownable", needs={"past"}),
    _r("use", rf"^use {_O}", "uses", 0.85, "tool", state=True),
    _r("run_tool", rf"^run {_O}", "uses", 0.75, "tool_propn"),
    _r("be_on", rf"^be on {_O}", "uses", 0.7, "tool_propn", needs={"present"}),
    _r(
        "switch_to",
        rf"^switch (?:over )?(?:from (?P<f>\S+)(?: \S+){{0,3}} )?to {_O}",
        "uses",
        0.75,
        "tool_propn",
    ),
    # visits
    _r("been_to", rf"^be to {_O}", "visited", 0.85, "place", needs={"perfect"}),
    _r("visit", rf"^visit {_O}", "visited", 0.85, "place_any", needs={"past"}),
    _r(
        "go_to",
        rf"^(?:go|travel|fly|drive|head|come) (?:back )?to {_O}",
        "visited",
        0.8,
        "gpe",
        needs={"past"},
    ),
    _r("spend_in", rf"^spend .*?\bin {_O}", "visited", 0.75, "gpe", needs={"past"}),
    _r("was_in", rf"^be in {_O}", "visited", 0.7, "gpe", needs={"past", "time"}),
]
