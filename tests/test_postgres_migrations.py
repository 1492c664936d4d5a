"""A memory written by an older schema keeps every answer through `palimpsest migrate`.

$ palimpsest migrate postgresql://palimpsest@127.0.0.1:5432/mem
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from palimpsest.errors import SchemaError
from palimpsest.memory import Memory
from palimpsest.storage.backends import open_store

from .conftest import Clock

# what version 1 had where migrations 2 and 3 changed it (`version_order` keyed by id alone)
AS_AT_VERSION_1 = (
    "ALTER TABLE version_order DROP CONSTRAINT version_order_pkey",
    "ALTER TABLE version_order DROP COLUMN namespace",
    "ALTER TABLE version_order ADD PRIMARY KEY (id)",
    "DROP INDEX episode_recorded_all",
    "DROP INDEX tombstone_erased_all",
    # migration 3: each namespace's clock and change sequences
    "DROP TABLE namespace_clock",
    "CREATE INDEX cons_assertion_recorded ON assertion (namespace, recorded_at)",
    "CREATE INDEX cons_entity_created ON entity (namespace, created_at)",
    "CREATE INDEX cons_episode_recorded ON episode (namespace, recorded_at)",
    "DROP INDEX tombstone_erased",
    "DROP INDEX predicate_change_ns_at",
    "DELETE FROM schema_version WHERE version > 1",
)


def answers(mem: Memory) -> Any:
    return (
        [(f.id, f.object, f.status, f.recorded_at) for f in mem.history("user")],
        [f.object for f in mem.facts("user", "likes")],
        [f.object for f in mem.facts("user", "lives_in", namespace="b")],
    )


def test_version_1_migrates_to_the_current_schema_with_its_answers(pg_url: str) -> None:
    clock = Clock()
    with Memory.open(pg_url, clock=clock, extractor=None, embedder=None) as mem:
        for city in ("Lisbon", "Porto", "Oslo"):  # versions cut back, in creation order
            mem.assert_fact("user", "lives_in", city)
            mem.assert_fact("user", "likes", city.lower())
            clock.tick()
        mem.assert_fact("user", "lives_in", "Rome", namespace="b")
        before = answers(mem)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for stmt in AS_AT_VERSION_1:
            conn.execute(stmt)
    with pytest.raises(SchemaError, match="palimpsest migrate"):
        Memory.open(pg_url, clock=clock, extractor=None, embedder=None)
    open_store(pg_url, migrate=True).close()  # what `palimpsest migrate URL` runs
    with psycopg.connect(pg_url, autocommit=True) as conn:
        keyed = conn.execute(
            "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
            " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'version_order'::regclass"
            " AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)"
        ).fetchall()
    assert [k[0] for k in keyed] == ["namespace", "id"]
    with Memory.open(pg_url, clock=clock, extractor=None, embedder=None) as mem:
        assert answers(mem) == before
        clock.tick()
        mem.assert_fact("user", "lives_in", "Paris")  # and it writes on
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Paris"]
