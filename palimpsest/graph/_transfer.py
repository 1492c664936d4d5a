"""Raw reads and writes of a whole namespace, for export and lossless restore.

    >>> ts = TransferStore(store)
    >>> rows = ts.assertions("default")        # the log, in recording order

Reads return every stored column, so an export loses nothing; writes put rows
back exactly as given (same ids, same transaction times). Versions are not
read here: they are derived from the log, and the importer rebuilds them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from ._bulk import copy_nodes
from ._columns import ENTITY_COLUMNS, EPISODE_COLUMNS
from ._db import Row
from ._store import Store

# Consolidation's own records (migration 3 on): exported row by row with the column
# types the store reports, so a column added to them travels without code here.
AUX_TABLES = ("EntityMerge", "Contest", "EpisodeDup", "Decision")
# tables whose primary keys an import may collide with; names are never taken from input
_ID_TABLES = (
    "Entity",
    "EntityKey",
    "Episode",
    "Slot",
    "Assertion",
    "Tombstone",
    "Predicate",
    *AUX_TABLES,
)
_ARROW = {
    "STRING": pa.string(),
    "TIMESTAMP": pa.timestamp("us"),
    "DOUBLE": pa.float64(),
    "INT64": pa.int64(),
    "BOOL": pa.bool_(),
    "STRING[]": pa.list_(pa.string()),
}
_SCAN = 20_000


class TransferStore:
    """Whole-namespace reads and raw restores over one `Store`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.db = store.db

    # --- reads ------------------------------------------------------------------------------
    def predicates(self, namespace: str) -> list[Row]:
        rows = self.store.predicates(namespace)
        return sorted(rows, key=lambda r: r["name"])

    def entities(self, namespace: str) -> list[Row]:
        return [
            r["e"]
            for r in self.db.query(
                "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e ORDER BY e.created_at, e.id",
                ns=namespace,
            )
        ]

    def entity_keys(self, namespace: str) -> list[Row]:
        """Name and alias keys of the namespace: {key, entity_id}."""
        prefix = f"{namespace}\x1f"
        rows = self.db.query(
            "MATCH (k:EntityKey) WHERE starts_with(k.id, $p)"
            " RETURN k.id AS id, k.entity_id AS entity_id ORDER BY k.id",
            p=prefix,
        )
        return [{"key": r["id"][len(prefix) :], "entity_id": r["entity_id"]} for r in rows]

    def episodes(self, namespace: str) -> list[Row]:
        return [
            r["e"]
            for r in self.db.query(
                "MATCH (e:Episode) WHERE e.namespace = $ns RETURN e ORDER BY e.recorded_at, e.id",
                ns=namespace,
            )
        ]

    def slots(self, namespace: str) -> list[Row]:
        return [
            r["s"]
            for r in self.db.query(
                "MATCH (s:Slot) WHERE s.namespace = $ns RETURN s ORDER BY s.id", ns=namespace
            )
        ]

    def assertions(self, namespace: str) -> list[Row]:
        return [
            r["a"]
            for r in self.db.query(
                "MATCH (a:Assertion) WHERE a.namespace = $ns RETURN a ORDER BY a.seq, a.id",
                ns=namespace,
            )
        ]

    def tombstones(self, namespace: str) -> list[Row]:
        return [
            r["t"]
            for r in self.db.query(
                "MATCH (t:Tombstone) WHERE t.namespace = $ns RETURN t ORDER BY t.erased_at, t.id",
                ns=namespace,
            )
        ]

    def aux_columns(self) -> dict[str, dict[str, str]]:
        """{table: {column: Kùzu type}} of the auxiliary tables this store has."""
        present = {r["name"] for r in self.db.query("CALL SHOW_TABLES() RETURN name AS name")}
        out: dict[str, dict[str, str]] = {}
        for table in AUX_TABLES:
            if table in present:
                # the name is one of our constants, never input
                rows = self.db.query(
                    f"CALL TABLE_INFO('{table}') RETURN name AS name, type AS type"
                )
                out[table] = {r["name"]: r["type"] for r in rows}
        return out

    def aux_rows(self, table: str, namespace: str) -> list[Row]:
        if table not in AUX_TABLES:
            raise ValueError(table)
        return [
            r["n"]
            for r in self.db.query(
                f"MATCH (n:{table}) WHERE n.namespace = $ns RETURN n ORDER BY n.id", ns=namespace
            )
        ]

    def occupied(self, namespace: str) -> dict[str, int]:
        """How many rows of each kind the namespace holds (slots and keys included)."""
        out = self.store.counts(namespace)
        out["Slot"] = int(
            self.db.query(
                "MATCH (s:Slot) WHERE s.namespace = $ns RETURN count(*) AS c", ns=namespace
            )[0]["c"]
        )
        out["EntityKey"] = len(self.entity_keys(namespace))
        for table in self.aux_columns():
            out[table] = len(self.aux_rows(table, namespace))
        return out

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        """Those of `ids` already used as primary keys of `table` (any namespace)."""
        if table not in _ID_TABLES:
            raise ValueError(table)
        found: set[str] = set()
        ids = list(ids)
        for i in range(0, len(ids), _SCAN):
            # the label is one of our constants, never input
            rows = self.db.query(
                f"UNWIND $ids AS i MATCH (n:{table} {{id: i}}) RETURN n.id AS id",
                ids=ids[i : i + _SCAN],
            )
            found |= {r["id"] for r in rows}
        return found

    # --- raw writes (inside the caller's transaction) --------------------------------------
    def restore_entities(self, rows: Sequence[dict[str, Any]], keys: Sequence[Row]) -> None:
        """Entities exactly as given, and their name and alias keys: {id, entity_id}."""
        copy_nodes(self.db, "Entity", ENTITY_COLUMNS, rows)
        copy_nodes(self.db, "EntityKey", ("id", "entity_id"), keys)

    def restore_episodes(self, rows: Sequence[dict[str, Any]]) -> None:
        copy_nodes(self.db, "Episode", EPISODE_COLUMNS, rows)

    def restore_aux(
        self, table: str, columns: dict[str, str], rows: Sequence[dict[str, Any]]
    ) -> None:
        """Rows of an auxiliary table, typed by `columns` ({name: Kùzu type})."""
        if table not in AUX_TABLES:
            raise ValueError(table)
        if not rows:
            return
        names = list(columns)
        arrays = [
            pa.array([_naive(r.get(c)) for r in rows], type=_ARROW[columns[c]]) for c in names
        ]
        self.db.copy(table, pa.table(arrays, names=names))


def _naive(v: Any) -> Any:
    """Arrow timestamps without a zone, in UTC (as every other write stores them)."""
    if isinstance(v, datetime):
        return v.astimezone(UTC).replace(tzinfo=None)
    return v
