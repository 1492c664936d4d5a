"""A slot's journal: what happened to its log and versions, as packed events in pages.

    >>> events = journal_events(assertions=[a], inserted=[v], expired=[(old_id, k)])
    >>> log, versions = fold(unpack_events(text), slot=slot_row)

Kùzu 0.11 has no secondary index, so a slot's assertions and versions are found
from the slot itself: every write appends what it did to the slot's journal
(an assertion recorded, a version inserted, expired, vanished, an assertion
retracted). The journal's newest events sit on the slot's row (its tail); once
the tail holds `PAGE_EVENTS`, it moves to a page of its own and is never written
again. A write therefore rewrites the tail only, however long the history; a
read of the whole history (history, explain, a past `known_at`, erase) reads
the pages and folds the events back into the rows. The `Assertion` and `Fact`
nodes stay the graph; the journal only finds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from ._slots import LOG_FIELDS, VERSION_FIELDS, from_us, pack_values, to_us, unpack_values

# events a tail holds before it becomes a page: a write appends 2-4 (an assertion and
# its versions), so a page is written once per ~20 writes, and a tail stays ~10-30 kB
PAGE_EVENTS = 64

Event = list[Any]


def journal_events(
    *,
    assertions: Iterable[Mapping[str, Any]] = (),
    inserted: Iterable[Mapping[str, Any]] = (),
    expired: Iterable[tuple[str, datetime]] = (),
    vanished: Iterable[str] = (),
    retracted: Iterable[tuple[str, datetime, str | None]] = (),
) -> list[Event]:
    """The events of one write to one slot, in the order they are folded back."""
    out: list[Event] = [["a", *pack_values(a, LOG_FIELDS)] for a in assertions]
    out += [["v", *pack_values(v, VERSION_FIELDS)] for v in inserted]
    out += [["x", vid, to_us(at)] for vid, at in expired]
    out += [["d", vid] for vid in vanished]
    out += [["r", aid, to_us(at), why] for aid, at, why in retracted]
    return out


def pack_events(events: Sequence[Event]) -> str:
    return orjson.dumps(events).decode()


def unpack_events(text: str | None) -> list[Event]:
    return orjson.loads(text) if text else []


def append_text(tail: str | None, events: Sequence[Event]) -> str:
    """`pack_events(unpack_events(tail) + events)`, without decoding the tail."""
    more = pack_events(events)
    if not tail or tail == "[]":
        return more
    if more == "[]":
        return tail
    return f"{tail[:-1]},{more[1:]}"


def fold(
    events: Iterable[Event], *, slot: Mapping[str, Any]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(log in recording order, every version in insertion order) the events leave.

    `slot` is the slot's row (id, namespace, subject_id, predicate, subject): what every
    row of it shares is not repeated in the journal.
    """
    base = {"namespace": slot["namespace"], "slot_id": slot["id"]}
    vbase = {
        **base,
        "subject_id": slot["subject_id"],
        "subject": slot["subject"],
        "predicate": slot["predicate"],
    }
    log: dict[str, dict[str, Any]] = {}
    versions: dict[str, dict[str, Any]] = {}
    for ev in events:
        kind = ev[0]
        if kind == "a":
            row = unpack_values(ev[1:], LOG_FIELDS, base)
            log[row["id"]] = row
        elif kind == "v":
            row = unpack_values(ev[1:], VERSION_FIELDS, vbase)
            versions[row["id"]] = row
        elif kind == "x":
            v = versions.get(ev[1])
            if v is not None:
                v["expired_at"] = from_us(ev[2])
        elif kind == "d":
            versions.pop(ev[1], None)
        elif kind == "r":
            a = log.get(ev[1])
            if a is not None:
                a["retracted_at"], a["retract_reason"] = from_us(ev[2]), ev[3]
        else:
            raise ValueError(f"unknown journal event {kind!r}")
    return list(log.values()), list(versions.values())


_V = {f: i for i, f in enumerate(VERSION_FIELDS)}
_NEVER = 2**63  # an open bound, as microseconds


def versions_at(
    events: Iterable[Event], *, slot: Mapping[str, Any], valid_at: int | None, known_at: int
) -> list[dict[str, Any]]:
    """The versions believed at `known_at` and covering `valid_at` (microseconds; None:
    any valid time): `fold`'s versions, filtered on the packed values before any row is
    built (a long slot's point query as of a past moment builds its few answers only)."""
    vid, rec, exp = _V["id"], _V["recorded_at"] + 1, _V["expired_at"] + 1
    vf, vt = _V["valid_from"] + 1, _V["valid_to"] + 1
    raw: dict[str, list[Any]] = {}
    for ev in events:
        kind = ev[0]
        if kind == "v":
            raw[ev[1 + vid]] = ev
        elif kind == "x":
            v = raw.get(ev[1])
            if v is not None:
                v[exp] = ev[2]
        elif kind == "d":
            raw.pop(ev[1], None)
    hits = [
        v
        for v in raw.values()
        if v[rec] <= known_at < (_NEVER if v[exp] is None else v[exp])
        and (
            valid_at is None
            or (
                (v[vf] is None or v[vf] <= valid_at)
                and valid_at < (_NEVER if v[vt] is None else v[vt])
            )
        )
    ]
    if not hits:
        return []
    base = {"namespace": slot["namespace"], "slot_id": slot["id"]}
    vbase = {**base, "subject_id": slot["subject_id"], "subject": slot["subject"]}
    vbase["predicate"] = slot["predicate"]
    return [unpack_values(v[1:], VERSION_FIELDS, vbase) for v in hits]


def state_events(
    log: Sequence[Mapping[str, Any]], versions: Sequence[Mapping[str, Any]]
) -> list[Event]:
    """A whole history as events (a slot written afresh: restore, erase, the upgrade)."""
    return journal_events(assertions=log, inserted=versions)
