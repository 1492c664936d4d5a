"""After the rules: what each fact's subject and object are, and whether to trust the reading.

>>> [(f.subject_type, f.object_type, f.doubt) for f in
...  weigh([doc], facts, speaker="Ana", addressee="Bo", gate=default_gate())]  # doctest: +SKIP
[('person', 'event', None)]

Each candidate is located in its text (``_gate_features.locate``), typed
(``_kinds``), and, in a conversation turn, rated by the learned precision gate
(``_precision``). What one says of the listener is held whatever the gate says:
it waits until the listener confirms it. A document's facts are typed but not
rated: the gate learned from conversations, and a document's facts wait in
quarantine anyway.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ._gate_features import features, locate
from ._kinds import named_kinds, object_kind, subject_kind
from ._precision import PrecisionGate
from ._tokens import Doc, Token
from ._types import CandidateFact

__all__ = ["LISTENER_DOUBT", "weigh"]

LISTENER_DOUBT = "said of the listener: it waits until they confirm it"


def _find(docs: Sequence[Doc], phrase: str) -> tuple[Doc, list[Token] | None]:
    for doc in docs:
        span = locate(doc, phrase)
        if span is not None:
            return doc, span
    return docs[0], None


def weigh(
    docs: Sequence[Doc],
    facts: Sequence[CandidateFact],
    *,
    speaker: str,
    addressee: str | None,
    gate: PrecisionGate | None,
    document: bool = False,
    reference: datetime | None = None,
) -> list[CandidateFact]:
    """The facts read from ``docs`` (one turn, or a document's paragraphs), typed and,
    for a turn, rated by ``gate`` (None: no rating; the engine's confidence floor
    decides)."""
    if not facts or not docs:
        return list(facts)
    named = named_kinds(((f.predicate, f.object) for f in facts), speaker, addressee)
    out = []
    for f in facts:
        doc, span = _find(docs, f.object)
        subject_span = _find(docs, f.subject)[1]
        f = replace(
            f,
            subject_type=subject_kind(f.subject, subject_span, named, document=document),
            object_type=object_kind(f.predicate, f.object, span, named),
        )
        if gate is not None and not document:
            x = features(doc, f, span, speaker=speaker, addressee=addressee, reference=reference)
            f = gate.judge(f, x)
            if f.subject == addressee and f.subject != speaker:
                f = replace(f, doubt=LISTENER_DOUBT)
        out.append(f)
    return out
