"""Reinforcement by use: the episodes recall answers with count as used, written in batches.

    >>> mem.recall("where does Mira live?")    # its episodes are used at the clock's now
    >>> uses.episode_uses(["ep_1"])             # -> {"ep_1": (last used, times used)}

Ranking's recency (`recall.ranking.relevance`) and the decay step count from
the later of an episode's time and its last use, so what an agent keeps
coming back to stays warm. A recall does not write: uses collect in memory
and go to the store in one write transaction when `FLUSH_AT` episodes are
waiting, when `FLUSH_SECONDS` have passed since the last write (checked at
each recall), at the start of `consolidate` and at `close`. A crash loses
only the uses not yet written: fewer than `FLUSH_AT` episodes' worth, and
while recalls go on, no more than the last `FLUSH_SECONDS` (after the last
recall before a crash, nothing triggers a write but close). Recency and
archiving then count from the previous use: that is the whole cost. A write
costs ~20-90 ms (one `LOAD FROM` upsert), about once per 40 recalls of
k=25 at the default bound. A use is a hit at or above the default relevance
floor (one a caller got only by lowering `min_score` is not the engine's
answer); fact hits count as uses of their evidence episodes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..models import Hit
from ..storage import Uses
from .context import Context

FLUSH_AT = 1000  # distinct episodes waiting
FLUSH_SECONDS = 300.0


class _UsedIndex(Protocol):
    """What of recall's in-process index this needs (`recall.index.EpisodeIndex`)."""

    namespace: str
    ids: list[str]
    pos: dict[str, int]
    last_used: npt.NDArray[np.float64]


def used_episodes(hits: Iterable[Hit]) -> list[str]:
    """The episodes a recall answer rests on: episode hits, and facts' evidence."""
    out: dict[str, None] = {}
    for h in hits:
        if h.kind == "episode" and h.episode_id:
            out[h.episode_id] = None
        elif h.kind == "fact":
            out.update(dict.fromkeys(h.evidence))
    return list(out)


class UseLog:
    """Buffered use records and the per-episode last-use times ranking reads."""

    def __init__(self, ctx: Context, *, flush_at: int = FLUSH_AT) -> None:
        self._ctx = ctx
        self.flush_at = flush_at  # distinct episodes waiting before a write
        # created on first need: the FLUSH_SECONDS clock starts with the first use noted
        self._buffer: dict[str, tuple[str, datetime, int]] | None = None  # id -> (ns, at, n)
        self.flushed = 0.0  # time.monotonic() of the last write

    def waiting(self) -> dict[str, tuple[str, datetime, int]]:
        """The uses not written yet: episode id -> (namespace, last use, count)."""
        buf = self._buffer
        if buf is None:
            buf = self._buffer = {}
            self.flushed = time.monotonic()
        return buf

    @property
    def _us(self) -> Uses:
        return self._ctx.store.uses

    def note(self, ns: str, episode_ids: Iterable[str], ix: _UsedIndex | None) -> None:
        """Record a use of each episode at the clock's now; write when the bound is hit."""
        ids = list(dict.fromkeys(episode_ids))
        if not ids:
            return
        at = self._ctx.now()
        with self._ctx.lock:
            buf = self.waiting()
            for eid in ids:
                prev = buf.get(eid)
                buf[eid] = (ns, at, 1) if prev is None else (ns, max(prev[1], at), prev[2] + 1)
            if ix is not None:
                col = self._aligned(ix)
                where = [p for eid in ids if (p := ix.pos.get(eid)) is not None]
                col[where] = np.fmax(col[where], at.timestamp())
            if len(buf) >= self.flush_at or time.monotonic() - self.flushed >= FLUSH_SECONDS:
                self.flush()

    def flush(self) -> None:
        """Write every waiting use in one transaction (kept waiting if the write fails)."""
        with self._ctx.lock:
            buf = self.waiting()
            if not buf or self._ctx.closed:
                return
            rows = [{"id": e, "namespace": ns, "at": at, "n": n} for e, (ns, at, n) in buf.items()]
            with self._ctx.writing(ns for ns, _, _ in buf.values()):
                self._us.record(rows)
            buf.clear()
            self.flushed = time.monotonic()

    def drop(self, episode_ids: Iterable[str]) -> None:
        """Erase: the episodes' use records go too (inside the caller's transaction)."""
        ids = list(episode_ids)
        buf = self.waiting()
        for eid in ids:
            buf.pop(eid, None)
        self._us.delete(ids)

    def episode_uses(
        self, episode_ids: Iterable[str] | None = None, *, namespace: str | None = None
    ) -> dict[str, tuple[datetime, int]]:
        """id -> (last used, times used), stored and waiting; every used one when None."""
        ns = self._ctx.ns(namespace)
        want = None if episode_ids is None else set(episode_ids)
        out: dict[str, tuple[datetime, int]] = {}
        with self._ctx.lock:
            ids, times, counts = self._us.columns(ns)
            for i in range(len(ids)) if want is None else _among(ids, want):
                out[ids[i]] = (datetime.fromtimestamp(float(times[i]), UTC), int(counts[i]))
            for eid, (bns, at, n) in self.waiting().items():
                if bns == ns and (want is None or eid in want):
                    old = out.get(eid)
                    out[eid] = (at, n) if old is None else (max(old[0], at), old[1] + n)
        return out

    def last_used(self, ix: _UsedIndex, *, until: datetime) -> npt.NDArray[np.float64]:
        """POSIX time of each indexed episode's last use at or before `until`, else NaN.

        Loaded with the first recall of the namespace, kept current by `note`.
        A use after `until` (a question asked as of an earlier moment) does not
        count, and hides any earlier use: only the last one is kept."""
        used = self._aligned(ix)
        late = used > until.timestamp()
        return np.where(late, np.nan, used) if late.any() else used

    def _aligned(self, ix: _UsedIndex) -> npt.NDArray[np.float64]:
        """`ix.last_used`, loaded on first need and padded for episodes appended since."""
        n = len(ix.ids)
        if len(ix.last_used) == 0 and n:
            col = np.full(n, np.nan, dtype=np.float64)
            ids, times, _ = self._us.columns(ix.namespace)
            at = np.array([ix.pos.get(e, -1) for e in ids], dtype=np.int64)
            col[at[at >= 0]] = times[at >= 0]
            for eid, (ns, when, _) in self.waiting().items():
                p = ix.pos.get(eid)
                if p is not None and ns == ix.namespace:
                    col[p] = np.fmax(col[p], when.timestamp())
            ix.last_used = col
        elif len(ix.last_used) < n:  # appended since: never returned yet
            pad = np.full(n - len(ix.last_used), np.nan, dtype=np.float64)
            ix.last_used = np.concatenate([ix.last_used, pad])
        return ix.last_used


def _among(ids: list[str], want: set[str]) -> list[int]:
    return [i for i, e in enumerate(ids) if e in want]
