"""The storage seam: what the engine asks of a store, in logical rows, scoped to one namespace.

    >>> from palimpsest.storage.backends import open_store
    >>> store = open_store("palimpsest-data", defaults={"lives_in": "one"})   # Kùzu
    >>> with store.write():
    ...     store.slots.write_facts(FactWrite(at=k, assertions=[a], lines=[edit]))

A store is a handful of slices, each built once when it opens (`names`, `slots`,
`facts`, `recall`, `vectors`, `embeddings`, `consolidation`, `uses`,
`predicate_log`, `transfer`, `keys`, `leases`, and `pages` for a page of the graph), and the
lifecycle around them: one write transaction at a time, what in-process copies
of rows check (`generation`, `fact_generation`), meta values, the clocks. The
engine is typed against these `Protocol`s only; `palimpsest.graph` is the
embedded Kùzu implementation (the default), and a second backend is a second
package implementing them (tinydb's habit: one storage boundary, every backend
tested against it). No backend's own types cross it: rows are dicts, vectors
numpy, bulk reads Arrow, and the write path's rows are `storage.rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol

from ._facts import Facts, Names, Slots
from ._recall import Embeddings, Recall, Uses, Vectors
from ._records import Consolidation, Keys, Leases, Pages, PredicateLog, Transfer
from .rows import (
    EMB_DIM,
    FactWrite,
    History,
    LineAsk,
    LineEdit,
    LineStart,
    LineWindow,
    Row,
    SlotHead,
    VersionDelta,
    fact_order,
    line_of,
)

__all__ = [
    "EMB_DIM",
    "Consolidation",
    "Embeddings",
    "FactWrite",
    "Facts",
    "FactsScope",
    "History",
    "Keys",
    "Leases",
    "LineAsk",
    "LineEdit",
    "LineStart",
    "LineWindow",
    "Names",
    "Pages",
    "PredicateLog",
    "Recall",
    "Row",
    "SlotHead",
    "Slots",
    "Store",
    "Transfer",
    "Uses",
    "Vectors",
    "VersionDelta",
    "fact_order",
    "line_of",
]


class FactsScope(Protocol):
    """A declared fact write (`Store.writing_facts`): it reports what it did."""

    def report(self, delta: VersionDelta) -> None: ...


class Store(Protocol):
    """One memory's store: its slices and its lifecycle."""

    @property
    def location(self) -> str:
        """Where it lives: a directory, or a database URL (without its password)."""
        ...

    @property
    def schema_version(self) -> int:
        """The version of the store's own schema (each backend numbers its migrations)."""
        ...

    # the slices (read-only: each is built once, when the store opens)
    @property
    def names(self) -> Names: ...
    @property
    def slots(self) -> Slots: ...
    @property
    def facts(self) -> Facts: ...
    @property
    def recall(self) -> Recall: ...
    @property
    def vectors(self) -> Vectors: ...
    @property
    def embeddings(self) -> Embeddings: ...
    @property
    def consolidation(self) -> Consolidation: ...
    @property
    def uses(self) -> Uses: ...
    @property
    def predicate_log(self) -> PredicateLog: ...
    @property
    def transfer(self) -> Transfer: ...
    @property
    def keys(self) -> Keys: ...
    @property
    def leases(self) -> Leases: ...

    def pages(self, namespace: str, at: datetime, own: Sequence[str]) -> Pages:
        """The believed graph of a namespace as of `at`, a page at a time."""
        ...

    def close(self) -> None: ...

    def write(self, namespace: str | None = None) -> AbstractContextManager[None]:
        """One write transaction; nested use joins the outer one. `namespace`: the one
        namespace it writes, where several processes write the store (they then wait
        only for writers of that namespace); None: it may write any (it waits for all)."""
        ...

    def in_transaction(self) -> bool:
        """Whether the calling thread is inside a write transaction."""
        ...

    @property
    def closed(self) -> bool: ...

    @property
    def rollbacks(self) -> int:
        """Write transactions undone: in-process copies of rows check it."""
        ...

    @property
    def generation(self) -> int:
        """Changes whenever anything may have been written: copies of rows read at one
        generation are stale at another."""
        ...

    @property
    def foreign_generation(self) -> int:
        """Moves when a look (`look`) found that another process has written the store
        (never, where one process holds it): in-process copies that assume this process
        is the only writer (the name map) start again."""
        ...

    def look(self, namespace: str | None) -> int:
        """Look for other processes' writes of `namespace` (inside a write: of the
        namespaces it holds), and of the whole store; `foreign_generation` after it.
        Every call of a memory looks once at its start: until the next look, the
        generations stand still."""
        ...

    @property
    def fact_generation(self) -> int:
        """Changes only when a write may have changed a fact version."""
        ...

    def facts_changed_since(self, generation: int) -> tuple[VersionDelta, ...] | None:
        """What writes did to fact versions after `fact_generation` was `generation`,
        oldest first; None when that is unknown (re-read every copy)."""
        ...

    def writing_facts(self) -> AbstractContextManager[FactsScope]:
        """Around a fact write that reports its `VersionDelta`."""
        ...

    def reading(self) -> AbstractContextManager[None]:
        """Around one read call (a recall): the generations are read once for all of it,
        as they stood when it began (a write this process makes inside moves them)."""
        ...

    def request_compaction(self) -> None:
        """Reclaim the space of erased content when the store closes (privacy)."""
        ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def clocks(self) -> tuple[datetime | None, int]:
        """The latest transaction time stored anywhere, and the highest sequence number."""
        ...

    def latest_k(self, namespace: str) -> datetime | None:
        """Where several processes write the store: the latest transaction time any of
        them recorded in `namespace` (what "now" may not precede there). None where only
        this process writes."""
        ...

    def shared_clocks(self) -> tuple[datetime | None, int] | None:
        """Inside a write transaction of a store several processes write: the clocks of
        the namespaces it writes (of all, in a write of the whole store) as that
        transaction found them, under the write lock. None where only this process
        writes (its context's own clocks are current)."""
        ...
