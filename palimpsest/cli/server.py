"""The server: `serve` (the HTTP API) and `token create|list|revoke` (its bearer tokens).

$ palimpsest serve --tokens palimpsest-tokens.json
$ palimpsest token create --namespace alice
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import CliError, JsonOpt, dump_json, echo, held_by_server, note, settings, shown
from .format import format_table

ENV_TOKENS = "PALIMPSEST_TOKENS"
DEFAULT_TOKENS = "palimpsest-tokens.json"

token_app = typer.Typer(
    help="API tokens for `palimpsest serve --tokens FILE` (only their SHA-256 is stored).",
    no_args_is_help=True,
)

TokensFileOpt = Annotated[
    str,
    typer.Option(
        "--tokens", envvar=ENV_TOKENS, metavar="FILE", help="The tokens file.", show_envvar=True
    ),
]


def _free_port(host: str) -> int:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def serve_cmd(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
    tokens: Annotated[
        str | None,
        typer.Option(
            "--tokens",
            envvar=ENV_TOKENS,
            metavar="FILE",
            show_envvar=True,
            help="Require bearer tokens from FILE; without it, loopback clients only.",
        ),
    ] = None,
    consolidate_at: Annotated[
        str,
        typer.Option(
            "--consolidate-at", metavar="HH:MM", help="Run the nightly consolidation daily at."
        ),
    ] = "03:00",
    timezone: Annotated[
        str,
        typer.Option(
            "--timezone",
            metavar="ZONE",
            help="IANA timezone of --consolidate-at (e.g. Europe/Berlin).",
        ),
    ] = "UTC",
    no_consolidate: Annotated[
        bool, typer.Option("--no-consolidate", help="No scheduled consolidation.")
    ] = False,
) -> None:
    """Serve the HTTP API and the dashboard (/ui/) over the memory (OpenAPI docs at /docs).

    While it runs, the server holds the memory and records its address in the
    directory (server.json): read commands on it go through the server (with
    PALIMPSEST_TOKEN as the bearer token if it wants one); the others name it.
    A postgresql:// --path is held by no one: commands open the database themselves.
    """
    try:
        import uvicorn

        from ..api import create_app
        from ..api.schedule import Schedule
        from ..api.security import is_loopback
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise CliError(
            "missing_extra", f"the server needs `pip install 'palimpsest[server]'` ({e.name})"
        ) from None
    s = settings(ctx)
    schedule = None if no_consolidate else Schedule.parse(consolidate_at, timezone)
    held = held_by_server(s.path)
    if held is not None:
        raise held
    if port == 0:  # the address recorded for the CLI needs the real port
        port = _free_port(host)
    server_app = create_app(
        s.path,
        tokens_file=tokens,
        default_namespace=s.namespace,
        consolidation=schedule,
        address=(host, port),
        share=True,  # MCP hosts, the CLI and scripts reach the memory through it too
    )
    if tokens is None and not is_loopback(host):
        note("warning: no --tokens: only loopback clients will be served")
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    note(f"palimpsest: serving {shown(s.path)} on {url} (dashboard at {url}/ui/, docs at /docs)")
    if schedule is not None:
        at = schedule.describe()
        note(f"palimpsest: consolidating daily at {at['at']} {at['timezone']}")
    from ..graph import quiet_module_probes

    quiet_module_probes()  # this process runs the queries itself
    uvicorn.run(server_app, host=host, port=port, log_level="info")


def token_create_cmd(
    namespace: Annotated[
        list[str],
        typer.Option("--namespace", "-n", help="A namespace it may use (repeatable; * = any)."),
    ],
    read_only: Annotated[bool, typer.Option("--read-only", help="No writes.")] = False,
    tokens: TokensFileOpt = DEFAULT_TOKENS,
    as_json: JsonOpt = False,
) -> None:
    """Create a token; prints the secret once (only its hash is kept)."""
    from ..api.tokens import create_token

    secret, rec = create_token(
        Path(tokens), namespaces=namespace, rights="read" if read_only else "write"
    )
    if as_json:
        dump_json({"token": secret, **rec.to_json()})
        return
    echo(secret)
    note(f"{rec.id}: {rec.rights} on {', '.join(rec.namespaces)} (in {tokens}); shown once")


def token_list_cmd(tokens: TokensFileOpt = DEFAULT_TOKENS, as_json: JsonOpt = False) -> None:
    """The tokens in the file (ids, rights, namespaces; never secrets)."""
    from ..api.tokens import list_tokens

    records = list_tokens(Path(tokens))
    if as_json:
        dump_json([{k: v for k, v in r.to_json().items() if k != "sha256"} for r in records])
    elif records:
        rows = [[r.id, r.rights, ", ".join(r.namespaces), r.created_at or "-"] for r in records]
        echo(format_table(["id", "rights", "namespaces", "created"], rows))
    else:
        note("(no tokens)")


def token_revoke_cmd(
    id: Annotated[str, typer.Argument(help="A token id (from `token list`).")],
    tokens: TokensFileOpt = DEFAULT_TOKENS,
) -> None:
    """Revoke a token; a running server refuses it from its next request."""
    from ..api.tokens import revoke_token

    rec = revoke_token(Path(tokens), id)
    echo(f"revoked {rec.id}")
