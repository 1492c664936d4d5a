"""Who "he", "she" and "they" are: the last matching person a conversation named.

>>> people = context_people([("Melanie", "My son got into an accident.")], Lexicon())
>>> people[-1]
Mention(name="Melanie's son", pronoun='he')

In a turn, a pronoun is the last person the turn itself named (``_Ctx.last_person``).
A pronoun opening a turn ("He's okay now") points back into the conversation:
the turns before it (``ExtractRequest.context``) are scanned - cheaply, with no
parse - for relatives ("my son", "my sister Mira") and names, and the last one
whose gender (known from the kinship word, unknown for a bare name) and number
match is taken. The participants themselves are "I" and "you", never "he".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ._spacy import Lexicon

__all__ = ["Mention", "context_people", "kin_pronoun", "pick"]

_HE = {
    "son", "brother", "bro", "dad", "father", "husband", "boyfriend", "grandpa",
    "grandfather", "uncle", "nephew", "stepson", "stepfather", "fiance", "boy",
}  # fmt: skip
_SHE = {
    "daughter", "sister", "sis", "mom", "mum", "mother", "wife", "girlfriend",
    "grandma", "grandmother", "aunt", "niece", "stepdaughter", "stepmother", "fiancee",
    "girl",
}  # fmt: skip
_THEY = {"kids", "children", "parents", "friends", "siblings", "sons", "daughters", "folks"}
_ANY = {"friend", "partner", "cousin", "kid", "child", "baby", "boss", "colleague", "mentor"}
_KIN_RE = re.compile(
    r"\b(?P<own>my|our)\s+(?:(?:little|older|younger|big|baby|eldest|youngest|best|oldest)\s+)?"
    r"(?P<noun>[a-z]+)\b(?:,?\s+(?P<name>[A-Z][a-z]+))?"
)
_NAME_RE = re.compile(r"(?<=[a-z,;] )(?P<name>[A-Z][a-z]{2,})\b")
_NOT_NAMES = {
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "god", "christmas", "easter",
}  # fmt: skip


@dataclass(frozen=True)
class Mention:
    """A person named earlier in a conversation; ``pronoun`` "he", "she", "they" or None."""

    name: str
    pronoun: str | None


def context_people(turns: Iterable[tuple[str, str]], lexicon: Lexicon) -> list[Mention]:
    """People the turns name, in order (relatives of their speaker, and names)."""
    found: list[tuple[int, Mention]] = []
    offset = 0
    for speaker, text in turns:
        for m in _KIN_RE.finditer(text):
            noun = m.group("noun")
            if noun in _HE or noun in _SHE or noun in _THEY or noun in _ANY:
                pronoun = "he" if noun in _HE else "she" if noun in _SHE else None
                pronoun = "they" if noun in _THEY else pronoun
                name = m.group("name") if m.group("name") else f"{speaker}'s {noun}"
                found.append((offset + m.start(), Mention(name, pronoun)))
        for m in _NAME_RE.finditer(text):
            word = m.group("name")
            low = word.lower()
            if text[max(0, m.start() - 4) : m.start()].lower().endswith("the "):
                continue  # "the '16 Finals", "the Eiffel Tower": no person
            if low.endswith("s") and low[:-1] in lexicon.nouns:
                continue  # a plural common noun in capitals
            # a capital in mid-sentence is a name ("a pic of Oliver"), even one the
            # dictionary knows as a word; not a verb opening a quoted title, though
            if low in _NOT_NAMES or (low in lexicon.verbs and low not in lexicon.nouns):
                continue
            if any(mm.name == word for _, mm in found[-3:]):
                continue
            found.append((offset + m.start(), Mention(word, None)))
        offset += len(text) + 1
    return [mm for _, mm in sorted(found, key=lambda x: x[0])]


def kin_pronoun(noun: str) -> str | None:
    """'son' -> 'he', 'sister' -> 'she', 'kids' -> 'they'; None when it does not say."""
    word = noun.split()[-1].lower() if noun else ""
    if word in _HE:
        return "he"
    if word in _SHE:
        return "she"
    return "they" if word in _THEY else None


def pick(people: list[Mention], pronoun: str, exclude: Iterable[str | None]) -> str | None:
    """The last mention that ``pronoun`` can stand for (participants excluded)."""
    skip = {e for e in exclude if e}
    for m in reversed(people):
        if m.name in skip:
            continue
        if pronoun == "they":
            if m.pronoun == "they":
                return m.name
            continue
        if m.pronoun in (pronoun, None):
            return m.name
    return None
