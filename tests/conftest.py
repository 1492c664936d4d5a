from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The CLI run in this process opens memories itself instead of starting an owner process
# in the background (tests/test_owner.py runs owners for real)
os.environ.setdefault("PALIMPSEST_OWNER", "off")

from palimpsest import Memory


class Clock:
    """A transaction clock the test moves by hand."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def tick(self, **delta: float) -> datetime:
        self.now += timedelta(**delta) if delta else timedelta(seconds=1)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def mem(tmp_path: Path, clock: Clock) -> Iterator[Memory]:
    # the core tests need no embeddings; recall tests open their own memories with MiniLM
    with Memory.open(tmp_path / "mem", clock=clock, embedder=None) as m:
        yield m


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)
