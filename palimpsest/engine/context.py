"""What every collaborator of one open memory shares: the store, the clock, one lock.

    >>> ctx = Context.open(store, clock=utcnow, namespace="default")
    >>> with ctx.lock, ctx.store.write():
    ...     k = ctx.tick()                     # this write's transaction time K

Every write is one Kùzu transaction stamped with one transaction time K from
the clock, never earlier than the last one (`tick`); `next_seq` orders the
assertions recorded at one K. A write that fails puts both back (`saved` before,
`restore` on the way out). The one re-entrant lock serialises the writers and
guards every in-process cache the collaborators keep.

Where other processes write the store too (PostgreSQL), those caches may hold rows
they changed. `foreign` counts the writes of others this process has noticed; it
is looked up once at the start of every call (`ns`: the call's namespace) and again
under the write lock (`tick`: the write's), and a cache stamped with an older count
starts again (or catches up): a read after another worker's acknowledged write sees
it, and a write uses what was committed before it took the lock. There each
namespace has its own transaction clock: K never goes backwards in a namespace,
whichever worker writes it (nor in this process, whichever namespace). On Kùzu
`foreign` stays 0 and costs nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta

from .. import _names as names
from .._time import Clock, to_utc
from ..errors import ClosedError
from ..storage import Store

Saved = tuple[datetime | None, int]  # (last K, last seq)
TICK = timedelta(microseconds=1)  # the finest step both stores keep


class Context:
    """The store, the transaction clock, the lock and the default namespace of a memory."""

    def __init__(
        self,
        store: Store,
        *,
        clock: Clock,
        namespace: str,
        last_k: datetime | None = None,
        seq: int = 0,
    ) -> None:
        self.store = store
        self.clock = clock
        self._namespace = namespace
        self._local = threading.local()  # a thread's own default (`defaulting`)
        self.lock = threading.RLock()
        self.last_k = last_k
        self.seq = seq
        self._mine: datetime | None = None  # the last K this process stamped
        self.closed = False
        # writes of other processes noticed so far (`look`): caches compare their stamp
        self.foreign = store.look(namespace)

    @classmethod
    def open(cls, store: Store, *, clock: Clock, namespace: str) -> Context:
        """A context continuing the store's clocks: its last K and seq."""
        last, seq = store.clocks()
        # a predicate change is a transaction too (erase rebuilds by its time)
        times = [t for t in (last, store.predicate_log.latest()) if t is not None]
        return cls(
            store, clock=clock, namespace=namespace, last_k=max(times) if times else None, seq=seq
        )

    @property
    def namespace(self) -> str:
        """The default namespace: this thread's inside `defaulting`, else the memory's."""
        own: str | None = getattr(self._local, "namespace", None)
        return self._namespace if own is None else own

    @namespace.setter
    def namespace(self, value: str) -> None:
        self._namespace = value

    @contextmanager
    def defaulting(self, namespace: str) -> Iterator[None]:
        """Calls from this thread default to `namespace` inside the block."""
        ns = names.check_namespace(namespace)
        before = getattr(self._local, "namespace", None)
        self._local.namespace = ns
        try:
            yield
        finally:
            self._local.namespace = before

    @contextmanager
    def writing(self, namespaces: Iterable[str]) -> Iterator[None]:
        """One write transaction of these namespaces (a batch of the embedding worker's,
        say): it waits only for their writers, not every writer of the store. Their
        locks are taken in order, so two such writers never wait on each other."""
        spaces: list[str | None] = []
        spaces.extend(sorted(set(namespaces)))
        with ExitStack() as held:
            for ns in spaces or [None]:
                held.enter_context(self.store.write(ns))
            yield

    def check_open(self) -> None:
        if self.closed:
            raise ClosedError("this Memory is closed")

    def ns(self, namespace: str | None) -> str:
        """The namespace a call names (checked), or the memory's default. Every call
        of `Memory` starts here: it looks for other processes' writes (`look`)."""
        self.check_open()
        ns = self.namespace if namespace is None else names.check_namespace(namespace)
        self._local.call = ns  # what `now` reads the latest K of
        self.look(ns)
        return ns

    def look(self, namespace: str | None = None) -> int:
        """`foreign`, as the store says now: one read of the change sequences of
        `namespace` (inside a write: of the namespaces it writes) where other processes
        write it, none where this one is the only writer."""
        self.foreign = self.store.look(namespace)
        return self.foreign

    def tick(self) -> datetime:
        """The next transaction time: the clock, but never before the last one (the
        last one any process wrote, where several share the store). Called under
        the write lock: it looks for other processes' writes too (`look`), so the
        caches this write reads hold what they committed."""
        self.look()
        self._sync()
        now = to_utc(self.clock(), name="clock")
        if self.last_k is not None and now < self.last_k:
            # a clock behind the last K (stepped back, or behind a worker's ahead of it)
            # cannot say time passed: after a K of this process's own, the next one is
            # a microsecond later, else the earlier transaction's versions would be
            # superseded at their own K and vanish from history. A clock reading the
            # last K itself is taken at its word: the same moment.
            now = self.last_k + TICK if self.last_k == self._mine else self.last_k
        self.last_k = self._mine = now
        return now

    def _sync(self) -> None:
        shared = self.store.shared_clocks()
        if shared is not None:
            last, seq = shared
            if last is not None and last != self._mine:
                # another process's K: ours comes strictly after it, else a version it
                # wrote (and acknowledged) would be superseded at its own K and vanish
                # from history, as if never believed (a clock behind always lands there)
                after = last + TICK
                if self.last_k is None or after > self.last_k:
                    self.last_k = after
            self.seq = max(self.seq, seq)

    def next_seq(self) -> int:
        self._sync()
        self.seq += 1
        return self.seq

    def now(self, namespace: str | None = None) -> datetime:
        """The clock's reading, for defaults (`valid_at`, `known_at`); where several
        processes write the store, never before the latest K any of them recorded in
        the namespace of the calling thread's current call (a worker whose clock is
        behind another's still reads that one's acknowledged writes as known now)."""
        now = to_utc(self.clock(), name="clock")
        ns: str | None = namespace or getattr(self._local, "call", None)
        latest = self.store.latest_k(self.namespace if ns is None else ns)
        return latest if latest is not None and latest > now else now

    def saved(self) -> Saved:
        return self.last_k, self.seq

    def restore(self, saved: Saved) -> None:
        """Undo `tick` and `next_seq` of a transaction that rolled back."""
        self.last_k, self.seq = saved
        self._mine = self.last_k  # a clock behind steps past it (maybe ours, committed)
