"""What steps share: the tools of the writing steps, reasons kept, copies of assertions.

>>> tools = Tools(ctx, cs, writer, entities, Decisions(ctx, cs))
>>> tools.decisions.note("default", fact.id, "promote", "two independent sources")
>>> copy_of(row, {loser_id: winner_id}, origin="merge", name_of=entities.name_of)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...engine.context import Context
from ...engine.entities import EntityIndex
from ...engine.writer import Writer
from ...storage import Consolidation


class Decisions:
    """The reasons kept with what consolidation wrote."""

    def __init__(self, ctx: Context, cs: Consolidation) -> None:
        self._ctx = ctx
        self._cs = cs

    def note(self, ns: str, assertion_id: str, step: str, reason: str) -> None:
        """Keep why consolidation wrote an assertion (inside the caller's transaction)."""
        self._cs.record_decisions(
            [
                {
                    "id": assertion_id,
                    "namespace": ns,
                    "step": step,
                    "reason": reason[:2000],
                    "recorded_at": self._ctx.last_k or self._ctx.now(),
                }
            ]
        )


@dataclass(frozen=True)
class Tools:
    """What every step that writes assertions (merge, unmerge, reconcile, promote) uses."""

    ctx: Context
    cs: Consolidation
    writer: Writer
    entities: EntityIndex
    decisions: Decisions


def copy_of(
    a: dict[str, Any], mapping: dict[str, str], *, origin: str, name_of: Callable[[str], str]
) -> dict[str, Any]:
    """An assertion row as an `assert_many` item, its entities renamed by `mapping`."""
    _, subject_id, predicate = a["slot_id"].split("\x1f")
    obj = a["object_id"]
    return {
        "op": a["op"],
        "subject": name_of(mapping.get(subject_id, subject_id)),
        "predicate": predicate,
        "object": None if obj is None else name_of(mapping.get(obj, obj)),
        "valid_from": a["valid_from"],
        "valid_to": a["valid_to"],
        "reference": None,
        "confidence": float(a["confidence"]),
        "author_kind": a["author_kind"],
        "evidence": list(a["evidence"] or []),
        "quarantined": bool(a["quarantined"]),
        "origin": origin,
    }
