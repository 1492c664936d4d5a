"""MCP: one memory served to an MCP client (a host model) over stdio.

    $ palimpsest --path ./memory mcp            # or: serve("./memory", models=False)

- `server`: the server and the engine's verbs as tools (`build_server`, `serve`);
- `memory_tools`: the official MCP "memory" server's tools, same names and shapes;
- `memory_compat`: the mapping behind them (entities, observations and relations
  as facts), over `memory_graph` (writes), `memory_reads` and `memory_json` (the
  official server's memory.json, in and out).

Only `server` and `memory_tools` import the `mcp` SDK, and nothing imports them
but `palimpsest mcp`: the mapping (and `palimpsest import --format mcp-memory`)
works without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import build_server, serve

__all__ = ["build_server", "serve"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import server

        return getattr(server, name)
    raise AttributeError(f"module 'palimpsest.mcp' has no attribute {name!r}")
