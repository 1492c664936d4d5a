"""Which entities are the same one, grouped with networkx, and which name wins.

    >>> pairs = candidates(entities, linked={"en_sis": "en_mira"})
    >>> [(c.winner, c.losers) for c in clusters(pairs, entities)]
    [('en_mira', ('en_sis',))]

Evidence that two entities are one, strongest first:
- the same normalised name (accents, case, punctuation and a leading "the" folded);
- one lists the other's name among its aliases;
- "my sister" once the speaker's facts name exactly one sibling (`linked`);
- embedding similarity of the names, guarded: short or low-entropy names
  ("Al", "aaa", "123") never merge on similarity alone, nor do names whose numbers
  differ ("Room 101", "Room 102"). Every distinctive name of the namespace is
  compared with those carrying the same numbers (blocked matrix products,
  `similar_pairs`, keeping each name's 4 best partners); a run after a watermark
  compares only the names new since then against all.
Pairs become a graph; each connected component is one entity. The winner is a
proper name (not "my …"), then the oldest, then the longest name. Values (ages,
dates) never merge by similarity. Pairs a user has unmerged are never proposed again.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

SIMILARITY = 0.92
PER_ROW = 4  # most similar partners kept per name (bounds the pairs at n * 4)
MIN_CHARS = 5
MIN_ENTROPY = 2.0  # bits per character
_PUNCT = re.compile(r"[^\w\s]")
_NUMBER = re.compile(r"\d+")
RELATIVE = re.compile(r"^(?:my|our) (\w+)$")


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    reason: str


@dataclass(frozen=True)
class Cluster:
    winner: str
    losers: tuple[str, ...]
    reasons: tuple[str, ...]


def normalise(name: str) -> str:
    """A name folded for comparison: "The  Café-Bar" -> "cafe bar"."""
    if name.isascii():  # the common case: nothing to fold but case
        text = name.casefold()
    else:
        text = unicodedata.normalize("NFKD", name)
        text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = _PUNCT.sub(" ", text)
    words = text.split()
    if len(words) > 1 and words[0] == "the":
        words = words[1:]
    return " ".join(words)


def distinctive(name: str) -> bool:
    """Long and varied enough for a similarity match to mean something."""
    text = normalise(name).replace(" ", "")
    if len(text) < MIN_CHARS or text.isdigit():
        return False
    counts = Counter(text)
    entropy = -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
    return entropy >= MIN_ENTROPY


def comparable(entity: Mapping[str, Any]) -> bool:
    """Whether an entity's name may merge on similarity: not a value (age, date), not
    "my …", and distinctive."""
    return (
        entity.get("type") != "value"
        and distinctive(entity["name"])
        and not RELATIVE.match(entity["key"])
    )


def candidates(
    entities: Sequence[Mapping[str, Any]],
    *,
    linked: Mapping[str, str] | None = None,
    vectors: Mapping[str, npt.NDArray[np.float32]] | None = None,
    new: set[str] | None = None,
    blocked: Iterable[frozenset[str]] = (),
    exclude: set[str] | None = None,
) -> list[Pair]:
    """Pairs of entity ids that denote one entity. `entities`: id, name, key, type,
    aliases; `linked`: "my X" entity -> the one entity X names; `vectors`: name
    embeddings; `new`: only pairs touching these ids (None: all); `blocked`: pairs
    unmerged by hand; `exclude`: ids never merged (the speaker)."""
    skip = exclude or set()
    never = set(blocked)
    ents = [e for e in entities if e["id"] not in skip]
    out: dict[frozenset[str], Pair] = {}

    def add(a: str, b: str, reason: str) -> None:
        pair = frozenset((a, b))
        if a == b or pair in never or pair in out:
            return
        if new is not None and a not in new and b not in new:
            return
        lo, hi = sorted((a, b))
        out[pair] = Pair(lo, hi, reason)

    by_norm: dict[tuple[str, str], list[str]] = {}
    by_key: dict[str, str] = {}
    for e in ents:
        norm = normalise(e["name"])
        if norm:
            kind = "value" if e.get("type") == "value" else "thing"
            by_norm.setdefault((kind, norm), []).append(e["id"])
        by_key.setdefault(e["key"], e["id"])
    for (_, norm), ids in by_norm.items():
        for other in ids[1:]:
            add(ids[0], other, f"same normalised name {norm!r}")
    for e in ents:
        for alias in e.get("aliases") or []:
            match = by_key.get(alias)
            if match is not None:
                add(e["id"], match, f"{alias!r} is an alias of {e['name']!r}")
    names = {e["id"]: e["name"] for e in ents}
    for rel, target in (linked or {}).items():
        if rel in names and target in names:
            add(rel, target, f"{names[rel]!r} names {names[target]!r}")
    if vectors:
        _similar(ents, vectors, new, add)
    return sorted(out.values(), key=lambda p: (p.a, p.b))


def _similar(
    ents: Sequence[Mapping[str, Any]],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    new: set[str] | None,
    add: Any,
) -> None:
    pool = [e for e in ents if e["id"] in vectors and comparable(e)]
    if len(pool) < 2:
        return
    # "Room 101" and "Room 102", "iPhone 14" and "iPhone 15" are two things however
    # alike: names are compared only with names carrying the same numbers (which
    # also spares comparing "person 1" ... "person 120000" with each other)
    groups: dict[tuple[str, ...], list[Mapping[str, Any]]] = {}
    for e in pool:
        groups.setdefault(tuple(_NUMBER.findall(e["name"])), []).append(e)
    for group in groups.values():
        rows = None if new is None else [i for i, e in enumerate(group) if e["id"] in new]
        if len(group) < 2 or rows == []:
            continue
        m = np.stack([vectors[e["id"]] for e in group]).astype(np.float32)
        m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
        for i, j, s in similar_pairs(m, rows):
            add(group[i]["id"], group[j]["id"], f"names {s:.2f} similar")


def similar_pairs(
    m: npt.NDArray[np.float32],
    rows: Sequence[int] | None = None,
    *,
    cells: int = 1 << 24,
    per_row: int = PER_ROW,
) -> list[tuple[int, int, float]]:
    """Index pairs (i, j, cosine) of unit rows of `m` at least `SIMILARITY` alike.

    >>> similar_pairs(np.eye(3, dtype=np.float32))
    []

    Blocked matrix products, each block at most `cells` similarities (64 MB), so all
    names of a large namespace are compared without a names-by-names matrix. `rows`:
    only pairs with one of these (the names new since the last run) against all;
    None: every pair, each block against itself and the rows after it. Each row
    keeps its `per_row` most similar partners: names that all look alike ("person
    1" ... "person 120000" under MiniLM) would otherwise yield billions of pairs
    (an out-of-memory kill at 148k names, measured). (Products in 64 principal
    dimensions first, then exact checks, measured 2.7x slower at 40k names: the
    threshold pass over the scores costs as much as the product.)
    """
    n = len(m)
    step = max(1, cells // max(n, 1))
    out: list[tuple[int, int, float]] = []
    if rows is None:
        for a in range(0, n, step):
            sims = m[a : a + step] @ m[a:].T
            # j counts from a too: the upper triangle only
            sims[np.tril_indices(len(sims), 0, sims.shape[1])] = -1.0
            for i, j in _best(sims, per_row):
                out.append((a + i, a + j, float(sims[i, j])))
        return out
    picked = np.asarray(rows, dtype=np.int64)
    for a in range(0, len(picked), step):
        block = picked[a : a + step]
        sims = m[block] @ m.T
        sims[np.arange(len(block)), block] = -1.0  # not itself
        for i, j in _best(sims, per_row):
            out.append((int(block[i]), j, float(sims[i, j])))
    return out


def _best(sims: npt.NDArray[np.float32], k: int) -> list[tuple[int, int]]:
    """(row, column) of each row's at most k scores at or above `SIMILARITY`."""
    hits = sims >= SIMILARITY
    counts = hits.sum(axis=1)
    out: list[tuple[int, int]] = []
    light = np.flatnonzero((counts > 0) & (counts <= k))
    if light.size:
        ii, jj = np.nonzero(hits[light])
        out += zip(light[ii].tolist(), jj.tolist(), strict=True)
    heavy = np.flatnonzero(counts > k)
    if heavy.size:  # more than k alike: its k best (all above the threshold)
        top = np.argpartition(-sims[heavy], k - 1, axis=1)[:, :k]
        out += zip(np.repeat(heavy, k).tolist(), top.ravel().tolist(), strict=True)
    return out


def clusters(pairs: Sequence[Pair], entities: Sequence[Mapping[str, Any]]) -> list[Cluster]:
    """Connected components of the candidate pairs, each with its winner."""
    import networkx as nx

    g = nx.Graph()
    for p in pairs:
        g.add_edge(p.a, p.b, reason=p.reason)
    info = {e["id"]: e for e in entities}
    out = []
    for comp in nx.connected_components(g):
        ids = sorted(comp)
        winner = min(ids, key=lambda i: _rank(info.get(i, {"id": i, "name": i, "key": i})))
        reasons = sorted({d["reason"] for _, _, d in g.subgraph(ids).edges(data=True)})
        out.append(Cluster(winner, tuple(i for i in ids if i != winner), tuple(reasons)))
    return sorted(out, key=lambda c: c.winner)


def _rank(e: Mapping[str, Any]) -> tuple[bool, Any, int, str]:
    created = e.get("created_at")
    return (
        bool(RELATIVE.match(e.get("key") or "")),
        (created is None, created or 0),
        -len(e.get("name") or ""),
        e["id"],
    )
