"""Entity names and fact statements are embedded once, at write time, and used by recall,
merge, reindex and erase (migration 6)."""

from __future__ import annotations

import random
import string
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from palimpsest import Memory
from palimpsest.recall import HashingEmbedder
from palimpsest.recall._statements import statement_key, variants

from .conftest import Clock


class Counting(HashingEmbedder):
    """The fake embedder, counting the texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts += list(texts)
        return super().embed(texts)


def _open(path: Path, clock: Clock, embedder: object = None) -> Memory:
    return Memory.open(path, clock=clock, extractor=None, embedder=embedder)  # type: ignore[arg-type]


def _names(mem: Memory) -> dict[str, str]:
    """entity name -> id, of the entities with a stored name vector."""
    mem._embed.drain()  # the worker embeds after the write returns
    ids, _ = mem._store.embeddings.names_of(mem.namespace)
    rows = mem._store.names.entities_by_ids(ids)
    return {r["name"]: r["id"] for r in rows}


def _statements(mem: Memory) -> set[str]:
    mem._embed.drain()
    return mem._store.embeddings.statement_keys_of(mem.namespace)


def _key(s: str, p: str, o: str) -> str:
    return statement_key("default", s, p, o)


def test_writes_embed_new_names_and_statements_once(tmp_path: Path, clock: Clock) -> None:
    emb = Counting()
    with _open(tmp_path / "m", clock, emb) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
        assert set(_names(m)) == {"Mira", "Sydney"}
        key = _key("Mira", "lives_in", "Sydney")
        assert _statements(m) == {key}
        whole, nosubj = m._store.embeddings.statement_vectors([key])[key]
        want = emb.embed(list(variants("Mira", "lives_in", "Sydney")))
        assert np.allclose(np.stack([whole, nosubj]), want, atol=1e-6)
        emb.texts.clear()
        # the same claim again, and an end: nothing new to embed
        clock.tick()
        m.assert_fact("Mira", "lives_in", "Sydney")
        m.end_fact("Mira", "lives_in", "Sydney")
        m._embed.drain()
        assert emb.texts == []
        m.assert_many(
            [
                {"subject": "Mira", "predicate": "likes", "object": "jazz"},
                {"subject": "user", "predicate": "knows", "object": "Mira"},
            ]
        )
        m._embed.drain()
        assert {"jazz", "user", "Mira likes jazz", "knows Mira"} <= set(emb.texts)
        assert set(_names(m)) == {"Mira", "Sydney", "jazz", "user"}
        m.import_facts(['{"subject": "Ana", "predicate": "works_at", "object": "Acme"}'])
        assert {"Ana", "Acme"} <= set(_names(m))
        assert _key("Ana", "works_at", "Acme") in _statements(m)
        assert len(_statements(m)) == 4


def test_no_embedder_writes_no_vectors_and_reindex_backfills(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    with _open(path, clock) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
        m.assert_fact("Mira", "likes", "jazz")
        assert _names(m) == {} and _statements(m) == set()
    with _open(path, clock, HashingEmbedder()) as m:
        # recall embeds what is missing meanwhile
        hits = [h for h in m.recall("what does Mira like?", k=5) if h.kind == "fact"]
        assert hits and hits[0].text == "Mira likes jazz"
        report = m.reindex()
        assert report["names_embedded"] == 3 and report["statements_embedded"] == 2
        assert set(_names(m)) == {"Mira", "Sydney", "jazz"}
        assert m.reindex()["statements_embedded"] == 0  # nothing left to fill


def test_recall_uses_stored_statement_vectors(tmp_path: Path, clock: Clock) -> None:
    emb = Counting()
    with _open(tmp_path / "m", clock, emb) as m:
        m.assert_many(
            [
                {"subject": "Mira", "predicate": "lives_in", "object": "Sydney"},
                {"subject": "Mira", "predicate": "likes", "object": "jazz"},
                {"subject": "Mira", "predicate": "works_at", "object": "Acme"},
            ]
        )
        m._embed.drain()
        emb.texts.clear()
        hits = [h for h in m.recall("where does Mira live?", k=5) if h.kind == "fact"]
        assert hits[0].text == "Mira lives in Sydney"
        # only the question (its name stripped) was embedded, no statement
        assert not any("Sydney" in t or "jazz" in t for t in emb.texts)


def test_a_lost_flush_is_recalled_and_backfilled(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between a write's commit and its vectors' write loses only vectors."""
    path = tmp_path / "m"
    with _open(path, clock, HashingEmbedder()) as m:
        monkeypatch.setattr(type(m._embed), "flush", lambda self: None)
        m.assert_fact("Mira", "lives_in", "Sydney")
        assert _statements(m) == set()
    monkeypatch.undo()
    with _open(path, clock, HashingEmbedder()) as m:
        assert m.recall("where does Mira live?", k=3)[0].text == "Mira lives in Sydney"
        assert m.reindex()["statements_embedded"] == 1
        assert _statements(m) == {_key("Mira", "lives_in", "Sydney")}


