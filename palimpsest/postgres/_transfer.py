"""PostgreSQL: the `transfer` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from typing import Any

DDL: tuple[str, ...] = ()


class TransferStore:
    def __init__(self, db: Any, names: Any, facts: Any) -> None:
        self.db = db
