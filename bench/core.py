"""Core engine benchmark: bulk load, single asserts, as-of point queries, file size, open time.

>>> # python bench/core.py --quick                       # 10k versions only (a smoke run)
>>> # python bench/core.py                               # 10k, 100k and 1M versions
>>> # python bench/core.py --sizes 10000,100000 --out /tmp/x.json

One database is grown through the public bulk path (`Memory.assert_many`, calls of
`--batch` items, by default the import's 20,000; a controlled transaction clock
advancing 10 minutes per call) until it holds N stored fact versions (Fact nodes,
believed or expired), then measured; then it grows to the next N. No call is
smaller than 5,000 items, nor larger than about what reaching N still needs.
The data mix is generated, seeded and deterministic:

* each new subject gets 5 assertions: lives_in, works_at, job_title (`one`), likes and
  visited (`many`); visited and some likes carry a valid_to;
* about 2 later updates per subject, on random older subjects: a new lives_in /
  works_at from a later date (supersedes: expires one version, adds two), a bounded
  works_at (a temporary contract: adds three), a new `many` object, sometimes
  bounded, and now and then an `end` of lives_in;
* about 10 versions and 7 assertions per subject, so ~100k subjects at 1M versions.

At each N it reports, on this machine:

* the round-trip floor: `RETURN 1` through `Database.query`, and through a bare
  prepared `kuzu.Connection.execute`;
* as-of point queries `mem.facts(subject, predicate, valid_at=V, known_at=K)` for
  random existing (subject, predicate) slots and random V, K, after a warm-up;
  the same statement through `Store.facts_asof(slot_id=...)` (no facade) and through
  a bare prepared Kùzu connection (no `Database.query` wrapper), to split the cost;
* single `Memory.assert_fact` latency on fresh and existing slots of `one` and
  `many` predicates;
* `assert_many` throughput while growing to N (overall, and over the last stretch):
  the rate writes are acknowledged at, with the MiniLM model loaded first (as a
  process that has recalled or remembered has it) so the embedding worker runs
  beside the writes, as users get it;
* the time until every write-time vector (entity names, fact statements) of the
  stage is stored, as a ratio to the model's own time for the same texts (the
  worker's calls replayed on the model alone, `bench/worker_watch.py`), with the
  worker's counts (notes spilled past its queue to its backfill, left unembedded);
  `--embedder none` (no vectors) and `--cold-model` (the model never loaded, so
  the worker never starts: the configuration of earlier runs) are labelled apart;
* database file size (after a clean close) and the time to reopen it.

Medians and p95 only; nothing here asserts on time. Results go to stdout as a
table and to `bench/results/core-<date>.json`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kuzu

from palimpsest import Memory
from palimpsest.engine.writer import IMPORT_BATCH

sys.path.insert(0, str(Path(__file__).resolve().parent))
from worker_watch import WorkerWatch

BATCH = IMPORT_BATCH  # items per assert_many call (--batch)
MIN_CALL = 5_000  # the smallest call growth makes, however close the next size
VERSIONS_PER_ASSERTION = 1.4  # of the generated mix (10 versions per 7 assertions)
NS = "default"
SEED = 20250101
K0 = datetime(2025, 1, 1, tzinfo=UTC)  # transaction clock start
BATCH_TICK = timedelta(minutes=10)
V_LO = datetime(2010, 1, 1, tzinfo=UTC)
V_HI = datetime(2027, 1, 1, tzinfo=UTC)

ONE_INTRO = ("lives_in", "works_at", "job_title")
MANY_INTRO = ("likes", "visited")
POOLS = {
    "lives_in": [f"city-{i}" for i in range(3_000)],
    "visited": [f"city-{i}" for i in range(3_000)],
    "works_at": [f"company-{i}" for i in range(20_000)],
    "job_title": [f"title-{i}" for i in range(800)],
    "likes": [f"topic-{i}" for i in range(5_000)],
}


# --- a clock the bench controls --------------------------------------------------------------
class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, d: timedelta) -> None:
        self.now += d


# --- the data mix -----------------------------------------------------------------------------
def _day(rng: random.Random, lo: int, hi: int) -> datetime:
    """A midnight between years lo (inclusive) and hi (exclusive)."""
    a = datetime(lo, 1, 1, tzinfo=UTC)
    span = (datetime(hi, 1, 1, tzinfo=UTC) - a).days
    return a + timedelta(days=rng.randrange(span))


def subject_name(i: int) -> str:
    return f"person-{i:07d}"


class Generator:
    """Deterministic stream of `assert_many` items (see the module docstring)."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.subjects = 0  # introduced so far: person-0 .. person-(subjects-1)

    def _intro(self, i: int) -> list[dict[str, Any]]:
        r, s = self.rng, subject_name(i)
        out = []
        for p in ONE_INTRO:
            out.append(
                {
                    "subject": s,
                    "predicate": p,
                    "object": r.choice(POOLS[p]),
                    "valid_from": _day(r, 2010, 2020),
                }
            )
        like: dict[str, Any] = {
            "subject": s,
            "predicate": "likes",
            "object": r.choice(POOLS["likes"]),
            "valid_from": _day(r, 2010, 2020),
        }
        if r.random() < 0.3:
            like["valid_to"] = like["valid_from"] + timedelta(days=r.randrange(30, 2000))
        out.append(like)
        start = _day(r, 2012, 2025)
        out.append(
            {
                "subject": s,
                "predicate": "visited",
                "object": r.choice(POOLS["visited"]),
                "valid_from": start,
                "valid_to": start + timedelta(days=r.randrange(2, 30)),
            }
        )
        return out

    def _update(self) -> dict[str, Any]:
        r = self.rng
        s = subject_name(r.randrange(self.subjects))
        x = r.random()
        if x < 0.30:  # moved: supersedes the open lives_in
            return {
                "subject": s,
                "predicate": "lives_in",
                "object": r.choice(POOLS["lives_in"]),
                "valid_from": _day(r, 2020, 2026),
            }
        if x < 0.50:  # new job
            return {
                "subject": s,
                "predicate": "works_at",
                "object": r.choice(POOLS["works_at"]),
                "valid_from": _day(r, 2020, 2026),
            }
        if x < 0.60:  # a temporary contract: a bounded window inside the open one
            f = _day(r, 2020, 2026)
            return {
                "subject": s,
                "predicate": "works_at",
                "object": r.choice(POOLS["works_at"]),
                "valid_from": f,
                "valid_to": f + timedelta(days=r.randrange(30, 365)),
            }
        if x < 0.90:  # a new `many` object
            p = r.choice(MANY_INTRO)
            item = {
                "subject": s,
                "predicate": p,
                "object": r.choice(POOLS[p]),
                "valid_from": _day(r, 2018, 2026),
            }
            if p == "visited" or r.random() < 0.3:
                item["valid_to"] = item["valid_from"] + timedelta(days=r.randrange(2, 400))
            return item
        if x < 0.95:  # "no longer lives there"
            return {
                "op": "end",
                "subject": s,
                "predicate": "lives_in",
                "object": None,
                "at": _day(r, 2021, 2026),
            }
        # learned late: an earlier job, before the current one
        return {
            "subject": s,
            "predicate": "job_title",
            "object": r.choice(POOLS["job_title"]),
            "valid_from": _day(r, 2005, 2010),
        }

    def batch(self, n: int = BATCH) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        while len(out) < n:
            # intros carry 5 of every 7 items: 2 updates per subject on average
            if self.subjects < 20 or self.rng.random() < 1 / 3:  # 5p / (5p + 1 - p) = 5/7
                out += self._intro(self.subjects)
                self.subjects += 1
            else:
                out.append(self._update())
        return out[:n] if len(out) > n else out


