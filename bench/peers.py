"""Palimpsest and its peers on LoCoMo's development split, through one driver, in one run.

>>> # python bench/peers.py --setup                 # peers' venvs (once; needs PyPI)
>>> # python bench/peers.py --quick                 # conv-26 only, a smoke run
>>> # python bench/peers.py                         # all five dev conversations
>>> # python bench/peers.py --systems palimpsest,compartment-norecency

Every system runs in a subprocess of its own venv (bench/peers/*_driver.py,
speaking bench/peers/_wire.py's JSON lines): Palimpsest in the project's venv,
each peer in the venv `--setup` made for it outside the repository. The systems
run one after another, each over the same turns (`parse_locomo`'s items: the
turn text with a shared image's caption, its speaker, session, `dia_id` and
time) and the same questions (bench/locomo_baselines.py's, every category,
adversarial included). Each conversation gets a fresh memory; before the first,
a throwaway memory takes 20 turns and one question so no system's model loading
is timed. Each question is asked twice, `k=10` then `k=5`: recall@k is the share
of the question's evidence turns among the turns of the k hits the k-call
returned (a Palimpsest fact hit takes a place but counts only in the
"facts credited" line, where its evidence episodes count). Ingest ms/turn is the
wall time of the driver's ingest calls over the turns, and beside it the CPU time
the system's process spent in them (all its threads; on a machine shared with other
work the wall time of two systems run minutes apart moves with the load, the CPU
time much less, so compare ingest by both); search p50/p95 are over
the k=10 calls (each question's first); both are timed inside the system's
process around the driver call alone (the pipe is outside).
Writes bench/results/peers-<date>[-quick].json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

import _setup
import locomo
import locomo_data as lc

HERE = Path(__file__).resolve().parent
KS = (5, 10)
WARM_TURNS = 20


@dataclass(frozen=True)
class System:
    """One row of the table: a driver, and the open options that make it this row."""

    key: str
    label: str
    peer: str  # "palimpsest" or a key of _setup.PEERS
    options: dict[str, Any] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


SYSTEMS = {
    s.key: s
    for s in (
        System("palimpsest", "Palimpsest, defaults", "palimpsest"),
        System("palimpsest-min0", "Palimpsest, min_score=0", "palimpsest", {"min_score": 0}),
        System("compartment", "Compartment {compartment}, defaults", "compartment"),
        System(
            "compartment-norecency",
            "Compartment {compartment}, recency off",
            "compartment",
            {"recency_half_life_share": 0},
        ),
        System(
            "mem0",
            "Mem0 {mem0ai}, infer=False, MiniLM + embedded Qdrant + BM25",
            "mem0",
        ),
        # not in the default run: what Mem0 silently does without its offline BM25 files
        System(
            "mem0-nobm25",
            "Mem0 {mem0ai}, infer=False, no BM25 files (dense only)",
            "mem0",
            env={"FASTEMBED_CACHE_PATH": "{scratch}/empty-fastembed"},
        ),
    )
}
DEFAULT = ("palimpsest", "palimpsest-min0", "compartment", "compartment-norecency", "mem0")


class PeerProcess:
    """One system's subprocess; `call` sends a request and returns its answer."""

    def __init__(self, system: System, scratch: Path, cpus: set[int] | None) -> None:
        if system.peer == "palimpsest":
            python, driver = Path(sys.executable), HERE / "peers" / "palimpsest_driver.py"
        else:
            peer = _setup.PEERS[system.peer]
            if not peer.python.exists():
                raise SystemExit(f"no venv for {peer.name}: run python bench/peers.py --setup")
            python, driver = peer.python, HERE / "peers" / peer.driver
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        env |= {
            "COMPARTMENT_SESSION_DIR": str(scratch / "compartment-session"),
            "MEM0_TELEMETRY": "False",
            "MEM0_DIR": str(scratch / "mem0-home"),
            "FASTEMBED_CACHE_PATH": str(_setup.FASTEMBED_CACHE),
        }
        env |= {k: v.format(scratch=scratch) for k, v in system.env.items()}
        self.proc = subprocess.Popen(
            [str(python), str(driver)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
            # the mask is inherited by what the driver starts (Compartment's embedding daemon)
            preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
        )

    def call(self, op: str, **kw: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **kw}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"driver exited (code {self.proc.wait()}) during {op!r}")
        answer: dict[str, Any] = json.loads(line)
        if not answer.get("ok"):
            raise RuntimeError(f"{op}: {answer.get('error')}")
        return answer

    def end(self) -> None:
        with contextlib.suppress(RuntimeError, BrokenPipeError):
            self.call("exit")
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def conversation_turns(conv: lc.Conversation) -> tuple[list[dict[str, Any]], str]:
    """The turns every system ingests, and the time the questions are asked."""
    items = locomo._items(conv)
    now = max(i["occurred_at"] for i in items) + timedelta(days=1)
    turns = [
        {
            "dia_id": i["source"],
            "speaker": i["speaker"],
            "text": i["text"],
            "session": i["session"],
            "occurred_at": i["occurred_at"].isoformat(),
        }
        for i in items
    ]
    return turns, now.isoformat()


