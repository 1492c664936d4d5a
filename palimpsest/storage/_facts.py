"""What a store keeps of names and facts: the seam's slices the bitemporal engine uses.

    >>> store.names.entity_ids_for_keys("default", ["mira"])      # {key: entity id}
    >>> store.slots.line_windows({line: LineAsk(slot, ns, subject, reach)})
    >>> store.facts.facts_asof(namespace="default", valid_at=v, known_at=k)

Each is a `Protocol`: the Kùzu store (`palimpsest.graph`) and any other backend
implement it, and the engine is typed against it. Rows are dicts shaped like
DESIGN.md's tables; the write path's rows are `storage.rows`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from .rows import FactWrite, History, LineAsk, LineWindow, Row, SlotHead


class Names(Protocol):
    """Predicates, entities and their name keys, episodes."""

    def predicates(self, namespace: str) -> list[Row]: ...

    def upsert_predicate(self, namespace: str, row: dict[str, Any]) -> None: ...

    def entity_id_for_key(self, namespace: str, key: str) -> str | None: ...

    def entity_keys(self, namespace: str) -> dict[str, str]:
        """Every name and alias key of the namespace -> its entity id (one Arrow scan)."""
        ...

    def entity_key_count(self, namespace: str) -> int: ...

    def entity_names(self, namespace: str) -> dict[str, str]:
        """Every entity of the namespace: id -> display name (one Arrow scan)."""
        ...

    def search_entity_keys(self, namespace: str, text: str, limit: int) -> list[Row]:
        """Entities whose name or alias key contains the folded `text`: (entity id, best
        key), those whose key starts with it first, then by key length (a dashboard's
        search box).
        """
        ...

    def entity(self, entity_id: str) -> Row | None: ...

    def entities(self, namespace: str) -> list[Row]: ...

    def create_entities(self, rows: Sequence[dict[str, Any]]) -> None:
        """New entities with their name key; rows carry the `ENTITY_COLUMNS`."""
        ...

    def entity_ids_for_keys(self, namespace: str, keys: Sequence[str]) -> dict[str, str]:
        """Many name keys at once: {key: entity id} for those that exist."""
        ...

    def entities_by_ids(self, ids: Sequence[str]) -> list[Row]: ...

    def add_entity_keys(self, keys: Iterable[tuple[str, str, str]]) -> None:
        """Name or alias keys pointing at an entity (namespace, key, entity id)."""
        ...

    def delete_orphan_entities(self, namespace: str, keep: Sequence[str]) -> list[str]:
        """Remove entities no fact or assertion refers to any more (after an erase)."""
        ...

    def episode(self, episode_id: str) -> Row | None: ...

    def episodes_by_id(self, ids: Sequence[str]) -> dict[str, Row]:
        """Stored episodes among ``ids`` (one lookup per batch, not per episode)."""
        ...

    def create_episodes(self, rows: Sequence[dict[str, Any]]) -> None: ...

    def delete_episode(self, episode_id: str) -> None: ...

    def episodes(self, namespace: str, limit: int, offset: int = 0) -> list[Row]: ...


class Slots(Protocol):
    """Slots' histories and lines, assertions, versions: the write path."""

    def slot_heads(self, slot_ids: Sequence[str]) -> dict[str, SlotHead]:
        """The stored slots among `slot_ids`, with their journal tails."""
        ...

    def histories(self, slot_ids: Sequence[str]) -> dict[str, History]:
        """(slot row, its log in recording order, every version) of each stored slot: the
        journal's pages and tail folded back (`graph/_journal.py`).
        """
        ...

    def versions_at(
        self, slot_id: str, *, valid_at: datetime | None, known_at: datetime
    ) -> list[Row]:
        """The slot's versions believed at `known_at` and covering `valid_at` (None: any),
        quarantined ones included: a point query as of any moment."""
        ...

    def versions_at_each(
        self, slot_ids: Sequence[str], *, valid_at: datetime | None, known_at: datetime
    ) -> dict[str, list[Row]]:
        """`versions_at` of many slots in one read: {slot id: its versions} for the
        stored slots among `slot_ids` that have any."""
        ...

    def line_windows(self, asks: Mapping[str, LineAsk]) -> dict[str, LineWindow]:
        """Per line id: its slot and the reach a write needs (None: the whole line)."""
        ...

    def assertion(self, assertion_id: str) -> Row | None: ...

    def assertions_by_id(self, ids: Sequence[str]) -> dict[str, Row]: ...

    def quarantined_claims(self, namespace: str) -> list[Row]:
        """Quarantined assertions still standing (not retracted): consolidation's input."""
        ...

    def assertions_citing(self, namespace: str, episode_id: str) -> list[Row]: ...

    def slots_of_predicate(self, namespace: str, predicate: str) -> list[str]: ...

    def slot_version_ids(self, slot_id: str) -> list[str]:
        """Every stored version of the slot, read from the Fact rows themselves (an
        erase must miss none): one hop from the subject, whose id the slot id holds.
        """
        ...

    def write_facts(self, w: FactWrite, *, heads: Mapping[str, SlotHead] | None = None) -> None:
        """Store what a write did: its nodes, each touched slot's journal events, each
        edited line's pages. `heads`: the stored slots' heads as read (else read now).
        """
        ...

    def create_assertions(self, rows: Sequence[dict[str, Any]]) -> None: ...

    def retract_assertion(self, assertion_id: str, at: datetime, reason: str | None) -> None: ...

    def set_assertion_evidence(self, assertion_id: str, evidence: list[str]) -> None: ...

    def delete_assertion(self, assertion_id: str) -> None: ...

    def create_versions(self, rows: Sequence[dict[str, Any]]) -> None: ...

    def expire_versions(self, version_ids: Sequence[str], at: datetime) -> None: ...

    def delete_versions(self, version_ids: Sequence[str]) -> None: ...

    def write_histories(self, histories: Sequence[History], *, replace: bool) -> None:
        """Slots with their whole histories written afresh (restore, erase): (slot row,
        log, versions) each, journalled; `replace` deletes the slots' journals first.
        """
        ...


