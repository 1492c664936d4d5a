"""What a store keeps of its own history: consolidation's records, definitions, exports.

    >>> store.consolidation.contests("default")
    >>> store.predicate_log.history("default", "lives_in")
    >>> store.transfer.stream("assertion", "default")      # an export, row by row

Protocols of the storage seam (see `storage/_facts.py`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from .rows import Row


class Consolidation(Protocol):
    """What the nightly run reads and records."""

    def keep_report(
        self, namespace: str, finished_at: datetime, data: dict[str, Any], text: str
    ) -> None:
        """Keep a run's report (JSON-ready `data`, and its human summary `text`), whole or
        not at all, before the run's watermark commits."""
        ...

    def reports(self, namespace: str) -> list[dict[str, Any]]:
        """The namespace's kept reports, oldest first."""
        ...

    def watermark(self, namespace: str) -> datetime | None: ...

    def set_watermark(self, namespace: str, at: datetime) -> None: ...

    def changed_slots(self, namespace: str, since: datetime | None) -> set[str]:
        """Slots with an assertion recorded or retracted at or after `since` (all: None)."""
        ...

    def conflicting_slots(self, namespace: str) -> set[str]:
        """Slots where standing assertions with one start name different objects."""
        ...

    def new_episode_count(self, namespace: str, since: datetime | None) -> int: ...

    def new_entity_count(self, namespace: str, since: datetime | None) -> int: ...

    def episode_digest(self, namespace: str) -> list[Row]:
        """What dedupe compares: every live episode's speaker, fingerprint, length."""
        ...

    def duplicates(self, namespace: str) -> dict[str, str]:
        """Duplicate episode id -> the episode kept in its place."""
        ...

    def record_duplicates(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id, namespace, canonical, similarity, recorded_at; also archives each copy."""
        ...

    def archive(self, episode_ids: Sequence[str]) -> None: ...

    def cold_candidates(self, namespace: str, *, below: float, before: datetime) -> list[Row]:
        """Live episodes of low importance recorded before `before`."""
        ...

    def ended_between(
        self, namespace: str, lo: datetime | None, hi: datetime, *, limit: int
    ) -> tuple[int, list[Row]]:
        """Believed, active versions whose window closed in [lo, hi): how many, and the
        `limit` most recent of them.
        """
        ...

    def keys_of(self, entity_id: str) -> list[str]:
        """The name and alias keys (namespace  key) pointing at an entity."""
        ...

    def touching(self, namespace: str, entity_ids: Sequence[str]) -> list[Row]:
        """Standing assertions with one of these entities as subject or object
        (three scans, however many entities).
        """
        ...

    def entity_rows(self, namespace: str) -> list[Row]:
        """What merging compares of every entity (id, name, key, type, aliases, created_at)."""
        ...

    def relation_facts(self, namespace: str, subject_id: str) -> list[Row]:
        """Believed facts of a subject (for "my sister" -> the sibling it names)."""
        ...

    def set_aliases(self, entity_id: str, aliases: list[str]) -> None: ...

    def create_merge(self, row: dict[str, Any]) -> None: ...

    def merge(self, merge_id: str) -> Row | None: ...

    def merges(self, namespace: str) -> list[Row]: ...

    def set_unmerged(self, merge_id: str, at: datetime) -> None: ...

    def contests(self, namespace: str) -> list[Row]: ...

    def create_contest(self, row: dict[str, Any]) -> None: ...

    def resolve_contest(self, contest_id: str, at: datetime) -> None: ...

    def record_decisions(self, rows: Sequence[dict[str, Any]]) -> None:
        """rows: id (the assertion written), namespace, step, reason, recorded_at."""
        ...

    def decisions_since(self, namespace: str, since: datetime, steps: Sequence[str]) -> list[Row]:
        """Assertions consolidation wrote at or after `since` by these steps (id, step)."""
        ...

    def decided_by(self, namespace: str, step: str, reason: str) -> list[str]:
        """Assertions a step wrote with exactly this reason (an unmerge's restorations)."""
        ...

    def decision(self, assertion_id: str) -> Row | None: ...


class Keys(Protocol):
    """Idempotency keys: the first outcome of a keyed write, kept with it."""

    def get(self, namespace: str, key: str) -> Row | None:
        """{key, verb, fingerprint, outcome, recorded_at} of a stored key, or None."""
        ...

    def put(self, row: Mapping[str, Any]) -> None:
        """Store a key (namespace, key, verb, fingerprint, outcome, recorded_at) inside the
        write transaction that did the work: both commit, or neither."""
        ...


class Leases(Protocol):
    """Who consolidates a namespace on a night: a lease that expires unless renewed."""

    def claim(self, namespace: str, night: str, holder: str, now: datetime, until: datetime) -> str:
        """'claimed' (the caller holds it until `until`), 'held' (another holder's lease
        runs at `now`) or 'done' (the night's run finished). Inside a write transaction."""
        ...

    def renew(self, namespace: str, night: str, holder: str, until: datetime) -> bool:
        """Extend the caller's lease; False when it is no longer the caller's."""
        ...

    def finish(self, namespace: str, night: str, holder: str, at: datetime) -> bool:
        """Mark the night done; False when the lease is no longer the caller's."""
        ...


class PredicateLog(Protocol):
    """Each change of a predicate's definition."""

    def record(
        self, namespace: str, row: Mapping[str, Any], *, previous: str | None, at: datetime
    ) -> None:
        """One change of `row` (a Predicate's fields) at transaction time `at`; call it
        inside the write transaction that stores the definition.
        """
        ...

    def history(self, namespace: str, name: str) -> list[Row]:
        """A predicate's changes, oldest first (ties in recording order)."""
        ...

    def latest(self) -> datetime | None:
        """The latest change time stored (a transaction time like any other)."""
        ...


class Transfer(Protocol):
    """Whole namespaces out and back in, losslessly."""

    def predicates(self, namespace: str) -> list[Row]: ...

    def entities(self, namespace: str) -> list[Row]: ...

    def entity_keys(self, namespace: str) -> list[Row]:
        """Name and alias keys of the namespace: {key, entity_id}."""
        ...

    def episodes(self, namespace: str) -> list[Row]: ...

    def slots(self, namespace: str) -> list[Row]: ...

    def assertions(self, namespace: str) -> list[Row]:
        """The log, in recording order."""
        ...

    def versions(self, namespace: str) -> list[Row]: ...

    def tombstones(self, namespace: str) -> list[Row]: ...

    def namespaces(self) -> list[str]:
        """Every namespace holding a row of its own (a predicate definition counts)."""
        ...

    def count(self, kind: str, namespace: str) -> int:
        """How many rows `stream(kind, namespace)` yields."""
        ...

    def stream(self, kind: str, namespace: str) -> Iterator[Row]:
        """Every row of `kind` (an export record kind, or an aux table) in the namespace,
        in a stable order, one at a time.
        """
        ...

    def aux_columns(self) -> dict[str, dict[str, str]]:
        """{table: {column: Kùzu type}} of the auxiliary tables this store has."""
        ...

    def aux_rows(self, table: str, namespace: str) -> list[Row]: ...

    def occupied(self, namespace: str) -> dict[str, int]:
        """How many rows of each kind the namespace holds (slots and keys included)."""
        ...

    def existing_ids(self, table: str, ids: Sequence[str]) -> set[str]:
        """Those of `ids` already used as primary keys of `table` (any namespace)."""
        ...

    def restore_entities(self, rows: Sequence[dict[str, Any]], keys: Sequence[Row]) -> None:
        """Entities exactly as given, and their name and alias keys: {id, entity_id}."""
        ...

    def restore_episodes(self, rows: Sequence[dict[str, Any]]) -> None: ...

    def restore_aux(
        self, table: str, columns: dict[str, str], rows: Sequence[dict[str, Any]]
    ) -> None:
        """Rows of an auxiliary table, typed by `columns` ({name: Kùzu type})."""
        ...


class Pages(Protocol):
    """The believed graph as of a moment, a page at a time."""

    def entities(
        self,
        *,
        needle: str,
        type_predicate: str,
        value_predicates: Sequence[str],
        kinds: tuple[str, str],
        offset: int,
        limit: int,
    ) -> tuple[list[Row], int, int]:
        """(a page of {id, name, kind, degree}, entities in all, relation ends in all),
        best connected first; `needle` ('' for all) filters on name, type and own facts.
        """
        ...

    def believed(self) -> tuple[list[Row], list[Row]]:
        """(every fact believed as of K and not quarantined, valid at K or not: {s, sn, p,
        o, obj, vf, vt, at, aid}; the entities they name: {id, name, key}), two reads.
        """
        ...

    def own(self, entity_id: str, predicate: str, limit: int) -> list[str]:
        """Objects of one entity's `predicate` facts, in recording order (at most `limit`)."""
        ...

    def ids(self, keys: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{name key: (entity id, display name)} for the keys (`_names.entity_key`) that
        name an entity.
        """
        ...

    def mentioned(self, entity_ids: Sequence[str]) -> set[str]:
        """The entities a believed fact is about, or points at with a predicate not `own`."""
        ...

    def own_lists(
        self, entity_ids: Sequence[str], predicate: str, limit: int
    ) -> dict[str, list[str]]:
        """Like `own`, for many entities in one read: {entity id: objects}, each list cut
        at `limit`.
        """
        ...

    def own_first(self, entity_ids: Sequence[str], predicate: str) -> dict[str, str]:
        """Each entity's object of a one-valued `predicate` (its type), where it has one."""
        ...

    def own_counts(self, entity_ids: Sequence[str], predicate: str) -> dict[str, int]: ...

    def relations(self, entity_ids: Sequence[str], limit: int) -> tuple[list[Row], int]:
        """(at most `limit` relations touching the entities, those inside first; how many)."""
        ...
