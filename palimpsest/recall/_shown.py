"""What a hit shows of an episode, kept in process beside the recall index.

    >>> shown = Shown.of(table)          # the namespace's episodes (Arrow), at load
    >>> shown.append([row])              # a committed remember_many row (a dict)
    >>> shown.row(0)["text"]

Recall used to read each hit's episode from Kùzu by primary key (ten lookups a
recall, about a third of its round trips). Episodes are written once and never
changed but for `archived` (consolidation, refreshed on `Events.consolidated`)
and erasure (which drops the whole index), so the columns a hit shows can be
loaded with the index and appended with it. The loaded part stays in Arrow
arrays (one buffer per column, not a Python string per episode); rows appended
since the load are kept as the dicts remember_many wrote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .._time import from_epoch_us

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["COLUMNS", "Shown"]

# the Episode columns a hit shows (besides id, occurred_at and recorded_at)
COLUMNS = ("text", "source", "speaker", "author_kind", "quarantined")


class Shown:
    """Per index row: the episode's id, shown columns and times, as a hit needs them."""

    def __init__(self, base: dict[str, Any], n: int) -> None:
        self._base = base  # column -> pyarrow Array, rows 0..n-1
        self._n = n
        self._extra: list[dict[str, Any]] = []

    @classmethod
    def of(cls, table: pa.Table) -> Shown:
        import pyarrow as pa

        base: dict[str, Any] = {}
        for name in ("id", *COLUMNS):
            base[name] = table.column(name).combine_chunks()
        for name in ("occurred_at", "recorded_at"):
            col = table.column(name).combine_chunks().cast(pa.timestamp("us"))
            base[name] = col.cast(pa.int64())
        return cls(base, table.num_rows)

    def __len__(self) -> int:
        return self._n + len(self._extra)

    def append(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self._extra += [{k: r.get(k) for k in ("id", *COLUMNS, "occurred_at", "recorded_at")}
                        for r in rows]  # fmt: skip

    def speaker_is(self, name: str) -> npt.NDArray[np.bool_]:
        """Per row: whether the episode's speaker is `name` (case-insensitive)."""
        import pyarrow.compute as pc

        want = name.casefold()
        base = pc.equal(pc.utf8_lower(self._base["speaker"]), want).fill_null(False)
        extra = [str(r.get("speaker") or "").casefold() == want for r in self._extra]
        return np.concatenate(
            [np.asarray(base.to_numpy(zero_copy_only=False), dtype=np.bool_),
             np.array(extra, dtype=np.bool_)]
        )  # fmt: skip

    def row(self, i: int) -> dict[str, Any]:
        """The episode at index row `i`: id, the shown columns, aware UTC times."""
        if i >= self._n:
            return dict(self._extra[i - self._n])
        b = self._base
        out: dict[str, Any] = {name: b[name][i].as_py() for name in ("id", *COLUMNS)}
        for name in ("occurred_at", "recorded_at"):
            us = b[name][i].as_py()
            out[name] = None if us is None else from_epoch_us(us)
        return out
