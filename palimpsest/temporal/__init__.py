"""The bitemporal rules of DESIGN.md as pure functions over plain data. No I/O.

>>> from palimpsest.temporal import LogEntry, replay, value_at
"""

from ._history import (
    Schedule,
    Version,
    cardinality_at,
    diff,
    materialise,
    schedule_of,
    transaction_times,
)
from ._replay import Cardinality, LogEntry, Op, Segment, believed, replay, value_at
from ._status import Status, version_status, visible

__all__ = [
    "Cardinality",
    "LogEntry",
    "Op",
    "Schedule",
    "Segment",
    "Status",
    "Version",
    "believed",
    "cardinality_at",
    "diff",
    "materialise",
    "replay",
    "schedule_of",
    "transaction_times",
    "value_at",
    "version_status",
    "visible",
]
