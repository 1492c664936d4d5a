"""`palimpsest owner`: the process that holds a memory for every client on this machine.

$ palimpsest --path ./memory owner status
$ palimpsest --path ./memory owner stop
$ palimpsest --path ./memory owner run --idle-timeout 0     # in the foreground, for good

Commands, `palimpsest mcp` and `palimpsest.connect` start an owner in the
background when none runs (`PALIMPSEST_OWNER=off`: they never do); these
commands show it, stop it, or run one in the foreground (e.g. under systemd).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from .common import CliError, JsonOpt, dump_json, echo, is_url, settings, shown

owner_app = typer.Typer(
    help="The process holding the memory for every client (status, stop, run).",
    no_args_is_help=True,
)
STOP_WAIT_S = 60.0
_EVERY = " (a PostgreSQL database: every process opens it itself)"


def status_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Who holds the memory at --path: its owner process or `palimpsest serve`, or no one."""
    from ..owner.files import read_holder

    s = settings(ctx)
    holder = None if is_url(s.path) else read_holder(Path(s.path))
    if as_json:
        dump_json(None if holder is None else holder.__dict__)
        return
    if holder is None:
        echo(f"no process owns {shown(s.path)}" + _EVERY * is_url(s.path))
        return
    what = "palimpsest serve" if holder.kind == "serve" else "owner"
    models = "with models" if holder.models else "without models"
    echo(f"{what} pid {holder.pid} ({models}) since {holder.started_at}")


def stop_cmd(ctx: typer.Context) -> None:
    """Stop the owner process of --path (calls under way finish first)."""
    from ..owner.files import read_holder

    s = settings(ctx)
    holder = None if is_url(s.path) else read_holder(Path(s.path))
    if holder is None:
        echo(f"no process owns {shown(s.path)}" + _EVERY * is_url(s.path))
        return
    if holder.kind == "serve":
        raise CliError(
            "memory_locked", f"`palimpsest serve` (pid {holder.pid}) holds it: stop the server"
        )
    os.kill(holder.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WAIT_S
    while read_holder(Path(s.path)) is not None:
        if time.monotonic() > deadline:
            raise CliError("timeout", f"pid {holder.pid} did not stop in {STOP_WAIT_S:.0f} s")
        time.sleep(0.1)
    echo(f"stopped pid {holder.pid}")


def run_cmd(
    ctx: typer.Context,
    idle_timeout: Annotated[
        float,
        typer.Option("--idle-timeout", metavar="S", help="Stop after S idle seconds (0: never)."),
    ] = 0,
    no_models: Annotated[
        bool, typer.Option("--no-models", help="Load no spaCy or embedding model.")
    ] = False,
) -> None:
    """Own the memory at --path in the foreground until stopped (or idle)."""
    from ..owner.run import main

    s = settings(ctx)
    if is_url(s.path):
        raise CliError("invalid_input", f"{shown(s.path)} has no owner process" + _EVERY)
    argv = ["--path", s.path, "--idle-timeout", str(idle_timeout)]
    main([*argv, "--no-models"] if no_models else argv)
