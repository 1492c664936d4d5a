"""What reads need from consolidation: contested versions, and names as of a past moment.

    >>> asof = AsOf(ctx)
    >>> asof.contested(rows, known_at=k)                          # -> {version id, ...}
    >>> asof.entity("default", "my sister", "en_mira", known_at=k)  # -> entity id

A contest (written by the reconcile step) says that, from its `recorded_at`
until its `resolved_at`, the sources disagreed about a one-valued slot at one
valid time; a version of that slot believed then and covering that time reads
as `contested`. A merge re-points the loser's name keys at the winner at its
transaction time; a query known before then must still find the loser under
that name, so the name is resolved as of `known_at`. Contests and merges are few
and change only during consolidation, so they are kept in memory per namespace
(one scan, then none per read) until consolidation writes some (`forget`, on
`Events.consolidated`), here or perhaps in another process writing the same
store (`Context.foreign` moved).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from .. import _names as names
from ..storage import Consolidation
from .context import Context


class AsOf:
    """Contests and merge events per namespace, read once, dropped by `forget`."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._cs = ctx.store.consolidation
        self._cache: dict[tuple[str, str], Any] = {}
        self._foreign = ctx.foreign  # the other processes' writes the cache includes

    def _cached(self, kind: str, namespace: str) -> Any:
        if self._foreign != self._ctx.foreign:
            # another process wrote since: its consolidation may have merged or contested
            self._cache.clear()
            self._foreign = self._ctx.foreign
        found = self._cache.get((kind, namespace))
        if found is None:
            cs = self._cs
            found = cs.contests(namespace) if kind == "contests" else _key_events(cs, namespace)
            self._cache[(kind, namespace)] = found
        return found

    def forget(self) -> None:
        """Drop the cached contests and merges (after consolidation wrote some)."""
        self._cache.clear()

    def contested(self, rows: Iterable[Mapping[str, Any]], *, known_at: datetime) -> set[str]:
        """Ids of the given version rows that read as contested at `known_at`."""
        out: set[str] = set()
        by_ns: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for r in rows:
            ns = r["namespace"]
            slots = by_ns.get(ns)
            if slots is None:
                slots = by_ns[ns] = {}
                for c in self._cached("contests", ns):
                    slots.setdefault(c["slot_id"], []).append(c)
            for c in slots.get(r["slot_id"], ()):
                if c["recorded_at"] > known_at or (
                    c["resolved_at"] is not None and c["resolved_at"] <= known_at
                ):
                    continue
                at = c["valid_from"]
                if (r["valid_from"] is None or (at is not None and r["valid_from"] <= at)) and (
                    r["valid_to"] is None or at is None or at < r["valid_to"]
                ):
                    out.add(r["id"])
        return out

    def entity(self, namespace: str, name: object, entity_id: str, *, known_at: datetime) -> str:
        """The entity a name denoted at `known_at` (merges re-point names; the past stays)."""
        events = self._cached("merges", namespace)
        if not events:
            return entity_id
        evs: list[tuple[datetime, str, str]] | None = events.get(
            names.entity_key(names.clean_name(name))
        )
        if not evs or evs[-1][0] <= known_at:
            return entity_id  # no merge of this name after known_at: its pointer is current
        before = [e for e in evs if e[0] <= known_at]
        return before[-1][1] if before else evs[0][2]


def _key_events(cs: Consolidation, namespace: str) -> dict[str, list[tuple[Any, str, str]]]:
    """name key -> [(when, entity the key points at from then, before then)], in order."""
    events: dict[str, list[tuple[Any, str, str]]] = {}
    for m in cs.merges(namespace):
        for key in m["keys"] or []:
            events.setdefault(key, []).append((m["merged_at"], m["winner"], m["loser"]))
            if m["unmerged_at"] is not None:
                events[key].append((m["unmerged_at"], m["loser"], m["winner"]))
    for evs in events.values():
        evs.sort(key=lambda e: e[0])
    return events
