"""Export: a namespace out to JSON Lines, losslessly, as one consistent state.

    >>> exporter.export("default", "memory.jsonl")       # -> {"assertion": 12, ...}

The export holds the assertion log (the truth) and the materialised versions
with their transaction times (`restorer.py` writes them back exactly), the
predicates, entities, episodes, tombstones and every consolidation table
(`aux`). The rows are streamed from the store under the write lock; recall uses
still waiting in memory are written first. The format is `transfer/_export.py`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ..engine.context import Context
from ..engine.uses import UseLog
from ._export import aux_record, header, record, trailer
from ._format import KINDS, dumps


class Exporter:
    """`export` and `export_lines`."""

    def __init__(self, ctx: Context, *, uses: UseLog) -> None:
        self._ctx = ctx
        self._uses = uses

    def export_lines(self, ns: str) -> Iterator[str]:
        """The namespace as export records, one JSON document per line (no newlines).

        The rows are read when this is called, under the write lock, so the
        export is one consistent state even while other threads write. The lines
        are held in memory: `export` streams to a file instead.
        """
        lines: list[str] = []
        self._export(ns, lines.append)
        return iter(lines)

    def _export(self, ns: str, emit: Callable[[str], object]) -> dict[str, int]:
        """Emit the export line by line, the rows streamed from the store; the counts.

        The write lock is held throughout, so the lines are one consistent state.
        """
        ctx = self._ctx
        ts = ctx.store.transfer
        with ctx.lock:
            self._uses.flush()  # recall's uses, batched in memory
            kinds = [k for k in KINDS if k != "aux"]
            tables = ts.aux_columns()
            counts = {k: ts.count(k, ns) for k in kinds if k != "predicate"}
            counts["predicate"] = len(ts.predicates(ns))
            counts = {k: counts[k] for k in kinds}
            counts["aux"] = sum(ts.count(t, ns) for t in tables)
            head = header(
                namespace=ns,
                schema_version=ctx.store.schema_version,
                exported_at=ctx.now(),
                embedder=ctx.store.recall.embedder_identity(),
                counts=counts,
                tables=tables,
            )
            emit(dumps(head))
            written = dict.fromkeys(counts, 0)
            for kind in kinds:
                for row in ts.stream(kind, ns):
                    emit(dumps(record(kind, row)))
                    written[kind] += 1
            for table, cols in tables.items():
                for row in ts.stream(table, ns):
                    emit(dumps(aux_record(table, row, cols)))
                    written["aux"] += 1
            emit(dumps(trailer(written)))
        return written

    def export(self, ns: str, target: str | Path | IO[str]) -> dict[str, int]:
        """Write the namespace to `target` (a path, written atomically, or a text file),
        line by line as the rows are read.

        >>> mem.export("memory.jsonl")
        {'predicate': 1, 'entity': 3, 'entity_key': 3, 'episode': 2, ...}
        """
        if not isinstance(target, str | Path):
            return self._export(ns, lambda line: target.write(line + "\n"))
        path = Path(target)
        tmp = path.with_name(f".{path.name}.partial")
        try:
            with tmp.open("w", encoding="utf-8") as fh:
                counts = self._export(ns, lambda line: fh.write(line + "\n"))
                fh.flush()
                os.fsync(fh.fileno())
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        tmp.replace(path)
        return counts
