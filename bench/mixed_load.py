"""Mixed load on a real server holding one LoCoMo conversation: recall, as-of facts, remember.

    python bench/mixed_load.py [--clients 8] [--seconds 60] [--conversation conv-26]

One LoCoMo conversation goes into a fresh memory as the shipped importer reads it
(`remember_many` of `parse_locomo`'s items, extraction and MiniLM on); then
`palimpsest serve` (uvicorn, `--no-consolidate`) opens it on a free loopback
port, one recall warms the models and recall's index up (timed apart:
tests/test_recall_concurrency.py covers a fresh process's first recall under
writers), and `--clients` threads, each with its own httpx client, send requests
for `--seconds`: 40% `GET /v1/recall` (a LoCoMo question of the conversation,
k=5), 40% `GET /v1/facts` as of a random valid time and a random earlier moment
of the run (a speaker as subject), 20% `POST /v1/episodes` (a new turn). Reports
per operation count, p50/p95/max and errors (any status >= 400 or transport
error); writes bench/results/mixed-load-<date>.json. Exits 1 on any error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
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

import locomo_data as lc
from load import free_port, iso, loadavg, pct, stop_server, wait_healthy

from palimpsest import Memory
from palimpsest.transfer import parse_locomo

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MIX = (("recall", 40), ("facts", 40), ("remember", 20))


def fill(path: Path, conv_id: str) -> tuple[list[str], list[str], datetime]:
    """The memory with the conversation; its questions, speakers and last turn time."""
    _, questions, _ = lc.load_locomo()
    items = parse_locomo(lc.DATA.read_text(), conversations=[conv_id])
    with Memory.open(path) as mem:
        mem.remember_many(items)  # what `import_locomo` does, in one batch
    speakers = sorted({str(i["speaker"]) for i in items})
    last = max(i["occurred_at"] for i in items)
    return [q.text for q in questions if q.conv_id == conv_id], speakers, last


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-mixed-"))
    t0 = time.perf_counter()
    questions, speakers, last = fill(tmp / "mem", args.conversation)
    fill_s = time.perf_counter() - t0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    argv_ = [sys.executable, "-m", "palimpsest.cli", "--path", str(tmp / "mem"), "serve",
             "--host", "127.0.0.1", "--port", str(port), "--no-consolidate"]  # fmt: skip
    log = open(tmp / "server.log", "wb")  # noqa: SIM115 - closed in finally
    proc = subprocess.Popen(argv_, env=env, stdout=log, stderr=log, cwd=ROOT)
    lat: dict[str, list[float]] = {k: [] for k, _ in MIX}
    errors: list[dict[str, Any]] = []
    lock = threading.Lock()
    try:
        wait_healthy(proc, base, 180.0)
        t0 = time.perf_counter()
        with httpx.Client(base_url=base, timeout=600.0) as http:  # models and index load
            http.get("/v1/recall", params={"query": questions[0]}).raise_for_status()
        warmup_s = time.perf_counter() - t0
        started = datetime.now(UTC)
        stop = time.monotonic() + args.seconds

        def client(i: int) -> None:
            rng = random.Random(args.seed * 1000 + i)
            n = 0
            with httpx.Client(base_url=base, timeout=120.0) as http:
                while time.monotonic() < stop:
                    kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
                    t = time.perf_counter()
                    try:
                        if kind == "recall":
                            r = http.get(
                                "/v1/recall", params={"query": rng.choice(questions), "k": 5}
                            )
                        elif kind == "facts":
                            now = datetime.now(UTC)
                            valid = last - timedelta(days=rng.randrange(400))
                            r = http.get(
                                "/v1/facts",
                                params={
                                    "subject": rng.choice(speakers),
                                    "valid_at": iso(valid),
                                    "known_at": iso(started + (now - started) * rng.random()),
                                },
                            )
                        else:
                            n += 1
                            r = http.post(
                                "/v1/episodes",
                                json={
                                    "text": f"I went to {rng.choice(lc.DEV)} club #{i}-{n}.",
                                    "speaker": rng.choice(speakers),
                                    "session": f"load-{i}",
                                },
                            )
                        status: int | str = r.status_code
                        body = r.text[:300] if r.status_code >= 400 else ""
                    except httpx.HTTPError as e:
                        status, body = type(e).__name__, str(e)[:300]
                    dt = time.perf_counter() - t
                    with lock:
                        lat[kind].append(dt)
                        if not isinstance(status, int) or status >= 400:
                            errors.append({"op": kind, "status": status, "body": body})

        load0 = loadavg()
        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        t1 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t1
        load1 = loadavg()
    finally:
        stop_server(proc)
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
        "server": "palimpsest serve (uvicorn, spaCy extractor, MiniLM embedder, --no-consolidate)",
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
        "error_examples": errors[:10],
        "loadavg_before": load0,
        "loadavg_after": load1,
    }
    print(json.dumps(out, indent=1))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"mixed-load-{datetime.now(UTC):%Y-%m-%d}.json"
        path.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
