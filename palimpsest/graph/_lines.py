"""A line's believed starts, in pages: what a write reads and rewrites of a timeline.

    >>> layout = Layout.of(line_row)              # inline, or a directory of pages
    >>> pages = layout.pages_for(reach)           # the pages a write's reach needs
    >>> run, after = layout.window(loaded, reach) # the window `temporal.advance` takes

A line is one timeline of a slot: the slot itself for a `one` predicate, one per
object for `many` (DESIGN.md's keys). Its starts (each believed version, and the
absences that bound later open-ended assertions) are kept on its `Line` row while
there are at most `INLINE` of them; past that, in `LinePage` rows of at most
`PAGE` starts, with a directory (each page's first start) on the `Line` row. A
write reads the directory and the pages its reach covers, one or two, and writes
those back: bounded by what it touches, not by the history. A present start
carries its whole version row, so a point query answers from the line alone.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from ..storage.rows import LineStart
from ..temporal import Reach
from ._slots import VERSION_FIELDS, from_us, pack_values, to_us, unpack_values

INLINE = 32  # starts kept on the Line row itself (nearly every line)
PAGE = 32  # most starts a page holds; a fuller run is split
SPLIT = 16  # starts a page gets when a run is split (room to grow either way)
_FIRST = -(2**63)  # the sort key of "since always"
PAGE_SEP = "\x1e"  # line id PAGE_SEP page number: a LinePage's id


def sort_key(at: datetime | None) -> int:
    us = to_us(at)
    return _FIRST if us is None else us


def pack_run(run: Sequence[LineStart]) -> str:
    return orjson.dumps(
        [
            [to_us(s.at), s.source]
            if s.version is None
            else [to_us(s.at), s.source, *pack_values(s.version, VERSION_FIELDS)]
            for s in run
        ]
    ).decode()


def unpack_run(text: str | None, base: dict[str, Any]) -> list[LineStart]:
    """`pack_run` undone; `base` holds what every version of the line shares."""
    if not text:
        return []
    out = []
    for v in orjson.loads(text):
        row = None if len(v) == 2 else unpack_values(v[2:], VERSION_FIELDS, base)
        out.append(LineStart(from_us(v[0]), v[1], row))
    return out


@dataclass
class Layout:
    """Where a line's starts are: inline on its row, or pages listed by first start."""

    inline: bool = True
    firsts: list[int] = field(default_factory=list)  # sort key of each page's first start
    numbers: list[int] = field(default_factory=list)  # page number of each, same order
    next_number: int = 0

    @classmethod
    def of(cls, directory: str | None) -> Layout:
        if not directory:
            return cls()
        d = orjson.loads(directory)
        return cls(False, [p[0] for p in d["p"]], [p[1] for p in d["p"]], d["n"])

    def directory(self) -> str | None:
        if self.inline:
            return None
        pages = [[f, n] for f, n in zip(self.firsts, self.numbers, strict=True)]
        return orjson.dumps({"n": self.next_number, "p": pages}).decode()

    def span(self, reach: Reach | None) -> tuple[int, int]:
        """Indexes [i, j] of the pages holding the window of `reach` (None: every page)."""
        if reach is None or not self.firsts:
            return 0, len(self.firsts) - 1
        lo, hi = sort_key(reach.lo), sort_key(reach.hi)
        i = max(0, bisect.bisect_left(self.firsts, lo) - 1)  # last page starting before lo
        j = max(i, bisect.bisect_right(self.firsts, hi) - 1)  # last page starting at or before hi
        return i, j

    def after(self, j: int) -> datetime | None:
        """The first start of page j + 1: where the window's last version ends."""
        if j + 1 >= len(self.firsts):
            return None
        return from_us(self.firsts[j + 1])  # only page 0 may start "since always"


def page_id(line_id: str, number: int) -> str:
    return f"{line_id}{PAGE_SEP}{number}"


def rechunk(
    layout: Layout, i: int, j: int, run: Sequence[LineStart]
) -> tuple[Layout, list[tuple[int, list[LineStart]]], list[int]]:
    """Pages i..j of `layout` replaced by `run`: the new layout, the pages to write
    (number, starts) and the page numbers no longer used."""
    if len(run) > PAGE:
        pieces = [list(run[k : k + SPLIT]) for k in range(0, len(run), SPLIT)]
    else:
        pieces = [list(run)] if run else []
    old = layout.numbers[i : j + 1] if not layout.inline else []
    numbers = old[: len(pieces)]
    nxt = layout.next_number
    while len(numbers) < len(pieces):
        numbers.append(nxt)
        nxt += 1
    firsts = [sort_key(p[0].at) for p in pieces]
    if layout.inline:
        new = Layout(False, firsts, numbers, nxt)
    else:
        new = Layout(
            False,
            layout.firsts[:i] + firsts + layout.firsts[j + 1 :],
            layout.numbers[:i] + numbers + layout.numbers[j + 1 :],
            nxt,
        )
    return new, list(zip(numbers, pieces, strict=True)), old[len(pieces) :]