def test_erase_removes_derived_vectors(tmp_path: Path, clock: Clock) -> None:
    with _open(tmp_path / "m", clock, HashingEmbedder()) as m:
        ep = m.remember("notes about Zanzibar", speaker="user")
        a = m.assert_fact("Mira", "visited", "Zanzibar", evidence=[ep.id])
        clock.tick()
        b = m.assert_fact("Mira", "likes", "jazz")
        clock.tick()
        c = m.assert_fact("Mira", "likes", "jazz")  # the same statement twice
        m._embed.drain()
        before = set(m._store.embeddings.names_of("default")[0])
        m.erase(b.id)
        # still shown by c's version
        assert _key("Mira", "likes", "jazz") in _statements(m)
        m.erase(ep.id)  # takes the assertion resting on it alone
        assert _key("Mira", "visited", "Zanzibar") not in _statements(m)
        after = set(m._store.embeddings.names_of("default")[0])
        assert len(before - after) == 1 and m._store.embeddings.orphan_names("default") == []
        assert "Zanzibar" not in _names(m)
        m.erase(c.id)
        assert _statements(m) == set()
        # Mira keeps her (now empty) slots, so her entity and its vector stay
        assert m._store.embeddings.orphan_names("default") == [] and a.id != c.id


def test_re_embed_replaces_name_and_statement_vectors(tmp_path: Path, clock: Clock) -> None:
    path = tmp_path / "m"
    with _open(path, clock, HashingEmbedder()) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")

    class Other(HashingEmbedder):
        def identity(self) -> str:
            return "other@1"

        def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            return np.roll(super().embed(texts), 5, axis=1)

    other = Other()
    with Memory.open(path, clock=clock, extractor=None, embedder=other, reembed=True) as m:
        assert _statements(m) == set()  # the old model's vectors went with reembed
        report = m.reindex(re_embed=True)
        assert report["names_embedded"] == 2 and report["statements_embedded"] == 1
        ids, mat = m._store.embeddings.names_of("default")
        names = {r["id"]: r["name"] for r in m._store.names.entities_by_ids(ids)}
        assert np.allclose(mat, other.embed([names[i] for i in ids]), atol=1e-6)


def _filler(n: int) -> list[str]:
    rng = random.Random(3)
    out = set()
    while len(out) < n:
        words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 9))) for _ in "ab"]
        out.add(" ".join(w.capitalize() for w in words))
    return sorted(out)


def _likers(mem: Memory, names: Sequence[str]) -> None:
    mem.assert_many([{"subject": n, "predicate": "likes", "object": "jazz"} for n in names])


def _one_similar_merge(mem: Memory, names: set[str]) -> None:
    report = mem.consolidate()
    assert report.counts.get("merged") == 1, report.changes
    merge = mem.merges()[0]
    assert {merge["winner_name"], merge["loser_name"]} == names
    assert "similar" in merge["reason"]


def test_merge_compares_all_names_beyond_two_thousand(tmp_path: Path, clock: Clock) -> None:
    emb = Counting()
    with _open(tmp_path / "m", clock, emb) as m:
        names = [*_filler(2400), "Bartholomew Kowalczyk"]
        _likers(m, names)
        first = m.consolidate()
        assert first.counts.get("merged", 0) == 0
        clock.tick(days=1)
        m.assert_fact("Bartholomew Kowalczyk Jr", "likes", "chess")
        emb.texts.clear()
        # incremental: the new name against all 2,401
        _one_similar_merge(m, {"Bartholomew Kowalczyk", "Bartholomew Kowalczyk Jr"})
        # the stored vectors served: no name was embedded by the merge step
        assert not any(t in names for t in emb.texts)


