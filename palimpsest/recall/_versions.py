"""One entity's fact versions as recall's walk reads them: rows and the arrays over them.

    >>> vs = Versions(rows, stems=lambda rows: [{"sister"} for _ in rows])
    >>> vs.lexical({"sister"}).tolist(), vs.believed(now).tolist()
    ([1.0, 1.0], [0, 1])
    >>> vs = vs.patched(inserted=[row], expired={"fv_1": now}, vanished=set(), order=key)

Recall keeps these for every entity a question names, and a lifelog's "user" has tens
of thousands of versions. So what the walk asks is answered from arrays (validity and
belief bounds as exact int64 microseconds; statement stems and evidence episodes as
(row, code) pairs), and a write's change to a few versions is patched in (`patched`:
list and array inserts, a remap of the pairs) rather than rebuilt from every row.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from .._time import epoch_us
from ..temporal import within

Row = Mapping[str, Any]
F32 = npt.NDArray[np.float32]
Idx = npt.NDArray[np.intp]
I64 = npt.NDArray[np.int64]
Stems = Callable[[Sequence[Row]], Sequence[AbstractSet[str]]]

_NEVER, _ALWAYS = np.iinfo(np.int64).min, np.iinfo(np.int64).max
_INSERTS = 16  # rows a patch inserts one by one (`_spliced`); more are sliced in
_ADDED_KEPT = 4096  # versions inserted since a position map was built, before a rebuild


def _times(rows: Sequence[Row], name: str, none: int) -> I64:
    return np.array([none if (t := r[name]) is None else epoch_us(t) for r in rows], dtype=np.int64)


class _Pairs:
    """(row, code) pairs over the versions, with the codes' names: a statement's stems
    or a version's evidence episodes. `sorted_codes` keeps them ordered by code, so
    the rows of one code are one slice."""

    def __init__(self, rows: Idx, codes: Idx, names: dict[str, int], sorted_codes: bool):
        if sorted_codes:
            order = np.argsort(codes, kind="stable")
            rows, codes = rows[order], codes[order]
        self.rows, self.codes, self.names, self.sorted = rows, codes, names, sorted_codes

    @classmethod
    def of(cls, per_row: Sequence[Sequence[str] | AbstractSet[str]], sorted_codes: bool) -> _Pairs:
        names: dict[str, int] = {}
        rows: list[int] = []
        codes: list[int] = []
        for i, items in enumerate(per_row):
            for item in items:
                rows.append(i)
                codes.append(names.setdefault(item, len(names)))
        as_rows, as_codes = np.array(rows, dtype=np.intp), np.array(codes, dtype=np.intp)
        return cls(as_rows, as_codes, names, sorted_codes)

    def rows_of(self, name: str) -> Idx:
        code = self.names.get(name)
        if code is None:
            return np.zeros(0, dtype=np.intp)
        lo, hi = np.searchsorted(self.codes, [code, code + 1])
        return self.rows[lo:hi]

    def remapped(
        self,
        where: Idx,
        added: Sequence[Sequence[str] | AbstractSet[str]],
        at: Sequence[int],
        gone: bool = True,
    ) -> _Pairs:
        """The pairs after a patch: `where[old row]` is its new row (-1: gone, if any
        is `gone`); the rows `added` (their items) are at new rows `at`."""
        if gone:
            keep = where[self.rows] >= 0
            rows, codes = where[self.rows[keep]], self.codes[keep]
        else:  # no row left: no pair to drop (the arrays are never written in place)
            rows, codes = where[self.rows], self.codes
        names = dict(self.names)
        new_rows = [r for r, items in zip(at, added, strict=True) for _ in items]
        new_codes = [names.setdefault(x, len(names)) for items in added for x in items]
        out = _Pairs(rows, codes, names, sorted_codes=False)
        if new_rows:
            nr = np.array(new_rows, dtype=np.intp)
            nc = np.array(new_codes, dtype=np.intp)
            if self.sorted:  # into place, keeping the order by code
                order = np.argsort(nc, kind="stable")
                nr, nc = nr[order], nc[order]
                at_code = np.searchsorted(codes, nc, side="right")
                out.rows, out.codes = np.insert(rows, at_code, nr), np.insert(codes, at_code, nc)
            else:
                out.rows, out.codes = np.concatenate([rows, nr]), np.concatenate([codes, nc])
        out.sorted = self.sorted
        return out


def _spliced(base: list[Any], at: Sequence[int], items: Sequence[Any]) -> list[Any]:
    """`base` (a list of the caller's own, changed in place) with each of `items` put
    before the base position `at` gives it (ascending): a few by `insert`, which
    moves pointers, many by slices, which copy the list once."""
    if len(items) <= _INSERTS:
        for j, (b, x) in enumerate(zip(at, items, strict=True)):
            base.insert(b + j, x)
        return base
    out: list[Any] = []
    prev = 0
    for b, x in zip(at, items, strict=True):
        out += base[prev:b]
        out.append(x)
        prev = b
    out += base[prev:]
    return out


class _Positions:
    """Version id -> row, carried across patches rather than rebuilt: the dict of the
    rows as first asked, where each of those rows is now, and the rows inserted since.
    (A rebuild is a dict of every version, ~10 ms for a lifelog user's 68k, at the
    first recall after each remember.)"""

    def __init__(self, base: dict[str, int], where: Idx | None, added: dict[str, int]):
        self.base, self.where, self.added = base, where, added

    def get(self, fact_id: str) -> int | None:
        p = self.added.get(fact_id)
        if p is not None:
            return p
        p = self.base.get(fact_id)
        if p is None or self.where is None:
            return p
        q = int(self.where[p])
        return q if q >= 0 else None

    def moved(self, where: Idx, inserted: Mapping[str, int]) -> _Positions | None:
        """After a patch that moved row r to `where[r]` (-1: gone) and put `inserted`
        at theirs; None once the inserted rows are many (the next ask rebuilds)."""
        if len(self.added) + len(inserted) > _ADDED_KEPT:
            return None
        if self.where is None:
            now = where
        else:
            now = np.full(len(self.where), -1, dtype=np.intp)
            live = self.where >= 0
            now[live] = where[self.where[live]]
        added = {i: int(where[p]) for i, p in self.added.items() if where[p] >= 0}
        added.update(inserted)
        return _Positions(self.base, now, added)


class Versions:
    """One entity's fact versions (as subject or as object) in the store's order, with
    what the walk asks of them kept as arrays.

        >>> v = Versions(rows, stems=lambda rows: [{"sister"} for _ in rows])
        >>> v.lexical({"sister"}).tolist()
        [1.0]
    """

    def __init__(self, rows: list[Row], stems: Stems) -> None:
        self.rows = rows
        self.ids = [str(r["id"]) for r in rows]
        self._stems = stems
        self._from = _times(rows, "valid_from", _NEVER)
        self._to = _times(rows, "valid_to", _ALWAYS)
        self._recorded = _times(rows, "recorded_at", _NEVER)
        self._expired = _times(rows, "expired_at", _ALWAYS)
        self._pos: _Positions | None = None
        self._words: _Pairs | None = None  # statement stems, by stem
        self._evidence: _Pairs | None = None  # evidence episodes
        self._derive()

    def _derive(self) -> None:
        self.latest = np.flatnonzero(self._expired == _ALWAYS).astype(np.intp)
        ended = self._expired[self._expired != _ALWAYS]
        self._horizon = (
            max(int(self._recorded.max()), int(ended.max()) if len(ended) else _NEVER)
            if len(self.rows)
            else None
        )

    def __len__(self) -> int:
        return len(self.rows)

    def believed(self, known_at: datetime) -> Idx:
        """Positions of the versions believed at `known_at` (recorded by then, not
        expired by then); after the last recording or expiry, those never expired."""
        at = epoch_us(known_at)
        if self._horizon is None or at >= self._horizon:
            return self.latest
        return np.flatnonzero(within(self._recorded, self._expired, at)).astype(np.intp)

    def covers(self, valid_at: datetime) -> npt.NDArray[np.bool_]:
        """Per version: whether its validity window (half-open) holds `valid_at`."""
        at = epoch_us(valid_at)
        return np.asarray(within(self._from, self._to, at))

    def lexical(self, query_stems: AbstractSet[str]) -> F32:
        """Per version: the share of the query's stems its statement holds, 0..1."""
        out = np.zeros(len(self.rows), dtype=np.float32)
        if not query_stems or not self.rows:
            return out
        if self._words is None:
            self._words = _Pairs.of(self._stems(self.rows), sorted_codes=True)
        for s in query_stems:
            out[self._words.rows_of(s)] += 1.0  # a row holds a stem once
        return out / np.float32(len(query_stems))

    def position(self, fact_id: str) -> int | None:
        if self._pos is None:
            self._pos = _Positions({i: n for n, i in enumerate(self.ids)}, None, {})
        return self._pos.get(fact_id)

    def _scan(self, fact_id: str) -> int | None:
        # a few ids: a scan of the list, not a dict of every id (~10 ms at 68k versions)
        try:
            return self.ids.index(fact_id)
        except ValueError:
            return None

    def evidence(self, keep: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Per episode these versions cite (`code`): whether one of those `keep` marks
        cites it. An array, not a set of ids: "user" in a lifelog cites tens of
        thousands of episodes, and a recall asks about a few hundred of them."""
        ev = self._evidence_pairs()
        out = np.zeros(len(ev.names), dtype=np.bool_)
        out[ev.codes[keep[ev.rows]]] = True
        return out

    def code(self, episode_id: str) -> int | None:
        """The episode's position in `evidence`'s arrays; None when no version cites it."""
        return self._evidence_pairs().names.get(episode_id)

    def _evidence_pairs(self) -> _Pairs:
        if self._evidence is None:
            self._evidence = _Pairs.of([r["evidence"] or () for r in self.rows], False)
        return self._evidence

    def patched(
        self,
        *,
        inserted: Sequence[Row],
        expired: Mapping[str, datetime],
        vanished: AbstractSet[str],
        order: Callable[[Row], Any],
    ) -> Versions:
        """These versions after a write: `inserted` rows put where the store's `order`
        puts them, `expired` ones (id -> when) expired, `vanished` ones gone. What
        reading them all again would return, at the cost of the rows that changed."""
        n = len(self.rows)
        find = (
            self.position
            if self._pos is not None or len(expired) + len(vanished) > 8
            else self._scan
        )
        gone = sorted(p for i in vanished if (p := find(i)) is not None)
        keep = np.ones(n, dtype=np.bool_)
        keep[gone] = False
        rows = [r for p, r in enumerate(self.rows) if keep[p]] if gone else list(self.rows)
        kept = np.flatnonzero(keep)
        new = sorted(inserted, key=order)
        at = [bisect.bisect_right(rows, order(r), key=order) for r in new]  # in the kept rows
        out = _spliced(rows, at, new)
        # where each kept row and each new one lands
        where = np.full(n, -1, dtype=np.intp)
        where[kept] = np.arange(len(kept)) + np.searchsorted(at, np.arange(len(kept)), "right")
        placed = [b + j for j, b in enumerate(at)]
        vs = Versions.__new__(Versions)
        vs.rows, vs._stems = out, self._stems
        vs._pos = (
            None
            if self._pos is None
            else self._pos.moved(where, {str(r["id"]): b for r, b in zip(new, placed, strict=True)})
        )
        ids = [self.ids[p] for p in kept.tolist()] if gone else list(self.ids)
        vs.ids = _spliced(ids, at, [str(r["id"]) for r in new])

        def spliced(old: I64, name: str, none: int) -> I64:
            base = old[kept] if gone else old
            return np.insert(base, at, _times(new, name, none)) if new else base.copy()

        vs._from = spliced(self._from, "valid_from", _NEVER)
        vs._to = spliced(self._to, "valid_to", _ALWAYS)
        vs._recorded = spliced(self._recorded, "recorded_at", _NEVER)
        vs._expired = spliced(self._expired, "expired_at", _ALWAYS)
        for fact_id, when in expired.items():
            p = find(fact_id)
            if p is not None and keep[p]:
                q = int(where[p])
                vs.rows[q] = {**vs.rows[q], "expired_at": when}
                vs._expired[q] = epoch_us(when)
        vs._words = (
            None
            if self._words is None
            else self._words.remapped(
                where, list(self._stems(new)) if new else [], placed, gone=bool(gone)
            )
        )
        vs._evidence = (
            None
            if self._evidence is None
            else self._evidence.remapped(
                where, [r["evidence"] or () for r in new], placed, gone=bool(gone)
            )
        )
        vs._derive()
        return vs
