"""The server's nightly consolidation: the next-run rule, and the lifespan task running it."""

from __future__ import annotations

import asyncio
import itertools
import threading
from datetime import UTC, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from fastapi.testclient import TestClient

from palimpsest.api import create_app
from palimpsest.api.schedule import Consolidator, Schedule, next_run
from palimpsest.errors import ClosedError, ValidationError

from .conftest import Clock

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# --- next_run: a pure function -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("now", "hhmm", "tz", "expected"),
    [
        # later today, then past today -> tomorrow, and exactly now -> tomorrow
        ("2026-06-10T01:00:00+02:00", "03:00", BERLIN, "2026-06-10T03:00:00+02:00"),
        ("2026-06-10T03:00:01+02:00", "03:00", BERLIN, "2026-06-11T03:00:00+02:00"),
        ("2026-06-10T03:00:00+02:00", "03:00", BERLIN, "2026-06-11T03:00:00+02:00"),
        # `now` in another zone: the local day decides
        ("2026-06-10T23:30:00+00:00", "03:00", BERLIN, "2026-06-11T01:00:00+00:00"),
        ("2026-06-10T00:30:00+00:00", "03:00", BERLIN, "2026-06-10T01:00:00+00:00"),
        # Berlin springs forward 02:00 -> 03:00 on 2026-03-29: 03:00 is CEST that day
        ("2026-03-28T12:00:00+01:00", "03:00", BERLIN, "2026-03-29T01:00:00+00:00"),
        ("2026-03-28T12:00:00+01:00", "02:30", BERLIN, "2026-03-29T01:30:00+00:00"),  # skipped
        # Berlin falls back 03:00 -> 02:00 on 2026-10-25: 02:30 happens twice; first one
        ("2026-10-24T12:00:00+02:00", "02:30", BERLIN, "2026-10-25T00:30:00+00:00"),
        ("2026-10-25T00:30:00+00:00", "02:30", BERLIN, "2026-10-26T01:30:00+00:00"),
        ("2026-10-24T12:00:00+02:00", "03:00", BERLIN, "2026-10-25T02:00:00+00:00"),
        # New York: 02:30 does not exist on 2026-03-08; 01:30 happens twice on 2026-11-01
        ("2026-03-07T12:00:00-05:00", "02:30", NEW_YORK, "2026-03-08T07:30:00+00:00"),
        ("2026-10-31T12:00:00-04:00", "01:30", NEW_YORK, "2026-11-01T05:30:00+00:00"),
        ("2026-11-01T05:30:00+00:00", "01:30", NEW_YORK, "2026-11-02T06:30:00+00:00"),
        # UTC, across a month and a year
        ("2026-12-31T03:00:00+00:00", "03:00", ZoneInfo("UTC"), "2027-01-01T03:00:00+00:00"),
    ],
)
def test_next_run(now: str, hhmm: str, tz: ZoneInfo, expected: str) -> None:
    s = Schedule.parse(hhmm, tz.key)
    got = next_run(at(now), s.at, s.tz)
    assert got == at(expected)
    assert got.tzinfo is UTC
    assert got > at(now)


def test_one_run_per_local_day_across_a_year_of_dst() -> None:
    t = at("2026-01-01T00:00:00+00:00")
    days = []
    for _ in range(366):
        t = next_run(t, time(2, 30), BERLIN)
        days.append(t.astimezone(BERLIN).date())
    assert len(set(days)) == len(days) == 366
    assert all((b - a).days == 1 for a, b in itertools.pairwise(days))


@pytest.mark.parametrize("bad", ["3", "24:00", "03:60", "3pm", "", "03:00:00"])
def test_bad_time_of_day_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError) as e:
        Schedule.parse(bad, "UTC")
    assert e.value.details["field"] == "consolidate_at"


@pytest.mark.parametrize("bad", ["Mars/Olympus", "", "../etc/passwd"])
def test_unknown_timezone_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError) as e:
        Schedule.parse("03:00", bad)
    assert e.value.details["field"] == "timezone"


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValidationError):
        next_run(datetime(2026, 1, 1), time(3), BERLIN)


# --- the task ------------------------------------------------------------------------------------
def test_the_lifespan_task_consolidates_at_the_scheduled_time(tmp_path: Path) -> None:
    clock = Clock(datetime(2030, 1, 1, tzinfo=UTC))
    holder: dict[str, Consolidator] = {}

    ran = threading.Event()

    async def fast_sleep(seconds: float) -> None:
        """Time passes at once until the first night has run; then the task says so
        and waits for good."""
        if holder["c"].runs >= 1:
            ran.set()
            await asyncio.Event().wait()
        clock.tick(seconds=seconds)
        await asyncio.sleep(0)

    app = create_app(
        tmp_path / "mem",
        extractor=None,
        embedder=None,
        clock=clock,
        consolidation=Schedule.parse("03:00", "UTC"),
        schedule_sleep=fast_sleep,
    )
    consolidator = app.state.palimpsest.consolidator
    assert consolidator is not None
    holder["c"] = consolidator
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        # the state the test needs: the first night has run and been recorded (the
        # timeout only keeps a broken scheduler from hanging the suite)
        assert ran.wait(600), "the scheduled run never finished"
        health = c.get("/v1/health").json()
    sched = health["consolidation"]
    assert (sched["at"], sched["timezone"]) == ("03:00", "UTC")
    last = sched["last_run"]
    assert last is not None, health
    assert last["status"] == "ok", last
    assert last["started_at"] == "2030-01-01T03:00:00Z"
    assert sched["next_run"] == "2030-01-02T03:00:00Z"
    assert consolidator.runs == 1


def test_no_schedule_no_task(tmp_path: Path) -> None:
    app = create_app(tmp_path / "mem", extractor=None, embedder=None)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        assert c.get("/v1/health").json()["consolidation"] is None


def test_a_failed_night_is_recorded_and_does_not_raise() -> None:
    def closed() -> object:
        raise ClosedError("the server's memory is not open")

    c = Consolidator(Schedule.parse("03:00"), closed, clock=lambda: at("2030-01-01T03:00:00Z"))  # type: ignore[arg-type]
    last = asyncio.run(c.run_once())
    assert (last["status"], last["code"]) == ("error", "closed")
    assert c.status()["last_run"] == last


def test_environment_settings_turn_the_schedule_on_and_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.api.app import app_from_env
    from palimpsest.api.settings import ServerSettings

    assert ServerSettings.from_env({}).consolidate_at == "03:00"
    assert ServerSettings.from_env({"PALIMPSEST_CONSOLIDATE_AT": "off"}).consolidate_at is None
    monkeypatch.setenv("PALIMPSEST_PATH", str(tmp_path / "mem"))
    monkeypatch.setenv("PALIMPSEST_CONSOLIDATE_AT", "04:15")
    monkeypatch.setenv("PALIMPSEST_TIMEZONE", "Europe/Berlin")
    sched = app_from_env().state.palimpsest.consolidator.schedule
    assert sched.describe() == {"at": "04:15", "timezone": "Europe/Berlin"}
    monkeypatch.setenv("PALIMPSEST_TIMEZONE", "Nowhere/Special")
    with pytest.raises(ValidationError):
        app_from_env()
