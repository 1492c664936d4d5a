"""The PostgreSQL schema as numbered migrations, each applied once, in a transaction.

    >>> [m.version for m in migrations()]
    [1, 2, 3]

Each slice module owns the DDL of the tables it writes (`DDL`); migration 1 is the
store's core tables followed by theirs. Never edit a released migration: add the
next one. Tables mirror the Kùzu store's node tables (snake_case names, the same
column names, so rows come out as the same dicts) with the namespace leading every
primary key. Text that is sorted is `COLLATE "C"`: ORDER BY agrees with Python's
`sorted`. A memory at an older version is refused until `palimpsest migrate URL`
applies the rest; one at a newer version, until the package is upgraded.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 3

CORE = (
    "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY,"
    " name text NOT NULL, applied_at timestamptz NOT NULL)",
    'CREATE TABLE IF NOT EXISTS meta (key text COLLATE "C" PRIMARY KEY, value text)',
    # one row: the change sequences a write of the whole database moves (caches check it)
    "CREATE TABLE IF NOT EXISTS store_clock (id integer PRIMARY KEY CHECK (id = 1),"
    " change_seq bigint NOT NULL, fact_seq bigint NOT NULL)",
    "INSERT INTO store_clock VALUES (1, 0, 0) ON CONFLICT DO NOTHING",
)

# `Store.clocks` takes the latest transaction time of every table that records one, on
# every write and every read defaulting to now: each a backward index probe, not a scan
CLOCK_INDEXES = (
    "CREATE INDEX IF NOT EXISTS episode_recorded_all ON episode (recorded_at)",
    "CREATE INDEX IF NOT EXISTS tombstone_erased_all ON tombstone (erased_at)",
)

# Each namespace's own clock and change sequences (migration 3): a write moves only its
# namespace's row, and finds its namespace's latest K by (namespace, time) index probes,
# so writers of different namespaces share no row (nor, distributed by namespace, a node)
NAMESPACE_CLOCKS = (
    'CREATE TABLE IF NOT EXISTS namespace_clock (namespace text COLLATE "C" PRIMARY KEY,'
    " change_seq bigint NOT NULL, fact_seq bigint NOT NULL)",
    # (assertion's (namespace, recorded_at), (namespace, retracted_at) and (namespace, seq),
    # episode's (namespace, recorded_at) exist: migration 1)
    "CREATE INDEX IF NOT EXISTS tombstone_erased ON tombstone (namespace, erased_at)",
    "CREATE INDEX IF NOT EXISTS predicate_change_ns_at ON predicate_change (namespace, changed_at)",
    # migration 1 made these twice, under consolidation's names: every insert paid twice
    "DROP INDEX IF EXISTS cons_assertion_recorded",  # = assertion_recorded_ix
    "DROP INDEX IF EXISTS cons_entity_created",  # = entity_created
    "DROP INDEX IF EXISTS cons_episode_recorded",  # = episode_recorded
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def migrations() -> list[Migration]:
    from . import (
        _consolidation,
        _embeddings,
        _facts,
        _keys,
        _leases,
        _names,
        _predicate_log,
        _recall,
        _slots,
        _use,
        _vectors,
    )

    store = CORE + tuple(
        stmt
        for module in (
            _names,
            _slots,
            _facts,
            _recall,
            _vectors,
            _embeddings,
            _use,
            _consolidation,
            _predicate_log,
            _keys,
            _leases,
        )
        for stmt in module.DDL
    )
    namespaced = CLOCK_INDEXES + _slots.VERSION_ORDER_BY_NAMESPACE
    return [
        Migration(1, "store", store),
        Migration(2, "namespaced", namespaced),
        Migration(3, "namespace clocks", NAMESPACE_CLOCKS),
    ]
