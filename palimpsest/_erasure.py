"""Privacy erasure: content leaves every view now and every file on close.

>>> mem.erase(episode.id, reason="user asked")   # -> [Tombstone, ...]
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from . import _names as names
from ._core import _slot_row
from ._use import _Uses
from .errors import (
    AlreadyErased,
    NotFound,
    ValidationError,
)
from .graph import PredicateLog, encode
from .graph._embeddings import EmbeddingStore
from .models import (
    Tombstone,
)
from .recall._statements import statement_key
from .temporal import Schedule, schedule_of


class _Erasure(_Uses):
    _embed_forget: Callable[[], None]  # _EmbedWrites': queued vectors of what may go

    def erase(
        self, id: str, *, reason: str | None = None, namespace: str | None = None
    ) -> list[Tombstone]:
        """Privacy deletion of a fact (assertion) or an episode, at every known-at time.

        The content leaves every query now and leaves the files when the memory
        is closed (the database file is rewritten); content-free tombstones
        (id, when, why) remain. An episode's erasure also erases the assertions
        that rest on it alone.
        """
        ns = self._ns(namespace)
        why = None if reason is None else names.check_text(reason, field="reason", limit=2000)
        if not isinstance(id, str) or not id:
            raise ValidationError("id: a non-empty string", field="id")
        with self._lock:
            assertion = self._store.assertion(id)
            episode = None if assertion else self._store.episode(id)
            owner = assertion or episode
            if owner is None or owner["namespace"] != ns:
                tomb = self._store.tombstone(id)
                if tomb is not None and tomb["namespace"] == ns:
                    raise AlreadyErased(f"{id} was already erased", id=id)
                raise NotFound(f"nothing with id {id[:80]!r}", id=id[:80])
            self._store.request_compaction()
            self._embed_forget()  # queued text may be what goes now: the backfill redoes the rest
            saved = (self._last_k, self._seq)
            try:
                with self._store.write():
                    k = self._tick()
                    tombs = self._erase(ns, assertion, episode, k, why)
            except BaseException:
                self._last_k, self._seq = saved
                raise
            finally:
                self._forget_cache()
            return tombs

    def _erase(
        self,
        ns: str,
        assertion: dict[str, Any] | None,
        episode: dict[str, Any] | None,
        k: datetime,
        why: str | None,
    ) -> list[Tombstone]:
        doomed: list[dict[str, Any]] = []
        rewrite: dict[str, list[str]] = {}  # assertion id -> evidence without the episode
        tombs: list[Tombstone] = []
        if assertion is not None:
            doomed.append(assertion)
        if episode is not None:
            for a in self._store.assertions_citing(ns, episode["id"]):
                rest = [e for e in a["evidence"] if e != episode["id"]]
                if rest:
                    rewrite[a["id"]] = rest
                else:
                    doomed.append(a)
            self._store.delete_episode(episode["id"])
            self._drop_uses([episode["id"]])
            tombs.append(
                Tombstone(id=episode["id"], kind="episode", erased_at=k, reason=why, namespace=ns)
            )
            self._store.create_tombstone({**tombs[-1].model_dump(), "slot_id": None})
        slots = {a["slot_id"] for a in doomed}
        said = {self._statement_key(a) for a in doomed if a["op"] == "assert"}
        for aid, rest in rewrite.items():
            self._store.set_assertion_evidence(aid, rest)
            slot = self._store.assertion(aid)
            if slot is not None:
                slots.add(slot["slot_id"])
        for a in doomed:
            self._store.delete_assertion(a["id"])
            tomb = Tombstone(id=a["id"], kind="fact", erased_at=k, reason=why, namespace=ns)
            self._store.create_tombstone({**tomb.model_dump(), "slot_id": a["slot_id"]})
            tombs.append(tomb)
        shown: set[str] = set()
        for slot in sorted(slots):
            shown |= self._rebuild_slot(ns, slot)
        # vectors derived from erased content: a statement no version shows any more
        # (its slot is the only place one could), and the names of entities now gone
        es = EmbeddingStore(self._store.db)
        es.delete_statements(sorted(said - shown))
        es.delete_names(self._store.delete_orphan_entities(ns, keep=self._speaker_ids(ns)))
        self.__dict__.pop("_recall_stmt_vecs", None)  # recall's copies of statement vectors
        if episode is not None:
            self._forget_episodes(ns, [episode["id"]])
        return tombs

    def _speaker_ids(self, ns: str) -> list[str]:
        user = self._entity(ns, "user", field="speaker")
        return [user.id] if user else []

    def _statement_key(self, a: dict[str, Any]) -> str:
        _, subject_id, predicate = a["slot_id"].split("\x1f")
        subject, obj = self._name_of(subject_id), self._name_of(a["object_id"])
        return statement_key(a["namespace"], subject, predicate, obj)

    def _rebuild_slot(self, ns: str, slot: str) -> set[str]:
        """Rewrite a slot's whole version history from its log (used by erase), each
        past view with the cardinality its predicate had then; the statement keys
        its versions show."""
        self._store.delete_versions(self._store.slot_version_ids(slot))
        log_rows = self._store.slot_log(slot)
        rows = self._versions_from_log(log_rows, self._schedule(ns, slot))
        self._store.create_versions(rows)
        log, versions = encode(log_rows, rows)
        _, subject_id, predicate = slot.split("\x1f")
        row = _slot_row(ns, subject_id, predicate, self._name_of(subject_id))
        self._store.save_slot_states([{**row, "log": log, "versions": versions}])
        return {statement_key(ns, r["subject"], r["predicate"], r["object"]) for r in rows}

    def _schedule(self, ns: str, slot: str) -> Schedule:
        """The slot's predicate's cardinality over transaction time: a rebuild replays
        each past view with the cardinality it was written with (see temporal.materialise)."""
        current = self._cardinality(ns, slot)
        changes = PredicateLog(self._store.db).history(ns, slot.split("\x1f")[2])
        return schedule_of(
            [(c["changed_at"], c["cardinality"], c["previous"]) for c in changes], current
        )
