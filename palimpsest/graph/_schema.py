"""The schema as recorded migrations; applied in order, each once, each in a transaction.

    >>> [m.version for m in MIGRATIONS][:1]
    [1]

Never edit a released migration: add the next one. Table names are
case-insensitive in Kùzu, so no node and rel table may differ only by case.
Embeddings live in their own node tables (never SET, never emptied: see
the vector-index bugs in notes/kuzu-0.11.3.md §6).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._db import Database


@dataclass(frozen=True)
class Migration:
    """Statements run in order, then `convert` (rows Cypher alone cannot rewrite), then
    `cleanup`: all in one transaction."""

    version: int
    name: str
    statements: tuple[str, ...]
    # the rows Cypher cannot rewrite; given the default vocabulary's cardinalities
    convert: Callable[[Database, Mapping[str, str]], None] | None = None
    cleanup: tuple[str, ...] = ()


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
    " subject_id STRING, predicate STRING, subject STRING)",
    # a slot's log and versions packed (graph/_slots.py): one lookup per point query.
    # Replaced by delete + insert, never SET: in-place string updates bloat the file
    # and make every checkpoint rewrite the column.
    "CREATE NODE TABLE IF NOT EXISTS SlotState(id STRING PRIMARY KEY, log STRING, versions STRING)",
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

# --- migration 2: recall ----------------------------------------------------------------
# Search text and vectors of episodes, keyed by episode id, in tables of their own:
# written once and never SET (a SET on an FTS-indexed column corrupts later COPYs and
# a vector-indexed column cannot be SET at all, notes §6.7-6.8). EpisodeText holds
# the previous turn of the session with this one (it measured far better on LoCoMo
# than the turn alone); its full-text index is created outside any transaction
# (Kùzu refuses CREATE_FTS_INDEX in one), see graph/_recall.py.
_V2 = (
    "CREATE NODE TABLE IF NOT EXISTS EpisodeText(id STRING PRIMARY KEY, namespace STRING,"
    " text STRING, prev STRING)",
    "CREATE NODE TABLE IF NOT EXISTS EpisodeEmb(id STRING PRIMARY KEY, namespace STRING,"
    " emb FLOAT[384], ctx FLOAT[384])",
)

# --- migration 3: consolidation ------------------------------------------------------
# Entity merges (reversible: the moved assertions as "old>new" pairs), contested
# one-valued claims (a bitemporal marker: recorded_at / resolved_at), near-duplicate
# episodes (the copy points at the one kept) and the reasons behind assertions that
# consolidation wrote. Written once; only the TIMESTAMP columns are ever SET.
_V3 = (
    "CREATE NODE TABLE IF NOT EXISTS EntityMerge(id STRING PRIMARY KEY, namespace STRING,"
    " winner STRING, loser STRING, keys STRING[], moved STRING[], reason STRING,"
    " merged_at TIMESTAMP, unmerged_at TIMESTAMP)",
    "CREATE NODE TABLE IF NOT EXISTS Contest(id STRING PRIMARY KEY, namespace STRING,"
    " slot_id STRING, valid_from TIMESTAMP, objects STRING[], reason STRING,"
    " recorded_at TIMESTAMP, resolved_at TIMESTAMP)",
    "CREATE NODE TABLE IF NOT EXISTS EpisodeDup(id STRING PRIMARY KEY, namespace STRING,"
    " canonical STRING, similarity DOUBLE, recorded_at TIMESTAMP)",
    "CREATE NODE TABLE IF NOT EXISTS Decision(id STRING PRIMARY KEY, namespace STRING,"
    " step STRING, reason STRING, recorded_at TIMESTAMP)",
)

# --- migration 4: reinforcement by use ---------------------------------------------------
# When recall last returned an episode and how often (graph/_use.py): ranking's recency
# and the decay step count from the later of occurred_at and the last use. A table of
# its own, so a recall never SETs `Episode`; only its TIMESTAMP / INT64 columns change.
_V4 = (
    "CREATE NODE TABLE IF NOT EXISTS EpisodeUse(id STRING PRIMARY KEY, namespace STRING,"
    " last_used_at TIMESTAMP, use_count INT64)",
)

# --- migration 5: predicate-definition history ------------------------------------------
# One row per change of a predicate's definition, with its transaction time and the
# cardinality in force before it (graph/_predicate_log.py): erase rebuilds a slot with
# the cardinality each past view had. Written once, never SET. A memory from before
# this migration has no rows: its current definitions count since always.
_V5 = (
    "CREATE NODE TABLE IF NOT EXISTS PredicateChange(id STRING PRIMARY KEY, namespace STRING,"
    " name STRING, n INT64, changed_at TIMESTAMP, cardinality STRING, previous STRING,"
    " aliases STRING[], inverse STRING, object_kind STRING, origin STRING)",
)

# --- migration 6: entity-name and fact-statement vectors ------------------------------------
# Embedded once at write time (graph/_embeddings.py), never SET, no index on them.
# EntityNameEmb is keyed by entity id. StatementEmb is keyed by namespace + a hash of
# (subject, predicate, object) as the statement shows them: every version, replay,
# reconcile and promotion of one claim shows the same statement, so it is embedded
# once however many versions carry it, and recall finds it from the text it shows.
# Besides the whole statement it keeps the statement without its subject: recall
# compares a question with the statement minus the names the question spoke
# (recall/_facts.py), and on LoCoMo that was the subject for 99% of the statements
# scored (the whole statement for 0.5%; the rest are embedded at query time). Erase
# drops a statement's row once no version in the namespace shows it any more, and an
# erased entity's name row.
_V6 = (
    "CREATE NODE TABLE IF NOT EXISTS EntityNameEmb(id STRING PRIMARY KEY, namespace STRING,"
    " emb FLOAT[384])",
    "CREATE NODE TABLE IF NOT EXISTS StatementEmb(id STRING PRIMARY KEY, namespace STRING,"
    " emb FLOAT[384], nosubj FLOAT[384])",
)

# --- migration 7: no relationships from a slot to its log and versions ---------------------
# Assertion.slot_id and Fact.slot_id say which slot a row belongs to, and the slot's packed
# state lists them all, so LOGS and HAS_VERSION only cost writes: at 1M versions a batch
# MATCHed every new row's Slot (a scan-and-join of the table), and a checkpoint rewrote
# the relationships at scattered slots. Without them (bench/README.md, session 5), per
# 5,000-assertion batch: assertions 142 -> 46 ms, versions 228 -> 125 ms, CPU 0.86x;
# the checkpoint after four batches 2.82 -> 2.43 s.
# A slot's rows are now read by primary key from the ids its packed state lists, or from
# its subject along SUBJ (graph/_store_slots.py, graph/_store_reads.py).
_V7 = (
    "DROP TABLE IF EXISTS LOGS",
    "DROP TABLE IF EXISTS HAS_VERSION",
)

# --- migration 8: a slot is one row, its packed state included --------------------------
# Slot held a slot's own columns and SlotState its packed log and versions, so a bulk
# write created two nodes (two primary-key index entries) for each slot it opened, and
# a point query sought both. SlotState now holds the slot's columns too, and a slot's
# tombstones are found by their `slot_id` column (HAS_TOMBSTONE hung them off Slot).
# Per 5,000-assertion batch at 1M versions: 30-50 ms less, a checkpoint after 12 batches
# 2.75 -> 2.5 s, 7% less WAL. Rebuilding the table costs ~11 s once at 1M versions
# (600k slots), inside the migration's transaction; the file keeps the freed pages.
_V8 = (
    "CREATE NODE TABLE IF NOT EXISTS SlotRow(id STRING PRIMARY KEY, namespace STRING,"
    " subject_id STRING, predicate STRING, subject STRING, log STRING, versions STRING)",
    # one node per MATCH, chained: a hash join (two patterns in one MATCH: a cross product)
    "MATCH (s:Slot) WITH s MATCH (x:SlotState {id: s.id}) CREATE (:SlotRow {id: s.id,"
    " namespace: s.namespace, subject_id: s.subject_id, predicate: s.predicate,"
    " subject: s.subject, log: x.log, versions: x.versions})",
    "DROP TABLE IF EXISTS HAS_TOMBSTONE",
    "DROP TABLE IF EXISTS SlotState",
    "DROP TABLE IF EXISTS Slot",
    "ALTER TABLE SlotRow RENAME TO SlotState",
)

# --- migration 9: a slot's history in an append-only journal, its timelines in lines -------
# A slot's whole log and versions were one packed value on its SlotState row, decoded and
# written again by every write: a write cost in proportion to the slot's history (x48 at
# 8,000 versions, issue 27). Now a write touches a bounded amount of state:
# - Slot: the slot's columns and the tail of its journal (graph/_journal.py): packed
#   events a write appends (an assertion, a version inserted or expired, ...); a full
#   tail moves to a SlotPage of its own and is never rewritten. Reads of a whole
#   history (history, explain, a past known_at, erase) fold the pages back.
# - Line: one timeline (the slot for `one` predicates, a (slot, object) for `many`):
#   its believed starts with their version rows, inline, or in LinePages listed by their
#   first start (graph/_lines.py). A write reads and rewrites the pages its valid-time
#   reach covers; `changed_at` is its latest change, so a point query known at or after
#   it answers from the line alone.
# The packed SlotState rows are converted (graph/_upgrade.py) and dropped.
_V9 = (
    "CREATE NODE TABLE IF NOT EXISTS Slot(id STRING PRIMARY KEY, namespace STRING,"
    " subject_id STRING, predicate STRING, subject STRING, pages INT64, tail_n INT64,"
    " tail STRING)",
    "CREATE NODE TABLE IF NOT EXISTS SlotPage(id STRING PRIMARY KEY, events STRING)",
    "CREATE NODE TABLE IF NOT EXISTS Line(id STRING PRIMARY KEY, namespace STRING,"
    " slot_id STRING, subject STRING, changed_at TIMESTAMP, entries STRING, dir STRING)",
    "CREATE NODE TABLE IF NOT EXISTS LinePage(id STRING PRIMARY KEY, entries STRING)",
)

# --- migration 10: idempotency keys, nightly leases -------------------------------------
# The first outcome of a write made with an `idempotency_key` (engine/idempotency.py), as
# JSON, stored in the write's own transaction; id = namespace \x1f key. Written once.
# Who consolidates a namespace on a night (consolidation/night.py); id = namespace \x1f
# night; only its TIMESTAMP columns and holder change.
_V10 = (
    "CREATE NODE TABLE IF NOT EXISTS IdempotencyKey(id STRING PRIMARY KEY, namespace STRING,"
    " key STRING, verb STRING, fingerprint STRING, outcome STRING, recorded_at TIMESTAMP)",
    "CREATE NODE TABLE IF NOT EXISTS NightLease(id STRING PRIMARY KEY, namespace STRING,"
    " night STRING, holder STRING, expires_at TIMESTAMP, done_at TIMESTAMP)",
)


def _convert_v9(db: Database, defaults: Mapping[str, str]) -> None:
    from ._upgrade import journal_from_packed

    journal_from_packed(db, defaults)


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "bitemporal core", _V1),
    Migration(2, "recall: episode search text and embeddings", _V2),
    Migration(3, "consolidation: merges, contests, duplicates, decisions", _V3),
    Migration(4, "reinforcement: episode uses", _V4),
    Migration(5, "predicate-definition history", _V5),
    Migration(6, "entity-name and fact-statement vectors", _V6),
    Migration(7, "no slot relationships to the log and versions", _V7),
    Migration(8, "a slot is one row with its packed state", _V8),
    Migration(
        9,
        "slot journals and line timelines",
        _V9,
        convert=_convert_v9,
        cleanup=("DROP TABLE IF EXISTS SlotState",),
    ),
    Migration(10, "idempotency keys and nightly leases", _V10),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
