"""What every consolidation step shares: its store slice and how reasons are kept.

>>> self._cs.watermark("default")
"""

from __future__ import annotations

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
