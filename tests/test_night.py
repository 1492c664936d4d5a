"""The nightly run once per namespace and night, across every process on one store:
claimed by lease, skipped when done or held, taken over when its holder dies half way.
"""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.errors import ConsolidationTaken, LeaseLost

from .conftest import Clock

NIGHT = "2030-01-01"


def fill(mem: Memory, namespaces: tuple[str, ...] = ("default",)) -> None:
    for ns in namespaces:
        mem.assert_fact("user", "lives_in", "Lisbon", namespace=ns)
        mem.assert_fact(
            "user", "likes", "jazz", author_kind="agent", quarantined=True, namespace=ns
        )


def test_a_night_runs_once_and_the_next_night_again(mem: Memory) -> None:
    fill(mem)
    first = mem.consolidate(night=NIGHT, holder="a")
    assert first.namespace == "default"
    with pytest.raises(ConsolidationTaken) as e:
        mem.consolidate(night=NIGHT, holder="b")
    assert e.value.details["state"] == "done"
    with pytest.raises(ConsolidationTaken):
        mem.consolidate(night=NIGHT, holder="a")  # done is done, for its holder too
    mem.consolidate(night="2030-01-02", holder="b")
    assert len(mem.consolidation_reports()) == 2


def test_a_held_night_is_skipped_until_its_lease_runs_out(mem: Memory, clock: Clock) -> None:
    fill(mem)
    leases = mem._store.leases
    now = clock()
    assert leases.claim("default", NIGHT, "dead", now, now + timedelta(minutes=15)) == "claimed"
    with pytest.raises(ConsolidationTaken) as e:
        mem.consolidate(night=NIGHT, holder="b")
    assert e.value.details["state"] == "held"
    clock.tick(minutes=16)  # the holder never renewed: its lease ran out
    mem.consolidate(night=NIGHT, holder="b")
    assert not leases.renew("default", NIGHT, "dead", clock() + timedelta(minutes=15))
    assert not leases.finish("default", NIGHT, "dead", clock())
    assert len(mem.consolidation_reports()) == 1


def test_a_run_killed_half_way_is_redone_by_the_next_claimant(mem: Memory, clock: Clock) -> None:
    fill(mem)

    class Killed(BaseException):
        pass

    def die(step: str) -> None:
        if step == "promote":
            raise Killed

    mem._consolidation.hook = die
    with pytest.raises(Killed):
        mem.consolidate(night=NIGHT, holder="a")
    mem._consolidation.hook = lambda step: None
    assert mem.consolidation_reports() == []  # no report, no watermark
    with pytest.raises(ConsolidationTaken):
        mem.consolidate(night=NIGHT, holder="b")  # still a's, until the lease runs out
    clock.tick(minutes=16)
    report = mem.consolidate(night=NIGHT, holder="b")
    assert [r.started_at for r in mem.consolidation_reports()] == [report.started_at]


def test_a_holder_whose_lease_was_taken_over_stops(mem: Memory, clock: Clock) -> None:
    fill(mem)
    leases = mem._store.leases

    def steal(step: str) -> None:
        if step == "reconcile":
            clock.tick(minutes=16)
            assert leases.claim("default", NIGHT, "thief", clock(), clock() + timedelta(hours=1))

    mem._consolidation.hook = steal
    with pytest.raises(LeaseLost):
        mem.consolidate(night=NIGHT, holder="a")
    assert mem.consolidation_reports() == []


def test_many_workers_on_one_database_run_each_namespace_once(pg_url: str, tmp_path: Path) -> None:
    """Four memories open on one PostgreSQL database (as four servers would be), each
    running the night over every namespace at once: one report per namespace."""
    namespaces = ("a", "b", "c", "d", "e")
    with Memory.open(pg_url, extractor=None, embedder=None) as m:
        fill(m, namespaces)
    mems = [Memory.open(pg_url, extractor=None, embedder=None) for _ in range(4)]
    ran: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        for ns in namespaces:
            try:
                mems[i].consolidate(namespace=ns, night=NIGHT, holder=f"w{i}")
                ran.append((i, ns))
            except ConsolidationTaken:
                pass
            except BaseException as e:
                errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        assert sorted(ns for _, ns in ran) == sorted(namespaces)
        for ns in namespaces:
            assert len(mems[0].consolidation_reports(namespace=ns)) == 1
    finally:
        for m in mems:
            m.close()
