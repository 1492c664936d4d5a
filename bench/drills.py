"""Fault drills on PostgreSQL: a server, the database, and a primary lost under load.

    python bench/drills.py [--workers 2] [--clients 4] [--seconds 16] [--only server-kill]

Each drill starts a throwaway PostgreSQL (tests/pg_server.py), `--workers` `palimpsest
serve` processes on one database and `--clients` threads asserting facts through them
in turn (`POST /v1/facts`, a subject unique to each write, with an `Idempotency-Key`
of its own). A client retries a write that failed (503 `store_unavailable` or a broken
connection) on the next worker, with the same key, until it is acknowledged.

- `server-kill`: SIGKILL to one `palimpsest serve` a quarter of the way in; its
  clients' unanswered writes are retried on the others with the same keys.
- `pg-kill`: SIGKILL to the PostgreSQL postmaster a quarter of the way in, restarted
  three seconds later (crash recovery). The workers are never restarted.
- `failover`: a primary with a synchronous standby (`synchronous_standby_names`); the
  workers' URL names both hosts with `target_session_attrs=read-write` (libpq tries
  them in turn). SIGKILL to the primary, and the standby promoted at once.

Afterwards every acknowledged write is looked up through a worker (lost writes, and
writes stored more than once: a subject's history holds one version per assertion), and
each drill reports the errors clients saw by status, the longest a write waited
(outage as clients felt it) and the time from the fault to the first acknowledged
write after it. Writes bench/results/drills-<date>.json; exits 1 on a lost or doubled write
or a server error other than 503.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from load import iso, start_workers, stop_server
from pg_server import PostgresServer

from palimpsest import Memory

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def load(bases: list[str], clients: int, seconds: float, fault: Any) -> dict[str, Any]:
    """Clients writing until `seconds`; `fault()` runs in its own thread at a quarter."""
    acked: list[str] = []
    statuses: Counter[str] = Counter()
    waits: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    fault_at: list[float] = []

    def client(i: int) -> None:
        https = [httpx.Client(base_url=b, timeout=30.0) for b in bases]
        n = 0
        try:
            while time.monotonic() < stop:
                n += 1
                subject = f"c{i}-{n}"
                body = {"subject": subject, "predicate": "lives_in", "object": "Lisbon"}
                key = {"Idempotency-Key": f"drill-{subject}"}
                t, begun = time.perf_counter(), time.monotonic()
                turn = n
                while time.monotonic() < stop + 60:
                    http = https[turn % len(https)]
                    try:
                        r = http.post("/v1/facts", json=body, headers=key)
                        status = str(r.status_code)
                    except httpx.HTTPError as e:
                        status = type(e).__name__
                    if status == "201":
                        with lock:
                            acked.append(subject)
                            waits.append(time.perf_counter() - t)
                            # the first write begun after the fault that got through
                            if len(fault_at) == 1 and begun > fault_at[0]:
                                fault_at.append(time.monotonic())
                        break
                    with lock:
                        statuses[status] += 1
                    turn += 1  # the next worker, the same key
                    time.sleep(0.1)
        finally:
            for h in https:
                h.close()

    def run_fault() -> None:
        time.sleep(seconds / 4)
        fault_at.append(time.monotonic())
        fault()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    threads.append(threading.Thread(target=run_fault))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "acked": acked,
        "errors_by_status": dict(statuses),
        "longest_write_wait_s": round(max(waits), 2) if waits else None,
        "fault_to_first_ack_s": round(fault_at[1] - fault_at[0], 2) if len(fault_at) > 1 else None,
    }


def audit(base: str, acked: list[str]) -> dict[str, int]:
    """Acknowledged writes missing, and those stored more than once."""
    lost = doubled = 0
    with httpx.Client(base_url=base, timeout=60.0) as http:
        for subject in acked:
            r = http.get("/v1/history", params={"subject": subject, "predicate": "lives_in"})
            versions = r.json() if r.status_code == 200 else []
            lost += not versions
            doubled += len(versions) > 1
    return {"lost_writes": lost, "doubled_writes": doubled}


def drill_server_kill(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    with PostgresServer.start() as pg:
        url = pg.create_database("drill")
        Memory.open(url, extractor=None, embedder=None).close()  # the schema
        procs, bases = start_workers(url, max(args.workers, 2), log)
        try:
            out = load(bases, args.clients, args.seconds, procs[0].kill)
            out.update(audit(bases[1], out["acked"]))
        finally:
            for p in procs:
                stop_server(p)
    out["acknowledged_writes"] = len(out.pop("acked"))
    return {"drill": "server-kill", **out}


def drill_pg_kill(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    with PostgresServer.start() as pg:
        url = pg.create_database("drill")
        Memory.open(url, extractor=None, embedder=None).close()  # the schema
        procs, bases = start_workers(url, args.workers, log)
        try:

            def fault() -> None:
                pg.kill()
                time.sleep(3.0)
                pg.restart()

            out = load(bases, args.clients, args.seconds, fault)
            out.update(audit(bases[0], out["acked"]))
        finally:
            for p in procs:
                stop_server(p)
    out["acknowledged_writes"] = len(out.pop("acked"))
    return {"drill": "pg-kill", "down_s": 3.0, **out}


def drill_failover(args: argparse.Namespace, log: Any) -> dict[str, Any]:
    with PostgresServer.start() as pg:
        pg.create_database("drill")
        standby = pg.standby(synchronous=True)
        try:
            url = (
                f"postgresql://palimpsest:{pg.password}@127.0.0.1:{pg.port},"
                f"127.0.0.1:{standby.port}/drill?target_session_attrs=read-write"
            )
            Memory.open(url, extractor=None, embedder=None).close()
            procs, bases = start_workers(url, args.workers, log)
            promote_s: list[float] = []
            try:

                def fault() -> None:
                    pg.kill()
                    t = time.perf_counter()
                    standby.promote()
                    promote_s.append(time.perf_counter() - t)

                out = load(bases, args.clients, args.seconds, fault)
                out.update(audit(bases[0], out["acked"]))
                out["promote_s"] = round(promote_s[0], 2) if promote_s else None
            finally:
                for p in procs:
                    stop_server(p)
        finally:
            standby.stop()
    out["acknowledged_writes"] = len(out.pop("acked"))
    return {"drill": "failover", **out}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=16.0)
    ap.add_argument("--only", choices=("server-kill", "pg-kill", "failover"))
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-drills-"))
    log = open(tmp / "servers.log", "wb")  # noqa: SIM115 - closed in finally
    drills = []
    try:
        if args.only in (None, "server-kill"):
            drills.append(drill_server_kill(args, log))
        if args.only in (None, "pg-kill"):
            drills.append(drill_pg_kill(args, log))
        if args.only in (None, "failover"):
            drills.append(drill_failover(args, log))
    finally:
        log.close()
        if any(d["lost_writes"] or d["doubled_writes"] for d in drills):
            print((tmp / "servers.log").read_text()[-4000:], file=sys.stderr)
        shutil.rmtree(tmp, ignore_errors=True)
    out = {"bench": "drills", "when": iso(datetime.now(UTC)), "workers": args.workers,
           "clients": args.clients, "drills": drills}  # fmt: skip
    print(json.dumps(out, indent=1))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"drills-{datetime.now(UTC):%Y-%m-%d}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    bad = [
        d
        for d in drills
        if d["lost_writes"]
        or d["doubled_writes"]
        or any(s not in ("503",) and s.isdigit() for s in d["errors_by_status"])
    ]
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
