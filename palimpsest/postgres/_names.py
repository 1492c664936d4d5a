"""PostgreSQL: the `names` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from typing import Any

DDL: tuple[str, ...] = ()


class NameStore:
    def __init__(self, db: Any) -> None:
        self.db = db
