"""The `/v1` review resources: quarantine, a person's promote / reject, merges and unmerge.

    GET  /v1/quarantine                   standing quarantined claims, why each waits
    POST /v1/facts/{id}:promote           {"reason": "..."} -> the new trusted assertion
    POST /v1/facts/{id}:reject            {"reason": "..."} -> the retracted claim
    GET  /v1/merges                       consolidation's entity merges
    POST /v1/merges/{id}:unmerge          undo one (by new assertions)

Writes need a token with write rights (`Writer`); every decision keeps its reason
(see `Memory.promote`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from ..consolidation.review import MAX_PAGE
from ..models import ConsolidationChange, Fact, QuarantinedFact
from .routes import Limit, Offset
from .schemas import Page
from .security import Reader, Writer
from .shapes import NOT_BLANK, IdempotencyKey

router = APIRouter(prefix="/v1")

FactId = Annotated[str, Path(max_length=200)]


class Merge(BaseModel):
    """An entity merge consolidation made; `POST /v1/merges/{id}:unmerge` undoes it."""

    id: str
    namespace: str
    winner: str
    winner_id: str
    loser: str
    loser_id: str
    keys: list[str] = Field(default_factory=list, description="The names moved to the winner.")
    moved: int = Field(0, description="Assertions copied onto the winner.")
    reason: str = ""
    merged_at: datetime
    unmerged_at: datetime | None = None


class ReviewRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: str = Field(
        description="Why: kept with the decision (not blank).",
        min_length=1,
        max_length=2000,
        json_schema_extra=NOT_BLANK,
    )


@router.get("/quarantine", response_model=Page[QuarantinedFact], tags=["review"])
def quarantine(caller: Reader, limit: Limit = 50, offset: Offset = 0) -> dict[str, Any]:
    """Quarantined claims still standing, newest first: why each waits, its evidence."""

    def page(n: int, at: int) -> list[Any]:
        return caller.memory.quarantined(limit=n, offset=at, namespace=caller.namespace)

    # one more than asked tells whether there is a next page; at the engine's page bound,
    # a second look of one item does
    items = page(min(limit + 1, MAX_PAGE), offset)
    more = len(items) > limit or (len(items) == limit == MAX_PAGE and bool(page(1, offset + limit)))
    return {
        "items": items[:limit],
        "limit": limit,
        "offset": offset,
        "next_offset": offset + limit if more else None,
    }


@router.post("/facts/{fact_id}:promote", response_model=Fact, status_code=201, tags=["review"])
def promote(
    fact_id: FactId, body: ReviewRequest, caller: Writer, key: IdempotencyKey = None
) -> Fact:
    """Promote a quarantined claim: a new trusted assertion; the claim is retracted."""
    return caller.memory.promote(
        fact_id, reason=body.reason, namespace=caller.namespace, idempotency_key=key
    )


@router.post("/facts/{fact_id}:reject", response_model=Fact, tags=["review"])
def reject(
    fact_id: FactId, body: ReviewRequest, caller: Writer, key: IdempotencyKey = None
) -> Fact:
    """Reject a quarantined claim: it is retracted with the reason."""
    return caller.memory.reject(
        fact_id, reason=body.reason, namespace=caller.namespace, idempotency_key=key
    )


@router.get("/merges", response_model=list[Merge], tags=["review"])
def merges(caller: Reader) -> list[Merge]:
    """The entity merges consolidation made, oldest first."""
    return [
        Merge(
            id=m["id"],
            namespace=caller.namespace,
            winner=m["winner_name"],
            winner_id=m["winner"],
            loser=m["loser_name"],
            loser_id=m["loser"],
            keys=list(m["keys"] or []),
            moved=len(m["moved"] or []),
            reason=m["reason"] or "",
            merged_at=m["merged_at"],
            unmerged_at=m["unmerged_at"],
        )
        for m in caller.memory.merges(namespace=caller.namespace)
    ]


@router.post("/merges/{merge_id}:unmerge", response_model=ConsolidationChange, tags=["review"])
def unmerge(merge_id: FactId, caller: Writer) -> ConsolidationChange:
    """Undo a merge by new assertions; 409 `conflict` names later work resting on it."""
    return caller.memory.unmerge(merge_id, namespace=caller.namespace)
