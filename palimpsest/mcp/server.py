"""MCP tools: one memory served to an MCP client (a host model) over stdio.

    $ palimpsest --path ./memory mcp            # or: serve("./memory", models=False)

Two sets of tools share one `Memory`, opened once for the life of the process:

- the engine's verbs (`remember`, `assert_fact`, `end_fact`, `retract`, `erase`,
  `facts`, `history`, `entity`, `snapshot`, `changes`, `recall`, `consolidate`),
  with the facade's keywords and JSON of its pydantic models;
- the official MCP "memory" server's tools (`create_entities`, `create_relations`,
  `add_observations`, `delete_entities`, `delete_observations`, `delete_relations`,
  `read_graph`, `search_nodes`, `open_nodes`) with its names and input shapes, so
  prompts written for it keep working (tools: `memory_tools`; mapping: `memory_compat`).

`palimpsest mcp` is a thin front: the memory's owner process holds it (started
in the background if none runs) and this process loads neither Kùzu's memory nor
a model; several hosts so share one memory (`palimpsest.owner`). Every result is
a JSON object, as structured content and as text (the
memory-server deletes answer with a sentence, as that server does). Engine
errors come back as tool errors reading `error [<code>]: <message>`; the
server keeps running. Lists that can grow with the memory are bounded and
say how much they left out. Only `palimpsest mcp` imports this module. The
memory is opened on a thread while the host's `initialize` and `tools/list` are
answered (`protocol.run_stdio`); the first call waits for it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from pydantic import BaseModel, Field

from ..errors import PalimpsestError, ValidationError
from . import memory_tools
from .memory_tools import ok as _ok
from .metadata import described
from .protocol import Result, Tools, run_stdio

if TYPE_CHECKING:
    from ..memory import Memory

Time = Annotated[
    str | None, Field(description="ISO-8601 time with a zone, e.g. 2024-09-01T00:00:00Z")
]
ValidAt = Annotated[
    str | None,
    Field(
        description="Valid time: what was true in the world at this ISO-8601 time, e.g. "
        "2024-09-01T00:00:00Z (default: now). Ask about the past with a past time."
    ),
]
KnownAt = Annotated[
    str | None,
    Field(
        description="Transaction time: as the memory believed it at this ISO-8601 time "
        "(default: now); an earlier time shows what was believed before later corrections."
    ),
]
Limit = Annotated[int, Field(ge=1, le=5000, description="At most this many items.")]

_INSTRUCTIONS = (
    "Palimpsest: a bitemporal memory. Facts are subject-predicate-object with a valid "
    "time (when true in the world: valid_at) and a transaction time (when believed: "
    "known_at). Nothing is overwritten: newer beliefs cover older ones, retract "
    "withdraws from now on, erase is privacy deletion. The create_*/add_*/delete_*/"
    "read_graph/search_nodes/open_nodes tools behave like the MCP memory server's."
)


# --- results ----------------------------------------------------------------------------------
def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_dump(v) for v in value]
    return value


def _error(e: PalimpsestError) -> Result:
    return Result(
        f"error [{e.code}]: {e.message}",
        {"error": {"code": e.code, "message": e.message}},
        is_error=True,
    )


def _bounded(items: Sequence[Any], limit: int) -> tuple[list[Any], int]:
    return _dump(list(items[:limit])), max(0, len(items) - limit)


def _since_always(value: str | None) -> Any:
    """A valid_from argument: omitted -> the reference time; "always" -> unbounded."""
    from ..engine.rows import UNSET

    if value is None:
        return UNSET
    return None if value.strip().casefold() == "always" else value


# --- the server -------------------------------------------------------------------------------
def build_server(mem: Memory) -> Tools:
    """The tools (not yet served) acting on `mem`, one call at a time."""
    server = Tools(describe=described)
    lock = threading.Lock()  # one call at a time: the engine wants one writer

    def call(fn: Callable[[], Result]) -> Result:
        with lock:
            try:
                return fn()
            except PalimpsestError as e:
                return _error(e)

    # --- engine verbs --------------------------------------------------------------------------
    @server.tool()
    def remember(
        text: str,
        speaker: str = "user",
        author_kind: Literal["user", "agent", "tool", "document", "third_party"] | None = None,
        occurred_at: Time = None,
        session: str | None = None,
        source: str | None = None,
    ) -> Result:
        """Store one memory as it arrived (a conversation turn, a document passage) and the
        facts read from it. Idempotent: the same episode twice is one episode. Facts from
        non-user authors are quarantined until corroborated."""
        return call(
            lambda: _ok(
                _dump(
                    mem.remember(
                        text,
                        speaker=speaker,
                        author_kind=author_kind,
                        occurred_at=occurred_at,
                        session=session,
                        source=source,
                    )
                )
            )
        )

    @server.tool()
    def assert_fact(
        subject: str,
        predicate: str,
        object: str,
        valid_from: Annotated[
            str | None,
            Field(
                description="Start of validity (ISO-8601); omitted: occurred_at or now; "
                "'always': since always."
            ),
        ] = None,
        valid_to: Time = None,
        confidence: Annotated[float, Field(ge=0, le=1)] = 1.0,
        author_kind: Literal["user", "agent", "tool", "document", "third_party"] = "user",
        evidence: list[str] | None = None,
        occurred_at: Time = None,
    ) -> Result:
        """Record that subject-predicate-object holds over [valid_from, valid_to). A newer
        belief covers an older one without deleting it. Returns the fact; its `id` is what
        retract and erase take."""
        return call(
            lambda: _ok(
                _dump(
                    mem.assert_fact(
                        subject,
                        predicate,
                        object,
                        valid_from=_since_always(valid_from),
                        valid_to=valid_to,
                        confidence=confidence,
                        author_kind=author_kind,
                        evidence=evidence or (),
                        occurred_at=occurred_at,
                    )
                )
            )
        )

    @server.tool()
    def end_fact(
        subject: str,
        predicate: str,
        object: str | None = None,
        at: Annotated[
            str | None, Field(description="When it stopped holding (default: now).")
        ] = None,
    ) -> Result:
        """Record "no longer": what holds at `at` stops holding from then. For a one-valued
        predicate, leave `object` out to end whatever holds. `applied` says whether anything
        ended."""

        def run() -> Result:
            from ..engine.rows import UNSET

            return _ok(
                _dump(mem.end_fact(subject, predicate, object, at=UNSET if at is None else at))
            )

        return call(run)

    @server.tool()
    def retract(fact_id: str, reason: str | None = None) -> Result:
        """Withdraw an assertion from now on (a correction). Views known before now still
        see it and history keeps it; use erase for privacy deletion."""
        return call(lambda: _ok(_dump(mem.retract(fact_id, reason=reason))))

    @server.tool()
    def erase(id: str, reason: str | None = None) -> Result:
        """Privacy deletion of a fact (by its id) or an episode: gone from every view at every
        known-at time; only a content-free tombstone remains. Cannot be undone."""
        return call(lambda: _ok({"tombstones": _dump(mem.erase(id, reason=reason))}))

    @server.tool()
    def facts(
        subject: str | None = None,
        predicate: str | None = None,
        object: str | None = None,
        valid_at: ValidAt = None,
        known_at: KnownAt = None,
        include_quarantined: bool = False,
        limit: Limit = 100,
    ) -> Result:
        """What was true at valid_at, as believed at known_at (both default to now), filtered
        by subject, predicate and object."""

        def run() -> Result:
            found = mem.facts(
                subject,
                predicate,
                object,
                valid_at=valid_at,
                known_at=known_at,
                include_quarantined=include_quarantined,
                limit=limit + 1,
            )
            shown, left = _bounded(found, limit)
            return _ok({"facts": shown, "truncated": left > 0})

        return call(run)

    @server.tool()
    def history(subject: str, predicate: str | None = None, limit: Limit = 200) -> Result:
        """Every version ever believed about the subject (and predicate): current, ended,
        superseded, retracted, and tombstones of erased facts, with both time windows."""

        def run() -> Result:
            shown, left = _bounded(mem.history(subject, predicate), limit)
            return _ok({"facts": shown, "omitted": left})

        return call(run)

    @server.tool()
    def entity(name: str, valid_at: ValidAt = None, known_at: KnownAt = None) -> Result:
        """An entity's profile as of (valid_at, known_at): facts about it and facts pointing
        at it."""
        return call(lambda: _ok(_dump(mem.entity(name, valid_at=valid_at, known_at=known_at))))

    @server.tool()
    def snapshot(
        valid_at: ValidAt = None,
        known_at: KnownAt = None,
        entities: Annotated[
            list[str] | None, Field(description="Only facts about these subjects.")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=5000, description="At most this many facts.")] = 200,
    ) -> Result:
        """The world model believed at known_at for valid_at: every fact, grouped by subject;
        bounded, with the number of facts left out."""

        def run() -> Result:
            snap = mem.snapshot(valid_at=valid_at, known_at=known_at, entities=entities)
            data = snap.model_dump(mode="json", exclude={"entities"})
            groups, room = [], limit
            for g in snap.entities:
                if room <= 0:
                    break
                groups.append({**g.model_dump(mode="json"), "facts": _dump(g.facts[:room])})
                room -= len(g.facts)
            total = len(snap.facts)
            data.update(entities=groups, total_facts=total, omitted_facts=max(0, total - limit))
            return _ok(data)

        return call(run)

    @server.tool()
    def changes(
        since: Annotated[str, Field(description="Start of the period (ISO-8601).")],
        until: Annotated[str | None, Field(description="End of the period (default: now).")] = None,
        known_at: KnownAt = None,
        limit: Annotated[
            int, Field(ge=1, le=5000, description="At most this many per list.")
        ] = 100,
    ) -> Result:
        """What started or ended (valid time) and was learned or revised (transaction time)
        in [since, until)."""

        def run() -> Result:
            c = mem.changes(since, until, known_at=known_at)
            data = c.model_dump(mode="json", include={"since", "until", "known_at"})
            omitted = {}
            for part in ("started", "ended", "learned", "revised"):
                data[part], omitted[part] = _bounded(getattr(c, part), limit)
            data["omitted"] = omitted
            return _ok(data)

        return call(run)

    @server.tool()
    def recall(
        query: str,
        k: Annotated[int, Field(ge=1, le=100)] = 5,
        valid_at: ValidAt = None,
        known_at: KnownAt = None,
        min_score: Annotated[
            float | None, Field(description="Relevance floor 0..1 (default 0.26).")
        ] = None,
        diversity: Annotated[
            float | None,
            Field(ge=0.0, le=1.0, description="Near-duplicate demotion 0..1 (default 0.8)."),
        ] = None,
    ) -> Result:
        """The k memories (episodes, facts) most relevant to the query, with provenance; an
        empty list when nothing is relevant enough (abstention beats guessing)."""
        ask = partial(mem.recall, query, k=k, valid_at=valid_at, known_at=known_at)
        return call(lambda: _ok({"hits": _dump(ask(min_score=min_score, diversity=diversity))}))

    @server.tool()
    def consolidate(dry_run: bool = False) -> Result:
        """The nightly job: promote corroborated quarantined facts, reject contradicted ones;
        every change with its reason. dry_run shows without changing."""
        return call(lambda: _ok(_dump(mem.consolidate(dry_run=dry_run))))

    memory_tools.register(server, mem, call)
    return server


def serve(
    path: str | Path,
    *,
    namespace: str = "default",
    models: bool = True,
    share: bool = True,
    start: bool = True,
    idle_timeout: float | None = None,
) -> None:
    """Serve the memory over stdio until the client hangs up: through its owner process
    (`palimpsest.owner`; started if none runs and `start`), or, with `share` off or no
    owner to reach, opened in this process.

    >>> serve("palimpsest-data", models=False)   # no spaCy, no MiniLM: words-only recall
    """
    from .. import __version__

    if not isinstance(models, bool):
        raise ValidationError("models: true or false", field="models")
    mem = _Opening(path, namespace, models, share=share, start=start, idle=idle_timeout)
    try:
        run_stdio(
            build_server(cast("Memory", mem)),
            name="palimpsest",
            version=__version__,
            instructions=_INSTRUCTIONS,
        )
    finally:
        mem.close()


class _Opening:
    """The memory, reached on a thread of its own from the start (its owner, maybe
    started now, or opened here), so the host's `initialize` and `tools/list` are
    answered meanwhile; the first tool call waits for it (and meets the error, if
    reaching it failed)."""

    def __init__(
        self,
        path: str | Path,
        namespace: str,
        models: bool,
        *,
        share: bool = True,
        start: bool = True,
        idle: float | None = None,
    ) -> None:
        self._mem: Memory | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._open,
            args=(path, namespace, models, share, start, idle),
            name="open-memory",
            daemon=True,
        )
        self._thread.start()

    def _open(
        self,
        path: str | Path,
        namespace: str,
        models: bool,
        share: bool,
        start: bool,
        idle: float | None,
    ) -> None:
        try:
            self._mem = _reach(path, namespace, models, share, start, idle)
        except BaseException as e:  # raised again by every use
            self._error = e

    def _opened(self) -> Memory:
        self._thread.join()
        if self._mem is None:
            assert self._error is not None
            raise self._error
        return self._mem

    def __getattr__(self, name: str) -> Any:
        return getattr(self._opened(), name)

    def close(self) -> None:
        self._thread.join()
        if self._mem is not None:
            self._mem.close()


def _reach(
    path: str | Path, namespace: str, models: bool, share: bool, start: bool, idle: float | None
) -> Memory:
    """The memory's owner (a thin front: this process loads no model), or the memory
    opened here when sharing is off or no owner answers and none may be started. A
    `postgresql://` URL is always opened here: the database serves every process."""
    from ..owner.client import is_database_url

    if share and not is_database_url(path):
        from ..errors import OwnerUnavailable
        from ..owner.client import DEFAULT_IDLE, OwnerClient

        try:
            client = OwnerClient(
                path,
                namespace=namespace,
                models=models,
                start=start,
                idle_timeout=DEFAULT_IDLE if idle is None else idle,
            )
        except OwnerUnavailable:
            if start:
                raise
        else:
            if models and not client.models:
                print(
                    f"palimpsest mcp: the owner of {str(path)!r} runs without models "
                    "(started with --no-models): remember stores no facts, recall matches "
                    "words only, until it stops",
                    file=sys.stderr,
                    flush=True,
                )
            return cast("Memory", client)
    from ..graph import quiet_module_probes
    from ..memory import Memory

    quiet_module_probes()  # this process runs the queries itself
    if models:
        return Memory.open(path, namespace=namespace)
    return Memory.open(path, namespace=namespace, extractor=None, embedder=None)
