"""MCP: one memory served to an MCP client (a host model) over stdio.

    $ palimpsest --path ./memory mcp            # or: serve("./memory", models=False)

- `server`: the server and the engine's verbs as tools (`build_server`, `serve`);
- `memory_tools`: the official MCP "memory" server's tools, same names and shapes;
- `memory_compat`: the mapping behind them (entities, observations and relations
  as facts), over `memory_graph` (writes), `memory_reads` and `memory_json` (the
  official server's memory.json, in and out);
- `protocol`: the MCP stdio protocol (initialize, tools/list, tools/call), written
  out: the official SDK's import alone takes longer than the official server's start.

Every tool calls `Memory`'s public verbs only, so it behaves the same on a memory
opened in this process and on one reached through its owner (`palimpsest.owner`).

Nothing here imports the `mcp` SDK (its client drives this server in the tests);
only `palimpsest mcp` imports `server`.
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
