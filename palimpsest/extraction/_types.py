"""Value types and the ``Extractor`` protocol of the extraction room.

>>> from datetime import datetime, UTC
>>> CandidateFact("user", "lives_in", "Sydney", "assert", None, None, None, 0.9, "live_in").object
'Sydney'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol, runtime_checkable

Op = Literal["assert", "end"]
Precision = Literal["day", "month", "year"]
Kind = Literal["fact", "opinion", "event", "social"]
Cardinality = Literal["one", "many"]
TextKind = Literal["turn", "document"]

__all__ = [
    "CandidateEntity",
    "CandidateFact",
    "Cardinality",
    "ExtractRequest",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "Kind",
    "Op",
    "Precision",
    "TextKind",
    "TextTooLargeError",
]


class ExtractionError(ValueError):
    """Input the extractor refuses to process.

    >>> issubclass(TextTooLargeError, ValueError)
    True
    """


class TextTooLargeError(ExtractionError):
    """Text longer than the extractor's limit (``SpacyExtractor.max_chars``).

    The engine validates size first; this is the extractor's own guard, so a
    megabyte pasted by mistake fails fast instead of parsing for minutes.
    """


@dataclass(frozen=True)
class CandidateEntity:
    """A named thing mentioned in the text.

    >>> CandidateEntity("Mira", "PERSON")
    CandidateEntity(name='Mira', label='PERSON')

    ``label`` is a spaCy NER label, ``PROPN`` for an unlabelled proper noun,
    ``SPEAKER`` for the first-person speaker and ``ADDRESSEE`` for "you".
    """

    name: str
    label: str


@dataclass(frozen=True)
class CandidateFact:
    """A subject-predicate-object claim read from text, not yet stored.

    >>> f = CandidateFact("user", "works_at", "Acme", "end", None, None, None, 0.85, "quit_job_at")
    >>> (f.op, f.cardinality_hint)
    ('end', None)

    Time fields are aware UTC or ``None`` ("not stated"; the engine then uses
    the episode's ``occurred_at``).  For ``op="assert"`` the window is
    ``[valid_from, valid_to)``.  For ``op="end"`` ``valid_from`` is the moment
    the fact stopped holding (the ``at`` of ``Memory.end_fact``) and
    ``valid_to`` is always ``None``.  An assert with ``valid_to`` but no
    ``valid_from`` ("I worked at IBM until 2020") is a fact of unknown start:
    callers should store it as starting "since always", not at ``occurred_at``.
    ``precision`` is the granularity of the stated time (``None`` without one).
    ``cardinality_hint`` is set only for predicates outside the vocabulary
    (fallback verb lemmas), which are always ``"many"``.

    ``subject_type`` and ``object_type`` say what kind of thing each is
    (``person``, ``animal``, ``place``, ``organization``, ``event``,
    ``activity``, ``object``, ``work`` or ``thing``; see ``_kinds``). ``gate`` is
    the learned precision gate's estimate that the reading is right (None when
    no gate rated it) and ``doubt`` why the fact is held back: a fact with a
    doubt is kept, but stored quarantined.
    """

    subject: str
    predicate: str
    object: str
    op: Op
    valid_from: datetime | None
    valid_to: datetime | None
    precision: Precision | None
    confidence: float
    pattern: str
    cardinality_hint: Cardinality | None = None
    subject_type: str = "thing"
    object_type: str = "thing"
    gate: float | None = None
    doubt: str | None = None


@dataclass(frozen=True)
class Extraction:
    """Everything the extractor read from one text.

    >>> Extraction((), (), 0.2, "social", False, None).kind
    'social'
    """

    entities: tuple[CandidateEntity, ...]
    facts: tuple[CandidateFact, ...]
    importance: float
    kind: Kind
    is_instruction: bool
    decision: str | None


@dataclass(frozen=True)
class ExtractRequest:
    """The arguments of one ``Extractor.extract`` call, for batching.

    >>> from datetime import datetime, UTC
    >>> ExtractRequest("I live in Oslo.", occurred_at=datetime(2024, 7, 2, tzinfo=UTC)).speaker
    'user'

    ``kind="document"`` reads the text as prose about one topic, paragraph by
    paragraph (see ``_document``); a ``"turn"`` is one speaker's words.
    ``context`` holds the turns before it in its conversation, as ``(speaker,
    text)``, oldest first: "he" or "she" with no one named in the turn itself is
    the last person they named ("my son got hurt" ... "he's fine now").
    """

    text: str
    occurred_at: datetime
    speaker: str = "user"
    addressee: str | None = None
    reply_to: str | None = None
    kind: TextKind = "turn"
    context: tuple[tuple[str, str], ...] = ()


@runtime_checkable
class Extractor(Protocol):
    """Text in, candidate entities and facts out; no storage, no side effects."""

    def extract(
        self,
        text: str,
        *,
        speaker: str = "user",
        addressee: str | None = None,
        occurred_at: datetime,
        reply_to: str | None = None,
    ) -> Extraction: ...

    def extract_many(self, items: Sequence[ExtractRequest]) -> list[Extraction]: ...


@dataclass
class Topic:
    """What a document is about.

    ``name`` is the title as written; ``forms`` the casefolded names that
    refer to it; ``heads`` the common nouns that do ("the house").
    """

    name: str
    forms: set[str]
    heads: set[str] = field(default_factory=set)
    pronoun: str | None = None  # "he", "she" or "it"
    role: str | None = None  # what the first sentence says it is ("manager", "house")

    @property
    def person(self) -> bool:
        return self.pronoun in ("he", "she")

    def refers(self, text: str) -> bool:
        """Whether a name (or "the <head>") found in the text stands for the topic."""
        t = " ".join(re.sub(r"^(?:the|a|an)\s+", "", text.casefold()).split())
        if t in self.forms or t == self.name.casefold():
            return True
        if any(t.startswith(f + " ") and len(f) > 3 for f in self.forms):
            return True  # "BorsodChem Zrt.", "Sarri Jr."
        return text.casefold().startswith("the ") and t in self.heads
