"""Special forms of chat about one's doings, read before the rule table.

>>> ASPECT.match("start volunteer at a local dog shelter").group(0)
'start '

People wrap what they did in light verbs: "I just started volunteering at a
shelter", "got to see the band", "had a blast at a live music event", "I'm
off to do some taekwondo", "I've been blogging about politics". These
helpers unwrap them, so the rule table reads the verb that carries the
meaning, and name the bare activities ("doing kickboxing", "went running")
the table has no rule for.
"""

from __future__ import annotations

import re

from ._gate import phatic_object
from ._lexicon_life import ACTIVITY_GERUNDS, EVENT_NOUNS
from ._objects import _gerund_phrase, _np, _person, _valid_obj
from ._tokens import Token, _Ctx, _Hit, _lw, _Verb

__all__ = ["ASPECT", "activity_hits", "good_time_at", "met_hits"]

# "start volunteering", "keep writing", "got to see", "be off to do": the verb after
# these carries the meaning (its own rule decides), the first only says when.
ASPECT = re.compile(
    r"^(?:start|begin|keep|continue|go on|end up|get to|be off to|get back to|get into|"
    r"start to|begin to|choose to|manage to|finally get to|get a chance to|get the chance to) "
)
# "had a blast at", "had a great time at": being at an event, said warmly.
_GOOD_TIME = re.compile(
    r"^have (?:a |an |the |such a |so much )?(?:\S+ )?(?:time|blast|ball|fun|day|night) "
    r"(?:at|in|on|during) (?=\S)"
)
# "I had a great experience last weekend hiking with my church friends"
_GOOD_DOING = re.compile(
    r"^have (?:a |an |such a |so much )?(?:\S+ )?(?:time|blast|ball|fun|experience|day) "
    r"(?:§ )?(?=\S+)"
)
_NOT_ACTIVITIES = {"ok", "okay", "well", "good", "great", "fine", "alright", "better", "best"}
_LIGHT_ACTIVITY_VERBS = {"do", "try", "practice", "practise", "take up", "get into"}


def good_time_at(ctx: _Ctx, toks: list[Token], rstr: str, c2t: list[int]) -> list[_Hit]:
    """'We had a blast at a live music event' -> attended the event; '... had a great
    experience hiking with my church friends' -> the activity."""
    m = _GOOD_TIME.match(rstr)
    if m is None:
        d = _GOOD_DOING.match(rstr)
        k = c2t[d.end()] if d else len(toks)
        if k < len(toks) and toks[k].tag_ == "VBG" and _lw(toks[k]) in ACTIVITY_GERUNDS:
            phrase = _gerund_phrase(ctx, toks, k)
            return (
                [_Hit("activity", phrase.text.lower(), "good_time_doing", 0.7)]
                if phrase.tokens
                else []
            )
        return []
    obj = _np(ctx, toks, c2t[m.end()])
    if not _valid_obj(obj) or phatic_object(obj.tokens):
        return []
    head = _lw(obj.tokens[-1])
    if head not in EVENT_NOUNS and head.rstrip("s") not in EVENT_NOUNS:
        return []
    return [_Hit("attended", obj.text, "good_time_at", 0.75)]


def activity_hits(ctx: _Ctx, toks: list[Token], vg: _Verb, rstr: str) -> list[_Hit]:
    """A named activity with no rule of its own: 'I'm doing kickboxing', 'I've done
    weight training', 'I've been running farther', 'been blogging about politics'."""
    if vg.neg or vg.future or vg.hedge or not (vg.past or vg.perfect or vg.progressive):
        return []
    main = toks[vg.main]
    word = _lw(main)
    if main.tag_ == "VBG" and word in ACTIVITY_GERUNDS and vg.main + 1 <= len(toks):
        phrase = _gerund_phrase(ctx, toks, vg.main)
        # "running farther", "blogging about politics": the gerund and what it governs
        text = phrase.text if phrase.tokens and len(phrase.tokens) <= 6 else main.text
        return [_Hit("activity", text.lower(), "doing_activity", 0.7)]
    lemma = rstr.split(" ", 1)[0]
    if lemma not in _LIGHT_ACTIVITY_VERBS or vg.main + 1 >= len(toks):
        return []
    k = vg.main + 1
    while k < len(toks) and _lw(toks[k]) in ("some", "a", "bit", "of", "little", "more", "lot"):
        k += 1
    if k >= len(toks):
        return []
    obj = _np(ctx, toks, k)
    if not _valid_obj(obj) or phatic_object(obj.tokens) or len(obj.tokens) > 3:
        return []
    head = obj.tokens[-1]
    if _lw(head) in _NOT_ACTIVITIES:
        return []  # "I'm doing OK"
    # only a named pursuit: "kickboxing", "weight training", "yoga", not "the dishes"
    if _lw(toks[vg.main + 1]) in ("the", "this", "that", "my", "your", "it", "a", "an"):
        return []  # "I've done an abstract painting" is a thing made, not a pursuit
    if head.pos_ not in ("NOUN", "PROPN") and head.tag_ != "VBG":
        return []
    if not (_lw(head).endswith("ing") or _lw(head) in ACTIVITY_GERUNDS or head.pos_ == "PROPN"):
        return []
    return [_Hit("activity", obj.text.lower(), "doing_activity", 0.7)]


def met_hits(ctx: _Ctx, toks: list[Token], vg: _Verb, rstr: str, c2t: list[int]) -> list[_Hit]:
    """'I met this amazing woman, Jean', 'ran into someone named David' -> met."""
    m = re.match(r"^(?:meet|run into|bump into|get to know) (?=\S)", rstr)
    if m is None or vg.neg or vg.future or not (vg.past or vg.perfect):
        return []
    k = c2t[m.end()]
    n = len(toks)
    name = _person(ctx, toks, k)
    if name is None:
        # "this amazing woman, Jean": a description, then the name after a comma
        j = k
        while j < n and j < k + 6 and _lw(toks[j]) not in (",", "named", "called"):
            j += 1
        if j + 1 < n and _lw(toks[j]) in (",", "named", "called"):
            name = _person(ctx, toks, j + 1)
    return [_Hit("met", name, "met", 0.75)] if name else []
