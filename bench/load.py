"""HTTP load: a real `palimpsest serve` on loopback, N concurrent clients, then a lost-write audit.

    python bench/load.py [--clients 16] [--requests 5000] [--keep]
        [--mix remember=10,assert=30,facts=45,recall=15]

Starts `palimpsest serve` (uvicorn, the real spaCy extractor and MiniLM embedder,
as it ships; `--no-consolidate` so a nightly run cannot land in the middle) on
a free 127.0.0.1 port over a fresh temporary memory, warms the models up with
one remember and one recall (timed apart), then has `--clients` threads, each
with its own httpx client, work through a fixed, seeded list of requests:

- remember: POST /v1/episodes, a short first-person sentence (spaCy + MiniLM)
- assert:   POST /v1/facts, `person<i> lives_in <city>` from a date unique to it
- facts:    GET /v1/facts, an as-of read: a subject at a random valid time, as
            known at a random earlier moment of the run
- recall:   GET /v1/recall, a question (MiniLM + full text)

It reports throughput, p50/p95/max per operation and errors, then audits every
acknowledged write: each episode must read back by id with its text, and each
assertion must be what `facts(subject, lives_in, valid_at=its valid_from,
known_at=its recorded_at)` returns. Results go to bench/results/load-<date>.json.
Bounded: loopback only, one server, `--max-seconds` for the whole run.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
CITIES = ["Berlin", "Lima", "Oslo", "Perth", "Quito", "Seoul", "Accra", "Porto", "Cairo", "Riga"]
NAMES = ["Mira", "Tom", "Ana", "Raj", "Lena", "Kofi", "Yuki", "Omar", "Sara", "Ivan"]
THINGS = ["jazz", "chess", "hiking", "sushi", "the violin", "gardening", "climbing", "tea"]
SENTENCES = [
    "I moved to {city} in March with {name}.",
    "My sister {name} lives in {city} now.",
    "I really like {thing}, said {name} yesterday.",
    "{name} started working at a bakery in {city}.",
    "We met {name} at the station in {city} last week.",
    "I have been learning {thing} since the winter.",
]
QUESTIONS = [
    "where does my sister live?",
    "who lives in {city}?",
    "what does {name} like?",
    "when did I move to {city}?",
    "who works at the bakery?",
]
SUBJECTS = 200
BASE = datetime(2020, 1, 1, tzinfo=UTC)


def iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Op:
    kind: str
    n: int
    rng_seed: int


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    episodes: list[tuple[str, str]] = field(default_factory=list)  # (id, text)
    facts: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def plan(n: int, mix: dict[str, int], seed: int) -> list[Op]:
    rng = random.Random(seed)
    kinds = list(mix)
    weights = [mix[k] for k in kinds]
    return [Op(rng.choices(kinds, weights)[0], i, rng.randrange(1 << 30)) for i in range(n)]


def request(http: httpx.Client, op: Op, started: datetime) -> tuple[httpx.Response, Any]:
    """Send one op; returns the response and what to remember of an acknowledged write."""
    rng = random.Random(op.rng_seed)
    city, name, thing = rng.choice(CITIES), rng.choice(NAMES), rng.choice(THINGS)
    if op.kind == "remember":
        text = rng.choice(SENTENCES).format(city=city, name=name, thing=thing) + f" (#{op.n})"
        r = http.post("/v1/episodes", json={"text": text, "session": f"s{op.n % 50}"})
        return r, text
    if op.kind == "assert":
        subject = f"person{rng.randrange(SUBJECTS)}"
        valid_from = iso(BASE + timedelta(hours=op.n))  # unique: no two land on one start
        body = {"subject": subject, "predicate": "lives_in", "object": city}
        r = http.post("/v1/facts", json={**body, "valid_from": valid_from})
        return r, {**body, "valid_from": valid_from}
    if op.kind == "facts":
        now = datetime.now(UTC)
        known = started + (now - started) * rng.random()
        params = {
            "subject": f"person{rng.randrange(SUBJECTS)}",
            "predicate": "lives_in",
            "valid_at": iso(BASE + timedelta(hours=rng.randrange(6000))),
            "known_at": iso(known),
        }
        return http.get("/v1/facts", params=params), None
    if op.kind == "recall":
        q = rng.choice(QUESTIONS).format(city=city, name=name)
        return http.get("/v1/recall", params={"query": q, "k": 5}), None
    raise ValueError(op.kind)


def worker(
    base: str, ops: queue.Queue[Op], res: Results, started: datetime, stop_at: float
) -> None:
    with httpx.Client(base_url=base, timeout=60.0) as http:
        while time.monotonic() < stop_at:
            try:
                op = ops.get_nowait()
            except queue.Empty:
                return
            t0 = time.perf_counter()
            try:
                r, ack = request(http, op, started)
                status: int | str = r.status_code
            except httpx.HTTPError as e:
                r, ack, status = None, None, type(e).__name__
            dt = time.perf_counter() - t0
            with res.lock:
                res.latencies.setdefault(op.kind, []).append(dt)
                if r is None or r.status_code >= 400:
                    res.errors.append(
                        {
                            "op": op.kind,
                            "n": op.n,
                            "status": status,
                            "body": r.text[:300] if r else "",
                        }
                    )
                elif op.kind == "remember":
                    res.episodes.append((r.json()["id"], ack))
                elif op.kind == "assert":
                    fact = r.json()
                    res.facts.append({**ack, "id": fact["id"], "recorded_at": fact["recorded_at"]})


def audit(http: httpx.Client, res: Results) -> dict[str, Any]:
    """Every acknowledged write must be readable now."""
    lost: list[dict[str, Any]] = []
    for ep_id, text in res.episodes:
        r = http.get(f"/v1/episodes/{ep_id}")
        if r.status_code != 200 or r.json().get("text") != text:
            lost.append({"episode": ep_id, "status": r.status_code})
    for f in res.facts:
        r = http.get(
            "/v1/facts",
            params={
                "subject": f["subject"],
                "predicate": "lives_in",
                "valid_at": f["valid_from"],
                "known_at": f["recorded_at"],
            },
        )
        got = [x["object"] for x in r.json().get("items", [])] if r.status_code == 200 else []
        if got != [f["object"]]:
            lost.append({"fact": f["id"], "expected": f["object"], "got": got})
    return {
        "episodes_checked": len(res.episodes),
        "facts_checked": len(res.facts),
        "lost": len(lost),
        "lost_examples": lost[:10],
    }


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a `palimpsest serve` child as Ctrl-C would (it closes the memory), killing it
    if it has not gone within a minute."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_healthy(proc: subprocess.Popen[bytes], base: str, limit: float) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited early ({proc.returncode})")
        try:
            if httpx.get(f"{base}/v1/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"server not healthy within {limit}s")


def start_workers(
    location: str, n: int, log: Any
) -> tuple[list[subprocess.Popen[bytes]], list[str]]:
    """`n` `palimpsest serve` processes on `location` (`--no-consolidate`), each on its own
    loopback port, once every one answers its health check: (processes, base URLs)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    procs, bases = [], []
    for _ in range(n):
        base = f"http://127.0.0.1:{free_port()}"
        argv = [sys.executable, "-m", "palimpsest.cli", "--path", location, "serve",
                "--host", "127.0.0.1", "--port", base.rsplit(":", 1)[1],
                "--no-consolidate"]  # fmt: skip
        procs.append(subprocess.Popen(argv, env=env, stdout=log, stderr=log, cwd=ROOT))
        bases.append(base)
    for p, b in zip(procs, bases, strict=True):
        wait_healthy(p, b, 240.0)
    return procs, bases


