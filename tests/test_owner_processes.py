"""Issue 29 with real processes: MCP hosts, the CLI and owners sharing one memory.

    $ .venv/bin/pytest tests/test_owner_processes.py -q

Owners here are `python -m palimpsest.owner` processes started by the clients
(`palimpsest mcp`, `palimpsest.connect`, the CLI), as on a user's machine; each
test kills what it started. Speed and memory are measured in
bench/shared_memory.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from palimpsest import Memory, connect
from palimpsest.errors import MemoryLocked
from palimpsest.owner import files

from .layers import Host, at_once, mapped, owner_pids, served_memory

PY = sys.executable
HEAVY = ("kuzu", "torch", "spacy", "sentence_transformers", "thinc", "onnxruntime")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PALIMPSEST_OWNER_IDLE="20")
    env.update(extra)
    return env


def _scripts(script: str, path: Path, names: list[str]) -> list[subprocess.Popen[str]]:
    """`python -c script <path> <name>` for each name, started together."""
    return [
        subprocess.Popen(
            [PY, "-c", script, str(path), name],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]


@pytest.fixture
def reap() -> Iterator[Callable[[Path], Path]]:
    """Register memory directories; every owner process of theirs is killed at the end."""
    paths: list[Path] = []
    yield lambda p: paths.append(p) or p  # type: ignore[func-returns-value]
    for p in paths:
        for pid in owner_pids(p):
            with _suppress():
                os.kill(pid, signal.SIGKILL)


class _suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return True


def test_racing_clients_start_exactly_one_owner(
    tmp_path: Path, reap: Callable[[Path], Path]
) -> None:
    path = reap(tmp_path / "mem")
    script = (
        "import sys; from palimpsest import connect\n"
        "c = connect(sys.argv[1], models=False, idle_timeout=30)\n"
        "f = c.assert_fact(sys.argv[2], 'likes', 'tea')\n"
        "print(c.pid, f.id, flush=True); c.close()\n"
    )
    procs = _scripts(script, path, [f"client{i}" for i in range(6)])
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    pids = {int(out.split()[0]) for out, _ in outs}
    assert len(pids) == 1, outs  # every client reached the same owner
    assert owner_pids(path) == sorted(pids)
    with connect(path, start=False) as c:
        assert sorted(f.subject for f in c.facts(predicate="likes")) == [
            f"client{i}" for i in range(6)
        ]
    # an open Memory here is refused, naming the call that reaches the owner
    with pytest.raises(MemoryLocked, match=r"its owner process \(pid \d+\).*palimpsest\.connect"):
        Memory.open(path, extractor=None, embedder=None)

    # owner processes started at once: one owns, the others leave (status 0)
    other = reap(tmp_path / "other")
    argv = [
        PY,
        "-m",
        "palimpsest.owner",
        "--path",
        str(other),
        "--no-models",
        "--idle-timeout",
        "30",
    ]
    owners = [subprocess.Popen(argv, env=_env(), stderr=subprocess.DEVNULL) for _ in range(3)]
    deadline = time.monotonic() + 120
    while sum(p.poll() is None for p in owners) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in owners if p.poll() is None]
    assert len(left) == 1 and all(p.returncode == 0 for p in owners if p not in left)
    holder = files.read_holder(other)
    assert holder is not None and holder.pid == left[0].pid == owner_pids(other)[0]
    left[0].send_signal(signal.SIGTERM)
    assert left[0].wait(60) == 0 and files.read_holder(other) is None
    assert not (other / files.SOCKET).exists()  # a clean stop removes the socket


def test_sigkill_every_process_then_every_acknowledged_write_is_there(
    tmp_path: Path, reap: Callable[[Path], Path]
) -> None:
    path = reap(tmp_path / "mem")
    script = (
        "import sys; from palimpsest import connect\n"
        "c = connect(sys.argv[1], models=False, idle_timeout=60)\n"
        "i = 0\n"
        "while True:\n"
        "    f = c.assert_fact(sys.argv[2], 'likes', f'thing {i}')\n"
        "    print(f.id, flush=True)\n"
        "    i += 1\n"
    )
    writers = _scripts(script, path, ["writer0", "writer1"])
    acked: list[list[str]] = [[], []]

    def read(i: int) -> None:
        assert writers[i].stdout is not None
        for line in writers[i].stdout:
            acked[i].append(line.strip())

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(2)]
    for t in readers:
        t.start()
    deadline = time.monotonic() + 180
    while min(len(a) for a in acked) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert min(len(a) for a in acked) >= 30, acked
    old = owner_pids(path)
    assert len(old) == 1
    sock = path / files.SOCKET
    made = sock.stat().st_ctime_ns
    # SIGKILL to every process of the memory, writes under way
    for p in writers:
        p.kill()
    os.kill(old[0], signal.SIGKILL)
    for p in writers:
        p.wait(30)
    for t in readers:
        t.join(30)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{old[0]}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert owner_pids(path) == []
    # what a killed owner leaves: its socket and lock file, naming no one
    assert sock.exists() and (path / files.LOCK).exists() and files.read_holder(path) is None
    with connect(path, models=False, idle_timeout=30) as c:  # a new owner, on the stale files
        assert c.pid != old[0] and owner_pids(path) == [c.pid]
        assert sock.stat().st_ctime_ns > made  # the stale socket was replaced
        stored = {f.id for f in c.facts(predicate="likes")}
        for i in range(2):
            missing = set(acked[i]) - stored
            assert not missing, f"writer{i}: {len(missing)} of {len(acked[i])} acknowledged lost"
        assert c.assert_fact("after", "likes", "tea").status == "current"
        assert [f.object for f in c.facts("after")] == ["tea"]


def _throwaway_user() -> tuple[int, int, Callable[[], None]]:
    """(uid, gid, remove) of a user made for the test; skips where that is impossible."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a client as another user")
    name = f"plmp{os.getpid() % 100000}"
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    import pwd

    entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid, lambda: subprocess.run(["userdel", name], check=False)


