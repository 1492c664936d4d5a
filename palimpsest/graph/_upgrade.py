"""Migration 9's rows: packed slot states turned into journals and lines.

    >>> journal_from_packed(db, defaults={"lives_in": "one"})

Until migration 9 a slot kept its whole log and versions as one packed value on
its `SlotState` row. Those values are already lists of the journal's packed
fields (graph/_slots.py), so each becomes the slot's journal as it stands: its
assertions, then its versions, expired ones with their `expired_at`. Its lines
are its log replayed at the latest moment it knows (`temporal.timelines`) with
the predicate's cardinality (a stored definition, else the default vocabulary
the engine passes, else `many`, the engine's own fallback), each believed start
given the version row that shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import orjson

from ..storage.rows import FactWrite, LineEdit, LineStart, LineWindow, line_of
from ..temporal import LogEntry, timelines
from ._cypher import Keys
from ._db import Database
from ._journal import Event
from ._slots import LOG_FIELDS, VERSION_FIELDS, unpack_values
from ._store_names import NameStore
from ._store_slots import SlotStore

_BATCH = 5_000  # slots converted per write of journals and lines


def journal_from_packed(db: Database, defaults: Mapping[str, str]) -> None:
    if not db.query("MATCH (s:SlotState) RETURN s.id AS id LIMIT 1"):
        return  # a new memory: nothing packed (its first remember loads no pyarrow)
    cards = {
        (r["ns"], r["name"]): r["c"]
        for r in db.query(
            "MATCH (p:Predicate) RETURN p.namespace AS ns, p.name AS name, p.cardinality AS c"
        )
    }
    table = db.arrow(
        "MATCH (s:SlotState) RETURN s.id AS id, s.namespace AS namespace, s.subject_id AS"
        " subject_id, s.predicate AS predicate, s.subject AS subject, s.log AS log,"
        " s.versions AS versions"
    )
    keys = Keys(db)
    store = SlotStore(db, keys, NameStore(db, keys))
    for batch in table.to_batches(_BATCH):
        journals: list[tuple[dict[str, Any], list[Event]]] = []
        edits: list[LineEdit] = []
        latest: datetime | None = None
        for r in batch.to_pylist():
            row = {c: r[c] for c in ("id", "namespace", "subject_id", "predicate", "subject")}
            log_values = orjson.loads(r["log"]) if r["log"] else []
            version_values = orjson.loads(r["versions"]) if r["versions"] else []
            journals.append(
                (
                    row,
                    [["a", *v] for v in log_values] + [["v", *v] for v in version_values],
                )
            )
            card = cards.get((row["namespace"], row["predicate"])) or defaults.get(
                row["predicate"], "many"
            )
            made, k = _lines(row, log_values, version_values, card)
            edits += made
            if k is not None and (latest is None or k > latest):
                latest = k
        store.write_journals(journals, replace=False)
        if edits and latest is not None:
            store.write_facts(FactWrite(at=latest, lines=edits))


def _lines(
    slot: Mapping[str, Any], log_values: list[Any], version_values: list[Any], card: str
) -> tuple[list[LineEdit], datetime | None]:
    """The slot's lines as its log stands at the latest moment it knows."""
    base = {"namespace": slot["namespace"], "slot_id": slot["id"]}
    vbase = {**base, "subject_id": slot["subject_id"], "subject": slot["subject"]}
    vbase["predicate"] = slot["predicate"]
    log = [unpack_values(v, LOG_FIELDS, base) for v in log_values]
    versions = [unpack_values(v, VERSION_FIELDS, vbase) for v in version_values]
    times = [a["recorded_at"] for a in log] + [a["retracted_at"] for a in log]
    times += [v["expired_at"] for v in versions]
    known = [t for t in times if t is not None]
    if not known:
        return [], None
    k = max(known)
    believed = {
        (v["assertion_id"], v["valid_from"]): v
        for v in versions
        if v["expired_at"] is None and not v["quarantined"]
    }
    entries = [
        LogEntry(
            a["id"],
            a["op"],
            a["object_id"],
            a["valid_from"],
            a["valid_to"],
            a["recorded_at"],
            a["seq"],
            a["retracted_at"],
        )
        for a in log
        if not a["quarantined"]
    ]
    out = []
    for key, run in timelines(entries, card, known_at=k).items():  # type: ignore[arg-type]
        starts = [
            LineStart(s.at, s.source, None if s.object is None else believed.get((s.source, s.at)))
            for s in run
        ]
        if any(s.version is None for s, r in zip(starts, run, strict=True) if r.object):
            starts = _from_versions(list(believed.values()), key, card)  # stored rows rule
        lid = line_of(slot["id"], key)
        win = LineWindow(
            lid, slot["id"], slot["namespace"], slot["subject"], [], None, None, True, True
        )
        out.append(LineEdit(win, starts))
    return out, k


def _from_versions(believed: list[dict[str, Any]], key: str | None, card: str) -> list[LineStart]:
    """A line from its believed versions alone, where the replay disagrees with what was
    stored: each version a start, an absence where one ends and no other begins."""
    mine = sorted(
        (v for v in believed if card == "one" or v["object_id"] == key),
        key=lambda v: (v["valid_from"] is not None, v["valid_from"] or datetime.min),
    )
    starts: list[LineStart] = []
    begins = {v["valid_from"] for v in mine}
    for v in mine:
        starts.append(LineStart(v["valid_from"], v["assertion_id"], v))
        if v["valid_to"] is not None and v["valid_to"] not in begins:
            starts.append(LineStart(v["valid_to"], None, None))
    return starts
