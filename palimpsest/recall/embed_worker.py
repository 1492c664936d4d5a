"""Write-time vectors of new entity names and fact statements, after the facts commit.

    >>> mem.assert_fact("Mira", "lives_in", "Sydney")   # "Mira", "Sydney" and the
    ...                                                 # statement are embedded once

The writers are handed this worker (as `engine.events.EmbedNotes`). A write
notes what it created (`note`, after its statements); once its
transaction has committed, the outermost caller hands the notes to a worker thread
(`flush`) and returns: a write costs what it costs without an embedder
(the model ran ~7x longer than a single assert and throttled bulk writes ~30x when
it ran in line). The worker embeds batches outside every lock and writes each
batch's vectors in one short transaction under the memory's lock, skipping what
was stored meanwhile. It gives way to writes: before each model call (`CHUNK`
texts) it waits until no write holds the memory and none ran in the last
`QUIET_S`, at most `YIELD_MAX_S`, so a bulk import keeps its cores (beside the model
it ran at a third of its rate on 2 cores) and its vectors come as soon. A text
embedded lately is not embedded again (statements without their subject, "lives
in Oslo", repeat across subjects). A write
never waits for the model: when a bulk import outruns it (more than `QUEUE_MAX`
notes waiting), what does not fit is not held in memory but *spilled*: the
namespace is marked, and once the queue is empty the worker backfills it itself
(every name and statement of it without a vector, `SPILL_PASS` at a time), so every
vector is still stored, later. `status()` counts all of it. `consolidate` and
`reindex` wait until the queue and the backfill are done (`drain`); `close`
finishes the queue and says, in a warning and in `status()`, what it leaves to
`palimpsest reindex` (a backfill still to run).

A fact write never loads the model itself (seconds): the worker starts once
something else has (a recall, a remember); a process that never loads it (the CLI's
`assert`) leaves its names and statements to the backfill. An erase empties the
queue, voids the batch in flight (its text may be what was erased) and marks the
namespace for the backfill, which embeds only what is still shown. What the worker
never stores (a crash, a process without the model, a close with a backfill
pending) is only vectors: `reindex` backfills them, and recall and merge embed what
they find missing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..errors import StoreError
from ..storage import Embeddings
from ._statements import statement_key, variants

if TYPE_CHECKING:
    from ..engine.context import Context
    from .embedder import Embedder

log = logging.getLogger("palimpsest")

QUEUE_MAX = 5_000  # notes held for the model; beyond, spilled to the worker's backfill
BATCH = 256  # notes embedded together
SPILL_PASS = 20_000  # names and statements one backfill pass lists (then it looks again)
RECENT = 20_000  # texts whose vectors the worker keeps (~30 MB): repeats are not re-embedded
CHUNK = 64  # texts per model call: between calls the worker gives way to writes
QUIET_S = 0.25  # the model waits until no write has run for this long (an import...
YIELD_MAX_S = 2.0  # ...prepares its next call meanwhile), at most this per call

F32 = npt.NDArray[np.float32]
# (kind, ns, entity id | subject, name | predicate, object)
_Note = tuple[str, str, str, str, str | None]


@dataclass
class _Queue:
    """Notes waiting for the embedding worker, and its state (guarded by `cond`)."""

    items: list[_Note] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)
    thread: threading.Thread | None = None
    busy: int = 0
    stop: bool = False
    waiting: int = 0  # callers inside `drain`: the worker gives way to no write then
    last_write: float = 0.0  # time.monotonic() of the last write handed over (flush)
    epoch: int = 0  # bumped by erase: a batch embedded across it is not written
    spill: set[str] = field(default_factory=set)  # namespaces the worker must backfill
    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(
            ("noted", "spilled", "erased", "unloaded", "backfilled", "texts", "recent"), 0
        )
    )


class EmbedWorker:
    """The names and statements writes noted, embedded on a thread of their own."""

    def __init__(
        self, ctx: Context, embedder: Embedder | None, *, name_of: Callable[[str], str]
    ) -> None:
        self._ctx = ctx
        self._embedder = embedder
        self._name_of = name_of
        self._todo: list[_Note] = []  # noted by writes not yet committed
        self.queue = _Queue()
        self._recent: OrderedDict[str, F32] = OrderedDict()  # the worker's lately embedded
        self._recent_lock = threading.Lock()
        self._recent_epoch = 0

    def note(
        self,
        ns: str,
        entities: Iterable[Mapping[str, Any]],
        assertions: Iterable[Mapping[str, Any]],
    ) -> None:
        """Remember what a write created, for the flush after its commit."""
        if self._embedder is None:
            return
        todo = self._todo
        for e in entities:
            if e["type"] != "value":  # ages, dates: never compared by meaning
                todo.append(("name", ns, e["id"], e["name"], None))
        for a in assertions:
            if a["op"] != "assert":
                continue  # an end shows no statement of its own
            subject = self._name_of(a["slot_id"].split("\x1f")[1])
            pred = a["slot_id"].split("\x1f")[2]
            todo.append(("statement", ns, subject, pred, self._name_of(a["object_id"])))

    @property
    def es(self) -> Embeddings:
        """The store's entity-name and statement vectors."""
        return self._ctx.store.embeddings

    def flush(self) -> None:
        """Hand what the committed writes noted to the embedding worker; inside a
        transaction, wait for the outermost caller. Returns at once: the model runs
        on the worker, so a write costs what it cost without an embedder."""
        if self._embedder is None:
            return
        with self._ctx.lock:
            todo = self._todo
            if not todo or self._ctx.store.in_transaction():
                return
            self._todo = []
            queue = self.queue
            with queue.cond:
                queue.last_write = time.monotonic()
                queue.counts["noted"] += len(todo)
                room = max(QUEUE_MAX - len(queue.items), 0)
                if room < len(todo):
                    # a bulk import outruns the model: what does not fit is found again
                    # by the worker's backfill once the queue is empty (the write is
                    # committed, so it is there to find)
                    if not queue.counts["spilled"]:  # said once
                        log.info(
                            "embedding queue full (%d waiting): the rest is backfilled by"
                            " the worker once it has caught up",
                            len(queue.items),
                        )
                    queue.counts["spilled"] += len(todo) - room
                    queue.spill.update(n[1] for n in todo[room:])
                    todo = todo[:room]
                queue.items.extend(todo)
                queue.cond.notify_all()
            # a model still on disk is loaded by what needs it now (a recall, a remember,
            # `drain`), not by a fact write: `palimpsest assert` stays instant
            if getattr(self._embedder, "loaded", True):
                self._start(queue)

    def _start(self, queue: _Queue) -> None:
        if queue.thread is None or not queue.thread.is_alive():
            queue.thread = threading.Thread(target=self._work, name="palimpsest-embed", daemon=True)
            queue.thread.start()

    def _work(self) -> None:
        queue = self.queue
        while True:
            spilled: str | None = None
            with queue.cond:
                while not queue.items and not queue.spill and not queue.stop:
                    queue.cond.wait()
                if queue.items:
                    batch = queue.items[:BATCH]
                    del queue.items[:BATCH]
                elif queue.spill and not queue.stop:
                    spilled = min(queue.spill)  # the notes first, then what they spilled
                    queue.spill.discard(spilled)
                    batch = []
                else:
                    return  # stopped with nothing queued (a pending backfill is reindex's)
                queue.busy += 1
                epoch = queue.epoch
            try:
                if spilled is None:
                    self._embed_now(batch, epoch)
                else:
                    self._backfill_spilled(spilled, epoch)
            except Exception:  # the worker must outlive one bad batch: backfill fills it
                log.exception("embedding %d names and statements failed", len(batch))
            finally:
                with queue.cond:
                    queue.busy -= 1
                    queue.cond.notify_all()

    def _backfill_spilled(self, ns: str, epoch: int) -> None:
        """What a full queue spilled (or an erase emptied): the namespace's names and
        statements without a vector, listed under the lock, embedded as notes are."""
        queue = self.queue
        with self._ctx.lock:
            if self._closed_store():
                return
            es = self.es
            none: str | None = None
            todo: list[_Note] = [
                ("name", ns, i, name, none) for i, name in es.entities_without_names(ns)
            ][:SPILL_PASS]
            if len(todo) < SPILL_PASS:
                have = es.statement_keys_of(ns)
                for s, p, o in es.statement_rows(ns):
                    if statement_key(ns, s, p, o) not in have:
                        todo.append(("statement", ns, s, p, o))
                        if len(todo) >= SPILL_PASS:
                            break
        stored = 0
        for start in range(0, len(todo), BATCH):
            with queue.cond:
                if queue.stop or queue.epoch != epoch:
                    queue.spill.add(ns)  # closing, or an erase: the rest another time
                    return
            done = self._embed_now(todo[start : start + BATCH], epoch)
            stored += done
            with queue.cond:
                queue.counts["backfilled"] += done
        if len(todo) >= SPILL_PASS and stored:
            with queue.cond:
                queue.spill.add(ns)  # more than one pass: look again

    def drain(self) -> None:
        """Wait until every noted name and statement has its vector (tests, consolidate,
        reindex and close call it; never while holding the memory's lock, which the
        worker needs to write)."""
        queue = self.queue
        if (queue.items or queue.spill) and self._embedder is not None:
            self._start(queue)  # asked for: load the model if it must
        with queue.cond:
            queue.waiting += 1  # someone waits on the vectors: no pause for writes
            try:
                while (queue.items or queue.spill or queue.busy) and queue.thread is not None:
                    if not queue.thread.is_alive():
                        break
                    queue.cond.wait(0.5)
            finally:
                queue.waiting -= 1

    def status(self) -> dict[str, int]:
        """What the worker was handed and did, and what it still holds: `noted` (names
        and statements handed over), `spilled` (beyond the queue, left to its backfill),
        `backfilled` (names and statements its backfill embedded), `erased` (dropped by
        an erase; what is still shown is backfilled), `unloaded` (left to `reindex` by a
        process that never loaded the model), `texts` (embedded by the model), `recent`
        (served from the texts embedded lately); `queued` and `backfill_pending` (the
        namespaces still to backfill) now.

        >>> mem.assert_many(items); mem._embed.drain(); mem._embed.status()["queued"]
        0
        """
        queue = self.queue
        with queue.cond:
            return {
                **queue.counts,
                "queued": len(queue.items),
                "backfill_pending": len(queue.spill),
            }

    def stop(self) -> None:
        """Finish what is queued, then stop the worker (close). With no worker (the
        model never loaded in this process), what is queued is left to the backfill."""
        queue = self.queue
        if queue.thread is None:
            if queue.items:
                log.info(
                    "%d names and statements written without the model loaded: their"
                    " vectors come from `palimpsest reindex` (recall embeds them meanwhile)",
                    len(queue.items),
                )
                queue.counts["unloaded"] += len(queue.items)
                queue.items.clear()
        else:
            with queue.cond:
                queue.stop = True
                queue.cond.notify_all()
            queue.thread.join()
            queue.thread = None
            queue.stop = False
        if queue.spill:
            log.warning(
                "closed with names and statements still to embed in %s: `palimpsest"
                " reindex` stores their vectors (recall and merge embed what they find"
                " missing meanwhile)",
                ", ".join(sorted(queue.spill)),
            )

    def forget(self) -> None:
        """Erase: nothing queued before it is embedded any more, and a batch being
        embedded now is not written (its text may be what was erased)."""
        queue = self.queue
        with queue.cond:
            queue.counts["erased"] += len(queue.items) + len(self._todo)
            # what was queued and is still shown after the erase: the backfill finds it
            queue.spill.update(n[1] for n in (*queue.items, *self._todo))
            queue.items.clear()
            queue.epoch += 1
        with self._recent_lock:
            self._recent.clear()
        self._todo = []

    def _embed_now(self, todo: list[_Note], epoch: int) -> int:
        """Embed a batch of notes and store the vectors the store does not have yet;
        how many names and statements were stored."""
        emb = self._embedder
        if emb is None:
            return 0
        es = self.es
        names: dict[str, tuple[str, str]] = {}
        stmts: dict[str, tuple[str, tuple[str, str]]] = {}
        for kind, ns, a, b, c in todo:
            if kind == "name":
                names[a] = (ns, b)
            else:
                stmts.setdefault(statement_key(ns, a, b, c), (ns, variants(a, b, c)))
        self._give_way()  # not between a bulk import's calls, not even for the look-ups
        with self._ctx.lock:
            if self._closed_store():
                return 0
            have_names = es.name_ids(list(names))
            have_stmts = es.statement_ids(list(stmts))
        need_names = [e for e in names if e not in have_names]
        need_stmts = [k for k in stmts if k not in have_stmts]
        texts = [names[e][1] for e in need_names]
        texts += [t for k in need_stmts for t in stmts[k][1]]
        if not texts:
            return 0
        got = self._vectors(emb, texts, epoch)  # outside the lock: writes go on meanwhile
        m = np.stack([got[t] for t in texts]).astype(np.float32, copy=False)
        n = len(need_names)
        st = m[n:].reshape(len(need_stmts), 2, m.shape[1])
        with self._ctx.lock:
            if self._closed_store():
                return 0
            if self.queue.epoch != epoch:  # an erase came in between: backfill what is shown
                with self.queue.cond:
                    self.queue.spill.update(note[1] for note in todo)
                return 0
            # written meanwhile (merge, reindex): not twice
            have_names = es.name_ids(need_names)
            have_stmts = es.statement_ids(need_stmts)
            alive = {r["id"] for r in self._ctx.store.names.entities_by_ids(need_names)}
            keep = [i for i, e in enumerate(need_names) if e in alive and e not in have_names]
            fresh = [i for i, k in enumerate(need_stmts) if k not in have_stmts]
            spaces = [names[need_names[i]][0] for i in keep]
            spaces += [stmts[need_stmts[i]][0] for i in fresh]
            try:
                with self._ctx.writing(spaces):
                    if keep:
                        es.create_names(
                            [need_names[i] for i in keep],
                            [names[need_names[i]][0] for i in keep],
                            m[:n][keep],
                        )
                    if fresh:
                        es.create_statements(
                            [need_stmts[i] for i in fresh],
                            [stmts[need_stmts[i]][0] for i in fresh],
                            [st[fresh, 0], st[fresh, 1]],
                        )
            except StoreError:
                log.exception("storing vectors failed; `palimpsest reindex` backfills them")
                return 0
            return len(keep) + len(fresh)

    def _vectors(self, emb: Embedder, texts: list[str], epoch: int) -> dict[str, F32]:
        """text -> vector: the texts embedded lately from memory, the rest by the model.
        An erase empties the memory (the erased text may be among its keys)."""
        recent, counts = self._recent, self.queue.counts
        with self._recent_lock:
            if self._recent_epoch != epoch:
                recent.clear()
                self._recent_epoch = epoch
            got = {t: v for t in set(texts) if (v := recent.get(t)) is not None}
        todo = sorted(set(texts) - set(got))
        fresh: dict[str, F32] = {}
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            self._give_way()
            fresh.update(zip(chunk, emb.embed(chunk).astype(np.float32, copy=False), strict=True))
        with self._recent_lock:
            counts["texts"] += len(todo)
            counts["recent"] += len(got)
            if self._recent_epoch == epoch == self.queue.epoch:
                recent.update(fresh)
                for t in got:
                    recent.move_to_end(t)
                while len(recent) > RECENT:
                    recent.popitem(last=False)
        return got | fresh

    def _give_way(self) -> None:
        """Before a model call: wait while a write runs or has just run (a bulk import's
        next call follows at once), at most `YIELD_MAX_S`. On a box with few cores the
        model beside the writer took its core, its GIL turns and its cache: the
        import ran at a third of its rate and the vectors came no sooner. While a
        caller waits in `drain` (consolidation, reindex, close, a test), it only waits
        for a write that holds the memory now: the quiet it would wait for is that
        caller's own idle time."""
        queue, lock = self.queue, self._ctx.lock
        give_up = time.monotonic() + YIELD_MAX_S
        while (now := time.monotonic()) < give_up and not queue.stop:
            if queue.waiting and lock.acquire(blocking=False):
                lock.release()
                return
            quiet = now - queue.last_write >= QUIET_S
            if quiet and lock.acquire(blocking=False):  # no write holds the memory now
                lock.release()
                return
            time.sleep(min(QUIET_S / 2, 0.05))  # a drain may start meanwhile

    def _closed_store(self) -> bool:
        return self._ctx.closed or self._ctx.store.closed

    def backfill(self, ns: str, *, batch_size: int = 256) -> tuple[int, int]:
        """Embed the namespace's names and statements that have no vector (a memory from
        before migration 6, written with no embedder, restored from an export, or a
        crash before a flush); drop the vectors of gone entities and statements. How
        many names and statements were embedded."""
        emb, es, store = self._embedder, self.es, self._ctx.store
        if emb is None:
            return 0, 0
        todo = es.entities_without_names(ns)
        for start in range(0, len(todo), batch_size):
            named = todo[start : start + batch_size]
            vecs = emb.embed([name for _, name in named])
            with store.write(ns):
                es.create_names([i for i, _ in named], [ns] * len(named), vecs)
        shown = {statement_key(ns, *r): r for r in es.statement_rows(ns)}
        stored = es.statement_keys_of(ns)
        with store.write(ns):
            es.delete_statements(sorted(stored - set(shown)))
            es.delete_names(es.orphan_names(ns))
        keys = [k for k in shown if k not in stored]
        for start in range(0, len(keys), batch_size):
            chunk = keys[start : start + batch_size]
            forms = [variants(*shown[k]) for k in chunk]
            vecs = emb.embed([t for f in forms for t in f]).reshape(len(chunk), 2, emb.dim)
            with store.write(ns):
                es.create_statements(chunk, [ns] * len(chunk), [vecs[:, 0], vecs[:, 1]])
        return len(todo), len(keys)
