"""What every command shares: settings, the memory at --path, output, option types.

--path is a directory (the embedded Kùzu store) or a `postgresql://` URL: a database
is opened in this process (no owner process, no server address file, no lock: the
database serves every process), and shown without its password (`shown`).

    >>> with open_memory(ctx, create=False) as mem:   # a read: no memory is created
    ...     dump_json(models_json(mem.facts()))

`palimpsest --help` must stay instant: nothing here imports the engine at module
level (`palimpsest.memory`, and with it Kùzu, loads inside `open_memory`). A verb
loads only the models it uses (`uses=`: spaCy to read text, MiniLM for vectors),
once. The package `palimpsest.cli` is the only part of Palimpsest that reads
environment variables.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

import typer

from .._names import is_database_url
from .format import fmt_iso

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ..memory import Memory

DEFAULT_PATH = "palimpsest-data"  # the facade's default; repeated here to keep --help cheap
ENV_PATH = "PALIMPSEST_PATH"
ENV_DEBUG = "PALIMPSEST_DEBUG"
ENV_TOKEN = "PALIMPSEST_TOKEN"  # a bearer token for calls through a running server
ENV_OWNER = "PALIMPSEST_OWNER"  # "auto": start the memory's owner when none runs; "off": never
ENV_OWNER_IDLE = "PALIMPSEST_OWNER_IDLE"  # seconds an owner started here waits idle (600)
AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")
Uses = Literal["text", "vectors"]  # what a verb reads text with (spaCy), embeds with (MiniLM)


class CliError(Exception):
    """A command-line problem that is not the engine's (e.g. no memory at --path)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Sharing:
    """How commands reach a memory another process may hold (`palimpsest.owner`)."""

    start: bool  # start an owner in the background when none runs
    idle_timeout: float  # how long an owner started here waits without a client


def sharing() -> Sharing:
    mode = os.environ.get(ENV_OWNER, "auto").strip().lower() or "auto"
    if mode not in ("auto", "off"):
        raise CliError("invalid_input", f"{ENV_OWNER}: auto or off, not {mode!r}")
    raw = os.environ.get(ENV_OWNER_IDLE, "").strip()
    try:
        idle = float(raw) if raw else 600.0
    except ValueError:
        idle = -1.0
    if not idle > 0:
        raise CliError("invalid_input", f"{ENV_OWNER_IDLE}: seconds (> 0), not {raw!r}")
    return Sharing(start=mode == "auto", idle_timeout=idle)


@dataclass(frozen=True)
class Settings:
    path: str
    namespace: str
    path_given: bool  # --path on the command line (not the default, not the environment)


# --- shared option types -------------------------------------------------------------------
ValidAtOpt = Annotated[
    str | None,
    typer.Option("--valid-at", help="What was true at this time (default: now).", metavar="T"),
]
KnownAtOpt = Annotated[
    str | None,
    typer.Option(
        "--known-at", help="As the memory believed it at this time (default: now).", metavar="T"
    ),
]
ReasonOpt = Annotated[str | None, typer.Option("--reason", help="Why (kept in the record).")]

JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
KeyOpt = Annotated[
    str | None,
    typer.Option(
        "--idempotency-key",
        metavar="KEY",
        help="Run again with the same key after a lost answer: the first outcome is printed"
        " and nothing is written twice.",
    ),
]
NamespaceOpt = Annotated[
    str | None,
    typer.Option("--namespace", "-n", metavar="NAME", help="Namespace (default: the global one)."),
]


# whether --path names a PostgreSQL database (no engine import: `--help` stays instant)
is_url = is_database_url


def shown(path: str) -> str:
    """--path as messages print it: a database URL without its password."""
    if not is_url(path):
        return repr(path)
    from ..postgres._db import safe_url

    return safe_url(path)


def settings(ctx: typer.Context) -> Settings:
    obj = ctx.find_root().obj
    if not isinstance(obj, Settings):  # pragma: no cover - the callback always sets it
        return Settings(DEFAULT_PATH, "default", path_given=False)
    return obj


