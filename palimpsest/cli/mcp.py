"""`palimpsest mcp`: the MCP server over stdio.

$ palimpsest --path ./memory mcp
$ palimpsest mcp --no-models --path ./memory --namespace alice
$ palimpsest mcp --path postgresql://palimpsest@db:5432/mem

An MCP client (Claude Desktop, an IDE, an agent framework) starts this command
and talks to it over stdin/stdout; see `palimpsest.mcp` for the tools. It is a
thin front for the memory's owner process, started in the background when none
runs, so several hosts use one memory at once (`PALIMPSEST_OWNER=off`: open the
memory in this process when no owner runs, as a single host may). A `postgresql://`
URL is opened in this process: the database serves every host at once.
"""

from __future__ import annotations

from typing import Annotated

import typer

from .common import settings, sharing


def mcp_cmd(
    ctx: typer.Context,
    no_models: Annotated[
        bool,
        typer.Option(
            "--no-models",
            help="Load no spaCy or embedding model: remember stores episodes without "
            "reading facts from them, recall matches words only.",
        ),
    ] = False,
    path: Annotated[
        str | None,
        typer.Option(
            "--path",
            metavar="DIR|URL",
            help="The memory directory or postgresql:// URL (overrides the global).",
        ),
    ] = None,
    namespace: Annotated[
        str | None,
        typer.Option("--namespace", "-n", metavar="NAME", help="Namespace (overrides the global)."),
    ] = None,
) -> None:
    """Serve the memory at --path (namespace --namespace) to an MCP client over stdio:
    the engine's verbs plus the tools of the MCP "memory" server. Runs until the client
    closes the connection."""
    from ..mcp.server import serve

    s = settings(ctx)
    share = sharing()
    # MCP client configs list arguments after the command, so accept them here too
    serve(
        path or s.path,
        namespace=namespace or s.namespace,
        models=not no_models,
        start=share.start,
        idle_timeout=share.idle_timeout,
    )
