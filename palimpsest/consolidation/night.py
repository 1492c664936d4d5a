"""A namespace's nightly run, once across every process that serves the memory.

    >>> night = Night(ctx, store.leases, consolidator)
    >>> night.run("default", "2026-12-07", holder="web-3:4121")   # a report, or:
    ConsolidationTaken: ... (state "done" or "held")

Every `palimpsest serve` of a fleet runs its schedule; each claims the namespace's
lease for the night (`storage.leases.decide`, under the store's write lock) before
consolidating it, renews it before each step, and marks the night done after the
watermark. A claimant that finds the night done or held skips it. A holder killed half
way stops renewing; once its lease runs out (`LEASE`), the next claimant takes the
night and runs it again from the stored state (finished steps stay written; the
watermark never moved). A holder whose lease was taken over stops at its next step
(`LeaseLost`) rather than run beside the new one.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

from ..engine.context import Context
from ..errors import ConsolidationTaken, LeaseLost
from ..models import ConsolidationReport
from ..storage import Leases
from .runner import Consolidator

LEASE = timedelta(minutes=15)


def this_process() -> str:
    """This process, as a lease names its holder: host and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Night:
    """Claims, runs and finishes a namespace's nightly consolidation."""

    def __init__(
        self, ctx: Context, leases: Leases, consolidator: Consolidator, *, lease: timedelta = LEASE
    ) -> None:
        self._ctx = ctx
        self._leases = leases
        self._consolidator = consolidator
        self.lease = lease

    def run(self, ns: str, night: str, *, holder: str) -> ConsolidationReport:
        now = self._ctx.now()
        state = self._leases.claim(ns, night, holder, now, now + self.lease)
        if state != "claimed":
            raise ConsolidationTaken(
                f"the night {night} of namespace {ns!r} is {state}", state=state, night=night
            )

        def renew() -> None:
            if not self._leases.renew(ns, night, holder, self._ctx.now() + self.lease):
                raise LeaseLost(f"the lease on the night {night} of {ns!r} was taken over")

        report = self._consolidator.consolidate(ns, renew=renew)
        if not self._leases.finish(ns, night, holder, self._ctx.now()):
            raise LeaseLost(f"the lease on the night {night} of {ns!r} was taken over")
        return report
