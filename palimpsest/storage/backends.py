"""Which store a location names, opened: the one place that knows every backend.

    >>> store = open_store("palimpsest-data")          # a directory: the embedded Kùzu store

A backend is imported only when a location names it (no work at import time), so
this module sits above the backends, not in the seam they import.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from . import Store


def open_store(location: str | Path, *, defaults: Mapping[str, str] | None = None) -> Store:
    """The store at `location`: a directory holds the embedded Kùzu store (created if
    missing). `defaults` are the default vocabulary's cardinalities, for a migration
    that lays slots out by them."""
    from ..graph import Store as KuzuStore

    return KuzuStore.open(Path(location), defaults=defaults)
