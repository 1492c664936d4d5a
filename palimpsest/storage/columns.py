"""The column orders of the rows the seam passes: each is a table of DESIGN.md, and a
row is a dict keyed in this order whichever store read it.

    >>> FACT_COLUMNS[:3]
    ('id', 'namespace', 'slot_id')

The Kùzu store declares its node tables with these properties in this order, and the
PostgreSQL store its tables with these columns; both build their statements and rows
from them, so one list is the shape of a row for every backend.
"""

from __future__ import annotations

PREDICATE_COLUMNS = (
    "id",
    "namespace",
    "name",
    "cardinality",
    "aliases",
    "inverse",
    "object_kind",
    "origin",
)
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
TOMBSTONE_COLUMNS = ("id", "namespace", "kind", "slot_id", "erased_at", "reason")
