"""Conflicting claims on a `one` predicate about the same valid time: who wins, and why.

    >>> outcome(group, evidence=ev)
    Outcome(winner='en_oslo', reason='2 independent sources against 1', contested=())

A group is every standing (not retracted, not quarantined) assertion of a
one-valued slot with the same `valid_from`, when they name different objects.
Each object is weighed by the trust of its best source (the user above everyone
else), then by independent evidence (distinct content fingerprints; replays and
copies share one, an API assertion without evidence counts once per author
kind), then, only among the user's own statements, by recency (a person
correcting themself). Anything still level is contested: kept visible as such,
never silently decided.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

TRUST = {"user": 3, "third_party": 2, "agent": 2, "document": 1, "tool": 1}


@dataclass(frozen=True)
class Outcome:
    winner: str | None  # object id; None when contested
    reason: str
    contested: tuple[str, ...] = ()  # the object ids left level
    supporters: tuple[str, ...] = ()  # the winner's assertion ids


def conflicts(log: Sequence[Mapping[str, Any]]) -> dict[datetime | None, list[Mapping[str, Any]]]:
    """Standing assertions of a one-valued slot grouped by start, where objects differ."""
    groups: dict[datetime | None, list[Mapping[str, Any]]] = {}
    for a in log:
        if a["op"] == "assert" and not a["quarantined"] and a["retracted_at"] is None:
            groups.setdefault(a["valid_from"], []).append(a)
    return {
        start: sorted(g, key=lambda a: (a["recorded_at"], a["seq"]))
        for start, g in groups.items()
        if len({a["object_id"] for a in g}) > 1
    }


def settled(group: Sequence[Mapping[str, Any]]) -> bool:
    """Already reconciled: the latest word is consolidation's own."""
    return group[-1].get("origin") == "reconcile"


def outcome(
    group: Sequence[Mapping[str, Any]],
    *,
    fingerprint: Mapping[str, str],
    names: Mapping[str, str],
) -> Outcome:
    """Weigh one conflict group. `fingerprint`: evidence episode id -> the fingerprint
    it counts as (copies map to the episode kept); `names`: object id -> display name."""
    by_object: dict[str, list[Mapping[str, Any]]] = {}
    for a in group:
        by_object.setdefault(a["object_id"], []).append(a)
    scores: dict[str, tuple[int, int]] = {}
    for obj, claims in by_object.items():
        sources: set[str] = set()
        for a in claims:
            ev = a["evidence"] or []
            if not ev:
                sources.add(f"api:{a['author_kind']}")
            sources.update(fingerprint.get(e, e) for e in ev)
        scores[obj] = (max(TRUST.get(a["author_kind"], 0) for a in claims), len(sources))
    best = max(scores.values())
    top = sorted(o for o, s in scores.items() if s == best)
    if len(top) == 1:
        winner = top[0]
        rest = [s for o, s in scores.items() if o != winner]
        second = max(rest)
        if best[0] > second[0]:
            why = f"a more trusted source ({_kind(by_object[winner])})"
        else:
            why = f"{best[1]} independent sources against {second[1]}"
        return Outcome(winner, why, supporters=tuple(a["id"] for a in by_object[winner]))
    if best[0] == TRUST["user"]:
        latest = max(
            (a for o in top for a in by_object[o]), key=lambda a: (a["recorded_at"], a["seq"])
        )
        winner = latest["object_id"]
        return Outcome(
            winner,
            "the user's latest statement (a correction)",
            supporters=tuple(a["id"] for a in by_object[winner]),
        )
    level = ", ".join(names.get(o, o) for o in top)
    return Outcome(None, f"sources level on trust and evidence: {level}", contested=tuple(top))


def _kind(claims: Sequence[Mapping[str, Any]]) -> str:
    return str(max(claims, key=lambda a: TRUST.get(a["author_kind"], 0))["author_kind"])
