"""Every acknowledged write survives SIGKILL at a random moment (after a random number
of acknowledgements, while the writer goes on writing)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from palimpsest import Memory

WRITER = r"""
import sys
from palimpsest import Memory
path, start = sys.argv[1], int(sys.argv[2])
# the fact path only: no model to load before the first write can be acknowledged
with Memory.open(path, extractor=None, embedder=None) as mem:
    n = start
    while True:
        if n % 5 == 0:  # a bulk write acknowledges all its items at once
            mem.assert_many([{"subject": "user", "predicate": "likes", "object": f"item {n + i}",
                              "valid_from": None} for i in range(3)])
            print(" ".join(str(n + i) for i in range(3)), flush=True)
            n += 3
        else:
            mem.assert_fact("user", "likes", f"item {n}", valid_from=None)
            print(n, flush=True)
            n += 1
"""


def _kill_after_acks(proc: subprocess.Popen[str], want: int) -> list[str]:
    """SIGKILL the writer once it has acknowledged `want` writes (the state the round
    needs), while it goes on writing, not after a guessed time; every line it printed."""
    assert proc.stdout is not None
    lines: list[str] = []
    arrived = threading.Condition()

    def read(out: IO[str]) -> None:
        for line in out:
            with arrived:
                lines.append(line)
                arrived.notify_all()

    reader = threading.Thread(target=read, args=(proc.stdout,), daemon=True)
    reader.start()
    with arrived:  # the timeout only keeps a wedged writer from hanging the suite
        arrived.wait_for(lambda: len(lines) >= want or proc.poll() is not None, 600)
    assert proc.poll() is None and len(lines) >= want, "the writer stopped or stalled"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader.join(timeout=10)
    return lines


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "mem"
    acked: set[int] = set()
    rng = random.Random(7)
    next_id = 0
    for _round in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(next_id)],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        lines = _kill_after_acks(proc, rng.randint(5, 120))
        for line in (ln for ln in lines if ln.endswith("\n")):  # a torn last line is not an ack
            if line.strip():
                acked.update(int(x) for x in line.split())
        assert acked, "the writer acknowledged nothing; the test proves nothing"
        next_id = max(acked) + 10
        with Memory.open(path, extractor=None, embedder=None) as mem:
            stored = {int(f.object.split()[1]) for f in mem.facts("user", "likes")}
        missing = acked - stored
        assert not missing, f"round {_round}: lost acknowledged writes {sorted(missing)[:10]}"
