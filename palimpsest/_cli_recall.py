"""`palimpsest reindex`: rebuild recall's search text and vectors.

$ palimpsest reindex --re-embed
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `palimpsest` app (imports no engine code)."""
    del app  # no commands yet
