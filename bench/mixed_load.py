"""Mixed load on one LoCoMo conversation: recall, as-of facts, remember, through a server.

    python bench/mixed_load.py [--clients 8] [--seconds 60] [--conversation conv-26]
    python bench/mixed_load.py --via owner      # through the memory's owner (issue 29)

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
turn). Reports per operation count, p50/p95/max and errors (any status >= 400,
any exception); with `--via owner` also the proxy's per-call overhead: the p50 of
a point query (`facts(subject, predicate)`) in this process on a copy of the
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

import locomo_data as lc
from load import free_port, iso, loadavg, pct, stop_server, wait_healthy

from palimpsest import Memory
from palimpsest.transfer import parse_locomo

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MIX = (("recall", 40), ("facts", 40), ("remember", 20))
Request = Callable[[str, dict[str, Any]], None]  # (op, arguments): raises on failure


def fill(path: Path, conv_id: str) -> tuple[list[str], list[str], datetime]:
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


def http_requests(base: str) -> tuple[Request, Callable[[], None]]:
    """One client's requests to `palimpsest serve` over HTTP."""
    http = httpx.Client(base_url=base, timeout=120.0)
    paths = {"recall": ("GET", "/v1/recall"), "facts": ("GET", "/v1/facts")}

    def send(op: str, a: dict[str, Any]) -> None:
        if op == "remember":
            r = http.post("/v1/episodes", json=a)
        else:
            method, url = paths[op]
            r = http.request(method, url, params=a)
        if r.status_code >= 400:
            raise Failed(f"{r.status_code} {r.text[:300]}")

    return send, http.close


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
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-mixed-"))
    mem_path = tmp / "mem"
    t0 = time.perf_counter()
    questions, speakers, last = fill(mem_path, args.conversation)
    fill_s = time.perf_counter() - t0
    lat: dict[str, list[float]] = {k: [] for k, _ in MIX}
    errors: list[dict[str, Any]] = []
    lock = threading.Lock()
    proc: subprocess.Popen[bytes] | None = None
    owner: Any = None
    overhead: dict[str, Any] | None = None
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed in finally
    try:
        if args.via == "http":
            base = f"http://127.0.0.1:{free_port()}"
            env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
            argv_ = [sys.executable, "-m", "palimpsest.cli", "--path", str(mem_path), "serve",
                     "--host", "127.0.0.1", "--port", base.rsplit(":", 1)[1],
                     "--no-consolidate"]  # fmt: skip
            proc = subprocess.Popen(argv_, env=env, stdout=log, stderr=log, cwd=ROOT)
            wait_healthy(proc, base, 180.0)

            def requests() -> tuple[Request, Callable[[], None]]:
                return http_requests(base)
        else:
            from palimpsest import connect

            shutil.copytree(mem_path, tmp / "copy")
            owner = connect(mem_path)  # starts the owner process, models as shipped

            def requests() -> tuple[Request, Callable[[], None]]:
                return owner_requests(mem_path)

        t0 = time.perf_counter()
        send, close = requests()
        send("recall", {"query": questions[0]})  # models and index load
        close()
        warmup_s = time.perf_counter() - t0
        if args.via == "owner":  # the owner idle but for this
            overhead = {"idle": point_query_overhead(mem_path, tmp / "copy")}
        started = datetime.now(UTC)
        stop = time.monotonic() + args.seconds

        def client(i: int) -> None:
            rng = random.Random(args.seed * 1000 + i)
            n = 0
            send, close = requests()
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
            overhead["after_load"] = point_query_overhead(mem_path, tmp / "copy")
    finally:
        if proc is not None:
            stop_server(proc)
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
        path = RESULTS / f"{kind}-{datetime.now(UTC):%Y-%m-%d}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
