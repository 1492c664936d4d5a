"""The schema as recorded migrations; applied in order, each once, each in a transaction.

    >>> [m.version for m in MIGRATIONS][:1]
    [1]

Never edit a released migration: add the next one. Table names are
case-insensitive in Kùzu, so no node and rel table may differ only by case.
Embeddings will live in their own node tables (never SET, never emptied: see
the vector-index bugs in notes/kuzu-0.11.3.md §6).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


_V1 = (
    "CREATE NODE TABLE IF NOT EXISTS Meta(key STRING PRIMARY KEY, value STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Migration(version INT64 PRIMARY KEY, name STRING,"
    " applied_at TIMESTAMP)",
    "CREATE NODE TABLE IF NOT EXISTS Predicate(id STRING PRIMARY KEY, namespace STRING,"
    " name STRING, cardinality STRING, aliases STRING[], inverse STRING, object_kind STRING,"
    " origin STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Entity(id STRING PRIMARY KEY, namespace STRING,"
    " key STRING, name STRING, type STRING, aliases STRING[], created_at TIMESTAMP)",
    # name and alias lookups by primary key: id = namespace \x1f normalised name
    "CREATE NODE TABLE IF NOT EXISTS EntityKey(id STRING PRIMARY KEY, entity_id STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Episode(id STRING PRIMARY KEY, namespace STRING,"
    " text STRING, speaker STRING, author_kind STRING, source STRING, session STRING,"
    " reply_to STRING, occurred_at TIMESTAMP, recorded_at TIMESTAMP, fingerprint STRING,"
    " importance DOUBLE, kind STRING, quarantined BOOLEAN, archived BOOLEAN)",
    # one node per (subject, predicate): the anchor every point query starts from
    "CREATE NODE TABLE IF NOT EXISTS Slot(id STRING PRIMARY KEY, namespace STRING,"
    " subject_id STRING, predicate STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Assertion(id STRING PRIMARY KEY, namespace STRING,"
    " slot_id STRING, op STRING, object_id STRING, valid_from TIMESTAMP, valid_to TIMESTAMP,"
    " recorded_at TIMESTAMP, seq INT64, confidence DOUBLE, author_kind STRING,"
    " evidence STRING[], quarantined BOOLEAN, retracted_at TIMESTAMP, retract_reason STRING,"
    " origin STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Fact(id STRING PRIMARY KEY, namespace STRING,"
    " slot_id STRING, assertion_id STRING, subject_id STRING, subject STRING,"
    " predicate STRING, object_id STRING, object STRING, statement STRING,"
    " valid_from TIMESTAMP, valid_to TIMESTAMP, recorded_at TIMESTAMP, expired_at TIMESTAMP,"
    " confidence DOUBLE, author_kind STRING, evidence STRING[], quarantined BOOLEAN)",
    "CREATE NODE TABLE IF NOT EXISTS Tombstone(id STRING PRIMARY KEY, namespace STRING,"
    " kind STRING, slot_id STRING, erased_at TIMESTAMP, reason STRING)",
    "CREATE REL TABLE IF NOT EXISTS LOGS(FROM Slot TO Assertion)",
    "CREATE REL TABLE IF NOT EXISTS HAS_VERSION(FROM Slot TO Fact)",
    "CREATE REL TABLE IF NOT EXISTS HAS_TOMBSTONE(FROM Slot TO Tombstone)",
    "CREATE REL TABLE IF NOT EXISTS SUBJ(FROM Entity TO Fact)",
    "CREATE REL TABLE IF NOT EXISTS OBJ(FROM Fact TO Entity)",
)

MIGRATIONS: tuple[Migration, ...] = (Migration(1, "bitemporal core", _V1),)

SCHEMA_VERSION = MIGRATIONS[-1].version
