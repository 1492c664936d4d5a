"""The precision gate: chat that says nothing about anyone's life yields no fact.

>>> social_plan("keep you posted"), social_plan("visit Japan")
(True, False)

Two people talking say many things that read like statements and are not:
promises to stay in touch ("I'll keep you posted"), encouragement ("you'll get
there"), thanks and praise ("you captured the sunset perfectly"), echoes of the
other person's news ("sounds like a great plan"). These rules are about the
*shape* of such turns (a social verb, an object that is the listener or a
pronoun, a subject that is the listener), never about particular words of one
conversation. A false fact costs more than a missing one, so what they catch
is dropped, not quarantined.
"""

from __future__ import annotations

from ._tokens import Token, _lw

__all__ = ["deictic", "empty_object", "phatic_object", "social_plan"]

# Verbs that head promises and pleasantries rather than plans ("I'll keep
# going", "I'll check it out", "I'll do my best", "we'll make it through").
SOCIAL_VERBS = {
    "keep", "check", "try", "do", "make", "let", "tell", "send", "see", "talk",
    "add", "rock", "hang", "get", "stay", "give", "find", "share", "catch",
    "follow", "look", "reach", "enjoy", "love", "cherish", "watch", "tune",
    "bring", "think", "push", "figure", "be", "have", "help", "remember", "update",
    "chat", "support", "cheer", "root", "wait", "appreciate", "stick", "carry",
}  # fmt: skip
_LISTENER = {"you", "your", "yours", "ya", "u", "yourself", "ur"}
_PRONOUN_OBJECTS = {"it", "that", "this", "them", "those", "these", "one", "some"}
# Light gerunds that are no activity on their own ("I love being around friends").
_LIGHT_GERUNDS = {
    "being", "doing", "making", "having", "getting", "going", "seeing", "trying",
    "taking", "giving", "putting", "keeping", "finding", "knowing", "feeling",
    "using", "spending", "hearing",
}  # fmt: skip
# Objects of praise and small talk rather than of a life ("sounds like a plan").
_PHATIC_HEADS = {
    "plan", "idea", "blast", "time", "way", "day", "fun", "job", "work", "vibe",
    "vibes", "memories", "difference", "impact", "best", "luck", "sense", "point",
    "fingers", "hand", "ton", "toll", "options", "chance", "shot", "break", "opinion",
    "advice", "adventure", "journey", "ride", "thought", "thoughts", "support",
}  # fmt: skip


def social_plan(phrase: str) -> bool:
    """A future phrase that is a promise to the listener or a pleasantry, not a plan.

    >>> social_plan("make sure to keep you updated"), social_plan("run for office")
    (True, False)
    """
    words = phrase.lower().replace("'", " '").split()
    if not words:
        return True
    if words[0] in SOCIAL_VERBS:
        return True
    return any(w in _LISTENER or w in _PRONOUN_OBJECTS for w in words[1:3])


def phatic_object(tokens: list[Token]) -> bool:
    """An object that is the listener, a pronoun or small talk ("a great plan")."""
    if not tokens:
        return True
    words = [_lw(t) for t in tokens]
    if any(w in _LISTENER for w in words):
        return True
    if words[0] in _LIGHT_GERUNDS and len(words) <= 5 and words[-1] in _PHATIC_HEADS:
        return True  # "having such a great time"
    return len(words) <= 3 and words[-1] in _PHATIC_HEADS


def empty_object(tokens: list[Token]) -> bool:
    """A lone light gerund ("being", "doing") carries no content of its own."""
    return len(tokens) == 1 and _lw(tokens[0]) in _LIGHT_GERUNDS


_DEICTIC = {"this", "that", "these", "those", "your", "ur"}


def deictic(tokens: list[Token], *, definite: bool = False) -> bool:
    """An object picked out by pointing ("that book", "the colour", "your turtles"),
    not named: in a chat it is what the other person just showed or said, so
    "I love the colour" is a reaction, not a lasting taste. A name ("the
    Beatles") is no pointing. With ``definite``, "the" points too (a taste of "the
    colour" is a reaction; a visit to "the museum" is not)."""
    if not tokens:
        return False
    first = tokens[0]
    if any(t.pos_ == "PROPN" or t.ent_type_ for t in tokens):
        return False
    if len(tokens) > 1 and _lw(first) == "all" and _lw(tokens[1]) in _DEICTIC | {"the"}:
        return True  # "all the yellow leaves" as the object itself
    if first.i == 0:
        return False
    j = first.i - 1
    while j > 0 and (first.doc[j].like_num or first.doc[j].pos_ == "ADJ"):
        j -= 1  # "that first movie", "this amazing series": the pointing word before
    before = _lw(first.doc[j])
    if before == "the" and first.i > 1 and _lw(first.doc[first.i - 2]) == "all":
        return True  # "all the yellow leaves"
    return before in _DEICTIC or (definite and before == "the")
