"""Promote or reject quarantined claims: the rules of DESIGN.md "Trust, quarantine, promotion".

    >>> judge([c1, c2], evidence=ev, trusted={}, believed={})
    [Decision(action='promote', key=('slot', 'obj'), claims=('fa_1', 'fa_2'), ...)]

- A claim is promoted when independent evidence corroborates it: its key
  (slot, object) is supported by at least two distinct content fingerprints
  from at least two distinct sessions. Replays and the same document pasted
  twice share a fingerprint, so they never count twice.
- It is confirmed (and leaves quarantine) when a trusted, active assertion
  already holds the same key.
- It is rejected when it contradicts trusted knowledge: for a one-valued
  predicate, something else is believed at the claim's start.
- Text that reads as an instruction is never promoted by corroboration alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

Key = tuple[str, str]  # (slot id, object id)


@dataclass(frozen=True)
class Claim:
    id: str
    slot_id: str
    object_id: str
    cardinality: Literal["one", "many"]
    valid_from: datetime | None
    origin: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class EvidenceInfo:
    fingerprint: str
    session: str | None


@dataclass(frozen=True)
class Decision:
    action: Literal["promote", "confirm", "reject"]
    key: Key
    claims: tuple[str, ...]
    reason: str
    support: str | None = None  # the trusted assertion that confirms or contradicts


def judge(
    claims: Sequence[Claim],
    *,
    evidence: Mapping[str, EvidenceInfo],
    trusted: Mapping[Key, str],
    believed: Mapping[str, str | None],
) -> list[Decision]:
    """Decisions for quarantined claims.

    `evidence` maps episode id -> fingerprint/session; `trusted` maps a key held
    by an active trusted assertion -> that assertion's id; `believed` maps a
    claim id -> the object id trusted knowledge holds at the claim's start
    (one-valued predicates only; None when nothing is believed).
    """
    out: list[Decision] = []
    groups: dict[Key, list[Claim]] = {}
    for c in claims:
        groups.setdefault((c.slot_id, c.object_id), []).append(c)
    for key, group in sorted(groups.items()):
        ids = tuple(sorted(c.id for c in group))
        if key in trusted:
            out.append(
                Decision("confirm", key, ids, "a trusted assertion already holds it", trusted[key])
            )
            continue
        contradicted = [
            c for c in group if c.cardinality == "one" and believed.get(c.id) not in (None, key[1])
        ]
        if contradicted:
            held = believed[contradicted[0].id]
            out.append(
                Decision(
                    "reject",
                    key,
                    tuple(sorted(c.id for c in contradicted)),
                    "contradicts trusted knowledge",
                    held,
                )
            )
            continue
        if any(c.origin == "instruction" for c in group):
            continue  # never promoted by corroboration: it would launder an injection
        prints, sessions = _independence(group, evidence)
        if len(prints) >= 2 and len(sessions) >= 2:
            out.append(
                Decision(
                    "promote",
                    key,
                    ids,
                    f"corroborated by {len(prints)} distinct texts in {len(sessions)} sessions",
                )
            )
    return out


def _independence(
    group: Iterable[Claim], evidence: Mapping[str, EvidenceInfo]
) -> tuple[set[str], set[str]]:
    prints: set[str] = set()
    sessions: set[str] = set()
    for c in group:
        for ep in c.evidence:
            info = evidence.get(ep)
            if info is None:
                continue
            prints.add(info.fingerprint)
            if info.session:
                sessions.add(info.session)
    return prints, sessions
