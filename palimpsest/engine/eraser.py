"""Privacy erasure: content leaves every view now and every file on close.

    >>> eraser.erase("default", episode.id, reason="user asked")   # -> [Tombstone, ...]

An erase deletes the assertion (or the episode, with the assertions resting on
it alone), leaves a content-free tombstone, rebuilds each touched slot's whole
version history from what remains (each past view with the cardinality its
predicate had then: `Vocabulary.schedule`), deletes the vectors and use records
of what went, and tells every cache to drop its copies (`Events.erased`,
`Events.names_changed`). The database file is rewritten when the memory closes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import _names as names
from ..errors import AlreadyErased, NotFound, ValidationError
from ..models import Tombstone
from ..storage import FactWrite
from .context import Context
from .entities import EntityIndex
from .events import EmbedNotes, Events
from .materialise import Materialiser, SlotState
from .rows import slot_row, statement_key
from .uses import UseLog
from .vocabulary import Vocabulary


class Eraser:
    """`erase`: facts and episodes out of every view, tombstones in."""

    def __init__(
        self,
        ctx: Context,
        vocab: Vocabulary,
        entities: EntityIndex,
        materialiser: Materialiser,
        *,
        uses: UseLog,
        embed: EmbedNotes,
        events: Events,
    ) -> None:
        self._ctx = ctx
        self._vocab = vocab
        self._entities = entities
        self._mat = materialiser
        self._uses = uses
        self._embed = embed
        self._events = events

    def erase(self, ns: str, id: str, *, reason: str | None = None) -> list[Tombstone]:
        """Privacy deletion of a fact (assertion) or an episode, at every known-at time.

        The content leaves every query now and leaves the files when the memory
        is closed (the database file is rewritten); content-free tombstones
        (id, when, why) remain. An episode's erasure also erases the assertions
        that rest on it alone.
        """
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        if not isinstance(id, str) or not id:
            raise ValidationError("id: a non-empty string", field="id")
        ctx, store = self._ctx, self._ctx.store
        with ctx.lock:
            assertion = store.slots.assertion(id)
            episode = None if assertion else store.names.episode(id)
            owner = assertion or episode
            if owner is None or owner["namespace"] != ns:
                tomb = store.facts.tombstone(id)
                if tomb is not None and tomb["namespace"] == ns:
                    raise AlreadyErased(f"{id} was already erased", id=id)
                raise NotFound(f"nothing with id {id[:80]!r}", id=id[:80])
            store.request_compaction()
            self._embed.forget()  # queued text may be what goes now: the backfill redoes the rest
            saved = ctx.saved()
            try:
                with store.write(ns):
                    k = ctx.tick()
                    tombs = self._erase(ns, assertion, episode, k, why)
            except BaseException:
                ctx.restore(saved)
                raise
            finally:
                self._events.names_changed()
            return tombs

    def _erase(
        self,
        ns: str,
        assertion: dict[str, Any] | None,
        episode: dict[str, Any] | None,
        k: datetime,
        why: str | None,
    ) -> list[Tombstone]:
        store = self._ctx.store
        doomed: list[dict[str, Any]] = []
        rewrite: dict[str, list[str]] = {}  # assertion id -> evidence without the episode
        tombs: list[Tombstone] = []
        if assertion is not None:
            doomed.append(assertion)
        if episode is not None:
            for a in store.slots.assertions_citing(ns, episode["id"]):
                rest = [e for e in a["evidence"] if e != episode["id"]]
                if rest:
                    rewrite[a["id"]] = rest
                else:
                    doomed.append(a)
            store.names.delete_episode(episode["id"])
            self._uses.drop([episode["id"]])
            tombs.append(
                Tombstone(id=episode["id"], kind="episode", erased_at=k, reason=why, namespace=ns)
            )
            store.facts.create_tombstone({**tombs[-1].model_dump(), "slot_id": None})
        slots = {a["slot_id"] for a in doomed}
        said = {self._statement_key(a) for a in doomed if a["op"] == "assert"}
        for aid, rest in rewrite.items():
            store.slots.set_assertion_evidence(aid, rest)
            slot = store.slots.assertion(aid)
            if slot is not None:
                slots.add(slot["slot_id"])
        for a in doomed:
            store.slots.delete_assertion(a["id"])
            tomb = Tombstone(id=a["id"], kind="fact", erased_at=k, reason=why, namespace=ns)
            store.facts.create_tombstone({**tomb.model_dump(), "slot_id": a["slot_id"]})
            tombs.append(tomb)
        shown: set[str] = set()
        for slot in sorted(slots):
            shown |= self._rebuild_slot(ns, slot, k)
        # vectors derived from erased content: a statement no version shows any more
        # (its slot is the only place one could), and the names of entities now gone
        es = store.embeddings
        es.delete_statements(sorted(said - shown))
        es.delete_names(store.names.delete_orphan_entities(ns, keep=self._speaker_ids(ns)))
        # recall's copies: statement vectors, and the erased episodes' search rows
        self._events.erased(ns, [episode["id"]] if episode is not None else [])
        return tombs

    def _speaker_ids(self, ns: str) -> list[str]:
        user = self._entities.entity(ns, "user", field="speaker")
        return [user.id] if user else []

    def _statement_key(self, a: dict[str, Any]) -> str:
        _, subject_id, predicate = a["slot_id"].split("\x1f")
        name_of = self._entities.name_of
        return statement_key(
            a["namespace"], name_of(subject_id), predicate, name_of(a["object_id"])
        )

    def _rebuild_slot(self, ns: str, slot: str, k: datetime) -> set[str]:
        """Rewrite a slot's whole version history from its log, each past view with the
        cardinality its predicate had then, and its journal and lines with it (so no
        page keeps the erased content); the statement keys its versions show."""
        store = self._ctx.store
        store.slots.delete_versions(store.slots.slot_version_ids(slot))
        found = store.slots.histories([slot]).get(slot)
        ids = [] if found is None else [a["id"] for a in found[1]]
        current = store.slots.assertions_by_id(ids)  # erased ones are gone, evidence rewritten
        log_rows = [current[i] for i in ids if i in current]
        rows = self._mat.versions_from_log(log_rows, self._vocab.schedule(ns, slot))
        store.slots.create_versions(rows)
        _, subject_id, predicate = slot.split("\x1f")
        row = slot_row(ns, subject_id, predicate, self._entities.name_of(subject_id))
        store.slots.write_histories([(row, log_rows, rows)], replace=True)
        state = SlotState(row, log_rows, rows, new=False)
        cards = {slot: self._vocab.cardinality(ns, slot)}
        store.slots.write_facts(
            FactWrite(at=k, lines=self._mat.line_edits({slot: state}, cards, k))
        )
        return {statement_key(ns, r["subject"], r["predicate"], r["object"]) for r in rows}
