"""Ingest the way a live agent writes: `Memory.remember` once a turn, not `remember_many`.

>>> # PYTHONPATH=. python bench/peers_per_turn.py 150     # conv-26's first 150 turns

bench/peers.py feeds Palimpsest a whole conversation in one `remember_many` (as
`palimpsest import --format locomo` does); an agent remembers each turn as it
happens. This times that path on conv-26's first N turns, at the defaults
(`Memory.open(path, clock=...)`: spaCy extractor, int8 MiniLM), after a throwaway
memory has loaded the models: wall and CPU (this process, all threads) ms a turn.
Run it pinned (`taskset -c 1`) to compare with peers.py's rows. Numbers only.
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import locomo_data as lc
from locomo import _items

from palimpsest import Memory


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    convs, _, _ = lc.load_locomo()
    items = _items(next(c for c in convs if c.conv_id == "conv-26"))[:n]
    now = max(i["occurred_at"] for i in items) + timedelta(days=1)
    with tempfile.TemporaryDirectory() as tmp:
        with Memory.open(Path(tmp) / "warm", clock=lambda: now) as mem:
            mem.remember_many(items[:20])
            mem.recall("hello", k=5)
        with Memory.open(Path(tmp) / "mem", clock=lambda: now) as mem:
            t0, c0 = time.perf_counter(), time.process_time()
            for it in items:
                mem.remember(**it)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(
        f"remember x{len(items)}: wall {1000 * wall / len(items):.1f} ms/turn,"
        f" CPU {1000 * cpu / len(items):.1f} ms/turn; load {' '.join(load)}"
    )


if __name__ == "__main__":
    main()
