"""Request bodies and the few response envelopes the engine's models do not cover.

Responses reuse `palimpsest.models` (Fact, Episode, Snapshot, ...). Times in
requests are ISO-8601 strings with a timezone, passed to the engine as they
came, so a naive time is refused by the engine with code `naive_datetime`
(not by a generic validator). Limits on sizes are the engine's (`too_large`),
plus a cap on batch lengths here.
"""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ..models import AuthorKind, Cardinality, ObjectKind

T = TypeVar("T")

MAX_BATCH = 1000

Time = Annotated[
    str,
    Field(
        description="ISO-8601 time with a timezone, e.g. 2024-06-01T00:00:00Z.",
        examples=["2024-06-01T00:00:00Z"],
        json_schema_extra={"format": "date-time"},
        max_length=64,
    ),
]


# What the engine checks (with its own codes), stated in the schema too, so a client
# generated from it sends nothing it will refuse: a name has a character that is not a
# space and none of the control characters the engine refuses (tabs and line breaks
# become spaces); a predicate folds to snake_case (letters, digits, _; 64 at most).
_CTRL = "\\x00-\\x08\\x0e-\\x1b\\x7f-\\x84\\x86-\\x9f"
NAME_SHAPE: dict[str, Any] = {"pattern": f"^[^{_CTRL}]*[^\\s{_CTRL}][^{_CTRL}]*$"}
PREDICATE_SHAPE: dict[str, Any] = {"pattern": "^\\s*[A-Za-z][A-Za-z0-9_'\\s-]{0,63}$"}
TEXT_SHAPE: dict[str, Any] = {"pattern": "\\S"}
Name = Annotated[str, Field(json_schema_extra={"minLength": 1, **NAME_SHAPE})]
PredicateName = Annotated[str, Field(json_schema_extra={"minLength": 1, **PREDICATE_SHAPE})]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RememberRequest(_Body):
    text: str = Field(
        description="What was said or read.", json_schema_extra={"minLength": 1, **TEXT_SHAPE}
    )
    speaker: str = "user"
    author_kind: AuthorKind | None = Field(
        None, description="Default: user for the user, else third_party."
    )
    occurred_at: Time | None = Field(None, description="When it was said (default: now).")
    session: str | None = None
    source: str | None = None
    reply_to: str | None = None
    importance: float | None = Field(None, ge=0.0, le=1.0)
    addressee: Name | None = Field(None, description='Who "you" is in the text.')

    def kwargs(self) -> dict[str, Any]:
        return self.model_dump()


class RememberBatch(_Body):
    items: list[RememberRequest] = Field(description=f"At most {MAX_BATCH} episodes.")


class AssertRequest(_Body):
    subject: Annotated[Name, Field(examples=["user"])]
    predicate: Annotated[PredicateName, Field(examples=["lives_in"])]
    object: Annotated[Name, Field(examples=["Sydney"])]
    valid_from: Time | None = Field(
        None,
        description="Start of validity. Left out: the statement's time (occurred_at, else "
        "now). null: since always.",
    )
    valid_to: Time | None = Field(None, description="End of validity (exclusive); null: open.")
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
    items: list[AssertRequest] = Field(description=f"At most {MAX_BATCH} assertions.")


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
    reason: str | None = None


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