@contextmanager
def open_memory(
    ctx: typer.Context,
    *,
    create: bool = True,
    start: bool | None = None,
    uses: tuple[Uses, ...] = (),
) -> Iterator[Memory]:
    """The memory at --path, through its owner process (started in the background when
    none runs, unless `start` or PALIMPSEST_OWNER=off say not), else opened here;
    reads refuse to create one where there is none.

    `uses`: the models the verb will run when it opens the memory itself, loaded before
    the store opens (the others stay unloaded; through an owner, the owner has them)."""
    s = settings(ctx)
    if is_url(s.path):  # a database: opened here, whichever other processes have it open
        from ..memory import Memory

        models = _load(uses)
        with _releasing(models, Memory.open(s.path, namespace=s.namespace, **models)) as mem:
            yield mem
        return
    if not create and not Path(s.path).exists():
        raise CliError(
            "no_memory",
            f"no memory at {s.path!r} (pass --path or set {ENV_PATH}; "
            "a write such as `palimpsest remember` creates one)",
        )
    client = reach_owner(s.path, s.namespace, start=sharing().start if start is None else start)
    if client is not None:  # the memory's owner process answers every verb
        with client:
            yield cast("Memory", client)
        return
    from ..errors import MemoryLocked
    from ..memory import Memory

    models = _load(uses) if uses and held_by_server(s.path) is None else {}
    try:
        mem = Memory.open(s.path, namespace=s.namespace, **models)
    except MemoryLocked as e:
        # A running server holds the directory: reads and writes go through it (with its
        # tokens and namespaces); the verbs it does not offer to the CLI name it.
        if held_by_server(s.path) is None:
            raise
        from ..api.address import read_address
        from ..api.remote import RemoteMemory

        addr = read_address(Path(s.path))
        if addr is None:  # pragma: no cover - the server stopped in between
            raise e from None
        token = os.environ.get(ENV_TOKEN) or None
        with RemoteMemory(addr, path=s.path, namespace=s.namespace, token=token) as remote:
            yield cast("Memory", remote)
        return
    with _releasing(models, mem):
        yield mem


@contextmanager
def _releasing(models: dict[str, Any], mem: Memory) -> Iterator[Memory]:
    """`mem` until the verb is done, then closed; spaCy is let go of first. A command
    reads its text inside the verb, and the store's close checkpoints: with spaCy's
    ~100 MB free by then, a cold remember peaked at 485 MB RSS, not 501."""
    try:
        yield mem
    finally:
        extractor = models.get("extractor")
        if extractor is not None:
            import gc

            extractor.unload()
            gc.collect()  # the pipeline's objects hold each other
        mem.close()


def reach_owner(path: str, namespace: str, *, start: bool) -> Any:
    """A client of the memory's owner (an `OwnerClient`), started first if `start`;
    None when none answers and none may start, or a server that does not share the
    memory holds it (reached over HTTP instead)."""
    from ..errors import OwnerUnavailable
    from ..owner.client import OwnerClient

    if is_url(path):  # a database has no owner
        return None
    try:
        return OwnerClient(path, namespace=namespace, start=False)
    except OwnerUnavailable:
        pass
    if not start or held_by_server(path) is not None:
        return None
    return OwnerClient(path, namespace=namespace, idle_timeout=sharing().idle_timeout)


def _load(uses: tuple[Uses, ...]) -> dict[str, Any]:
    """The default models `uses` names, loaded now: the embedder first, then spaCy, then
    the store (Memory.open). In that order the store and spaCy reuse the heap the
    model's load freed: a cold `recall` peaked at 437 MB RSS, against 526 MB when the
    model loaded after the store (`remember`: 525 MB against 597 MB)."""
    models: dict[str, Any] = {}
    if "vectors" in uses:
        from ..recall.embedder import named

        models["embedder"] = named("minilm")
        models["embedder"].embed(["warm up"])
    if "text" in uses:
        from .._time import utcnow
        from ..extraction import SpacyExtractor

        models["extractor"] = SpacyExtractor()
        models["extractor"].extract("Warm up.", occurred_at=utcnow())
    return models


def held_by_server(path: str) -> Exception | None:
    """The error naming the live server that holds `path` (it records its address there)."""
    from ..api.address import held_message, read_address
    from ..errors import MemoryLocked

    if is_url(path):  # a server of a database holds nothing: every process opens it
        return None
    addr = read_address(Path(path))
    if addr is None:
        return None
    return MemoryLocked(held_message(path, addr), path=path, url=addr.url, pid=addr.pid)


# --- output helpers -------------------------------------------------------------------------
def echo(text: str = "") -> None:
    typer.echo(text)


def note(text: str) -> None:
    typer.echo(text, err=True)


def dump_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=json_default))


def json_default(value: object) -> Any:
    if isinstance(value, datetime):
        return fmt_iso(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def models_json(items: Sequence[BaseModel]) -> list[Any]:
    return [m.model_dump(mode="json") for m in items]


# --- time arguments -------------------------------------------------------------------------
def valid_from_arg(value: str | None) -> Any:
    """`--from`: left out → the engine's default (the statement's time); `always` → None."""
    if value is None:
        from ..engine.rows import UNSET

        return UNSET
    if value.strip().lower() in ("always", "-inf"):
        return None
    return value


def read_text_arg(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    return text
