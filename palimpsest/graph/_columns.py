"""Column orders of the node tables the write path fills (as declared in `_schema`).

    >>> FACT_COLUMNS[0]
    'id'

COPY from Arrow and the packed slot state both depend on these orders; they are the
seam's row shapes (`storage/columns.py`), shared with every other backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..storage.columns import (
    ASSERTION_COLUMNS,
    ENTITY_COLUMNS,
    EPISODE_COLUMNS,
    FACT_COLUMNS,
    SLOT_COLUMNS,
)

__all__ = [
    "ASSERTION_COLUMNS",
    "CASTS",
    "ENTITY_COLUMNS",
    "EPISODE_COLUMNS",
    "FACT_COLUMNS",
    "SLOT_COLUMNS",
    "assertion_row",
    "fact_row",
    "param_props",
]

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
