"""The bounded write path: new assertions applied to the windows of the lines they touch.

    >>> plan = Appender(store, entities, mat).write(draft)   # inside the write's transaction

A write records its assertions at a transaction time K no earlier than any
before it, so they come last in recording order and the timeline believed at K
is the one believed before with them applied (`temporal.advance`). For each line
a write touches (the slot of a `one` predicate, the (slot, object) of a `many`
one) it reads only the window of starts its entries' valid times reach, with
their version rows, and writes back what changed: versions expired (or deleted,
if written at this same K) and inserted, the window's new starts, and the slot's
journal events (graph/_journal.py). Its cost follows what it touches, not the
slot's history. Quarantined claims are versions of their own, outside any line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..models import Cardinality
from ..storage import FactWrite, LineAsk, LineEdit, LineStart, LineWindow, Store, line_of
from ..temporal import Start, advance, reach
from .materialise import Plan, log_entry, slot_columns

if TYPE_CHECKING:
    from .entities import EntityIndex
    from .materialise import Materialiser


@dataclass
class Draft:
    """A write's rows, before anything stored is read."""

    slots: dict[str, dict[str, Any]]  # slot id -> its row
    new: set[str]  # slots of subjects this write creates: nothing stored to read
    assertions: list[dict[str, Any]]
    entities: list[dict[str, Any]]  # to create
    cards: dict[str, Cardinality]  # slot id -> its predicate's cardinality
    k: datetime  # the transaction time


class Appender:
    """Writes drafts: reads the windows they touch, advances them, writes the difference."""

    def __init__(self, store: Store, entities: EntityIndex, mat: Materialiser) -> None:
        self._store = store
        self._entities = entities
        self._mat = mat

    def write(self, d: Draft) -> Plan:
        store, k = self._store, d.k
        heads = store.slots.slot_heads([s for s in d.slots if s not in d.new])
        entries: dict[str, list[dict[str, Any]]] = {}  # line id -> its assertions, in order
        slot_of: dict[str, str] = {}
        plan = Plan()
        for a in d.assertions:
            if a["quarantined"]:
                if a["op"] == "assert":  # a claim is kept as its own version, outside lines
                    plan.insert.append(self._mat.version_row(a, a["valid_from"], a["valid_to"], k))
                continue
            for lid in self._lines_of(a, d.cards[a["slot_id"]], a["slot_id"] in heads):
                entries.setdefault(lid, []).append(a)
                slot_of[lid] = a["slot_id"]
        asks = {
            lid: LineAsk(
                slot_of[lid],
                d.slots[slot_of[lid]]["namespace"],
                d.slots[slot_of[lid]]["subject"],
                reach([log_entry(a) for a in rows]),
            )
            for lid, rows in entries.items()
        }
        stored = {lid: ask for lid, ask in asks.items() if ask.slot_id in heads}
        windows = store.slots.line_windows(stored) if stored else {}
        for lid, ask in asks.items():
            if lid not in windows:  # a line of a slot not stored yet
                windows[lid] = LineWindow(
                    lid, ask.slot_id, ask.namespace, ask.subject, [], None, None, True, False
                )
        new_rows = {a["id"]: a for a in d.assertions}
        edits: list[LineEdit] = []
        for lid, rows in entries.items():
            edits.append(self._advance(windows[lid], rows, new_rows, plan, k))
        store.slots.write_facts(
            FactWrite(
                at=k,
                entities=d.entities,
                slots=[slot_columns(row) for s, row in d.slots.items() if s not in heads],
                assertions=d.assertions,
                insert=plan.insert,
                expire=plan.expired,
                vanish=plan.vanished,
                lines=edits,
            ),
            heads=heads,
        )
        return plan

    def _lines_of(self, a: Mapping[str, Any], card: Cardinality, stored: bool) -> list[str]:
        """The lines an assertion touches: an end of whatever holds a `many` slot touches
        every line the slot has (found in its journal: rare, and bounded by the slot)."""
        slot = a["slot_id"]
        if card == "one":
            return [slot]
        if a["op"] == "assert" or a["object_id"] is not None:
            return [line_of(slot, a["object_id"])]
        if not stored:
            return []
        _, log, _ = self._store.slots.histories([slot])[slot]
        return sorted({line_of(slot, x["object_id"]) for x in log if x["object_id"]})

    def _advance(
        self,
        win: LineWindow,
        rows: Sequence[dict[str, Any]],
        new_rows: Mapping[str, dict[str, Any]],
        plan: Plan,
        k: datetime,
    ) -> LineEdit:
        """One line's entries applied to its window; the plan collects the version changes."""
        held = {(s.source, s.at): s.version for s in win.run if s.version is not None}
        by_source = {v["assertion_id"]: v for v in held.values() if v is not None}
        known = self._entities.names
        for v in by_source.values():
            if v["object_id"] is not None:
                known.setdefault(v["object_id"], v["object"])
        step = advance(
            [Start(s.at, s.object_id, s.source) for s in win.run],
            win.after,
            [log_entry(a) for a in rows],
        )
        if step.gone or step.new:
            plan.changed.add(win.slot_id)
        for seg in step.gone:
            v = held[(seg.source, seg.valid_from)]
            assert v is not None
            if v["recorded_at"] == k:
                # believed for no instant (written and overwritten at one K): not knowledge
                plan.vanish.append(v["id"])
                plan.vanished.append(v)
            else:
                plan.expire.append(v["id"])
                plan.expired.append(v)
        made: dict[tuple[str, datetime | None], dict[str, Any]] = {}
        for seg in step.new:
            source = new_rows.get(seg.source) or by_source[seg.source]
            row = self._mat.version_row(source, seg.valid_from, seg.valid_to, k)
            made[(seg.source, seg.valid_from)] = row
            plan.insert.append(row)
        run = [
            LineStart(s.at, s.source, None if s.object is None else _row(made, held, s))
            for s in step.run
        ]
        return LineEdit(win, run)


def _row(
    made: Mapping[tuple[str, datetime | None], dict[str, Any]],
    held: Mapping[tuple[str | None, datetime | None], dict[str, Any] | None],
    s: Start,
) -> dict[str, Any]:
    """The version a present start shows: made by this write, or kept from the window."""
    row = made.get((s.source or "", s.at)) or held[(s.source, s.at)]
    assert row is not None
    return row
