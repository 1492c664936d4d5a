"""Graph expansion for recall: facts one or two hops from the entities a query names.

    >>> rows = walk(fetch, ["ent-user"], relevant=lambda rows: [1.0] * len(rows), hops=2)
    >>> [(r["subject"], r["predicate"], r["object"], hop) for r, hop in rows][:2]
    [('user', 'has_sister', 'Ana', 1), ('Ana', 'lives_in', 'Lisbon', 2)]

Pure logic over rows the store returns (`fetch(entity_id, as_object)`: the fact
versions believed at known_at with that entity as subject, or as object); the
caller filters validity at valid_at and scores. Hop 2 starts only from the
entities of the hop-1 facts that look relevant to the query, at most
`FANOUT` of them, so a heavily described entity ("user" in a lifelog: thousands
of facts) costs a bounded number of lookups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import numpy.typing as npt

Row = Mapping[str, Any]
F32 = npt.NDArray[np.float32]

HOP_DECAY = 0.85  # a fact two hops away answers less directly than one about the entity
FANOUT = 8  # hop-2 entry points at most
MAX_SCORED = 16  # statements scored per query: the best by words, nearer hops first


def walk(
    fetch: Callable[[str, bool], Sequence[Row]],
    entry: Sequence[str],
    *,
    relevant: Callable[[Sequence[Row]], npt.ArrayLike],
    hops: int = 2,
    fanout: int = FANOUT,
) -> list[tuple[Row, int]]:
    """Fact rows reachable from `entry` entities, each with its hop (1 or 2), deduplicated.

    Hop 1 takes the entry entities' facts as subject and as object; hop 2 the
    facts (as subject) of the other entity of the `fanout` hop-1 facts that
    `relevant` (a batch scorer) scores highest, above 0.
    """
    seen: set[str] = set()
    out: list[tuple[Row, int]] = []
    visited = set(entry)

    def take(rows: Sequence[Row], hop: int) -> None:
        # a much-described entity brings thousands of rows, each once per fetch:
        # set operations, not a call per row
        ids = [str(r["id"]) for r in rows]
        out.extend((r, hop) for r, i in zip(rows, ids, strict=True) if i not in seen)
        seen.update(ids)

    for e in entry:
        take(fetch(e, False), 1)
        take(fetch(e, True), 1)
    if hops < 2:
        return out
    rel = np.asarray(relevant([r for r, _ in out]), dtype=np.float64).reshape(-1)
    order = np.argsort(-rel, kind="stable")  # best first, ties in row order
    nxt: list[str] = []
    for i in order.tolist():
        if rel[i] <= 0 or len(nxt) >= fanout:
            break
        r = out[i][0]
        for other in (r.get("object_id"), r.get("subject_id")):
            if other and other not in visited:
                visited.add(other)
                nxt.append(str(other))
    for e in nxt[:fanout]:
        take(fetch(e, False), 2)
    return out


def lexical_overlap(
    query_stems: AbstractSet[str], statement_stems: Sequence[AbstractSet[str]]
) -> F32:
    """Share of the query's terms each statement contains, 0..1.

    >>> lexical_overlap({"live", "sister"}, [{"sister", "live", "lisbon"}, {"cat"}]).tolist()
    [1.0, 0.0]
    """
    if not query_stems:
        return np.zeros(len(statement_stems), dtype=np.float32)
    return np.array(
        [len(query_stems & s) / len(query_stems) for s in statement_stems], dtype=np.float32
    )


def shortlist(lexical: npt.ArrayLike, hops: Sequence[int], n: int = MAX_SCORED) -> list[int]:
    """Indices of the `n` statements worth embedding: best word overlap, nearer hops first.

    >>> shortlist([0.0, 0.5, 0.5, 1.0], [1, 2, 1, 2], n=3)
    [3, 2, 1]
    """
    lx = np.asarray(lexical, dtype=np.float64)
    order = sorted(range(lx.size), key=lambda i: (-lx[i], hops[i], i))
    return order[:n]


def hop_weight(hops: Sequence[int], decay: float = HOP_DECAY) -> F32:
    """Score multiplier per hop: 1 for the named entity's own facts, `decay` per hop after.

    >>> hop_weight([1, 2]).tolist()
    [1.0, 0.8500000238418579]
    """
    return np.power(decay, np.asarray(hops, dtype=np.float64) - 1).astype(np.float32)
