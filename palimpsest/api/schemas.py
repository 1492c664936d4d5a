"""Request bodies and the few response envelopes the engine's models do not cover.

Responses reuse `palimpsest.models` (Fact, Episode, Snapshot, ...). Times in
requests are RFC 3339 strings with a timezone, names and predicates have the
shapes in `shapes`: both stated in the schema and checked here with the
engine's codes (a naive time is `naive_datetime`). Limits on sizes are the
engine's (`too_large`), plus a cap on batch lengths here. One rule no JSON
Schema can state is in the field descriptions: a window ends after it starts.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from .. import _names as names
from ..models import AuthorKind, Cardinality, ObjectKind
from .shapes import (
    SHAPES,
    check_name,
    check_plain,
    check_predicate,
    check_text,
    check_time,
    enforced,
)

T = TypeVar("T")

MAX_BATCH = 1000
# stated here, enforced by the route (`too_large`, the engine's code for every bound)
BATCH_SHAPE: dict[str, Any] = {"maxItems": MAX_BATCH}

# Each shape is stated in the schema and enforced here (`shapes`), so a client generated
# from the document sends nothing the server refuses, and the server refuses what it forbids.
Time = Annotated[
    str,
    Field(
        description="RFC 3339 time with a timezone, e.g. 2024-06-01T00:00:00Z.",
        examples=["2024-06-01T00:00:00Z"],
        json_schema_extra=SHAPES[check_time],
    ),
    enforced(check_time),
]
# an end, with an example after Time's (a window ends after it starts)
EndTime = Annotated[Time, Field(examples=["2025-01-01T00:00:00Z"])]
Name = Annotated[str, Field(json_schema_extra=SHAPES[check_name]), enforced(check_name)]
PredicateName = Annotated[
    str, Field(json_schema_extra=SHAPES[check_predicate]), enforced(check_predicate)
]
Label = Annotated[str, Field(json_schema_extra=SHAPES[check_plain]), enforced(check_plain)]


class _Body(BaseModel):
    # strict: JSON `false` is not the number 0, nor "1" a number
    model_config = ConfigDict(extra="forbid", strict=True)


class RememberRequest(_Body):
    text: Annotated[str, enforced(check_text)] = Field(
        description="What was said or read.", json_schema_extra=SHAPES[check_text]
    )
    speaker: Name = "user"
    author_kind: AuthorKind | None = Field(
        None, description="Default: user for the user, else third_party."
    )
    occurred_at: Time | None = Field(None, description="When it was said (default: now).")
    session: Label | None = None
    source: Label | None = None
    reply_to: Label | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    addressee: Name | None = Field(None, description='Who "you" is in the text.')

    def kwargs(self) -> dict[str, Any]:
        return self.model_dump()


class RememberBatch(_Body):
    items: list[RememberRequest] = Field(
        description=f"At most {MAX_BATCH} episodes.", json_schema_extra=BATCH_SHAPE
    )


class AssertRequest(_Body):
    subject: Annotated[Name, Field(examples=["user"])]
    predicate: Annotated[PredicateName, Field(examples=["lives_in"])]
    object: Annotated[Name, Field(examples=["Sydney"])]
    valid_from: Time | None = Field(
        None,
        description="Start of validity. Left out: the statement's time (occurred_at, else "
        "now). null: since always.",
    )
    valid_to: EndTime | None = Field(
        None,
        description="End of validity (exclusive); null: open. It must come after the start "
        "(valid_from, else occurred_at, else now): `invalid_window` otherwise.",
    )
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    author_kind: AuthorKind = "user"
    evidence: list[str] = Field(default_factory=list, description="Supporting episode ids.")
    quarantined: bool | None = Field(
        None, description="Default: quarantined unless the author is the user."
    )
    occurred_at: Time | None = None

    def item(self) -> dict[str, Any]:
        """The `assert_many` item: `valid_from` only when it was sent (null means always)."""
        data = self.model_dump()
        if "valid_from" not in self.model_fields_set:
            del data["valid_from"]
        return data


class AssertBatch(_Body):
    items: list[AssertRequest] = Field(
        description=f"At most {MAX_BATCH} assertions.", json_schema_extra=BATCH_SHAPE
    )


class EndRequest(_Body):
    subject: Name
    predicate: PredicateName
    object: Name | None = Field(
        None, description="What no longer holds; for a one-valued predicate, null ends any."
    )
    at: Time | None = Field(None, description="When it stopped holding (default: now).")
    author_kind: AuthorKind = "user"
    evidence: list[str] = Field(default_factory=list)
    occurred_at: Time | None = None


class RetractRequest(_Body):
    reason: str | None = Field(None, max_length=names.MAX_REASON)


class PredicateRequest(_Body):
    cardinality: Cardinality = "many"
    aliases: list[Name] = Field(default_factory=list)
    inverse: PredicateName | None = None
    object_kind: ObjectKind = "entity"


class NodeLinkGraph(BaseModel):
    """`GET /v1/snapshot?format=node-link`: networkx node-link JSON (times as ISO-8601)."""

    directed: bool
    multigraph: bool
    graph: dict[str, Any]
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]] = Field(default_factory=list)


class Page(BaseModel, Generic[T]):
    """One page of a list; `next_offset` is null on the last page."""

    items: list[T]
    limit: int
    offset: int
    next_offset: int | None


class LastRun(BaseModel):
    started_at: str
    finished_at: str
    status: Literal["ok", "error"]
    code: str | None = Field(None, description="The error code when the run failed.")
    counts: dict[str, int] = Field(default_factory=dict, description="Changes by action.")


class ConsolidationStatus(BaseModel):
    """The server's nightly consolidation: when, and how the last run went."""

    at: str = Field(description="Time of day, HH:MM.")
    timezone: str
    next_run: str | None
    last_run: LastRun | None


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    version: str
    auth: Literal["loopback", "tokens"]
    consolidation: ConsolidationStatus | None = Field(
        None, description="Null when the server does not consolidate on a schedule."
    )
