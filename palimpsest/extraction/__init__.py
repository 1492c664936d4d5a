"""Text -> candidate entities and facts. Pure: no storage, no LLM.

>>> from datetime import datetime, UTC
>>> from palimpsest.extraction import SpacyExtractor
>>> e = SpacyExtractor().extract("My sister Mira lives in Berlin.",
...                              occurred_at=datetime(2024, 7, 2, tzinfo=UTC))  # doctest: +SKIP
>>> [(f.subject, f.predicate, f.object) for f in e.facts]                     # doctest: +SKIP
[('user', 'sibling', 'Mira'), ('Mira', 'lives_in', 'Berlin')]

Importing this package is cheap: spaCy and its model load on the first
``extract`` call, once per process.
"""

from ._classify import is_instruction, is_pleasantry
from ._dates import Period, TimeMention, TimeWindow, find_time_mentions, resolve_time
from ._extractor import DEFAULT_MAX_CHARS, SpacyExtractor, normalise_text
from ._types import (
    CandidateEntity,
    CandidateFact,
    Extraction,
    ExtractionError,
    Extractor,
    ExtractRequest,
    TextTooLargeError,
)

__all__ = [
    "DEFAULT_MAX_CHARS",
    "CandidateEntity",
    "CandidateFact",
    "ExtractRequest",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "Period",
    "SpacyExtractor",
    "TextTooLargeError",
    "TimeMention",
    "TimeWindow",
    "find_time_mentions",
    "is_instruction",
    "is_pleasantry",
    "normalise_text",
    "resolve_time",
]
