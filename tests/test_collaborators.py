"""The collaborators behind `Memory`, each built alone with fakes for what it is handed.

Fast unit tests of their logic: no Kùzu, no model. The real parts are tested end
to end everywhere else; here a fake says what a collaborator asked of its
dependencies, so each one's contract with the others is pinned down.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from palimpsest import Memory
from palimpsest.consolidation import Run
from palimpsest.consolidation.runner import STEPS, Consolidator
from palimpsest.consolidation.steps.decay import Decay
from palimpsest.consolidation.steps.expire import Expire
from palimpsest.engine.context import Context
from palimpsest.engine.events import Events
from palimpsest.engine.materialise import SlotState
from palimpsest.engine.vocabulary import Vocabulary, default_predicates
from palimpsest.engine.writer import Writer
from palimpsest.errors import ClosedError, EmbedderMismatch, NotFound
from palimpsest.models import Predicate
from palimpsest.recall.index import RecallIndex

T0 = datetime(2030, 1, 1, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime = T0) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class FakeStore:
    """Records what is asked of it; answers from what a test put in."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or Path("/nonexistent")
        self.db = object()  # collaborators that build their own store slices get a handle
        self.calls: list[tuple[str, Any]] = []
        self.stored_predicates: list[dict[str, Any]] = []
        self.slot_ids: list[str] = []
        self.fail_write = False
        self.transactions = 0
        # one fake answers for every slice of the seam the collaborators here use
        self.names = self.slots = self.facts = self

    @contextmanager
    def write(self, namespace: str | None = None) -> Iterator[None]:
        self.transactions += 1
        yield
        if self.fail_write:
            raise RuntimeError("disk on fire")

    def shared_clocks(self) -> None:
        return None  # one process writes (the Kùzu store's answer)

    def latest_k(self, namespace: str) -> None:
        return None

    def look(self, namespace: str | None) -> int:
        return 0

    @property
    def foreign_generation(self) -> int:
        return 0

    @property
    def rollbacks(self) -> int:
        return 0

    def predicates(self, ns: str) -> list[dict[str, Any]]:
        return list(self.stored_predicates)

    def upsert_predicate(self, ns: str, row: Mapping[str, Any]) -> None:
        self.calls.append(("upsert_predicate", dict(row)))
        self.stored_predicates = [p for p in self.stored_predicates if p["name"] != row["name"]]
        self.stored_predicates.append(dict(row))

    def slots_of_predicate(self, ns: str, name: str) -> list[str]:
        return list(self.slot_ids)

    def episode(self, eid: str) -> dict[str, Any] | None:
        return None

    def slot_heads(self, ids: Any) -> dict[str, Any]:
        return {}  # nothing stored: every slot a write touches is new

    def write_facts(self, w: Any, *, heads: Any = None) -> None:
        self.calls.append(("write_facts", w))

    @contextmanager
    def writing_facts(self) -> Iterator[FakeScope]:
        scope = FakeScope()
        yield scope
        self.calls.append(("writing_facts", scope.deltas))


class FakeScope:
    def __init__(self) -> None:
        self.deltas: list[Any] = []

    def report(self, delta: Any) -> None:
        self.deltas.append(delta)


class FakeLog:
    def __init__(self) -> None:
        self.records: list[tuple[str, str, str | None, datetime]] = []

    def record(
        self, ns: str, row: Mapping[str, Any], *, previous: str | None, at: datetime
    ) -> None:
        self.records.append((ns, row["name"], previous, at))

    def history(self, ns: str, name: str) -> list[dict[str, Any]]:
        return []


def _one_valued() -> Predicate:
    return next(p for p in default_predicates() if p.cardinality == "one")


# --- Vocabulary, with a fake store, a fake predicate log and a fake recast ---------------------
def test_vocabulary_recasts_the_slots_of_a_predicate_whose_cardinality_changes() -> None:
    store, log, clock = FakeStore(), FakeLog(), Clock()
    store.slot_ids = ["default\x1fen_1\x1fx", "default\x1fen_2\x1fx"]
    recast: list[tuple[str, dict[str, str], datetime]] = []
    ctx = Context(store, clock=clock, namespace="default")  # type: ignore[arg-type]
    vocab = Vocabulary(
        ctx, log=log, recast=lambda ns, cards, k: recast.append((ns, dict(cards), k)) or set()
    )
    one = _one_valued()
    assert vocab.find("default", one.name.replace("_", " ")) == one  # a spaced name is an alias
    got = vocab.define("default", one.name, "many", aliases=["Dwells In"])
    assert got.cardinality == "many" and got.origin == "user" and "dwells in" in got.aliases
    assert recast == [("default", dict.fromkeys(store.slot_ids, "many"), T0)]
    assert log.records == [("default", one.name, "one", T0)] and ctx.last_k == T0
    assert vocab.find("default", "dwells in") == got  # reloaded: the new alias resolves
    clock.now = T0 + timedelta(hours=1)
    vocab.define("default", one.name, "many", aliases=["Dwells In"])  # the same: no change
    assert len(recast) == 1 and len(log.records) == 1


