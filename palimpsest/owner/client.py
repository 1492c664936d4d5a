"""A memory reached through its owner process, with the verbs of `Memory`.

    >>> with connect("palimpsest-data") as mem:      # starts an owner if none runs
    ...     mem.assert_fact("user", "lives_in", "Perth")
    ...     [f.object for f in mem.facts("user", "lives_in")]
    ['Perth']
    >>> connect("postgresql://palimpsest@db:5432/mem")   # a database: opened here, no owner

`connect` finds the owner of the directory (its socket answers) or starts one
in the background (`python -m palimpsest.owner`: detached, its log in the
directory, gone after `idle_timeout` seconds without a client), and talks to it.
Clients racing to start one start one: they queue on `start.lock`, and the
owner lock decides in the end (`files`). Every verb of `Memory` is there, with
its arguments checked here and its result rebuilt as the same pydantic models;
errors keep their codes. Calls from several threads use a connection each.
If the owner goes away between calls (idle, killed), the next call reaches a
new one; a call it was running when it died raises `OwnerLost` (the call may or
may not have been applied; every call it answered was). A client imports
pydantic and the models, never Kùzu or a model. A memory in PostgreSQL needs no
owner (the database serves every process): `connect(url)` opens it in this process.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import os
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from .. import _names as names
from .._names import is_database_url as is_database_url  # owner.connect, run, mcp
from ..errors import MemoryLocked, OwnerLost, OwnerUnavailable, PalimpsestError, ValidationError
from . import files, wire

DEFAULT_IDLE = 600.0  # seconds an owner waits without a client before it stops
START_TIMEOUT = 180.0  # an owner opening a large memory on a busy machine
HELLO_TIMEOUT = 30.0  # an owner that accepts a connection says hello at once
_PATH_ARGS = {"export": ("target",)}  # arguments naming a file (relative: to this process)
_ERROR_LINE = re.compile(r"^error \[([a-z_]+)\]: (.*)$")


class _Bye(Exception):
    """The owner closed the connection before running the request."""


class _Link:
    """One connection to the owner: its hello, then one call at a time."""

    def __init__(self, directory: Path) -> None:
        self.sock = files.connect(directory, timeout=10.0)
        if files.peer_uid(self.sock) != os.getuid():  # only this user's owner is trusted
            self.sock.close()
            raise PermissionError("the socket's owner is another user")
        self.sock.settimeout(HELLO_TIMEOUT)
        self.rfile = self.sock.makefile("rb")
        self.wfile = self.sock.makefile("wb")
        try:
            hello = wire.receive(self.rfile)
        except BaseException:
            self.close()
            raise
        self.sock.settimeout(None)  # a call may take long (a consolidation, an import)
        if hello is None or "hello" not in hello:
            self.close()
            raise ConnectionRefusedError("the owner is stopping")
        self.hello: dict[str, Any] = hello["hello"]

    def stale(self) -> bool:
        """Has the owner closed this idle connection (a `bye` or the end is waiting)?"""
        try:
            ready, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(ready)

    def close(self) -> None:
        for f in (self.rfile, self.wfile):
            with contextlib.suppress(OSError):
                f.close()
        self.sock.close()


class OwnerClient:
    """The memory at `path`, served by its owner process; see the module docstring.

    >>> alice = OwnerClient("palimpsest-data", namespace="alice", start=False)
    >>> alice.facts("user"), alice.pid        # alice's facts; the owner's process id
    """

    def __init__(
        self,
        path: str | Path,
        *,
        namespace: str = "default",
        models: bool = True,
        start: bool = True,
        idle_timeout: float = DEFAULT_IDLE,
        start_timeout: float = START_TIMEOUT,
    ) -> None:
        if is_database_url(path):
            raise no_owner(str(path))
        self._directory = Path(path).absolute()
        self.namespace = names.check_namespace(namespace)
        self._models, self._start, self._idle = models, start, idle_timeout
        self._start_timeout = start_timeout
        self._pool: list[_Link] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._closed = False
        first = self._open()  # reach it now: a client that cannot, fails here
        self._hello = first.hello
        self._pool.append(first)

    # --- what the owner said ------------------------------------------------------------------
    @property
    def path(self) -> Path:
        return self._directory

    @property
    def location(self) -> str:
        """The memory's directory (`Memory.location`)."""
        return str(self._directory)

    @property
    def pid(self) -> int:
        """The owner's process id."""
        return int(self._hello["pid"])

    @property
    def models(self) -> bool:
        """Whether the owner runs with spaCy and the embedder (else words-only recall)."""
        return bool(self._hello["models"])

    def __getattr__(self, name: str) -> Any:
        verbs = self.__dict__.get("_hello", {}).get("verbs", {})
        if name.startswith("_") or name not in verbs:
            raise AttributeError(f"'Memory' has no verb {name!r}")

        def verb(*args: Any, **kwargs: Any) -> Any:
            return self._call(name, args, kwargs)

        verb.__name__ = verb.__qualname__ = name
        return verb

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._hello["verbs"]})

    # --- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, []
        for link in pool:
            link.close()

    def __enter__(self) -> OwnerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- calls --------------------------------------------------------------------------------
    def _call(self, verb: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        spec = self._hello["verbs"][verb]
        bound = _signature(verb, _frozen(spec["params"])).bind(*args, **kwargs)
        for name in _PATH_ARGS.get(verb, ()):  # a file named here is this process's file
            if isinstance(bound.arguments.get(name), str | os.PathLike):
                bound.arguments[name] = os.path.abspath(bound.arguments[name])
        calls: list[Callable[..., Any]] = []
        writers: list[Any] = []
        files_of = {n for n, _, _, note in spec["params"] if "IO[" in note}  # files it writes
        payload = {
            k: wire.encode(v, calls, writers if k in files_of else None)
            for k, v in bound.arguments.items()
        }
        for _ in range(4):  # a connection the owner closed unasked: another, maybe a new owner
            link = self._take()
            rid = next(self._ids)
            request = {"id": rid, "verb": verb, "kwargs": payload, "namespace": self.namespace}
            try:
                wire.send(link.wfile, request)
            except OSError:
                link.close()
                continue
            try:
                outcome = self._answer(link, rid, calls, writers, spec["returns"])
            except _Bye:
                link.close()
                continue
            except (OSError, ValueError) as e:
                link.close()
                raise OwnerLost(
                    f"the owner of {str(self._directory)!r} stopped during {verb}: it may or "
                    f"may not have been applied ({type(e).__name__})",
                    path=str(self._directory),
                ) from None
            self._put(link)
            if isinstance(outcome, PalimpsestError):
                raise outcome
            return outcome
        raise OwnerUnavailable(f"the owner of {str(self._directory)!r} keeps closing connections")

    def _answer(
        self,
        link: _Link,
        rid: int,
        calls: list[Callable[..., Any]],
        writers: list[Any],
        returns: str,
    ) -> Any:
        parts: list[Any] = []
        while True:
            message = wire.receive(link.rfile)
            if message is None:
                raise ConnectionResetError("the owner closed the connection")
            if message.get("bye"):
                raise _Bye()
            if message.get("id") != rid:
                raise ValueError("an answer to another request")
            if "call" in message:
                calls[message["call"]](*message["args"])
            elif "write" in message:
                writers[message["write"]].write(*message["args"])
            elif "chunk" in message:
                parts += message["chunk"]
            elif "error" in message:
                return wire.raised(message["error"])
            else:
                data = parts if wire.streams(returns) else message.get("result")
                got = wire.load(data, returns)
                return iter(got) if wire.streams(returns) else got

    def _take(self) -> _Link:
        while True:
            with self._lock:
                if self._closed:
                    from ..errors import ClosedError

                    raise ClosedError("this client is closed")
                link = self._pool.pop() if self._pool else None
            if link is None:
                link = self._open()
                self._hello = link.hello  # maybe a new owner: its pid, its verbs
                return link
            if not link.stale():
                return link
            link.close()

    def _put(self, link: _Link) -> None:
        with self._lock:
            if self._closed:
                link.close()
            else:
                self._pool.append(link)

    # --- reaching the owner -------------------------------------------------------------------
    def _open(self) -> _Link:
        """A connection to the owner, starting one first when none answers (and allowed)."""
        deadline = time.monotonic() + self._start_timeout
        while True:
            link = self._try()
            if link is not None:
                return link
            if not self._start:
                raise OwnerUnavailable(
                    f"no owner process holds {str(self._directory)!r}", path=str(self._directory)
                )
            self._start_owner(deadline)
            if time.monotonic() > deadline:
                raise OwnerUnavailable(
                    f"the owner of {str(self._directory)!r} did not answer within "
                    f"{self._start_timeout:.0f} s (see {files.LOG} there)",
                    path=str(self._directory),
                )

    def _try(self) -> _Link | None:
        try:
            return _Link(self._directory)
        except (FileNotFoundError, ConnectionRefusedError, ConnectionResetError):
            return None
        except PermissionError:
            raise MemoryLocked(
                f"the memory at {str(self._directory)!r} is held by a process of another "
                "user: its owner's socket is not open to this one",
                path=str(self._directory),
            ) from None
        except OSError:  # e.g. a timeout while the owner is busy starting
            return None

    def _start_owner(self, deadline: float) -> None:
        """Start an owner (one client at a time) and wait until it answers or fails."""
        self._directory.mkdir(parents=True, exist_ok=True)
        left = max(0.0, deadline - time.monotonic())
        with files.waiting_lock(self._directory, files.START_LOCK, left):
            while not self._answers(0.0):
                if files.read_holder(self._directory) is None:
                    break  # nobody owns it: start one
                if time.monotonic() >= deadline:  # one holds it and does not answer
                    return
                time.sleep(0.05)  # one is starting (or stopping): wait for it
            else:
                return  # another client started it meanwhile
            proc = _spawn(self._directory, models=self._models, idle=self._idle)
            while time.monotonic() < deadline:
                if self._answers(0.0):
                    return
                code = proc.poll()
                if code == 0:  # it found another owner answering
                    return
                if code is not None:
                    raise _failed(self._directory, code)
                time.sleep(0.05)

    def _answers(self, until: float) -> bool:
        """Does an owner answer (polling until `until`, a monotonic time)?"""
        while True:
            link = self._try()
            if link is not None:
                link.close()
                return True
            if time.monotonic() >= until:
                return False
            time.sleep(0.05)


def no_owner(url: str) -> ValidationError:
    """The error for an owner asked of a database (which every process opens itself)."""
    from ..postgres._db import safe_url

    return ValidationError(
        f"{safe_url(url)} is a PostgreSQL database: it has no owner process (any number "
        "of processes open it); open it with Memory.open or palimpsest.connect",
        field="path",
    )


def _spawn(directory: Path, *, models: bool, idle: float) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "palimpsest.owner", "--path", str(directory),
            "--idle-timeout", str(idle)]  # fmt: skip
    if not models:
        argv.append("--no-models")
    files.rotate_log(directory)
    with open(directory / files.LOG, "ab") as logf:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=logf,
            stderr=logf,
            cwd=directory,
            start_new_session=True,  # a host ending this client's group leaves the owner be
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    # reap it when it ends (this client may outlive it)
    threading.Thread(target=proc.wait, name="owner-reaper", daemon=True).start()
    return proc


def _failed(directory: Path, code: int) -> PalimpsestError:
    """The error an owner that could not start reported last in its log."""
    from ..errors import error_class

    try:
        tail = (directory / files.LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        tail = ""
    for line in reversed(tail.splitlines()[-50:]):
        m = _ERROR_LINE.match(line.strip())
        if m:
            return error_class(m.group(1))(m.group(2), path=str(directory))
    return OwnerUnavailable(
        f"the owner of {str(directory)!r} exited with status {code} (see {files.LOG} there)",
        path=str(directory),
    )


def _frozen(params: list[list[Any]]) -> tuple[tuple[str, str, bool], ...]:
    return tuple((str(p[0]), str(p[1]), bool(p[2])) for p in params)


_DEFAULT = object()


@cache
def _signature(verb: str, params: tuple[tuple[str, str, bool], ...]) -> inspect.Signature:
    """The verb's signature as the owner described it (defaults stand in, never sent)."""
    return inspect.Signature(
        [
            inspect.Parameter(
                n, getattr(inspect.Parameter, k), default=_DEFAULT if d else inspect.Parameter.empty
            )
            for n, k, d in params
        ]
    )
