"""`palimpsest mcp`: the MCP server over stdio.

$ palimpsest mcp --path ./memory
"""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `palimpsest` app (imports no engine code)."""
    del app  # no commands yet
