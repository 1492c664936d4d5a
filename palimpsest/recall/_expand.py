"""Graph expansion for recall: facts one or two hops from the entities a query names.

    >>> segments = walk(fetch, ["ent-user"], {"sister", "live"}, known_at=now)
    >>> [(s.versions.rows[i]["object"], s.hop) for s in segments for i in s.index][:2]
    [('Ana', 1), ('Lisbon', 2)]

Pure logic over the versions the store returns (`fetch(entity_id, as_object)`: every
recorded version with that entity as subject, or as object, as a `Versions`); the
caller filters validity at valid_at and scores. Each `Versions` holds its rows'
validity bounds as integer arrays and an index from statement stem to rows, so a
recall costs work in proportion to the rows that share a word with the question,
not to how much is known about the entity ("user" in a lifelog: tens of thousands
of facts). Hop 2 starts only from the entities of the hop-1 facts that share the
most words with the query, at most `FANOUT` of them.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt

from ..temporal import visible

Row = Mapping[str, Any]
F32 = npt.NDArray[np.float32]
Idx = npt.NDArray[np.intp]

HOP_DECAY = 0.85  # a fact two hops away answers less directly than one about the entity
FANOUT = 8  # hop-2 entry points at most
MAX_SCORED = 16  # statements scored per query: the best by words, nearer hops first
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_NEVER, _ALWAYS = np.iinfo(np.int64).min, np.iinfo(np.int64).max


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // _US  # exact, where a float timestamp rounds


class Versions:
    """One entity's fact versions (as subject or as object) in the store's order, with
    what the walk asks of them kept as arrays.

        >>> v = Versions(rows, stems=lambda rows: [{"sister"} for _ in rows])
        >>> v.lexical({"sister"}).tolist()
        [1.0]
    """

    def __init__(
        self,
        rows: list[Row],
        stems: Callable[[Sequence[Row]], Sequence[AbstractSet[str]]],
        row_stems: list[AbstractSet[str]] | None = None,
    ):
        self.rows = rows
        self.ids = [str(r["id"]) for r in rows]
        self._stems = stems
        self._row_stems = row_stems  # per row, once something asked for words
        self._slots: frozenset[str] | None = None
        self._pos: dict[str, int] | None = None
        self._by_stem: dict[str, list[int]] | None = None
        self._evidence: tuple[Idx, Idx, dict[str, int]] | None = None
        self.latest = np.array(
            [i for i, r in enumerate(rows) if r["expired_at"] is None], dtype=np.intp
        )
        times = [r["recorded_at"] for r in rows]
        times += [r["expired_at"] for r in rows if r["expired_at"] is not None]
        self._horizon = max(times) if times else None
        self._from = np.array(
            [_NEVER if r["valid_from"] is None else _micros(r["valid_from"]) for r in rows],
            dtype=np.int64,
        )
        self._to = np.array(
            [_ALWAYS if r["valid_to"] is None else _micros(r["valid_to"]) for r in rows],
            dtype=np.int64,
        )

    def __len__(self) -> int:
        return len(self.rows)

    def believed(self, known_at: datetime) -> Idx:
        """Positions of the versions believed at `known_at`: after the last recording or
        expiry among them, those never expired."""
        if self._horizon is None or known_at >= self._horizon:
            return self.latest
        keep = [i for i, r in enumerate(self.rows) if visible(r, known_at=known_at, valid_at=None)]
        return np.array(keep, dtype=np.intp)

    def covers(self, valid_at: datetime) -> npt.NDArray[np.bool_]:
        """Per version: whether its validity window (half-open) holds `valid_at`."""
        at = _micros(valid_at)
        return np.asarray((self._from <= at) & (at < self._to))

    def lexical(self, query_stems: AbstractSet[str]) -> F32:
        """Per version: the share of the query's stems its statement holds, 0..1."""
        out = np.zeros(len(self.rows), dtype=np.float32)
        if not query_stems or not self.rows:
            return out
        if self._by_stem is None:
            if self._row_stems is None:
                self._row_stems = list(self._stems(self.rows))
            by_stem: dict[str, list[int]] = {}
            for i, ss in enumerate(self._row_stems):
                for s in ss:
                    by_stem.setdefault(s, []).append(i)
            self._by_stem = by_stem
        for s in query_stems:
            hit = self._by_stem.get(s)
            if hit:
                out[hit] += 1.0
        return out / np.float32(len(query_stems))

    def holds_any(self, slots: AbstractSet[str]) -> bool:
        """Whether a version of one of `slots` is among these."""
        if self._slots is None:
            self._slots = frozenset(str(r["slot_id"]) for r in self.rows)
        return not self._slots.isdisjoint(slots)

    def patched(
        self, slots: AbstractSet[str], fresh: Sequence[Row], order: Callable[[Row], Any]
    ) -> Versions:
        """These versions with those of `slots` replaced by `fresh` (the slots' versions
        now that concern this entity), each put where the store's `order` puts it: what
        reading them all again would give, at the cost of the rows that changed."""
        keep = [i for i, r in enumerate(self.rows) if r["slot_id"] not in slots]
        rows = [self.rows[i] for i in keep]
        old = self._row_stems
        stems = None if old is None else [old[i] for i in keep]
        new = sorted(fresh, key=order)
        new_stems = list(self._stems(new)) if stems is not None and new else []
        for n, r in enumerate(new):
            at = bisect.bisect_right(rows, order(r), key=order)
            rows.insert(at, r)
            if stems is not None:
                stems.insert(at, new_stems[n])
        return Versions(rows, stems=self._stems, row_stems=stems)

    def position(self, fact_id: str) -> int | None:
        if self._pos is None:
            self._pos = {i: n for n, i in enumerate(self.ids)}
        return self._pos.get(fact_id)

    def evidence(self, keep: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Per episode these versions cite (`code`): whether one of those `keep` marks
        cites it. An array, not a set of ids: "user" in a lifelog cites tens of
        thousands of episodes, and a recall asks about a few hundred of them."""
        rows, codes, names = self._evidence_index()
        out = np.zeros(len(names), dtype=np.bool_)
        out[codes[keep[rows]]] = True
        return out

    def code(self, episode_id: str) -> int | None:
        """The episode's position in `evidence`'s arrays; None when no version cites it."""
        return self._evidence_index()[2].get(episode_id)

    def _evidence_index(self) -> tuple[Idx, Idx, dict[str, int]]:
        if self._evidence is None:
            names: dict[str, int] = {}
            pairs = [
                (i, names.setdefault(e, len(names)))
                for i, r in enumerate(self.rows)
                for e in r["evidence"] or ()
            ]
            rows = np.array([i for i, _ in pairs], dtype=np.intp)
            codes = np.array([c for _, c in pairs], dtype=np.intp)
            self._evidence = (rows, codes, names)
        return self._evidence


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
        out = np.zeros(len(episode_ids), dtype=np.bool_)
        for n, e in enumerate(episode_ids):
            ended = False
            for versions, cites, gone in self._parts:
                code = versions.code(e)
                if code is None or not cites[code]:
                    continue
                if not gone:
                    ended = False
                    break
                ended = True
            out[n] = ended
        return out


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
