"""Dashboard benchmark: an entity page's API calls and the graph view at 100k facts.

>>> # python bench/ui.py                     # builds the memory once (cached), then measures
>>> # python bench/ui.py --facts 20000 --samples 50      # a smaller smoke run

The memory is built once through the public bulk path (`Memory.assert_many`, the
import's batch size, a transaction clock advancing 10 minutes a call) and cached
outside the repository (`--cache`, default $TMPDIR/palimpsest-bench/ui-<facts>/). The
seeded mix, per subject: lives_in, works_at, job_title (`one`), likes and visited
(`many`), then about one later move or job change per subject (supersessions), so
subjects have 5-8 versions; one entity in ten `knows hub`, so the hub's neighbourhood
(~1,500 facts) is much wider than any limit.

Then `palimpsest serve` (uvicorn, its defaults: spaCy and MiniLM configured, loopback,
no tokens) serves that memory and, over HTTP with one keep-alive client, for
`--samples` random subjects, the calls an entity page makes:

* `GET /v1/timeline?subject=S` and `GET /v1/entities/S` (the page's first paint, and
  again with a `known_at` as the slider moves), `GET /v1/facts/{id}/explanation` (a
  click on a version), `GET /v1/entities:search?q=` (the search box);
* `GET /v1/neighbourhood?entity=S&hops=2` (the graph view) for the subjects and the hub,
  with the node count it returned against its limit (50);
* the same page for cities, the objects ~17 facts each point at.

Baselines in the same run: `GET /v1/health` (the HTTP floor) and `GET /v1/history`
(an existing read of the same versions). Medians and p95; nothing is asserted.
Results go to stdout and `bench/results/ui-<date>.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from load import free_port, stop_server, wait_healthy

from palimpsest import Memory
from palimpsest.engine.writer import IMPORT_BATCH

SEED = 20261201
K0 = datetime(2025, 1, 1, tzinfo=UTC)
TICK = timedelta(minutes=10)
CITIES = [f"city-{i}" for i in range(2_000)]
FIRMS = [f"firm-{i}" for i in range(5_000)]
TITLES = [f"title-{i}" for i in range(300)]
THINGS = [f"thing-{i}" for i in range(10_000)]
HUB_SHARE = 0.1  # of subjects that know the hub


class Clock:
    def __init__(self) -> None:
        self.now = K0

    def __call__(self) -> datetime:
        return self.now


def _day(rng: random.Random, lo: int = 2010, hi: int = 2026) -> str:
    d = datetime(lo, 1, 1, tzinfo=UTC) + timedelta(days=rng.randrange((hi - lo) * 365))
    return d.isoformat()


def items(n: int, rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """`n` assertions of the mix, in the order they are written, and the subject count."""
    out: list[dict[str, Any]] = []
    subjects = 0
    while len(out) < n:
        s = f"person-{subjects}"
        subjects += 1
        start = _day(rng, 2010, 2018)
        out += [
            {"subject": s, "predicate": p, "object": rng.choice(pool), "valid_from": start}
            for p, pool in (("lives_in", CITIES), ("works_at", FIRMS), ("job_title", TITLES))
        ]
        out += [
            {"subject": s, "predicate": "likes", "object": rng.choice(THINGS)},
            {"subject": s, "predicate": "visited", "object": rng.choice(CITIES),
             "valid_from": start, "valid_to": _day(rng, 2018, 2019)},
        ]  # fmt: skip
        if rng.random() < HUB_SHARE:
            out.append({"subject": s, "predicate": "knows", "object": "hub"})
        if subjects > 10 and rng.random() < 0.9:  # a later change of an older subject
            old = f"person-{rng.randrange(subjects - 1)}"
            pred = rng.choice(("lives_in", "works_at"))
            pool = CITIES if pred == "lives_in" else FIRMS
            out.append(
                {"subject": old, "predicate": pred, "object": rng.choice(pool),
                 "valid_from": _day(rng, 2019, 2026)}
            )  # fmt: skip
    return out[:n], subjects


def build(path: Path, n: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    rows, subjects = items(n, rng)
    clock = Clock()
    t0 = time.perf_counter()
    with Memory.open(path, clock=clock, extractor=None, embedder=None) as mem:
        mem.define_predicate("lives_in", "one")
        mem.define_predicate("works_at", "one")
        mem.define_predicate("job_title", "one")
        for i in range(0, len(rows), IMPORT_BATCH):
            clock.now += TICK
            mem.assert_many(rows[i : i + IMPORT_BATCH])
        st = mem.stats()
    meta = {
        "facts": len(rows),
        "subjects": subjects,
        "assertions": st.assertions,
        "versions": st.versions,
        "entities": st.entities,
        "build_s": round(time.perf_counter() - t0, 1),
    }
    (path / "bench-ui.json").write_text(json.dumps(meta))
    return meta


def serve(path: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["HF_HUB_OFFLINE"] = "1"
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(path), "serve",
            "--port", str(port), "--no-consolidate"]  # fmt: skip
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    wait_healthy(proc, base, 120.0)
    return proc, base


def stats(ms: list[float]) -> dict[str, float]:
    a = np.array(ms)
    return {"n": len(ms), "p50_ms": round(float(np.median(a)), 2),
            "p95_ms": round(float(np.percentile(a, 95)), 2),
            "max_ms": round(float(a.max()), 2)}  # fmt: skip


def timed(http: httpx.Client, path: str, **params: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    r = http.get(path, params=params)
    ms = (time.perf_counter() - t) * 1000
    if r.status_code != 200:
        raise SystemExit(f"{path} {params}: {r.status_code} {r.text[:200]}")
    return ms, r.json()


def measure(base: str, subjects: int, samples: int) -> dict[str, Any]:
    rng = random.Random(SEED + 1)
    picks = [f"person-{rng.randrange(subjects)}" for _ in range(samples)]
    calls: dict[str, list[float]] = {
        k: []
        for k in ("health", "history", "timeline", "profile", "timeline_known_at",
                  "profile_known_at", "page_first_paint", "explanation", "search",
                  "neighbourhood_2hops", "neighbourhood_hub", "city_timeline",
                  "city_profile", "city_neighbourhood_2hops")
    }  # fmt: skip
    nodes: list[int] = []
    hub_nodes: list[int] = []
    truncated = 0
    with httpx.Client(base_url=base, timeout=120) as http:
        for s in picks[:5]:  # warm-up: caches, the first planning of each statement
            timed(http, "/v1/timeline", subject=s)
            timed(http, f"/v1/entities/{s}")
            timed(http, "/v1/neighbourhood", entity=s, hops=2)
        for s in picks:
            calls["health"].append(timed(http, "/v1/health")[0])
            calls["history"].append(timed(http, "/v1/history", subject=s)[0])
            a, tl = timed(http, "/v1/timeline", subject=s)
            b, _ = timed(http, f"/v1/entities/{s}")
            calls["timeline"].append(a)
            calls["profile"].append(b)
            calls["page_first_paint"].append(a + b)  # sequential: the page sends them together
            moments = tl["moments"]
            k = moments[len(moments) // 2] if moments else None
            calls["timeline_known_at"].append(timed(http, "/v1/timeline", subject=s, known_at=k)[0])
            calls["profile_known_at"].append(timed(http, f"/v1/entities/{s}", known_at=k)[0])
            v = tl["versions"][rng.randrange(len(tl["versions"]))]
            calls["explanation"].append(
                timed(http, f"/v1/facts/{v['id']}/explanation", version_id=v["version_id"])[0]
            )
            q = s[: 6 + rng.randrange(6)]
            calls["search"].append(timed(http, "/v1/entities:search", q=q)[0])
            ms, g = timed(http, "/v1/neighbourhood", entity=s, hops=2)
            calls["neighbourhood_2hops"].append(ms)
            nodes.append(len(g["nodes"]))
            truncated += bool(g["truncated"])
        for _ in range(max(5, samples // 10)):
            ms, g = timed(http, "/v1/neighbourhood", entity="hub", hops=2)
            calls["neighbourhood_hub"].append(ms)
            hub_nodes.append(len(g["nodes"]))
        # entities that many facts point at (~17 each): a city's page
        for c in [rng.choice(CITIES) for _ in range(max(10, samples // 4))]:
            calls["city_timeline"].append(timed(http, "/v1/timeline", subject=c)[0])
            calls["city_profile"].append(timed(http, f"/v1/entities/{c}")[0])
            ms, g = timed(http, "/v1/neighbourhood", entity=c, hops=2)
            calls["city_neighbourhood_2hops"].append(ms)
            nodes.append(len(g["nodes"]))
    out: dict[str, Any] = {k: stats(v) for k, v in calls.items()}
    out["graph_nodes"] = {"limit": 50, "max": max(nodes), "median": float(np.median(nodes)),
                          "truncated": truncated, "hub_max": max(hub_nodes)}  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--cache", type=Path, default=None)
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    cache = args.cache or Path(tempfile.gettempdir()) / "palimpsest-bench" / f"ui-{args.facts}"
    if args.rebuild and cache.exists():
        import shutil

        shutil.rmtree(cache)
    if not (cache / "bench-ui.json").exists():
        print(f"building {cache} ...", flush=True)
        meta = build(cache, args.facts)
    else:
        meta = json.loads((cache / "bench-ui.json").read_text())
    print(json.dumps(meta))
    proc, base = serve(cache)
    try:
        result = measure(base, meta["subjects"], args.samples)
    finally:
        stop_server(proc)
    report = {"memory": meta, "machine": platform.platform(), "cpus": os.cpu_count(),
              "when": datetime.now(UTC).isoformat(), "results": result}  # fmt: skip
    for k, v in result.items():
        print(f"{k:<22} {v}")
    name = f"ui-{args.facts // 1000}k-{datetime.now(UTC):%Y-%m-%d}.json"
    out = Path(__file__).parent / "results" / name
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"-> {out}")


if __name__ == "__main__":
    main()
