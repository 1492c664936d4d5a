"""PostgreSQL: slots, their logs and versions, and their lines' starts, as indexed rows.

    >>> heads = store.slots.slot_heads([slot_id])
    >>> win = store.slots.line_windows({line_id: LineAsk(slot_id, ns, subject, reach)})
    >>> store.slots.write_facts(FactWrite(at=k, assertions=[a], insert=[v], lines=[edit]))

The Kùzu store packs a slot's history into a journal and a line's starts into pages
because it has no secondary index (graph/_journal.py, graph/_lines.py). Here each is
rows under a B-tree: a slot's log is its `assertion` rows (by seq), its versions its
`fact` rows (in the order they were created, `version_order`), and a line is a
`line` row plus one `line_start` row per start, keyed by its valid time. A write
touches only the rows it changes and reads only the window `temporal.advance` needs
(three index range scans per line), however long the history. Rows come back as
the Kùzu slice returns them: a version row read through a slot or a line omits
`statement` (the journal never held it). No temporal rule is decided here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from ..errors import StoreError
from ..storage.columns import ASSERTION_COLUMNS, FACT_COLUMNS, SLOT_COLUMNS
from ..storage.rows import (
    SEP,
    FactWrite,
    History,
    LineAsk,
    LineEdit,
    LineStart,
    LineWindow,
    Row,
    SlotHead,
)
from ._db import Database

_TYPES = {
    "valid_from": "timestamptz",
    "valid_to": "timestamptz",
    "recorded_at": "timestamptz",
    "expired_at": "timestamptz",
    "retracted_at": "timestamptz",
    "seq": "bigint",
    "confidence": "double precision",
    "evidence": "text[]",
    "quarantined": "boolean",
}
_C = 'text COLLATE "C"'


def _ddl_type(column: str) -> str:
    return _TYPES.get(column, _C)


def _table(name: str, columns: Sequence[str]) -> str:
    body = ", ".join(f"{c} {_ddl_type(c)}" for c in columns)
    return f"CREATE TABLE IF NOT EXISTS {name} ({body}, PRIMARY KEY (namespace, id))"


DDL: tuple[str, ...] = (
    _table("slot", SLOT_COLUMNS),
    "CREATE INDEX IF NOT EXISTS slot_id_ix ON slot (id)",
    "CREATE INDEX IF NOT EXISTS slot_predicate_ix ON slot (namespace, predicate)",
    _table("assertion", ASSERTION_COLUMNS),
    "CREATE INDEX IF NOT EXISTS assertion_id_ix ON assertion (id)",
    "CREATE INDEX IF NOT EXISTS assertion_slot_ix ON assertion (namespace, slot_id, seq)",
    "CREATE INDEX IF NOT EXISTS assertion_recorded_ix ON assertion (namespace, recorded_at)",
    # the store's clocks read the latest of these across every namespace, once per write
    "CREATE INDEX IF NOT EXISTS assertion_recorded_all_ix ON assertion (recorded_at)",
    "CREATE INDEX IF NOT EXISTS assertion_retracted_ix ON assertion (retracted_at)",
    "CREATE INDEX IF NOT EXISTS assertion_seq_ix ON assertion (seq)",
    "CREATE INDEX IF NOT EXISTS assertion_evidence_ix ON assertion USING gin (evidence)",
    "CREATE INDEX IF NOT EXISTS assertion_claims_ix ON assertion (namespace, seq)"
    " WHERE quarantined AND retracted_at IS NULL AND op = 'assert'",
    _table("fact", FACT_COLUMNS),
    "CREATE INDEX IF NOT EXISTS fact_id_ix ON fact (id)",
    "CREATE INDEX IF NOT EXISTS fact_slot_ix ON fact (namespace, slot_id)",
    "CREATE INDEX IF NOT EXISTS fact_subject_ix ON fact (namespace, subject_id, predicate)",
    "CREATE INDEX IF NOT EXISTS fact_object_ix ON fact (namespace, object_id)",
    "CREATE INDEX IF NOT EXISTS fact_recorded_ix ON fact (namespace, recorded_at)",
    "CREATE INDEX IF NOT EXISTS fact_expired_ix ON fact (namespace, expired_at)",
    # the order a slot's versions were created in (the Kùzu journal's): `n` grows
    "CREATE SEQUENCE IF NOT EXISTS version_order_seq",
    # (migration 2 adds its namespace: `VERSION_ORDER_BY_NAMESPACE`)
    'CREATE TABLE IF NOT EXISTS version_order (id text COLLATE "C" PRIMARY KEY, n bigint NOT NULL)',
    # a line (a slot's timeline, or a (slot, object)'s) and when it last changed
    f"CREATE TABLE IF NOT EXISTS line (namespace {_C}, id {_C}, slot_id {_C},"
    f" subject {_C}, changed_at timestamptz, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS line_id_ix ON line (id)",
    # its starts: `at` is '-infinity' for "since always"; version_id NULL is an absence
    f"CREATE TABLE IF NOT EXISTS line_start (namespace {_C}, line_id {_C},"
    f" at timestamptz NOT NULL, source {_C}, version_id {_C},"
    " PRIMARY KEY (namespace, line_id, at))",
    "CREATE INDEX IF NOT EXISTS line_start_version_ix ON line_start (version_id)"
    " WHERE version_id IS NOT NULL",
)

# migration 2: `version_order` keyed by namespace like every other table (its rows take
# the namespace of their version; those of versions gone go with them)
VERSION_ORDER_BY_NAMESPACE = (
    'ALTER TABLE version_order ADD COLUMN IF NOT EXISTS namespace text COLLATE "C"',
    "UPDATE version_order o SET namespace = f.namespace FROM fact f"
    " WHERE f.id = o.id AND o.namespace IS NULL",
    "DELETE FROM version_order WHERE namespace IS NULL",
    "ALTER TABLE version_order ALTER COLUMN namespace SET NOT NULL",
    "ALTER TABLE version_order DROP CONSTRAINT IF EXISTS version_order_pkey",
    "ALTER TABLE version_order ADD PRIMARY KEY (namespace, id)",
)
_ORDER_STEP = 1 << 20  # most rows one statement numbers (`version_order.n` = base + i)
_CHUNK = 50_000  # rows per bulk statement


def _cols(columns: Sequence[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{c}" for c in columns)


def _record(columns: Sequence[str]) -> str:
    """The column list of `jsonb_to_recordset(...) AS r(...)`."""
    return ", ".join(f"{c} {_TYPES.get(c, 'text')}" for c in columns)


# a version row as a slot or a line shows it (the journal never held the statement)
_VERSION_READ = tuple(c for c in FACT_COLUMNS if c != "statement")
_V = _cols(_VERSION_READ, "f.")
_A = _cols(ASSERTION_COLUMNS, "a.")
_KEYS = "unnest(%s::text[], %s::text[]) AS k(ns, id)"

_INSERT_ASSERTIONS = (
    f"INSERT INTO assertion ({_cols(ASSERTION_COLUMNS)}) SELECT {_cols(ASSERTION_COLUMNS)}"
    f" FROM jsonb_to_recordset(%s::jsonb) AS r({_record(ASSERTION_COLUMNS)})"
)
_INSERT_VERSIONS = (
    "WITH r AS (SELECT * FROM ROWS FROM (jsonb_to_recordset(%s::jsonb)"
    f" AS ({_record(FACT_COLUMNS)})) WITH ORDINALITY),"
    " base AS (SELECT nextval('version_order_seq') * %s AS b),"
    f" f AS (INSERT INTO fact ({_cols(FACT_COLUMNS)}) SELECT {_cols(FACT_COLUMNS)} FROM r)"
    " INSERT INTO version_order (namespace, id, n)"
    " SELECT r.namespace, r.id, base.b + r.ordinality FROM r, base"
)
_LINE_WINDOWS = (
    "SELECT q.i, l.id AS line_id, l.slot_id AS line_slot, l.namespace AS line_ns,"
    " l.subject AS line_subject, l.changed_at,"
    f" s.part, NULLIF(s.at, '-infinity') AS at, s.source, s.version_id, {_V}"
    " FROM unnest(%s::text[], %s::text[], %s::timestamptz[], %s::timestamptz[], %s::bool[])"
    " WITH ORDINALITY AS q(ns, id, lo, hi, whole, i)"
    " JOIN line l ON l.namespace = q.ns AND l.id = q.id"
    " LEFT JOIN LATERAL ("
    # the last start strictly before the reach
    " (SELECT 0 AS part, * FROM line_start WHERE namespace = q.ns AND line_id = q.id"
    "  AND NOT q.whole AND at < COALESCE(q.lo, '-infinity') ORDER BY at DESC LIMIT 1)"
    " UNION ALL"
    # the starts in it (a whole line: every start)
    " (SELECT 1, * FROM line_start WHERE namespace = q.ns AND line_id = q.id"
    "  AND (q.whole OR at BETWEEN COALESCE(q.lo, '-infinity') AND COALESCE(q.hi, '-infinity')))"
    " UNION ALL"
    # the first start after it: where the window's last version ends
    " (SELECT 2, * FROM line_start WHERE namespace = q.ns AND line_id = q.id"
    "  AND NOT q.whole AND at > COALESCE(q.hi, '-infinity') ORDER BY at LIMIT 1)"
    " ) s ON true"
    " LEFT JOIN fact f ON f.namespace = q.ns AND f.id = s.version_id AND s.part < 2"
    " ORDER BY q.i, s.at"
)


def _dump(rows: Sequence[Mapping[str, Any]]) -> str:
    return orjson.dumps(list(rows)).decode()


def _chunks(rows: Sequence[Any], size: int = _CHUNK) -> list[Sequence[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def _ns_of(slot_or_line_id: str) -> str:
    """The namespace a slot (or line) id starts with (engine/rows.py `slot_id`)."""
    return slot_or_line_id.split(SEP, 1)[0]


def _keys(ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """(namespaces, ids) for `_KEYS`: each slot or line id with the namespace it names."""
    ids = list(dict.fromkeys(ids))
    return [_ns_of(i) for i in ids], ids


def assertion_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {c: r.get(c) for c in ASSERTION_COLUMNS}
    out["evidence"] = list(r.get("evidence") or [])
    out["quarantined"] = bool(r.get("quarantined"))
    return out


def fact_row(r: Mapping[str, Any]) -> dict[str, Any]:
    out = {c: r.get(c) for c in FACT_COLUMNS}
    out["evidence"] = list(r.get("evidence") or [])
    out["quarantined"] = bool(r.get("quarantined"))
    return out


def slot_columns(row: Mapping[str, Any]) -> dict[str, Any]:
    return {c: row[c] for c in SLOT_COLUMNS}


class SlotStore:
    """Slots, their assertions and versions, lines and their starts."""

    def __init__(self, db: Database, names: Any) -> None:
        self.db = db
        self._names = names  # the entities a write creates

    # --- reads -----------------------------------------------------------------------------
    def slot_heads(self, slot_ids: Sequence[str]) -> dict[str, SlotHead]:
        """The stored slots among `slot_ids` (nothing to append to: `handle` stays None)."""
        return {sid: SlotHead(row) for sid, row in self._slot_rows(slot_ids).items()}

    def _slot_rows(self, slot_ids: Sequence[str]) -> dict[str, Row]:
        if not slot_ids:
            return {}
        rows = self.db.query(
            f"SELECT {_cols(SLOT_COLUMNS, 's.')} FROM slot s"
            f" JOIN {_KEYS} ON s.namespace = k.ns AND s.id = k.id",
            _keys(slot_ids),
        )
        return {r["id"]: r for r in rows}

    def histories(self, slot_ids: Sequence[str]) -> dict[str, History]:
        """(slot row, its log by seq, every version in the order created) of each stored
        slot."""
        slots = self._slot_rows(slot_ids)
        if not slots:
            return {}
        keys = _keys(list(slots))
        out: dict[str, History] = {sid: (row, [], []) for sid, row in slots.items()}
        for a in self.db.query(
            f"SELECT {_A} FROM assertion a JOIN {_KEYS} ON a.namespace = k.ns"
            " AND a.slot_id = k.id ORDER BY a.slot_id, a.seq, a.id",
            keys,
        ):
            out[a["slot_id"]][1].append(a)
        for v in self.db.query(
            f"SELECT {_V} FROM fact f JOIN {_KEYS} ON f.namespace = k.ns AND f.slot_id = k.id"
            " LEFT JOIN version_order o ON o.namespace = f.namespace AND o.id = f.id"
            " ORDER BY f.slot_id, o.n, f.id",
            keys,
        ):
            out[v["slot_id"]][2].append(v)
        return out

    def versions_at(
        self, slot_id: str, *, valid_at: datetime | None, known_at: datetime
    ) -> list[Row]:
        """The slot's versions believed at `known_at` and covering `valid_at` (None: any),
        quarantined ones included: a point query as of any moment."""
        return self.db.query(
            f"SELECT {_V} FROM fact f LEFT JOIN version_order o"
            " ON o.namespace = f.namespace AND o.id = f.id"
            " WHERE f.namespace = %(ns)s AND f.slot_id = %(slot)s AND f.recorded_at <= %(k)s"
            " AND (f.expired_at IS NULL OR f.expired_at > %(k)s)"
            " AND (%(v)s::timestamptz IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= %(v)s)"
            " AND (f.valid_to IS NULL OR f.valid_to > %(v)s)))"
            " ORDER BY o.n, f.id",
            {"ns": _ns_of(slot_id), "slot": slot_id, "k": known_at, "v": valid_at},
        )

    def versions_at_each(
        self, slot_ids: Sequence[str], *, valid_at: datetime | None, known_at: datetime
    ) -> dict[str, list[Row]]:
        """`versions_at` of many slots in one statement."""
        out: dict[str, list[Row]] = {}
        if not slot_ids:
            return out
        for r in self.db.query(
            f"SELECT {_V} FROM fact f JOIN {_KEYS} ON f.namespace = k.ns AND f.slot_id = k.id"
            " LEFT JOIN version_order o ON o.namespace = f.namespace AND o.id = f.id"
            " WHERE f.recorded_at <= %s AND (f.expired_at IS NULL OR f.expired_at > %s)"
            " AND (%s::timestamptz IS NULL OR ((f.valid_from IS NULL OR f.valid_from <= %s)"
            " AND (f.valid_to IS NULL OR f.valid_to > %s)))"
            " ORDER BY f.slot_id, o.n, f.id",
            (*_keys(slot_ids), known_at, known_at, valid_at, valid_at, valid_at),
        ):
            out.setdefault(r["slot_id"], []).append(r)
        return out

    def line_windows(self, asks: Mapping[str, LineAsk]) -> dict[str, LineWindow]:
        """Per line id: its slot and the reach a write needs (None: the whole line): the
        last start before the reach, those in it and the first after, by index range."""
        lids = list(asks)
        out: dict[str, LineWindow] = {}
        if not lids:
            return out
        reaches = [asks[lid].reach for lid in lids]
        rows = self.db.query(
            _LINE_WINDOWS,
            (
                [asks[lid].namespace or _ns_of(lid) for lid in lids],
                lids,
                [None if r is None else r.lo for r in reaches],
                [None if r is None else r.hi for r in reaches],
                [r is None for r in reaches],
            ),
        )
        for r in rows:
            lid = r["line_id"]
            win = out.get(lid)
            if win is None:
                win = out[lid] = LineWindow(
                    lid,
                    r["line_slot"],
                    r["line_ns"],
                    r["line_subject"],
                    [],
                    None,
                    r["changed_at"],
                    False,
                    asks[lid].reach is None,
                )
            if r["part"] is None:
                continue
            if r["part"] == 2:
                win.after = r["at"]
                continue
            version = None
            if r["version_id"] is not None:
                version = {c: r[c] for c in _VERSION_READ}
                if version["id"] is None:
                    raise StoreError(f"internal: a start of line {lid!r} names a lost version")
            win.run.append(LineStart(r["at"], r["source"], version))
        for lid, ask in asks.items():
            if lid not in out:
                out[lid] = LineWindow(
                    lid,
                    ask.slot_id,
                    ask.namespace,
                    ask.subject,
                    [],
                    None,
                    None,
                    True,
                    ask.reach is None,
                )
        return {lid: out[lid] for lid in lids}

    def assertion(self, assertion_id: str) -> Row | None:
        rows = self.db.query(
            f"SELECT {_cols(ASSERTION_COLUMNS)} FROM assertion WHERE id = %s LIMIT 1",
            (assertion_id,),
        )
        return rows[0] if rows else None

    def assertions_by_id(self, ids: Sequence[str]) -> dict[str, Row]:
        if not ids:
            return {}
        rows = self.db.query(
            f"SELECT {_cols(ASSERTION_COLUMNS)} FROM assertion WHERE id = ANY(%s)", (list(ids),)
        )
        return {r["id"]: r for r in rows}

    def quarantined_claims(self, namespace: str) -> list[Row]:
        """Quarantined assertions still standing (not retracted): consolidation's input."""
        return self.db.query(
            f"SELECT {_cols(ASSERTION_COLUMNS)} FROM assertion WHERE namespace = %s"
            " AND quarantined AND retracted_at IS NULL AND op = 'assert' ORDER BY seq, id",
            (namespace,),
        )

    def assertions_citing(self, namespace: str, episode_id: str) -> list[Row]:
        return self.db.query(
            f"SELECT {_cols(ASSERTION_COLUMNS)} FROM assertion WHERE evidence @> ARRAY[%s]::text[]"
            " AND namespace = %s ORDER BY seq, id",
            (episode_id, namespace),
        )

    def slots_of_predicate(self, namespace: str, predicate: str) -> list[str]:
        rows = self.db.query(
            "SELECT id FROM slot WHERE namespace = %s AND predicate = %s ORDER BY id",
            (namespace, predicate),
        )
        return [r["id"] for r in rows]

    def slot_version_ids(self, slot_id: str) -> list[str]:
        """Every stored version of the slot, read from the fact rows themselves."""
        parts = slot_id.split(SEP)
        if len(parts) != 3 or not parts[1]:
            return []
        rows = self.db.query(
            "SELECT id FROM fact WHERE namespace = %s AND slot_id = %s ORDER BY id",
            (parts[0], slot_id),
        )
        return [r["id"] for r in rows]

    # --- the write ---------------------------------------------------------------------------
    def write_facts(self, w: FactWrite, *, heads: Mapping[str, SlotHead] | None = None) -> None:
        """Store what a write did: its rows, and each edited line's window replaced."""
        touched = {a["slot_id"] for a in w.assertions}
        touched |= {v["slot_id"] for v in (*w.insert, *w.expire, *w.vanish)}
        touched |= {slot for _, slot, _ in w.retract}
        known = set(heads or {}) | {s["id"] for s in w.slots}
        missing = sorted(touched - known)
        if missing:
            found = self._slot_rows(missing)
            lost = [s for s in missing if s not in found]
            if lost:
                raise StoreError(f"internal: a write to a slot that is not stored ({lost[0]!r})")
        if w.entities:
            self._names.create_entities(w.entities)
        self._create_slots(w.slots)
        self.create_assertions(w.assertions)
        # each row names its namespace (a retraction, its slot's): one shard per statement
        self._delete_versions([(v["namespace"], v["id"]) for v in w.vanish])
        self._expire_versions([(v["namespace"], v["id"]) for v in w.expire], w.at)
        self.create_versions(w.insert)
        if w.retract:
            self.db.execute_many(
                "UPDATE assertion SET retracted_at = %s, retract_reason = %s"
                " WHERE namespace = %s AND id = %s",
                [(w.at, why, _ns_of(slot), aid) for aid, slot, why in w.retract],
            )
        self._write_lines(w.lines, w.at)

    def _create_slots(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        self.db.query(
            f"INSERT INTO slot ({_cols(SLOT_COLUMNS)}) SELECT {_cols(SLOT_COLUMNS)}"
            f" FROM jsonb_to_recordset(%s::jsonb) AS r({_record(SLOT_COLUMNS)})"
            " ON CONFLICT (namespace, id) DO NOTHING",
            (_dump([slot_columns(r) for r in rows]),),
        )

    def _write_lines(self, edits: Sequence[LineEdit], at: datetime) -> None:
        """Each edited line's row (its last change now) and its window's starts replaced."""
        if not edits:
            return
        whole = [e.window for e in edits if e.window.whole and not e.window.new]
        if whole:
            self.db.query(
                "DELETE FROM line_start s USING unnest(%s::text[], %s::text[]) AS d(ns, id)"
                " WHERE s.namespace = d.ns AND s.line_id = d.id",
                ([w.namespace for w in whole], [w.line_id for w in whole]),
            )
        gone = [
            (e.window.namespace, e.window.line_id, s.at)
            for e in edits
            if not e.window.whole and not e.window.new
            for s in e.window.run
        ]
        if gone:
            ns, lid, ats = zip(*gone, strict=True)
            self.db.query(
                "DELETE FROM line_start s USING unnest(%s::text[], %s::text[],"
                " %s::timestamptz[]) AS d(ns, id, at) WHERE s.namespace = d.ns"
                " AND s.line_id = d.id AND s.at = COALESCE(d.at, '-infinity')",
                (list(ns), list(lid), list(ats)),
            )
        lines = {e.window.line_id: e.window for e in edits}
        self.db.query(
            "INSERT INTO line (namespace, id, slot_id, subject, changed_at)"
            " SELECT ns, id, slot_id, subject, %s FROM unnest(%s::text[], %s::text[],"
            " %s::text[], %s::text[]) AS r(ns, id, slot_id, subject)"
            " ON CONFLICT (namespace, id) DO UPDATE SET slot_id = excluded.slot_id,"
            " subject = excluded.subject, changed_at = excluded.changed_at",
            (
                at,
                [w.namespace for w in lines.values()],
                list(lines),
                [w.slot_id for w in lines.values()],
                [w.subject for w in lines.values()],
            ),
        )
        starts = [
            (
                e.window.namespace,
                e.window.line_id,
                s.at,
                s.source,
                None if s.version is None else s.version["id"],
            )
            for e in edits
            for s in e.run
        ]
        if starts:
            ns, lid, ats, sources, versions = zip(*starts, strict=True)
            self.db.query(
                "INSERT INTO line_start (namespace, line_id, at, source, version_id)"
                " SELECT ns, id, COALESCE(at, '-infinity'), source, version_id FROM"
                " unnest(%s::text[], %s::text[], %s::timestamptz[], %s::text[], %s::text[])"
                " AS r(ns, id, at, source, version_id)"
                " ON CONFLICT (namespace, line_id, at) DO UPDATE SET source = excluded.source,"
                " version_id = excluded.version_id",
                (list(ns), list(lid), list(ats), list(sources), list(versions)),
            )

    # --- row statements ---------------------------------------------------------------------
    def create_assertions(self, rows: Sequence[dict[str, Any]]) -> None:
        for part in _chunks(rows):
            self.db.query(_INSERT_ASSERTIONS, (_dump([assertion_row(r) for r in part]),))

    def retract_assertion(self, assertion_id: str, at: datetime, reason: str | None) -> None:
        self.db.execute(
            "UPDATE assertion SET retracted_at = %s, retract_reason = %s WHERE id = %s",
            (at, reason, assertion_id),
        )

    def set_assertion_evidence(self, assertion_id: str, evidence: list[str]) -> None:
        self.db.execute(
            "UPDATE assertion SET evidence = %s WHERE id = %s", (list(evidence), assertion_id)
        )

    def delete_assertion(self, assertion_id: str) -> None:
        self.db.execute("DELETE FROM assertion WHERE id = %s", (assertion_id,))

    def create_versions(self, rows: Sequence[dict[str, Any]]) -> None:
        for part in _chunks(rows):
            self.db.query(_INSERT_VERSIONS, (_dump([fact_row(r) for r in part]), _ORDER_STEP))

    def expire_versions(self, version_ids: Sequence[str], at: datetime) -> None:
        if version_ids:
            self.db.execute(
                "UPDATE fact SET expired_at = %s WHERE id = ANY(%s)", (at, list(version_ids))
            )

    def delete_versions(self, version_ids: Sequence[str]) -> None:
        """The versions gone, with their order and every line start showing them (by id
        alone, as the seam asks: every namespace is searched)."""
        if not version_ids:
            return
        self.db.execute(
            "WITH f AS (DELETE FROM fact WHERE id = ANY(%(ids)s)),"
            " o AS (DELETE FROM version_order WHERE id = ANY(%(ids)s))"
            " DELETE FROM line_start WHERE version_id = ANY(%(ids)s)",
            {"ids": list(version_ids)},
        )

    def _delete_versions(self, keys: Sequence[tuple[str, str]]) -> None:
        """`delete_versions` of (namespace, version id) pairs: each row found in its
        namespace."""
        if not keys:
            return
        self.db.execute(
            "WITH d AS (SELECT * FROM unnest(%s::text[], %s::text[]) AS d(ns, id)),"
            " f AS (DELETE FROM fact x USING d WHERE x.namespace = d.ns AND x.id = d.id),"
            " o AS (DELETE FROM version_order x USING d WHERE x.namespace = d.ns AND x.id = d.id)"
            " DELETE FROM line_start x USING d WHERE x.namespace = d.ns AND x.version_id = d.id",
            ([ns for ns, _ in keys], [i for _, i in keys]),
        )

    def _expire_versions(self, keys: Sequence[tuple[str, str]], at: datetime) -> None:
        """`expire_versions` of (namespace, version id) pairs."""
        if keys:
            self.db.execute(
                "UPDATE fact x SET expired_at = %s FROM unnest(%s::text[], %s::text[]) AS d(ns, id)"
                " WHERE x.namespace = d.ns AND x.id = d.id",
                (at, [ns for ns, _ in keys], [i for _, i in keys]),
            )

    def write_histories(self, histories: Sequence[History], *, replace: bool) -> None:
        """Slots with their whole histories written afresh (restore, erase). Their log and
        versions are the `assertion` and `fact` rows the caller writes itself
        (`create_assertions`, `create_versions`): only the slot rows are written here."""
        rows = [slot_columns(row) for row, _, _ in histories]
        if not rows:
            return
        conflict = (
            "DO UPDATE SET subject_id = excluded.subject_id, predicate = excluded.predicate,"
            " subject = excluded.subject"
            if replace
            else "DO NOTHING"
        )
        self.db.query(
            f"INSERT INTO slot ({_cols(SLOT_COLUMNS)}) SELECT {_cols(SLOT_COLUMNS)}"
            f" FROM jsonb_to_recordset(%s::jsonb) AS r({_record(SLOT_COLUMNS)})"
            f" ON CONFLICT (namespace, id) {conflict}",
            (_dump(rows),),
        )
