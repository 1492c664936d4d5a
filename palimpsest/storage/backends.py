"""Which store a location names, opened: the one place that knows every backend.

    >>> store = open_store("palimpsest-data")          # a directory: the embedded Kùzu store
    >>> store = open_store("postgresql://palimpsest@db:5432/mem")   # PostgreSQL

A backend is imported only when a location names it (no work at import time), so
this module sits above the backends, not in the seam they import.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .._names import is_database_url
from . import Store

__all__ = ["is_database_url", "open_store"]


def open_store(
    location: str | Path, *, defaults: Mapping[str, str] | None = None, migrate: bool = False
) -> Store:
    """The store at `location`: a `postgresql://` URL names a PostgreSQL database (its
    schema created when empty; one of an older schema refused unless `migrate`); a
    directory holds the embedded Kùzu store (created if missing). `defaults` are the
    default vocabulary's cardinalities, for a migration that lays slots out by them."""
    if is_database_url(location):
        from ..postgres import Store as PgStore
        from ..postgres import check_url

        return PgStore.open(check_url(str(location)), migrate=migrate)
    from ..graph import Store as KuzuStore

    return KuzuStore.open(Path(location), defaults=defaults)
