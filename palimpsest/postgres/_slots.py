"""PostgreSQL: the `slots` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from typing import Any

DDL: tuple[str, ...] = ()


class SlotStore:
    def __init__(self, db: Any, names: Any) -> None:
        self.db = db
