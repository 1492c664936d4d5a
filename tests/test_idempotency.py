"""Idempotent writes: a retry with the same key returns the first outcome and writes
nothing twice; the same key with another request is refused; a failed write keeps no key.
"""

from __future__ import annotations

import pytest

from palimpsest import Memory
from palimpsest.errors import IdempotencyKeyReused, NotFound, ValidationError

T1, T2 = "2024-01-01T00:00:00Z", "2025-01-01T00:00:00Z"


def test_a_replayed_assert_returns_the_first_fact_and_writes_nothing(mem: Memory) -> None:
    first = mem.assert_fact("user", "lives_in", "Lisbon", valid_from=T1, idempotency_key="req-1")
    again = mem.assert_fact("user", "lives_in", "Lisbon", valid_from=T1, idempotency_key="req-1")
    assert again == first
    assert [f.id for f in mem.history("user", "lives_in")] == [first.id]
    # the key replays; a new key is a new write
    mem.assert_fact("user", "lives_in", "Porto", valid_from=T2, idempotency_key="req-2")
    assert len(mem.history("user", "lives_in")) == 2


def test_the_same_key_for_another_request_is_refused(mem: Memory) -> None:
    mem.assert_fact("user", "lives_in", "Lisbon", idempotency_key="req-1")
    with pytest.raises(IdempotencyKeyReused) as e:
        mem.assert_fact("user", "lives_in", "Porto", idempotency_key="req-1")
    assert e.value.code == "idempotency_key_reused"
    with pytest.raises(IdempotencyKeyReused):
        mem.end_fact("user", "lives_in", "Lisbon", idempotency_key="req-1")
    assert [f.object for f in mem.facts("user", "lives_in")] == ["Lisbon"]


def test_keys_belong_to_a_namespace(mem: Memory) -> None:
    a = mem.assert_fact("user", "likes", "jazz", idempotency_key="k", namespace="a")
    b = mem.assert_fact("user", "likes", "jazz", idempotency_key="k", namespace="b")
    assert a.id != b.id
    assert len(mem.history("user", "likes", namespace="b")) == 1


def test_a_failed_write_keeps_no_key(mem: Memory) -> None:
    mem.define_predicate("mentor", cardinality="one")
    with pytest.raises(NotFound):
        mem.retract("fa_0000", reason="no such fact", idempotency_key="k")
    # the key is free: the next request with it runs
    fact = mem.assert_fact("user", "mentor", "Ada", idempotency_key="k")
    assert mem.assert_fact("user", "mentor", "Ada", idempotency_key="k") == fact


def test_batches_episodes_retractions_replay(mem: Memory) -> None:
    items = [
        {"subject": "user", "predicate": "likes", "object": o} for o in ("jazz", "tea", "chess")
    ]
    facts = mem.assert_many(items, idempotency_key="batch-1")
    assert mem.assert_many(items, idempotency_key="batch-1") == facts
    assert len(mem.facts("user", "likes")) == 3
    ep = mem.remember("We met at the harbour.", idempotency_key="ep-1")
    assert mem.remember("We met at the harbour.", idempotency_key="ep-1") == ep
    assert mem.stats().episodes == 1
    r = mem.retract(facts[0].id, reason="wrong", idempotency_key="r-1")
    assert mem.retract(facts[0].id, reason="wrong", idempotency_key="r-1") == r
    assert len(mem.facts("user", "likes")) == 2


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there"])
def test_a_bad_key_is_refused_and_nothing_is_written(mem: Memory, key: str) -> None:
    with pytest.raises(ValidationError) as e:
        mem.assert_fact("user", "likes", "jazz", idempotency_key=key)
    assert e.value.details.get("field") == "idempotency_key"
    assert mem.facts("user", "likes") == []
