"""The nightly run: dedupe, merge, reconcile, promote, expire, decay, index.

    >>> report = consolidator.consolidate("default")
    >>> report.summary
    '1 promoted'

Steps run in that order, each recording what it changed and why (`report.changes`),
each in its own write transaction. A run reads only what changed since the
watermark of the last successful run (kept in the store's `Meta`), so a second
run right after the first finds nothing and says so. The watermark moves only
when every step has finished: a run killed midway leaves finished steps written,
the rest untouched, and the next run (recomputing every decision from what is
stored) completes the work. Each run's report is kept as JSON in
`<memory>/reports/`, with a one-line human summary, written (atomically)
before the watermark commits: a run killed between the two has its report
kept and its watermark unmoved, so the next run looks again and finds the
work done; no committed run is ever without its report. What such a run
reported by time window (facts that ended, episodes a use kept hot) is not
reported again: the next run starts those windows at its start. Recall uses
still waiting in memory are written first, so the decay step sees every one.

The last step, `index`, builds recall's HNSW generation when a namespace is
above the vector threshold and has none, or a quarter of its vectors are newer
(`recall._vectors.stale`): minutes at 10^5 vectors, so it runs without the
memory's lock (recall and reads go on, exact until it is published, held at
most ~5 s at a time while Kùzu checkpoints; writes wait for Kùzu's writer) and
recall never builds one itself. Consolidations run one at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

from .._time import TimeLike, opt_utc, to_utc
from ..engine.context import Context
from ..engine.uses import UseLog
from ..errors import PalimpsestError
from ..models import ConsolidationReport
from ..storage import Consolidation
from ._run import Run
from .steps.index import Index

STEPS = ("dedupe", "merge", "reconcile", "promote", "expire", "decay", "index")


class Step(Protocol):
    """A step of the run (`steps/`): reads, decides, writes, and says so in `run`."""

    def run(self, run: Run) -> None: ...


class Drains(Protocol):
    """The embedding worker, as the run needs it: what it holds stored first."""

    def drain(self) -> None: ...


def _no_hook(point: str) -> None:
    """Between steps, between merges and before the watermark: nothing, unless a test
    pauses or kills the run there."""


def _no_renew() -> None:
    """No lease to renew (a run asked for by hand)."""


class Consolidator:
    """`consolidate` and its reports: the steps in order, the watermark, one run at a time."""

    def __init__(
        self,
        ctx: Context,
        cs: Consolidation,
        *,
        steps: Mapping[str, Step],
        index: Index,
        uses: UseLog,
        embed: Drains,
    ) -> None:
        if set(steps) != set(STEPS[:-1]):
            raise ValueError(f"consolidation steps: {', '.join(STEPS[:-1])}")
        self._ctx = ctx
        self._cs = cs
        self._steps = steps
        self._index = index
        self._uses = uses
        self._embed = embed
        self._running = threading.Lock()  # one run at a time
        self.hook: Callable[[str], None] = _no_hook

    def consolidate(
        self,
        ns: str,
        *,
        now: TimeLike | None = None,
        dry_run: bool = False,
        full: bool = False,
        progress: Callable[[str], None] | None = None,
        renew: Callable[[], None] | None = None,
    ) -> ConsolidationReport:
        """Run the nightly consolidation over one namespace; idempotent.

        >>> mem.consolidate(dry_run=True).changes

        `full=True` ignores the watermark and looks at everything again;
        `progress(step)` is called as each step starts (for progress bars);
        `renew()` before each step and the watermark (a nightly lease: it raises to stop).
        """
        beat = renew or _no_renew
        ctx = self._ctx
        self._embed.drain()  # merge reads stored name vectors; the worker needs the lock
        with self._running, ctx.lock:
            self._uses.flush()
            started = opt_utc(now, name="now") or ctx.now()
            since = None if full else self._cs.watermark(ns)
            run = Run(ns, started, since, dry_run, checkpoint=self.hook)
            if not full:
                run.reported_to = self._uncommitted_report(ns, since)
            # a full pass (no watermark) asks each step's own question of the whole store
            run.slots = set() if since is None else self._cs.changed_slots(ns, since)
            for step in STEPS[:-1]:
                if progress is not None:
                    progress(step)
                self.hook(step)
                beat()
                self._steps[step].run(run)
            # our own writes are recorded at or before the last K: the next run starts
            # there (>=), so nothing written concurrently (during the index build) is skipped
            mark = max(t for t in (ctx.last_k, started) if t is not None)
            if progress is not None:
                progress("index")
            self.hook("index")
            beat()
            build = self._index.check(run)
        if build is not None:
            self._index.build(run, build)  # without the lock: recall goes on meanwhile
        with ctx.lock:
            report = ConsolidationReport(
                namespace=ns,
                started_at=started,
                finished_at=ctx.now(),
                dry_run=dry_run,
                changes=run.changes,
                counts=run.counts,
                since=since,
                omitted=run.omitted,
            )
            if not dry_run:
                self._keep_report(report)
                self.hook("watermark")
                beat()
                with ctx.store.write(ns):
                    self._cs.set_watermark(ns, mark)
            return report

    def _uncommitted_report(self, ns: str, watermark: datetime | None) -> datetime | None:
        """The start of the newest kept run whose watermark never committed (killed
        between its report and its watermark), if the newest kept run is one."""
        for data in reversed(self._cs.reports(ns)):
            try:
                started = to_utc(data["started_at"], name="started_at")
            except (KeyError, PalimpsestError):
                continue  # not a report of ours (edited by hand?): it proves nothing
            return started if watermark is None or started > watermark else None
        return None

    def reports(self, ns: str) -> list[ConsolidationReport]:
        """Earlier runs' reports, oldest first."""
        out = []
        for data in self._cs.reports(ns):
            data.pop("summary", None)  # kept for people reading the file; derived
            out.append(ConsolidationReport.model_validate(data))
        return out

    def _keep_report(self, report: ConsolidationReport) -> None:
        data = report.model_dump(mode="json") | {"summary": report.summary}
        self._cs.keep_report(report.namespace, report.finished_at, data, _human(report))


def _human(report: ConsolidationReport) -> str:
    lines = [
        f"consolidation of {report.namespace!r} at {report.finished_at.isoformat()}",
        f"since {report.since.isoformat() if report.since else 'the beginning'}: " + report.summary,
    ]
    for c in report.changes:
        lines.append(f"  {c.step:<9} {c.action:<12} {c.reason}")
    for action, n in sorted(report.omitted.items()):
        lines.append(f"  … and {n} more {action}")
    return "\n".join(lines) + "\n"