def test_merge_without_watermark_and_missing_vectors(tmp_path: Path, clock: Clock) -> None:
    """A memory written with no embedder: the merge step embeds and stores the names."""
    path = tmp_path / "m"
    with _open(path, clock) as m:
        _likers(m, [*_filler(2100), "Bartholomew Kowalczyk", "Bartholomew Kowalczyk Jr"])
    with _open(path, clock, HashingEmbedder()) as m:
        report = m.consolidate()
        assert report.counts.get("merged") == 1
        assert len(_names(m)) >= 2100


@pytest.mark.models
def test_merge_with_the_real_model(tmp_path: Path, clock: Clock) -> None:
    """MiniLM over 2,101 names: written without vectors (the merge step embeds and
    stores them), then one new similar name is compared with all of them."""
    from palimpsest.recall import SentenceTransformerEmbedder

    path = tmp_path / "m"
    with _open(path, clock) as m:
        _likers(m, [*_filler(2100), "Café Rio Lisbon"])
    with _open(path, clock, SentenceTransformerEmbedder()) as m:
        assert m.consolidate().counts.get("merged", 0) == 0
        assert len(_names(m)) >= 2101
        clock.tick(days=1)
        m.assert_fact("Cafe Rio of Lisbon", "located_in", "Lisbon")
        _one_similar_merge(m, {"Café Rio Lisbon", "Cafe Rio of Lisbon"})


@pytest.mark.models
def test_remember_with_the_extractor_embeds_what_it_read(tmp_path: Path, clock: Clock) -> None:
    from palimpsest.extraction import SpacyExtractor

    emb = HashingEmbedder()
    with Memory.open(tmp_path / "m", clock=clock, extractor=SpacyExtractor(), embedder=emb) as m:
        ep = m.remember("I moved to Berlin in June 2024.", occurred_at="2024-07-02T10:00:00Z")
        assert ep.facts
        keys = {statement_key("default", "user", f.predicate, f.object) for f in ep.facts}
        assert keys <= _statements(m)
        assert "Berlin" in _names(m)


def test_similar_pairs_blocks_agree_with_one_product() -> None:
    from palimpsest.consolidation._merge import SIMILARITY, similar_pairs

    rng = np.random.default_rng(0)
    m = rng.standard_normal((600, 384)).astype(np.float32)
    m[7] = m[500] + 0.1 * m[8]
    m[300] = m[20] + 0.3 * m[21]  # about 0.96: a pair
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    full = m @ m.T
    want = {(i, j) for i, j in zip(*np.nonzero(full >= SIMILARITY), strict=True) if i < j}
    assert want == {(7, 500), (20, 300)}
    for cells in (1 << 24, 1000, 1):  # one block, many, one row each
        assert {(i, j) for i, j, _ in similar_pairs(m, cells=cells)} == want
        assert {(i, j) for i, j, _ in similar_pairs(m, [500, 20], cells=cells)} == {
            (500, 7),
            (20, 300),
        }


def test_similar_pairs_keep_each_names_best_few() -> None:
    """Names that all look alike must not yield every pair (148k such names were an
    out-of-memory kill): each row keeps its `per_row` best partners."""
    from palimpsest.consolidation._merge import similar_pairs

    rng = np.random.default_rng(1)
    base = rng.standard_normal(384).astype(np.float32)
    m = base + 0.05 * rng.standard_normal((300, 384)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)  # every pair above the threshold
    for rows in (None, list(range(0, 300, 7))):
        for cells in (1 << 24, 5000):
            pairs = similar_pairs(m, rows, cells=cells, per_row=3)
            firsts = [i for i, _, _ in pairs]
            assert max(firsts.count(i) for i in set(firsts)) <= 3
            full = m @ m.T
            for i, j, s in pairs:  # each kept pair is among that row's best
                assert i != j and abs(full[i, j] - s) < 1e-5
                others = np.delete(full[i], [i] if rows is not None else list(range(i + 1)))
                assert s >= np.sort(others)[-min(3, len(others))] - 1e-5