# run as root to start Python (its files may be root's only), then as the other user
_AS_OTHER = """
import errno, json, os, socket, sys
import palimpsest.owner.client as client, palimpsest.owner.wire, palimpsest.owner.files
os.setgroups([]); os.setgid(int(sys.argv[3])); os.setuid(int(sys.argv[2]))
out = {"uid": os.getuid()}
try:
    client.OwnerClient(sys.argv[1], start=False)
    out["client"] = "connected"
except Exception as e:
    out["client"] = getattr(e, "code", type(e).__name__)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(os.path.join(sys.argv[1], "owner.sock"))
    s.settimeout(10)
    out["raw"] = "eof" if s.recv(65536) == b"" else "data"
except OSError as e:
    out["raw"] = errno.errorcode.get(e.errno or 0, str(e))
print(json.dumps(out))
"""


def test_another_user_can_neither_read_nor_write_through_the_socket(
    reap: Callable[[Path], Path],
) -> None:
    uid, gid, remove = _throwaway_user()
    base = Path(tempfile.mkdtemp(prefix="palimpsest-uid-"))
    try:
        base.chmod(0o755)  # the other user may walk to the socket: only its mode stops them
        path = reap(base / "mem")
        with connect(path, models=False, idle_timeout=60) as c:
            c.assert_fact("user", "password_hint", "blue")

            def as_other() -> dict[str, Any]:
                proc = subprocess.run(
                    [PY, "-c", _AS_OTHER, str(path), str(uid), str(gid)],
                    env=_env(),
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert proc.returncode == 0, proc.stderr
                return dict(json.loads(proc.stdout))

            # the socket is 0600: connecting is refused by the kernel
            got = as_other()
            assert got == {"uid": uid, "client": "memory_locked", "raw": "EACCES"}
            # even a socket opened to all: the owner checks who connects (SO_PEERCRED)
            # and hangs up before a word, and the client checks whose owner it is
            os.chmod(path / files.SOCKET, 0o666)
            got = as_other()
            assert got == {"uid": uid, "client": "memory_locked", "raw": "eof"}
            assert "refused a connection from another user" in (path / files.LOG).read_text()
            assert [f.object for f in c.facts("user")] == ["blue"]  # this user still is served
    finally:
        remove()
        subprocess.run(["rm", "-rf", str(base)], check=False)


_COLD_RECALL = """
import atexit, sys
heavy = sys.argv[1].split(",")
atexit.register(lambda: print("LOADED", sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
from palimpsest.cli import main
main(sys.argv[2:])
"""


@pytest.mark.models
def test_three_mcp_hosts_write_at_once_and_see_each_others_writes(
    tmp_path: Path, reap: Callable[[Path], Path]
) -> None:
    path = reap(tmp_path / "mem")
    hosts = [Host(path, tmp_path / f"host{i}.log", env=_env()) for i in range(3)]
    try:

        def work(i: int) -> None:
            h = hosts[i]
            for j in (f"t{n}" for n in range(8)):
                got = h.call("assert_fact", subject=f"host{i}", predicate="uses", object=j)
                assert got["status"] == "current"
            project = {"name": f"Project {i}", "entityType": "project"}
            h.call("create_entities", entities=[{**project, "observations": [f"by host {i}"]}])
            h.call("remember", text=f"Host {i} prefers green tea in the morning.")

        errors = at_once(work, 3)
        assert not errors, errors  # every write acknowledged
        for i, h in enumerate(hosts):  # each sees the others' writes
            for k in range(3):
                got = h.call("facts", subject=f"host{k}", predicate="uses")
                assert sorted(f["object"] for f in got["facts"]) == [f"t{j}" for j in range(8)]
            found = h.call("search_nodes", query="project")
            assert sorted(e["name"] for e in found["entities"]) == [
                f"Project {k}" for k in range(3)
            ]
            assert len(h.call("recall", query="green tea", k=10)["hits"]) >= 3, i
        owners = owner_pids(path)
        assert len(owners) == 1
        # a cold `palimpsest recall` beside them answers from the owner, loading no model
        proc = subprocess.run(
            [PY, "-c", _COLD_RECALL, ",".join(HEAVY), "--path", str(path),
             "recall", "green tea", "--json"],
            env=_env(), capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        hits, _, loaded = proc.stdout.rpartition("LOADED")
        assert "green tea" in hits and loaded.strip() == "[]", proc.stdout
        # the fronts mapped no Kùzu, torch, spaCy or onnxruntime library; the owner did
        for h in hosts:
            libs = mapped(h.proc.pid)
            assert not [x for x in HEAVY if f"/{x}/" in libs or f"lib{x}" in libs], h.proc.pid
        libs = mapped(owners[0])
        assert "kuzu" in libs and "torch" in libs and "spacy" in libs
    finally:
        codes = [h.close() for h in hosts]
    assert codes == [0, 0, 0]


def test_serve_fronts_a_running_owner_and_owns_a_free_memory(
    tmp_path: Path, reap: Callable[[Path], Path]
) -> None:
    import httpx

    path = reap(tmp_path / "mem")
    with connect(path, models=False, idle_timeout=60) as c:
        c.assert_fact("user", "lives_in", "Oslo")
        with served_memory(path) as port:  # `palimpsest serve` while the owner holds it
            base = f"http://127.0.0.1:{port}"
            got = httpx.get(f"{base}/v1/facts", params={"subject": "user"}).json()
            assert [f["object"] for f in got["items"]] == ["Oslo"]
            r = httpx.post(
                f"{base}/v1/facts", json={"subject": "user", "predicate": "likes", "object": "tea"}
            )
            assert r.status_code in (200, 201), r.text
            assert [f.object for f in c.facts("user", "likes")] == ["tea"]
            holder = files.read_holder(path)
            assert holder is not None and holder.kind == "owner" and holder.pid == c.pid
    # the owner gone, `palimpsest serve` owns the memory and serves this user's clients
    for pid in owner_pids(path):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while owner_pids(path) and time.monotonic() < deadline:
        time.sleep(0.1)
    with served_memory(path):
        holder = files.read_holder(path)
        assert holder is not None and holder.kind == "serve"
        with connect(path, start=False) as c:
            assert c.pid == holder.pid
            assert [f.object for f in c.facts("user", "likes")] == ["tea"]


def test_owner_commands_and_a_memory_a_script_holds(
    tmp_path: Path, reap: Callable[[Path], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    from palimpsest.errors import OwnerUnavailable
    from palimpsest.owner.client import OwnerClient

    from .layers import run_cli

    path = reap(tmp_path / "mem")
    # a script's open Memory shares nothing: a client is told so, and starts no owner
    with Memory.open(path, extractor=None, embedder=None):
        with pytest.raises(MemoryLocked, match="held by another process"):
            OwnerClient(path, models=False, idle_timeout=5)
        assert owner_pids(path) == [] and files.read_holder(path) is None
        assert "error [memory_locked]" in (path / files.LOG).read_text()
    with pytest.raises(OwnerUnavailable):  # and none runs to be reached
        OwnerClient(path, start=False)
    p = str(path)
    code, out, _ = run_cli(capsys, "--path", p, "owner", "status")
    assert (code, out.strip()) == (0, f"no process owns {p!r}")
    with connect(path, models=False, idle_timeout=60) as c:
        code, out, err = run_cli(capsys, "--path", p, "owner", "status", "--json")
        got = json.loads(out)
        assert (code, got["pid"], got["kind"], got["models"]) == (0, c.pid, "owner", False), err
        code, out, err = run_cli(capsys, "--path", p, "owner", "stop")
        assert (code, out.strip()) == (0, f"stopped pid {c.pid}"), err
        # stopped: the memory is released and the socket gone (the process then exits)
        assert files.read_holder(path) is None and not (path / files.SOCKET).exists()
        deadline = time.monotonic() + 60
        while owner_pids(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert owner_pids(path) == []
        c.assert_fact("user", "likes", "tea")  # the client's next call starts a new owner
        assert owner_pids(path) == [c.pid] and c.pid != got["pid"]
        assert [f.object for f in c.facts("user")] == ["tea"]
