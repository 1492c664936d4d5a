"""The owner's files in the memory directory: its lock, its socket, its log.

    >>> fd = try_lock(Path("palimpsest-data"))      # None: another process owns it
    >>> write_holder(fd, Holder(pid=os.getpid(), started_at="...", models=True))
    >>> read_holder(Path("palimpsest-data")).pid

- `owner.lock`: whoever owns the memory holds an exclusive `flock` on it for its
  whole life, and writes who it is into it (`Holder`). The kernel drops the lock
  when the process ends, however it ends (SIGKILL too), so a file left behind is
  never mistaken for a live owner: holding the lock is what counts.
- `owner.sock`: the Unix socket the owner listens on, mode 0600. Only the owner
  removes or replaces it, and only while it holds the lock, so a socket left by a
  killed owner is cleaned by the next one and never by a client.
- `owner.log`: the owner's output (it runs detached).
- `start.lock`: held by a client while it starts an owner, so that clients
  arriving together start one process, not one each.

A socket path longer than `sun_path` allows (~107 bytes) is reached through the
directory's `/proc/self/fd` entry (Linux). Standard library (and `errors`) only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import MemoryLocked

SOCKET = "owner.sock"
LOCK = "owner.lock"
LOG = "owner.log"
START_LOCK = "start.lock"
_SUN_PATH = 100  # a little under Linux's 108, for the terminating NUL and margin


@dataclass(frozen=True)
class Holder:
    """Who owns a memory: written into `owner.lock` by the process holding it."""

    pid: int
    started_at: str
    models: bool
    kind: str = "owner"  # "owner" (palimpsest.owner) or "serve" (palimpsest serve)
    version: str = ""


def try_lock(directory: Path, name: str = LOCK) -> int | None:
    """An fd holding the exclusive lock on `directory/name`, or None if another holds it."""
    fd = os.open(directory / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def waiting_lock(directory: Path, name: str, timeout: float) -> Iterator[bool]:
    """Hold `directory/name` exclusively for the block, waiting up to `timeout` seconds
    for it; yields False (not held) when the wait timed out."""
    deadline = time.monotonic() + timeout
    fd = try_lock(directory, name)
    while fd is None and time.monotonic() < deadline:
        time.sleep(0.05)
        fd = try_lock(directory, name)
    try:
        yield fd is not None
    finally:
        if fd is not None:
            os.close(fd)  # closing drops the lock


def rotate_log(directory: Path, keep: int = 1 << 20) -> None:
    """Move a log over `keep` bytes to `owner.log.1` (one old log is kept)."""
    path = Path(directory) / LOG
    with contextlib.suppress(OSError):
        if path.stat().st_size > keep:
            path.replace(path.with_name(LOG + ".1"))


def write_holder(fd: int, holder: Holder) -> None:
    """Record the lock holder in the lock file (readers check the lock, not the text)."""
    data = (json.dumps(asdict(holder)) + "\n").encode()
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def read_holder(directory: Path) -> Holder | None:
    """The live owner of `directory`: None when no process holds its lock."""
    path = Path(directory) / LOCK
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: read who holds it
            pass
        else:
            return None  # nobody holds it: a file left by an owner that is gone
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
        return Holder(
            pid=int(data["pid"]),
            started_at=str(data.get("started_at", "")),
            models=bool(data.get("models", False)),
            kind=str(data.get("kind", "owner")),
            version=str(data.get("version", "")),
        )
    except (ValueError, KeyError, TypeError):
        return None  # held, and its holder not written yet: it is still starting


def held(directory: Path) -> MemoryLocked | None:
    """The error naming the live owner of `directory` and the call that reaches it."""
    holder = read_holder(directory)
    if holder is None or holder.pid == os.getpid():
        return None
    path = str(directory)
    what = "`palimpsest serve`" if holder.kind == "serve" else "its owner process"
    return MemoryLocked(
        f"the memory at {path!r} is held by {what} (pid {holder.pid}); reach it with "
        f"palimpsest.connect({path!r}), which has the same verbs",
        path=path,
        pid=holder.pid,
    )


@contextlib.contextmanager
def _address(directory: Path) -> Iterator[str]:
    """The socket's address: its path, or a short one through /proc for a long path."""
    path = str(Path(directory) / SOCKET)
    if len(path.encode()) < _SUN_PATH:
        yield path
        return
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{SOCKET}"
    finally:
        os.close(fd)


def connect(directory: Path, timeout: float | None = None) -> socket.socket:
    """A connection to the owner's socket; FileNotFoundError or ConnectionRefusedError
    when no owner listens, PermissionError when this user may not."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        with _address(directory) as address:
            sock.connect(address)
        sock.settimeout(None)
    except BaseException:
        sock.close()
        raise
    return sock


def listen(directory: Path) -> socket.socket:
    """Bind the owner's socket (mode 0600), replacing one left by a process that died.
    Call only while holding the owner lock: that is what makes replacing it safe."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with _address(directory) as address:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(address)
            old = os.umask(0o177)  # created 0600: no window in which others may connect
            try:
                sock.bind(address)
            finally:
                os.umask(old)
            os.chmod(address, stat.S_IRUSR | stat.S_IWUSR)
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    return sock


def unlink_socket(directory: Path) -> None:
    """Remove the socket (by the owner, while it still holds the lock)."""
    with _address(directory) as address, contextlib.suppress(FileNotFoundError):
        os.unlink(address)


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (SO_PEERCRED)."""
    import struct

    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)