# --- measurement helpers --------------------------------------------------------------------------
def pct(xs: list[float]) -> dict[str, float]:
    a = np.asarray(xs, dtype=float) * 1000.0  # ms
    return {
        "n": int(a.size),
        "p50_ms": round(float(np.percentile(a, 50)), 4),
        "p95_ms": round(float(np.percentile(a, 95)), 4),
        "mean_ms": round(float(a.mean()), 4),
        "max_ms": round(float(a.max()), 4),
    }


def timed(fn: Callable[[], Any], n: int, warm: int = 0) -> list[float]:
    for _ in range(warm):
        fn()
    out = []
    perf = time.perf_counter
    for _ in range(n):
        t0 = perf()
        fn()
        out.append(perf() - t0)
    return out


def fact_count(mem: Memory) -> int:
    return int(mem._store.db.query("MATCH (f:Fact) RETURN count(*) AS c")[0]["c"])


def table_count(mem: Memory, label: str) -> int:
    return int(mem._store.db.query(f"MATCH (n:{label}) RETURN count(*) AS c")[0]["c"])


def dir_size(path: Path) -> dict[str, int]:
    files = {p.name: p.stat().st_size for p in path.iterdir() if p.is_file()}
    return {"total_bytes": sum(files.values()), **{f"{k}_bytes": v for k, v in files.items()}}


