"""Compaction after an erase: rewrite the database file without deleted rows' bytes.

    >>> request_compaction(directory)   # before the erase commits
    >>> finish_compaction(directory)    # on close, or on the next open after a crash

Kùzu leaves deleted strings in the file's pages; see `finish_compaction`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ._db import Database

DB_FILE = "graph.kuzu"
_COMPACT_MARK = "compaction-pending"
_COMPACT_EXPORT = ".compact-export"
_COMPACT_NEW = "graph.kuzu.compact"


def request_compaction(directory: Path) -> None:
    """Mark the file for rewriting on close (before the erase commits: a crash
    in between only costs an extra compaction)."""
    mark = directory / _COMPACT_MARK
    with open(mark, "w") as fh:
        fh.write("erase\n")
        fh.flush()


def finish_compaction(directory: Path) -> None:
    """Rewrite the database file without the bytes of deleted rows, if an erase asked.

    Kùzu leaves deleted strings in the file's pages, so a privacy erase is only
    complete once the live data has been exported and re-imported into a fresh
    file. The original stays in place until the atomic rename, so a crash at
    any point leaves either the old or the new file, and the mark survives to
    make the next open finish the job.
    """
    mark = directory / _COMPACT_MARK
    export = directory / _COMPACT_EXPORT
    new = directory / _COMPACT_NEW
    for stale in (export, new, Path(f"{new}.wal")):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    if not mark.exists() or not (directory / DB_FILE).exists():
        return
    old = Database.open(directory / DB_FILE)
    try:
        old.export_to(export)
    finally:
        old.close()
    fresh = Database.open(new)
    try:
        fresh.import_from(export)
        fresh.checkpoint()
    finally:
        fresh.close()
    new.replace(directory / DB_FILE)
    wal = directory / f"{DB_FILE}.wal"
    if wal.exists():
        wal.unlink()
    shutil.rmtree(export)
    mark.unlink()
