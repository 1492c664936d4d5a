"""The `/v1` resources: one thin endpoint per facade verb.

Endpoints are plain `def`: `Memory` calls block, so FastAPI runs them in its
threadpool (the facade serialises writes itself). Every endpoint but health
takes `namespace` (see `security`); writes need a token with write rights.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import JSONResponse

from ..errors import TooLarge
from ..models import (
    Changes,
    ConsolidationReport,
    Entity,
    EntityProfile,
    Episode,
    Fact,
    Hit,
    Predicate,
    Snapshot,
    Stats,
    Tombstone,
)
from .schemas import (
    MAX_BATCH,
    AssertBatch,
    AssertRequest,
    ConsolidationStatus,
    EndRequest,
    Health,
    NodeLinkGraph,
    Page,
    PredicateRequest,
    RememberBatch,
    RememberRequest,
    RetractRequest,
)
from .security import Reader, Writer
from .shapes import (
    QUERY_SHAPE,
    SHAPES,
    IdempotencyKey,
    check_name,
    check_predicate,
    check_time,
    enforced,
)

router = APIRouter(prefix="/v1")

MAX_LIMIT = 1000
MAX_OFFSET = 1_000_000

ValidAt = Annotated[
    str | None,
    Query(
        description="What was true at this time (RFC 3339 with a timezone; default now).",
        json_schema_extra=SHAPES[check_time],
    ),
    enforced(check_time, "valid_at"),
]
KnownAt = Annotated[
    str | None,
    Query(
        description="As the memory believed it at this time (default now).",
        json_schema_extra=SHAPES[check_time],
    ),
    enforced(check_time, "known_at"),
]
NAME_QUERY: dict[str, Any] = {"max_length": 512, "json_schema_extra": SHAPES[check_name]}
Subject = Annotated[str, Query(**NAME_QUERY), enforced(check_name, "subject")]
ObjectName = Annotated[str | None, Query(**NAME_QUERY), enforced(check_name, "object")]
PredicateQuery = Annotated[
    str | None,
    Query(max_length=64, json_schema_extra=SHAPES[check_predicate]),
    enforced(check_predicate, "predicate"),
]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Page size.")]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Items to skip.")]


def _check_batch(n: int) -> None:
    if n > MAX_BATCH:
        raise TooLarge(f"items: {n} in one batch, more than {MAX_BATCH}", field="items")


def _page(items: list[Any], limit: int, offset: int, *, more: bool) -> dict[str, Any]:
    return {
        "items": items,
        "limit": limit,
        "offset": offset,
        "next_offset": offset + limit if more else None,
    }


# --- health and stats ----------------------------------------------------------------------------
@router.get("/health", response_model=Health, tags=["server"])
def health(request: Request) -> Health:
    """Readiness: the server is up, its memory is open and its store answers (one look
    at its changes: 503 `store_unavailable` while a PostgreSQL database does not).
    Needs no token."""
    from .. import __version__

    server = request.app.state.palimpsest
    server.memory().now()  # 503 `closed` when the memory is not open
    sched = server.consolidator
    return Health(
        version=__version__,
        auth="loopback" if server.tokens is None else "tokens",
        consolidation=None if sched is None else ConsolidationStatus(**sched.status()),
    )


@router.get("/stats", response_model=Stats, tags=["server"])
def stats(access: Reader) -> Stats:
    """Counts of what the namespace holds."""
    return access.memory.stats(namespace=access.namespace)


# --- episodes ------------------------------------------------------------------------------------
@router.post("/episodes", response_model=Episode, status_code=201, tags=["episodes"])
def remember(body: RememberRequest, access: Writer, key: IdempotencyKey = None) -> Episode:
    """Store one memory as it arrived, and the facts read from it (idempotent)."""
    return access.memory.remember(
        **body.model_dump(), namespace=access.namespace, idempotency_key=key
    )


@router.post("/episodes:batch", response_model=list[Episode], status_code=201, tags=["episodes"])
def remember_many(body: RememberBatch, access: Writer, key: IdempotencyKey = None) -> list[Episode]:
    """Many episodes in one transaction."""
    _check_batch(len(body.items))
    return access.memory.remember_many(
        [i.model_dump() for i in body.items], namespace=access.namespace, idempotency_key=key
    )


@router.get("/episodes/{episode_id}", response_model=Episode, tags=["episodes"])
def episode(episode_id: Annotated[str, Path(max_length=200)], access: Reader) -> Episode:
    """One stored episode."""
    return access.memory.episode(episode_id, namespace=access.namespace)


# --- facts: writes -------------------------------------------------------------------------------
@router.post("/facts", response_model=Fact, status_code=201, tags=["facts"])
def assert_fact(body: AssertRequest, access: Writer, key: IdempotencyKey = None) -> Fact:
    """Record that subject-predicate-object holds over [valid_from, valid_to)."""
    mem = access.memory
    return mem.assert_many([body.item()], namespace=access.namespace, idempotency_key=key)[0]


@router.post("/facts:batch", response_model=list[Fact], status_code=201, tags=["facts"])
def assert_many(body: AssertBatch, access: Writer, key: IdempotencyKey = None) -> list[Fact]:
    """Many assertions in one transaction."""
    _check_batch(len(body.items))
    return access.memory.assert_many(
        [i.item() for i in body.items], namespace=access.namespace, idempotency_key=key
    )


@router.post("/facts:end", response_model=Fact, status_code=201, tags=["facts"])
def end_fact(body: EndRequest, access: Writer, key: IdempotencyKey = None) -> Fact:
    """Record "no longer": what holds at `at` stops holding from then (`applied` says if)."""
    kwargs: dict[str, Any] = body.model_dump(exclude={"at"})
    if body.at is not None:
        kwargs["at"] = body.at
    return access.memory.end_fact(**kwargs, namespace=access.namespace, idempotency_key=key)


@router.post("/facts/{fact_id}:retract", response_model=Fact, tags=["facts"])
def retract(
    fact_id: Annotated[str, Path(max_length=200)],
    access: Writer,
    body: RetractRequest | None = None,
    key: IdempotencyKey = None,
) -> Fact:
    """Withdraw an assertion from now on; views known before now still see it."""
    reason = body.reason if body else None
    return access.memory.retract(
        fact_id, reason=reason, namespace=access.namespace, idempotency_key=key
    )


@router.delete("/items/{item_id}", response_model=list[Tombstone], tags=["facts", "episodes"])
def erase(
    item_id: Annotated[str, Path(max_length=200)],
    access: Writer,
    reason: Annotated[str | None, Query(max_length=2000)] = None,
    key: IdempotencyKey = None,
) -> list[Tombstone]:
    """Privacy erasure of a fact or an episode at every known-at time; returns tombstones."""
    return access.memory.erase(
        item_id, reason=reason, namespace=access.namespace, idempotency_key=key
    )


# --- facts: reads --------------------------------------------------------------------------------
@router.get("/facts", response_model=Page[Fact], tags=["facts"])
def facts(
    access: Reader,
    subject: Annotated[str | None, Query(**NAME_QUERY), enforced(check_name, "subject")] = None,
    predicate: PredicateQuery = None,
    object: ObjectName = None,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
    include_quarantined: bool = False,
    limit: Limit = 100,
    offset: Offset = 0,
) -> dict[str, Any]:
    """What was true at `valid_at`, as believed at `known_at` (both default to now)."""
    found = access.memory.facts(
        subject,
        predicate,
        object,
        valid_at=valid_at,
        known_at=known_at,
        include_quarantined=include_quarantined,
        limit=offset + limit + 1,
        namespace=access.namespace,
    )
    return _page(found[offset : offset + limit], limit, offset, more=len(found) > offset + limit)


@router.get("/history", response_model=list[Fact], tags=["facts"])
def history(
    access: Reader,
    subject: Subject,
    predicate: PredicateQuery = None,
) -> list[Fact]:
    """Every version ever believed for the subject (and predicate), with tombstones."""
    return access.memory.history(subject, predicate, namespace=access.namespace)


# --- entities ------------------------------------------------------------------------------------
@router.get("/entities", response_model=Page[Entity], tags=["entities"])
def entities(access: Reader, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    """Every entity of the namespace, by normalised name."""
    every = access.memory.entities(namespace=access.namespace)
    return _page(every[offset : offset + limit], limit, offset, more=len(every) > offset + limit)


@router.get("/entities/{name:path}", response_model=EntityProfile, tags=["entities"])
def entity(
    name: Annotated[
        str,
        Path(max_length=512, json_schema_extra=SHAPES[check_name]),
        enforced(check_name, "name"),
    ],
    access: Reader,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
) -> EntityProfile:
    """An entity's profile: facts about it and facts pointing at it, as of (V, K)."""
    return access.memory.entity(
        name, valid_at=valid_at, known_at=known_at, namespace=access.namespace
    )


