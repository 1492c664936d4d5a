"""The bitemporal rules of DESIGN.md as pure functions over plain data. No I/O.

>>> from palimpsest.temporal import LogEntry, replay, value_at
"""

from ._advance import Reach, Step, advance, in_window, reach, window_of
from ._history import (
    Schedule,
    Version,
    cardinality_at,
    diff,
    materialise,
    schedule_of,
    transaction_times,
)
from ._replay import (
    Cardinality,
    LogEntry,
    Op,
    Segment,
    Start,
    believed,
    replay,
    segments_of,
    timelines,
    value_at,
)
from ._status import Status, version_status, visible, within

__all__ = [
    "Cardinality",
    "LogEntry",
    "Op",
    "Reach",
    "Schedule",
    "Segment",
    "Start",
    "Status",
    "Step",
    "Version",
    "advance",
    "believed",
    "cardinality_at",
    "diff",
    "in_window",
    "materialise",
    "reach",
    "replay",
    "schedule_of",
    "segments_of",
    "timelines",
    "transaction_times",
    "value_at",
    "version_status",
    "visible",
    "window_of",
    "within",
]