def test_names_differing_in_numbers_are_not_merged_by_similarity() -> None:
    from palimpsest.consolidation._merge import candidates

    ents = [
        {"id": f"e{i}", "name": name, "key": name.lower(), "type": "thing", "aliases": []}
        for i, name in enumerate(["Meeting Room 101", "Meeting Room 102", "Meeting Room 101A"])
    ]
    v = np.ones(384, np.float32)  # identical vectors: only the guard can tell them apart
    pairs = candidates(ents, vectors={e["id"]: v for e in ents})
    assert [(p.a, p.b) for p in pairs] == [("e0", "e2")]  # same number, letters aside


class Gated(HashingEmbedder):
    """The fake embedder, held at a gate: what a write costs while the model runs."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.entered = threading.Event()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if threading.current_thread() is not threading.main_thread():
            self.entered.set()
            assert self.gate.wait(30), "gate never opened"
        return super().embed(texts)


def test_writes_return_while_the_worker_embeds(tmp_path: Path, clock: Clock) -> None:
    emb = Gated()
    with _open(tmp_path / "m", clock, emb) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
        assert emb.entered.wait(30)  # the worker is in the model...
        m.assert_fact("Ana", "works_at", "Acme")  # ...and writes do not wait for it
        assert [f.object for f in m.facts("Ana", "works_at")] == ["Acme"]
        emb.gate.set()
        assert _statements(m) == {
            _key("Mira", "lives_in", "Sydney"),
            _key("Ana", "works_at", "Acme"),
        }


def test_close_stores_what_is_queued(tmp_path: Path, clock: Clock) -> None:
    emb = Gated()
    path = tmp_path / "m"
    m = _open(path, clock, emb)
    m.assert_many([{"subject": f"P{i}", "predicate": "likes", "object": "jazz"} for i in range(5)])
    assert emb.entered.wait(30)
    emb.gate.set()
    m.close()
    with _open(path, clock) as m:
        assert len(_statements(m)) == 5 and len(_names(m)) == 6


def test_an_erase_while_embedding_keeps_erased_text_out(tmp_path: Path, clock: Clock) -> None:
    emb = Gated()
    with _open(tmp_path / "m", clock, emb) as m:
        f = m.assert_fact("Mira", "visited", "Zanzibar")
        assert emb.entered.wait(30)
        m.erase(f.id)  # the batch holding its statement is being embedded now
        emb.gate.set()
        assert _statements(m) == set()
        assert "Zanzibar" not in _names(m)


class Cold(Counting):
    """A model still on disk: loaded only when something embeds a query or an episode."""

    loaded = False


def test_a_fact_write_never_loads_the_model(tmp_path: Path, clock: Clock) -> None:
    emb = Cold()
    path = tmp_path / "m"
    with _open(path, clock, emb) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
    assert emb.texts == []  # closed without loading it: left to the backfill
    with _open(path, clock, emb) as m:
        assert m.reindex()["statements_embedded"] == 1
        m.assert_fact("Ana", "works_at", "Acme")
        assert m._embed.queue.thread is None  # queued; no worker loading the model
        assert _key("Ana", "works_at", "Acme") in _statements(m)  # asked for: embedded


def test_vector_lookups_by_seek_and_by_scan_agree(tmp_path: Path, clock: Clock) -> None:
    """A few keys are index seeks, many a scan-and-join: same rows, same vectors."""
    with _open(tmp_path / "m", clock) as m:
        es = m._store.embeddings
        ids = [f"st_{i:04d}" for i in range(300)]
        rng = np.random.default_rng(2)
        whole, nosubj = (rng.standard_normal((300, 384)).astype(np.float32) for _ in "ab")
        with m._store.write():
            es.create_statements(ids, ["default"] * 300, [whole, nosubj])
        for keys in ([*ids[:5], "st_missing"], [*ids[:200], "st_missing"]):
            got = es.statement_vectors(keys)
            assert sorted(got) == sorted(keys[:-1])
            for k, (w, a) in got.items():
                i = ids.index(k)
                assert np.array_equal(w, whole[i]) and np.array_equal(a, nosubj[i])
            assert es.statement_ids(keys) == set(keys[:-1])


def test_a_bulk_import_beyond_the_queue_gets_every_vector(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What does not fit the queue is spilled to the worker's backfill, not dropped:
    after `drain` every name and statement has its vector, in passes of SPILL_PASS."""
    from palimpsest.recall import embed_worker

    monkeypatch.setattr(embed_worker, "QUEUE_MAX", 10)
    monkeypatch.setattr(embed_worker, "SPILL_PASS", 7)
    emb = Gated()
    with _open(tmp_path / "m", clock, emb) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
        assert emb.entered.wait(30)  # the worker is held in the model: the queue fills
        names = [f"P{i}" for i in range(40)]
        _likers(m, names)
        held = m._embed.status()
        assert held["queued"] == 10 and held["spilled"] == 71 and held["backfill_pending"] == 1
        emb.gate.set()
        assert set(_names(m)) == {"Mira", "Sydney", "jazz", *names}
        assert _statements(m) == {
            _key("Mira", "lives_in", "Sydney"),
            *(_key(n, "likes", "jazz") for n in names),
        }
        done = m._embed.status()
        assert done["queued"] == 0 and done["backfill_pending"] == 0
        assert done["backfilled"] >= 71 - 10  # the backfill stored what the queue could not
        assert m.reindex()["statements_embedded"] == 0  # nothing left to reindex


