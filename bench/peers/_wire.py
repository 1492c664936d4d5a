"""The peer side of bench/peers.py: one JSON object a line in, one a line out.

>>> # python bench/peers/compartment_driver.py    # then write {"op": "info"} to its stdin

Standard library only: this module runs inside every peer's own venv. A driver
is any object with the `Driver` methods; `serve(driver)` reads requests from
stdin and answers each on the process's original stdout, which it keeps to
itself (fd 1 is pointed at stderr first, so a library that prints cannot
corrupt the stream). `ingest` and `search` are timed here, around the driver
call alone, with `time.perf_counter` (and `ingest` by CPU time too: the process's
own, all threads, plus that of the helper processes a driver names in an optional
`helper_pids()`, such as Compartment's embedding daemon; a busy machine stretches
CPU time far less than wall time): the pipe and the JSON are never inside the
measured time, whatever the system.

Requests: {"op": "info"}; {"op": "open", "path", "conv_id", "now", "options"};
{"op": "ingest", "turns"}; {"op": "search", "query", "k"}; {"op": "check",
"turns"}; {"op": "close"}; {"op": "exit"}. Answers: {"ok": true, ...} or
{"ok": false, "error": "..."}; a turn is {"dia_id", "speaker", "text",
"session", "occurred_at" (ISO 8601, UTC)}; a hit is {"turns": [dia_id, ...],
"kind", "score", "derived"}, `derived` when its turns are where it came from
rather than what it is (a Palimpsest fact hit).
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Protocol


class Driver(Protocol):
    """What every system implements; one memory (one conversation) open at a time."""

    def info(self) -> dict[str, Any]:
        """Name, versions and the exact configuration this driver runs."""
        ...

    def open(self, path: str, conv_id: str, now: str, options: dict[str, Any]) -> None:
        """A fresh, empty memory at `path` (a directory that does not exist yet)."""
        ...

    def ingest(self, turns: list[dict[str, Any]]) -> None:
        """Every turn of the conversation, in order, the way the system takes them."""
        ...

    def search(self, query: str, k: int) -> Any:
        """The system's own answer to `query` asked for `k` results (the timed call)."""
        ...

    def hits(self, answer: Any) -> list[dict[str, Any]]:
        """`search`'s answer as hits, best first (outside the timed call)."""
        ...

    def check(self, turns: list[dict[str, Any]]) -> dict[str, Any]:
        """Evidence that the set-up really is the one `info` describes (not timed)."""
        ...

    def close(self) -> None: ...


def serve(driver: Driver) -> None:
    """Answer requests until {"op": "exit"} or end of input."""
    out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # whatever a library prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.pop("op")
        try:
            answer = _dispatch(driver, op, req)
        except Exception as exc:  # the parent reports it and stops this system
            traceback.print_exc(file=sys.stderr)
            answer = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        if op == "exit":
            break


def _cpu_s(pids: list[int], *, own: bool = True) -> float:
    """CPU seconds of this process (every thread) and of `pids` (a system's helper
    processes, e.g. an embedding daemon: the work a call hands them is its work)."""
    total = time.process_time() if own else 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue  # gone
        fields = stat.rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _dispatch(driver: Driver, op: str, req: dict[str, Any]) -> dict[str, Any]:
    if op == "info":
        return {"ok": True, **driver.info()}
    if op == "open":
        driver.open(req["path"], req["conv_id"], req["now"], req.get("options") or {})
        return {"ok": True}
    if op == "ingest":
        helpers = getattr(driver, "helper_pids", list)
        pids = helpers()
        t0, c0 = time.perf_counter(), _cpu_s(pids)
        driver.ingest(req["turns"])
        ms = 1000 * (time.perf_counter() - t0)
        cpu = 1000 * (_cpu_s(pids) - c0)
        # a helper that only started during the call counts from its start
        cpu += 1000 * _cpu_s([p for p in helpers() if p not in pids], own=False)
        return {"ok": True, "ms": ms, "cpu_ms": cpu}
    if op == "search":
        t0 = time.perf_counter()
        answer = driver.search(req["query"], int(req["k"]))
        ms = 1000 * (time.perf_counter() - t0)
        return {"ok": True, "ms": ms, "hits": driver.hits(answer)}
    if op == "check":
        return {"ok": True, **driver.check(req.get("turns") or [])}
    if op == "close":
        driver.close()
        return {"ok": True}
    if op == "exit":
        return {"ok": True}
    raise ValueError(f"unknown op {op!r}")
