"""One statement for a small write (a single `assert_fact`, `end_fact`, a `remember`'s few).

    >>> cypher, params = fused_write(entities=[], assertions=[a], nodes=[slot, line],
    ...                              expire=[v_id], at=k, insert=[row])

Each statement is a round trip into Kùzu (~0.2-0.5 ms here), and a single
assertion used to take six write statements: entity, key, assertion, expiry,
one per new version, the slot's state. Here they are one statement composed
from constant fragments, with numbered parameters (never values), so a handful
of shapes are prepared once and reused. Every MATCH is by primary key on rows
this write knows exist; the statement returns one row, and anything else means
a MATCH found nothing, which the caller turns into an error (and a rollback).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._columns import (
    ASSERTION_COLUMNS,
    ENTITY_COLUMNS,
    FACT_COLUMNS,
    assertion_row,
    fact_row,
    param_props,
)

# beyond these, the per-kind statements (and their LOAD FROM batching) take over
MAX_ENTITIES, MAX_ASSERTIONS, MAX_EXPIRE, MAX_INSERT, MAX_NODES = 2, 2, 4, 4, 6

NODE_COLUMNS = {
    "Slot": ("id", "namespace", "subject_id", "predicate", "subject", "pages", "tail_n", "tail"),
    "SlotPage": ("id", "events"),
    "Line": ("id", "namespace", "slot_id", "subject", "changed_at", "entries", "dir"),
    "LinePage": ("id", "entries"),
}
_CASTS = {"changed_at": "TIMESTAMP", "entries": "STRING", "dir": "STRING"}


@dataclass(frozen=True)
class Node:
    """A row of one of the write path's own tables, created, or replacing the stored one
    (delete + create, never SET: in-place string updates bloat the file)."""

    table: str
    row: dict[str, Any]
    replace: bool = False


def node_props(table: str, prefix: str) -> str:
    return ", ".join(
        f"{c}: CAST(${prefix}{c} AS {_CASTS[c]})" if c in _CASTS else f"{c}: ${prefix}{c}"
        for c in NODE_COLUMNS[table]
    )


def fits(n_entities: int, n_assertions: int, n_expire: int, n_insert: int, n_nodes: int) -> bool:
    return (
        n_entities <= MAX_ENTITIES
        and 1 <= n_assertions <= MAX_ASSERTIONS
        and n_expire <= MAX_EXPIRE
        and n_insert <= MAX_INSERT
        and n_nodes <= MAX_NODES
    )


def fused_write(
    *,
    entities: Sequence[Mapping[str, Any]],
    assertions: Sequence[Mapping[str, Any]],
    nodes: Sequence[Node],
    expire: Sequence[str],
    at: datetime,
    insert: Sequence[Mapping[str, Any]],
) -> tuple[str, dict[str, Any]]:
    """The statement and its parameters."""
    parts: list[str] = []
    params: dict[str, Any] = {}

    def bind(prefix: str, row: Mapping[str, Any], columns: Sequence[str]) -> None:
        params.update({f"{prefix}{c}": row.get(c) for c in columns})

    for i, e in enumerate(entities):
        p = f"n{i}_"
        parts.append(
            f"CREATE (:Entity {{{param_props(ENTITY_COLUMNS, p)}}})"
            f" MERGE (k{i}:EntityKey {{id: ${p}key_id}}) SET k{i}.entity_id = ${p}id"
        )
        bind(p, e, ENTITY_COLUMNS)
        params[f"{p}aliases"] = list(e.get("aliases") or [])
        params[f"{p}key_id"] = f"{e['namespace']}\x1f{e['key']}"
    if entities:
        parts.append("WITH 1 AS w")
    # replaced nodes first: each MATCH is also the check that the row exists
    for i, n in enumerate(nodes):
        p = f"r{i}_"
        if n.replace:
            parts.append(f"MATCH (y{i}:{n.table} {{id: ${p}id}}) DELETE y{i}")
        parts.append(f"CREATE (:{n.table} {{{node_props(n.table, p)}}}) WITH 1 AS w")
        params.update({f"{p}{c}": n.row[c] for c in NODE_COLUMNS[n.table]})  # no silent NULL
    for i, a in enumerate(assertions):
        p = f"a{i}_"
        parts.append(f"CREATE (:Assertion {{{param_props(ASSERTION_COLUMNS, p)}}})")
        bind(p, assertion_row(a), ASSERTION_COLUMNS)
    parts.append("WITH 1 AS w")
    for i, fid in enumerate(expire):
        parts.append(f"MATCH (x{i}:Fact {{id: $x{i}}}) SET x{i}.expired_at = $at WITH 1 AS w")
        params[f"x{i}"] = fid
    if expire:
        params["at"] = at
    if insert:
        parts.append("MATCH (e:Entity {id: $subject_id})")
        params["subject_id"] = insert[0]["subject_id"]
    for i, f in enumerate(insert):
        if f["subject_id"] != params["subject_id"]:
            raise ValueError("versions of one write share their subject")
        p = f"f{i}_"
        parts.append(
            f"MATCH (o{i}:Entity {{id: ${p}object_id}})"
            f" CREATE (f{i}:Fact {{{param_props(FACT_COLUMNS, p)}}}),"
            f" (e)-[:SUBJ]->(f{i}), (f{i})-[:OBJ]->(o{i}) WITH e"
        )
        bind(p, fact_row(f), FACT_COLUMNS)
    parts.append("RETURN count(*) AS n")
    return " ".join(parts), params
