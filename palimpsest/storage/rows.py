"""The logical rows the engine and a store pass each other: no backend's types in them.

    >>> ask = LineAsk(slot_id, "default", "user", Reach(v, v))   # what a write needs
    >>> win = store.slots.line_windows({line_of(slot_id, None): ask})[line]
    >>> store.slots.write_facts(FactWrite(at=k, assertions=[a], lines=[LineEdit(win, run)]))

Rows are plain dicts shaped like the tables DESIGN.md names (an assertion, a fact
version, an entity, an episode); these dataclasses carry what a write reads and
writes around them. Where a backend needs to remember where it found something
(Kùzu: which pages a window came from), it keeps that in `handle`, which the
engine never looks into.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..temporal import Reach

Row = dict[str, Any]
History = tuple[Row, list[Row], list[Row]]
"""A slot's whole history: (its row, its log in recording order, every version)."""
Ends = tuple[str, str, str, str | None]
"""A version's (id, namespace, subject_id, object_id): what caches of versions patch."""
SEP = "\x1f"
EMB_DIM = 384  # the length of every stored vector (all-MiniLM-L6-v2's)


def fact_order(r: Mapping[str, Any]) -> tuple[str, str, bool, datetime, str]:
    """The order a store returns fact versions in (subject, predicate, start, object)
    when no limit asks it to sort."""
    vf = r["valid_from"]
    return (r["subject"], r["predicate"], vf is not None, vf or _EPOCH, r["object"])


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def line_of(slot_id: str, object_id: str | None) -> str:
    """The id of a line: the slot's own for `one` (object None), one per object for `many`.

    >>> line_of("default\\x1fen_1\\x1flikes", "en_2")
    'default\\x1fen_1\\x1flikes\\x1fen_2'
    """
    return slot_id if object_id is None else f"{slot_id}{SEP}{object_id}"


@dataclass(frozen=True, slots=True)
class LineStart:
    """One start of a line: from `at`, `version` holds (its believed row), or nothing
    (an absence: an explicit end, or the gap a bounded put restored).

        >>> LineStart(at=t, source="fa_1", version=row)
    """

    at: datetime | None
    source: str | None
    version: Row | None = None

    @property
    def object_id(self) -> str | None:
        return None if self.version is None else self.version["object_id"]


@dataclass
class SlotHead:
    """A stored slot as a write finds it: its columns (id, namespace, subject_id,
    predicate, subject) and whatever the store needs to append to it (`handle`)."""

    row: Row
    new: bool = False
    handle: Any = None


@dataclass(frozen=True)
class LineAsk:
    """What a write asks of a line: its slot (for a line not stored yet) and the reach of
    valid time its entries touch (None: every start)."""

    slot_id: str
    namespace: str
    subject: str
    reach: Reach | None


@dataclass
class LineWindow:
    """The starts of a line a write needs (`temporal.advance`'s window: from the last
    start before the reach to the last one in it), the first start after them
    (`after`), when the line last changed, and whether it is stored at all. `whole`:
    every start of the line (`after` is then None)."""

    line_id: str
    slot_id: str
    namespace: str
    subject: str
    run: list[LineStart]
    after: datetime | None
    changed_at: datetime | None
    new: bool
    whole: bool
    handle: Any = None  # the store's own note of where the run lies


@dataclass
class LineEdit:
    """A window of a line replaced by new starts."""

    window: LineWindow
    run: list[LineStart]


@dataclass
class FactWrite:
    """What one write does to fact rows, at transaction time `at`."""

    at: datetime
    entities: list[Row] = field(default_factory=list)
    slots: list[Row] = field(default_factory=list)  # slots this write opens
    assertions: list[Row] = field(default_factory=list)
    insert: list[Row] = field(default_factory=list)
    expire: list[Row] = field(default_factory=list)  # version rows, expired at `at`
    vanish: list[Row] = field(default_factory=list)  # version rows, deleted
    retract: list[tuple[str, str, str | None]] = field(default_factory=list)  # id, slot, why
    lines: list[LineEdit] = field(default_factory=list)


@dataclass(frozen=True)
class VersionDelta:
    """What one write did to fact versions: the rows it created (as `facts_asof`
    returns them), the versions it expired at `at`, and those it deleted."""

    at: datetime
    inserted: tuple[Mapping[str, Any], ...]
    expired: tuple[Ends, ...]
    vanished: tuple[Ends, ...]
