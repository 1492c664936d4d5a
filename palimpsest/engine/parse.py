"""One assertion as a caller gives it (an `assert_many` item), validated at the boundary.

    >>> parse_assertion(vocab, "default", 0, {"subject": "user", "predicate": "likes",
    ...                                       "object": "jazz"})
    {'op': 'assert', 'subject': 'user', 'predicate': 'likes', 'object': 'jazz', ...}

Nothing is stored or resolved here beyond the predicate's name (looked up, not
defined: an unknown relation is defined when the write happens). A bad item
raises a `ValidationError` naming its index; nothing of its batch is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .. import _names as names
from .._time import opt_utc
from ..errors import InvalidWindow, ValidationError
from ..models import Predicate
from .rows import AUTHOR_KINDS, TRUSTED, UNSET

_KEYS = frozenset(
    {
        "subject",
        "predicate",
        "object",
        "valid_from",
        "valid_to",
        "confidence",
        "author_kind",
        "evidence",
        "quarantined",
        "occurred_at",
        "op",
        "at",
    }
)


class Predicates(Protocol):
    """What parsing needs of the vocabulary (`Vocabulary`)."""

    def find(self, ns: str, name: object) -> Predicate | None: ...


def parse_assertion(
    vocab: Predicates,
    ns: str,
    index: int,
    item: Mapping[str, Any],
    seen: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One item of `assert_many` (or the keywords of `assert_fact`), validated.

    `seen` caches the predicate names already resolved in this batch."""
    if not isinstance(item, Mapping):
        raise ValidationError(f"item {index}: expected a mapping", index=index)
    extra = set(item) - _KEYS
    if extra:
        raise ValidationError(f"item {index}: unknown keys {sorted(extra)}", index=index)
    op = item.get("op", "assert")
    if op not in ("assert", "end"):
        raise ValidationError(f"item {index}: op must be 'assert' or 'end'", index=index)
    subject = names.clean_name(item.get("subject"), field="subject")
    raw_pred = item.get("predicate")
    pred_name = seen.get(raw_pred) if seen is not None and isinstance(raw_pred, str) else None
    if pred_name is None:
        pred = vocab.find(ns, raw_pred)
        pred_name = pred.name if pred else names.predicate_key(raw_pred)
        if seen is not None and isinstance(raw_pred, str):
            seen[raw_pred] = pred_name
    obj = item.get("object")
    if op == "assert" or obj is not None:
        kind = vocab.find(ns, pred_name)
        obj = names.clean_object(obj, kind.object_kind if kind is not None else "entity")
    author = item.get("author_kind", "user")
    if author not in AUTHOR_KINDS:
        raise ValidationError(f"author_kind: one of {', '.join(AUTHOR_KINDS)}", index=index)
    conf = item.get("confidence", 1.0)
    if isinstance(conf, bool) or not isinstance(conf, int | float) or not 0.0 <= conf <= 1.0:
        raise ValidationError("confidence: a number in [0, 1]", index=index)
    evidence = item.get("evidence") or ()
    if isinstance(evidence, str) or not all(isinstance(e, str) for e in evidence):
        raise ValidationError("evidence: a list of episode ids", index=index)
    ref = opt_utc(item.get("occurred_at"), name="occurred_at")
    start_raw = item.get("at", UNSET) if op == "end" else UNSET
    if start_raw is UNSET:
        start_raw = item.get("valid_from", UNSET)
    start = UNSET if start_raw is UNSET else opt_utc(start_raw, name="valid_from")
    end = opt_utc(item.get("valid_to"), name="valid_to") if op == "assert" else None
    if op == "end" and start is None:
        raise InvalidWindow("at: an end needs a time ('since always' ends nothing)")
    if end is not None and start not in (UNSET, None) and end <= start:
        raise InvalidWindow(
            f"item {index}: valid_to {end.isoformat()} is not after valid_from {start.isoformat()}",
            index=index,
        )
    quarantined = item.get("quarantined")
    if quarantined is None:
        quarantined = author not in TRUSTED
    return {
        "op": op,
        "subject": subject,
        "predicate": pred_name,
        "object": obj,
        "valid_from": start,
        "valid_to": end,
        "reference": ref,
        "confidence": float(conf),
        "author_kind": author,
        "evidence": list(dict.fromkeys(evidence)),
        "quarantined": bool(quarantined),
    }
