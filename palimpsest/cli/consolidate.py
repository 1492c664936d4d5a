"""`palimpsest consolidate` and `palimpsest unmerge`: the nightly run, its reports, undo.

$ palimpsest consolidate --dry-run
$ palimpsest unmerge mg_0f3a…
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from typing import Annotated, Any

import typer

from .common import JsonOpt, dump_json, echo, open_memory


def consolidate_cmd(
    ctx: typer.Context,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
    ] = False,
    history: Annotated[
        bool, typer.Option("--history", help="List earlier runs' reports instead.")
    ] = False,
    full: Annotated[
        bool, typer.Option("--full", help="Look at everything, not only what changed.")
    ] = False,
    merges: Annotated[
        bool, typer.Option("--merges", help="List entity merges (ids for `unmerge`).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """The nightly consolidation: dedupe episodes, merge entities, reconcile conflicts,
    promote or reject quarantined facts, report ended facts, archive cold episodes;
    every change with its reason. Exit 0 on success."""
    with open_memory(ctx, create=False) as mem:
        if merges:
            rows = mem.merges()
            if as_json:
                dump_json(rows)
                return
            for m in rows:
                state = "unmerged" if m["unmerged_at"] else "merged"
                echo(f"{m['id']}  {m['loser_name']} -> {m['winner_name']}  ({state})")
            return
        if history:
            reports = mem.consolidation_reports()
            if as_json:
                dump_json([r.model_dump(mode="json") for r in reports])
                return
            for r in reports:
                echo(f"{r.finished_at.isoformat()}  {r.summary}")
            return
        if as_json:
            report = mem.consolidate(dry_run=dry_run, full=full)
        else:
            from ..consolidation.runner import STEPS

            with ExitStack() as stack:
                bar: Any = None

                def step(name: str) -> None:
                    # opened at the first step: a memory held by a server fails
                    # before any, and its error must stand alone on stderr
                    nonlocal bar
                    if bar is None:
                        bar = stack.enter_context(
                            typer.progressbar(length=len(STEPS), file=sys.stderr)
                        )
                    else:
                        bar.update(1)
                    bar.label = f"consolidating: {name}"

                report = mem.consolidate(dry_run=dry_run, full=full, progress=step)
                if bar is not None:
                    bar.update(1)
    if as_json:
        dump_json(report.model_dump(mode="json") | {"summary": report.summary})
        return
    echo(("dry run: " if dry_run else "") + report.summary)
    for c in report.changes:
        echo(f"  {c.action:<12} {', '.join(c.targets)}")
        echo(f"               {c.reason}")
    for action, n in sorted(report.omitted.items()):
        echo(f"  … and {n} more {action} (see --json)")


def unmerge_cmd(
    ctx: typer.Context,
    merge_id: Annotated[str, typer.Argument(help="A merge id from `consolidate --merges`.")],
    as_json: JsonOpt = False,
) -> None:
    """Reverse an entity merge by new assertions (nothing is deleted); the pair is
    not merged again by later runs. Refused, naming them, while later merges or
    promotions rest on it: unmerge those first."""
    with open_memory(ctx, create=False) as mem:
        change = mem.unmerge(merge_id)
    if as_json:
        dump_json(change.model_dump(mode="json"))
        return
    echo(change.reason)
    echo(f"  restored: {', '.join(change.targets[1:]) or 'nothing'}")
