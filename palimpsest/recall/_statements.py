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

import hashlib

from .ranking import strip_names


def statement_key(namespace: str, subject: str, predicate: str, obj: str | None) -> str:
    """The id of a statement's stored vectors: every version of one claim shows the
    same statement, so it is embedded once however many versions carry it.

    >>> statement_key("default", "Mira", "lives_in", "Sydney")[:3]
    'st_'
    """
    raw = "\x1f".join((namespace, subject, predicate, str(obj)))
    return "st_" + hashlib.sha256(raw.encode()).hexdigest()[:32]


def statement_text(subject: str, predicate: str, obj: str | None) -> str:
    """ "Mira lives in Sydney": what a fact hit shows and what is embedded."""
    return f"{subject} {predicate.replace('_', ' ')} {obj}"


def variants(subject: str, predicate: str, obj: str | None) -> tuple[str, str]:
    """(whole, without the subject); stripped to nothing, it is the whole statement."""
    whole = statement_text(subject, predicate, obj)
    return whole, strip_names(whole, [subject]) or whole
