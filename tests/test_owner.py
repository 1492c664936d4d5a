"""Issue 29: a memory served by its owner to clients with the verbs of `Memory`.

    $ .venv/bin/pytest tests/test_owner.py -q

The owner runs in this process here (`Owner` over an open `Memory`, on a real
Unix socket), so each test is fast; tests/test_owner_processes.py runs owners,
MCP hosts and the CLI as real processes (races, SIGKILL, a second user).
"""

from __future__ import annotations

import io
import json
import os
import stat
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory
from palimpsest.errors import (
    Conflict,
    InvalidWindow,
    NaiveDatetime,
    NotFound,
    OwnerUnavailable,
    PalimpsestError,
)
from palimpsest.mcp.protocol import Result
from palimpsest.mcp.server import build_server
from palimpsest.owner import files, wire
from palimpsest.owner.client import OwnerClient
from palimpsest.owner.server import Owner

from .conftest import Clock
from .layers import at_once
from .mcp_session import _sorted, session


class Served:
    """A memory opened here and served by an `Owner` on its socket, as the owner
    process does (its lock held)."""

    def __init__(self, path: Path, clock: Clock, *, idle: float | None = None) -> None:
        self.path = path
        self.mem = Memory.open(path, clock=clock, extractor=None, embedder=None)
        self.fd = files.try_lock(path)
        assert self.fd is not None
        self.owner = Owner(self.mem, path, idle_timeout=idle, models=False)
        self.owner.start()

    def client(self, **kw: Any) -> OwnerClient:
        return OwnerClient(self.path, start=False, **kw)

    def restart(self) -> None:
        """Another owner on the same memory (as a new owner process would be)."""
        self.owner.stop()
        self.owner = Owner(self.mem, self.path, models=False)
        self.owner.start()

    def close(self) -> None:
        self.owner.stop()
        self.mem.close()
        if self.fd is not None:
            os.close(self.fd)


@pytest.fixture
def served(tmp_path: Path, clock: Clock) -> Iterator[Served]:
    s = Served(tmp_path / "mem", clock)
    try:
        yield s
    finally:
        s.close()


def test_the_client_answers_what_the_memory_answers(served: Served, clock: Clock) -> None:
    mem = served.mem
    with served.client() as c:
        assert c.pid == os.getpid() and c.models is False and c.path == served.path
        made = c.assert_fact("user", "lives_in", "Sydney", valid_from=clock.now - timedelta(1))
        clock.tick()
        c.end_fact("user", "lives_in", at=clock.now)
        clock.tick()
        c.assert_fact("user", "lives_in", "Perth")
        c.define_predicate("pet", "many", aliases=["has pet"])
        c.assert_many([{"subject": "user", "predicate": "has pet", "object": "Rex"}])
        clock.tick()
        assert made.id in {f.id for f in mem.history("user", "lives_in")}
        # the same models, equal field by field
        for verb, args, kw in [
            ("facts", ("user",), {}),
            ("facts", ("user", "lives_in"), {"known_at": clock.now - timedelta(seconds=2)}),
            ("history", ("user",), {}),
            ("entity", ("user",), {}),
            ("snapshot", (), {}),
            ("changes", (clock.now - timedelta(days=2),), {}),
            ("timeline", ("user", "lives_in"), {}),
            ("explain", (made.id,), {}),
            ("stats", (), {}),
            ("predicates", (), {}),
            ("namespaces", (), {}),
            ("find_entities", ("us",), {}),
            ("entity_ids", (["User", "nobody"],), {}),
            ("now", (), {}),
        ]:
            assert getattr(c, verb)(*args, **kw) == getattr(mem, verb)(*args, **kw), verb
        # errors keep their class and code
        with pytest.raises(NotFound) as e:
            c.retract("fa_nope")
        assert e.value.code == "not_found" and "fa_nope" in e.value.message
        with pytest.raises(NaiveDatetime):
            c.facts(valid_at="2024-01-01T00:00:00")
        with pytest.raises(InvalidWindow):
            c.changes(clock.now, clock.now - timedelta(days=1))
        # a bad call fails here, as a direct call would; an unknown verb is no attribute
        with pytest.raises(TypeError):
            c.facts("a", "b", "c", "d")
        with pytest.raises(TypeError):
            c.assert_fact("user", "likes", "tea", colour="red")
        with pytest.raises(AttributeError):
            c.drop_everything()
        assert {"remember", "recall", "graph_page", "consolidate"} <= set(dir(c))
        # a client is a context manager with the memory's verbs; closed, it says so
    with pytest.raises(PalimpsestError) as closed:
        c.facts()
    assert closed.value.code == "closed"


