"""Option types shared by `cli.py` and the per-room command modules (`_cli_*.py`).

    >>> def stats_cmd(as_json: JsonOpt = False) -> None: ...

A module of its own because `cli.py` imports the command modules, so they cannot
import from it at load time.
"""

from __future__ import annotations

from typing import Annotated

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
