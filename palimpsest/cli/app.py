"""The `palimpsest` app: its root options, every command in `--help` order, `main`.

    $ palimpsest assert user lives_in Sydney --from 2024-06-01T00:00:00Z
    $ palimpsest facts user lives_in --valid-at 2024-09-01T00:00:00Z --json

Each command lives in the module of its group (`writes`, `reads`, `recall`,
`consolidate`, `transfer`, `server`, `mcp`, `owner`, `migrate`, `demo`); this module only registers
them. Engine errors print `error [<code>]: <message>` on stderr and exit 2;
anything unexpected exits 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from . import consolidate, demo, mcp, migrate, owner, reads, recall, server, transfer, writes
from .common import DEFAULT_PATH, ENV_DEBUG, ENV_PATH, CliError, Settings

app = typer.Typer(
    name="palimpsest",
    help=(
        "Palimpsest: an offline, bitemporal knowledge-graph memory for AI agents.\n\n"
        "Every fact is dated twice: when it is true (valid time, --valid-at) and when "
        "the memory believed it (transaction time, --known-at). Times are ISO-8601 "
        "with a timezone, e.g. 2024-09-01T00:00:00Z."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("palimpsest")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            v = "unknown"
        typer.echo(f"palimpsest {v}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    path: Annotated[
        str,
        typer.Option(
            "--path",
            envvar=ENV_PATH,
            metavar="DIR|URL",
            help="The memory directory (created by the first write), or a"
            " postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE URL.",
            show_envvar=True,
        ),
    ] = DEFAULT_PATH,
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", metavar="NAME", help="Namespace to read and write.")
    ] = "default",
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    source = ctx.get_parameter_source("path")
    given = source is not None and source.name == "COMMANDLINE"
    ctx.obj = Settings(path=path, namespace=namespace, path_given=given)


# --- every command, in the order `--help` lists them ------------------------------------------
# Registering imports no engine code: the bodies import what they need when they run.
app.command("assert")(writes.assert_cmd)
app.command("end")(writes.end_cmd)
app.command("retract")(writes.retract_cmd)
app.command("erase")(writes.erase_cmd)
app.command("remember")(writes.remember_cmd)
app.command("define-predicate")(writes.define_predicate_cmd)
app.command("facts")(reads.facts_cmd)
app.command("history")(reads.history_cmd)
app.command("recall")(recall.recall_cmd)
app.command("entity")(reads.entity_cmd)
app.command("snapshot")(reads.snapshot_cmd)
app.command("changes")(reads.changes_cmd)
app.command("predicates")(reads.predicates_cmd)
app.command("stats")(reads.stats_cmd)
app.command("demo")(demo.demo_cmd)
app.add_typer(server.token_app, name="token")
server.token_app.command("create")(server.token_create_cmd)
server.token_app.command("list")(server.token_list_cmd)
server.token_app.command("revoke")(server.token_revoke_cmd)
app.command("serve")(server.serve_cmd)
app.command("import")(transfer.import_cmd)
app.command("export")(transfer.export_cmd)
app.command("consolidate")(consolidate.consolidate_cmd)
app.command("unmerge")(consolidate.unmerge_cmd)
app.command("reindex")(recall.reindex_cmd)
app.command("migrate")(migrate.migrate_cmd)
app.command("mcp")(mcp.mcp_cmd)
app.add_typer(owner.owner_app, name="owner")
owner.owner_app.command("status")(owner.status_cmd)
owner.owner_app.command("stop")(owner.stop_cmd)
owner.owner_app.command("run")(owner.run_cmd)


# --- entry point ----------------------------------------------------------------------------
def _report(code: str, message: str) -> None:
    typer.echo(f"error [{code}]: {message}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: run the app, turning errors into `error [<code>]: ...` + exit code."""
    from ..errors import PalimpsestError

    try:
        app(args=list(argv) if argv is not None else None, prog_name="palimpsest")
    except PalimpsestError as e:
        _report(e.code, e.message)
        sys.exit(2)
    except CliError as e:
        _report(e.code, e.message)
        sys.exit(2)
    except KeyboardInterrupt:
        _report("interrupted", "interrupted")
        sys.exit(130)
    except Exception as e:
        if os.environ.get(ENV_DEBUG):
            raise
        _report("unexpected", f"{type(e).__name__}: {e} (set {ENV_DEBUG}=1 for a traceback)")
        sys.exit(1)
