"""The app factory: one embedded `Memory`, opened in the lifespan, closed on shutdown.

    >>> app = create_app("palimpsest-data", tokens_file="tokens.json")
    >>> uvicorn.run(app, host="127.0.0.1", port=8000)

or, configured from the environment (`settings.ServerSettings`):

    $ uvicorn --factory palimpsest.api.app:app_from_env

`memory_path` may be a `postgresql://` URL: the memory is then opened by this process
alongside any other (no owner, no lock, no address file: the database serves them all).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from fastapi import FastAPI

from .. import _names as names
from .._time import utcnow
from ..errors import ClosedError, NotFound, StoreUnavailable
from ..storage.backends import is_database_url
from . import problems, routes_explore, routes_review, ui
from .address import remove_address, write_address
from .browser import BrowserGuard
from .routes import router
from .schedule import Consolidator, Schedule, Sleep
from .security import BodyLimit, Gate
from .settings import DEFAULT_MAX_BODY, ServerSettings
from .tokens import TokenStore, load_tokens

if TYPE_CHECKING:
    from .._time import Clock
    from ..extraction import Extractor
    from ..memory import Memory
    from ..recall.embedder import Embedder, EmbedderName

_DESCRIPTION = """\
Palimpsest over HTTP: an offline, bitemporal knowledge-graph memory for AI agents.

Every fact is dated twice: `valid_at` (when it is true in the world) and `known_at`
(when the memory believed it). Times are ISO-8601 strings with a timezone.

Errors are RFC 9457 problem details (`application/problem+json`) whose `code` is the
engine's stable error code. Every endpoint but `/v1/health` takes a `namespace`.
"""


OPEN_RETRY_S = 5.0  # a database unreachable at startup: how often to try again


@dataclass
class ServerState:
    """What the endpoints reach through `request.app.state.palimpsest`."""

    memory_path: Path | str  # a directory, or a postgresql:// URL (kept a string)
    tokens: TokenStore | None
    default_namespace: str
    extractor: Extractor | Literal["spacy"] | None
    clock: Clock | None
    embedder: Embedder | EmbedderName | None = "minilm"
    consolidator: Consolidator | None = None
    share: bool = False  # reach an owner holding the memory; else own it, serving its socket
    _memory: Memory | None = field(default=None, repr=False)
    _sharing: Sharing | None = field(default=None, repr=False)
    _waiting: str | None = field(default=None, repr=False)  # why the database is not open

    def memory(self) -> Memory:
        if self._memory is None:
            if self._waiting is not None:
                raise StoreUnavailable(f"{self._waiting} (the server tries again every few s)")
            raise ClosedError("the server's memory is not open")
        return self._memory

    def waiting(self, why: str) -> None:
        """The database could not be reached: requests are 503s until it opens."""
        self._waiting = why

    async def open_when_reachable(self) -> None:
        """Open a database that could not be reached at startup as soon as it answers;
        until then every request is a 503 `store_unavailable` with `Retry-After`."""
        while self._memory is None:
            await asyncio.sleep(OPEN_RETRY_S)
            try:
                await asyncio.to_thread(self.open)
            except StoreUnavailable as e:
                self._waiting = e.message
        self._waiting = None

    def open(self) -> None:
        models = self.embedder is not None
        if self.share and not is_database_url(self.memory_path):
            self._sharing = Sharing(Path(self.memory_path))
            front = self._sharing.reach(self.default_namespace, models=models)
            if front is not None:  # another process owns it: this server is a front
                self._memory = front
                return
        from ..memory import Memory

        self._resolve_models()
        try:
            self._memory = Memory.open(
                self.memory_path,
                clock=self.clock,
                namespace=self.default_namespace,
                extractor=self.extractor,
                embedder=self.embedder,
            )
        except BaseException:
            if self._sharing is not None:
                self._sharing.release()
                self._sharing = None
            raise
        if self._sharing is not None:
            self._sharing.serve(self._memory, models=models)

    def _resolve_models(self) -> None:
        # built here rather than by Memory.open, so `warm` can reach them
        if self.extractor == "spacy":
            from ..extraction import SpacyExtractor

            self.extractor = SpacyExtractor()
        if isinstance(self.embedder, str):
            from ..recall.embedder import named

            self.embedder = named(self.embedder)

    def warm(self) -> None:
        """Load spaCy and MiniLM now (a second or more), so no request pays for them: the
        first `remember` or `recall` would otherwise wait past a client's time-out."""
        if self._sharing is not None and self._sharing.fronting:
            return  # the owner loads them
        if self.extractor is not None and not isinstance(self.extractor, str):
            self.extractor.extract("Warm up.", occurred_at=utcnow())
        if self.embedder is not None and not isinstance(self.embedder, str):
            self.embedder.embed(["warm up"])

    def close(self) -> None:
        mem, self._memory = self._memory, None
        sharing, self._sharing = self._sharing, None
        if sharing is not None:
            sharing.stop()  # no new calls from the socket; those under way finish
        try:
            if mem is not None:
                mem.close()
        finally:
            if sharing is not None:
                sharing.release()  # last: another owner may open it now


