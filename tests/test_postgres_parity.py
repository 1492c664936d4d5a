"""One workload, two stores, the same answers (issue 28).

    >>> kuzu, pg = _observe(tmp_path / "mem"), _observe(pg_url)   # what test_parity does
    >>> assert kuzu == pg

A fixed-clock workload (asserts with supersession, retractions, ends, `remember` read by
the real spaCy extractor and embedded by the default MiniLM, consolidation, two
namespaces) runs on the embedded Kùzu store and on PostgreSQL; everything a user can read
back must be the same: `facts` at many (valid, known) points, `history`, `snapshot`,
`entities`, `stats`, recall's top 5 (scores to 1e-6) and consolidation's reports.

Ids the engine draws at random (entities, assertions, versions, merges) differ per run:
they are compared by what they name (`Labels`); episode ids are content hashes and stay.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.models import Fact

from .conftest import Clock

pytestmark = pytest.mark.models

NAMESPACES = ("default", "work")
VALID = [datetime(y, m, 1, tzinfo=UTC) for y in range(2022, 2027) for m in (1, 4, 7, 10)]
QUERIES = (
    "where does the user live?",
    "when is my sister coming to visit?",
    "who does the user work for?",
    "what database does the team use?",
    "jazz concert",
)
RANDOM_ID = re.compile(r"^(en|fa|fv|mg)_[0-9a-f]{32}$")


def _workload(mem: Memory, clock: Clock) -> list[datetime]:
    """The writes, each at its own transaction time; returns those times (the known-at
    points the reads are compared at)."""
    ks: list[datetime] = []

    def tick() -> None:
        ks.append(clock.tick(minutes=7))

    # the user's moves: supersession on a one-valued predicate, an end, a retraction
    tick()
    mem.assert_fact("user", "lives_in", "Melbourne", valid_from="2022-03-01T00:00:00Z")
    tick()
    sydney = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    tick()
    mem.end_fact("user", "lives_in", "Sydney", at="2025-02-01T00:00:00Z")
    tick()
    mem.assert_fact("user", "lives_in", "Perth", valid_from="2025-02-01T00:00:00Z")
    tick()
    mem.retract(sydney.id, reason="a typo: it was Brisbane")
    tick()
    mem.assert_fact(
        "user",
        "lives_in",
        "Brisbane",
        valid_from="2024-06-01T00:00:00Z",
        valid_to="2025-02-01T00:00:00Z",
    )
    # many-valued: likes, one retracted
    tick()
    jazz = mem.assert_fact("user", "likes", "jazz", valid_from=None)
    tea = mem.assert_fact("user", "likes", "tea", valid_from="2023-01-01T00:00:00Z")
    tick()
    mem.retract(tea.id)
    tick()
    mem.end_fact("user", "likes", "jazz", at="2026-01-01T00:00:00Z")
    # the real extractor reads what is remembered
    tick()
    mem.remember(
        "I work at Acme as a data engineer.", occurred_at="2023-05-02T09:00:00Z", session="s1"
    )
    tick()
    mem.remember(
        "My sister Ana arrives on Friday, I booked the Thai place for dinner.",
        occurred_at="2024-07-01T10:00:00Z",
        session="s2",
    )
    tick()
    mem.remember("I moved to Hobart last month.", occurred_at="2026-03-10T10:00:00Z", session="s3")
    tick()
    mem.remember(
        "Mira says she adores jazz and plays the cello.",
        speaker="Mira",
        author_kind="third_party",
        occurred_at="2024-02-01T10:00:00Z",
        session="s2",
    )
    # a tool's claim, then a third party's: consolidation promotes the corroborated one
    tick()
    ep = mem.remember("Mira lives in Berlin.", speaker="search", author_kind="tool", session="s4")
    mem.assert_fact(
        "Mira",
        "lives_in",
        "Berlin",
        author_kind="tool",
        valid_from="2024-01-01T00:00:00Z",
        evidence=[ep.id],
    )
    tick()
    mem.consolidate()
    tick()
    ep = mem.remember(
        "Mira moved to Berlin last year.", speaker="Sam", author_kind="third_party", session="s5"
    )
    mem.assert_fact(
        "Mira",
        "lives_in",
        "Berlin",
        author_kind="third_party",
        valid_from="2024-01-01T00:00:00Z",
        evidence=[ep.id],
    )
    tick()
    mem.consolidate()
    # the second namespace: the same names, other facts
    tick()
    mem.assert_fact("team", "uses", "Kuzu", valid_from="2023-01-01T00:00:00Z", namespace="work")
    tick()
    mem.assert_fact(
        "team", "uses", "PostgreSQL", valid_from="2026-01-01T00:00:00Z", namespace="work"
    )
    mem.assert_fact("user", "works_at", "Acme", valid_from="2021-01-01T00:00:00Z", namespace="work")
    tick()
    mem.remember(
        "The team moved the graph store to PostgreSQL in January.",
        occurred_at="2026-02-01T10:00:00Z",
        session="w1",
        namespace="work",
    )
    tick()
    mem.end_fact("team", "uses", "Kuzu", at="2026-01-01T00:00:00Z", namespace="work")
    tick()
    mem.consolidate(namespace="work")
    del jazz
    return ks


class Labels:
    """What each random id names, read from the memory itself: an entity by its key, an
    assertion by its content and transaction time, a version by that and its windows."""

    def __init__(self, mem: Memory) -> None:
        self.names: dict[str, tuple[Any, ...]] = {}
        for ns in NAMESPACES:
            for e in mem.entities(namespace=ns):
                self.names[e.id] = ("entity", ns, e.key)
            for e in mem.entities(namespace=ns):
                for f in mem.history(e.name, namespace=ns):
                    self._fact(f)

    def _fact(self, f: Fact) -> None:
        what = ("assertion", f.namespace, f.subject, f.predicate, f.object, f.op)
        self.names.setdefault(f.id, (*what, f.recorded_at.isoformat()))
        if f.version_id is not None:
            times = (f.valid_from, f.valid_to, f.recorded_at, f.expired_at)
            self.names[f.version_id] = ("version", *what, *(str(t) for t in times))

    def __call__(self, value: Any) -> Any:
        """`value` (a model_dump) with every random id replaced by what it names."""
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self(v) for v in value]
        if isinstance(value, str) and RANDOM_ID.match(value):
            return self.names.get(value, f"<{value[:2]} not named by the memory>")
        return value


def _dump(models: Any) -> Any:
    if isinstance(models, list):
        return [_dump(m) for m in models]
    return models.model_dump(mode="json")


def _hits(mem: Memory, query: str, **at: Any) -> list[dict[str, Any]]:
    return [h.model_dump(mode="json") for h in mem.recall(query, k=5, **at)]


def _observe(location: str | Path) -> dict[str, Any]:
    """Run the workload on a new memory at `location`; everything read back."""
    import palimpsest._ids as ids

    ids._ids.seed(28)  # the same draws on each store: ties broken by id break alike
    clock = Clock(datetime(2030, 1, 1, tzinfo=UTC))
    out: dict[str, Any] = {}
    with Memory.open(location, clock=clock) as mem:
        ks = _workload(mem, clock)
        mem._embed.drain()  # the statement vectors recall reads, written after each write
        label = Labels(mem)
        for ns in NAMESPACES:
            names = sorted(e.name for e in mem.entities(namespace=ns))
            out[ns, "entities"] = label(_dump(mem.entities(namespace=ns)))
            out[ns, "stats"] = mem.stats(namespace=ns).model_dump(mode="json")
            for name in names:
                out[ns, "history", name] = label(_dump(mem.history(name, namespace=ns)))
            for k in [*ks[::2], ks[-1]]:
                for v in VALID:
                    for q in (False, True):
                        got = mem.facts(valid_at=v, known_at=k, include_quarantined=q, namespace=ns)
                        out[ns, "facts", v, k, q] = label(_dump(got))
            for k in (ks[4], ks[len(ks) // 2], ks[-1]):
                for v in VALID[::3]:
                    snap = mem.snapshot(valid_at=v, known_at=k, namespace=ns)
                    out[ns, "snapshot", v, k] = label(snap.model_dump(mode="json"))
            out[ns, "reports"] = label(_dump(mem.consolidation_reports(namespace=ns)))
            for query in QUERIES:
                for at in ({}, {"valid_at": VALID[6], "known_at": ks[len(ks) // 2]}):
                    hits = _hits(mem, query, namespace=ns, **at)
                    out[ns, "recall", query, str(at)] = label(hits)
        # a last consolidation, read back as its report says it
        clock.tick(days=1)
        out["last report"] = label(mem.consolidate(full=True).model_dump(mode="json"))
    return out


def _scores(observed: dict[str, Any]) -> Iterator[tuple[Any, list[float]]]:
    """Recall's scores, taken out of `observed` (compared to 1e-6, not bit for bit)."""
    for key, value in observed.items():
        if "recall" in key:
            scores = []
            for hit in value:
                scores.append(hit.pop("score"))
                scores.extend(hit.pop("channels").values())
            yield key, scores