def test_close_with_a_backfill_pending_says_so(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """`close` finishes the queue, not the backfill: it says what it leaves to
    `palimpsest reindex`, in a warning and in `status()`, and reindex fills it."""
    from palimpsest.recall import embed_worker

    monkeypatch.setattr(embed_worker, "QUEUE_MAX", 10)
    emb = Gated()
    path = tmp_path / "m"
    m = _open(path, clock, emb)
    m.assert_fact("Mira", "lives_in", "Sydney")
    assert emb.entered.wait(30)
    _likers(m, [f"P{i}" for i in range(40)])
    closing = threading.Thread(target=m.close)
    closing.start()
    queue = m._embed.queue
    with queue.cond:  # wait until close has asked the worker to stop, then let it run
        assert queue.cond.wait_for(lambda: queue.stop, timeout=30)
    emb.gate.set()
    closing.join(60)
    assert not closing.is_alive()
    status = m._embed.status()
    assert status["queued"] == 0 and status["backfill_pending"] == 1
    assert status["backfilled"] == 0
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("still to embed in default" in w and "reindex" in w for w in warned), warned
    with _open(path, clock, HashingEmbedder()) as m:
        stored = len(_statements(m))
        assert 0 < stored < 41  # the queue's share, not the rest
        assert m.reindex()["statements_embedded"] == 41 - stored
        assert len(_statements(m)) == 41


def test_the_worker_gives_way_to_a_write_in_progress(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model waits while a write holds the memory (a bulk import's calls follow
    each other): nothing is embedded until the write lets go, then everything is."""
    import time as real_time

    from palimpsest.recall import embed_worker

    class Watched:
        monotonic = staticmethod(real_time.monotonic)
        waited = threading.Event()

        def sleep(self, s: float) -> None:
            self.waited.set()
            real_time.sleep(s)

    watched = Watched()
    monkeypatch.setattr(embed_worker, "time", watched)
    monkeypatch.setattr(embed_worker, "QUIET_S", 0.0)
    monkeypatch.setattr(embed_worker, "YIELD_MAX_S", 600.0)
    emb = Counting()
    with _open(tmp_path / "m", clock, emb) as m:
        with m._ctx.lock:  # a write in progress (the lock a write holds)
            m.assert_fact("Mira", "lives_in", "Sydney")  # hands its notes to the worker
            assert watched.waited.wait(30), "the worker never waited for the write"
            assert emb.texts == []  # nothing embedded while the write ran
        assert set(_names(m)) == {"Mira", "Sydney"}  # and all of it once it let go
        assert _statements(m) == {_key("Mira", "lives_in", "Sydney")}


def test_a_caller_draining_the_worker_does_not_wait_out_its_quiet_period(
    tmp_path: Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker waits for writes to go quiet before each model call, but not while
    someone waits on its vectors (consolidation, reindex, close): their idle time is
    no write to give way to."""
    from palimpsest.recall import embed_worker

    monkeypatch.setattr(embed_worker, "QUIET_S", 600.0)  # a quiet that never comes
    monkeypatch.setattr(embed_worker, "YIELD_MAX_S", 600.0)
    emb = Counting()
    with _open(tmp_path / "m", clock, emb) as m:
        m.assert_fact("Mira", "lives_in", "Sydney")
        drained = threading.Thread(target=m._embed.drain)
        drained.start()
        drained.join(60)
        assert not drained.is_alive()
        assert set(_names(m)) == {"Mira", "Sydney"}
