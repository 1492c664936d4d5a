"""A fact's statement text, and the variants of it that are embedded at write time.

    >>> variants("Mira", "lives_in", "Sydney")
    ('Mira lives in Sydney', 'lives in Sydney')

Recall compares a question with a statement minus the names the question spoke
(without that, every fact of a named person scored alike for any question about
them): the stored vectors are of the whole statement and of the statement without
its subject. On LoCoMo's development conversation with the extractor, 99.3% of the
statements recall scored were compared without their subject, 0.5% whole, 0.1%
without their object and 0.2% some other way; those last are embedded at query time.
"""

from __future__ import annotations

from ..engine.rows import statement_key, statement_text
from .ranking import strip_names

__all__ = ["statement_key", "statement_text", "variants"]


def variants(subject: str, predicate: str, obj: str | None) -> tuple[str, str]:
    """(whole, without the subject); stripped to nothing, it is the whole statement."""
    whole = statement_text(subject, predicate, obj)
    return whole, strip_names(whole, [subject]) or whole