def share(hits: Sequence[dict[str, Any]], evidence: Sequence[str], k: int, facts: bool) -> float:
    """Share of `evidence` among the turns of the first k hits (derived hits if `facts`)."""
    top: set[str] = set()
    for h in hits[:k]:
        if facts or not h.get("derived"):
            top.update(h["turns"])
    return lc.evidence_share(top, evidence)


def run_system(
    system: System,
    data: Sequence[tuple[lc.Conversation, list[dict[str, Any]], str, list[lc.Question]]],
    scratch: Path,
    cpus: set[int] | None,
) -> dict[str, Any]:
    """Every conversation through one system; its answers' scores, timings and checks."""
    t_start = time.perf_counter()
    proc = PeerProcess(system, scratch, cpus)
    try:
        info = proc.call("info")
        _, first_turns, now, first_qs = data[0]
        warm = scratch / f"{system.key}-warm"
        proc.call("open", path=str(warm), conv_id="warm-up", now=now, options=system.options)
        proc.call("ingest", turns=first_turns[:WARM_TURNS])
        proc.call("search", query=first_qs[0].text, k=10)
        proc.call("close")
        rows: dict[str, list[tuple[int, dict[int, float]]]] = {"strict": [], "facts": []}
        per_q: list[dict[int, float]] = []
        ingest_ms, ingest_cpu_ms, n_turns, lat = 0.0, 0.0, 0, {k: [] for k in KS}
        checks = {}
        for conv, turns, now, qs in data:
            path = scratch / f"{system.key}-{conv.conv_id}"
            proc.call("open", path=str(path), conv_id=conv.conv_id, now=now, options=system.options)
            took = proc.call("ingest", turns=turns)
            ingest_ms += took["ms"]
            ingest_cpu_ms += took.get("cpu_ms", float("nan"))
            n_turns += len(turns)
            check = {k: v for k, v in proc.call("check", turns=turns).items() if k != "ok"}
            if system.key == "mem0":
                _require_bm25(check)
            checks[conv.conv_id] = check
            for q in qs:
                answers = {}
                for k in sorted(KS, reverse=True):  # k=10 first: the timed, cold ask
                    a = proc.call("search", query=q.text, k=k)
                    lat[k].append(a["ms"])
                    answers[k] = a["hits"]
                for name, facts in (("strict", False), ("facts", True)):
                    rec = {k: share(answers[k], q.evidence, k, facts) for k in KS}
                    rows[name].append((q.category, rec))
                per_q.append(rows["strict"][-1][1])
            proc.call("close")
            shutil.rmtree(path, ignore_errors=True)
            print(
                f"  {conv.conv_id}: {len(turns)} turns, {len(qs)} questions,"
                f" {time.perf_counter() - t_start:.0f} s so far",
                flush=True,
            )
    finally:
        proc.end()
    return {
        "label": system.label.format(**_version_keys(info)),
        "system": system.key,
        "options": system.options,
        "info": {k: v for k, v in info.items() if k != "ok"},
        "checks": checks,
        "results": locomo._aggregate(rows["strict"]),
        "results_facts_credited": locomo._aggregate(rows["facts"]),
        "ingest_ms_per_turn": ingest_ms / max(1, n_turns),
        "ingest_cpu_ms_per_turn": ingest_cpu_ms / max(1, n_turns),
        "turns": n_turns,
        "search_ms": {
            str(k): {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95))}
            for k, v in lat.items()
        },
        "seconds": time.perf_counter() - t_start,
        # per question, in the run's question order (report["question_index"])
        **{f"r{k}": [round(r[k], 4) for r in per_q] for k in KS},
    }


def _require_bm25(check: dict[str, Any]) -> None:
    """Mem0 falls back to vectors alone without a word; the row must not be that."""
    live = (
        check.get("bm25_slot")
        and check.get("bm25_encoder")
        and check.get("stopwords_have_the")
        and check.get("spacy_lemma_loaded")
        and check.get("keyword_probes_found", 0) > 0
    )
    if not live:
        raise RuntimeError(f"Mem0's BM25 is not live (run --setup --systems mem0): {check}")


def _version_keys(info: dict[str, Any]) -> dict[str, str]:
    versions: dict[str, str] = info.get("versions", {})
    return {"compartment": versions.get("compartment", "?"), "mem0ai": versions.get("mem0ai", "?")}