# --- predicates ----------------------------------------------------------------------------------
@router.get("/predicates", response_model=list[Predicate], tags=["predicates"])
def predicates(access: Reader) -> list[Predicate]:
    """The vocabulary in force."""
    return access.memory.predicates(namespace=access.namespace)


@router.put("/predicates/{name}", response_model=Predicate, tags=["predicates"])
def define_predicate(
    name: Annotated[
        str,
        Path(max_length=64, json_schema_extra=SHAPES[check_predicate]),
        enforced(check_predicate, "name"),
    ],
    body: PredicateRequest,
    access: Writer,
    key: IdempotencyKey = None,
) -> Predicate:
    """Add a predicate or override one (a cardinality change re-reads its facts)."""
    return access.memory.define_predicate(
        name,
        body.cardinality,
        aliases=body.aliases,
        inverse=body.inverse,
        object_kind=body.object_kind,
        namespace=access.namespace,
        idempotency_key=key,
    )


# --- world model ---------------------------------------------------------------------------------
def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat().replace("+00:00", "Z")
    if isinstance(value, dict):
        return {k: _iso(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_iso(v) for v in value]
    return value


def node_link(snap: Snapshot) -> dict[str, Any]:
    """networkx node-link JSON of the snapshot graph, times as ISO-8601 strings."""
    from networkx.readwrite import json_graph

    g = snap.to_networkx()
    try:
        data: dict[str, Any] = json_graph.node_link_data(g, edges="edges")
    except TypeError:  # pragma: no cover - networkx < 3.4 has no `edges=`
        data = json_graph.node_link_data(g)
    out: dict[str, Any] = _iso(data)
    return out


@router.get(
    "/snapshot",
    response_model=Snapshot | NodeLinkGraph,
    tags=["world model"],
    responses={200: {"description": "A Snapshot, or with format=node-link a networkx graph."}},
)
def snapshot(
    access: Reader,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
    entity: Annotated[
        list[Annotated[str, enforced(check_name, "entity")]] | None,
        Query(
            description="Only these subjects (repeatable).",
            max_length=200,
            json_schema_extra={"items": {"type": "string", **SHAPES[check_name]}},
        ),
    ] = None,
    format: Annotated[
        Literal["json", "node-link"], Query(description="node-link: networkx JSON graph.")
    ] = "json",
) -> Snapshot | JSONResponse:
    """The world model: every believed fact valid at V as known at K, grouped by subject."""
    snap = access.memory.snapshot(
        valid_at=valid_at, known_at=known_at, entities=entity, namespace=access.namespace
    )
    if format == "node-link":
        return JSONResponse(node_link(snap))
    return snap


@router.get("/changes", response_model=Changes, tags=["world model"])
def changes(
    access: Reader,
    since: Annotated[
        str,
        Query(description="Start (inclusive).", json_schema_extra=SHAPES[check_time]),
        enforced(check_time, "since"),
    ],
    until: Annotated[
        str | None,
        Query(
            description="End (exclusive; default now). It must not come before `since` "
            "(`invalid_window` otherwise); equal to `since`, the window is empty.",
            json_schema_extra=SHAPES[check_time],
        ),
        enforced(check_time, "until"),
    ] = None,
    known_at: KnownAt = None,
) -> Changes:
    """What started, ended, was learned or was revised in [since, until)."""
    return access.memory.changes(since, until, known_at=known_at, namespace=access.namespace)


# --- recall --------------------------------------------------------------------------------------
@router.get("/recall", response_model=list[Hit], tags=["recall"])
def recall(
    access: Reader,
    query: Annotated[
        str,
        Query(
            min_length=1,
            max_length=4000,
            description="What to look for.",
            json_schema_extra=QUERY_SHAPE,
        ),
    ],
    k: Annotated[int, Query(ge=1, le=100, description="How many hits at most.")] = 5,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
    min_score: Annotated[
        float | None, Query(ge=0.0, le=1.0, description="Relevance floor (default: engine's).")
    ] = None,
    diversity: Annotated[
        float | None,
        Query(ge=0.0, le=1.0, description="Demotion of near-duplicates (default 0.8; 0: off)."),
    ] = None,
) -> list[Hit]:
    """Memories by meaning and words, as of (V, K); an empty list when nothing fits."""
    return access.memory.recall(
        query,
        k=k,
        valid_at=valid_at,
        known_at=known_at,
        min_score=min_score,
        diversity=diversity,
        namespace=access.namespace,
    )


# --- consolidation -------------------------------------------------------------------------------
@router.post("/consolidation", response_model=ConsolidationReport, tags=["consolidation"])
def consolidate(
    access: Writer,
    dry_run: Annotated[bool, Query(description="Show what would change; change nothing.")] = False,
    full: Annotated[bool, Query(description="Ignore the watermark; look at everything.")] = False,
) -> ConsolidationReport:
    """Run the nightly consolidation now over the namespace; every change with its reason."""
    return access.memory.consolidate(dry_run=dry_run, full=full, namespace=access.namespace)


@router.get(
    "/consolidation/reports", response_model=Page[ConsolidationReport], tags=["consolidation"]
)
def consolidation_reports(access: Reader, limit: Limit = 50, offset: Offset = 0) -> dict[str, Any]:
    """Earlier runs' reports in the namespace, newest first."""
    reports = access.memory.consolidation_reports(namespace=access.namespace)[::-1]
    items = reports[offset : offset + limit]
    return _page(items, limit, offset, more=len(reports) > offset + limit)
