"""The `/v1` reads a person exploring a memory needs (the dashboard at `/ui/` uses them).

    GET /v1/access                      who is asking: namespaces, write rights
    GET /v1/entities:search?q=mi        entities by name or alias
    GET /v1/timeline?subject=user       every version as believed at known_at, with moments
    GET /v1/facts/{id}/explanation      a version's assertion, evidence, what replaced it
    GET /v1/neighbourhood?entity=Mira   the believed graph around an entity, bounded
    GET /v1/recall:explain?query=...    recall's answer, or its abstention and near misses

Each is one facade verb (`find_entities`, `timeline`, `explain`, `neighbourhood`)
or a composition of them (`recall:explain` asks `recall` again at `min_score=0`
only when it abstained, which counts no use: see `Memory.recall`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Request
from pydantic import BaseModel, Field

from ..models import Entity, Explanation, Hit, Neighbourhood, Timeline
from .routes import NAME_QUERY, KnownAt, PredicateQuery, Subject, ValidAt
from .security import STATE_TOKEN, Reader
from .shapes import QUERY_SHAPE, check_name, enforced

router = APIRouter(prefix="/v1")

NEAR_MISSES = 3


class CallerAccess(BaseModel):
    """What the caller may do: the dashboard shows only what this allows."""

    auth: Literal["loopback", "tokens"]
    token_id: str | None = None
    namespace: str = Field(description="The namespace used when a request names none.")
    namespaces: list[str] = Field(description="The namespaces the caller may read.")
    any_namespace: bool = Field(description="The token allows every namespace (`*`).")
    can_write: bool


class RecallExplanation(BaseModel):
    """Recall's answer with its reasons: the floor, and when it abstained, what fell short."""

    floor: float = Field(description="The relevance floor the answer had to reach.")
    abstained: bool = Field(description="Nothing reached the floor: no hits.")
    hits: list[Hit]
    best_score: float | None = Field(
        None, description="When it abstained: the best score it saw (below the floor)."
    )
    near_misses: list[Hit] = Field(
        default_factory=list, description="When it abstained: the best candidates, unreturned."
    )


@router.get("/access", response_model=CallerAccess, tags=["server"])
def access(request: Request, caller: Reader) -> CallerAccess:
    """The caller's namespaces and rights (a token's, or loopback's: everything)."""
    server = request.app.state.palimpsest
    record = request.scope.get("state", {}).get(STATE_TOKEN)
    held = caller.memory.namespaces()
    if record is None:
        return CallerAccess(
            auth="loopback",
            namespace=caller.namespace,
            namespaces=sorted({*held, server.default_namespace, caller.namespace}),
            any_namespace=True,
            can_write=True,
        )
    anywhere = "*" in record.namespaces
    named = [n for n in record.namespaces if n != "*"]
    return CallerAccess(
        auth="tokens",
        token_id=record.id,
        namespace=caller.namespace,
        namespaces=sorted({*named, *(held if anywhere else ()), caller.namespace}),
        any_namespace=anywhere,
        can_write=record.can_write,
    )


@router.get("/entities:search", response_model=list[Entity], tags=["entities"])
def search_entities(
    caller: Reader,
    q: Annotated[
        str,
        Query(**NAME_QUERY, min_length=1, description="Part of a name."),
        enforced(check_name, "q"),
    ],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[Entity]:
    """Entities whose name or an alias contains `q` (case-insensitive), prefixes first."""
    return caller.memory.find_entities(q, limit=limit, namespace=caller.namespace)


@router.get("/timeline", response_model=Timeline, tags=["facts"])
def timeline(
    caller: Reader,
    subject: Subject,
    predicate: PredicateQuery = None,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
) -> Timeline:
    """Every version of the subject's facts recorded by `known_at`, with its status then."""
    return caller.memory.timeline(
        subject, predicate, valid_at=valid_at, known_at=known_at, namespace=caller.namespace
    )


@router.get("/facts/{fact_id}/explanation", response_model=Explanation, tags=["facts"])
def explanation(
    fact_id: Annotated[str, Path(max_length=200)],
    caller: Reader,
    version_id: Annotated[str | None, Query(max_length=200)] = None,
) -> Explanation:
    """Why a version is believed: its assertion, its evidence, what superseded it."""
    return caller.memory.explain(fact_id, version_id=version_id, namespace=caller.namespace)


@router.get("/neighbourhood", response_model=Neighbourhood, tags=["world model"])
def neighbourhood(
    caller: Reader,
    entity: Annotated[
        str, Query(**NAME_QUERY, description="The centre."), enforced(check_name, "entity")
    ],
    hops: Annotated[int, Query(ge=1, le=2)] = 1,
    limit: Annotated[int, Query(ge=1, le=500, description="Most nodes returned.")] = 50,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
) -> Neighbourhood:
    """The snapshot within one or two hops of an entity, at most `limit` nodes."""
    return caller.memory.neighbourhood(
        entity,
        hops=hops,
        limit=limit,
        valid_at=valid_at,
        known_at=known_at,
        namespace=caller.namespace,
    )


@router.get("/recall:explain", response_model=RecallExplanation, tags=["recall"])
def recall_explain(
    caller: Reader,
    query: Annotated[str, Query(min_length=1, max_length=4000, json_schema_extra=QUERY_SHAPE)],
    k: Annotated[int, Query(ge=1, le=100)] = 5,
    valid_at: ValidAt = None,
    known_at: KnownAt = None,
    min_score: Annotated[float | None, Query(ge=0.0, le=1.0)] = None,
) -> RecallExplanation:
    """Recall's hits with their channels and provenance; if it abstained, the best it saw."""
    from ..recall.ranking import RankParams

    mem, ns = caller.memory, caller.namespace
    floor = RankParams().floor if min_score is None else min_score
    hits = mem.recall(
        query, k=k, valid_at=valid_at, known_at=known_at, min_score=min_score, namespace=ns
    )
    if hits:
        return RecallExplanation(floor=floor, abstained=False, hits=hits)
    near = mem.recall(
        query, k=NEAR_MISSES, valid_at=valid_at, known_at=known_at, min_score=0.0, namespace=ns
    )
    return RecallExplanation(
        floor=floor,
        abstained=True,
        hits=[],
        best_score=max((h.score for h in near), default=None),
        near_misses=near,
    )
