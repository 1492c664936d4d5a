"""PostgreSQL: the believed graph as of a moment, a page at a time (the `pages` slice of
the store seam: the MCP memory server's read_graph / search_nodes).

    >>> pages = GraphPages(db, "default", k, ["note", "type"])
    >>> page, entities, ends = pages.entities(needle="", type_predicate="type",
    ...     value_predicates=["lives_in"], kinds=("thing", "value"), offset=0, limit=20)

Mirrors `GraphPages` of `palimpsest.graph._transfer`: the same rows, each page chosen
and cut in the database, so Python only ever holds what is shown. Reads the `fact`,
`entity` and `entity_key` tables.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..storage.rows import Row
from ._db import Database

# Folding text as Kùzu's lower() does: the cluster's collation is C, whose lower() only
# knows ASCII; glibc's C.utf8 folds every letter one code point at a time as Kùzu does
# ("İ" -> "i", final sigma kept), ICU's root locale nearly so. The first one the server
# has is used; the folded text is compared and sorted in C (code point) order.
_FOLDINGS = ("C.utf8", "C.UTF-8", "und-x-icu")
_LOWER = {
    "C.utf8": 'lower({} COLLATE "C.utf8") COLLATE "C"',
    "C.UTF-8": 'lower({} COLLATE "C.UTF-8") COLLATE "C"',
    "und-x-icu": 'lower({} COLLATE "und-x-icu") COLLATE "C"',
    "": 'lower({}) COLLATE "C"',
}
_folding: weakref.WeakKeyDictionary[Database, str] = weakref.WeakKeyDictionary()


def folding(db: Database) -> str:
    """The `_LOWER` template this database folds with (looked up once per database)."""
    got = _folding.get(db)
    if got is None:
        names = {
            r["collname"]
            for r in db.query(
                "SELECT collname FROM pg_collation WHERE collname = ANY(%s)"
                " AND collencoding IN (-1, pg_char_to_encoding('UTF8'))",
                (list(_FOLDINGS),),
            )
        }
        got = _LOWER[next((n for n in _FOLDINGS if n in names), "")]
        _folding[db] = got
    return got


# A fact believed at K and valid at K, not quarantined (what a snapshot of now holds).
# Parameters by name: %(ns)s, %(k)s.
_NOW = (
    "f.namespace = %(ns)s AND f.recorded_at <= %(k)s"
    " AND (f.expired_at IS NULL OR f.expired_at > %(k)s)"
    " AND (f.valid_from IS NULL OR f.valid_from <= %(k)s)"
    " AND (f.valid_to IS NULL OR f.valid_to > %(k)s) AND f.quarantined = false"
)


def _ranked(lower: str) -> str:
    """Every entity in the graph (a subject, or an object of a relation) with its degree
    (relation ends), whether it has a type fact, and whether it is only ever a value.
    `own` predicates (observations, types) describe their subject and are no relations.
    Each fact gives its subject, and unless `own` its object, one end (a self-loop two)."""
    return (
        "WITH ends AS (SELECT u.e, f.p, f.own, f.hit, u.e = f.s AS is_s, u.e = f.o AS is_o"
        " FROM (SELECT f.subject_id AS s, f.object_id AS o, f.predicate AS p,"
        " f.predicate = ANY(%(own)s) AS own,"
        f" f.predicate = ANY(%(own)s) AND strpos({lower.format('f.object')}, %(needle)s) > 0"
        f" AS hit FROM fact f WHERE {_NOW}) f"
        " CROSS JOIN LATERAL unnest(CASE WHEN f.own THEN ARRAY[f.s] ELSE ARRAY[f.s, f.o] END)"
        " AS u(e)),"
        " grouped AS (SELECT e, sum(CASE WHEN own THEN 0 ELSE 1 END) AS degree,"
        " max(CASE WHEN p = %(type)s AND is_s THEN 1 ELSE 0 END) AS typed,"
        " max(CASE WHEN is_s THEN 1 ELSE 0 END) AS subj,"
        " max(CASE WHEN is_o AND p = ANY(%(values)s) THEN 1 ELSE 0 END) AS valued,"
        " max(CASE WHEN hit AND is_s THEN 1 ELSE 0 END) AS said"
        " FROM ends WHERE e IS NOT NULL GROUP BY e),"
        " ranked AS (SELECT x.id, x.name, x.key, g.degree, g.typed, g.said,"
        " CASE WHEN g.subj = 0 AND g.valued = 1 THEN %(value)s ELSE %(thing)s END AS kind"
        " FROM grouped g JOIN entity x ON x.namespace = %(ns)s AND x.id = g.e)"
        " SELECT * FROM ranked WHERE %(needle)s = '' OR said = 1"
        f" OR strpos({lower.format('name')}, %(needle)s) > 0"
        f" OR (typed = 0 AND strpos({lower.format('kind')}, %(needle)s) > 0)"
    )


class GraphPages:
    """The believed graph as of K, a page at a time: the page is chosen and cut in
    PostgreSQL, so Python only ever holds what is shown."""

    def __init__(self, db: Database, namespace: str, at: datetime, own: Sequence[str]) -> None:
        self.db = db
        self.base: dict[str, Any] = {"ns": namespace, "k": at}
        self.own_predicates = list(own)

    def _lower(self, column: str) -> str:
        return folding(self.db).format(column)

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
        ranked = _ranked(folding(self.db))
        page = self.db.query(
            f"SELECT id, name, kind, degree FROM ({ranked}) r"
            " ORDER BY degree DESC, key, id LIMIT %(limit)s OFFSET %(skip)s",
            {**params, "skip": offset, "limit": limit},
        )
        total = self.db.query(
            f"SELECT count(*) AS n, sum(degree) AS degrees FROM ({ranked}) r", params
        )
        return page, int(total[0]["n"]), int(total[0]["degrees"] or 0)

    def believed(self) -> tuple[list[Row], list[Row]]:
        """(every fact believed as of K and not quarantined, valid at K or not: {s, sn, p,
        o, obj, vf, vt, at, aid}; the entities they name: {id, name, key}), two reads."""
        facts = self.db.query(
            "SELECT f.subject_id AS s, f.subject AS sn, f.predicate AS p, f.object_id AS o,"
            " f.object AS obj, f.valid_from AS vf, f.valid_to AS vt, f.recorded_at AS at,"
            " f.assertion_id AS aid FROM fact f WHERE f.namespace = %(ns)s"
            " AND f.recorded_at <= %(k)s AND (f.expired_at IS NULL OR f.expired_at > %(k)s)"
            " AND f.quarantined = false ORDER BY f.recorded_at, f.assertion_id, f.id",
            self.base,
        )
        ids = {r["s"] for r in facts} | {
            r["o"] for r in facts if r["o"] and r["p"] not in self.own_predicates
        }
        ents = self.db.query(
            "SELECT id, name, key FROM entity WHERE namespace = %s AND id = ANY(%s) ORDER BY id",
            (self.base["ns"], sorted(ids)),
        )
        return facts, ents

    def own(self, entity_id: str, predicate: str, limit: int) -> list[str]:
        """Objects of one entity's `predicate` facts, in recording order (at most `limit`)."""
        rows = self.db.query(
            f"SELECT f.object AS o FROM fact f WHERE {_NOW} AND f.subject_id = %(sid)s"
            f" AND f.predicate = %(p)s ORDER BY f.recorded_at, {self._lower('f.object')},"
            " f.assertion_id LIMIT %(limit)s",
            {**self.base, "sid": entity_id, "p": predicate, "limit": limit},
        )
        return [r["o"] for r in rows]

    def ids(self, keys: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{name key: (entity id, display name)} for the keys (`_names.entity_key`) that
        name an entity."""
        rows = self.db.query(
            "SELECT k.key, e.id AS e, e.name FROM entity_key k JOIN entity e"
            " ON e.namespace = k.namespace AND e.id = k.entity_id"
            " WHERE k.namespace = %s AND k.key = ANY(%s) ORDER BY k.key",
            (self.base["ns"], list(dict.fromkeys(keys))),
        )
        return {r["key"]: (r["e"], r["name"]) for r in rows}

    def mentioned(self, entity_ids: Sequence[str]) -> set[str]:
        """The entities a believed fact is about, or points at with a predicate not `own`."""
        params = {**self.base, "ids": list(dict.fromkeys(entity_ids)), "own": self.own_predicates}
        # only ids of stored entities, as Kùzu's walks from an Entity node give
        rows = self.db.query(
            "SELECT x.id AS i FROM entity x WHERE x.namespace = %(ns)s AND x.id = ANY(%(ids)s)"
            " AND ("
            f" EXISTS (SELECT 1 FROM fact f WHERE {_NOW} AND f.subject_id = x.id)"
            f" OR EXISTS (SELECT 1 FROM fact f WHERE {_NOW} AND f.object_id = x.id"
            " AND NOT f.predicate = ANY(%(own)s)))",
            params,
        )
        return {r["i"] for r in rows}

    def own_lists(
        self, entity_ids: Sequence[str], predicate: str, limit: int
    ) -> dict[str, list[str]]:
        """Like `own`, for many entities in one read: {entity id: objects}, each list cut
        at `limit`."""
        rows = self.db.query(
            "SELECT s, o FROM (SELECT f.subject_id AS s, f.object AS o, row_number() OVER ("
            f" PARTITION BY f.subject_id ORDER BY f.recorded_at, {self._lower('f.object')},"
            f" f.assertion_id) AS n FROM fact f WHERE {_NOW} AND f.predicate = %(p)s"
            " AND f.subject_id = ANY(%(ids)s)) r WHERE n <= %(limit)s ORDER BY s, n",
            {**self.base, "p": predicate, "ids": list(entity_ids), "limit": limit},
        )
        out: dict[str, list[str]] = {}
        for r in rows:
            out.setdefault(r["s"], []).append(r["o"])
        return out

    def own_first(self, entity_ids: Sequence[str], predicate: str) -> dict[str, str]:
        """Each entity's object of a one-valued `predicate` (its type), where it has one:
        the one recorded last (as Kùzu's read, whose later rows win)."""
        rows = self.db.query(
            "SELECT DISTINCT ON (f.subject_id) f.subject_id AS s, f.object AS o FROM fact f"
            f" WHERE {_NOW} AND f.predicate = %(p)s AND f.subject_id = ANY(%(ids)s)"
            " ORDER BY f.subject_id, f.recorded_at DESC, f.assertion_id DESC",
            {**self.base, "p": predicate, "ids": list(entity_ids)},
        )
        return {r["s"]: r["o"] for r in rows}

    def own_counts(self, entity_ids: Sequence[str], predicate: str) -> dict[str, int]:
        rows = self.db.query(
            "SELECT f.subject_id AS s, count(*) AS n FROM fact f"
            f" WHERE {_NOW} AND f.predicate = %(p)s AND f.subject_id = ANY(%(ids)s)"
            " GROUP BY f.subject_id ORDER BY f.subject_id",
            {**self.base, "p": predicate, "ids": list(entity_ids)},
        )
        return {r["s"]: int(r["n"]) for r in rows}

    def relations(self, entity_ids: Sequence[str], limit: int) -> tuple[list[Row], int]:
        """(at most `limit` relations touching the entities, those inside first; how many)."""
        touching = (
            f"FROM fact f WHERE {_NOW} AND NOT f.predicate = ANY(%(own)s)"
            " AND (f.subject_id = ANY(%(ids)s) OR f.object_id = ANY(%(ids)s))"
        )
        params = {**self.base, "own": self.own_predicates, "ids": list(entity_ids)}
        total = int(self.db.scalar("SELECT count(*) " + touching, params) or 0)
        if limit <= 0 or total == 0:
            return [], total
        # inside (both ends among the entities) first, then the rest, each in recording order
        rows = self.db.query(
            "SELECT src, dst, type, at, folded, aid FROM (SELECT f.subject AS src,"
            " f.object AS dst, f.predicate AS type, f.recorded_at AS at,"
            f" {self._lower('f.object')} AS folded, f.assertion_id AS aid,"
            " (f.subject_id = ANY(%(ids)s) AND f.object_id = ANY(%(ids)s)) AS inside "
            + touching
            # a relation without an object is neither inside nor not (Kùzu's NULL logic)
            + ") r WHERE inside IS NOT NULL ORDER BY inside DESC, at, folded, aid"
            " LIMIT %(limit)s",
            {**params, "limit": limit},
        )
        return rows, total
