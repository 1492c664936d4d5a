"""PostgreSQL: the `pages` slice of the store seam (TODO: being written)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any


class GraphPages:
    def __init__(self, db: Any, namespace: str, at: datetime, own: Sequence[str]) -> None:
        self.db = db
        self.namespace = namespace
        self.at = at
        self.own = list(own)
