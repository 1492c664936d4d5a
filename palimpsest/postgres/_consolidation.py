"""PostgreSQL: consolidation's slice of the store, every SQL string its steps need.

    >>> cs = ConsolidationStore(store.db)
    >>> cs.watermark("default")          # None before the first successful run
    >>> cs.changed_slots("default", since=k)

The tables of Kùzu's migration 3 (graph/_consolidation.py) under their snake_case
names: `entity_merge`, `contest`, `episode_dup`, `decision`, written once; only
`unmerged_at` and `resolved_at` are ever updated, and the episode `archived` flag.
Reports, which Kùzu keeps as files beside its database, are rows of
`consolidation_report` here (the database is all a PostgreSQL memory has), each one
INSERT: whole or not at all. The watermark is a `meta` row under Kùzu's key.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..storage.columns import ASSERTION_COLUMNS
from ..storage.rows import Row
from ._db import Database

_WATERMARK = "consolidation.watermark\x1f"


def _guarded_index(table: str, name: str, columns: str, where: str = "") -> str:
    """An index on a table another slice owns, created when that table exists (its
    owner's DDL runs first in migration 1; a branch without it skips the index)."""
    # every argument is one of the constants below, never input
    return (
        f"DO $$ BEGIN IF to_regclass('{table}') IS NOT NULL THEN"
        f" CREATE INDEX IF NOT EXISTS {name} ON {table} ({columns}){where}; END IF; END $$"
    )


DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS entity_merge (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, winner text COLLATE "C", loser text COLLATE "C",'
    ' keys text[], moved text[], reason text COLLATE "C", merged_at timestamptz,'
    " unmerged_at timestamptz, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS entity_merge_id ON entity_merge (id)",
    "CREATE INDEX IF NOT EXISTS entity_merge_at ON entity_merge (namespace, merged_at)",
    'CREATE TABLE IF NOT EXISTS contest (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, slot_id text COLLATE "C", valid_from timestamptz,'
    ' objects text[], reason text COLLATE "C", recorded_at timestamptz,'
    " resolved_at timestamptz, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS contest_id ON contest (id)",
    'CREATE TABLE IF NOT EXISTS episode_dup (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, canonical text COLLATE "C",'
    " similarity double precision, recorded_at timestamptz, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS episode_dup_id ON episode_dup (id)",
    'CREATE TABLE IF NOT EXISTS decision (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, step text COLLATE "C", reason text COLLATE "C",'
    " recorded_at timestamptz, PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS decision_id ON decision (id)",
    "CREATE INDEX IF NOT EXISTS decision_at ON decision (namespace, recorded_at)",
    "CREATE INDEX IF NOT EXISTS decision_reason ON decision (namespace, step, reason)",
    # n orders two runs that finished at one clock reading (a frozen test clock)
    'CREATE TABLE IF NOT EXISTS consolidation_report (namespace text COLLATE "C" NOT NULL,'
    " finished_at timestamptz NOT NULL, n bigint GENERATED ALWAYS AS IDENTITY,"
    " data text NOT NULL, text text NOT NULL, PRIMARY KEY (namespace, finished_at, n))",
    # the reads of other slices' tables that only consolidation makes
    _guarded_index("assertion", "cons_assertion_recorded", "namespace, recorded_at"),
    _guarded_index("assertion", "cons_assertion_retracted", "namespace, retracted_at"),
    _guarded_index("assertion", "cons_assertion_object", "namespace, object_id"),
    _guarded_index("entity", "cons_entity_created", "namespace, created_at"),
    _guarded_index("episode", "cons_episode_recorded", "namespace, recorded_at"),
    _guarded_index("fact", "cons_fact_ended", "namespace, valid_to", " WHERE expired_at IS NULL"),
)

_ASSERTION = ", ".join(ASSERTION_COLUMNS)
_MERGE_COLUMNS = (
    "id",
    "namespace",
    "winner",
    "loser",
    "keys",
    "moved",
    "reason",
    "merged_at",
    "unmerged_at",
)
_MERGE = ", ".join(_MERGE_COLUMNS)


class ConsolidationStore:
    """Reads and writes of the nightly job (a slice of the `Store`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- reports -------------------------------------------------------------------------
    def keep_report(
        self, namespace: str, finished_at: datetime, data: dict[str, Any], text: str
    ) -> None:
        """Keep a run's report (JSON-ready `data`, and its human summary `text`), whole or
        not at all, before the run's watermark commits."""
        # text, not jsonb: the JSON comes back exactly as written (key order, NaN)
        with self.db.write():
            self.db.execute(
                "INSERT INTO consolidation_report (namespace, finished_at, data, text)"
                " VALUES (%s, %s, %s, %s)",
                (namespace, finished_at, json.dumps(data, indent=2), text),
            )

    def reports(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's kept reports, oldest first (one that is no report of ours,
        edited by hand, is skipped)."""
        rows = self.db.query(
            "SELECT data FROM consolidation_report WHERE namespace = %s ORDER BY finished_at, n",
            (namespace,),
        )
        out = []
        for r in rows:
            try:
                data = json.loads(r["data"])
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("namespace") == namespace:
                out.append(data)
        return out

    # --- watermark -----------------------------------------------------------------------
    def watermark(self, namespace: str) -> datetime | None:
        value = self.db.scalar("SELECT value FROM meta WHERE key = %s", (_WATERMARK + namespace,))
        return datetime.fromisoformat(value) if value else None

    def set_watermark(self, namespace: str, at: datetime) -> None:
        with self.db.write():
            self.db.execute(
                "INSERT INTO meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_WATERMARK + namespace, at.isoformat()),
            )

    # --- what changed --------------------------------------------------------------------
    def changed_slots(self, namespace: str, since: datetime | None) -> set[str]:
        """Slots with an assertion recorded or retracted at or after `since` (all: None)."""
        if since is None:
            rows = self.db.query("SELECT id AS s FROM slot WHERE namespace = %s", (namespace,))
        else:
            rows = self.db.query(
                "SELECT DISTINCT slot_id AS s FROM assertion WHERE namespace = %s"
                " AND (recorded_at >= %s OR retracted_at >= %s)",
                (namespace, since, since),
            )
        return {r["s"] for r in rows}

    def conflicting_slots(self, namespace: str) -> set[str]:
        """Slots where standing assertions with one start name different objects."""
        rows = self.db.query(
            "SELECT DISTINCT slot_id AS s FROM assertion WHERE namespace = %s AND op = %s"
            " AND NOT quarantined AND retracted_at IS NULL GROUP BY slot_id, valid_from"
            " HAVING count(DISTINCT object_id) > 1",
            (namespace, "assert"),
        )
        return {r["s"] for r in rows}

    def new_episode_count(self, namespace: str, since: datetime | None) -> int:
        if since is None:
            n = self.db.scalar("SELECT count(*) FROM episode WHERE namespace = %s", (namespace,))
        else:
            n = self.db.scalar(
                "SELECT count(*) FROM episode WHERE namespace = %s AND recorded_at >= %s",
                (namespace, since),
            )
        return int(n)

    def new_entity_count(self, namespace: str, since: datetime | None) -> int:
        if since is None:
            return 1  # the first run looks at everything
        n = self.db.scalar(
            "SELECT count(*) FROM entity WHERE namespace = %s AND created_at >= %s",
            (namespace, since),
        )
        return int(n)

    # --- episodes (dedupe, decay) --------------------------------------------------------
    def episode_digest(self, namespace: str) -> list[Row]:
        """What dedupe compares: every live episode's speaker, fingerprint, length."""
        return self.db.query(
            "SELECT id, speaker, fingerprint, recorded_at, char_length(text) AS length,"
            " archived FROM episode WHERE namespace = %s ORDER BY recorded_at, id",
            (namespace,),
        )

    def duplicates(self, namespace: str) -> dict[str, str]:
        """Duplicate episode id -> the episode kept in its place."""
        rows = self.db.query(
            "SELECT id, canonical FROM episode_dup WHERE namespace = %s", (namespace,)
        )
        return {r["id"]: r["canonical"] for r in rows}

    def record_duplicates(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, canonical, similarity, recorded_at; also archives each copy."""
        if not rows:
            return
        with self.db.write():
            self.db.execute_many(
                "INSERT INTO episode_dup (id, namespace, canonical, similarity, recorded_at)"
                " VALUES (%(id)s, %(namespace)s, %(canonical)s, %(similarity)s,"
                " %(recorded_at)s)",
                [
                    {c: r[c] for c in ("id", "namespace", "canonical", "similarity", "recorded_at")}
                    for r in rows
                ],
            )
            # each copy in its namespace (`archive` is asked by id alone)
            self.db.execute(
                "UPDATE episode x SET archived = true FROM unnest(%s::text[], %s::text[])"
                " AS d(ns, id) WHERE x.namespace = d.ns AND x.id = d.id",
                ([r["namespace"] for r in rows], [r["id"] for r in rows]),
            )

    def archive(self, episode_ids: Sequence[str]) -> None:
        if not episode_ids:
            return
        with self.db.write():
            self.db.execute(
                "UPDATE episode SET archived = true WHERE id = ANY(%s)", (list(episode_ids),)
            )

    def cold_candidates(self, namespace: str, *, below: float, before: datetime) -> list[Row]:
        """Live episodes of low importance recorded before `before`."""
        return self.db.query(
            "SELECT id, importance, recorded_at FROM episode WHERE namespace = %s"
            " AND NOT archived AND importance < %s AND recorded_at < %s"
            " ORDER BY recorded_at, id",
            (namespace, below, before),
        )

    # --- facts (expire) ------------------------------------------------------------------
    def ended_between(
        self, namespace: str, lo: datetime | None, hi: datetime, *, limit: int
    ) -> tuple[int, list[Row]]:
        """Believed, active versions whose window closed in [lo, hi): how many, and the
        `limit` most recent of them."""
        where = (
            " FROM fact WHERE namespace = %s AND expired_at IS NULL AND NOT quarantined"
            " AND valid_to < %s"
        )
        params: tuple[Any, ...] = (namespace, hi)
        if lo is not None:
            where += " AND valid_to >= %s"
            params += (lo,)
        n = self.db.scalar("SELECT count(*)" + where, params)
        rows = self.db.query(
            "SELECT assertion_id AS id, statement, valid_to"
            + where
            + " ORDER BY valid_to DESC, assertion_id LIMIT %s",
            (*params, limit),
        )
        return int(n), rows

    # --- entities (merge) ----------------------------------------------------------------
    def keys_of(self, entity_id: str) -> list[str]:
        """The name and alias keys (namespace \x1f key) pointing at an entity."""
        rows = self.db.query(
            "SELECT namespace, key FROM entity_key WHERE entity_id = %s", (entity_id,)
        )
        return sorted(f"{r['namespace']}\x1f{r['key']}" for r in rows)

    def touching(self, namespace: str, entity_ids: Sequence[str]) -> list[Row]:
        """Standing assertions with one of these entities as subject or object
        (two reads, however many entities)."""
        ids = sorted(set(entity_ids))
        if not ids:
            return []
        rows = self.db.query(
            f"SELECT {_ASSERTION} FROM assertion WHERE namespace = %s"
            " AND retracted_at IS NULL AND object_id = ANY(%s) ORDER BY seq, id",
            (namespace, ids),
        )
        rows += self.db.query(
            f"SELECT {_ASSERTION} FROM assertion WHERE namespace = %s"
            " AND retracted_at IS NULL AND slot_id IN (SELECT id FROM slot"
            " WHERE namespace = %s AND subject_id = ANY(%s)) ORDER BY seq, id",
            (namespace, namespace, ids),
        )
        return rows

    def entity_rows(self, namespace: str) -> list[Row]:
        """What merging compares of every entity (id, name, key, type, aliases, created_at)."""
        return self.db.query(
            "SELECT id, name, key, type, aliases, created_at FROM entity"
            " WHERE namespace = %s ORDER BY created_at, id",
            (namespace,),
        )

    def relation_facts(self, namespace: str, subject_id: str) -> list[Row]:
        """Believed facts of a subject (for "my sister" -> the sibling it names)."""
        return self.db.query(
            "SELECT predicate, object_id FROM fact WHERE namespace = %s AND subject_id = %s"
            " AND expired_at IS NULL AND NOT quarantined ORDER BY recorded_at, id",
            (namespace, subject_id),
        )

    def set_aliases(self, entity_id: str, aliases: list[str]) -> None:
        with self.db.write():
            self.db.execute(
                "UPDATE entity SET aliases = %s WHERE id = %s", (list(aliases), entity_id)
            )

    def create_merge(self, row: dict[str, Any]) -> None:
        with self.db.write():
            self.db.execute(
                "INSERT INTO entity_merge (id, namespace, winner, loser, keys, moved, reason,"
                " merged_at, unmerged_at) VALUES (%(id)s, %(namespace)s, %(winner)s,"
                " %(loser)s, %(keys)s, %(moved)s, %(reason)s, %(merged_at)s, NULL)",
                {c: row[c] for c in _MERGE_COLUMNS if c != "unmerged_at"},
            )

    def merge(self, merge_id: str) -> Row | None:
        rows = self.db.query(f"SELECT {_MERGE} FROM entity_merge WHERE id = %s", (merge_id,))
        return rows[0] if rows else None

    def merges(self, namespace: str) -> list[Row]:
        return self.db.query(
            f"SELECT {_MERGE} FROM entity_merge WHERE namespace = %s ORDER BY merged_at, id",
            (namespace,),
        )

    def set_unmerged(self, merge_id: str, at: datetime) -> None:
        with self.db.write():
            self.db.execute(
                "UPDATE entity_merge SET unmerged_at = %s WHERE id = %s", (at, merge_id)
            )

    # --- contests (reconcile) ------------------------------------------------------------
    def contests(self, namespace: str) -> list[Row]:
        return self.db.query(
            "SELECT id, slot_id, valid_from, objects, reason, recorded_at, resolved_at"
            " FROM contest WHERE namespace = %s ORDER BY recorded_at, id",
            (namespace,),
        )

    def create_contest(self, row: dict[str, Any]) -> None:
        with self.db.write():
            self.db.execute(
                "INSERT INTO contest (id, namespace, slot_id, valid_from, objects, reason,"
                " recorded_at, resolved_at) VALUES (%(id)s, %(namespace)s, %(slot_id)s,"
                " %(valid_from)s, %(objects)s, %(reason)s, %(recorded_at)s, NULL)",
                {
                    c: row[c]
                    for c in (
                        "id",
                        "namespace",
                        "slot_id",
                        "valid_from",
                        "objects",
                        "reason",
                        "recorded_at",
                    )
                },
            )

    def resolve_contest(self, contest_id: str, at: datetime) -> None:
        with self.db.write():
            self.db.execute("UPDATE contest SET resolved_at = %s WHERE id = %s", (at, contest_id))

    # --- reasons -------------------------------------------------------------------------
    def record_decisions(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id (the assertion written), namespace, step, reason, recorded_at."""
        if not rows:
            return
        with self.db.write():
            # the first reason recorded for an assertion stands (Kùzu: MERGE ON CREATE)
            self.db.execute_many(
                "INSERT INTO decision (id, namespace, step, reason, recorded_at)"
                " VALUES (%(id)s, %(namespace)s, %(step)s, %(reason)s, %(recorded_at)s)"
                " ON CONFLICT DO NOTHING",
                [
                    {c: r[c] for c in ("id", "namespace", "step", "reason", "recorded_at")}
                    for r in rows
                ],
            )

    def decisions_since(self, namespace: str, since: datetime, steps: Sequence[str]) -> list[Row]:
        """Assertions consolidation wrote at or after `since` by these steps (id, step)."""
        return self.db.query(
            "SELECT id, step FROM decision WHERE namespace = %s AND recorded_at >= %s"
            " AND step = ANY(%s) ORDER BY recorded_at, id",
            (namespace, since, list(steps)),
        )

    def decided_by(self, namespace: str, step: str, reason: str) -> list[str]:
        """Assertions a step wrote with exactly this reason (an unmerge's restorations)."""
        rows = self.db.query(
            "SELECT id FROM decision WHERE namespace = %s AND step = %s AND reason = %s"
            " ORDER BY id",
            (namespace, step, reason),
        )
        return [r["id"] for r in rows]

    def decision(self, assertion_id: str) -> Row | None:
        rows = self.db.query("SELECT step, reason FROM decision WHERE id = %s", (assertion_id,))
        return rows[0] if rows else None
