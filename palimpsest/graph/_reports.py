"""Consolidation reports kept as files in the memory's folder, beside its database.

    >>> files = ReportFiles(directory)
    >>> files.keep("default", finished_at, report_json, summary_text)
    >>> files.reports("default")                  # oldest first, as JSON-ready dicts

Each run's report is a JSON file (what `consolidate --history` lists) with a
human summary beside it, each written whole or not at all (a temporary file,
fsynced, renamed), named by when the run finished and its namespace.
"""

from __future__ import annotations

import glob
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

REPORTS = "reports"


class ReportFiles:
    """The `reports/` folder of one memory directory."""

    def __init__(self, directory: Path) -> None:
        self.folder = directory / REPORTS

    def keep(self, namespace: str, finished_at: datetime, data: dict[str, Any], text: str) -> None:
        """Write a report: the summary first, the JSON last (what `reports` reads)."""
        self.folder.mkdir(exist_ok=True)
        stamp = finished_at.strftime("%Y%m%dT%H%M%S%fZ")
        n = 1
        # a counter orders two runs within one clock reading (a frozen test clock)
        while (target := self.folder / f"consolidation-{stamp}-{n:03d}-{namespace}.json").exists():
            n += 1
        _write_atomic(target.with_suffix(".txt"), text)
        _write_atomic(target, json.dumps(data, indent=2))

    def reports(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's kept reports, oldest first (a file that is no report of ours,
        edited by hand, is skipped)."""
        if not self.folder.is_dir():
            return []
        out = []
        for f in sorted(self.folder.glob(f"consolidation-*-{glob.escape(namespace)}.json")):
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("namespace") == namespace:
                out.append(data)
        return out


def _write_atomic(target: Path, text: str) -> None:
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(target)
