"""What a new user installs and waits for: a fresh venv, its size, cold CLI calls.

>>> # python bench/install.py --venv /tmp/venv-fresh            # install, then measure
>>> # python bench/install.py --venv /tmp/venv-fresh --no-install --runs 7
>>> # python bench/install.py --venv /tmp/venv-fresh --no-install --code /tmp/main --code .
>>> # python bench/install.py --venv /tmp/venv-fresh --no-install --owner   # through an owner

Makes `--venv` with the interpreter running this script (`python -m venv`),
upgrades pip, and runs `pip install ".[models,server]"` from the repository, as a
user does from a clone (no Makefile, no torch pin). Then it reports what pip
resolved (and any `torch*`, `nvidia-*` or `triton` among it: there must be none),
the venv's size (`du -sk`, bytecode included) and an empty venv's size made the
same way, so the install's own share is their difference.

Then the console script, cold, from an unrelated temporary folder (a new memory
there, `palimpsest-data`): `--runs` calls of `palimpsest remember "<a new turn>"`
and of `palimpsest recall "<a question>"`, one after the other, each a new process,
timed from spawn to exit (wall), with its peak RSS from the kernel (`wait4`'s
`ru_maxrss`, what `/usr/bin/time -v` prints as "Maximum resident set size"). The
first remember creates the memory and is reported apart. Medians over the runs;
targets (issue 30): remember <= 3 s and recall <= 2.5 s wall, each <= 500 MB.

Each call opens the memory itself (`PALIMPSEST_OWNER=off`): by default the first
call would start an owner process that answers all the others (`palimpsest.owner`),
and a client's 34 MB would be all there is to measure. `--owner` measures that way
instead, and reports the owner's own peak RSS (`VmHWM`) after the calls.
`--code DIR` (repeatable) runs the calls with `PYTHONPATH=DIR`: the venv's
dependencies with that tree's palimpsest, the trees alternating call by call, each
in its own memory (a baseline and a change, measured in one run).
Writes bench/results/install-<date>[-tag].json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "nvidia-", "triton")
TURNS = [
    "I adopted a grey cat called Pixel{n} from the shelter last week.",
    "My sister Mira moves to Lisbon in May; she starts at the aquarium there{n}.",
    "We booked a cabin by the lake for August, number {n}.",
    "I quit my job at Atlas Robotics and start at Harbour Health on Monday ({n}).",
]
QUESTIONS = [
    "which pet did I get?",
    "where is my sister moving?",
    "where are we staying in the summer?",
    "where do I work now?",
]


def _du_kb(path: Path) -> int:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0])


def _venv(path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    pip = [str(path / "bin" / "python"), "-m", "pip", "install", "-q", "--upgrade", "pip"]
    subprocess.run(pip, check=True)


def install(venv: Path) -> dict[str, Any]:
    """A fresh venv with `.[models,server]`; what pip resolved, the sizes."""
    if venv.exists():
        shutil.rmtree(venv)
    _venv(venv)
    t = time.perf_counter()
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", ".[models,server]"],
        cwd=ROOT,
        check=True,
    )
    seconds = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        _venv(empty)
        empty_kb = _du_kb(empty)
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    names = sorted(p["name"].lower() for p in json.loads(listed))
    venv_kb = _du_kb(venv)
    return {
        "seconds": round(seconds, 1),
        "packages": names,
        "heavy": [n for n in names if n.startswith(HEAVY)],
        "venv_mb": round(venv_kb / 1024, 1),
        "empty_venv_mb": round(empty_kb / 1024, 1),
        "installed_mb": round((venv_kb - empty_kb) / 1024, 1),
    }


def _timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process, from the kernel's accounting."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        assert proc.stderr is not None
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def _env(code: str | None, owner: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PALIMPSEST_OWNER"] = "auto" if owner else "off"
    if code is not None:
        env["PYTHONPATH"] = code
    return env


def _owner_peak_mb(script: str, here: Path, env: dict[str, str]) -> float | None:
    """The owner's VmHWM (MB), then stopped; None when none runs."""
    out = subprocess.run(
        [script, "owner", "status", "--json"], cwd=here, env=env, capture_output=True, text=True
    )
    holder = json.loads(out.stdout or "null") if out.returncode == 0 else None
    if not holder:
        return None
    peak = None
    for line in Path(f"/proc/{holder['pid']}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    subprocess.run([script, "owner", "stop"], cwd=here, env=env, capture_output=True)
    return peak


def _summary(got: list[tuple[float, float]]) -> dict[str, Any]:
    walls, rss = [w for w, _ in got], [r for _, r in got]
    return {
        "wall_s_median": round(statistics.median(walls), 2),
        "rss_mb_median": round(statistics.median(rss)),
        "rss_mb_max": round(max(rss)),
        "wall_s": [round(w, 2) for w in walls],
        "rss_mb": [round(r) for r in rss],
    }


def cold_calls(
    venv: Path, runs: int, codes: list[str | None], owner: bool = False
) -> dict[str, Any]:
    """Per code tree: the first remember, then `runs` remember/recall pairs, the
    trees taking turns call by call."""
    script = str(venv / "bin" / "palimpsest")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="palimpsest-cold-") as tmp:
        dirs = {}
        for n, code in enumerate(codes):
            here = dirs[code] = Path(tmp) / f"code{n}"
            here.mkdir()
            first = _timed([script, "remember", "I live in Porto."], here, _env(code, owner))
            out[str(code)] = {
                "first_remember": {"wall_s": round(first[0], 2), "rss_mb": round(first[1])}
            }
        rows: dict[str | None, dict[str, list[tuple[float, float]]]] = {
            c: {"remember": [], "recall": []} for c in codes
        }
        for n in range(runs):
            turn = TURNS[n % len(TURNS)].format(n=n)
            question = QUESTIONS[n % len(QUESTIONS)]
            for code in codes if n % 2 == 0 else codes[::-1]:
                env, here = _env(code, owner), dirs[code]
                rows[code]["remember"].append(_timed([script, "remember", turn], here, env))
                rows[code]["recall"].append(_timed([script, "recall", question], here, env))
        for code in codes:
            for verb, got in rows[code].items():
                out[str(code)][verb] = _summary(got)
            if owner:
                peak = _owner_peak_mb(script, dirs[code], _env(code, owner))
                out[str(code)]["owner_peak_rss_mb"] = None if peak is None else round(peak)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--venv", type=Path, required=True, help="the fresh venv (replaced)")
    ap.add_argument("--no-install", action="store_true", help="measure the venv as it is")
    ap.add_argument("--runs", type=int, default=5, help="cold calls of each verb")
    ap.add_argument("--tag", default="")
    ap.add_argument(
        "--code",
        action="append",
        default=None,
        metavar="DIR",
        help="run with PYTHONPATH=DIR (repeatable: the trees alternate); default: the venv's",
    )
    ap.add_argument("--owner", action="store_true", help="calls through an owner process")
    args = ap.parse_args()
    report: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "loadavg_start": Path("/proc/loadavg").read_text().split()[:3],
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
    }
    if not args.no_install:
        report["install"] = install(args.venv)
        i = report["install"]
        print(
            f"installed {len(i['packages'])} packages in {i['seconds']} s; venv {i['venv_mb']} MB"
            f" (an empty venv {i['empty_venv_mb']} MB: the install {i['installed_mb']} MB);"
            f" torch/nvidia/triton: {i['heavy'] or 'none'}",
            flush=True,
        )
    codes: list[str | None] = [str(Path(c).resolve()) for c in args.code] if args.code else [None]
    report["owner"] = args.owner
    report["cold"] = cold_calls(args.venv, args.runs, codes, owner=args.owner)
    report["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    for code, got in report["cold"].items():
        print(f"code: {'the venv' if code == 'None' else code}")
        for verb in ("remember", "recall"):
            c = got[verb]
            print(
                f"  cold {verb}: wall median {c['wall_s_median']} s {c['wall_s']},"
                f" peak RSS median {c['rss_mb_median']} MB, max {c['rss_mb_max']} MB"
            )
        f = got["first_remember"]
        print(f"  first remember (creates the memory): {f['wall_s']} s, {f['rss_mb']} MB")
        if "owner_peak_rss_mb" in got:
            print(f"  the owner's peak RSS: {got['owner_peak_rss_mb']} MB")
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    path = out / f"install-{time.strftime('%Y-%m-%d')}{'-' + args.tag if args.tag else ''}.json"
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
