"""`palimpsest import` / `export`: moving memories in and out.

$ palimpsest import facts.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `palimpsest` app (imports no engine code)."""

    @app.command("import")
    def import_cmd(
        ctx: typer.Context,
        file: Annotated[str, typer.Argument(help="JSON Lines of facts ('-' for stdin).")],
        batch: Annotated[int, typer.Option("--batch", min=1, help="Facts per transaction.")] = 5000,
        as_json: JsonOpt = False,
    ) -> None:
        """Assert facts from JSON Lines: one assert_fact item per line."""
        from .cli import CliError, _dump_json, _echo, _memory

        if file != "-" and not Path(file).is_file():
            raise CliError("not_found", f"no file {file!r}")
        with _memory(ctx) as mem:
            if file == "-":
                count = mem.import_facts(sys.stdin, batch=batch)
            else:
                with Path(file).open(encoding="utf-8") as fh:
                    count = mem.import_facts(fh, batch=batch)
        if as_json:
            _dump_json({"imported": count})
            return
        _echo(f"imported {count} facts")
