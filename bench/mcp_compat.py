"""`palimpsest mcp` against the official MCP memory server: time per call, same client.

>>> # make bench-mcp                       # or: python bench/mcp_compat.py [--no-models]

Both servers are subprocesses driven by the official MCP Python client over stdio
(`tests/mcp_session.py` starts them; the official one is installed with npm into
`.cache/mcp-peer`). The workload is issue 19's: 2,000 entities with 3 observations
each and 2,000 relations, written in batches of 100, then 100 more observations a
call, searches, opens and a whole-graph read. Startup is spawn to the first
`tools/list` answer, median of 3, at the defaults a user's host gets (Palimpsest
with its models unless `--no-models`). Each other row is the median wall time of
that tool's calls, measured at the client; ratio = palimpsest / official.
`--cpus 0` pins the bench and both servers to CPU 0 (as `taskset -c 0` does) on a
shared machine; the load average at the start and end is printed and recorded.
Palimpsest's owners outlive their client (they stop after 3 s idle, and go on loading
the models meanwhile): the timed session starts once the startup runs' owners are
gone, so it meets only its own. Its first calls still overlap that owner loading
spaCy and MiniLM in the background (what a host meets in its first seconds);
`--settled` waits until the owner has loaded them, for the steady state.
Writes bench/results/mcp-compat-<date>[-tag].json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import mcp_session as ms

N, OBS, RELS, BATCH = 2000, 3, 2000, 100
TYPES = ["knows", "works_at", "lives in", "mentors", "WORKS_WITH"]


def workload(seed: int = 7) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    names = [f"Entity {i:04d}" for i in range(N)]
    calls: list[tuple[str, dict[str, Any]]] = []
    for b in range(0, N, BATCH):
        ents = [
            {
                "name": n,
                "entityType": rng.choice(["person", "company", "city", "project"]),
                "observations": [f"{n} fact {j}: {rng.randrange(10**6)}" for j in range(OBS)],
            }
            for n in names[b : b + BATCH]
        ]
        calls.append(("create_entities", {"entities": ents}))
    pairs: set[tuple[str, str, str]] = set()
    while len(pairs) < RELS:
        a, c = rng.sample(names, 2)
        pairs.add((a, rng.choice(TYPES), c))
    rels = [{"from": a, "to": c, "relationType": t} for a, t, c in sorted(pairs)]
    for b in range(0, RELS, BATCH):
        calls.append(("create_relations", {"relations": rels[b : b + BATCH]}))
    for b in range(0, 1000, BATCH):
        obs = [{"entityName": n, "contents": [f"{n} later note"]} for n in names[b : b + BATCH]]
        calls.append(("add_observations", {"observations": obs}))
    for _ in range(20):
        calls.append(("search_nodes", {"query": f"Entity {rng.randrange(N):04d}"}))
    for _ in range(20):
        calls.append(("open_nodes", {"names": rng.sample(names, 5)}))
    for _ in range(3):
        calls.append(("read_graph", {}))
    return calls


@contextlib.asynccontextmanager
async def connected(params: Any, log: Path) -> AsyncIterator[Any]:
    """An initialised client session on a fresh server that has listed its tools."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with log.open("a") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            yield session


async def startup(params: Any, log: Path) -> float:
    t0 = time.perf_counter()
    async with connected(params, log):
        return (time.perf_counter() - t0) * 1000


async def timed(
    params: Any, calls: list[tuple[str, dict[str, Any]]], log: Path, settle: Path | None = None
) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    async with connected(params, log) as session:
        if settle is not None:  # the owner's log says when its models are loaded
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                if settle.exists() and "models loaded" in settle.read_text(errors="replace"):
                    break
                await anyio.sleep(0.2)
        for tool, arguments in calls:
            t0 = time.perf_counter()
            r = await session.call_tool(tool, arguments)
            out.setdefault(tool, []).append((time.perf_counter() - t0) * 1000)
            if r.is_error:
                raise RuntimeError(f"{tool}: {r.content[0].text}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-models", action="store_true", help="palimpsest mcp --no-models")
    parser.add_argument("--cpus", help="pin to these CPUs, e.g. 0 or 0,1 (servers too)")
    parser.add_argument("--tag", default="", help="suffix of the results file name")
    parser.add_argument(
        "--settled", action="store_true", help="time the calls once the models are loaded"
    )
    args = parser.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, {int(c) for c in args.cpus.split(",")})
    load = [os.getloadavg()[0]]
    script = ms.install_official()
    calls = workload()
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for who in ("official", "palimpsest"):
            runs = []
            for i in range(3):
                work = root / f"{who}-start-{i}"
                work.mkdir()
                runs.append(anyio.run(startup, _params(who, script, work, args), root / "log"))
            rows.setdefault("startup", {})[who] = statistics.median(runs)
            _wait_gone([root / f"{who}-start-{i}" for i in range(3)])
            work = root / who
            work.mkdir()
            settle = work / "mem" / "owner.log" if who == "palimpsest" and args.settled else None
            for tool, ms_ in anyio.run(
                timed, _params(who, script, work, args), calls, root / "log", settle
            ).items():
                rows.setdefault(tool, {})[who] = statistics.median(ms_)
    print(f"{'per call (median ms)':<22}{'official':>10}{'palimpsest':>12}{'ratio':>8}")
    for tool, r in rows.items():
        ratio = r["palimpsest"] / r["official"]
        rows[tool]["ratio"] = ratio
        print(f"{tool:<22}{r['official']:>10.1f}{r['palimpsest']:>12.1f}{ratio:>8.2f}")
    load.append(os.getloadavg()[0])
    print(f"load average (1 min) at start and end: {load[0]:.2f}, {load[1]:.2f}")
    tag = f"-{args.tag}" if args.tag else ""
    out = Path(__file__).parent / "results" / f"mcp-compat-{date.today()}{tag}.json"
    meta = {"entities": N, "observations": OBS, "relations": RELS, "batch": BATCH}
    body = {"workload": meta, "models": not args.no_models, "cpus": args.cpus, "load": load}
    body["settled"] = args.settled
    out.write_text(json.dumps({**body, "rows": rows}, indent=2))
    print(f"wrote {out}")


def _wait_gone(dirs: list[Path], timeout: float = 120.0) -> None:
    """Until no process runs with one of these directories on its command line (the
    owners the startup runs left behind)."""
    marks = [str(d).encode() for d in dirs]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = False
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                text = cmdline.read_bytes()
            except OSError:
                continue
            if any(m in text for m in marks):
                alive = True
                break
        if not alive:
            return
        time.sleep(0.2)


def _params(who: str, script: Path, work: Path, args: argparse.Namespace) -> Any:
    if who == "official":
        return ms.official_params(script, work)
    params = ms.palimpsest_params(work)
    if not args.no_models:
        params.args = [a for a in params.args if a != "--no-models"]
    return params


if __name__ == "__main__":
    main()
