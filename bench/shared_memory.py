"""One memory, three MCP hosts, the CLI beside them (issue 29): writes, a cold recall, RSS.

    python bench/shared_memory.py [--conversation conv-26] [--writes 20] [--rounds 7]

One LoCoMo conversation goes into a fresh memory (`remember_many`, spaCy and
MiniLM, as `palimpsest import` does); a copy of the directory is the baseline's.
Three `palimpsest mcp --path P` processes are started as hosts start them and
spoken to in raw JSON-RPC over stdio; the first starts the owner (models as
shipped). Then:

- writes: each host, at the same time, sends `--writes` assert_fact calls, a
  create_entities and a remember; every answer is checked and timed, and each
  host then reads the others' facts;
- cold recall, `--rounds` times, alternating: `palimpsest --path P recall Q`
  (a new process through the owner; A) and `PALIMPSEST_OWNER=off palimpsest
  --path COPY recall Q` (a new process opening the copy itself, as before issue
  29; B): wall time of the console script, medians and their ratio; one more A
  run reports the heavy modules it loaded;
- RSS (VmRSS, and VmHWM, the peak) of the owner and of each front, and their sum;
- SIGKILL to the owner and the fronts, then a new client: how many acknowledged
  writes it finds, and one write.

Prints JSON and writes bench/results/shared-memory-<date>.json. Targets (issue 29):
cold recall <= 1 s median, loading no model; owner + fronts <= 1.5 GB; each front
<= 100 MB; every acknowledged write found.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from load import loadavg  # noqa: E402
from mixed_load import fill  # noqa: E402

from palimpsest import connect  # noqa: E402
from tests.layers import Host, at_once, owner_pids  # noqa: E402

RESULTS = ROOT / "bench" / "results"
HEAVY = ("kuzu", "torch", "spacy", "sentence_transformers", "transformers", "onnxruntime")
PROBE = """
import atexit, sys
heavy = set(sys.argv[1].split(","))
atexit.register(lambda: print("LOADED", sorted({m.split(".")[0] for m in sys.modules} & heavy)))
from palimpsest.cli import main
main(sys.argv[2:])
"""


def env(**extra: str) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    out.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", **extra)
    return out


def rss(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of a process, MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = round(int(value.split()[0]) / 1024, 1)
    return out


def cli() -> str:
    exe = Path(sys.executable).parent / "palimpsest"
    return str(exe) if exe.exists() else "palimpsest"


def timed(argv: list[str], extra_env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(argv, env=env(**extra_env), capture_output=True, text=True, timeout=600)
    dt = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: {proc.stderr.strip()}")
    return dt, proc.stdout


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--conversation", default="conv-26")
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-save", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tmp = Path(tempfile.mkdtemp(prefix="palimpsest-shared-"))
    path, copy = tmp / "mem", tmp / "copy"
    hosts: list[Host] = []
    out: dict[str, Any] = {"bench": "shared-memory", "when": datetime.now(UTC).isoformat()}
    try:
        t = time.perf_counter()
        questions, speakers, _ = fill(path, args.conversation)
        out["fill_s"] = round(time.perf_counter() - t, 1)
        shutil.copytree(path, copy)
        load0 = loadavg()
        t = time.perf_counter()
        hosts = [Host(path, tmp / f"host{i}.log", env=env()) for i in range(3)]
        out["hosts_initialized_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        hosts[0].call("facts", subject="nobody")  # waits for the owner: started, listening
        out["first_call_s"] = round(time.perf_counter() - t, 2)

        # --- three hosts writing at once ---------------------------------------------------
        lat: list[float] = []
        acked: list[str] = []

        def work(i: int) -> None:
            h = hosts[i]
            for j in range(args.writes):
                t0 = time.perf_counter()
                f = h.call("assert_fact", subject=f"host{i}", predicate="uses", object=f"tool {j}")
                lat.append(time.perf_counter() - t0)
                acked.append(f["id"])
            project = {"name": f"Project {i}", "entityType": "project", "observations": ["x"]}
            h.call("create_entities", entities=[project])
            h.call("remember", text=f"Host {i} prefers green tea.", speaker=speakers[0])

        t = time.perf_counter()
        errors = at_once(work, 3)
        wall = time.perf_counter() - t
        seen = sum(
            len(h.call("facts", subject=f"host{k}", predicate="uses")["facts"])
            for h in hosts
            for k in range(3)
        )
        out["writes"] = {
            "hosts": 3,
            "acknowledged": len(acked),
            "errors": [repr(e) for e in errors],
            "assert_fact_p50_ms": round(statistics.median(lat) * 1000, 1),
            "assert_fact_max_ms": round(max(lat) * 1000, 1),
            "wall_s": round(wall, 2),
            "facts_each_host_sees_of_all": f"{seen}/{3 * 3 * args.writes}",
        }

        # --- cold recall beside them: through the owner (A) vs opening a copy (B) ----------
        a_times, b_times = [], []
        for r in range(args.rounds):
            q = questions[r % len(questions)]
            a_times.append(timed([cli(), "--path", str(path), "recall", q, "--json"], {})[0])
            off = {"PALIMPSEST_OWNER": "off"}
            b_times.append(timed([cli(), "--path", str(copy), "recall", q, "--json"], off)[0])
        _, probe = timed(
            [sys.executable, "-c", PROBE, ",".join(HEAVY), "--path", str(path), "recall",
             questions[0], "--json"], {},
        )  # fmt: skip
        a, b = statistics.median(a_times), statistics.median(b_times)
        out["cold_recall"] = {
            "through_owner_s": [round(x, 3) for x in a_times],
            "in_process_s": [round(x, 3) for x in b_times],
            "through_owner_median_s": round(a, 3),
            "in_process_median_s": round(b, 3),
            "speedup": round(b / a, 1),
            "heavy_modules_loaded_through_owner": json.loads(
                probe.rpartition("LOADED")[2].strip().replace("'", '"')
            ),
        }

        # --- memory -------------------------------------------------------------------------
        owners = owner_pids(path)
        assert len(owners) == 1, owners
        fronts = {str(h.proc.pid): rss(h.proc.pid) for h in hosts}
        owner = rss(owners[0])
        out["rss_mb"] = {
            "owner": owner,
            "fronts": fronts,
            "front_max": max(v["VmRSS"] for v in fronts.values()),
            "total": round(owner["VmRSS"] + sum(v["VmRSS"] for v in fronts.values()), 1),
            "total_peak": round(owner["VmHWM"] + sum(v["VmHWM"] for v in fronts.values()), 1),
        }
        out["loadavg_before"], out["loadavg_after"] = load0, loadavg()

        # --- SIGKILL to every process of the memory --------------------------------------
        for h in hosts:
            h.proc.kill()
        os.kill(owners[0], signal.SIGKILL)
        for h in hosts:
            h.proc.wait(30)
        while Path(f"/proc/{owners[0]}").exists():
            time.sleep(0.05)
        t = time.perf_counter()
        with connect(path) as c:
            found = {f.id for f in c.facts(predicate="uses")}
            c.assert_fact("after", "uses", "a new owner")
            out["after_sigkill"] = {
                "new_owner_first_call_s": round(time.perf_counter() - t, 2),
                "acknowledged": len(acked),
                "found": len(set(acked) & found),
                "write_after": "ok",
            }
            os.kill(c.pid, signal.SIGTERM)
    finally:
        for h in hosts:
            if h.proc.poll() is None:
                h.proc.kill()
        for pid in owner_pids(path):
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(out, indent=1))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        target = RESULTS / f"shared-memory-{datetime.now(UTC):%Y-%m-%d}.json"
        target.write_text(json.dumps(out, indent=1) + "\n")
        print(f"wrote {target}", file=sys.stderr)


if __name__ == "__main__":
    main()
