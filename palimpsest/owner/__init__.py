"""One memory, many processes: the owner process and its clients.

    >>> import palimpsest
    >>> mem = palimpsest.connect("palimpsest-data")   # the owner's, started if none runs
    >>> mem.remember("I moved to Perth.")

Kùzu lets one process hold a memory directory. So that every client on the
machine can use it at once (several MCP hosts, the CLI, the dashboard, a
script), one process owns it, the *owner*, and the others reach it over a Unix
socket in the directory (mode 0600, this user only). Only the owner loads spaCy
and the embedder; a client loads neither, nor Kùzu.

- `client`: `connect` and `OwnerClient`, with the verbs of `Memory`;
- `server`: `Owner`, serving an open `Memory` on the socket (the owner process,
  and `palimpsest serve` while it holds a memory);
- `run`: the owner process (`python -m palimpsest.owner`);
- `wire`: the messages (a verb, JSON arguments, the facade's models and errors);
- `files`: the lock, the socket and the log in the directory.

`Memory.open(path)` on a directory an owner holds raises `MemoryLocked` naming
`palimpsest.connect(path)`: an open `Memory` is this process's alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import OwnerClient
    from .files import Holder, read_holder

__all__ = ["Holder", "OwnerClient", "read_holder"]


def __getattr__(name: str) -> Any:
    if name == "OwnerClient":
        from . import client

        return getattr(client, name)
    if name in ("Holder", "read_holder"):
        from . import files

        return getattr(files, name)
    raise AttributeError(f"module 'palimpsest.owner' has no attribute {name!r}")
