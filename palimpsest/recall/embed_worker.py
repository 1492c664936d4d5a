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
was stored meanwhile. `close` finishes the queue; `consolidate` and `reindex` wait
for it. A fact write never loads the model itself (seconds): the worker starts once
something else has (a recall, a remember); a process that never loads it (the CLI's
`assert`) leaves its names and statements to the backfill. An erase empties the
queue and voids the batch in flight (its text may be what was erased). What the
worker never stores (a crash, a full queue during a bulk import, an erase, a
process without the model) is only vectors: `reindex` backfills them, and recall
and merge embed what they find missing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import StoreError
from ..graph._embeddings import EmbeddingStore
from ._statements import statement_key, variants

if TYPE_CHECKING:
    from ..engine.context import Context
    from .embedder import Embedder

log = logging.getLogger("palimpsest")

QUEUE_MAX = 5_000  # notes waiting for the model; beyond, the backfill's (a bulk import)
BATCH = 256  # notes embedded together

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
    epoch: int = 0  # bumped by erase: a batch embedded across it is not written
    dropped: int = 0  # notes left to the backfill (queue full, or erased meanwhile)


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
        self._embedding_store: EmbeddingStore | None = None

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
    def es(self) -> EmbeddingStore:
        """The store's entity-name and statement vectors."""
        es = self._embedding_store
        db = self._ctx.store.db
        if es is None or es.db is not db:
            es = self._embedding_store = EmbeddingStore(db)
        return es

    def flush(self) -> None:
        """Hand what the committed writes noted to the embedding worker; inside a
        transaction, wait for the outermost caller. Returns at once: the model runs
        on the worker, so a write costs what it cost without an embedder."""
        if self._embedder is None:
            return
        with self._ctx.lock:
            todo = self._todo
            if not todo or self._ctx.store.db.in_transaction():
                return
            self._todo = []
            queue = self.queue
            with queue.cond:
                room = max(QUEUE_MAX - len(queue.items), 0)
                if room < len(todo):
                    # a bulk import outruns the model: the rest waits for the backfill
                    if not queue.dropped:  # said once
                        log.warning(
                            "embedding queue full (%d waiting): names and statements beyond"
                            " it get vectors from `palimpsest reindex`, and recall and merge"
                            " embed what they find missing",
                            len(queue.items),
                        )
                    queue.dropped += len(todo) - room
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
            with queue.cond:
                while not queue.items and not queue.stop:
                    queue.cond.wait()
                if not queue.items:
                    return  # stopped with nothing left
                batch = queue.items[:BATCH]
                del queue.items[:BATCH]
                queue.busy += 1
                epoch = queue.epoch
            try:
                self._embed_now(batch, epoch)
            except Exception:  # the worker must outlive one bad batch: backfill fills it
                log.exception("embedding %d names and statements failed", len(batch))
            finally:
                with queue.cond:
                    queue.busy -= 1
                    queue.cond.notify_all()

    def drain(self) -> None:
        """Wait until every noted name and statement has its vector (tests, consolidate,
        reindex and close call it; never while holding the memory's lock, which the
        worker needs to write)."""
        queue = self.queue
        if queue.items and self._embedder is not None:
            self._start(queue)  # asked for: load the model if it must
        with queue.cond:
            while (queue.items or queue.busy) and queue.thread is not None:
                if not queue.thread.is_alive():
                    break
                queue.cond.wait(0.5)

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
                queue.dropped += len(queue.items)
                queue.items.clear()
            return
        with queue.cond:
            queue.stop = True
            queue.cond.notify_all()
        queue.thread.join()
        queue.thread = None
        queue.stop = False

    def forget(self) -> None:
        """Erase: nothing queued before it is embedded any more, and a batch being
        embedded now is not written (its text may be what was erased)."""
        queue = self.queue
        with queue.cond:
            queue.dropped += len(queue.items)
            queue.items.clear()
            queue.epoch += 1
        self._todo = []

    def _embed_now(self, todo: list[_Note], epoch: int) -> None:
        """Embed a batch of notes and store the vectors the store does not have yet."""
        emb = self._embedder
        if emb is None:
            return
        es = self.es
        names: dict[str, tuple[str, str]] = {}
        stmts: dict[str, tuple[str, tuple[str, str]]] = {}
        for kind, ns, a, b, c in todo:
            if kind == "name":
                names[a] = (ns, b)
            else:
                stmts.setdefault(statement_key(ns, a, b, c), (ns, variants(a, b, c)))
        with self._ctx.lock:
            if self._closed_store():
                return
            have_names = es.name_ids(list(names))
            have_stmts = es.statement_ids(list(stmts))
        need_names = [e for e in names if e not in have_names]
        need_stmts = [k for k in stmts if k not in have_stmts]
        texts = [names[e][1] for e in need_names]
        texts += [t for k in need_stmts for t in stmts[k][1]]
        if not texts:
            return
        unique = sorted(set(texts))
        vecs = emb.embed(unique)  # outside the lock: writes and recalls go on meanwhile
        row = {t: i for i, t in enumerate(unique)}
        m = vecs[[row[t] for t in texts]].astype(np.float32)
        n = len(need_names)
        st = m[n:].reshape(len(need_stmts), 2, m.shape[1])
        with self._ctx.lock:
            if self._closed_store() or self.queue.epoch != epoch:
                return  # an erase came in between: the backfill redoes what is still shown
            # written meanwhile (merge, reindex): not twice
            have_names = es.name_ids(need_names)
            have_stmts = es.statement_ids(need_stmts)
            alive = {r["id"] for r in self._ctx.store.entities_by_ids(need_names)}
            keep = [i for i, e in enumerate(need_names) if e in alive and e not in have_names]
            fresh = [i for i, k in enumerate(need_stmts) if k not in have_stmts]
            try:
                with self._ctx.store.write():
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

    def _closed_store(self) -> bool:
        return self._ctx.closed or self._ctx.store.db.closed

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
            with store.write():
                es.create_names([i for i, _ in named], [ns] * len(named), vecs)
        shown = {statement_key(ns, *r): r for r in es.statement_rows(ns)}
        stored = es.statement_keys_of(ns)
        with store.write():
            es.delete_statements(sorted(stored - set(shown)))
            es.delete_names(es.orphan_names(ns))
        keys = [k for k in shown if k not in stored]
        for start in range(0, len(keys), batch_size):
            chunk = keys[start : start + batch_size]
            forms = [variants(*shown[k]) for k in chunk]
            vecs = emb.embed([t for f in forms for t in f]).reshape(len(chunk), 2, emb.dim)
            with store.write():
                es.create_statements(chunk, [ns] * len(chunk), [vecs[:, 0], vecs[:, 1]])
        return len(todo), len(keys)
