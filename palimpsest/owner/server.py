"""The owner: one open `Memory` served on the directory's socket to this user's processes.

    >>> owner = Owner(mem, directory, idle_timeout=600)
    >>> owner.start()          # listening on directory/owner.sock (mode 0600)
    >>> owner.wait()           # until idle that long, or `stop()`

Each connection gets a thread; calls run on the memory as the HTTP server's do
(the facade serialises writes, reads run side by side). A connection opens
with `hello` (pid, version, models, the verbs); a call runs with the client's
default namespace (`Memory.using`). A process of another user is refused
(SO_PEERCRED), whatever the socket's mode says. Stopping: no new connection is
accepted, calls under way finish and are answered, idle connections are told
`bye` (a request that crossed it was not run: the client sends it again).
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from . import files, wire

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger("palimpsest.owner")

_LOCAL = frozenset({"open", "close", "using"})  # lifecycle: the client's own, never sent


def verbs() -> dict[str, dict[str, Any]]:
    """Every public verb of `Memory`: its parameters (name, kind, has a default,
    annotation) and its return annotation."""
    from ..memory import Memory

    out: dict[str, dict[str, Any]] = {}
    for name, fn in inspect.getmembers(Memory, inspect.isfunction):
        if name.startswith("_") or name in _LOCAL:
            continue
        params = list(inspect.signature(fn).parameters.values())[1:]
        out[name] = {
            "params": [
                [p.name, p.kind.name, p.default is not p.empty, str(p.annotation)] for p in params
            ],
            "returns": str(fn.__annotations__.get("return", "Any")),
        }
    return out


@dataclass
class _Conn:
    sock: socket.socket
    lock: threading.Lock = field(default_factory=threading.Lock)
    busy: bool = False
    closed: bool = False


class Owner:
    """Serves `mem` on `directory`'s socket until stopped or idle for `idle_timeout` s."""

    def __init__(
        self,
        mem: Memory,
        directory: Path,
        *,
        idle_timeout: float | None = None,
        models: bool = True,
        kind: str = "owner",
    ) -> None:
        from .. import __version__

        self.mem = mem
        self.directory = Path(directory)
        self.idle_timeout = idle_timeout
        self._verbs = verbs()
        self._hello = {
            "pid": os.getpid(),
            "version": __version__,
            "models": models,
            "kind": kind,
            "path": str(self.directory),
            "verbs": self._verbs,
        }
        self._listener: socket.socket | None = None
        self._conns: dict[int, _Conn] = {}
        self._threads: list[threading.Thread] = []
        self._state = threading.Lock()
        self._last = time.monotonic()
        self._stopping = threading.Event()
        self.stopped = threading.Event()

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Listen (the caller holds the owner lock) and serve on threads of their own."""
        self._listener = files.listen(self.directory)
        threading.Thread(target=self._accept, name="owner-accept", daemon=True).start()
        if self.idle_timeout is not None:
            threading.Thread(target=self._watch, name="owner-idle", daemon=True).start()

    def wait(self) -> None:
        self.stopped.wait()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop listening, let calls under way finish, tell idle connections `bye`."""
        with self._state:
            if self._stopping.is_set():
                return
            self._stopping.set()
            listener, self._listener = self._listener, None
            conns = list(self._conns.values())
        if listener is not None:
            files.unlink_socket(self.directory)
            listener.close()
        for c in conns:
            with c.lock:
                if not c.busy:
                    self._bye(c)
        deadline = time.monotonic() + timeout
        for t in list(self._threads):
            t.join(max(0.0, deadline - time.monotonic()))
        self.stopped.set()

    def _watch(self) -> None:
        assert self.idle_timeout is not None
        step = min(1.0, max(0.05, self.idle_timeout / 10))
        while not self._stopping.wait(step):
            with self._state:
                idle = not self._conns and time.monotonic() - self._last >= self.idle_timeout
            if idle:
                log.info("idle for %.0f s: stopping", self.idle_timeout)
                self.stop()
                return

    # --- connections --------------------------------------------------------------------------
    def _accept(self) -> None:
        while True:
            listener = self._listener
            if listener is None:
                return
            try:
                sock, _ = listener.accept()
            except OSError:
                return  # closed by stop()
            if files.peer_uid(sock) != os.getuid():
                log.warning("refused a connection from another user")
                sock.close()
                continue
            conn = _Conn(sock)
            with self._state:
                if self._stopping.is_set():
                    sock.close()
                    return
                self._conns[id(conn)] = conn
                t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
                self._threads = [x for x in self._threads if x.is_alive()] + [t]
            t.start()

    def _serve(self, conn: _Conn) -> None:
        rfile, wfile = conn.sock.makefile("rb"), conn.sock.makefile("wb")
        try:
            wire.send(wfile, {"hello": self._hello})
            while True:
                message = wire.receive(rfile)
                if message is None:
                    break
                with conn.lock:
                    if conn.closed:  # told `bye` meanwhile: this request is not run
                        break
                    conn.busy = True
                try:
                    self._call(message, wfile)
                finally:
                    with conn.lock:
                        conn.busy = False
                        if self._stopping.is_set():
                            self._bye(conn)
                if conn.closed:
                    break
        except (OSError, ValueError) as e:  # the client went away, or sent nonsense
            log.debug("connection ended: %s", e)
        finally:
            with self._state:
                self._conns.pop(id(conn), None)
                self._last = time.monotonic()
            for f in (rfile, wfile):
                with contextlib.suppress(OSError):
                    f.close()
            conn.sock.close()

    def _bye(self, conn: _Conn) -> None:
        """Close an idle connection (its lock held), saying so first."""
        if conn.closed:
            return
        conn.closed = True
        try:
            conn.sock.sendall(b'{"bye":true}\n')
            conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _call(self, message: dict[str, Any], wfile: IO[bytes]) -> None:
        rid = message.get("id")
        verb = message.get("verb")
        try:
            if not isinstance(verb, str) or verb not in self._verbs:
                raise AttributeError(f"Memory has no verb {verb!r}")
            kwargs = wire.decode(message.get("kwargs") or {}, self._callback(rid, wfile))
            with self.mem.using(message.get("namespace") or "default"):
                result = getattr(self.mem, verb)(**kwargs)
                if wire.streams(self._verbs[verb]["returns"]):
                    for part in wire.chunks(iter(result)):
                        wire.send(wfile, {"id": rid, "chunk": part})
                    result = None
            reply: dict[str, Any] = {"id": rid, "result": wire.dump(result)}
        except Exception as e:
            from ..errors import PalimpsestError

            if not isinstance(e, PalimpsestError):
                log.exception("%s failed", verb)
            reply = {"id": rid, "error": wire.error(e)}
        wire.send(wfile, reply)

    def _callback(self, rid: Any, wfile: IO[bytes]) -> Callable[[int, str], Callable[..., Any]]:
        def make(n: int, kind: str) -> Callable[..., Any]:
            def back(*args: Any) -> None:
                wire.send(wfile, {"id": rid, kind: n, "args": wire.dump(list(args))})

            return back

        return make
