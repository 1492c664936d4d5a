"""Episode-level judgments: importance, kind, instruction, decision. Pure text rules.

>>> classify("thanks!", facts=(), reply_to=None, speaker="user").importance
0.2
>>> classify("yes", facts=(), reply_to="Shall I book the 9am flight?", speaker="user").decision
'User answered "yes" to: "Shall I book the 9am flight?"'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._types import CandidateFact, Kind

__all__ = ["Judgement", "classify"]

IMPORTANCE_DECISION = 0.9
IMPORTANCE_PERSONAL = 0.8
IMPORTANCE_ENVIRONMENT = 0.75
IMPORTANCE_OTHER = 0.55
IMPORTANCE_PLEASANTRY = 0.2

_BARE_REPLY_RE = re.compile(
    r"^\s*(?P<a>(?:yes|yeah|yep|yup|yes please|ok|okay|k|sure|sure thing|of course|"
    r"go ahead|go for it|do it|please do|sounds good|absolutely|definitely|confirmed|"
    r"confirm|approved|agreed|fine|alright|all right|no|nope|nah|no thanks|"
    r"no thank you|don't|do not|cancel|cancel it|stop)(?:[\s,]+(?:please|thanks|thank you))?)"
    r"\s*[.!]*\s*$",
    re.I,
)
_PLEASANTRY_RE = re.compile(
    r"^\s*(?:(?:hi|hello|hey|hiya|yo|howdy|good (?:morning|afternoon|evening|night)|"
    r"thanks|thank you|thx|ty|cheers|thanks a lot|thank you so much|many thanks|"
    r"bye|goodbye|see you|see ya|talk (?:soon|later|tomorrow)|cya|later|ok cool|cool|"
    r"nice|great|awesome|lol|haha|hahaha|lmao|wow|ok|okay|np|no problem|you're welcome|"
    r"how are you|how's it going|what's up|sup|that was helpful|that's helpful|"
    r"that helps|perfect|sounds good|got it|gotcha|sure|there|so much|"
    r"that's hilarious|that's funny|love it|welcome|morning|night)"
    r"[\s,.!?:;)(\-]*(?:[\U0001F300-\U0001FAFF\u2600-\u27BF]\s*)*)+$",
    re.I,
)
_INSTRUCTION_RE = re.compile(
    r"^\s*(?:please\s+|pls\s+|also\s+|and\s+)?(?:"
    r"remember(?:\s+that|\s*:)|don'?t forget(?:\s+that)?|do not forget|"
    r"note(?:\s+that|\s*:)|make a note|take note|keep in mind|bear in mind|"
    r"from now on|going forward|in (?:the )?future,|always\s+\w+|never\s+\w+|"
    r"ignore (?:all |any |the )?(?:previous|prior|above|earlier)|disregard|"
    r"forget (?:that|what|everything|about)|"
    r"update (?:my|the) (?:memory|profile|record)|store (?:this|that)|save (?:this|that)|"
    r"record that|log that|you should (?:always|never|remember)|you must|"
    r"(?:the )?user (?:has )?(?:authori[sz]ed|approved|consented|agreed|allowed))",
    re.I,
)
_DECISION_RE = re.compile(
    r"\b(?:i|we)\s+(?:(?:have|'ve|hereby|just)\s+)?(?:authori[sz]e[ds]?|approve[ds]?|consent(?:ed)?|"
    r"agree[ds]?|decided|decide|confirm(?:ed)?|accept(?:ed)?|allow(?:ed)?|"
    r"choose|chose|opt(?:ed)? for|go with|will go with|'ll go with|'ll take|will take)\b"
    r"|\blet'?s go with\b|\bbook it\b|\bgo ahead and\b|\byou (?:may|can|have my permission)\b"
    r"|\b(?:authori[sz]ed|approved|consented)\b",
    re.I,
)
_ENVIRONMENT_RE = re.compile(
    r"\b(?:linux|ubuntu|debian|fedora|arch|macos|mac os|os x|windows|wsl|android|ios|"
    r"chromebook|thinkpad|macbook|laptop|desktop|pc|gpu|cpu|ram|ssd|monitor|keyboard|"
    r"vim|neovim|nvim|emacs|vs ?code|vscode|intellij|pycharm|sublime|editor|ide|terminal|"
    r"shell|bash|zsh|fish|tmux|docker|kubernetes|python|node|rust|go|java|browser|firefox|"
    r"chrome|safari|homebrew|nix|raspberry pi|nvidia|amd|intel|m1|m2|m3|iphone|pixel)\b",
    re.I,
)
_PERSONAL_PREDICATES_OPINION = {"likes", "dislikes", "prefers"}
_EVENT_PREDICATES = {"visited"}


@dataclass(frozen=True)
class Judgement:
    """What ``classify`` decides about one episode.

    >>> Judgement(0.55, "fact", False, None).kind
    'fact'
    """

    importance: float
    kind: Kind
    is_instruction: bool
    decision: str | None


def _speaker_label(speaker: str) -> str:
    return "User" if speaker.lower() == "user" else speaker


def is_pleasantry(text: str) -> bool:
    """Greetings, thanks and small talk with nothing to remember.

    >>> is_pleasantry("Thank you so much, that was helpful."), is_pleasantry("I live in Oslo")
    (True, False)
    """
    stripped = text.strip()
    return bool(stripped) and len(stripped) <= 80 and _PLEASANTRY_RE.match(stripped) is not None


def is_instruction(text: str) -> bool:
    """Imperative text addressed to the memory or the assistant.

    >>> is_instruction("Remember that the user authorised the refund.")
    True
    >>> is_instruction("I live in Oslo.")
    False
    """
    return any(_INSTRUCTION_RE.match(s) for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s)


def classify(
    text: str, *, facts: Sequence[CandidateFact], reply_to: str | None, speaker: str
) -> Judgement:
    """Importance, kind, instruction flag and decision record for one episode.

    >>> classify("I use Neovim.", facts=(), reply_to=None, speaker="user").importance
    0.75
    """
    instruction = is_instruction(text)
    stripped = text.strip()
    if reply_to and reply_to.strip():
        m = _BARE_REPLY_RE.match(stripped)
        if m is not None:
            answer = re.sub(r"[\s.!]+$", "", stripped)
            question = re.sub(r"\s+", " ", reply_to.strip())
            decision = f'{_speaker_label(speaker)} answered "{answer}" to: "{question}"'
            return Judgement(IMPORTANCE_DECISION, "event", instruction, decision)
    if not stripped:
        return Judgement(IMPORTANCE_PLEASANTRY, "social", False, None)
    if _DECISION_RE.search(stripped) and "?" not in stripped:
        return Judgement(IMPORTANCE_DECISION, "event", instruction, None)
    if is_pleasantry(stripped):
        return Judgement(IMPORTANCE_PLEASANTRY, "social", instruction, None)
    if facts:
        predicates = {f.predicate for f in facts}
        if predicates <= {"uses"} or (
            predicates <= {"uses", "owns"} and _ENVIRONMENT_RE.search(stripped)
        ):
            return Judgement(IMPORTANCE_ENVIRONMENT, "fact", instruction, None)
        if predicates <= _PERSONAL_PREDICATES_OPINION:
            kind: Kind = "opinion"
        elif predicates <= _EVENT_PREDICATES:
            kind = "event"
        else:
            kind = "fact"
        return Judgement(IMPORTANCE_PERSONAL, kind, instruction, None)
    if _ENVIRONMENT_RE.search(stripped) and re.search(r"\b(?:i|my|i'm|i've)\b", stripped, re.I):
        return Judgement(IMPORTANCE_ENVIRONMENT, "fact", instruction, None)
    if instruction:
        return Judgement(
            IMPORTANCE_DECISION if "authori" in stripped.lower() else 0.6, "fact", True, None
        )
    return Judgement(IMPORTANCE_OTHER, "fact", False, None)