class Sharing:
    """`palimpsest serve` and the memory's owner: it fronts the owner holding the memory,
    or owns it itself, serving its socket to the user's other processes (`owner`)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).absolute()
        self.fronting = False
        self._fd: int | None = None
        self._owner: Any = None

    def reach(self, namespace: str, *, models: bool) -> Memory | None:
        """A client of the owner when another process owns the memory; else None,
        holding the owner lock (as `palimpsest serve`)."""
        from .. import __version__
        from ..owner import files
        from ..owner.client import OwnerClient

        self.path.mkdir(parents=True, exist_ok=True)
        self._fd = files.try_lock(self.path)
        if self._fd is None:
            self.fronting = True
            return cast("Memory", OwnerClient(self.path, namespace=namespace))
        started = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        holder = files.Holder(os.getpid(), started, models, kind="serve", version=__version__)
        files.write_holder(self._fd, holder)
        return None

    def serve(self, mem: Memory, *, models: bool) -> None:
        """Serve the memory this process opened on its socket."""
        from ..owner.server import Owner

        self._owner = Owner(mem, self.path, models=models, kind="serve")
        self._owner.start()

    def stop(self) -> None:
        if self._owner is not None:
            self._owner.stop()

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def create_app(
    memory_path: str | Path,
    *,
    tokens_file: str | Path | None = None,
    default_namespace: str = "default",
    extractor: Extractor | Literal["spacy"] | None = "spacy",
    embedder: Embedder | EmbedderName | None = "minilm",
    clock: Clock | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY,
    consolidation: Schedule | None = None,
    schedule_sleep: Sleep | None = None,
    address: tuple[str, int] | None = None,
    warm: bool = True,
    share: bool = False,
) -> FastAPI:
    """The HTTP server over the memory at `memory_path`.

    Without `tokens_file` only loopback clients are served. With it, every
    `/v1/` request but health needs a bearer token from that file (see
    `palimpsest.api.tokens`); the file is re-read when it changes, so
    revocations apply at once. `extractor`, `embedder` and `clock` go to
    `Memory.open` (tests pass None to skip spaCy and MiniLM).

    `consolidation` runs `Memory.consolidate` daily at its time of day while
    the app is up (`schedule_sleep` replaces `asyncio.sleep` in tests; the
    schedule reads `clock`). `address` (host, port) is recorded in the memory
    directory while serving, so the CLI can name the server holding it. With
    `warm` (the default) the models load during startup, before the first request
    is answered (uvicorn opens its port after the lifespan has started). With
    `share` (`palimpsest serve`), a memory another process owns is served through
    that owner (`palimpsest.owner`), and one this server opens is served to the
    user's other processes on its socket too, so MCP hosts and the CLI use it at once.
    A `postgresql://` `memory_path` is opened here whatever `share` says (the database
    serves every process), and no address is recorded.
    """
    ns = names.check_namespace(default_namespace)
    tokens = None
    if tokens_file is not None:
        path = Path(tokens_file)
        if not path.is_file():
            raise NotFound(f"no tokens file at {str(path)!r}", path=str(path))
        load_tokens(path)  # refuse a malformed file now, not on the first request
        tokens = TokenStore(path)
    state = ServerState(
        memory_path=memory_path if is_database_url(memory_path) else Path(memory_path),
        tokens=tokens,
        default_namespace=ns,
        extractor=extractor,
        clock=clock,
        embedder=embedder,
        share=share,
    )
    if consolidation is not None:
        state.consolidator = Consolidator(
            consolidation,
            state.memory,
            clock=clock or utcnow,
            sleep=schedule_sleep or asyncio.sleep,
        )

    if is_database_url(state.memory_path):
        address = None  # no directory to record it in; the CLI opens the database itself

    tasks: list[asyncio.Task[Any]] = []

    async def ready() -> None:
        if warm:
            await asyncio.to_thread(state.warm)
        if address is not None:
            write_address(Path(state.memory_path), *address)
        if state.consolidator is not None:
            tasks.append(asyncio.create_task(state.consolidator.run_forever()))

    async def open_then_ready() -> None:
        await state.open_when_reachable()
        await ready()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        tasks.clear()
        try:
            state.open()
        except StoreUnavailable as e:
            if not is_database_url(state.memory_path):
                raise
            # a worker started while its database is down answers 503 until it opens it
            # (a fleet's supervisor need not restart it)
            state.waiting(e.message)
            tasks.append(asyncio.create_task(open_then_ready()))
        try:
            if not tasks:
                await ready()
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if address is not None:
                remove_address(Path(state.memory_path))
            state.close()

    from .. import __version__

    app = FastAPI(
        title="Palimpsest",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # served offline by `ui`, from vendored files
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.palimpsest = state
    problems.install(app)
    app.include_router(router)
    app.include_router(routes_explore.router)
    app.include_router(routes_review.router)
    ui.install(app)
    # the last added runs first: the gate refuses before the body is read, and
    # before it the guard refuses cross-site writes
    app.add_middleware(BodyLimit, limit=max_body_bytes)
    app.add_middleware(Gate, tokens=tokens)
    app.add_middleware(BrowserGuard, loopback_only=tokens is None)
    return app


def app_from_env() -> FastAPI:
    """`create_app` configured by `PALIMPSEST_*` environment variables."""
    s = ServerSettings.from_env()
    return create_app(
        s.path,
        tokens_file=s.tokens_file,
        default_namespace=s.namespace,
        max_body_bytes=s.max_body_bytes,
        consolidation=None
        if s.consolidate_at is None
        else Schedule.parse(s.consolidate_at, s.timezone),
    )
