"""Graph expansion for recall: facts one or two hops from the entities a query names.

    >>> segments = walk(fetch, ["ent-user"], {"sister", "live"}, known_at=now)
    >>> [(s.versions.rows[i]["object"], s.hop) for s in segments for i in s.index][:2]
    [('Ana', 1), ('Lisbon', 2)]

Pure logic over the versions the store returns (`fetch(entity_id, as_object)`: every
recorded version with that entity as subject, or as object, as a `Versions`); the
caller filters validity at valid_at and scores. Each `Versions` (`_versions.py`)
holds its rows' validity bounds as integer arrays and an index from statement stem
to rows, so a recall costs work in proportion to the rows that share a word with the
question, not to how much is known about the entity ("user" in a lifelog: tens of
thousands of facts). Hop 2 starts only from the entities of the hop-1 facts that share the
most words with the query, at most `FANOUT` of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ._versions import F32, Idx, Row, Versions

__all__ = ["Ended", "Segment", "Versions", "hop_weight", "row_at", "shortlist", "walk"]

HOP_DECAY = 0.85  # a fact two hops away answers less directly than one about the entity
FANOUT = 8  # hop-2 entry points at most
MAX_SCORED = 16  # statements scored per query: the best by words, nearer hops first


class Ended:
    """The episodes that cite a hop-1 version not holding at valid_at and none that
    holds, asked of the candidates only.

        >>> ended = Ended.of(segments, covers)
        >>> ended.mask(["ep_1", "ep_2"]).tolist()
        [True, False]
    """

    def __init__(self, parts: list[tuple[Versions, npt.NDArray[np.bool_], bool]]) -> None:
        self._parts = parts  # (versions, cites a version that holds / does not, hop 1)

    @classmethod
    def of(cls, walked: Sequence[Segment], covers: Sequence[npt.NDArray[np.bool_]]) -> Ended:
        parts: list[tuple[Versions, npt.NDArray[np.bool_], bool]] = []
        for s, c in zip(walked, covers, strict=True):
            taken = s.mask()
            parts.append((s.versions, s.versions.evidence(taken & c), False))
            if s.hop == 1:
                parts.append((s.versions, s.versions.evidence(taken & ~c), True))
        return cls(parts)

    def mask(self, episode_ids: Sequence[str]) -> npt.NDArray[np.bool_]:
        n = len(episode_ids)
        gone, live = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_)
        codes: dict[int, Idx] = {}  # per Versions: each episode's code, -1 for none
        for versions, cites, ended in self._parts:
            if not cites.any():
                continue
            at = codes.get(id(versions))
            if at is None:
                code = versions.code
                at = codes[id(versions)] = np.fromiter(
                    ((-1 if (c := code(e)) is None else c) for e in episode_ids),
                    dtype=np.intp,
                    count=n,
                )
            hit = np.zeros(n, dtype=np.bool_)
            known = at >= 0
            hit[known] = cites[at[known]]
            if ended:
                gone |= hit
            else:
                live |= hit
        return gone & ~live


@dataclass
class Segment:
    """The versions one fetch brought into the walk: positions in `versions`, one hop."""

    versions: Versions
    index: Idx
    hop: int

    def only(self, keep: npt.NDArray[np.bool_]) -> Segment:
        """This segment less the versions `keep` (over all of `versions`) leaves out."""
        return Segment(self.versions, self.index[keep[self.index]], self.hop)

    def mask(self) -> npt.NDArray[np.bool_]:
        m = np.zeros(len(self.versions), dtype=np.bool_)
        m[self.index] = True
        return m


def _without_seen(new: Segment, before: Sequence[Segment]) -> Segment:
    """`new` less the versions an earlier segment holds, comparing from the smaller side
    (the user's thousands of facts are met once, not once per later fetch)."""
    drop: set[int] = set()
    for old in before:
        if len(new.index) <= len(old.index):
            old_mask = old.mask()
            for p in new.index.tolist():
                q = old.versions.position(new.versions.ids[p])
                if q is not None and old_mask[q]:
                    drop.add(p)
        else:
            new_mask = new.mask()
            for q in old.index.tolist():
                p2 = new.versions.position(old.versions.ids[q])
                if p2 is not None and new_mask[p2]:
                    drop.add(p2)
    if not drop:
        return new
    keep = np.array([p for p in new.index.tolist() if p not in drop], dtype=np.intp)
    return Segment(new.versions, keep, new.hop)


def walk(
    fetch: Callable[[str, bool], Versions],
    entry: Sequence[str],
    query_stems: AbstractSet[str],
    *,
    known_at: datetime,
    hops: int = 2,
    fanout: int = FANOUT,
) -> list[Segment]:
    """The versions believed at `known_at` reachable from `entry` entities, each once.

    Hop 1 takes the entry entities' facts as subject and as object; hop 2 the facts
    (as subject) of the other entity of the hop-1 facts sharing the most query stems
    (above none), until `fanout` entities are found.
    """
    out: list[Segment] = []
    visited = set(entry)

    def take(entity: str, as_object: bool, hop: int) -> None:
        vs = fetch(entity, as_object)
        seg = _without_seen(Segment(vs, vs.believed(known_at), hop), out)
        if len(seg.index):
            out.append(seg)

    for e in entry:
        take(e, False, 1)
        take(e, True, 1)
    if hops < 2 or not out:
        return out
    # best first by shared stems, ties in walk order; rows sharing none never lead on
    rel = np.concatenate([s.versions.lexical(query_stems)[s.index] for s in out])
    nxt: list[str] = []
    for n in np.flatnonzero(rel)[np.argsort(-rel[rel > 0], kind="stable")].tolist():
        if len(nxt) >= fanout:
            break
        r = row_at(out, n)
        for other in (r.get("object_id"), r.get("subject_id")):
            if other and other not in visited:
                visited.add(other)
                nxt.append(str(other))
    for e in nxt[:fanout]:
        take(e, False, 2)
    return out


def row_at(segments: Sequence[Segment], n: int) -> Row:
    """The n-th row of the segments taken in order."""
    for s in segments:
        if n < len(s.index):
            return s.versions.rows[int(s.index[n])]
        n -= len(s.index)
    raise IndexError(n)


def shortlist(lexical: npt.ArrayLike, hops: npt.ArrayLike, n: int = MAX_SCORED) -> list[int]:
    """Indices of the `n` statements worth embedding: best word overlap, nearer hops first.

    >>> shortlist([0.0, 0.5, 0.5, 1.0], [1, 2, 1, 2], n=3)
    [3, 2, 1]
    """
    lx = np.asarray(lexical, dtype=np.float64)
    hp = np.asarray(hops, dtype=np.int64)
    shared = np.flatnonzero(lx > 0)
    # the few rows sharing a word are sorted; the rest (most of a big entity) are
    # taken in hop then walk order only as far as needed
    first: list[int] = shared[np.lexsort((shared, hp[shared], -lx[shared]))][:n].tolist()
    if len(first) >= n:
        return first
    rest = np.flatnonzero(lx <= 0)
    if np.any(np.diff(hp[rest]) < 0):  # the walk gives nearer hops first already
        rest = rest[np.argsort(hp[rest], kind="stable")]
    rest = rest[: n - len(first)]
    return first + [int(i) for i in rest]


def hop_weight(hops: Sequence[int], decay: float = HOP_DECAY) -> F32:
    """Score multiplier per hop: 1 for the named entity's own facts, `decay` per hop after.

    >>> hop_weight([1, 2]).tolist()
    [1.0, 0.8500000238418579]
    """
    return np.power(decay, np.asarray(hops, dtype=np.float64) - 1).astype(np.float32)
