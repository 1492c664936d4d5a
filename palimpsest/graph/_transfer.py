"""Raw reads and writes of a whole namespace, for export and lossless restore.

    >>> ts = store.transfer
    >>> rows = ts.assertions("default")        # the log, in recording order

Reads return every stored column, so an export loses nothing; writes put rows
back exactly as given (same ids, same transaction times). Versions are read
with their transaction times only: everything else about one is its assertion's.
Whole-namespace reads stream (`stream`): rows come one at a time from Kùzu's
result, so an export never holds a namespace in Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from ._bulk import _types, copy_nodes
from ._columns import ENTITY_COLUMNS, EPISODE_COLUMNS, SLOT_COLUMNS
from ._cypher import returns
from ._db import Database, Row, _from_db, _to_db, check_params
from ._store_names import NameStore
from ._store_reads import FactStore

# Consolidation's own records (migration 3 on), recall's episode uses (4 on) and the
# predicate-definition history (5 on): exported row by row with the column types the
# store reports, so a column added to them travels without code here. A table this
# store lacks is skipped.
AUX_TABLES = ("EntityMerge", "Contest", "EpisodeDup", "Decision", "EpisodeUse", "PredicateChange")
# tables whose primary keys an import may collide with; names are never taken from input
_ID_TABLES = (
    "Entity",
    "EntityKey",
    "Episode",
    "Slot",
    "Assertion",
    "Fact",
    "Tombstone",
    "Predicate",
    *AUX_TABLES,
)
# the Arrow type of each Kùzu column type restore_aux writes (`_bulk._types`' names)
_ARROW = {
    "STRING": "string",
    "TIMESTAMP": "time",
    "DOUBLE": "float64",
    "INT64": "int64",
    "BOOL": "bool",
    "STRING[]": "strings",
}
_SCAN = 20_000
# export record kind -> node table, and the order rows are exported in
_LABELS = {
    "entity": "Entity",
    "episode": "Episode",
    "slot": "Slot",
    "assertion": "Assertion",
    "version": "Fact",
    "tombstone": "Tombstone",
}
_ORDER = {
    "entity": "n.created_at, n.id",
    "episode": "n.recorded_at, n.id",
    "assertion": "n.seq, n.id",
    "version": "n.recorded_at, n.id",
    "tombstone": "n.erased_at, n.id",
}


def _aux_label(kind: str) -> str:
    if kind not in AUX_TABLES:
        raise ValueError(kind)
    return kind


class TransferStore:
    """Whole-namespace reads and raw restores (a slice of the `Store`)."""

    def __init__(self, db: Database, names: NameStore, facts: FactStore) -> None:
        self.db = db
        self._names = names
        self._facts = facts

    # --- reads ------------------------------------------------------------------------------
    def predicates(self, namespace: str) -> list[Row]:
        rows = self._names.predicates(namespace)
        return sorted(rows, key=lambda r: r["name"])

    def entities(self, namespace: str) -> list[Row]:
        return list(self.stream("entity", namespace))

    def entity_keys(self, namespace: str) -> list[Row]:
        """Name and alias keys of the namespace: {key, entity_id}."""
        return list(self.stream("entity_key", namespace))

    def episodes(self, namespace: str) -> list[Row]:
        return list(self.stream("episode", namespace))

    def slots(self, namespace: str) -> list[Row]:
        return list(self.stream("slot", namespace))

    def assertions(self, namespace: str) -> list[Row]:
        """The log, in recording order."""
        return list(self.stream("assertion", namespace))

    def versions(self, namespace: str) -> list[Row]:
        return list(self.stream("version", namespace))

    def tombstones(self, namespace: str) -> list[Row]:
        return list(self.stream("tombstone", namespace))

    def namespaces(self) -> list[str]:
        """Every namespace holding a row of its own (a predicate definition counts)."""
        found: set[str] = set()
        for label in ("Episode", "Entity", "Slot", "Tombstone", "Predicate"):
            # the label is one of our constants, never input
            rows = self.db.query(f"MATCH (n:{label}) RETURN DISTINCT n.namespace AS ns")
            found |= {r["ns"] for r in rows}
        return sorted(found)

    # --- streamed reads (export) -------------------------------------------------------------
    def count(self, kind: str, namespace: str) -> int:
        """How many rows `stream(kind, namespace)` yields."""
        if kind == "entity_key":
            cypher = "MATCH (k:EntityKey) WHERE starts_with(k.id, $ns) RETURN count(*) AS c"
            return int(self.db.query(cypher, ns=f"{namespace}\x1f")[0]["c"])
        label = _LABELS.get(kind) or _aux_label(kind)
        # the label is one of our constants, never input
        cypher = f"MATCH (n:{label}) WHERE n.namespace = $ns RETURN count(*) AS c"
        return int(self.db.query(cypher, ns=namespace)[0]["c"])

    def stream(self, kind: str, namespace: str) -> Iterator[Row]:
        """Every row of `kind` (an export record kind, or an aux table) in the namespace,
        in a stable order, one at a time."""
        if kind == "predicate":
            yield from self.predicates(namespace)
            return
        if kind == "entity_key":
            prefix = f"{namespace}\x1f"
            for r in self._cursor(
                "MATCH (k:EntityKey) WHERE starts_with(k.id, $p)"
                " RETURN k.id AS id, k.entity_id AS entity_id ORDER BY k.id",
                p=prefix,
            ):
                yield {"key": r["id"][len(prefix) :], "entity_id": r["entity_id"]}
            return
        label = _LABELS.get(kind) or _aux_label(kind)
        order = _ORDER.get(kind, "n.id")
        if kind == "slot":  # the slot's own columns: its packed state is not exported
            ret = returns("n", SLOT_COLUMNS)
            # label and order are our constants, never input
            yield from self._cursor(
                f"MATCH (n:{label}) WHERE n.namespace = $ns RETURN {ret} ORDER BY {order}",
                ns=namespace,
            )
            return
        # label and order are our constants, never input
        yield from (
            r["n"]
            for r in self._cursor(
                f"MATCH (n:{label}) WHERE n.namespace = $ns RETURN n ORDER BY {order}",
                ns=namespace,
            )
        )

    def _cursor(self, cypher: str, /, **params: Any) -> Iterator[Row]:
        """`db.query`, row by row: Kùzu keeps the result, Python holds one row."""
        check_params(cypher, params)
        # the calling thread's connection, as `db.query` uses (inside a write: the writer)
        conn = self.db._conn().conn
        result = conn.execute(cypher, {k: _to_db(v) for k, v in params.items()})
        assert not isinstance(result, list)
        try:
            names = result.get_column_names()
            while result.has_next():
                yield dict(zip(names, (_from_db(v) for v in result.get_next()), strict=True))
        finally:
            result.close()

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
        return list(self.stream(_aux_label(table), namespace))

    def occupied(self, namespace: str) -> dict[str, int]:
        """How many rows of each kind the namespace holds (slots and keys included)."""
        out = self._facts.counts(namespace)
        out["Slot"] = int(
            self.db.query(
                "MATCH (s:Slot) WHERE s.namespace = $ns RETURN count(*) AS c", ns=namespace
            )[0]["c"]
        )
        out["EntityKey"] = self.count("entity_key", namespace)
        for table in self.aux_columns():
            out[table] = self.count(table, namespace)
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
        import pyarrow as pa

        names, types = list(columns), _types()
        arrays = [
            pa.array([_naive(r.get(c)) for r in rows], type=types[_ARROW[columns[c]]])
            for c in names
        ]
        self.db.copy(table, pa.table(arrays, names=names))


def _naive(v: Any) -> Any:
    """Arrow timestamps without a zone, in UTC (as every other write stores them)."""
    if isinstance(v, datetime):
        return v.astimezone(UTC).replace(tzinfo=None)
    return v


# --- bounded pages of the believed graph (the MCP memory server's read_graph/search_nodes) ----
# A fact believed at $k and valid at $k, not quarantined (what a snapshot of now holds).
_NOW = (
    "f.namespace = $ns AND f.recorded_at <= $k AND (f.expired_at IS NULL OR f.expired_at > $k)"
    " AND (f.valid_from IS NULL OR f.valid_from <= $k) AND (f.valid_to IS NULL OR f.valid_to > $k)"
    " AND f.quarantined = false"
)
# Every entity in the graph (a subject, or an object of a relation) with its degree (relation
# ends), whether it has a type fact, and whether it is only ever a value. `own` predicates
# (observations, types) describe their subject and are no relations.
_RANKED = (
    f"MATCH (f:Fact) WHERE {_NOW}"
    " WITH f.subject_id AS s, f.object_id AS o, f.predicate AS p, f.predicate IN $own AS own,"
    " f.predicate IN $own AND contains(lower(f.object), $needle) AS hit"
    " UNWIND (CASE WHEN own THEN [s] ELSE [s, o] END) AS e"
    " WITH e, sum(CASE WHEN own THEN 0 ELSE 1 END) AS degree,"
    " max(CASE WHEN p = $type AND e = s THEN 1 ELSE 0 END) AS typed,"
    " max(CASE WHEN e = s THEN 1 ELSE 0 END) AS subj,"
    " max(CASE WHEN e = o AND p IN $values THEN 1 ELSE 0 END) AS valued,"
    " max(CASE WHEN hit AND e = s THEN 1 ELSE 0 END) AS said"
    " MATCH (x:Entity {id: e})"
    " WITH x, degree, typed, CASE WHEN subj = 0 AND valued = 1 THEN $value ELSE $thing END"
    " AS kind, said"
    " WHERE $needle = '' OR said = 1 OR contains(lower(x.name), $needle)"
    " OR (typed = 0 AND contains(lower(kind), $needle))"
)


class GraphPages:
    """The believed graph as of K, a page at a time: the page is chosen and cut in Kùzu,
    so Python only ever holds what is shown."""

    def __init__(self, db: Database, namespace: str, at: datetime, own: Sequence[str]) -> None:
        self.db = db
        self.base: dict[str, Any] = {"ns": namespace, "k": at}
        self.own_predicates = list(own)

    def entities(
        self,
        *,
        needle: str,
        type_predicate: str,
        value_predicates: Sequence[str],
        kinds: tuple[str, str],
        offset: int,
        limit: int,
    ) -> tuple[list[Row], int, int]:
        """(a page of {id, name, kind, degree}, entities in all, relation ends in all),
        best connected first; `needle` ('' for all) filters on name, type and own facts."""
        params = {
            **self.base,
            "own": self.own_predicates,
            "needle": needle,
            "type": type_predicate,
            "values": list(value_predicates),
            "thing": kinds[0],
            "value": kinds[1],
        }
        page = self.db.query(
            _RANKED + " RETURN x.id AS id, x.name AS name, kind, degree"
            " ORDER BY degree DESC, x.key SKIP $skip LIMIT $limit",
            **params,
            skip=offset,
            limit=limit,
        )
        total = self.db.query(_RANKED + " RETURN count(*) AS n, sum(degree) AS degrees", **params)
        return page, int(total[0]["n"]), int(total[0]["degrees"] or 0)

    def believed(self) -> tuple[list[Row], list[Row]]:
        """(every fact believed as of K and not quarantined, valid at K or not: {s, sn, p,
        o, obj, vf, vt, at, aid}; the entities they name: {id, name, key}), two reads."""
        facts = self.db.query_arrow(
            "MATCH (f:Fact) WHERE f.namespace = $ns AND f.recorded_at <= $k"
            " AND (f.expired_at IS NULL OR f.expired_at > $k) AND f.quarantined = false"
            " RETURN f.subject_id AS s, f.subject AS sn, f.predicate AS p, f.object_id AS o,"
            " f.object AS obj, f.valid_from AS vf, f.valid_to AS vt, f.recorded_at AS at,"
            " f.assertion_id AS aid",
            **self.base,
        )
        ids = {r["s"] for r in facts} | {
            r["o"] for r in facts if r["o"] and r["p"] not in self.own_predicates
        }
        ents = self.db.query_arrow(
            "UNWIND $ids AS i MATCH (x:Entity {id: i}) RETURN x.id AS id, x.name AS name,"
            " x.key AS key",
            ids=sorted(ids),
        )
        return facts, ents

    def own(self, entity_id: str, predicate: str, limit: int) -> list[str]:
        """Objects of one entity's `predicate` facts, in recording order (at most `limit`)."""
        rows = self.db.query(
            "MATCH (e:Entity {id: $sid})-[:SUBJ]->(f:Fact) WITH f"
            f" WHERE {_NOW} AND f.predicate = $p"
            " RETURN f.object AS o ORDER BY f.recorded_at, lower(f.object), f.assertion_id"
            " LIMIT $limit",
            **self.base,
            sid=entity_id,
            p=predicate,
            limit=limit,
        )
        return [r["o"] for r in rows]

    def ids(self, keys: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{name key: (entity id, display name)} for the keys (`_names.entity_key`) that
        name an entity."""
        ns = self.base["ns"]
        rows = self.db.query(
            "UNWIND $ids AS i MATCH (k:EntityKey {id: i}) MATCH (e:Entity {id: k.entity_id})"
            " RETURN k.id AS id, e.id AS e, e.name AS name",
            ids=[f"{ns}\x1f{k}" for k in dict.fromkeys(keys)],
        )
        return {r["id"].split("\x1f", 1)[1]: (r["e"], r["name"]) for r in rows}

    def mentioned(self, entity_ids: Sequence[str]) -> set[str]:
        """The entities a believed fact is about, or points at with a predicate not `own`."""
        params = {**self.base, "ids": list(dict.fromkeys(entity_ids))}
        about = self.db.query(
            f"UNWIND $ids AS i MATCH (e:Entity {{id: i}})-[:SUBJ]->(f:Fact) WHERE {_NOW}"
            " RETURN DISTINCT i",
            **params,
        )
        pointed = self.db.query(
            f"UNWIND $ids AS i MATCH (f:Fact)-[:OBJ]->(e:Entity {{id: i}}) WHERE {_NOW}"
            " AND NOT f.predicate IN $own RETURN DISTINCT i",
            **params,
            own=self.own_predicates,
        )
        return {r["i"] for r in about} | {r["i"] for r in pointed}

    def own_lists(
        self, entity_ids: Sequence[str], predicate: str, limit: int
    ) -> dict[str, list[str]]:
        """Like `own`, for many entities in one read: {entity id: objects}, each list cut
        at `limit`."""
        rows = self._own(
            entity_ids,
            predicate,
            "f.object AS o ORDER BY f.recorded_at, lower(f.object), f.assertion_id",
        )
        out: dict[str, list[str]] = {}
        for r in rows:
            got = out.setdefault(r["s"], [])
            if len(got) < limit:
                got.append(r["o"])
        return out

    def own_first(self, entity_ids: Sequence[str], predicate: str) -> dict[str, str]:
        """Each entity's object of a one-valued `predicate` (its type), where it has one."""
        rows = self._own(entity_ids, predicate, "f.object AS o ORDER BY f.recorded_at")
        return {r["s"]: r["o"] for r in rows}

    def own_counts(self, entity_ids: Sequence[str], predicate: str) -> dict[str, int]:
        return {r["s"]: int(r["n"]) for r in self._own(entity_ids, predicate, "count(*) AS n")}

    def _own(self, entity_ids: Sequence[str], predicate: str, returns: str) -> list[Row]:
        # `returns` is one of the constants above, never input
        return self.db.query(
            f"MATCH (f:Fact) WHERE {_NOW} AND f.predicate = $p AND f.subject_id IN $ids"
            f" RETURN f.subject_id AS s, {returns}",
            **self.base,
            p=predicate,
            ids=list(entity_ids),
        )

    def relations(self, entity_ids: Sequence[str], limit: int) -> tuple[list[Row], int]:
        """(at most `limit` relations touching the entities, those inside first; how many)."""
        touching = (
            f"MATCH (f:Fact) WHERE {_NOW} AND NOT f.predicate IN $own"
            " AND (f.subject_id IN $ids OR f.object_id IN $ids)"
        )
        params = {**self.base, "own": self.own_predicates, "ids": list(entity_ids)}
        total = int(self.db.query(touching + " RETURN count(*) AS n", **params)[0]["n"])
        # two reads, not a sort on an `IN` expression: that crashes Kùzu 0.11.3's planner
        rows: list[Row] = []
        for part in (" AND", " AND NOT"):
            if len(rows) >= min(limit, total):
                break
            rows += self.db.query(
                touching + part + " (f.subject_id IN $ids AND f.object_id IN $ids)"
                " RETURN f.subject AS src, f.object AS dst, f.predicate AS type,"
                " f.recorded_at AS at, lower(f.object) AS folded, f.assertion_id AS aid"
                " ORDER BY at, folded, aid LIMIT $limit",
                **params,
                limit=limit - len(rows),
            )
        return rows, total
