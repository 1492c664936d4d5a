"""Consolidation step 4: promote, confirm or reject quarantined claims, with reasons.

    >>> Promote(ctx, writer=writer, ...).run(run)   # "promoted", "confirmed", "rejected"

Decisions are pure (`consolidation.judge`); this step gathers their inputs
and carries them out in one write transaction. A promotion is a new assertion
recorded at run time, citing the union of the evidence; the quarantined claims
it rests on are retracted with the reason. Evidence from an episode folded
into another by dedupe counts as the episode kept: a near-copy is no
independent source.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...engine.materialise import Materialiser
from ...engine.vocabulary import Vocabulary
from ...temporal import visible
from .._judge import Claim, EvidenceInfo, judge
from .._run import Run
from .tools import Tools

_FEW_SLOTS = 5000
_ACTIONS = {"promote": "promoted", "confirm": "confirmed", "reject": "rejected"}


class Promote:
    def __init__(
        self,
        tools: Tools,
        *,
        vocab: Vocabulary,
        materialiser: Materialiser,
    ) -> None:
        self._ctx, self._cs, self._writer = tools.ctx, tools.cs, tools.writer
        self._entities, self._decisions = tools.entities, tools.decisions
        self._vocab = vocab
        self._mat = materialiser

    def run(self, run: Run) -> None:
        ns = run.namespace
        decisions, names = self.decide(ns, run.now, None if run.since is None else run.slots)
        if not decisions:
            return
        changes = [
            run.add(
                "promote" if d.action != "reject" else "reject",
                _ACTIONS[d.action],
                list(d.claims),
                f"{names[d.key]}: {d.reason}",
            )
            for d in decisions
        ]
        if run.dry_run:
            return
        with self._ctx.store.write(ns):
            # every promotion in one write (one materialisation pass), then the retractions
            promoted = [(d, c) for d, c in zip(decisions, changes, strict=True)]
            promoted = [(d, c) for d, c in promoted if d.action == "promote"]
            written = self._writer.write_assertions(ns, [self.promotion(d) for d, _ in promoted])
            new_ids = {d.key: f.id for (d, _), f in zip(promoted, written, strict=True)}
            for d, change in zip(decisions, changes, strict=True):
                new_id = new_ids.get(d.key) if d.action == "promote" else None
                self._retract_claims(ns, d, change.reason, new_id)
                if new_id:
                    change.targets.append(new_id)
                    self._decisions.note(ns, new_id, "promote", change.reason)
        run.slots |= {self._store_slot(c) for d in decisions for c in d.claims}

    def _store_slot(self, assertion_id: str) -> str:
        row = self._ctx.store.slots.assertion(assertion_id)
        return "" if row is None else str(row["slot_id"])

    def decide(
        self, ns: str, now: datetime, slots: set[str] | None
    ) -> tuple[list[Any], dict[tuple[str, str], str]]:
        if slots is not None and not slots:
            return [], {}
        if slots is not None and len(slots) <= _FEW_SLOTS:
            # a few changed slots: their logs hold their claims (no scan of every assertion)
            rows = [
                a
                for st in self._mat.states({s: {"id": s} for s in sorted(slots)}).values()
                for a in st.log
                if a["op"] == "assert" and a["quarantined"] and a["retracted_at"] is None
            ]
        else:
            rows = self._ctx.store.slots.quarantined_claims(ns)
            if slots is not None:
                rows = [r for r in rows if r["slot_id"] in slots]
        if not rows:
            return [], {}
        states = self._mat.states({r["slot_id"]: {"id": r["slot_id"]} for r in rows})
        name_of = self._entities.name_of
        claims: list[Claim] = []
        trusted: dict[tuple[str, str], str] = {}
        believed: dict[str, str | None] = {}
        names: dict[tuple[str, str], str] = {}
        for r in rows:
            st = states[r["slot_id"]]
            card = self._vocab.cardinality(ns, r["slot_id"])
            claims.append(
                Claim(
                    id=r["id"],
                    slot_id=r["slot_id"],
                    object_id=r["object_id"],
                    cardinality=card,
                    valid_from=r["valid_from"],
                    origin=r["origin"] or "api",
                    evidence=tuple(r["evidence"] or ()),
                )
            )
            key = (r["slot_id"], r["object_id"])
            names[key] = f"{st.row['subject']} {st.row['predicate']} {name_of(r['object_id'])}"
            for a in st.log:
                if a["op"] == "assert" and not a["quarantined"] and a["retracted_at"] is None:
                    trusted.setdefault((a["slot_id"], a["object_id"]), a["id"])
            at = r["valid_from"] or now
            held = [
                v["object_id"]
                for v in st.versions
                if v["expired_at"] is None  # believed now
                and not v["quarantined"]
                and visible(v, known_at=None, valid_at=at)
            ]
            believed[r["id"]] = held[0] if held else None
        episodes = {e for c in claims for e in c.evidence}
        copies = self._cs.duplicates(ns)
        evidence = {}
        for eid in episodes:
            ep = self._ctx.store.names.episode(copies.get(eid, eid))
            if ep is not None:
                evidence[eid] = EvidenceInfo(ep["fingerprint"], ep["session"])
        decisions = judge(claims, evidence=evidence, trusted=trusted, believed=believed)
        return decisions, names

    def promotion(self, d: Any) -> dict[str, Any]:
        """The assertion a promotion writes: the claims' key, citing all their evidence."""
        rows = [r for r in (self._ctx.store.slots.assertion(c) for c in d.claims) if r is not None]
        # the widest claim sets the window: "since always" and earliest starts first
        first = min(rows, key=lambda r: (r["valid_from"] is not None, r["valid_from"] or 0))
        st = self._mat.states({first["slot_id"]: {"id": first["slot_id"]}})[first["slot_id"]]
        evidence: list[str] = []
        for row in rows:
            evidence += [e for e in row["evidence"] or [] if e not in evidence]
        return {
            "op": "assert",
            "subject": st.row["subject"],
            "predicate": st.row["predicate"],
            "object": self._entities.name_of(first["object_id"]),
            "valid_from": first["valid_from"],
            "valid_to": first["valid_to"],
            "reference": None,
            "confidence": float(first["confidence"]),
            "author_kind": first["author_kind"],
            "evidence": evidence,
            "quarantined": False,
            "origin": "promotion",
        }

    def _retract_claims(self, ns: str, d: Any, reason: str, new_id: str | None) -> None:
        if new_id is not None:
            reason = f"{reason}; promoted as {new_id}"
        elif d.action == "confirm":
            reason = f"{reason} ({d.support})"
        for cid in d.claims:
            self._writer.retract(ns, cid, reason=f"consolidation: {reason}")
