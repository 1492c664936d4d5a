"""Packed slot states of a large write, read on another thread while the write is built.

    >>> ahead = ReadAhead(store)
    >>> job = ahead.start(["default\\x1fen_1\\x1flives_in", ...])  # None: read in line
    >>> states = job.result() if job else store.packed_states(ids)
    >>> ahead.close()

A batch of `assert_many` reads the packed state of every existing slot it
touches: at 1M versions, ~1,400 primary-key seeks per 5,000 assertions, about
a fifth of the batch. Kùzu runs a statement without holding the GIL, so these
seeks can run on the second core while this thread parses the batch, builds
its rows and creates its entities, slots and assertions.

Only a write outside any transaction reads ahead: the read runs on a reader
connection, so it sees what is committed, and the memory's lock (held by every
writer of slot states) keeps that from changing until the write uses it. Inside
a caller's transaction (remember, consolidation) the committed state may be
older than the transaction's own, so those writes read in line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from ..graph import Store

T = TypeVar("T")
AHEAD_MIN = 64  # existing slots in one write before reading them ahead pays


class ReadAhead:
    """One reader thread per memory, started on the first large write."""

    def __init__(self, store: Store, *, min_slots: int = AHEAD_MIN) -> None:
        self._store = store
        self._min = min_slots
        self._pool: ThreadPoolExecutor | None = None

    def start(self, slot_ids: Sequence[str]) -> Future[dict[str, dict[str, Any]]] | None:
        """The packed states of `slot_ids` being read, or None when reading them in
        line is as good (few slots) or wrong (inside a transaction)."""
        if not slot_ids or len(slot_ids) < self._min or self._store.db.in_transaction():
            return None
        return self.submit(self._store.packed_states, list(slot_ids))

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """`fn(*args)` on the reader thread, after what was submitted before. A writer
        hands it pure Python (Arrow tables, packed states, result records) to run while
        Kùzu, which does not hold the GIL, runs the writer's statement."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="palimpsest-read-ahead")
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
