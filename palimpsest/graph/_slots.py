"""Rows packed as JSON value lists: the journal's events and a line's starts.

    >>> values = pack_values(version_row, VERSION_FIELDS)     # [id, ..., 1717200000000000, ...]
    >>> unpack_values(values, VERSION_FIELDS, base)           # the row again

A packed row lists its fields in a fixed order, times as integer microseconds
since 1970 (`_time.epoch_us`), and leaves out what its slot's own row already
says (namespace, slot, subject, predicate, statement). orjson writes them ~6x
faster than json.dumps, and the decoded lists convert back with one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from operator import itemgetter
from typing import Any

from .._time import epoch_us, from_epoch_us
from ._columns import ASSERTION_COLUMNS, FACT_COLUMNS

_TIMES = {"valid_from", "valid_to", "recorded_at", "expired_at", "retracted_at"}

# what a slot's own row already says (namespace, slot, subject) is not repeated per row
_IMPLIED = {"namespace", "slot_id", "subject_id", "subject", "predicate", "statement"}
LOG_FIELDS = tuple(c for c in ASSERTION_COLUMNS if c not in _IMPLIED)
VERSION_FIELDS = tuple(c for c in FACT_COLUMNS if c not in _IMPLIED)


def to_us(t: datetime | None) -> int | None:
    return None if t is None else epoch_us(t)


def from_us(us: int | None) -> datetime | None:
    return None if us is None else from_epoch_us(us)


@cache
def _timed(fields: tuple[str, ...]) -> tuple[int, ...]:
    return tuple(i for i, f in enumerate(fields) if f in _TIMES)


def pack_values(row: Mapping[str, Any], fields: tuple[str, ...]) -> list[Any]:
    """The row's `fields` in order, times as microseconds."""
    try:
        values = list(itemgetter(*fields)(row))
    except KeyError:  # a row without some optional field
        values = [row.get(f) for f in fields]
    for i in _timed(fields):
        t = values[i]
        if t is not None:
            values[i] = epoch_us(t)
    return values


def unpack_values(
    values: Sequence[Any], fields: tuple[str, ...], base: Mapping[str, Any]
) -> dict[str, Any]:
    """`pack_values` undone, on top of the fields every row of the slot shares."""
    row = dict(base)
    row.update(zip(fields, values, strict=True))
    for i in _timed(fields):
        us = values[i]
        if us is not None:
            row[fields[i]] = from_epoch_us(us)
    return row