def loadavg() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--mix", default="remember=10,assert=30,facts=45,recall=15")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-seconds", type=float, default=1200.0, help="Bound on the whole run.")
    ap.add_argument("--out", type=Path, default=None, help="Results JSON (default: dated).")
    ap.add_argument("--keep", action="store_true", help="Keep the temporary memory and log.")
    args = ap.parse_args()
    if not (1 <= args.clients <= 256 and 1 <= args.requests <= 100_000):
        ap.error("--clients 1..256, --requests 1..100000")
    mix = {k: int(v) for k, v in (part.split("=") for part in args.mix.split(","))}
    if set(mix) - {"remember", "assert", "facts", "recall"}:
        ap.error("--mix: remember, assert, facts, recall")
    stop_at = time.monotonic() + args.max_seconds

    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-load-"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.setdefault("HF_HUB_OFFLINE", "1")
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(tmp / "mem"), "serve",
            "--host", "127.0.0.1", "--port", str(port), "--no-consolidate"]  # fmt: skip
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=log, cwd=ROOT)
    try:
        t0 = time.perf_counter()
        wait_healthy(proc, base, 120.0)
        startup_s = time.perf_counter() - t0
        with httpx.Client(base_url=base, timeout=120.0) as http:
            t0 = time.perf_counter()
            http.post("/v1/episodes", json={"text": "Warm-up: I live in Oslo."}).raise_for_status()
            http.get("/v1/recall", params={"query": "where do I live?"}).raise_for_status()
            warmup_s = time.perf_counter() - t0

        ops: queue.Queue[Op] = queue.Queue()
        for op in plan(args.requests, mix, args.seed):
            ops.put(op)
        res = Results()
        started = datetime.now(UTC)
        load0 = loadavg()
        t0 = time.perf_counter()
        threads = [
            threading.Thread(target=worker, args=(base, ops, res, started, stop_at))
            for _ in range(args.clients)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        load1 = loadavg()
        done = sum(len(v) for v in res.latencies.values())
        with httpx.Client(base_url=base, timeout=120.0) as http:
            t1 = time.perf_counter()
            checked = audit(http, res)
            audit_s = time.perf_counter() - t1
    finally:
        stop_server(proc)
        log.close()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    per_op = {
        k: {
            "count": len(v),
            "p50_ms": round(statistics.median(v) * 1000, 2),
            "p95_ms": round(pct(v, 0.95) * 1000, 2),
            "max_ms": round(max(v) * 1000, 2),
            "errors": sum(1 for e in res.errors if e["op"] == k),
        }
        for k, v in sorted(res.latencies.items())
    }
    out = {
        "bench": "load",
        "when": iso(datetime.now(UTC)),
        "clients": args.clients,
        "requests_planned": args.requests,
        "requests_done": done,
        "mix": mix,
        "server": "palimpsest serve (uvicorn, spaCy extractor, MiniLM embedder, --no-consolidate)",
        "startup_s": round(startup_s, 2),
        "warmup_s": round(warmup_s, 2),
        "wall_s": round(wall, 2),
        "throughput_rps": round(done / wall, 1) if wall else None,
        "per_op": per_op,
        "errors": len(res.errors),
        "error_examples": res.errors[:10],
        "audit": {**checked, "seconds": round(audit_s, 2)},
        "loadavg_before": load0,
        "loadavg_after": load1,
        "cpus": os.cpu_count(),
    }
    path = args.out or RESULTS / f"load-{datetime.now(UTC):%Y-%m-%d}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    print(f"written to {path}", file=sys.stderr)
    if res.errors or checked["lost"] or done < args.requests:
        sys.exit(1)


if __name__ == "__main__":
    main()
