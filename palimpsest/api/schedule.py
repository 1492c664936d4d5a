"""The nightly consolidation, run by the server at a wall-clock time of day.

    >>> s = Schedule.parse("03:00", "Europe/Berlin")
    >>> next_run(datetime(2026, 3, 29, 0, 30, tzinfo=UTC), s.at, s.tz).isoformat()
    '2026-03-29T01:00:00+00:00'

Only a serving process runs it (`palimpsest serve`; `--no-consolidate` turns it
off). `next_run` is a pure function; `Consolidator.run_forever` is the lifespan's
task, which sleeps until then and runs `Memory.consolidate` in a worker thread for
every namespace (the facade's own lock serialises it with the requests' writes).
Each run names its night (the scheduled day, in the schedule's timezone): a fleet
of servers on one PostgreSQL database all run their schedules, and each namespace
is consolidated once per night by whichever claims it first
(`consolidation/night.py`). A namespace another server holds is looked at again
every `RETRY_S` until its night is done, so a run killed half way is taken over
once its lease runs out.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .._time import Clock, utcnow
from ..errors import ConsolidationTaken, PalimpsestError, ValidationError

if TYPE_CHECKING:
    from ..memory import Memory

log = logging.getLogger("palimpsest.api")

Sleep = Callable[[float], Awaitable[None]]
RETRY_S = 120.0  # how often a namespace another server holds is looked at again
RETRY_FOR = timedelta(hours=6)  # ... and for how long after the scheduled time
# Long sleeps are taken in naps so a changed wall clock (suspend, NTP step) is noticed.
MAX_NAP_S = 300.0
_HHMM = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def parse_time_of_day(text: str) -> time:
    """`"03:00"` -> time(3, 0); anything else is a ValidationError."""
    m = _HHMM.match(text.strip())
    if m is None:
        raise ValidationError(
            f"consolidate_at: a time of day as HH:MM, not {text[:32]!r}", field="consolidate_at"
        )
    return time(int(m.group(1)), int(m.group(2)))


def parse_timezone(name: str) -> ZoneInfo:
    """An IANA timezone (`Europe/Berlin`, `UTC`); unknown names are a ValidationError."""
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(
            f"timezone: no IANA timezone {name[:64]!r} (e.g. UTC, Europe/Berlin)",
            field="timezone",
        ) from None


def next_run(now: datetime, at: time, tz: ZoneInfo) -> datetime:
    """The first wall-clock `at` in `tz` strictly after `now`, as aware UTC.

    Across a DST change the day still gets one run: a time skipped by the
    clocks going forward runs that much later (02:30 on a 02:00->03:00 night is
    03:30), and a time that happens twice when they go back runs at its first
    occurrence only.
    """
    if now.tzinfo is None:
        raise ValidationError("now: naive datetime", field="now")
    local_day = now.astimezone(tz).date()
    for days in range(3):  # today, tomorrow, and one spare for offsets over a day
        day: date = local_day + timedelta(days=days)
        # fold=0: the first occurrence of an ambiguous time; a skipped time maps
        # through the offset in force before the gap, i.e. past it by its length
        candidate = datetime.combine(day, at, tzinfo=tz).astimezone(UTC)
        if candidate > now:
            return candidate
    raise AssertionError("unreachable: a time of day recurs within three days")  # pragma: no cover


@dataclass(frozen=True)
class Schedule:
    """When the server consolidates: `at` o'clock in `tz`, every day."""

    at: time
    tz: ZoneInfo

    @classmethod
    def parse(cls, at: str, timezone: str = "UTC") -> Schedule:
        return cls(parse_time_of_day(at), parse_timezone(timezone))

    def describe(self) -> dict[str, str]:
        return {"at": self.at.strftime("%H:%M"), "timezone": self.tz.key}


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(UTC).isoformat().replace("+00:00", "Z")


@dataclass
class Consolidator:
    """The lifespan task: consolidate every namespace at each scheduled time.

    `clock` and `sleep` are injectable so a test can run a night in no time.
    """

    schedule: Schedule
    memory: Callable[[], Memory]
    clock: Clock = utcnow
    sleep: Sleep = asyncio.sleep
    next_at: datetime | None = None
    last: dict[str, Any] | None = None
    runs: int = 0
    night: str | None = None  # the night being run (None: a run asked for now, unleased)
    held: list[str] = field(default_factory=list)  # namespaces another server holds

    def status(self) -> dict[str, Any]:
        """What /health shows: the schedule, the next run, and how the last one went."""
        return {**self.schedule.describe(), "next_run": _iso(self.next_at), "last_run": self.last}

    async def run_forever(self) -> None:
        while True:
            target = next_run(self.clock(), self.schedule.at, self.schedule.tz)
            self.next_at = target
            while (left := (target - self.clock()).total_seconds()) > 0:
                await self.sleep(min(left, MAX_NAP_S))
            self.night = target.astimezone(self.schedule.tz).date().isoformat()
            await self.run_once()
            while self.held and self.clock() < target + RETRY_FOR:
                await self.sleep(RETRY_S)
                await self.run_once()

    async def run_once(self) -> dict[str, Any]:
        """One scheduled run now; never raises (a failed night is logged and shown)."""
        started = self.clock()
        try:
            counts = await asyncio.to_thread(self._consolidate_all)
            outcome: dict[str, Any] = {"status": "ok", "counts": counts}
        except asyncio.CancelledError:
            raise
        except PalimpsestError as e:
            log.error("scheduled consolidation failed: %s", e.message)
            outcome = {"status": "error", "code": e.code}
        except Exception as e:  # a bad night must not stop the server or the next run
            log.error("scheduled consolidation failed", exc_info=e)
            outcome = {"status": "error", "code": "internal"}
        self.runs += 1
        self.last = {"started_at": _iso(started), "finished_at": _iso(self.clock()), **outcome}
        return self.last

    def _consolidate_all(self) -> dict[str, int]:
        mem = self.memory()
        totals: dict[str, int] = {}
        held = []
        for ns in _namespaces(mem):
            try:
                report = mem.consolidate(namespace=ns, night=self.night)
            except ConsolidationTaken as e:
                if e.details.get("state") == "held":
                    held.append(ns)
                continue
            for action, n in report.counts.items():
                totals[action] = totals.get(action, 0) + n
        self.held = held
        return totals


def _namespaces(mem: Memory) -> list[str]:
    """Every namespace holding data, and the default one."""
    found = set(mem.namespaces())
    return sorted(found | {mem.namespace})
