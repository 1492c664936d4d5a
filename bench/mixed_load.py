"""Mixed load on one LoCoMo conversation: recall, as-of facts, remember, through a server.

    python bench/mixed_load.py [--clients 8] [--seconds 60] [--conversation conv-26]
    python bench/mixed_load.py --via owner      # through the memory's owner (issue 29)
    python bench/mixed_load.py --postgres --workers 4   # 4 `serve` on one database (issue 28)

One LoCoMo conversation goes into a fresh memory as the shipped importer reads it
(`remember_many` of `parse_locomo`'s items, extraction and MiniLM on). With `--via
http` (the default), `palimpsest serve` (uvicorn, `--no-consolidate`) opens it on a
free loopback port and each client thread has its own httpx client; with `--via
owner`, `palimpsest.connect` starts the memory's owner process (models as shipped)
and each client thread is a proxy of its own (`OwnerClient`: a Unix socket, the
facade's verbs). One recall warms the models and recall's index up (timed apart:
tests/test_recall_concurrency.py covers a fresh process's first recall under
writers), then `--clients` threads send requests for `--seconds`: 40% recall (a
LoCoMo question of the conversation, k=5), 40% facts as of a random valid time and
a random earlier moment of the run (a speaker as subject), 20% remember (a new
turn). With `--postgres` the memory is a database on a throwaway PostgreSQL
(tests/pg_server.py) and `--workers` `palimpsest serve` processes share it: each
client sends its requests to the workers in turn, reads every episode it remembered
back through the next worker at once (read-your-writes across workers), and at the
end every acknowledged episode is looked up (lost writes). Reports per operation
count, p50/p95/max and errors (any status >= 400, any exception); with `--via owner`
also the proxy's per-call overhead: the p50 of a point query
(`facts(subject, predicate)`) in this process on a copy of the
memory and through the owner, alternating batches in the same run, before the
load (the owner idle) and right after it (its embedding worker still busy). Writes
bench/results/mixed-load[-owner]-<date>.json. Exits 1 on any error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import locomo_data as lc
from load import iso, loadavg, pct, start_workers, stop_server

from palimpsest import Memory
from palimpsest.transfer import parse_locomo

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MIX = (("recall", 40), ("facts", 40), ("remember", 20))
Request = Callable[[str, dict[str, Any]], None]  # (op, arguments): raises on failure


def fill(path: Path | str, conv_id: str) -> tuple[list[str], list[str], datetime]:
    """The memory with the conversation; its questions, speakers and last turn time."""
    _, questions, _ = lc.load_locomo()
    items = parse_locomo(lc.DATA.read_text(), conversations=[conv_id])
    with Memory.open(path) as mem:
        mem.remember_many(items)  # what `import_locomo` does, in one batch
    speakers = sorted({str(i["speaker"]) for i in items})
    last = max(i["occurred_at"] for i in items)
    return [q.text for q in questions if q.conv_id == conv_id], speakers, last


class Failed(Exception):
    """A request answered with an error status."""


class Unseen(Exception):
    """An acknowledged episode that another worker did not find at once."""


def http_requests(
    bases: list[str], first: int = 0, acked: list[str] | None = None
) -> tuple[Request, Callable[[], None]]:
    """One client's requests to the `palimpsest serve` workers over HTTP, in turn; an
    episode it remembered is read back through the next worker (when there are two)."""
    https = [httpx.Client(base_url=b, timeout=120.0) for b in bases]
    paths = {"recall": ("GET", "/v1/recall"), "facts": ("GET", "/v1/facts")}
    turn = [first]

    def send(op: str, a: dict[str, Any]) -> None:
        turn[0] += 1
        http = https[turn[0] % len(https)]
        if op == "remember":
            r = http.post("/v1/episodes", json=a)
        else:
            method, url = paths[op]
            r = http.request(method, url, params=a)
        if r.status_code >= 400:
            raise Failed(f"{r.status_code} {r.text[:300]}")
        if op == "remember" and acked is not None:
            eid = r.json()["id"]
            acked.append(eid)
            if len(https) > 1:
                other = https[(turn[0] + 1) % len(https)]
                if other.get(f"/v1/episodes/{eid}").status_code != 200:
                    raise Unseen(eid)

    def close() -> None:
        for h in https:
            h.close()

    return send, close


def owner_requests(path: Path) -> tuple[Request, Callable[[], None]]:
    """One client's calls through the memory's owner (a proxy of its own)."""
    from palimpsest import connect

    client = connect(path, start=False)
    verbs = {"recall": client.recall, "facts": client.facts, "remember": client.remember}

    def send(op: str, a: dict[str, Any]) -> None:
        args = dict(a)
        if op == "remember":
            verbs[op](args.pop("text"), **args)
        elif op == "recall":
            verbs[op](args.pop("query"), **args)
        else:
            verbs[op](args.pop("subject"), **args)

    return send, client.close


def point_query_overhead(path: Path, copy: Path, rounds: int = 10, per: int = 50) -> dict[str, Any]:
    """p50 of a point query (`facts(subject, predicate)` of stored slots) in this process
    on `copy` and through the owner of `path`, in alternating batches."""
    from palimpsest import connect

    here = Memory.open(copy, extractor=None, embedder=None)
    there = connect(path, start=False)
    try:
        slots = sorted({(f.subject, f.predicate) for f in here.snapshot().facts})[:50]
        times: dict[str, list[float]] = {"in_process": [], "through_owner": []}
        for r in range(rounds):
            order = [("in_process", here), ("through_owner", there)]
            for name, mem in order if r % 2 == 0 else order[::-1]:
                for k in range(per):
                    subject, predicate = slots[k % len(slots)]
                    t = time.perf_counter()
                    mem.facts(subject, predicate)
                    times[name].append(time.perf_counter() - t)
    finally:
        there.close()
        here.close()
    p50 = {k: statistics.median(v) * 1000 for k, v in times.items()}
    return {
        "queries_each": rounds * per,
        "slots": len(slots),
        "in_process_p50_ms": round(p50["in_process"], 3),
        "through_owner_p50_ms": round(p50["through_owner"], 3),
        "overhead_p50_ms": round(p50["through_owner"] - p50["in_process"], 3),
        "ratio": round(p50["through_owner"] / p50["in_process"], 2),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--via", choices=("http", "owner"), default="http")
    ap.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL database")
    ap.add_argument("--workers", type=int, default=1, help="`serve` processes (--postgres)")
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    if (args.workers > 1 and not args.postgres) or (args.postgres and args.via != "http"):
        ap.error("several workers share a PostgreSQL database: --postgres, --via http")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-mixed-"))
    pg: Any = None
    mem_path: Path | str = tmp / "mem"
    if args.postgres:
        from pg_server import PostgresServer

        pg = PostgresServer.start()
        mem_path = pg.create_database("mixed")
    acked: list[str] = []
    t0 = time.perf_counter()
    questions, speakers, last = fill(mem_path, args.conversation)
    fill_s = time.perf_counter() - t0
    lat: dict[str, list[float]] = {k: [] for k, _ in MIX}
    errors: list[dict[str, Any]] = []
    lock = threading.Lock()
    procs: list[subprocess.Popen[bytes]] = []
    owner: Any = None
    overhead: dict[str, Any] | None = None
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed in finally
    try:
        if args.via == "http":
            procs, bases = start_workers(str(mem_path), args.workers, log)
            for base in bases[1:]:  # every worker loads its models and recall's index
                httpx.get(f"{base}/v1/recall", params={"query": questions[0]}, timeout=300.0)

            def requests(i: int = 0) -> tuple[Request, Callable[[], None]]:
                return http_requests(bases, i, acked)
        else:
            from palimpsest import connect

            shutil.copytree(mem_path, tmp / "copy")
            owner = connect(mem_path)  # starts the owner process, models as shipped

            def requests(i: int = 0) -> tuple[Request, Callable[[], None]]:
                return owner_requests(Path(mem_path))

        t0 = time.perf_counter()
        send, close = requests()
        send("recall", {"query": questions[0]})  # models and index load
        close()
        warmup_s = time.perf_counter() - t0
        if args.via == "owner":  # the owner idle but for this
            overhead = {"idle": point_query_overhead(Path(mem_path), tmp / "copy")}
        started = datetime.now(UTC)
        stop = time.monotonic() + args.seconds

        def client(i: int) -> None:
            rng = random.Random(args.seed * 1000 + i)
            n = 0
            send, close = requests(i)
            try:
                while time.monotonic() < stop:
                    kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
                    if kind == "recall":
                        a: dict[str, Any] = {"query": rng.choice(questions), "k": 5}
                    elif kind == "facts":
                        now = datetime.now(UTC)
                        a = {
                            "subject": rng.choice(speakers),
                            "valid_at": iso(last - timedelta(days=rng.randrange(400))),
                            "known_at": iso(started + (now - started) * rng.random()),
                        }
                    else:
                        n += 1
                        a = {
                            "text": f"I went to {rng.choice(lc.DEV)} club #{i}-{n}.",
                            "speaker": rng.choice(speakers),
                            "session": f"load-{i}",
                        }
                    t = time.perf_counter()
                    failed = None
                    try:
                        send(kind, a)
                    except Exception as e:  # counted: the bench reports every error
                        failed = {"op": kind, "status": type(e).__name__, "body": str(e)[:300]}
                    dt = time.perf_counter() - t
                    with lock:
                        lat[kind].append(dt)
                        if failed is not None:
                            errors.append(failed)
            finally:
                close()

        load0 = loadavg()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        t1 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t1
        load1 = loadavg()
        if overhead is not None:  # right after the load: the owner still embeds its writes
            overhead["after_load"] = point_query_overhead(Path(mem_path), tmp / "copy")
        lost = None
        if args.via == "http":
            with httpx.Client(base_url=bases[-1], timeout=60.0) as http:
                lost = sum(http.get(f"/v1/episodes/{e}").status_code != 200 for e in acked)
    finally:
        for proc in procs:
            stop_server(proc)
        if pg is not None:
            pg.stop()
        if owner is not None:
            pid = owner.pid
            owner.close()
            os.kill(pid, signal.SIGTERM)  # the owner this bench started
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    out = {
        "bench": "mixed-load",
        "when": iso(datetime.now(UTC)),
        "conversation": args.conversation,
        "clients": args.clients,
        "seconds": round(wall, 1),
        "fill_s": round(fill_s, 1),
        "warmup_s": round(warmup_s, 1),
        "via": args.via,
        "store": "postgresql" if args.postgres else "kuzu",
        "workers": args.workers,
        "read_your_writes_misses": sum(e["status"] == "Unseen" for e in errors),
        "acknowledged_remembers": len(acked),
        "lost_writes": lost,
        "server": "palimpsest serve (uvicorn, spaCy extractor, MiniLM embedder, --no-consolidate)"
        if args.via == "http"
        else "the memory's owner process (spaCy extractor, MiniLM embedder); an OwnerClient "
        "a client thread",
        "mix": dict(MIX),
        "per_op": {
            k: {
                "count": len(v),
                "p50_ms": round(statistics.median(v) * 1000, 1) if v else None,
                "p95_ms": round(pct(v, 0.95) * 1000, 1) if v else None,
                "max_ms": round(max(v) * 1000, 1) if v else None,
                "errors": sum(1 for e in errors if e["op"] == k),
            }
            for k, v in lat.items()
        },
        "errors": len(errors),
        "point_query_overhead": overhead,
        "error_examples": errors[:10],
        "loadavg_before": load0,
        "loadavg_after": load1,
    }
    print(json.dumps(out, indent=1))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        kind = "mixed-load" if args.via == "http" else "mixed-load-owner"
        if args.postgres:
            kind += f"-pg-{args.workers}w"
        path = RESULTS / f"{kind}-{datetime.now(UTC):%Y-%m-%d}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    if errors or lost:
        sys.exit(1)


if __name__ == "__main__":
    main()
