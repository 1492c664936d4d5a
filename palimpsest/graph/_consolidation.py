"""Consolidation's slice of the Kùzu store: every Cypher string its steps need.

    >>> cs = ConsolidationStore(store.db)
    >>> cs.watermark("default")          # None before the first successful run
    >>> cs.changed_slots("default", since=k)

Tables of migration 3 (`EntityMerge`, `Contest`, `EpisodeDup`, `Decision`) are
written once; only their TIMESTAMP columns (`unmerged_at`, `resolved_at`) are
ever SET, and the episode `archived` flag is a BOOLEAN SET (no string bloat).
Scans filter on plain columns so they stay columnar: a no-op run on a large
memory reads a few columns of `Assertion`, `Episode` and `Entity`, nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from ._db import Database, Row
from ._reports import ReportFiles

_WATERMARK = "consolidation.watermark\x1f"
_BATCH = 2000


def _chunks(items: Sequence[Any], n: int = _BATCH) -> list[Sequence[Any]]:
    return [items[i : i + n] for i in range(0, len(items), n)]


class ConsolidationStore:
    """Reads and writes of the nightly job (a slice of the `Store`); its reports are
    files in the memory's folder (`_reports.py`)."""

    def __init__(self, db: Database, directory: Path) -> None:
        self.db = db
        self._reports = ReportFiles(directory)

    # --- reports ----------------------------------------------------------------------------
    def keep_report(
        self, namespace: str, finished_at: datetime, data: dict[str, Any], text: str
    ) -> None:
        """Keep a run's report (JSON-ready `data`, and its human summary `text`), whole or
        not at all, before the run's watermark commits."""
        self._reports.keep(namespace, finished_at, data, text)

    def reports(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's kept reports, oldest first."""
        return self._reports.reports(namespace)

    # --- watermark -----------------------------------------------------------------------
    def watermark(self, namespace: str) -> datetime | None:
        rows = self.db.query(
            "MATCH (m:Meta {key: $key}) RETURN m.value AS v", key=_WATERMARK + namespace
        )
        return datetime.fromisoformat(rows[0]["v"]) if rows and rows[0]["v"] else None

    def set_watermark(self, namespace: str, at: datetime) -> None:
        # a MERGE of a new row; the value is short and changes once per run
        self.db.query(
            "MERGE (m:Meta {key: $key}) SET m.value = $value",
            key=_WATERMARK + namespace,
            value=at.isoformat(),
        )

    # --- what changed --------------------------------------------------------------------
    def changed_slots(self, namespace: str, since: datetime | None) -> set[str]:
        """Slots with an assertion recorded or retracted at or after `since` (all: None)."""
        if since is None:
            rows = self.db.query(
                "MATCH (s:Slot) WHERE s.namespace = $ns RETURN s.id AS s", ns=namespace
            )
        else:
            rows = self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND (a.recorded_at >= $since"
                " OR a.retracted_at >= $since) RETURN DISTINCT a.slot_id AS s",
                ns=namespace,
                since=since,
            )
        return {r["s"] for r in rows}

    def conflicting_slots(self, namespace: str) -> set[str]:
        """Slots where standing assertions with one start name different objects."""
        rows = self.db.query(
            "MATCH (a:Assertion) WHERE a.namespace = $ns AND a.op = $op AND NOT a.quarantined"
            " AND a.retracted_at IS NULL"
            " WITH a.slot_id AS s, a.valid_from AS f, count(DISTINCT a.object_id) AS n"
            " WHERE n > 1 RETURN DISTINCT s",
            ns=namespace,
            op="assert",
        )
        return {r["s"] for r in rows}

    def new_episode_count(self, namespace: str, since: datetime | None) -> int:
        if since is None:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns RETURN count(*) AS c", ns=namespace
            )
        else:
            rows = self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns AND e.recorded_at >= $since"
                " RETURN count(*) AS c",
                ns=namespace,
                since=since,
            )
        return int(rows[0]["c"])

    def new_entity_count(self, namespace: str, since: datetime | None) -> int:
        if since is None:
            return 1  # the first run looks at everything
        rows = self.db.query(
            "MATCH (e:Entity) WHERE e.namespace = $ns AND e.created_at >= $since"
            " RETURN count(*) AS c",
            ns=namespace,
            since=since,
        )
        return int(rows[0]["c"])

    # --- episodes (dedupe, decay) --------------------------------------------------------
    def episode_digest(self, namespace: str) -> list[Row]:
        """What dedupe compares: every live episode's speaker, fingerprint, length."""
        return self.db.query_arrow(
            "MATCH (e:Episode) WHERE e.namespace = $ns RETURN e.id AS id, e.speaker AS speaker,"
            " e.fingerprint AS fingerprint, e.recorded_at AS recorded_at,"
            " size(e.text) AS length, e.archived AS archived",
            ns=namespace,
        )

    def duplicates(self, namespace: str) -> dict[str, str]:
        """Duplicate episode id -> the episode kept in its place."""
        rows = self.db.query(
            "MATCH (d:EpisodeDup) WHERE d.namespace = $ns RETURN d.id AS id, d.canonical AS c",
            ns=namespace,
        )
        return {r["id"]: r["c"] for r in rows}

    def record_duplicates(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, canonical, similarity, recorded_at; also archives each copy."""
        for r in rows:
            self.db.query(
                "CREATE (:EpisodeDup {id: $id, namespace: $namespace, canonical: $canonical,"
                " similarity: $similarity, recorded_at: $recorded_at})",
                **r,
            )
        self.archive([r["id"] for r in rows])

    def archive(self, episode_ids: Sequence[str]) -> None:
        for chunk in _chunks(list(episode_ids)):
            self.db.query(
                "UNWIND $ids AS i MATCH (e:Episode {id: i}) SET e.archived = true",
                ids=list(chunk),
            )

    def cold_candidates(self, namespace: str, *, below: float, before: datetime) -> list[Row]:
        """Live episodes of low importance recorded before `before`."""
        return self.db.query_arrow(
            "MATCH (e:Episode) WHERE e.namespace = $ns AND NOT e.archived"
            " AND e.importance < $below AND e.recorded_at < $before"
            " RETURN e.id AS id, e.importance AS importance, e.recorded_at AS recorded_at",
            ns=namespace,
            below=below,
            before=before,
        )

    # --- facts (expire) ------------------------------------------------------------------
    def ended_between(
        self, namespace: str, lo: datetime | None, hi: datetime, *, limit: int
    ) -> tuple[int, list[Row]]:
        """Believed, active versions whose window closed in [lo, hi): how many, and the
        `limit` most recent of them."""
        where = (
            "MATCH (f:Fact) WHERE f.namespace = $ns AND f.expired_at IS NULL"
            " AND NOT f.quarantined AND f.valid_to < $hi"
        )
        params: dict[str, Any] = {"ns": namespace, "hi": hi}
        if lo is not None:
            where += " AND f.valid_to >= $lo"
            params["lo"] = lo
        n = self.db.query(where + " RETURN count(*) AS c", **params)[0]["c"]
        rows = self.db.query(
            where + " RETURN f.assertion_id AS id, f.statement AS statement,"
            " f.valid_to AS valid_to ORDER BY f.valid_to DESC, f.assertion_id LIMIT $limit",
            **params,
            limit=limit,
        )
        return int(n), rows

    # --- entities (merge) ----------------------------------------------------------------
    def keys_of(self, entity_id: str) -> list[str]:
        """The name and alias keys (namespace \x1f key) pointing at an entity."""
        rows = self.db.query(
            "MATCH (k:EntityKey) WHERE k.entity_id = $id RETURN k.id AS id", id=entity_id
        )
        return sorted(r["id"] for r in rows)

    def touching(self, namespace: str, entity_ids: Sequence[str]) -> list[Row]:
        """Standing assertions with one of these entities as subject or object
        (three scans, however many entities)."""
        ids = sorted(set(entity_ids))
        if not ids:
            return []
        slots = [
            r["id"]
            for r in self.db.query(
                "MATCH (s:Slot) WHERE s.namespace = $ns AND list_contains($ids, s.subject_id)"
                " RETURN s.id AS id",
                ns=namespace,
                ids=ids,
            )
        ]
        rows = self.db.query(
            "MATCH (a:Assertion) WHERE a.namespace = $ns AND a.retracted_at IS NULL"
            " AND list_contains($ids, a.object_id) RETURN a",
            ns=namespace,
            ids=ids,
        )
        if slots:
            rows += self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns AND a.retracted_at IS NULL"
                " AND list_contains($slots, a.slot_id) RETURN a",
                ns=namespace,
                slots=slots,
            )
        return [r["a"] for r in rows]

    def entity_rows(self, namespace: str) -> list[Row]:
        """What merging compares of every entity (id, name, key, type, aliases, created_at)."""
        return self.db.query_arrow(
            "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.id AS id, e.name AS name,"
            " e.key AS key, e.type AS type, e.aliases AS aliases, e.created_at AS created_at",
            ns=namespace,
        )

    def relation_facts(self, namespace: str, subject_id: str) -> list[Row]:
        """Believed facts of a subject (for "my sister" -> the sibling it names)."""
        return self.db.query(
            "MATCH (f:Fact) WHERE f.namespace = $ns AND f.subject_id = $id"
            " AND f.expired_at IS NULL AND NOT f.quarantined"
            " RETURN f.predicate AS predicate, f.object_id AS object_id",
            ns=namespace,
            id=subject_id,
        )

    def set_aliases(self, entity_id: str, aliases: list[str]) -> None:
        # rare (once per merge) and short: the string-SET bloat does not matter here
        self.db.query(
            "MATCH (e:Entity {id: $id}) SET e.aliases = $aliases", id=entity_id, aliases=aliases
        )

    def create_merge(self, row: dict[str, Any]) -> None:
        self.db.query(
            "CREATE (:EntityMerge {id: $id, namespace: $namespace, winner: $winner,"
            " loser: $loser, keys: $keys, moved: $moved, reason: $reason,"
            " merged_at: $merged_at, unmerged_at: NULL})",
            **row,
        )

    def merge(self, merge_id: str) -> Row | None:
        rows = self.db.query("MATCH (m:EntityMerge {id: $id}) RETURN m", id=merge_id)
        return rows[0]["m"] if rows else None

    def merges(self, namespace: str) -> list[Row]:
        return [
            r["m"]
            for r in self.db.query(
                "MATCH (m:EntityMerge) WHERE m.namespace = $ns RETURN m ORDER BY m.merged_at",
                ns=namespace,
            )
        ]

    def set_unmerged(self, merge_id: str, at: datetime) -> None:
        self.db.query("MATCH (m:EntityMerge {id: $id}) SET m.unmerged_at = $at", id=merge_id, at=at)

    # --- contests (reconcile) ------------------------------------------------------------
    def contests(self, namespace: str) -> list[Row]:
        return self.db.query(
            "MATCH (c:Contest) WHERE c.namespace = $ns RETURN c.id AS id, c.slot_id AS slot_id,"
            " c.valid_from AS valid_from, c.objects AS objects, c.reason AS reason,"
            " c.recorded_at AS recorded_at, c.resolved_at AS resolved_at",
            ns=namespace,
        )

    def create_contest(self, row: dict[str, Any]) -> None:
        self.db.query(
            "CREATE (:Contest {id: $id, namespace: $namespace, slot_id: $slot_id,"
            " valid_from: $valid_from, objects: $objects, reason: $reason,"
            " recorded_at: $recorded_at, resolved_at: NULL})",
            **row,
        )

    def resolve_contest(self, contest_id: str, at: datetime) -> None:
        self.db.query("MATCH (c:Contest {id: $id}) SET c.resolved_at = $at", id=contest_id, at=at)

    # --- reasons -------------------------------------------------------------------------
    def record_decisions(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id (the assertion written), namespace, step, reason, recorded_at."""
        for r in rows:
            self.db.query(
                "MERGE (d:Decision {id: $id}) ON CREATE SET d.namespace = $namespace,"
                " d.step = $step, d.reason = $reason, d.recorded_at = $recorded_at",
                **r,
            )

    def decisions_since(self, namespace: str, since: datetime, steps: Sequence[str]) -> list[Row]:
        """Assertions consolidation wrote at or after `since` by these steps (id, step)."""
        return self.db.query(
            "MATCH (d:Decision) WHERE d.namespace = $ns AND d.recorded_at >= $since"
            " AND list_contains($steps, d.step) RETURN d.id AS id, d.step AS step",
            ns=namespace,
            since=since,
            steps=list(steps),
        )

    def decided_by(self, namespace: str, step: str, reason: str) -> list[str]:
        """Assertions a step wrote with exactly this reason (an unmerge's restorations)."""
        rows = self.db.query(
            "MATCH (d:Decision) WHERE d.namespace = $ns AND d.step = $step"
            " AND d.reason = $reason RETURN d.id AS id",
            ns=namespace,
            step=step,
            reason=reason,
        )
        return sorted(r["id"] for r in rows)

    def decision(self, assertion_id: str) -> Row | None:
        rows = self.db.query(
            "MATCH (d:Decision {id: $id}) RETURN d.step AS step, d.reason AS reason",
            id=assertion_id,
        )
        return rows[0] if rows else None
