"""Which writes changed fact versions, and in which slots: what in-process copies re-read.

    >>> changes = FactChanges()
    >>> changes.begin()                        # a write transaction (Database.write)
    >>> with changes.declared({"sl_1"}):       # the fact writer: only these slots change
    ...     changes.wrote(touches=True)
    >>> changes.end()
    >>> changes.generation, changes.since(0)
    (1, frozenset({'sl_1'}))

Recall keeps every version of the entities questions name (a lifelog's "user": 68k
versions, 3-5 s to read at 100k episodes). Keyed on `Database.generation`, which
every write moves, that copy was read again after each `remember` and after each
batch of the embedding worker. Most writes change no version (episodes, vectors,
uses), and the one writer that does in routine use knows the slots it writes. So
`generation` here moves only after a transaction (or a statement outside one) that
may have changed a fact version, and says which slots when the writer declared them.
Anything not declared (consolidation, retract, erase, a migration, DDL) is an
unknown change: `since` answers None and a copy is read again whole.

A statement "touches" facts unless every table it names is one that no fact read
reads (`_NO_FACTS`); one that names no table at all touches them. The rule errs on
the side of re-reading: a false "touches" costs a read, a false "does not" would
serve a stale fact.
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

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
    }
)
_LABEL = re.compile(r"[(\[]\w*:(\w+)")  # (f:Fact  (:Episode  [:SUBJ]  [r:OBJ]
_KEPT = 512  # changes remembered; a copy older than them is read again whole


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
    """A generation of fact versions, and the slots each move of it changed."""

    def __init__(self) -> None:
        self.generation = 0
        self._lock = threading.Lock()
        self._log: deque[tuple[int, frozenset[str] | None]] = deque(maxlen=_KEPT)
        self._tx: int | None = None  # the thread inside a write transaction
        self._dirty = False  # the transaction wrote facts
        self._unknown = False  # ... some of them outside a declaration
        self._slots: set[str] = set()
        self._scope: tuple[int, frozenset[str]] | None = None  # (thread, declared slots)

    def begin(self) -> None:
        with self._lock:
            self._tx = threading.get_ident()
            self._dirty, self._unknown = False, False
            self._slots = set()

    def end(self) -> None:
        """The transaction committed or rolled back: either way, what it touched moved."""
        with self._lock:
            self._tx = None
            if self._dirty:
                self._publish(None if self._unknown else frozenset(self._slots))

    def wrote(self, *, touches: bool) -> None:
        """A write statement ran (or failed: it may have half-run)."""
        if not touches:
            return
        me = threading.get_ident()
        with self._lock:
            scope = self._scope[1] if self._scope is not None and self._scope[0] == me else None
            if self._tx != me:  # its own transaction: visible at once
                self._publish(scope)
                return
            self._dirty = True
            if scope is None:
                self._unknown = True
            else:
                self._slots |= scope

    @contextmanager
    def declared(self, slots: Iterable[str]) -> Iterator[None]:
        """The fact statements the calling thread runs inside change these slots only."""
        me = threading.get_ident()
        mine = frozenset(slots)
        with self._lock:
            outer = self._scope
            if outer is not None and outer[0] == me:
                mine |= outer[1]
            self._scope = (me, mine)
        try:
            yield
        finally:
            with self._lock:
                self._scope = outer

    def since(self, generation: int) -> frozenset[str] | None:
        """The slots changed after `generation`; None when unknown (an undeclared write,
        or one older than what is kept): re-read everything."""
        with self._lock:
            if generation == self.generation:
                return frozenset()
            if generation < 0 or generation > self.generation:
                return None
            later = [slots for g, slots in self._log if g > generation]
            if len(later) != self.generation - generation:
                return None  # some were dropped from the log
            out: set[str] = set()
            for slots in later:
                if slots is None:
                    return None
                out |= slots
            return frozenset(out)

    def _publish(self, slots: frozenset[str] | None) -> None:
        self.generation += 1
        self._log.append((self.generation, slots))
        self._dirty, self._unknown = False, False
        self._slots = set()
