"""PostgreSQL: the `consolidation` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from typing import Any

DDL: tuple[str, ...] = ()


class ConsolidationStore:
    def __init__(self, db: Any) -> None:
        self.db = db
