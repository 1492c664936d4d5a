"""A fleet of `palimpsest serve` workers on one PostgreSQL database, against the embedded store.

    python bench/fleet.py [--workers 1,2,4] [--clients 8] [--seconds 30] [--conversation conv-26]

One LoCoMo conversation (development split) goes into a fresh memory on a throwaway
PostgreSQL (tests/pg_server.py: Debian's server, loopback) and into a fresh embedded
Kùzu directory, as the shipped importer reads it (`remember_many`, spaCy and MiniLM on).
Then, in one run: the embedded store behind one `palimpsest serve`, and the database
behind 1, 2 and 4 `palimpsest serve` processes (uvicorn, `--no-consolidate`), each on
its own loopback port. `--clients` threads send, for `--seconds` per configuration and
to the workers in turn: 40% recall (a question of the conversation, k=5), 30% as-of
facts (a speaker), 30% assert (`POST /v1/facts`: a subject of the client's own, a city).
After each acknowledged assert the client reads the subject back through a different
worker (read-your-writes across workers: the fact must be there). At the end every
acknowledged assert is looked up (lost writes). Each worker answers one recall first
(models and caches warm, timed apart). Reports per configuration writes/s, p50/p95 of
every operation, errors, read-your-writes misses and lost writes, and recall p50 on
PostgreSQL against the embedded store's. Writes bench/results/fleet-<date>.json; exits
1 on any error, miss or loss.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import locomo_data as lc
from load import iso, loadavg, pct, start_workers, stop_server
from pg_server import PostgresServer

from palimpsest import Memory
from palimpsest.transfer import parse_locomo

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
MIX = (("recall", 40), ("facts", 30), ("assert", 30))
CITIES = ("Lisbon", "Porto", "Madrid", "Paris", "Oslo", "Rome", "Vienna", "Prague")


def fill(location: str, conv_id: str) -> tuple[list[str], list[str], datetime, float]:
    _, questions, _ = lc.load_locomo()
    items = parse_locomo(lc.DATA.read_text(), conversations=[conv_id])
    t = time.perf_counter()
    with Memory.open(location) as mem:
        mem.remember_many(items)
    took = time.perf_counter() - t
    speakers = sorted({str(i["speaker"]) for i in items})
    last = max(i["occurred_at"] for i in items)
    return [q.text for q in questions if q.conv_id == conv_id], speakers, last, took


def run(
    label: str, location: str, n: int, args: argparse.Namespace, ctx: dict[str, Any], log: Any
) -> dict[str, Any]:
    questions, speakers, last = ctx["questions"], ctx["speakers"], ctx["last"]
    procs, bases = start_workers(location, n, log)
    lat: dict[str, list[float]] = {k: [] for k, _ in MIX}
    errors: list[dict[str, Any]] = []
    misses: list[str] = []
    acked: list[tuple[str, str]] = []
    lock = threading.Lock()
    try:
        t0 = time.perf_counter()
        for b in bases:  # every worker loads its models and caches once
            httpx.get(f"{b}/v1/recall", params={"query": questions[0]}, timeout=300.0)
        warmup_s = time.perf_counter() - t0
        started = datetime.now(UTC)
        stop = time.monotonic() + args.seconds

        def client(i: int) -> None:
            rng = random.Random(args.seed * 1000 + i)
            https = [httpx.Client(base_url=b, timeout=120.0) for b in bases]
            turn = i
            n_assert = 0
            try:
                while time.monotonic() < stop:
                    kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
                    http = https[turn % len(https)]
                    other = https[(turn + 1) % len(https)]
                    turn += 1
                    t = time.perf_counter()
                    failed: str | None = None
                    try:
                        if kind == "recall":
                            r = http.get(
                                "/v1/recall", params={"query": rng.choice(questions), "k": 5}
                            )
                        elif kind == "facts":
                            now = datetime.now(UTC)
                            r = http.get("/v1/facts", params={
                                "subject": rng.choice(speakers),
                                "valid_at": iso(last - timedelta(days=rng.randrange(400))),
                                "known_at": iso(started + (now - started) * rng.random()),
                            })  # fmt: skip
                        else:
                            n_assert += 1
                            subject = f"{label}-c{i}-{n_assert}"
                            city = rng.choice(CITIES)
                            r = http.post("/v1/facts", json={
                                "subject": subject, "predicate": "lives_in", "object": city,
                            })  # fmt: skip
                        if r.status_code >= 400:
                            failed = f"{r.status_code} {r.text[:200]}"
                    except httpx.HTTPError as e:
                        failed = f"{type(e).__name__}: {e}"
                    dt = time.perf_counter() - t
                    if kind == "assert" and failed is None:
                        seen = other.get(
                            "/v1/facts", params={"subject": subject, "predicate": "lives_in"}
                        )
                        objs = (
                            [f["object"] for f in seen.json().get("items", [])]
                            if seen.status_code == 200
                            else []
                        )
                        with lock:
                            acked.append((subject, city))
                            if city not in objs:
                                misses.append(subject)
                    with lock:
                        lat[kind].append(dt)
                        if failed is not None:
                            errors.append({"op": kind, "error": failed})
            finally:
                for h in https:
                    h.close()

        load0 = loadavg()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        t1 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t1
        load1 = loadavg()
        lost = []
        with httpx.Client(base_url=bases[0], timeout=120.0) as http:
            for subject, city in acked:
                r = http.get("/v1/facts", params={"subject": subject, "predicate": "lives_in"})
                if city not in [f["object"] for f in r.json().get("items", [])]:
                    lost.append(subject)
    finally:
        for p in procs:
            stop_server(p)

    def stats(v: list[float]) -> dict[str, Any]:
        return {
            "count": len(v),
            "p50_ms": round(statistics.median(v) * 1000, 1) if v else None,
            "p95_ms": round(pct(v, 0.95) * 1000, 1) if v else None,
        }

    return {
        "label": label,
        "workers": n,
        "seconds": round(wall, 1),
        "warmup_s": round(warmup_s, 1),
        "writes_per_s": round(len(acked) / wall, 1),
        "requests_per_s": round(sum(len(v) for v in lat.values()) / wall, 1),
        "per_op": {k: stats(v) for k, v in lat.items()},
        "errors": len(errors),
        "error_examples": errors[:5],
        "read_your_writes_misses": len(misses),
        "acknowledged_writes": len(acked),
        "lost_writes": len(lost),
        "loadavg": [load0, load1],
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--tag", default="", help="added to the result file's name")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    counts = [int(x) for x in args.workers.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-fleet-"))
    log = open(tmp / "servers.log", "wb")  # noqa: SIM115 - closed in finally
    runs = []
    try:
        with PostgresServer.start() as pg:
            url = pg.create_database("fleet")
            kdir = str(tmp / "mem")
            q, s, last, fill_pg = fill(url, args.conversation)
            _, _, _, fill_kuzu = fill(kdir, args.conversation)
            ctx = {"questions": q, "speakers": s, "last": last}
            runs.append(run("embedded", kdir, 1, args, ctx, log))
            for n in counts:
                runs.append(run(f"pg{n}", url, n, args, ctx, log))
    finally:
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    emb = runs[0]["per_op"]["recall"]["p50_ms"]
    out = {
        "bench": "fleet",
        "when": iso(datetime.now(UTC)),
        "conversation": args.conversation,
        "clients": args.clients,
        "fill_s": {"postgres": round(fill_pg, 1), "embedded": round(fill_kuzu, 1)},
        "runs": runs,
        "recall_p50_ratio_vs_embedded": {
            r["label"]: round(r["per_op"]["recall"]["p50_ms"] / emb, 2) for r in runs[1:]
        },
    }
    print(json.dumps(out, indent=1))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        tag = f"-{args.tag}" if args.tag else ""
        path = RESULTS / f"fleet-{datetime.now(UTC):%Y-%m-%d}{tag}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    bad = sum(r["errors"] + r["read_your_writes_misses"] + r["lost_writes"] for r in runs)
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
