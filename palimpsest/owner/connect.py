"""`palimpsest.connect`: a memory shared by every process that uses it.

    >>> mem = connect("palimpsest-data")        # a directory: through its owner process
    >>> mem = connect("postgresql://palimpsest@db:5432/mem")   # a database: opened here

Its own module, outside the owner package's exports: `memory` imports the owner
package (the error for a held directory), and this module imports `memory` for a
database, which the owner package must not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .client import DEFAULT_IDLE, OwnerClient, is_database_url


def connect(
    path: str | Path = "palimpsest-data",
    *,
    namespace: str = "default",
    models: bool = True,
    start: bool = True,
    idle_timeout: float = DEFAULT_IDLE,
) -> Any:  # an OwnerClient, or a Memory for a database URL
    """The memory at `path` through its owner process, started if none runs (`start`).

    >>> mem = connect("palimpsest-data")
    >>> mem.remember("I moved to Perth.")      # the owner extracts and embeds

    `models` and `idle_timeout` apply to an owner this call starts: without
    models its `remember` stores no facts and recall matches words only.
    A `postgresql://` URL is opened here (`Memory.open`; with `models`, spaCy and the
    embedder load in this process): the database serves every process, no owner runs.
    """
    if is_database_url(path):
        from ..memory import Memory  # the engine loads only for a database

        if models:
            return Memory.open(path, namespace=namespace)
        return Memory.open(path, namespace=namespace, extractor=None, embedder=None)
    return OwnerClient(
        path, namespace=namespace, models=models, start=start, idle_timeout=idle_timeout
    )
