"""`palimpsest migrate`: bring a PostgreSQL memory's schema up to this Palimpsest's.

$ palimpsest migrate postgresql://palimpsest@db:5432/mem
postgresql://palimpsest@db:5432/mem: schema version 1

Every other command refuses a database of an older schema, naming this command, so
that an upgrade changes tables only when someone asks (one migrator at a time: it
holds the database's write lock). An empty database gets the whole schema. A Kùzu
directory needs no command: it migrates when it opens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import CliError, JsonOpt, dump_json, echo, is_url, settings, shown


def migrate_cmd(
    ctx: typer.Context,
    location: Annotated[
        str | None,
        typer.Argument(
            metavar="[URL]",
            help="The postgresql:// URL of the memory (default: --path).",
            show_default=False,
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create or upgrade the schema of the PostgreSQL memory at URL and print its version
    (a Kùzu directory migrates when it opens)."""
    where = location or settings(ctx).path
    if not is_url(where):
        if not Path(where).exists():
            raise CliError("no_memory", f"no memory at {where!r}")
        message = "a Kùzu memory directory migrates when it opens: nothing to do"
        if as_json:
            dump_json({"location": where, "backend": "kuzu", "message": message})
        else:
            echo(f"{shown(where)}: {message}")
        return
    from ..postgres import check_url
    from ..storage.backends import open_store

    store = open_store(check_url(where), migrate=True)
    try:
        version, shown_at = store.schema_version, store.location  # no password
    finally:
        store.close()
    if as_json:
        dump_json({"location": shown_at, "backend": "postgresql", "schema_version": version})
    else:
        echo(f"{shown_at}: schema version {version}")
