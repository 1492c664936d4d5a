"""Where a running server can be reached, recorded in the memory directory it holds.

    >>> write_address(Path("palimpsest-data"), "127.0.0.1", 8000)
    >>> read_address(Path("palimpsest-data")).url
    'http://127.0.0.1:8000'

Kùzu lets one process hold a database for writing, so while `palimpsest serve`
runs, the CLI cannot open the directory. The server writes `server.json`
there once the memory is open and removes it on a clean shutdown; the CLI
reads it to name the server (or go through it) instead of failing with a raw
lock error. A file left by a process that died is stale and ignored. Standard
library only: the CLI reads it without the server extra.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

ADDRESS_FILE = "server.json"


@dataclass(frozen=True)
class Address:
    host: str
    port: int
    pid: int
    started_at: str

    @property
    def url(self) -> str:
        """Where a client on this machine reaches it (a wildcard bind answers on loopback)."""
        host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.host, self.host)
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"


def held_message(path: str | Path, address: Address) -> str:
    """What a command that cannot open the memory says about the server holding it."""
    return (
        f"the memory at {str(path)!r} is held by a palimpsest server at {address.url} "
        f"(pid {address.pid}); use the HTTP API or stop the server"
    )


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


def write_address(directory: Path, host: str, port: int) -> Path:
    """Record this process as the server of `directory` (atomically)."""
    addr = Address(
        host=host,
        port=port,
        pid=os.getpid(),
        started_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"),
    )
    path = Path(directory) / ADDRESS_FILE
    fd, tmp = tempfile.mkstemp(prefix=".server-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(addr), fh)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_address(directory: Path) -> Address | None:
    """The live server recorded in `directory`; None if none, unreadable, or its process is gone."""
    try:
        raw = json.loads((Path(directory) / ADDRESS_FILE).read_text(encoding="utf-8"))
        addr = Address(
            host=str(raw["host"]),
            port=int(raw["port"]),
            pid=int(raw["pid"]),
            started_at=str(raw.get("started_at", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return addr if _alive(addr.pid) else None


def remove_address(directory: Path) -> None:
    """Remove the record if it is this process's (a newer server may have replaced it)."""
    path = Path(directory) / ADDRESS_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(raw, dict) and raw.get("pid") == os.getpid():
        path.unlink(missing_ok=True)