def test_vocabulary_defines_an_unknown_relation_as_many_valued_once() -> None:
    store, log = FakeStore(), FakeLog()
    ctx = Context(store, clock=Clock(), namespace="default")  # type: ignore[arg-type]
    vocab = Vocabulary(ctx, log=log, recast=lambda *a: pytest.fail("no recast") or set())
    p = vocab.resolve("default", "Plays Chess With")
    assert (p.name, p.cardinality, p.origin) == ("plays_chess_with", "many", "auto")
    assert vocab.resolve("default", "plays_chess_with") == p
    assert [name for _, name, _, _ in log.records] == ["plays_chess_with"]
    assert vocab.cardinality("default", "default\x1fen_1\x1fplays_chess_with") == "many"


# --- Writer, with a fake materialiser, entity index, vocabulary, store and clock --------------
class FakeVocab:
    def __init__(self) -> None:
        self.pred = Predicate(name="likes", cardinality="many")

    def find(self, ns: str, name: object) -> Predicate | None:
        return self.pred if name == "likes" else None

    def resolve(self, ns: str, name: object) -> Predicate:
        return self.pred

    def load(self, ns: str) -> dict[str, Predicate]:
        return {"likes": self.pred}

    def cardinality(self, ns: str, slot: str) -> str:
        return "many"


class FakeEntities:
    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def prefetch(self, ns: str, names: Sequence[str], values: Sequence[str] = ()) -> dict[str, str]:
        return {}

    def get_or_create(
        self, ns: str, text: str, *, pending: list[Any], **kw: Any
    ) -> tuple[str, str]:
        eid = f"en_{text}"
        pending.append({"id": eid, "name": text, **kw})
        self.names[eid] = text
        return eid, text

    def name_of(self, eid: str) -> str:
        return self.names[eid]


class FakeMaterialiser:
    def __init__(self) -> None:
        self.planned: list[datetime] = []

    def states(self, slots: Mapping[str, Any], new: Any = frozenset()) -> Any:
        return {s: SlotState(dict(row), [], [], new=True) for s, row in slots.items()}

    def version_row(self, a: Mapping[str, Any], *args: Any) -> dict[str, Any]:
        return {"assertion_id": a["id"]}

    def apply(self, *args: Any, **kw: Any) -> None:
        pytest.fail("an append takes the bounded path, not a whole-slot rewrite")


class FakeEmbed:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def note(self, ns: str, entities: Any, assertions: Any) -> None:
        self.seen.append(f"note {len(list(assertions))}")

    def flush(self) -> None:
        self.seen.append("flush")

    def forget(self) -> None:
        self.seen.append("forget")


def _writer(clock: Clock) -> tuple[Writer, FakeStore, FakeEmbed, Events, Context]:
    store, embed, events = FakeStore(), FakeEmbed(), Events()
    ctx = Context(store, clock=clock, namespace="default", last_k=T0, seq=7)  # type: ignore[arg-type]
    writer = Writer(
        ctx,
        FakeVocab(),  # type: ignore[arg-type]
        FakeEntities(),  # type: ignore[arg-type]
        FakeMaterialiser(),  # type: ignore[arg-type]
        embed=embed,
        events=events,
    )
    return writer, store, embed, events, ctx


