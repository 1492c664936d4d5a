"""Column orders of the `Fact` and `Assertion` node tables (as declared in `_schema`).

    >>> FACT_COLUMNS[0]
    'id'

COPY from Arrow and the packed slot state both depend on these orders.
"""

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
