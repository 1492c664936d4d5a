"""Entity-name and fact-statement vectors on PostgreSQL: written once, read by recall and merge.

    >>> es = store.embeddings
    >>> es.create_names(["en_1"], ["default"], vectors)
    >>> es.name_ids(["en_1", "en_2"])
    {'en_1'}

The tables mirror the Kùzu store's `EntityNameEmb` and `StatementEmb`
(`graph/_embeddings.py`): vectors as bytea (384 little-endian float32), rows
inserted once and never updated; a new model's vectors replace the old by delete
+ insert. A key already stored is skipped (`ON CONFLICT DO NOTHING`: a retried
write). No index sits on the vectors: merge and recall read them into numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ._db import Database
from ._vectors import binary_rows, blobs, matrix

F32 = npt.NDArray[np.float32]

DDL: tuple[str, ...] = (
    'CREATE TABLE IF NOT EXISTS entity_name_emb (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, emb bytea, PRIMARY KEY (namespace, id))',
    "CREATE INDEX IF NOT EXISTS entity_name_emb_id ON entity_name_emb (id)",
    'CREATE TABLE IF NOT EXISTS statement_emb (id text COLLATE "C" NOT NULL,'
    ' namespace text COLLATE "C" NOT NULL, emb bytea, nosubj bytea,'
    " PRIMARY KEY (namespace, id))",
    "CREATE INDEX IF NOT EXISTS statement_emb_id ON statement_emb (id)",
)

_NAMES = "entity_name_emb"
_STATEMENTS = "statement_emb"


class EmbeddingStore:
    """The vector tables of entity names and fact statements (a slice of the `Store`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # --- entity names -------------------------------------------------------------------
    def create_names(self, ids: Sequence[str], namespaces: Sequence[str], emb: F32) -> None:
        """One row per entity; ids already stored are skipped (a retried write)."""
        if not len(ids):
            return
        rows = list(zip(ids, namespaces, blobs(emb), strict=True))
        with self.db.write():
            self.db.execute_many(
                "INSERT INTO entity_name_emb (id, namespace, emb) VALUES (%s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                rows,
            )

    def name_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these entities have a name vector."""
        return self._ids_in(_NAMES, ids)

    def names_of(self, namespace: str) -> tuple[list[str], F32]:
        """Every name vector of the namespace: (entity ids, matrix)."""
        rows = binary_rows(
            self.db, "SELECT id, emb FROM entity_name_emb WHERE namespace = %s", (namespace,)
        )
        return [str(r[0]) for r in rows], matrix([r[1] for r in rows])

    def entities_without_names(self, namespace: str) -> list[tuple[str, str]]:
        """(id, name) of the namespace's entities with no name vector (backfill); values
        (ages, dates) have none."""
        rows = self.db.query(
            "SELECT e.id, e.name FROM entity e WHERE e.namespace = %s"
            " AND (e.type IS NULL OR e.type <> %s) AND NOT EXISTS (SELECT 1 FROM"
            " entity_name_emb x WHERE x.namespace = e.namespace AND x.id = e.id)",
            (namespace, "value"),
        )
        return [(str(r["id"]), str(r["name"])) for r in rows]

    def delete_names(self, ids: Sequence[str]) -> None:
        self._delete(_NAMES, ids)

    def orphan_names(self, namespace: str) -> list[str]:
        """Name vectors whose entity is gone (an erase, or one interrupted before cleanup)."""
        rows = self.db.query(
            "SELECT x.id FROM entity_name_emb x WHERE x.namespace = %s AND NOT EXISTS"
            " (SELECT 1 FROM entity e WHERE e.namespace = x.namespace AND e.id = x.id)",
            (namespace,),
        )
        return [str(r["id"]) for r in rows]

    # --- fact statements ------------------------------------------------------------------
    def create_statements(
        self, ids: Sequence[str], namespaces: Sequence[str], vectors: Sequence[F32]
    ) -> None:
        """One row per statement key: `vectors` are (whole, without subject), each
        (n, 384). Keys already stored are skipped."""
        whole, nosubj = vectors
        if not len(ids):
            return
        rows = list(zip(ids, namespaces, blobs(whole), blobs(nosubj), strict=True))
        with self.db.write():
            self.db.execute_many(
                "INSERT INTO statement_emb (id, namespace, emb, nosubj) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                rows,
            )

    def statement_ids(self, ids: Sequence[str]) -> set[str]:
        return self._ids_in(_STATEMENTS, ids)

    def statement_vectors(self, ids: Sequence[str]) -> dict[str, tuple[F32, F32]]:
        """key -> (whole, without subject) for the keys stored."""
        keys = sorted(set(ids))
        if not keys:
            return {}
        rows = binary_rows(
            self.db, "SELECT id, emb, nosubj FROM statement_emb WHERE id = ANY(%s)", (keys,)
        )
        whole, a = matrix([r[1] for r in rows]), matrix([r[2] for r in rows])
        return {str(r[0]): (whole[i], a[i]) for i, r in enumerate(rows)}

    def statement_rows(self, namespace: str) -> list[tuple[str, str, str | None]]:
        """Distinct (subject, predicate, object) of every version in the namespace."""
        rows = self.db.query(
            "SELECT DISTINCT subject AS s, predicate AS p, object AS o FROM fact"
            " WHERE namespace = %s",
            (namespace,),
        )
        return [(str(r["s"]), str(r["p"]), r["o"]) for r in rows]

    def statement_keys_of(self, namespace: str) -> set[str]:
        rows = self.db.query("SELECT id FROM statement_emb WHERE namespace = %s", (namespace,))
        return {str(r["id"]) for r in rows}

    def delete_statements(self, ids: Sequence[str]) -> None:
        self._delete(_STATEMENTS, ids)

    # --- both ------------------------------------------------------------------------------
    def namespaces_with_entities(self) -> list[str]:
        rows = self.db.query("SELECT DISTINCT namespace FROM entity")
        return sorted(str(r["namespace"]) for r in rows)

    def delete_all_derived(self) -> int:
        """Every name and statement vector (a new model replaces them all); how many."""
        n = 0
        with self.db.write():
            for table in (_NAMES, _STATEMENTS):  # names are ours, never values
                n += int(self.db.scalar(f"SELECT count(*) FROM {table}"))
                self.db.execute(f"DELETE FROM {table}")
        return n

    def _ids_in(self, table: str, ids: Sequence[str]) -> set[str]:
        keys = sorted(set(ids))
        if not keys:
            return set()
        rows = self.db.query(f"SELECT id FROM {table} WHERE id = ANY(%s)", (keys,))
        return {str(r["id"]) for r in rows}

    def _delete(self, table: str, ids: Sequence[str]) -> None:
        keys = sorted(set(ids))
        if keys:
            self.db.execute(f"DELETE FROM {table} WHERE id = ANY(%s)", (keys,))