def print_table(reports: Sequence[dict[str, Any]], n_questions: int, title: str) -> None:
    cats = list(lc.CATEGORIES.values())
    print(f"\n## {title} ({n_questions} questions)\n")
    head = ["system", "R@5", "R@10", *cats, "ingest ms/turn (CPU)", "search p50 / p95 ms"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in reports:
        res = r["results"]
        lat = r["search_ms"]["10"]
        cells = [
            r["label"],
            f"{res['overall'][5]:.3f}",
            f"{res['overall'][10]:.3f}",
            *(f"{res[c][5]:.3f}/{res[c][10]:.3f}" if c in res else "-" for c in cats),
            f"{r['ingest_ms_per_turn']:.1f} ({r.get('ingest_cpu_ms_per_turn', float('nan')):.1f})",
            f"{lat['p50']:.1f} / {lat['p95']:.1f}",
        ]
        print("| " + " | ".join(cells) + " |")
    for r in reports:
        if r["system"].startswith("palimpsest"):
            f = r["results_facts_credited"]["overall"]
            print(
                f"\n{r['label']}, fact hits credited with their evidence turns:"
                f" R@5 {f[5]:.3f}, R@10 {f[10]:.3f}"
            )
    print()
    for r in reports:
        versions = ", ".join(f"{k} {v}" for k, v in r["info"].get("versions", {}).items())
        print(f"- {r['label']}: {versions}; {r['seconds']:.0f} s")


def dump(report: dict[str, Any]) -> str:
    """The report as indented JSON, with the per-question lists on one line each."""
    flat: dict[str, str] = {}

    def pack(value: list[Any]) -> str:
        key = f"@@{len(flat)}@@"
        flat[key] = json.dumps(value, separators=(",", ":"))
        return key

    out = {**report, "question_index": pack(report["question_index"])}
    out["systems"] = [
        {k: pack(v) if k in {f"r{n}" for n in KS} else v for k, v in r.items()}
        for r in report["systems"]
    ]
    text = json.dumps(out, indent=1)
    for key, value in flat.items():
        text = text.replace(json.dumps(key), value)
    return text


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--setup", action="store_true", help="create or update the peers' venvs")
    ap.add_argument("--quick", action="store_true", help="one conversation (conv-26)")
    ap.add_argument(
        "--systems",
        default=",".join(DEFAULT),
        help=f"comma-separated, from {', '.join(SYSTEMS)} (default: {','.join(DEFAULT)})",
    )
    ap.add_argument(
        "--cpus",
        default="1",
        help="CPUs each system's processes may use (affinity), or 'all'; default 1: on a"
        " shared machine a second thread mostly waits, and every library sizes its pool"
        " to the mask",
    )
    ap.add_argument("--tag", default="", help="suffix for the results file name")
    args = ap.parse_args(argv)
    keys = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [k for k in keys if k not in SYSTEMS]
    if unknown:
        ap.error(f"unknown systems {unknown}; known: {', '.join(SYSTEMS)}")
    if args.setup:
        for peer in dict.fromkeys(SYSTEMS[k].peer for k in keys):
            if peer != "palimpsest":
                _setup.setup(_setup.PEERS[peer])
        return

    mine = sorted(os.sched_getaffinity(0))
    cpus = None if args.cpus == "all" else set(mine[-int(args.cpus) :])
    convs, questions, _ = lc.load_locomo()
    ids = ("conv-26",) if args.quick else lc.DEV
    data = []
    for conv in (c for c in convs if c.conv_id in ids):
        turns, now = conversation_turns(conv)
        data.append((conv, turns, now, [q for q in questions if q.conv_id == conv.conv_id]))
    n_q = sum(len(d[3]) for d in data)
    report: dict[str, Any] = {
        "split": "dev (quick: conv-26)" if args.quick else "dev",
        "conversations": [d[0].conv_id for d in data],
        "questions": n_q,
        "cpus": sorted(cpus) if cpus else "all",
        "loadavg_start": Path("/proc/loadavg").read_text().split()[:3],
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "question_index": [[d[0].conv_id, q.category] for d in data for q in d[3]],
        "systems": [],
    }
    scratch = Path(tempfile.mkdtemp(prefix="palimpsest-peers-"))
    try:
        for key in keys:
            print(f"running {key} ...", flush=True)
            try:
                r = run_system(SYSTEMS[key], data, scratch, cpus)
            except RuntimeError as exc:  # one system's failure must not lose the others' rows
                print(f"  {key} failed: {exc}", flush=True)
                report["failed"] = {**report.get("failed", {}), key: str(exc)}
                continue
            r["loadavg_after"] = Path("/proc/loadavg").read_text().split()[:3]
            print(
                f"  {r['label']}: R@5 {r['results']['overall'][5]:.3f}"
                f" R@10 {r['results']['overall'][10]:.3f}; {r['seconds']:.0f} s;"
                f" loadavg {' '.join(r['loadavg_after'])}",
                flush=True,
            )
            report["systems"].append(r)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report["loadavg_end"] = Path("/proc/loadavg").read_text().split()[:3]
    print_table(report["systems"], n_q, f"LoCoMo {report['split']}")
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    tag = ("-quick" if args.quick else "") + (f"-{args.tag}" if args.tag else "")
    path = out / f"peers-{time.strftime('%Y-%m-%d')}{tag}.json"
    path.write_text(dump(report) + "\n")
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
