"""`palimpsest consolidate`: the nightly run and its reports.

$ palimpsest consolidate --dry-run
"""

from __future__ import annotations

from typing import Annotated

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `palimpsest` app (imports no engine code)."""

    @app.command("consolidate")
    def consolidate_cmd(
        ctx: typer.Context,
        dry_run: Annotated[
            bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
        ] = False,
        history: Annotated[
            bool, typer.Option("--history", help="List earlier runs' reports instead.")
        ] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """The nightly consolidation: promote corroborated quarantined facts, reject those that
        contradict trusted knowledge; every change with its reason. Exit 0 on success."""
        from .cli import _dump_json, _echo, _memory

        with _memory(ctx, create=False) as mem:
            if history:
                reports = mem.consolidation_reports()
                if as_json:
                    _dump_json([r.model_dump(mode="json") for r in reports])
                    return
                for r in reports:
                    _echo(f"{r.finished_at.isoformat()}  {r.summary}")
                return
            report = mem.consolidate(dry_run=dry_run)
        if as_json:
            _dump_json(report.model_dump(mode="json"))
            return
        _echo(("dry run: " if dry_run else "") + report.summary)
        for c in report.changes:
            _echo(f"  {c.action:<10} {', '.join(c.targets)}")
            _echo(f"             {c.reason}")