class Facts(Protocol):
    """Fact versions as of (valid time, known time), tombstones, counts."""

    def facts_asof(
        self,
        *,
        namespace: str,
        valid_at: datetime | None,
        known_at: datetime | None,
        slot_id: str | None = None,
        subject_id: str | None = None,
        object_id: str | None = None,
        predicate: str | None = None,
        include_quarantined: bool = False,
        limit: int | None = None,
        explain: bool = False,
    ) -> list[Row]:
        """Versions believed at `known_at` (and valid at `valid_at`, unless it is None);
        with `known_at` None, every version ever recorded (recall filters a cached copy).
        """
        ...

    def changed_versions(
        self, namespace: str, field: str, since: datetime, until: datetime
    ) -> list[Row]:
        """Versions whose `field` (a fixed column name) falls in [since, until)."""
        ...

    def entity_slots(self, entity_id: str, *, incoming: bool, limit: int) -> list[str]:
        """Slots with a version (believed or not) whose subject (or, `incoming`, object)
        is the entity, at most `limit`, in id order: its facts are then read from the
        packed slots, one primary-key seek each, not from the `Fact` rows (a wide row
        read costs ~6x a one-column one at 10^5 facts).
        """
        ...

    def create_tombstone(self, row: dict[str, Any]) -> None: ...

    def tombstone(self, tomb_id: str) -> Row | None: ...

    def slot_tombstones(self, slot_id: str) -> list[Row]:
        """The slot's tombstones, found by their `slot_id` (a scan of the tombstones: only
        erasures leave them, and only `history` asks).
        """
        ...

    def counts(self, namespace: str) -> dict[str, int]: ...

    def version_count(self, namespace: str) -> int: ...

    def namespaces(self) -> list[str]: ...