@pytest.fixture(scope="module")
def on_kuzu(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _observe(tmp_path_factory.mktemp("parity") / "mem")


@pytest.fixture(scope="module")
def on_pg(request: pytest.FixtureRequest) -> dict[str, Any]:
    return _observe(request.getfixturevalue("postgres").create_database("parity"))


def test_the_workload_reads_something(on_kuzu: dict[str, Any]) -> None:
    """The comparison compares something: the workload left what it meant to."""
    kuzu = on_kuzu
    assert {f["object"] for f in kuzu["default", "history", "user"]} >= {
        "Melbourne",
        "Sydney",
        "Perth",
        "Brisbane",
        "jazz",
        "tea",
        "Hobart",
    }
    assert any(r["counts"].get("promoted") for r in kuzu["default", "reports"])
    assert all(kuzu["default", "recall", q, "{}"] for q in QUERIES[:2])
    assert kuzu["work", "stats"]["assertions"] >= 4
    labels = [str(v) for v in kuzu.values()]
    assert not any("not named by the memory" in s for s in labels)


def test_the_stores_answer_alike(on_kuzu: dict[str, Any], on_pg: dict[str, Any]) -> None:
    kuzu, pg = copy.deepcopy(on_kuzu), copy.deepcopy(on_pg)  # scores are taken out
    kuzu_scores, pg_scores = dict(_scores(kuzu)), dict(_scores(pg))
    assert kuzu.keys() == pg.keys()
    differ = [key for key in kuzu if kuzu[key] != pg[key]]
    for key in differ[:3]:  # the first few, in full, for whoever reads the failure
        assert pg[key] == kuzu[key], key
    assert differ == []
    for key, scores in kuzu_scores.items():
        assert pg_scores[key] == pytest.approx(scores, abs=1e-6), key
