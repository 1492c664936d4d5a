"""A bulk write pauses Python's cyclic collector and always gives it back."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.engine.gc_pause import gc_paused
from palimpsest.engine.writer import GC_PAUSE_MIN
from palimpsest.errors import PalimpsestError


@pytest.fixture()
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_inside_and_back_after_nested_blocks(collector_on: None) -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block still runs
    assert gc.isenabled()


def test_back_after_an_error(collector_on: None) -> None:
    with pytest.raises(KeyError), gc_paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_left_off_if_it_was_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_overlapping_blocks_on_two_threads(collector_on: None) -> None:
    """The first block to end leaves the collector off while the other still runs."""
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            inside.set()
            release.wait(5)

    t = threading.Thread(target=other)
    with gc_paused():
        t.start()
        assert inside.wait(5)
    assert not gc.isenabled()  # the other thread's block has not ended
    release.set()
    t.join(5)
    assert gc.isenabled()


def _items(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"subject": f"p{i}", "predicate": "likes", "object": "jazz"} for i in range(start, n)]


def test_a_large_assert_many_runs_without_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_on: None
) -> None:
    with Memory.open(tmp_path / "m", embedder=None) as mem:
        real = mem._writer.write_assertions
        seen: list[bool] = []

        def spy(*args: Any, **kwargs: Any) -> Any:
            seen.append(gc.isenabled())
            return real(*args, **kwargs)

        monkeypatch.setattr(mem._writer, "write_assertions", spy)
        mem.assert_many(_items(3))
        mem.assert_many(_items(GC_PAUSE_MIN))
        assert seen == [True, False]
        assert gc.isenabled()
        bad = [*_items(GC_PAUSE_MIN, 10**6), {"subject": "", "predicate": "likes", "object": "x"}]
        with pytest.raises(PalimpsestError):
            mem.assert_many(bad)
        assert gc.isenabled()
        assert len(mem.facts("p0")) == 1 and not mem.facts(f"p{10**6}")