def rand_time(rng: random.Random, lo: datetime, hi: datetime) -> datetime:
    return lo + timedelta(seconds=rng.uniform(0, (hi - lo).total_seconds()))


# --- the stages -----------------------------------------------------------------------------------
class Bench:
    def __init__(
        self,
        root: Path,
        queries: int,
        singles: int,
        embedder: str | None = "minilm",
        batch: int = BATCH,
        cold_model: bool = False,
    ) -> None:
        self.root = root
        self.cold_model = cold_model
        self.model_load_s = 0.0
        self.batch = batch
        self.path = root / "mem"
        self.clock = Clock(K0)
        self.gen = Generator()
        self.embedder = embedder
        self.mem = self._open()
        self.queries = queries
        self.singles = singles
        self.build_log: list[dict[str, Any]] = []  # one row per batch
        self.assertions = 0
        self.versions = 0
        self.build_seconds = 0.0

    def _open(self) -> Memory:
        mem = Memory.open(self.path, clock=self.clock, embedder=self.embedder)  # type: ignore[arg-type]
        self.watch = WorkerWatch(mem)
        if not self.cold_model:
            self.model_load_s += self.watch.load_model()
        return mem

    # growth through the public bulk path
    def grow_to(self, n_versions: int, deadline: float) -> dict[str, Any]:
        start_versions, start_assertions = self.versions, self.assertions
        self.watch.drain()  # the previous measurements' vectors are not this stage's
        before = self.watch.reset()
        t_stage = time.perf_counter()
        rows: list[dict[str, Any]] = []
        while self.versions < n_versions:
            if time.perf_counter() > deadline:
                break
            need = int((n_versions - self.versions) / VERSIONS_PER_ASSERTION) + 1
            items = self.gen.batch(min(self.batch, max(MIN_CALL, need)))
            self.clock.advance(BATCH_TICK)
            t0, c0 = time.perf_counter(), time.process_time()
            self.mem.assert_many(items)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            self.build_seconds += dt
            self.assertions += len(items)
            self.versions = fact_count(self.mem)
            row = {
                "items": len(items),
                "assertions": self.assertions,
                "versions": self.versions,
                "seconds": round(dt, 4),
                "per_s": round(len(items) / dt, 1),
                # CPU seconds of the process (Kùzu's threads too): on a shared machine
                # the wall time also counts the wait for a free core
                "cpu_seconds": round(cpu, 4),
            }
            rows.append(row)
            self.build_log.append(row)
            if len(self.build_log) % 20 == 0:
                print(
                    f"  .. {self.versions:,} versions, {self.assertions:,} assertions,"
                    f" last batch {row['per_s']:,.0f}/s",
                    flush=True,
                )
        stage_wall = time.perf_counter() - t_stage
        drain_s = self.watch.drain()
        vectors = {**self.watch.result(t_stage, before), "drain_after_writes_s": round(drain_s, 2)}
        stage_s = sum(r["seconds"] for r in rows)
        n_items = self.assertions - start_assertions
        tail = rows[-max(1, len(rows) // 5) :]  # the last fifth: throughput "at" this size
        return {
            "reached_versions": self.versions,
            "target_versions": n_versions,
            "completed": self.versions >= n_versions,
            "stage_assertions": n_items,
            "stage_versions_added": self.versions - start_versions,
            "stage_seconds": round(stage_s, 2),
            "stage_wall_seconds": round(stage_wall, 2),
            "vectors": vectors,
            "stage_assertions_per_s": round(n_items / stage_s, 1) if stage_s else None,
            "tail_assertions_per_s": round(
                sum(r["items"] for r in tail) / sum(r["seconds"] for r in tail), 1
            )
            if tail
            else None,
            "batch_per_s_p50": float(np.median([r["per_s"] for r in rows])) if rows else None,
            "stage_assertions_per_cpu_s": round(n_items / cpu_s, 1)
            if (cpu_s := sum(r["cpu_seconds"] for r in rows))
            else None,
            "tail_assertions_per_cpu_s": round(
                sum(r["items"] for r in tail) / sum(r["cpu_seconds"] for r in tail), 1
            )
            if tail
            else None,
            "total_assertions": self.assertions,
            "total_build_seconds": round(self.build_seconds, 2),
        }

    def batch_phases(self) -> dict[str, Any]:
        """One more growth batch with every store call timed: where a batch's time goes.

        Kùzu statements by kind (the first words of each), the COMMIT, and the rest
        (Python: parsing, replay, packing, Arrow tables) as the remainder.
        """
        db = self.mem._store.db
        spent: dict[str, list[float]] = {}
        perf = time.perf_counter

        def timed_call(kind: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(cypher: str, /, *a: Any, **kw: Any) -> Any:
                t0 = perf()
                try:
                    return fn(cypher, *a, **kw)
                finally:
                    label = f"{kind} {' '.join(str(cypher).split())[:72]}"
                    spent.setdefault(label, []).append(perf() - t0)

            return wrapper

        writer = db._writer
        real_raw = writer.raw
        db.query = timed_call("query", db.query)  # type: ignore[method-assign]
        db.load = timed_call("load", db.load)  # type: ignore[method-assign]
        db.copy = timed_call("copy", db.copy)  # type: ignore[method-assign]
        writer.raw = timed_call("raw", real_raw)  # type: ignore[method-assign]
        items = self.gen.batch(self.batch)
        self.clock.advance(BATCH_TICK)
        try:
            t0 = perf()
            self.mem.assert_many(items)
            total = perf() - t0
        finally:
            del db.query, db.load, db.copy, writer.raw
        self.assertions += len(items)
        self.versions = fact_count(self.mem)
        in_db = sum(sum(v) for v in spent.values())
        phases = [
            {"what": k, "calls": len(v), "ms": round(sum(v) * 1000, 1)}
            for k, v in sorted(spent.items(), key=lambda kv: -sum(kv[1]))
        ]
        return {
            "assertions": len(items),
            "total_ms": round(total * 1000, 1),
            "kuzu_ms": round(in_db * 1000, 1),
            "python_ms": round((total - in_db) * 1000, 1),
            "commit_ms": round(sum(spent.get("raw COMMIT", [])) * 1000, 1),
            "statements": phases,
        }

    def reopen(self) -> dict[str, Any]:
        self.mem.close()
        size = dir_size(self.path)
        gc.collect()
        t0 = time.perf_counter()
        self.mem = self._open()
        t_open = time.perf_counter() - t0
        rng = random.Random(7)
        s = subject_name(rng.randrange(self.gen.subjects))
        t0 = time.perf_counter()
        self.mem.facts(s, "lives_in", valid_at=V_HI, known_at=self.clock.now)
        t_first = time.perf_counter() - t0
        return {"size": size, "open_s": round(t_open, 4), "first_query_s": round(t_first, 4)}

    def floors(self) -> dict[str, Any]:
        db = self.mem._store.db
        via_db = timed(lambda: db.query("RETURN 1"), 2000, warm=200)
        conn = kuzu.Connection(db._db)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            stmt = conn.prepare("RETURN 1")

        def bare() -> None:
            r = conn.execute(stmt)
            r.get_all()
            r.close()

        via_kuzu = timed(bare, 2000, warm=200)
        conn.close()
        return {"return1_database_query": pct(via_db), "return1_bare_prepared": pct(via_kuzu)}

    def _query_keys(self, n: int, seed: int) -> list[tuple[str, str, datetime, datetime]]:
        rng = random.Random(seed)
        preds = ONE_INTRO + MANY_INTRO
        out = []
        for _ in range(n):
            s = subject_name(rng.randrange(self.gen.subjects))
            p = rng.choice(preds)
            out.append((s, p, rand_time(rng, V_LO, V_HI), rand_time(rng, K0, self.clock.now)))
        return out

    def point_queries(self) -> dict[str, Any]:
        mem, store = self.mem, self.mem._store
        warm = self._query_keys(300, seed=11)
        keys = self._query_keys(self.queries, seed=12)
        for s, p, v, k in warm:
            mem.facts(s, p, valid_at=v, known_at=k)
        # facade
        lat, hits = [], 0
        for s, p, v, k in keys:
            t0 = time.perf_counter()
            res = mem.facts(s, p, valid_at=v, known_at=k)
            lat.append(time.perf_counter() - t0)
            hits += len(res)
        facade = pct(lat)
        # store: the read the facade makes for a point query (the slot's journal: its
        # row by primary key, its pages cached), no facade; entity ids resolved beforehand
        slots = []
        for s, p, v, k in keys:
            ent = mem._entities.entity(NS, s, field="subject")
            assert ent is not None
            slots.append((f"{NS}\x1f{ent.id}\x1f{p}", v, k))
        lat = []
        for slot, v, k in slots:
            t0 = time.perf_counter()
            store.slots.versions_at(slot, valid_at=v, known_at=k)
            lat.append(time.perf_counter() - t0)
        store_level = pct(lat)
        # the graph path: versions one hop from the slot's subject (as entity-anchored reads)
        lat = []
        for slot, v, k in slots:
            t0 = time.perf_counter()
            store.facts.facts_asof(namespace=NS, valid_at=v, known_at=k, slot_id=slot)
            lat.append(time.perf_counter() - t0)
        graph_level = pct(lat)
        # bare Kùzu: the statement the store sends, prepared once on a fresh connection
        captured: dict[str, Any] = {}
        real = store.db.query

        def spy(cypher: str, /, **params: Any) -> Any:
            if not captured:  # the slot row's seek (its pages come from the cache)
                captured["cypher"], captured["params"] = cypher, params
            return real(cypher, **params)

        store.db.query = spy  # type: ignore[method-assign]
        try:
            store.slots.slot_heads([slots[0][0]])
        finally:
            del store.db.query

        conn = kuzu.Connection(store.db._db)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            stmt = conn.prepare(captured["cypher"])
        lat = []
        for slot, _v, _k in slots:
            t0 = time.perf_counter()
            r = conn.execute(stmt, {name: slot for name in captured["params"]})
            r.get_all()
            r.close()
            lat.append(time.perf_counter() - t0)
        bare = pct(lat)
        conn.close()
        return {
            "facade_mem_facts": facade,
            "store_facts_asof": store_level,
            "graph_path_facts_asof": graph_level,
            "bare_kuzu_prepared": bare,
            "mean_rows_per_query": round(hits / len(keys), 3),
            "cypher": captured["cypher"],
        }

    def single_asserts(self) -> dict[str, Any]:
        rng = random.Random(99)
        mem, clock = self.mem, self.clock
        n = self.singles
        tag = f"{self.versions}"
        out: dict[str, Any] = {}

        def run(name: str, make: Callable[[int], dict[str, Any]]) -> None:
            for i in range(10):  # warm-up (statement cache, code paths)
                clock.advance(timedelta(seconds=1))
                mem.assert_fact(**make(-1 - i))
            lat, cpu = [], []
            for i in range(n):
                clock.advance(timedelta(seconds=1))
                kw = make(i)
                t0, c0 = time.perf_counter(), time.process_time()
                mem.assert_fact(**kw)
                lat.append(time.perf_counter() - t0)
                cpu.append(time.process_time() - c0)
            out[name] = {**pct(lat), "cpu_p50_ms": round(float(np.median(cpu)) * 1000, 4)}

        def existing() -> str:
            return subject_name(rng.randrange(self.gen.subjects))

        run(
            "fresh_slot_one",
            lambda i: {
                "subject": f"fresh-{tag}-one-{i}",
                "predicate": "lives_in",
                "object": rng.choice(POOLS["lives_in"]),
                "valid_from": _day(rng, 2015, 2025),
            },
        )
        run(
            "fresh_slot_many",
            lambda i: {
                "subject": f"fresh-{tag}-many-{i}",
                "predicate": "likes",
                "object": rng.choice(POOLS["likes"]),
                "valid_from": _day(rng, 2015, 2025),
            },
        )
        run(
            "existing_slot_one",
            lambda i: {
                "subject": existing(),
                "predicate": "lives_in",
                "object": rng.choice(POOLS["lives_in"]),
                "valid_from": _day(rng, 2020, 2026),
            },
        )
        run(
            "existing_slot_many",
            lambda i: {
                "subject": existing(),
                "predicate": "likes",
                "object": rng.choice(POOLS["likes"]),
                "valid_from": _day(rng, 2018, 2026),
            },
        )
        self.versions = fact_count(mem)
        return out

    def counts(self) -> dict[str, int]:
        return {
            lbl: table_count(self.mem, lbl)
            for lbl in ("Fact", "Assertion", "Slot", "SlotPage", "Line", "LinePage", "Entity")
        }


# --- output ------------------------------------------------------------------------------------
def _fmt(m: dict[str, float] | None) -> str:
    if not m:
        return "-"
    return f"{m['p50_ms']:.3f} / {m['p95_ms']:.3f}"


def print_table(results: list[dict[str, Any]]) -> None:
    cols = [f"N={r['target_versions']:,}" for r in results]
    rows: list[tuple[str, list[str]]] = []

    def add(label: str, f: Callable[[dict[str, Any]], str]) -> None:
        rows.append((label, [f(r) for r in results]))

    add("versions reached (Fact nodes)", lambda r: f"{r['counts']['Fact']:,}")
    add("assertions / subjects", lambda r: f"{r['counts']['Assertion']:,} / {r['subjects']:,}")
    add(
        "bulk assert_many, stage (ass./s)", lambda r: f"{r['build']['stage_assertions_per_s']:,.0f}"
    )
    add(
        "bulk assert_many, last 5th (ass./s)",
        lambda r: f"{r['build']['tail_assertions_per_s']:,.0f}",
    )
    add(
        "bulk, last 5th (ass. per CPU-second)",
        lambda r: f"{r['build'].get('tail_assertions_per_cpu_s') or 0:,.0f}",
    )
    add(
        "vectors stored after stage start (s)",
        lambda r: f"{r['build']['vectors']['vectors_stored_s']:,.1f}",
    )
    add(
        "  model alone, same texts (s) [texts]",
        lambda r: (
            f"{r['build']['vectors']['model_alone_s']:,.1f}"
            f" [{r['build']['vectors']['model_texts']:,}]"
        ),
    )
    add(
        "  ratio vectors / model (target 1.5)",
        lambda r: str(r["build"]["vectors"]["vectors_ratio_to_model"]),
    )
    add(
        "  worker spilled / backfilled / left",
        lambda r: (
            f"{r['build']['vectors']['worker']['spilled']:,}"
            f" / {r['build']['vectors']['worker']['backfilled']:,}"
            f" / {r['build']['vectors']['worker']['backfill_pending']}"
            f"{'' if r['build']['vectors']['all_vectors_stored'] else ' NOT ALL STORED'}"
        ),
    )
    add("build time cumulative (s)", lambda r: f"{r['build']['total_build_seconds']:,.1f}")
    add(
        "one batch: Kùzu (commit) + Python ms",
        lambda r: (
            f"{r['batch_phases']['kuzu_ms']:,.0f} ({r['batch_phases']['commit_ms']:,.0f})"
            f" + {r['batch_phases']['python_ms']:,.0f}"
        ),
    )
    add("RETURN 1 Database.query p50/p95 ms", lambda r: _fmt(r["floor"]["return1_database_query"]))
    add("RETURN 1 bare prepared p50/p95 ms", lambda r: _fmt(r["floor"]["return1_bare_prepared"]))
    add("point mem.facts p50/p95 ms", lambda r: _fmt(r["point"]["facade_mem_facts"]))
    add("point store.slots.versions_at p50/p95 ms", lambda r: _fmt(r["point"]["store_facts_asof"]))
    add(
        "point graph path (Fact nodes) p50/p95",
        lambda r: _fmt(r["point"].get("graph_path_facts_asof")),
    )
    add("point bare kuzu p50/p95 ms", lambda r: _fmt(r["point"]["bare_kuzu_prepared"]))
    for k in ("fresh_slot_one", "fresh_slot_many", "existing_slot_one", "existing_slot_many"):
        add(f"assert_fact {k} p50/p95 ms", lambda r, k=k: _fmt(r["single"][k]))
        add(f"  {k} CPU p50 ms", lambda r, k=k: f"{r['single'][k].get('cpu_p50_ms', 0):.3f}")
    add(
        "file size (MiB, after close)", lambda r: f"{r['load']['size']['total_bytes'] / 2**20:,.1f}"
    )
    add("reopen Memory.open (s)", lambda r: f"{r['load']['open_s']:.3f}")
    add("first query after open (ms)", lambda r: f"{r['load']['first_query_s'] * 1000:.1f}")
    w = max(len(r[0]) for r in rows) + 2
    cw = [max(len(c), *(len(r[1][i]) for r in rows)) + 2 for i, c in enumerate(cols)]
    print("\n" + "".ljust(w) + "".join(c.rjust(cw[i]) for i, c in enumerate(cols)))
    for label, vals in rows:
        print(label.ljust(w) + "".join(v.rjust(cw[i]) for i, v in enumerate(vals)))
    print(
        "load average (1/5/15 min) at the end of each size: "
        + "; ".join(str(r["loadavg_1_5_15"]) for r in results)
    )
    print(
        "\ntargets: point p50 <= 1 ms, p95 <= 2 ms at 1M; bulk >= 5,000/s acknowledged with"
        " the worker beside; vectors stored <= 1.5 x the model alone; single p50 <= 5 ms"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--quick", action="store_true", help="10k versions only")
    ap.add_argument("--queries", type=int, default=1000, help="timed point queries per size")
    ap.add_argument("--singles", type=int, default=100, help="timed single asserts per kind")
    ap.add_argument(
        "--batch", type=int, default=BATCH, help="items per assert_many call while growing"
    )
    ap.add_argument(
        "--max-build-minutes",
        type=float,
        default=40.0,
        help="stop growing after this much wall time (reported, never hidden)",
    )
    ap.add_argument(
        "--embedder",
        choices=("minilm", "none"),
        default="minilm",
        help="Memory.open(embedder=...): 'none' times the fact engine without write-time vectors",
    )
    ap.add_argument(
        "--cold-model",
        action="store_true",
        help="never load the model (the worker never starts; vectors left to reindex)",
    )
    ap.add_argument("--dir", default=None, help="work directory (default: a temp dir, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the database afterwards")
    ap.add_argument(
        "--out", default=None, help="JSON path (default bench/results/core-<date>.json)"
    )
    args = ap.parse_args(argv)
    sizes = [10_000] if args.quick else [int(s) for s in args.sizes.split(",")]

    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="palimpsest-core-"))
    root.mkdir(parents=True, exist_ok=True)
    if (root / "mem").exists():
        shutil.rmtree(root / "mem")
    embedder = None if args.embedder == "none" else args.embedder
    bench = Bench(
        root,
        queries=args.queries,
        singles=args.singles,
        embedder=embedder,
        batch=args.batch,
        cold_model=args.cold_model,
    )
    deadline = time.perf_counter() + args.max_build_minutes * 60
    results = []
    t_all = time.perf_counter()
    try:
        for n in sizes:
            print(f"== growing to {n:,} versions", flush=True)
            build = bench.grow_to(n, deadline)
            if not build["completed"]:
                print(
                    f"!! build deadline hit at {build['reached_versions']:,} versions", flush=True
                )
            vec = build["vectors"]
            print(
                f"   {build['reached_versions']:,} versions; stage"
                f" {build['stage_assertions_per_s']} assertions/s acknowledged;"
                f" vectors stored after {vec['vectors_stored_s']} s, model alone"
                f" {vec['model_alone_s']} s (ratio {vec['vectors_ratio_to_model']});"
                f" worker {vec['worker']}",
                flush=True,
            )
            load = bench.reopen()
            print(
                f"   reopen {load['open_s']:.3f}s, {load['size']['total_bytes'] / 2**20:.1f} MiB",
                flush=True,
            )
            counts = bench.counts()
            floor = bench.floors()
            point = bench.point_queries()
            print(
                f"   point facade {_fmt(point['facade_mem_facts'])} ms,"
                f" store {_fmt(point['store_facts_asof'])},"
                f" bare {_fmt(point['bare_kuzu_prepared'])}",
                flush=True,
            )
            single = bench.single_asserts()
            print("   single " + ", ".join(f"{k} {_fmt(v)}" for k, v in single.items()), flush=True)
            # after the measurements, so that they are made at N: a call adds up to
            # `--batch` assertions
            phases = bench.batch_phases()
            print(
                f"   one batch: {phases['total_ms']:.0f} ms = Kùzu {phases['kuzu_ms']:.0f}"
                f" (commit {phases['commit_ms']:.0f}) + Python {phases['python_ms']:.0f}",
                flush=True,
            )
            results.append(
                {
                    "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()],
                    "target_versions": n,
                    "build": build,
                    "batch_phases": phases,
                    "counts": counts,
                    "subjects": bench.gen.subjects,
                    "load": load,
                    "floor": floor,
                    "point": point,
                    "single": single,
                }
            )
            if not build["completed"]:
                break
    finally:
        bench.mem.close()
        if not args.keep and not args.dir:
            shutil.rmtree(root, ignore_errors=True)

    print_table(results)
    out = {
        "bench": "core",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "kuzu": kuzu.__version__,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "settings": {
            "batch": args.batch,
            "queries": args.queries,
            "singles": args.singles,
            "seed": SEED,
            "sizes": sizes,
            "quick": args.quick,
            "embedder": args.embedder,
            "cold_model": args.cold_model,
            "model_load_s": round(bench.model_load_s, 2),
        },
        "wall_seconds": round(time.perf_counter() - t_all, 1),
        "results": results,
        "build_log": bench.build_log,
    }
    path = (
        Path(args.out)
        if args.out
        else (
            Path(__file__).resolve().parent
            / "results"
            / f"core-{datetime.now(UTC):%Y-%m-%d}{'-quick' if args.quick else ''}.json"
        )
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1, default=str))
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
