"""Python's cyclic garbage collector paused for the length of a bulk write.

    >>> with gc_paused():
    ...     rows = [{"id": i} for i in range(100_000)]   # no full collections meanwhile

A bulk write builds tens of thousands of dicts and lists that live until it
ends. Each time the survivors grow by a quarter, CPython runs a full
collection, which walks every live container again, the write's own included:
at 1M versions a 20,000-assertion `assert_many` spent 0.4-0.65 s of its ~3 s
in five or six full collections, a 5,000 one 60-100 ms of ~0.83 s. These rows
hold no reference cycles, so reference counting frees them anyway; the
collector resumes when the last bulk write in the process ends (a count, as
writes on other threads may overlap), and cycles made meanwhile wait for it.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # bulk writes running now
_resume = False  # whether the collector was enabled when the first of them began


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off inside the block (if it was on); nesting and threads
    are counted, so it comes back when the last block ends."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