def test_writer_stamps_one_transaction_time_and_hands_notes_on_after_the_commit() -> None:
    clock = Clock(T0 - timedelta(days=1))  # a clock behind the last K: K does not go back
    writer, store, embed, _, ctx = _writer(clock)
    [fact] = writer.assert_many(
        "default", [{"subject": "Mira", "predicate": "likes", "object": "jazz"}]
    )
    assert (fact.subject, fact.object, fact.recorded_at, fact.status) == (
        "Mira",
        "jazz",
        T0,
        "current",
    )
    [(name, call), (declared, [delta])] = store.calls
    assert name == "write_facts" and call.at == T0 and call.assertions[0]["seq"] == 8
    # what it wrote is reported to in-process copies: the one version, made at T0
    assert declared == "writing_facts" and delta.at == T0 and delta.expired == ()
    assert delta.inserted == ({"assertion_id": fact.id},) == tuple(call.insert)
    assert {e["name"] for e in call.entities} == {"Mira", "jazz"}
    [line] = call.lines  # the new slot's one line, holding the new version from its start
    assert [s.version for s in line.run] == [{"assertion_id": fact.id}]
    assert embed.seen == ["note 1", "flush"] and store.transactions == 1 and ctx.seq == 8


def test_writer_puts_the_clocks_back_and_drops_name_caches_when_the_write_fails() -> None:
    writer, store, embed, events, ctx = _writer(Clock(T0 + timedelta(days=1)))
    dropped: list[str] = []
    events.on_names_changed(lambda: dropped.append("names"))
    store.fail_write = True
    with pytest.raises(RuntimeError, match="disk on fire"):
        writer.assert_many("default", [{"subject": "Mira", "predicate": "likes", "object": "x"}])
    assert (ctx.last_k, ctx.seq) == (T0, 7) and dropped == ["names"] and embed.seen == []


def test_writer_refuses_evidence_it_cannot_find() -> None:
    writer, store, embed, _, _ = _writer(Clock())
    item = {"subject": "Mira", "predicate": "likes", "object": "x", "evidence": ["ep_nope"]}
    with pytest.raises(NotFound):
        writer.assert_many("default", [item])
    assert store.transactions == 0 and embed.seen == []


# --- the recall index, with a fake recall store and a fake embedder ---------------------------
class CountingEmbedder:
    dim = 384

    def __init__(self, name: str = "fake/1") -> None:
        self.name = name
        self.calls: list[list[str]] = []

    def identity(self) -> str:
        return self.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.ones((len(texts), self.dim), dtype=np.float32)


class FakeRecallStore:
    def __init__(self, identity: str | None) -> None:
        self.identity = identity
        self.dropped = False

    def predecessor(self, ns: str, session: str, before: Any) -> dict[str, Any] | None:
        return {"id": "ep_prev", "speaker": "Sam", "text": "Did you move?"}

    def embedder_identity(self) -> str | None:
        return self.identity

    def delete_all_embeddings(self) -> None:
        self.dropped = True

    def set_embedder_identity(self, identity: str) -> None:
        self.identity = identity

    def drop_fts_index(self) -> bool:
        return False  # no full-text index left by an older version


def _index(embedder: CountingEmbedder, recorded: str | None) -> tuple[RecallIndex, FakeRecallStore]:
    store = FakeStore()
    store.recall = rs = FakeRecallStore(recorded)  # type: ignore[attr-defined]
    ctx = Context(store, clock=Clock(), namespace="default")  # type: ignore[arg-type]
    index = RecallIndex(ctx, embedder)  # type: ignore[arg-type]
    return index, rs


