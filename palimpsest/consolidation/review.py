"""Review by a person: what waits in quarantine and why; promote or reject it.

    >>> reviewer = Reviewer(tools, promote=promote_step, embed=embed_worker)
    >>> [q.why for q in mem.quarantined()]
    >>> mem.promote(claim.id, reason="the user confirmed it")    # -> the new assertion
    >>> mem.reject(claim.id, reason="a joke, not a fact")        # -> the retracted claim

A decision is recorded the way the nightly consolidation records its own: a
promotion is a new trusted assertion (origin `review`) citing the claim's
evidence, with its reason kept as a decision of step `promote`, and the claim is
retracted with "review: <reason>; promoted as <new id>" (so `unmerge` sees a
promotion resting on a merge, as it sees consolidation's). A rejection retracts
the claim with "review: rejected: <reason>". Nothing is deleted; history keeps
both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _names as names
from ..engine.episodes import CONFIDENCE_FLOOR
from ..engine.rows import TRUSTED, episode_model
from ..errors import NotQuarantined, ValidationError
from ..models import Episode, Fact, QuarantinedFact
from ..recall.embed_worker import EmbedWorker
from ._judge import Decision
from .steps.promote import Promote
from .steps.tools import Tools

MAX_PAGE = 1000
_VERBS = {"promote": "would promote it", "confirm": "would confirm it", "reject": "would reject it"}


class Reviewer:
    """A person's decisions on quarantined claims, recorded as consolidation's are."""

    def __init__(self, tools: Tools, *, promote: Promote, embed: EmbedWorker) -> None:
        self._ctx, self._writer, self._decisions = tools.ctx, tools.writer, tools.decisions
        self._store = tools.ctx.store
        self._gate = self._store.consolidation  # the gate's reasons, per assertion
        self._promote = promote
        self._embed = embed

    def quarantined(self, ns: str, *, limit: int = 100, offset: int = 0) -> list[QuarantinedFact]:
        """Quarantined claims still standing, newest first, each with why it waits, what
        the next consolidation would decide about it, and its evidence.

        >>> q = mem.quarantined()[0]
        >>> q.fact.statement, q.why, q.pending
        ('user plays chess', ['said by a tool, not the user: ...'], None)
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise ValidationError(f"limit: an integer from 1 to {MAX_PAGE}", field="limit")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValidationError("offset: an integer >= 0", field="offset")
        with self._ctx.lock:
            rows = sorted(
                self._store.slots.quarantined_claims(ns),
                key=lambda a: (a["recorded_at"], a["id"]),
                reverse=True,
            )
            page = rows[offset : offset + limit]
            if not page:
                return []
            decisions, _ = self._promote.decide(ns, self._ctx.now(), None)
            pending = {
                c: f"the next consolidation {_VERBS[d.action]}: {d.reason}"
                for d in decisions
                for c in d.claims
            }
            cited = self._store.names.episodes_by_id([e for a in page for e in a["evidence"] or []])
            held = {a["id"]: self._gate.decision(a["id"]) for a in page}
            out = []
            for a in page:
                evidence = [
                    episode_model(cited[e])
                    for e in a["evidence"] or []
                    if e in cited and cited[e]["namespace"] == ns
                ]
                out.append(
                    QuarantinedFact(
                        fact=self._writer.fact(a, status="quarantined"),
                        why=_why(a, evidence, held[a["id"]]),
                        pending=pending.get(a["id"]),
                        evidence=evidence,
                    )
                )
            return out

    def promote(self, ns: str, fact_id: str, *, reason: str) -> Fact:
        """A person's promotion of a quarantined claim: a new trusted assertion with the
        claim's key, window and evidence; the claim is retracted, pointing at it.

        >>> new = mem.promote(claim.id, reason="the user confirmed it in person")
        >>> new.quarantined, mem.facts("user", "plays")[0].id == new.id
        (False, True)

        Raises NotQuarantined (`not_quarantined`) unless `fact_id` is a standing
        quarantined claim of the namespace; NotFound when there is none.
        """
        why = _reason(reason)
        with self._ctx.lock:
            a = self._claim(ns, fact_id)
            decision = Decision("promote", (a["slot_id"], a["object_id"]), (a["id"],), why)
            text = f"review: {why}"
            with self._store.write(ns):
                item = {**self._promote.promotion(decision), "origin": "review"}
                new = self._writer.write_assertions(ns, [item])[0]
                self._writer.retract(ns, a["id"], reason=f"{text}; promoted as {new.id}")
                self._decisions.note(ns, new.id, "promote", text)
            self._embed.flush()
            return new

    def reject(self, ns: str, fact_id: str, *, reason: str) -> Fact:
        """A person's rejection of a quarantined claim: it is retracted with the reason.

        >>> mem.reject(claim.id, reason="a joke, not a fact").status
        'retracted'

        Raises NotQuarantined unless `fact_id` is a standing quarantined claim.
        """
        why = _reason(reason)
        with self._ctx.lock:
            a = self._claim(ns, fact_id)
            return self._writer.retract(ns, a["id"], reason=f"review: rejected: {why}")

    def _claim(self, ns: str, fact_id: str) -> dict[str, Any]:
        a = self._writer.own_assertion(ns, fact_id)
        if a["op"] != "assert" or not a["quarantined"] or a["retracted_at"] is not None:
            state = "withdrawn" if a["retracted_at"] is not None else "not quarantined"
            raise NotQuarantined(f"{fact_id} is {state}: only standing claims are reviewed",
                                 id=fact_id)  # fmt: skip
        return a


def _reason(reason: object) -> str:
    why = names.check_text(reason, field="reason", limit=2000)
    if not why.strip():
        raise ValidationError("reason: say why (it is kept with the decision)", field="reason")
    return why.strip()


def _why(
    a: Mapping[str, Any], evidence: list[Episode], decision: Mapping[str, Any] | None = None
) -> list[str]:
    """Why a claim waits, in words (DESIGN.md "Trust, quarantine, promotion"); `decision`
    is the one kept with its assertion (step "gate": why the precision gate held it)."""
    out = []
    if a["author_kind"] not in TRUSTED:
        out.append(
            f"said by a {a['author_kind'].replace('_', ' ')}, not the user: other sources wait"
            " for independent corroboration"
        )
    if decision is not None and decision["step"] == "gate":
        out.append(decision["reason"])
    elif a["confidence"] < CONFIDENCE_FLOOR:
        out.append(f"a weak reading (confidence {a['confidence']:.2f} < {CONFIDENCE_FLOOR})")
    if a["origin"] == "instruction":
        out.append("reads as an instruction: corroboration alone never promotes it")
    else:
        texts = {e.fingerprint for e in evidence}
        sessions = {e.session for e in evidence if e.session}
        out.append(
            f"{len(texts)} distinct text(s) in {len(sessions)} session(s) support it;"
            " promotion needs 2 in 2"
        )
    if len(out) == 1 and a["author_kind"] in TRUSTED:
        out.insert(0, "asserted as quarantined")
    return out