def test_each_client_has_its_own_default_namespace(served: Served) -> None:
    with served.client(namespace="alice") as a, served.client(namespace="bob") as b:
        a.assert_fact("user", "likes", "tea")
        b.assert_fact("user", "likes", "coffee")
        assert [f.object for f in a.facts("user")] == ["tea"]
        assert [f.object for f in b.facts("user")] == ["coffee"]
        assert [f.object for f in a.facts("user", namespace="bob")] == ["coffee"]
        assert a.stats().namespace == "alice"
    assert served.mem.namespace == "default" and served.mem.facts("user") == []
    assert [f.object for f in served.mem.facts("user", namespace="alice")] == ["tea"]


def test_callbacks_files_and_iterators_cross_the_socket(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mem = served.mem
    transcript = [
        json.dumps(
            {"speaker": "user", "text": f"note {i}", "occurred_at": f"2024-01-0{i}T10:00:00Z"}
        )
        for i in range(1, 6)
    ]
    seen: list[tuple[int, int]] = []
    with served.client() as c:
        got = c.import_transcript(transcript, batch=2, progress=lambda d, t: seen.append((d, t)))
        assert got["episodes"] == 5 and seen and seen[-1] == (5, 5)
        # an iterator result arrives whole, in order
        assert list(c.export_lines()) == list(mem.export_lines())
        # a file of this process is written through callbacks
        here, there = io.StringIO(), io.StringIO()
        assert c.export(here) == mem.export(there)
        assert here.getvalue() == there.getvalue()
        # a relative path names a file of this process, not of the owner
        monkeypatch.chdir(tmp_path)
        c.export("out.jsonl")
        assert (tmp_path / "out.jsonl").read_text() == there.getvalue()
        # lines to read (an open file) go as lines: the owner reads all five episodes
        # (and refuses to restore ids this memory holds, as it would in process)
        taken = pytest.raises(Conflict, match="5 Episode ids of this export already exist")
        with open(tmp_path / "out.jsonl", encoding="utf-8") as fh, taken:
            c.restore(fh, namespace="copy")


def test_a_closed_connection_is_replaced_and_a_restarted_owner_reached(served: Served) -> None:
    with served.client() as c:
        c.assert_fact("user", "likes", "tea")
        served.restart()  # the first owner says bye to the idle connection and goes
        assert [f.object for f in c.facts("user")] == ["tea"]  # a new connection
        served.owner.stop()
        with pytest.raises(OwnerUnavailable):  # none answers, and this client starts none
            c.facts("user")


def test_a_request_crossing_the_bye_is_sent_again(served: Served) -> None:
    """The owner stops while a request is on its way: the owner says `bye` without
    running it, and the client sends it again to the next owner."""
    with served.client() as c:
        link = c._pool[0]
        real_stale = link.stale
        link.stale = lambda: False  # type: ignore[method-assign]  # as if the bye had not arrived

        served.restart()
        time.sleep(0.1)
        assert real_stale()
        c.assert_fact("user", "likes", "tea")  # one fact, not two
    assert [f.object for f in served.mem.facts("user")] == ["tea"]
    assert len(served.mem.history("user")) == 1


def test_calls_from_many_threads_run_side_by_side(served: Served) -> None:
    with served.client() as c:

        def work(i: int) -> None:
            for j in range(10):
                c.assert_fact(f"t{i}", "likes", f"x{j}")
                assert len(c.facts(f"t{i}")) == j + 1

        errors = at_once(work, 6)
        assert not errors, errors
        assert 1 < len(c._pool) <= 6  # a connection a thread at once, kept for the next call
    assert served.mem.stats().assertions == 60


def test_an_idle_owner_stops_and_removes_its_socket(tmp_path: Path, clock: Clock) -> None:
    s = Served(tmp_path / "mem", clock, idle=0.3)
    try:
        sock = s.path / files.SOCKET
        assert stat.S_IMODE(sock.stat().st_mode) == 0o600
        with s.client() as c:
            time.sleep(0.8)  # a connection open: not idle
            assert not s.owner.stopped.is_set()
            c.stats()
        assert s.owner.stopped.wait(5)
        assert not sock.exists()
    finally:
        s.close()


def test_a_long_directory_path_is_reached_through_proc(tmp_path: Path, clock: Clock) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    assert len(str(deep / files.SOCKET)) > 108
    s = Served(deep, clock)
    try:
        with s.client() as c:
            c.assert_fact("user", "likes", "tea")
            assert [f.object for f in c.facts("user")] == ["tea"]
    finally:
        s.close()


def test_the_lock_file_names_its_live_holder_only(tmp_path: Path) -> None:
    d = tmp_path / "m"
    d.mkdir()
    assert files.read_holder(d) is None
    fd = files.try_lock(d)
    assert fd is not None and files.try_lock(d) is None  # one holder, this process too
    files.write_holder(fd, files.Holder(pid=4242, started_at="t", models=True))
    held = files.read_holder(d)
    assert held is not None and (held.pid, held.models, held.kind) == (4242, True, "owner")
    err = files.held(d)
    assert err is not None and err.code == "memory_locked"
    assert f"palimpsest.connect({str(d)!r})" in err.message and "4242" in err.message
    os.close(fd)  # the holder goes: its file stays, and names no one
    assert (d / files.LOCK).exists() and files.read_holder(d) is None and files.held(d) is None


def test_mcp_tools_answer_the_same_in_process_and_through_the_owner(
    tmp_path: Path,
) -> None:
    """The scripted memory-server session (tests/mcp_session.py) and the engine's tools,
    on a memory opened here and on one reached through its owner, step by step."""
    clocks = Clock(), Clock()
    local = Memory.open(tmp_path / "a", clock=clocks[0], extractor=None, embedder=None)
    remote = Served(tmp_path / "b", clocks[1])
    client = remote.client()
    try:
        here, there = build_server(local), build_server(client)  # type: ignore[arg-type]
        steps, _ = session()
        steps += [
            ("assert_fact", {"subject": "Mira", "predicate": "lives_in", "object": "Berlin"}),
            ("facts", {"subject": "Mira", "predicate": "lives_in"}),
            ("entity", {"name": "Theo"}),
            ("snapshot", {"limit": 5}),
            ("recall", {"query": "cello"}),
            ("facts", {"valid_at": "2024-01-01T00:00:00"}),  # an error, the same both ways
        ]
        for i, (tool, args) in enumerate(steps):
            a, b = _shown(here.call(tool, args)), _shown(there.call(tool, args))
            # observations sent in one call share a time: ids (random) order them
            assert a == b or _sorted(a) == _sorted(b), (i, tool, a, b)
            for c in clocks:
                c.tick()
    finally:
        client.close()
        remote.close()
        local.close()


def _shown(result: Result) -> Any:
    """What a tool answered (its data, or its text), its random ids blanked."""
    data = result.data if result.data is not None else result.text
    if isinstance(data, dict) and isinstance(data.get("types"), dict):
        # keyed by random ids, which blank alike: compare the types themselves
        data = {**data, "types": sorted(data["types"].values())}
    return _without_ids({"error": result.is_error, "data": data})


def _without_ids(value: Any) -> Any:
    """Results with their random ids (facts, episodes, entities) blanked."""
    text = json.dumps(value, sort_keys=True)
    for prefix in ("fa_", "fv_", "ep_", "en_", "as_"):
        parts = text.split(prefix)
        text = parts[0] + "".join(prefix + "#" + p.lstrip("0123456789abcdef") for p in parts[1:])
    return json.loads(text)


def test_wire_tags_round_trip() -> None:
    from palimpsest.engine.rows import UNSET

    calls: list[Any] = []
    when = Clock().now
    sent = wire.encode({"a": [when, UNSET, (1, 2)], "b": print}, calls, None)
    assert json.loads(json.dumps(sent)) == sent
    back = wire.decode(sent, lambda n, kind: calls[n])
    assert back == {"a": [when, UNSET, [1, 2]], "b": print}
    assert wire.load(["x", "y"], "Iterator[str]") == ["x", "y"]
    assert wire.load({"k": 1}, "SomeFutureModel") == {"k": 1}  # unknown types: as JSON
    err = wire.raised({"code": "not_found", "message": "no", "details": {"name": "x"}})
    assert isinstance(err, NotFound) and err.details == {"name": "x"}
    odd = wire.raised({"code": "brand_new_code", "message": "?"})
    assert type(odd) is PalimpsestError and odd.code == "brand_new_code"
