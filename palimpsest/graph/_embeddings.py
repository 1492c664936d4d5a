"""Entity-name and fact-statement vectors (migration 6): written once, read by recall and merge.

    >>> es = store.embeddings
    >>> es.create_names(["en_1"], ["default"], vectors)
    >>> es.name_ids(["en_1", "en_2"])
    {'en_1'}

Rows are inserted by `insert_vectors` (WAL-logged: no checkpoint at commit) and
never SET; a new model's vectors replace the old by delete + insert (notes §6.7).
No vector index sits on these tables: merge and recall read them into numpy.
pyarrow is imported only for many rows: a remember's few rows go without it, so a
cold `palimpsest remember` does not load its ~50 MB (bench/README.md, install.py).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..storage.rows import EMB_DIM
from ._cypher import Keys
from ._db import Database
from ._vectors import _arrow, _fixed, _matrix

F32 = npt.NDArray[np.float32]
_BATCH = 1000
_ROWWISE_MAX = 32  # rows written from plain lists while pyarrow is not loaded


def _arrow_loaded() -> bool:
    return "pyarrow" in sys.modules


def insert_vectors(
    db: Database,
    table: str,
    ids: Sequence[str],
    namespaces: Sequence[str],
    columns: Mapping[str, F32],
) -> None:
    """Rows of a vector table (`table` and the column names are ours) by `LOAD FROM`
    Arrow (notes §5.8), or while this process has not loaded pyarrow (~50 MB, 0.3 s),
    a few of them by `UNWIND` of plain lists (a cold remember's: 32 rows took 84 ms
    so, 25 ms through Arrow). Both are WAL-logged inserts; a float32 comes back bit
    for bit."""
    for m in columns.values():
        if m.ndim != 2 or m.shape != (len(ids), EMB_DIM):
            raise ValueError(f"vectors must be ({len(ids)}, {EMB_DIM}), got {m.shape}")
    names = ("id", "namespace", *columns)
    if len(ids) <= _ROWWISE_MAX and not _arrow_loaded():
        lists = {c: np.asarray(m, np.float32).tolist() for c, m in columns.items()}
        rows = [
            {"id": i, "namespace": ns, **{c: v[k] for c, v in lists.items()}}
            for k, (i, ns) in enumerate(zip(ids, namespaces, strict=True))
        ]
        props = ", ".join(
            ["id: r.id", "namespace: r.namespace"]
            + [f"{c}: CAST(r.{c} AS FLOAT[{EMB_DIM}])" for c in columns]
        )
        with db.write():
            db.query(f"UNWIND $rows AS r CREATE (:{table} {{{props}}})", rows=rows)
        return
    import pyarrow as pa

    data = pa.table(
        [
            pa.array(list(ids), pa.string()),
            pa.array(list(namespaces), pa.string()),
            *(_fixed(m) for m in columns.values()),
        ],
        names=list(names),
    )
    props = ", ".join(f"{c}: {c}" for c in names)
    db.load(f"LOAD FROM $t CREATE (:{table} {{{props}}})", data)


class EmbeddingStore:
    """The vector tables of entity names and fact statements (a slice of the `Store`)."""

    def __init__(self, db: Database, keys: Keys) -> None:
        self.db = db
        self._keys = keys

    # --- entity names -------------------------------------------------------------------
    def create_names(self, ids: Sequence[str], namespaces: Sequence[str], emb: F32) -> None:
        """One row per entity; ids already stored are skipped (a retried write)."""
        self._insert("EntityNameEmb", self.name_ids(ids), ids, namespaces, {"emb": emb})

    def name_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these entities have a name vector."""
        return set(self._lookup("EntityNameEmb", ids, ())[0])

    def names_of(self, namespace: str) -> tuple[list[str], F32]:
        """Every name vector of the namespace: (entity ids, matrix), one Arrow read."""
        t = _arrow(
            self.db,
            "MATCH (x:EntityNameEmb) WHERE x.namespace = $ns RETURN x.id AS id, x.emb AS emb",
            ns=namespace,
        )
        return [str(v) for v in t.column("id").to_pylist()], _matrix(t.column("emb"))

    def entities_without_names(self, namespace: str) -> list[tuple[str, str]]:
        """(id, name) of the namespace's entities with no name vector (backfill); values
        (ages, dates) have none."""
        ents = _arrow(
            self.db,
            "MATCH (e:Entity) WHERE e.namespace = $ns AND (e.type IS NULL OR e.type <> $value)"
            " RETURN e.id AS id, e.name AS name",
            ns=namespace,
            value="value",
        )
        have = set(
            _arrow(
                self.db,
                "MATCH (x:EntityNameEmb) WHERE x.namespace = $ns RETURN x.id AS id",
                ns=namespace,
            )
            .column("id")
            .to_pylist()
        )
        pairs = zip(ents.column("id").to_pylist(), ents.column("name").to_pylist(), strict=True)
        return [(str(i), str(n)) for i, n in pairs if i not in have]

    def delete_names(self, ids: Sequence[str]) -> None:
        self._delete("EntityNameEmb", ids)

    def orphan_names(self, namespace: str) -> list[str]:
        """Name vectors whose entity is gone (an erase, or one interrupted before cleanup)."""
        have = set(
            _arrow(
                self.db, "MATCH (e:Entity) WHERE e.namespace = $ns RETURN e.id AS id", ns=namespace
            )
            .column("id")
            .to_pylist()
        )
        ids, _ = self.names_of(namespace)
        return [i for i in ids if i not in have]

    # --- fact statements ------------------------------------------------------------------
    def create_statements(
        self, ids: Sequence[str], namespaces: Sequence[str], vectors: Sequence[F32]
    ) -> None:
        """One row per statement key: `vectors` are (whole, without subject), each
        (n, 384). Keys already stored are skipped."""
        columns = dict(zip(("emb", "nosubj"), vectors, strict=True))
        self._insert("StatementEmb", self.statement_ids(ids), ids, namespaces, columns)

    def statement_ids(self, ids: Sequence[str]) -> set[str]:
        return set(self._lookup("StatementEmb", ids, ())[0])

    def statement_vectors(self, ids: Sequence[str]) -> dict[str, tuple[F32, F32]]:
        """key -> (whole, without subject) for the keys stored."""
        keys, m = self._lookup("StatementEmb", ids, ("emb", "nosubj"))
        whole, a = m["emb"], m["nosubj"]
        return {k: (whole[i], a[i]) for i, k in enumerate(keys)}

    def statement_rows(self, namespace: str) -> list[tuple[str, str, str | None]]:
        """Distinct (subject, predicate, object) of every version in the namespace."""
        t = _arrow(
            self.db,
            "MATCH (f:Fact) WHERE f.namespace = $ns"
            " RETURN DISTINCT f.subject AS s, f.predicate AS p, f.object AS o",
            ns=namespace,
        )
        cols = (t.column(c).to_pylist() for c in ("s", "p", "o"))
        return [(str(s), str(p), o) for s, p, o in zip(*cols, strict=True)]

    def statement_keys_of(self, namespace: str) -> set[str]:
        t = _arrow(
            self.db,
            "MATCH (x:StatementEmb) WHERE x.namespace = $ns RETURN x.id AS id",
            ns=namespace,
        )
        return {str(v) for v in t.column("id").to_pylist()}

    def delete_statements(self, ids: Sequence[str]) -> None:
        self._delete("StatementEmb", ids)

    # --- both ------------------------------------------------------------------------------
    def namespaces_with_entities(self) -> list[str]:
        rows = self.db.query("MATCH (e:Entity) RETURN DISTINCT e.namespace AS ns")
        return sorted(str(r["ns"]) for r in rows)

    def delete_all_derived(self) -> int:
        """Every name and statement vector (a new model replaces them all); how many."""
        n = 0
        for table in ("EntityNameEmb", "StatementEmb"):
            n += int(self.db.query(f"MATCH (x:{table}) RETURN count(*) AS c")[0]["c"])
            self.db.query(f"MATCH (x:{table}) DELETE x")
        return n

    def _insert(
        self,
        table: str,
        have: set[str],
        ids: Sequence[str],
        namespaces: Sequence[str],
        columns: dict[str, F32],
    ) -> None:
        """Insert the rows whose id is not in `have` (names are ours)."""
        keep = [i for i, key in enumerate(ids) if key not in have]
        if not keep:
            return
        kept = {c: np.asarray(m)[keep] for c, m in columns.items()}
        insert_vectors(self.db, table, [ids[i] for i in keep], [namespaces[i] for i in keep], kept)

    def _lookup(
        self, table: str, ids: Sequence[str], columns: Sequence[str]
    ) -> tuple[list[str], dict[str, F32]]:
        """The ids stored among these keys and their vector `columns` (a matrix each,
        rows in the ids' order; `table` is ours): index seeks for a few keys (a
        recall's statements, a worker batch: plain rows, no Arrow), a
        scan-and-join per batch of keys only when that costs less. The join carries
        the vectors of every row it hashes (200k statements, 40 keys: 632 ms against
        15 ms of seeks); for ids alone it is cheap (400 keys: 15 ms against 48)."""
        keys = sorted(set(ids))
        if (
            self._keys.seek_pays_in(table, len(keys))
            if columns
            else self._keys.seek_pays(len(keys))
        ):
            rows = list(self._keys.seek(table, keys, columns).values())
            return [str(r["id"]) for r in rows], {
                c: np.asarray([r[c] for r in rows], np.float32).reshape(-1, EMB_DIM)
                for c in columns
            }
        returns = ", ".join(f"x.{c} AS {c}" for c in ("id", *columns))
        parts = [
            _arrow(
                self.db,
                f"UNWIND $ids AS i MATCH (x:{table} {{id: i}}) RETURN {returns}",
                ids=keys[i : i + _BATCH],
            )
            for i in range(0, len(keys), _BATCH)
        ]
        found = [str(v) for t in parts for v in t.column("id").to_pylist()]
        return found, {c: np.concatenate([_matrix(t.column(c)) for t in parts]) for c in columns}

    def _delete(self, table: str, ids: Sequence[str]) -> None:
        keys = sorted(set(ids))
        for i in range(0, len(keys), _BATCH):
            self.db.query(
                f"UNWIND $ids AS i MATCH (x:{table} {{id: i}}) DELETE x", ids=keys[i : i + _BATCH]
            )
