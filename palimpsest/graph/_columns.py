"""Column orders of the node tables the write path fills (as declared in `_schema`).

    >>> FACT_COLUMNS[0]
    'id'

COPY from Arrow and the packed slot state both depend on these orders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

ENTITY_COLUMNS = ("id", "namespace", "key", "name", "type", "aliases", "created_at")
EPISODE_COLUMNS = (
    "id",
    "namespace",
    "text",
    "speaker",
    "author_kind",
    "source",
    "session",
    "reply_to",
    "occurred_at",
    "recorded_at",
    "fingerprint",
    "importance",
    "kind",
    "quarantined",
    "archived",
)
SLOT_COLUMNS = ("id", "namespace", "subject_id", "predicate", "subject")


FACT_COLUMNS = (
    "id",
    "namespace",
    "slot_id",
    "assertion_id",
    "subject_id",
    "subject",
    "predicate",
    "object_id",
    "object",
    "statement",
    "valid_from",
    "valid_to",
    "recorded_at",
    "expired_at",
    "confidence",
    "author_kind",
    "evidence",
    "quarantined",
)

ASSERTION_COLUMNS = (
    "id",
    "namespace",
    "slot_id",
    "op",
    "object_id",
    "valid_from",
    "valid_to",
    "recorded_at",
    "seq",
    "confidence",
    "author_kind",
    "evidence",
    "quarantined",
    "retracted_at",
    "retract_reason",
    "origin",
)

# A parameter (or struct field) that is NULL is typed STRING by the binder, so every
# nullable or list property is cast to its column type explicitly.
CASTS = {
    "valid_from": "TIMESTAMP",
    "valid_to": "TIMESTAMP",
    "recorded_at": "TIMESTAMP",
    "expired_at": "TIMESTAMP",
    "retracted_at": "TIMESTAMP",
    "occurred_at": "TIMESTAMP",
    "created_at": "TIMESTAMP",
    "evidence": "STRING[]",
    "aliases": "STRING[]",
    "object_id": "STRING",
    "retract_reason": "STRING",
    "source": "STRING",
    "session": "STRING",
    "reply_to": "STRING",
    "origin": "STRING",
}


def param_props(columns: Sequence[str], prefix: str = "") -> str:
    """Properties from scalar parameters `$<prefix><column>`: with these, MATCHes plan
    as primary-key scans (fields of an UNWIND-ed struct make Kùzu cross-product full
    scans instead)."""
    return ", ".join(
        f"{c}: CAST(${prefix}{c} AS {CASTS[c]})" if c in CASTS else f"{c}: ${prefix}{c}"
        for c in columns
    )


def fact_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {c: r.get(c) for c in FACT_COLUMNS}
    out["evidence"] = list(r.get("evidence") or [])
    out["quarantined"] = bool(r.get("quarantined"))
    return out


def assertion_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {c: r.get(c) for c in ASSERTION_COLUMNS}
    out["evidence"] = list(r.get("evidence") or [])
    out["quarantined"] = bool(r.get("quarantined"))
    return out
