"""What a write tells the in-process caches built from the store: every invalidation, here.

    >>> events = Events()
    >>> events.on_erased(recall_index.forget_episodes)     # wired once, by `Memory`
    >>> events.erased("default", ["ep_1"])                  # called by the eraser

Collaborators keep copies of stored rows to answer fast: the entity index (name
keys -> ids, names, models), the vocabulary, recall's per-namespace index and
its statement vectors, the as-of view of contests and merges. A writer does not
know who keeps what: it says what changed, and `Memory` wires who listens.

- `names_changed`: a write rolled back; erase, merge, unmerge, restore
  -> `EntityIndex.forget`;
- `erased(ns, episode ids)`: erase, inside its transaction
  -> `FactRecall.forget_statements`, `RecallIndex.forget_episodes`;
- `restored(ns)`: restore wrote a namespace whole -> `RecallIndex.drop`;
- `consolidated`: reconcile, merge, unmerge wrote contests or merges
  -> `AsOf.forget`.

Writes of other processes on a shared store (PostgreSQL) raise no event here: each
cache compares `Context.foreign`, read at the start of every call and again under
the write lock, and starts again or catches up when it moved.

Vectors still to be computed are not caches: writes hand them to the embedding
worker they are given (`recall.embed_worker`). Recall's index picks up new
episodes itself (`RecallIndex.prepare`/`written`, called by `remember`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

NamesListener = Callable[[], None]
ErasedListener = Callable[[str, Sequence[str]], None]  # (namespace, erased episode ids)
NamespaceListener = Callable[[str], None]


class Events:
    """Listeners by event; each event calls its listeners in the order they were added."""

    def __init__(self) -> None:
        self._names: list[NamesListener] = []
        self._erased: list[ErasedListener] = []
        self._restored: list[NamespaceListener] = []
        self._consolidated: list[NamesListener] = []

    # --- wiring ------------------------------------------------------------------------
    def on_names_changed(self, listener: NamesListener) -> None:
        self._names.append(listener)

    def on_erased(self, listener: ErasedListener) -> None:
        self._erased.append(listener)

    def on_restored(self, listener: NamespaceListener) -> None:
        self._restored.append(listener)

    def on_consolidated(self, listener: NamesListener) -> None:
        self._consolidated.append(listener)

    # --- raised by the writers -----------------------------------------------------------
    def names_changed(self) -> None:
        """Entity or name-key rows changed behind the caches (or a write rolled back)."""
        for listener in self._names:
            listener()

    def erased(self, namespace: str, episode_ids: Sequence[str]) -> None:
        """Content was erased (inside the erase transaction): no copy of it may stay."""
        for listener in self._erased:
            listener(namespace, episode_ids)

    def restored(self, namespace: str) -> None:
        """A namespace was written whole from an export."""
        for listener in self._restored:
            listener(namespace)

    def consolidated(self) -> None:
        """Consolidation wrote contests or merges (what reads resolve as of a time)."""
        for listener in self._consolidated:
            listener()


class EmbedNotes(Protocol):
    """What writes tell the embedding worker (`recall.embed_worker.EmbedWorker`)."""

    def note(
        self,
        ns: str,
        entities: Iterable[Mapping[str, Any]],
        assertions: Iterable[Mapping[str, Any]],
    ) -> None:
        """What a write created (after its statements, before or at its commit)."""

    def flush(self) -> None:
        """The outermost write committed: hand what was noted to the worker."""

    def forget(self) -> None:
        """An erase begins: nothing noted or queued before it may be embedded."""
