"""A slot's log and versions, packed onto its `SlotState` row (graph/_schema.py).

    >>> log, versions = decode(*encode(log_rows, version_rows), slot=slot_row)

Kùzu 0.11 has no secondary indexes, and reaching a key's versions through a
relationship costs a masked scan and a hash join (~1.5 ms). Every write to a
slot already holds its whole log and version list in hand, so it also stores
them, packed, on the slot node: a point query or the next write then needs one
primary-key lookup. The `Assertion` and `Fact` nodes stay the graph (and the
assertion log stays the truth; erase rebuilds these from it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from operator import itemgetter
from typing import Any

import orjson

from ._columns import ASSERTION_COLUMNS, FACT_COLUMNS

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TIMES = {"valid_from", "valid_to", "recorded_at", "expired_at", "retracted_at"}

# what a slot's own row already says (namespace, slot, subject) is not repeated per row
_IMPLIED = {"namespace", "slot_id", "subject_id", "subject", "predicate", "statement"}
LOG_FIELDS = tuple(c for c in ASSERTION_COLUMNS if c not in _IMPLIED)
VERSION_FIELDS = tuple(c for c in FACT_COLUMNS if c not in _IMPLIED)


@cache
def _timed(fields: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(i for i, f in enumerate(fields) if f in _TIMES)


def _pack(rows: Sequence[Mapping[str, Any]], fields: Sequence[str]) -> str:
    # a bulk write packs every touched slot: one C-level fetch of all fields per row,
    # then only the time fields converted (about half the cost of a per-field loop)
    get, times = itemgetter(*fields), _timed(tuple(fields))
    out = []
    for r in rows:
        try:
            values = list(get(r))
        except KeyError:  # a row without some optional field
            values = [r.get(f) for f in fields]
        for i in times:
            t = values[i]
            if t is not None:
                d = t - _EPOCH
                values[i] = (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds
        out.append(values)
    # orjson writes the same compact UTF-8 text as json.dumps(separators=(",", ":"),
    # ensure_ascii=False), ~6x faster (a bulk write packs every slot it touches)
    return orjson.dumps(out).decode()


def _unpack(
    text: str | None, fields: Sequence[str], base: Mapping[str, Any]
) -> list[dict[str, Any]]:
    if not text:
        return []
    times = _timed(tuple(fields))
    out = []
    for values in orjson.loads(text):
        for i in times:
            us = values[i]
            if us is not None:
                values[i] = _EPOCH + timedelta(microseconds=us)
        row = dict(base)
        row.update(zip(fields, values, strict=True))
        out.append(row)
    return out


def log_ids(log: str | None) -> list[str]:
    """The assertion ids a packed log lists, in recording order (nothing else decoded).

    >>> log_ids(state["log"])   # ['fa_…', 'fa_…']
    """
    at = LOG_FIELDS.index("id")
    return [values[at] for values in orjson.loads(log)] if log else []


def encode(
    log: Sequence[Mapping[str, Any]], versions: Sequence[Mapping[str, Any]]
) -> tuple[str, str]:
    return _pack(log, LOG_FIELDS), _pack(versions, VERSION_FIELDS)


def decode(
    log: str | None, versions: str | None, *, slot: Mapping[str, Any], subject: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Rows shaped like the `Assertion` and `Fact` nodes they mirror."""
    base = {"namespace": slot["namespace"], "slot_id": slot["id"]}
    vbase = {
        **base,
        "subject_id": slot["subject_id"],
        "subject": subject,
        "predicate": slot["predicate"],
    }
    return _unpack(log, LOG_FIELDS, base), _unpack(versions, VERSION_FIELDS, vbase)
