"""Pydantic models shared by every room. Pure data: no I/O, no engine logic.

    >>> Fact(id="a1", subject="user", predicate="lives_in", object="Sydney",
    ...      recorded_at="2024-07-02T10:00:00Z").object
    'Sydney'

Every datetime is aware UTC; naive ones are rejected at validation.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    import networkx as nx

Cardinality = Literal["one", "many"]
AuthorKind = Literal["user", "agent", "tool", "document", "third_party"]
EpisodeKind = Literal["fact", "opinion", "event", "social"]
ObjectKind = Literal["entity", "value"]
# current: believed, valid now or later; ended: believed, its window closed;
# superseded/retracted: no longer believed; erased: a content-free tombstone;
# quarantined: stored but kept out of facts and snapshots until promoted;
# contested: believed, but its sources disagree (consolidation could not decide).
FactStatus = Literal[
    "current", "ended", "superseded", "retracted", "erased", "quarantined", "contested"
]


def _aware(v: datetime) -> datetime:
    if v.tzinfo is None:
        raise ValueError("naive datetime: add a timezone")
    return v.astimezone(UTC)


UTCDatetime = Annotated[datetime, AfterValidator(_aware)]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Predicate(_Model):
    name: str
    cardinality: Cardinality = "many"
    aliases: list[str] = Field(default_factory=list)
    inverse: str | None = None
    object_kind: ObjectKind = "entity"
    origin: Literal["vocabulary", "user", "auto"] = "user"


class Entity(_Model):
    id: str
    name: str
    key: str
    type: str = "thing"
    aliases: list[str] = Field(default_factory=list)
    namespace: str = "default"
    created_at: UTCDatetime | None = None


class Fact(_Model):
    """One version of a subject-predicate-object statement, or an assertion record.

    `id` is the assertion's id: pass it to `retract` or `erase`. `version_id`
    names the materialised version (None on the record an `end_fact` returns).
    """

    id: str
    subject: str
    predicate: str
    object: str | None
    valid_from: UTCDatetime | None = None
    valid_to: UTCDatetime | None = None
    recorded_at: UTCDatetime
    expired_at: UTCDatetime | None = None
    status: FactStatus = "current"
    confidence: float = 1.0
    author_kind: AuthorKind = "user"
    evidence: list[str] = Field(default_factory=list)
    quarantined: bool = False
    namespace: str = "default"
    version_id: str | None = None
    subject_id: str | None = None
    object_id: str | None = None
    op: Literal["assert", "end"] = "assert"
    applied: bool | None = None  # for an end: did it end anything when recorded
    reason: str | None = None  # retraction or erasure reason

    @property
    def statement(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"


class Episode(_Model):
    id: str
    text: str
    speaker: str = "user"
    author_kind: AuthorKind = "user"
    source: str | None = None
    session: str | None = None
    reply_to: str | None = None
    namespace: str = "default"
    occurred_at: UTCDatetime
    recorded_at: UTCDatetime
    fingerprint: str
    importance: float = 0.55
    kind: EpisodeKind = "fact"
    quarantined: bool = False
    archived: bool = False
    facts: list[Fact] = Field(default_factory=list)


HitKind = Literal["episode", "fact", "entity"]


class Hit(_Model):
    """One recall result, with its provenance and how each channel scored it.

    >>> Hit(kind="episode", text="I moved to Sydney.", score=0.71, episode_id="ep_1").kind
    'episode'

    `score` is calibrated 0..1 relevance (the same floor means the same thing for
    every query); `channels` holds the per-channel scores behind it. Quarantined
    content carries `warning`: recallable, but not believed.
    """

    kind: HitKind
    text: str
    score: float
    channels: dict[str, float] = Field(default_factory=dict)
    episode_id: str | None = None
    source: str | None = None
    speaker: str | None = None
    author_kind: AuthorKind | None = None
    occurred_at: UTCDatetime | None = None
    recorded_at: UTCDatetime | None = None
    status: FactStatus = "current"
    quarantined: bool = False
    warning: str | None = None
    evidence: list[str] = Field(default_factory=list)
    valid_from: UTCDatetime | None = None
    valid_to: UTCDatetime | None = None
    fact_id: str | None = None


class Tombstone(_Model):
    id: str
    kind: Literal["fact", "episode"]
    erased_at: UTCDatetime
    reason: str | None = None
    namespace: str = "default"


class EntityProfile(_Model):
    entity: Entity
    valid_at: UTCDatetime
    known_at: UTCDatetime
    outgoing: list[Fact] = Field(default_factory=list)
    incoming: list[Fact] = Field(default_factory=list)


class EntityFacts(_Model):
    entity: str
    entity_id: str
    facts: list[Fact]


class Snapshot(_Model):
    """The world model believed at (valid_at, known_at), grouped by subject entity."""

    valid_at: UTCDatetime
    known_at: UTCDatetime
    namespace: str = "default"
    entities: list[EntityFacts] = Field(default_factory=list)
    # entity id -> its type (person, place, organization, ...), for every entity named
    types: dict[str, str] = Field(default_factory=dict)

    @property
    def facts(self) -> list[Fact]:
        return [f for group in self.entities for f in group.facts]

    def to_networkx(self) -> nx.MultiDiGraph:
        """Entities as nodes (keyed by id, with their name and type), facts as edges keyed
        by assertion id.

        >>> g = mem.snapshot().to_networkx(); g.nodes[caroline_id]["type"]
        'person'
        """
        import networkx as nx

        g = nx.MultiDiGraph(valid_at=self.valid_at, known_at=self.known_at)
        types = self.types
        for f in self.facts:
            g.add_node(f.subject_id, name=f.subject, type=types.get(f.subject_id or "", "thing"))
            g.add_node(f.object_id, name=f.object, type=types.get(f.object_id or "", "thing"))
            g.add_edge(
                f.subject_id,
                f.object_id,
                key=f.id,
                predicate=f.predicate,
                valid_from=f.valid_from,
                valid_to=f.valid_to,
                recorded_at=f.recorded_at,
                confidence=f.confidence,
            )
        return g


class Changes(_Model):
    """What started, ended, was learned or was revised between `since` and `until`."""

    since: UTCDatetime
    until: UTCDatetime
    known_at: UTCDatetime
    started: list[Fact] = Field(default_factory=list)  # valid_from in [since, until)
    ended: list[Fact] = Field(default_factory=list)  # valid_to in [since, until)
    learned: list[Fact] = Field(default_factory=list)  # recorded in [since, until)
    revised: list[Fact] = Field(default_factory=list)  # stopped being believed in [since, until)


class Stats(_Model):
    namespace: str
    episodes: int
    entities: int
    assertions: int
    versions: int
    tombstones: int
    predicates: int
    details: dict[str, Any] = Field(default_factory=dict)


class ConsolidationChange(_Model):
    """One thing a consolidation run changed (or, dry, would change), and why."""

    step: str  # "promote" | "reject" | ...
    action: str  # "promoted" | "confirmed" | "rejected"
    targets: list[str]  # assertion ids (quarantined claims, then the new assertion)
    reason: str


class ConsolidationReport(_Model):
    namespace: str
    started_at: UTCDatetime
    finished_at: UTCDatetime
    dry_run: bool = False
    changes: list[ConsolidationChange] = Field(default_factory=list)
    counts: dict[str, int] = Field(default_factory=dict)
    since: UTCDatetime | None = None  # the watermark: only what changed from then was read
    omitted: dict[str, int] = Field(default_factory=dict)  # counted, not listed (per action)

    @property
    def summary(self) -> str:
        if not self.counts:
            return "nothing to consolidate"
        # in the order the steps ran (dedupe, merge, reconcile, promote, expire, decay)
        return ", ".join(f"{n} {what}" for what, n in self.counts.items())


# --- the dashboard's views: timelines, explanations, neighbourhoods, review ------------------
class Timeline(_Model):
    """Every version of an entity's facts recorded by `known_at`, with its status then.

    >>> mem.timeline("user", "lives_in", known_at="2024-09-15T00:00:00Z").versions

    `moments` are the transaction times at which any of these versions began or
    stopped being believed (up to now): the stops of a known-at slider.
    """

    entity: Entity
    valid_at: UTCDatetime
    known_at: UTCDatetime
    versions: list[Fact] = Field(default_factory=list)
    moments: list[UTCDatetime] = Field(default_factory=list)


class AssertionRecord(_Model):
    """The assertion behind a version: who said it, how it was written, whether withdrawn."""

    id: str
    op: Literal["assert", "end"] = "assert"
    origin: str = "api"  # api | extraction | instruction | promotion | review | merge | ...
    recorded_at: UTCDatetime
    valid_from: UTCDatetime | None = None
    valid_to: UTCDatetime | None = None
    author_kind: AuthorKind = "user"
    confidence: float = 1.0
    quarantined: bool = False
    evidence: list[str] = Field(default_factory=list)
    retracted_at: UTCDatetime | None = None
    retract_reason: str | None = None
    decided_by: str | None = None  # the consolidation or review step that wrote it
    decision_reason: str | None = None


class Explanation(_Model):
    """Why a version is believed: its assertion, its evidence and what replaced it.

    >>> mem.explain(fact.id).evidence[0].text
    'I moved to Sydney.'
    """

    fact: Fact
    assertion: AssertionRecord
    evidence: list[Episode] = Field(default_factory=list)
    missing_evidence: list[str] = Field(default_factory=list)  # erased or never stored
    superseded_by: list[Fact] = Field(default_factory=list)


class GraphNode(_Model):
    id: str
    name: str
    hops: int  # 0 for the centre


class Neighbourhood(_Model):
    """The snapshot at (valid_at, known_at) within `hops` of an entity, at most `limit` nodes.

    >>> mem.neighbourhood("Mira", hops=2, limit=50).truncated
    False
    """

    center: Entity
    valid_at: UTCDatetime
    known_at: UTCDatetime
    hops: int
    limit: int
    nodes: list[GraphNode] = Field(default_factory=list)
    edges: list[Fact] = Field(default_factory=list)
    truncated: bool = False  # more facts lay within reach than the limits let in


class PageEntity(_Model):
    """An entity of a `GraphPage`: its type (the type predicate's object; "value" for
    an entity only ever a value object, "" when it has none) and notes, oldest first."""

    id: str
    name: str
    type: str = ""
    notes: list[str] = Field(default_factory=list)


class PageRelation(_Model):
    """A believed fact between two entities of a `GraphPage`, by their names."""

    source: str
    target: str
    predicate: str


class GraphPage(_Model):
    """A page of the graph believed now (`Memory.graph_page`, `Memory.graph_nodes`),
    with counts of what it left out.

    >>> page = mem.graph_page("cello", type_predicate="entity_type", note_predicate="observation")
    >>> [(e.name, e.type, e.notes) for e in page.entities]
    [('Mira', 'person', ['plays the cello'])]
    """

    entities: list[PageEntity] = Field(default_factory=list)
    relations: list[PageRelation] = Field(default_factory=list)
    omitted_entities: int = 0
    omitted_relations: int = 0
    omitted_notes: int = 0


class QuarantinedFact(_Model):
    """A quarantined claim waiting for review, why it waits and what the next run would do."""

    fact: Fact
    why: list[str] = Field(default_factory=list)
    pending: str | None = None  # the next consolidation's decision, if it would make one
    evidence: list[Episode] = Field(default_factory=list)
