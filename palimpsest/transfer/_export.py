"""Stored rows -> export records (plain JSON values, no namespace).

    >>> record("entity", {"id": "en_1", "namespace": "default", "key": "mira", ...})
    {'type': 'entity', 'id': 'en_1', 'key': 'mira', ...}

Each record names its fields explicitly (FIELDS), so a column added to the
schema without a decision here is not exported by accident, and the importer
checks the very same list.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ._format import FORMAT, VERSION, fmt_time

# field -> kind: s string, s? optional string, t time, t? optional time, f float,
# i int, b bool, l list of strings
FIELDS: dict[str, dict[str, str]] = {
    "predicate": {
        "name": "s",
        "cardinality": "s",
        "aliases": "l",
        "inverse": "s?",
        "object_kind": "s",
        "origin": "s",
    },
    "entity": {
        "id": "s",
        "key": "s",
        "name": "s",
        "type": "s?",
        "aliases": "l",
        "created_at": "t?",
    },
    "entity_key": {"key": "s", "entity_id": "s"},
    "episode": {
        "id": "s",
        "text": "s",
        "speaker": "s",
        "author_kind": "s",
        "source": "s?",
        "session": "s?",
        "reply_to": "s?",
        "occurred_at": "t?",
        "recorded_at": "t",
        "fingerprint": "s",
        "importance": "f",
        "kind": "s",
        "quarantined": "b",
        "archived": "b",
    },
    "slot": {"subject_id": "s", "predicate": "s", "subject": "s"},
    "assertion": {
        "id": "s",
        "subject_id": "s",
        "predicate": "s",
        "op": "s",
        "object_id": "s?",
        "valid_from": "t?",
        "valid_to": "t?",
        "recorded_at": "t",
        "seq": "i",
        "confidence": "f",
        "author_kind": "s",
        "evidence": "l",
        "quarantined": "b",
        "retracted_at": "t?",
        "retract_reason": "s?",
        "origin": "s?",
    },
    # a materialised version, restored verbatim (format 2 on): the log alone cannot say
    # which cardinality was in force when, so replaying it would rewrite past views.
    # Its slot, object and content are its assertion's, so only the times travel.
    "version": {
        "id": "s",
        "assertion_id": "s",
        "valid_from": "t?",
        "valid_to": "t?",
        "recorded_at": "t",
        "expired_at": "t?",
    },
    "tombstone": {
        "id": "s",
        "kind": "s",
        "subject_id": "s?",
        "predicate": "s?",
        "erased_at": "t",
        "reason": "s?",
    },
}


def _split_slot(row: Mapping[str, Any]) -> dict[str, Any]:
    """namespace \\x1f subject id \\x1f predicate -> the two namespace-free parts."""
    slot = row.get("slot_id")
    if not slot:
        return {"subject_id": None, "predicate": None}
    _, subject_id, predicate = slot.split("\x1f")
    return {"subject_id": subject_id, "predicate": predicate}


def record(kind: str, row: Mapping[str, Any]) -> dict[str, Any]:
    """One stored row as an export record of `kind`."""
    src = dict(row)
    if kind in ("assertion", "tombstone"):
        src.update(_split_slot(row))
    out: dict[str, Any] = {"record": kind}
    for name, typ in FIELDS[kind].items():
        v = src.get(name)
        if typ.startswith("t"):
            v = fmt_time(v)
        elif typ == "l":
            v = list(v or [])
        out[name] = v
    return out


def aux_record(table: str, row: Mapping[str, Any], columns: Mapping[str, str]) -> dict[str, Any]:
    """A row of a consolidation table; `columns` ({name: Kùzu type}) says how to encode."""
    values = {
        c: fmt_time(row.get(c)) if t == "TIMESTAMP" else row.get(c)
        for c, t in columns.items()
        if c != "namespace"
    }
    return {"record": "aux", "table": table, "row": values}


def header(
    *,
    namespace: str,
    schema_version: int,
    exported_at: datetime,
    embedder: str | None,
    counts: Mapping[str, int],
    tables: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, Any]:
    """`tables`: the column types of the `aux` tables ({table: {column: Kùzu type}})."""
    return {
        "record": "header",
        "format": FORMAT,
        "version": VERSION,
        "schema_version": schema_version,
        "namespace": namespace,
        "exported_at": fmt_time(exported_at),
        "embedder": embedder,
        "counts": dict(counts),
        "tables": {
            t: {c: k for c, k in cols.items() if c != "namespace"}
            for t, cols in (tables or {}).items()
        },
    }


def trailer(counts: Mapping[str, int]) -> dict[str, Any]:
    return {"record": "end", "counts": dict(counts)}
