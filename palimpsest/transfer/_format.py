"""The export format's constants, its time encoding, and format sniffing.

    >>> sniff('{"record": "header", "format": "palimpsest-export", "version": 1}')
    'export'

An export is JSON Lines: a header record, then one record per stored row
(`predicate`, `entity`, `entity_key`, `episode`, `slot`, `assertion`,
`version`, `tombstone`, and `aux` for consolidation's tables, typed by the header's
`tables`), then an `end` record with the counts, so a truncated file is
refused rather than half-restored. Rows carry no namespace: the importer
decides where they go. Format 1 (no `version` records) still imports: its
versions are rebuilt from the log.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from ..errors import ValidationError

FORMAT = "palimpsest-export"
VERSION = 2  # 2: `version` records (materialised versions); 1 still imports
KINDS = (
    "predicate",
    "entity",
    "entity_key",
    "episode",
    "slot",
    "assertion",
    "version",
    "tombstone",
    "aux",
)
# Kùzu column types an `aux` record (a consolidation table row) may carry
AUX_TYPES = ("STRING", "TIMESTAMP", "DOUBLE", "INT64", "BOOL", "STRING[]")
FORMATS = ("facts", "export", "transcript", "locomo", "mcp-memory")


def fmt_time(t: datetime | None) -> str | None:
    """Aware UTC datetime -> ISO-8601 with a `Z` and microseconds (lossless)."""
    if t is None:
        return None
    return t.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def json_lines(lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """(line number, parsed value) of each non-blank line of a JSON Lines file.

    >>> list(json_lines(['{"a": 1}', "", "[2]"]))
    [(1, {'a': 1}), (3, [2])]

    Raises ValidationError naming the line when one is not JSON.
    """
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            yield n, json.loads(raw)
        except json.JSONDecodeError as e:
            raise ValidationError(f"line {n}: not JSON ({e.msg})", line=n) from None


def dumps(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def sniff(first: str) -> str:
    """The import format a file's first non-blank line suggests (one of `FORMATS`).

    A JSON array, or an object with `conversation`, is LoCoMo; the export has a
    header; `subject` marks assert_fact items; `entityType` or `relationType`
    (the MCP memory server's memory.json); `text` marks transcript turns.
    """
    text = first.strip()
    if text.startswith("["):
        return "locomo"
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        # a pretty-printed JSON document (LoCoMo's own file starts with "[")
        return "locomo" if text in ("{", "[") else "facts"
    if not isinstance(obj, dict):
        return "facts"
    if obj.get("record") == "header" and obj.get("format") == FORMAT:
        return "export"
    if "conversation" in obj or "sample_id" in obj:
        return "locomo"
    if "entityType" in obj or "relationType" in obj or obj.get("type") in ("entity", "relation"):
        return "mcp-memory"
    if "subject" in obj:
        return "facts"
    if "text" in obj:
        return "transcript"
    return "facts"


def fact_batches(lines: Iterable[str], batch: int) -> Iterator[list[dict[str, Any]]]:
    """`assert_many` items from JSON Lines, `batch` at a time (the last one shorter)."""
    chunk: list[dict[str, Any]] = []
    for _, item in json_lines(lines):
        chunk.append(item)
        if len(chunk) >= batch:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