class LengthEmbedder(CountingEmbedder):
    """Each text's vector is its length, so a test can tell which text a row came from."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[float(len(t))] * self.dim for t in texts], dtype=np.float32)


def test_recall_index_pairs_a_turn_with_the_one_before_it_and_embeds_each_text_once() -> None:
    emb = LengthEmbedder()
    index, _ = _index(emb, "fake/1")
    turn = {"id": "ep_1", "text": "I moved to Oslo", "speaker": "user", "session": "s1",
            "occurred_at": T0}  # fmt: skip
    pending = index.prepare("default", [turn], {})
    assert pending is not None
    [row] = pending.texts
    assert row["prev"] == "ep_prev" and row["text"] == "Sam: Did you move? user: I moved to Oslo"
    # the turn and the one before it, each once, in one call; the context is the unit
    # mean of their vectors (here parallel: each text's vector is its length everywhere)
    assert emb.calls == [["I moved to Oslo", "Did you move?"]]
    assert pending.emb is not None and pending.ctx is not None
    assert pending.emb[0, 0] == len("I moved to Oslo")
    assert np.allclose(pending.ctx[0], 1 / np.sqrt(emb.dim))
    # a turn with no session has no previous one: its one text is embedded once
    alone = {**turn, "id": "ep_2", "session": None}
    emb.calls.clear()
    pending = index.prepare("default", [alone], {})
    assert pending is not None and pending.emb is not None and pending.ctx is not None
    assert emb.calls == [["I moved to Oslo"]]
    assert np.allclose(pending.ctx, pending.emb / np.linalg.norm(pending.emb))
    assert index.prepare("default", [], {}) is None


def test_recall_index_refuses_another_models_vectors_unless_told_to_recompute() -> None:
    index, rs = _index(CountingEmbedder("fake/2"), "fake/1")
    with pytest.raises(EmbedderMismatch):
        index.open()
    index.indexes["default"] = object()  # type: ignore[assignment]
    index.open(reembed=True)
    assert rs.dropped and rs.identity == "fake/2" and index.indexes == {}


# --- consolidation: a step alone, and the runner with fake steps ------------------------------
class FakeConsolidationStore:
    def __init__(self, rows: list[dict[str, Any]] | None = None) -> None:
        self.rows = rows or []
        self.archived: list[str] = []
        self.watermarks: list[datetime] = []
        self.kept: list[dict[str, Any]] = []
        self.events: list[str] = []

    def keep_report(self, ns: str, finished_at: datetime, data: Any, text: str) -> None:
        self.kept.append(data)
        self.events.append("report")

    def reports(self, ns: str) -> list[dict[str, Any]]:
        return [dict(d) for d in self.kept if d["namespace"] == ns]

    def cold_candidates(self, ns: str, *, below: float, before: datetime) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["recorded_at"] <= before]

    def archive(self, ids: list[str]) -> None:
        self.archived += ids

    def ended_between(self, ns: str, lo: Any, hi: Any, *, limit: int) -> tuple[int, list[Any]]:
        rows = [{"id": "fa_1", "statement": "Mira lives in Oslo", "valid_to": T0}]
        return 3, rows

    def watermark(self, ns: str) -> datetime | None:
        return None

    def changed_slots(self, ns: str, since: datetime) -> set[str]:
        return set()

    def set_watermark(self, ns: str, mark: datetime) -> None:
        self.watermarks.append(mark)
        self.events.append("watermark")


class FakeUses:
    def __init__(self, used: dict[str, tuple[datetime, int]]) -> None:
        self.used = used
        self.flushed = 0

    def episode_uses(self, ids: Any, *, namespace: str | None = None) -> Any:
        return {i: u for i, u in self.used.items() if i in set(ids)}

    def flush(self) -> None:
        self.flushed += 1


def test_decay_archives_cold_episodes_and_keeps_the_ones_recall_used() -> None:
    old = T0 - timedelta(days=400)
    cs = FakeConsolidationStore(
        [
            {"id": "ep_cold", "importance": 0.1, "recorded_at": old},
            {"id": "ep_used", "importance": 0.1, "recorded_at": old},
            {"id": "ep_new", "importance": 0.1, "recorded_at": T0},
        ]
    )
    uses = FakeUses({"ep_used": (T0 - timedelta(days=1), 4)})
    run = Run("default", T0, since=None, dry_run=False)
    Decay(FakeStore(), cs, uses).run(run)  # type: ignore[arg-type]
    assert cs.archived == ["ep_cold"]
    assert [(c.action, c.targets) for c in run.changes] == [
        ("archived", ["ep_cold"]),
        ("reinforced", ["ep_used"]),
    ]
    dry = FakeConsolidationStore(cs.rows)
    Decay(FakeStore(), dry, uses).run(Run("default", T0, since=None, dry_run=True))  # type: ignore[arg-type]
    assert dry.archived == []


def test_expire_lists_what_ended_and_counts_what_it_did_not_read() -> None:
    run = Run("default", T0, since=None, dry_run=False)
    Expire(FakeConsolidationStore()).run(run)  # type: ignore[arg-type]
    assert run.counts == {"ended": 3} and run.omitted == {"ended": 2}
    assert run.changes[0].reason.startswith("Mira lives in Oslo: its window closed")


class RecordingStep:
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def run(self, run: Run) -> None:
        run.checkpoint(f"inside {self.name}")
        self.log.append(self.name)


class NoIndex:
    def check(self, run: Run) -> None:
        return None


class Drains:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def drain(self) -> None:
        self.log.append("drain")


def test_the_runner_runs_the_steps_in_order_then_keeps_the_report_then_the_watermark(
    tmp_path: Path,
) -> None:
    log: list[str] = []
    store, cs, uses = FakeStore(tmp_path), FakeConsolidationStore(), FakeUses({})
    ctx = Context(store, clock=Clock(), namespace="default")  # type: ignore[arg-type]
    steps = {name: RecordingStep(name, log) for name in STEPS[:-1]}
    runner = Consolidator(
        ctx,
        cs,
        steps=steps,
        index=NoIndex(),
        uses=uses,
        embed=Drains(log),  # type: ignore[arg-type]
    )
    runner.hook = lambda point: log.append(f"hook {point}")
    report = runner.consolidate("default")
    assert log[0] == "drain" and uses.flushed == 1
    assert log[1:4] == ["hook dedupe", "hook inside dedupe", "dedupe"]
    assert [x for x in log if x in STEPS] == list(STEPS[:-1])
    assert log[-2:] == ["hook index", "hook watermark"] and cs.watermarks == [T0]
    assert [r.started_at for r in runner.reports("default")] == [report.started_at]
    assert cs.events == ["report", "watermark"]  # a committed run always has its report
    with pytest.raises(ValueError):
        Consolidator(ctx, cs, steps={}, index=NoIndex(), uses=uses, embed=Drains(log))  # type: ignore[arg-type]


# --- the events, as the real memory wires them ----------------------------------------------
def test_every_cache_a_write_invalidates_is_told_through_the_events(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", embedder=None, extractor=None) as mem:
        seen: list[Any] = []
        mem._events.on_names_changed(lambda: seen.append("names"))
        mem._events.on_erased(lambda ns, ids: seen.append(("erased", ns, list(ids))))
        fact = mem.assert_fact("Mira", "lives_in", "Oslo")
        assert seen == []  # an assertion changes no cached row
        ep = mem.remember("I moved to Oslo.")
        mem.erase(fact.id)
        mem.erase(ep.id)
        assert seen == [("erased", "default", []), "names", ("erased", "default", [ep.id]), "names"]
        lines = list(mem.export_lines())
    with Memory.open(tmp_path / "other", embedder=None, extractor=None) as other:
        restored: list[str] = []
        other._events.on_restored(restored.append)
        other._events.on_names_changed(lambda: restored.append("names"))
        other.restore(lines, namespace="copy")
        assert restored == ["names", "copy"]
    with pytest.raises(ClosedError):
        mem.facts()


class SharedClocks(FakeStore):
    """A store several processes write: its clocks as the others left them."""

    def __init__(self) -> None:
        super().__init__()
        self.shared: tuple[datetime | None, int] = (None, 0)

    def shared_clocks(self) -> tuple[datetime | None, int]:  # type: ignore[override]
        return self.shared


def test_a_transaction_time_comes_strictly_after_another_processes() -> None:
    """A clock behind (or equal to) another process's K stamps one microsecond after it:
    two processes never share a K, so neither's version is superseded at its own K."""
    store, clock = SharedClocks(), Clock(T0 - timedelta(hours=1))
    ctx = Context(store, clock=clock, namespace="default")  # type: ignore[arg-type]
    store.shared = (T0, 5)
    assert ctx.tick() == T0 + timedelta(microseconds=1) and ctx.next_seq() == 6
    store.shared = (ctx.last_k, 6)  # its own write is the latest; the clock still behind
    assert ctx.tick() == T0 + timedelta(microseconds=2)
    clock.now = T0 + timedelta(seconds=1)  # a clock ahead of everyone's K is used as read
    store.shared = (T0 + timedelta(microseconds=3), 9)
    assert ctx.tick() == clock.now and ctx.next_seq() == 10


def test_a_clock_behind_its_own_last_k_stamps_the_next_microsecond() -> None:
    """A clock stepped back (or behind another worker's K it already followed) cannot say
    time passed: each transaction still gets a K of its own. A clock that reads the last
    K itself is the same moment (a frozen clock: one K)."""
    clock = Clock(T0)
    ctx = Context(FakeStore(), clock=clock, namespace="default")  # type: ignore[arg-type]
    assert ctx.tick() == T0 and ctx.tick() == T0  # frozen: the same moment
    clock.now = T0 - timedelta(seconds=5)  # stepped back
    step = timedelta(microseconds=1)
    assert [ctx.tick() for _ in range(3)] == [T0 + step, T0 + 2 * step, T0 + 3 * step]
    saved = ctx.saved()
    ctx.tick()
    ctx.restore(saved)  # that transaction rolled back: the next K is still after ours
    assert ctx.tick() == T0 + 4 * step
