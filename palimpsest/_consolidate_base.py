"""What every consolidation step shares: its store slice and how reasons are kept.

>>> self._cs.watermark("default")
"""

from __future__ import annotations

from typing import Any

from ._use import _Uses
from ._writes import _Writes
from .graph import ConsolidationStore


class _Base(_Writes, _Uses):
    _consolidation_store: ConsolidationStore

    @property
    def _cs(self) -> ConsolidationStore:
        cs: ConsolidationStore | None = getattr(self, "_consolidation_store", None)
        if cs is None or cs.db is not self._store.db:
            cs = self._consolidation_store = ConsolidationStore(self._store.db)
        return cs

    def _note_decision(self, ns: str, assertion_id: str, step: str, reason: str) -> None:
        """Keep why consolidation wrote an assertion (inside the caller's transaction)."""
        self._cs.record_decisions(
            [
                {
                    "id": assertion_id,
                    "namespace": ns,
                    "step": step,
                    "reason": reason[:2000],
                    "recorded_at": self._last_k or self.now(),
                }
            ]
        )

    def _step_hook(self, step: str) -> None:
        """Called between steps and between merges; a no-op (tests patch it to pause)."""

    def _copy_of(
        self, a: dict[str, Any], mapping: dict[str, str], *, origin: str
    ) -> dict[str, Any]:
        """An assertion row as an `assert_many` item, its entities renamed by `mapping`."""
        _, subject_id, predicate = a["slot_id"].split("\x1f")
        obj = a["object_id"]
        return {
            "op": a["op"],
            "subject": self._name_of(mapping.get(subject_id, subject_id)),
            "predicate": predicate,
            "object": None if obj is None else self._name_of(mapping.get(obj, obj)),
            "valid_from": a["valid_from"],
            "valid_to": a["valid_to"],
            "reference": None,
            "confidence": float(a["confidence"]),
            "author_kind": a["author_kind"],
            "evidence": list(a["evidence"] or []),
            "quarantined": bool(a["quarantined"]),
            "origin": origin,
        }
