"""`Memory.consolidate`: promote, confirm or reject quarantined facts, with reasons.

    >>> report = mem.consolidate()
    >>> report.summary
    '1 promoted'

Decisions are pure (`consolidation.judge`); this mixin gathers their inputs
and carries them out as ordinary assertions and retractions in one write
transaction, so a crash leaves either all of a run or none of it. A promotion
is a new assertion recorded at run time, citing the union of the evidence; the
quarantined claims it rests on are retracted with the reason. A second run
right after finds nothing to do. Each run's report is kept as JSON in
`<memory>/reports/`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ._time import TimeLike, opt_utc
from ._writes import _Writes
from .consolidation import Claim, EvidenceInfo, judge
from .models import ConsolidationChange, ConsolidationReport
from .temporal import visible

REPORTS = "reports"


class _Consolidate(_Writes):
    def consolidate(
        self,
        *,
        now: TimeLike | None = None,
        dry_run: bool = False,
        namespace: str | None = None,
    ) -> ConsolidationReport:
        """Run the nightly consolidation over one namespace; idempotent."""
        ns = self._ns(namespace)
        with self._lock:
            started = opt_utc(now, name="now") or self.now()
            decisions, names = self._decide(ns, started)
            changes = [
                ConsolidationChange(
                    step="promote" if d.action != "reject" else "reject",
                    action={"promote": "promoted", "confirm": "confirmed", "reject": "rejected"}[
                        d.action
                    ],
                    targets=list(d.claims),
                    reason=f"{names[d.key]}: {d.reason}",
                )
                for d in decisions
            ]
            if not dry_run and decisions:
                with self._store.write():
                    for d, change in zip(decisions, changes, strict=True):
                        new_id = self._carry_out(ns, d, change.reason)
                        if new_id:
                            change.targets.append(new_id)
            counts: dict[str, int] = {}
            for c in changes:
                counts[c.action] = counts.get(c.action, 0) + 1
            report = ConsolidationReport(
                namespace=ns,
                started_at=started,
                finished_at=self.now(),
                dry_run=dry_run,
                changes=changes,
                counts=counts,
            )
            if not dry_run:
                self._keep_report(report)
            return report

    def consolidation_reports(self, *, namespace: str | None = None) -> list[ConsolidationReport]:
        """Earlier runs' reports, oldest first."""
        ns = self._ns(namespace)
        folder = self._store.directory / REPORTS
        out = []
        for f in sorted(folder.glob("consolidation-*.json")) if folder.is_dir() else []:
            report = ConsolidationReport.model_validate_json(f.read_text(encoding="utf-8"))
            if report.namespace == ns:
                out.append(report)
        return out

    def _decide(self, ns: str, now: datetime) -> tuple[list[Any], dict[tuple[str, str], str]]:
        rows = self._store.quarantined_claims(ns)
        if not rows:
            return [], {}
        states = self._states({r["slot_id"]: {"id": r["slot_id"]} for r in rows})
        claims: list[Claim] = []
        trusted: dict[tuple[str, str], str] = {}
        believed: dict[str, str | None] = {}
        names: dict[tuple[str, str], str] = {}
        for r in rows:
            st = states[r["slot_id"]]
            card = self._cardinality(ns, r["slot_id"])
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
            names[key] = (
                f"{st.row['subject']} {st.row['predicate']} {self._name_of(r['object_id'])}"
            )
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
        evidence = {}
        for eid in episodes:
            ep = self._store.episode(eid)
            if ep is not None:
                evidence[eid] = EvidenceInfo(ep["fingerprint"], ep["session"])
        decisions = judge(claims, evidence=evidence, trusted=trusted, believed=believed)
        return decisions, names

    def _carry_out(self, ns: str, d: Any, reason: str) -> str | None:
        new_id = None
        if d.action == "promote":
            rows = [r for r in (self._store.assertion(c) for c in d.claims) if r is not None]
            # the widest claim sets the window: "since always" and earliest starts first
            first = min(rows, key=lambda r: (r["valid_from"] is not None, r["valid_from"] or 0))
            st = self._states({first["slot_id"]: {"id": first["slot_id"]}})[first["slot_id"]]
            evidence: list[str] = []
            for row in rows:
                evidence += [e for e in row["evidence"] or [] if e not in evidence]
            parsed = {
                "op": "assert",
                "subject": st.row["subject"],
                "predicate": st.row["predicate"],
                "object": self._name_of(first["object_id"]),
                "valid_from": first["valid_from"],
                "valid_to": first["valid_to"],
                "reference": None,
                "confidence": float(first["confidence"]),
                "author_kind": first["author_kind"],
                "evidence": evidence,
                "quarantined": False,
                "origin": "promotion",
            }
            new_id = self._write_assertions(ns, [parsed])[0].id
            reason = f"{reason}; promoted as {new_id}"
        elif d.action == "confirm":
            reason = f"{reason} ({d.support})"
        for cid in d.claims:
            self.retract(cid, reason=f"consolidation: {reason}", namespace=ns)
        return new_id

    def _keep_report(self, report: ConsolidationReport) -> None:
        folder = self._store.directory / REPORTS
        folder.mkdir(exist_ok=True)
        stamp = report.finished_at.strftime("%Y%m%dT%H%M%S%fZ")
        target = folder / f"consolidation-{stamp}-{report.namespace}.json"
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(report.model_dump(mode="json"), indent=2), encoding="utf-8")
        tmp.replace(target)
