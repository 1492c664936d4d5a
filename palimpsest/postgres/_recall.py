"""PostgreSQL: the `recall` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from typing import Any

DDL: tuple[str, ...] = ()


class RecallStore:
    def __init__(self, db: Any, embeddings: Any, vectors: Any) -> None:
        self.db = db
