"""Which writes changed fact versions, and how: what in-process copies of them patch.

    >>> changes = FactChanges()
    >>> changes.begin()                           # a write transaction (Database.write)
    >>> with changes.declared() as scope:         # the fact writer
    ...     changes.wrote(touches=True)
    ...     scope.report(delta)                   # what it did to which versions
    >>> changes.end(committed=True)
    >>> changes.generation, changes.since(0)
    (1, (delta,))

Recall keeps every version of the entities questions name (a lifelog's "user": 68k
versions, 3-5 s to read at 100k episodes). Keyed on `Database.generation`, which
every write moves, that copy was read again after each `remember` and after each
batch of the embedding worker. Most writes change no version (episodes, vectors,
uses), and the one writer that does in routine use knows what it changed: the rows it
created, and those it expired or deleted (`VersionDelta`). So `generation` here moves
only after a transaction (or a statement outside one) that may have changed a fact
version, and carries those deltas when the writer reported them. Anything else
(consolidation, retract, erase, a migration, DDL, a rollback, a declared write that
reported nothing) is an unknown change: `since` answers None and a copy is read again.

A statement "touches" facts unless every table it names is one that no fact read
reads (`_NO_FACTS`); one that names no table at all touches them. The rule errs on
the side of re-reading: a false "touches" costs a read, a false "does not" would
serve a stale fact.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from ..storage.rows import VersionDelta

# tables a fact version read never reads: writing them leaves every fact copy current
_NO_FACTS = frozenset(
    {
        "Meta",
        "Episode",
        "EpisodeText",
        "EpisodeEmb",
        "EpisodeDup",
        "EpisodeUse",
        "EntityNameEmb",
        "StatementEmb",
        "IdempotencyKey",
        "NightLease",
    }
)
_LABEL = re.compile(r"[(\[]\w*:(\w+)")  # (f:Fact  (:Episode  [:SUBJ]  [r:OBJ]
_KEPT = 512  # changes remembered; a copy older than them is read again whole


class Scope:
    """A declared fact write: its statements are covered once it reports its delta."""

    def __init__(self) -> None:
        self.wrote = False
        self.deltas: list[VersionDelta] = []

    def report(self, delta: VersionDelta) -> None:
        self.deltas.append(delta)


def touches_facts(cypher: str) -> bool:
    """Whether a write statement may change what a fact version read returns.

    >>> touches_facts("MATCH (u:EpisodeUse {id: $id}) SET u.n = $n")
    False
    >>> touches_facts("MATCH (f:Fact {id: $id}) SET f.expired_at = $at")
    True
    """
    labels = _LABEL.findall(cypher)
    return not labels or any(name not in _NO_FACTS for name in labels)


def table_touches_facts(table: str) -> bool:
    return table not in _NO_FACTS


class FactChanges:
    """A generation of fact versions, and the deltas each move of it brought."""

    def __init__(self) -> None:
        self.generation = 0
        self._lock = threading.Lock()
        self._log: deque[tuple[int, tuple[VersionDelta, ...] | None]] = deque(maxlen=_KEPT)
        self._tx: int | None = None  # the thread inside a write transaction
        self._dirty = False  # the transaction wrote facts
        self._unknown = False  # ... some of them outside a reported declaration
        self._scopes: list[Scope] = []  # the transaction's declarations that wrote
        self._scope: tuple[int, Scope] | None = None  # (thread, the open declaration)

    def begin(self) -> None:
        with self._lock:
            self._tx = threading.get_ident()
            self._dirty, self._unknown, self._scopes = False, False, []

    def end(self, *, committed: bool) -> None:
        """The transaction is over; rolled back, what it touched is unknown."""
        with self._lock:
            self._tx = None
            if not self._dirty:
                return
            if self._unknown or not committed or any(not s.deltas for s in self._scopes):
                self._publish(None)
            else:
                self._publish(tuple(d for s in self._scopes for d in s.deltas))

    def wrote(self, *, touches: bool) -> None:
        """A write statement ran (or failed: it may have half-run)."""
        if not touches:
            return
        me = threading.get_ident()
        with self._lock:
            scope = self._scope[1] if self._scope is not None and self._scope[0] == me else None
            if self._tx != me:  # its own transaction, seen at once: no delta reported yet
                self._publish(None)
                return
            self._dirty = True
            if scope is None:
                self._unknown = True
            elif not scope.wrote:
                scope.wrote = True
                self._scopes.append(scope)

    @contextmanager
    def declared(self) -> Iterator[Scope]:
        """The fact statements the calling thread runs inside are covered by what it
        reports (`Scope.report`) before the transaction ends."""
        me = threading.get_ident()
        scope = Scope()
        with self._lock:
            outer, self._scope = self._scope, (me, scope)
        try:
            yield scope
        finally:
            with self._lock:
                self._scope = outer

    def since(self, generation: int) -> tuple[VersionDelta, ...] | None:
        """The deltas after `generation`, oldest first; None when unknown (an undeclared
        write, or one older than what is kept): re-read everything."""
        with self._lock:
            if generation == self.generation:
                return ()
            if generation < 0 or generation > self.generation:
                return None
            later = [deltas for g, deltas in self._log if g > generation]
            if len(later) != self.generation - generation:
                return None  # some were dropped from the log
            out: list[VersionDelta] = []
            for deltas in later:
                if deltas is None:
                    return None
                out += deltas
            return tuple(out)

    def _publish(self, deltas: tuple[VersionDelta, ...] | None) -> None:
        self.generation += 1
        self._log.append((self.generation, deltas))
        self._dirty, self._unknown, self._scopes = False, False, []
