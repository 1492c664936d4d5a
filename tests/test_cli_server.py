"""The CLI while `palimpsest serve` holds the memory: it names the server, not a lock error."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from palimpsest import Memory
from palimpsest.api.address import ADDRESS_FILE, read_address, remove_address, write_address

from .layers import run_cli
from .test_api_serve import SHUTDOWN_S, free_port, wait_healthy


@contextmanager
def serve(tmp_path: Path, *extra: str) -> Iterator[tuple[Path, int, subprocess.Popen[str]]]:
    mem_path = tmp_path / "mem"
    with Memory.open(mem_path, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["HF_HUB_OFFLINE"] = "1"
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(mem_path), "serve",
            "--port", str(port), "--no-consolidate", *extra]  # fmt: skip
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}")
        yield mem_path, port, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=SHUTDOWN_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            proc.communicate(timeout=SHUTDOWN_S)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, int, subprocess.Popen[str]]]:
    with serve(tmp_path) as running:
        yield running


def test_reads_through_a_server_with_tokens_need_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.api.tokens import create_token

    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, namespaces=["default"], rights="read")
    with serve(tmp_path, "--tokens", str(tokens)) as (mem_path, _port, _proc):
        monkeypatch.delenv("PALIMPSEST_TOKEN", raising=False)
        # this user reaches the server's socket (tests/test_owner.py); a process that
        # cannot (another user) goes over HTTP, where the server's tokens apply
        code, out, err = run_cli(capsys, "--path", str(mem_path), "facts", "--json")
        assert code == 0, err
        assert [f["object"] for f in json.loads(out)] == ["Sydney"]
        monkeypatch.setattr("palimpsest.cli.common.reach_owner", lambda *a, **k: None)
        code, _, err = run_cli(capsys, "--path", str(mem_path), "facts", "--json")
        assert code == 2
        assert err.startswith("error [memory_locked]: ") and "PALIMPSEST_TOKEN" in err, err
        monkeypatch.setenv("PALIMPSEST_TOKEN", secret)
        code, out, err = run_cli(capsys, "--path", str(mem_path), "facts", "--json")
        assert code == 0, err
        assert [f["object"] for f in json.loads(out)] == ["Sydney"]


def test_commands_name_the_server_holding_the_memory(
    served: tuple[Path, int, subprocess.Popen[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    mem_path, port, proc = served
    addr = read_address(mem_path)
    assert addr is not None
    assert (addr.host, addr.port, addr.pid) == ("127.0.0.1", port, proc.pid)
    named = (
        f"error [memory_locked]: the memory at {str(mem_path)!r} is held by a palimpsest "
        f"server at http://127.0.0.1:{port} (pid {proc.pid}); use the HTTP API or stop the server"
    )
    # reads go through the server and print what a local read prints
    code, out, err = run_cli(capsys, "--path", str(mem_path), "facts", "user", "lives_in", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["Sydney"]
    code, out, err = run_cli(capsys, "--path", str(mem_path), "history", "user", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["Sydney"]
    code, out, err = run_cli(capsys, "--path", str(mem_path), "stats", "--json")
    assert code == 0, err
    assert json.loads(out)["versions"] == 1
    code, out, err = run_cli(
        capsys, "--path", str(mem_path), "snapshot", "--valid-at", "2025-01-01T00:00:00Z"
    )
    assert code == 0, err
    assert "Sydney" in out
    # an engine error keeps its code through the server
    code, out, err = run_cli(
        capsys, "--path", str(mem_path), "facts", "--valid-at", "2024-01-01T00:00:00"
    )
    assert code == 2
    assert err.startswith("error [naive_datetime]: "), err

    # writes go through the server too: nobody is told to stop it to add a fact
    p = str(mem_path)
    code, out, err = run_cli(capsys, "--path", p, "assert", "user", "likes", "tea", "--json")
    assert code == 0, err
    tea = json.loads(out)
    assert (tea["object"], tea["status"]) == ("tea", "current")
    code, out, err = run_cli(capsys, "--path", p, "facts", "user", "likes", "--json")
    assert [f["object"] for f in json.loads(out)] == ["tea"]
    code, out, err = run_cli(capsys, "--path", p, "retract", tea["id"], "--reason", "typo")
    assert code == 0 and out.startswith(f"retracted {tea['id']}"), err
    code, out, err = run_cli(capsys, "--path", p, "facts", "user", "likes", "--json")
    assert json.loads(out) == []
    code, _, err = run_cli(capsys, "--path", p, "retract", "fa_nope")
    assert code == 2 and err.startswith("error [not_found]: "), err
    code, out, err = run_cli(
        capsys, "--path", p, "assert", "user", "born_in", "Oslo", "--from", "always", "--json"
    )
    assert code == 0 and json.loads(out)["valid_from"] is None, err
    code, out, err = run_cli(
        capsys, "--path", p, "end", "user", "lives_in", "--at", "2025-01-01T00:00:00Z", "--json"
    )
    assert code == 0 and json.loads(out)["applied"] is True, err
    code, out, err = run_cli(capsys, "--path", p, "remember", "I adopted a cat.", "--json")
    assert code == 0 and json.loads(out)["text"] == "I adopted a cat.", err
    code, out, err = run_cli(
        capsys, "--path", p, "define-predicate", "pet", "--cardinality", "many", "--json"
    )
    assert code == 0 and json.loads(out)["name"] == "pet", err
    code, out, err = run_cli(capsys, "--path", p, "erase", tea["id"], "--json")
    assert code == 0 and [t["id"] for t in json.loads(out)] == [tea["id"]], err

    # every verb goes through the server's owner socket, those HTTP does not offer too
    facts_file = mem_path.parent / "facts.jsonl"
    facts_file.write_text('{"subject": "guest", "predicate": "likes", "object": "rain"}\n')
    code, out, err = run_cli(capsys, "--path", str(mem_path), "consolidate", "--json")
    assert code == 0 and "counts" in json.loads(out), err
    code, out, err = run_cli(
        capsys, "--path", str(mem_path), "import", str(facts_file), "--format", "facts"
    )
    assert (code, out.strip()) == (0, "imported 1 facts"), err
    code, out, err = run_cli(capsys, "--path", str(mem_path), "facts", "guest", "--json")
    assert [f["object"] for f in json.loads(out)] == ["rain"]
    code, out, err = run_cli(capsys, "--path", str(mem_path), "owner", "status", "--json")
    assert (json.loads(out)["kind"], json.loads(out)["pid"]) == ("serve", proc.pid), err

    # a second server on the same directory is refused with the same message
    code, _, err = run_cli(capsys, "--path", str(mem_path), "serve", "--port", str(free_port()))
    assert code == 2
    assert err.strip() == named

    # a clean shutdown removes the record, and the CLI opens the memory again
    proc.send_signal(signal.SIGINT)
    _, server_err = proc.communicate(timeout=SHUTDOWN_S)
    assert "Traceback" not in server_err, server_err
    assert not (mem_path / ADDRESS_FILE).exists()
    code, out, err = run_cli(capsys, "--path", p, "facts", "user", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["Oslo"]  # what went through the server
    code, out, err = run_cli(capsys, "--path", p, "history", "user", "lives_in", "--json")
    assert "ended" in [f["status"] for f in json.loads(out)]
    code, _, err = run_cli(capsys, "--path", str(mem_path), "assert", "user", "likes", "tea")
    assert code == 0, err


def test_a_stale_record_is_ignored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mem_path = tmp_path / "mem"
    with Memory.open(mem_path, extractor=None, embedder=None) as mem:
        mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (mem_path / ADDRESS_FILE).write_text(
        json.dumps({"host": "127.0.0.1", "port": 9, "pid": dead.pid, "started_at": "x"})
    )
    assert read_address(mem_path) is None
    code, out, err = run_cli(capsys, "--path", str(mem_path), "facts", "user", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["Sydney"]


def test_address_record_round_trip_and_ownership(tmp_path: Path) -> None:
    write_address(tmp_path, "::1", 8123)
    addr = read_address(tmp_path)
    assert addr is not None and addr.pid == os.getpid()
    assert addr.url == "http://[::1]:8123"
    (tmp_path / ADDRESS_FILE).write_text(json.dumps({"host": "h", "port": 1, "pid": 1}))
    remove_address(tmp_path)  # another process's record: left alone
    assert (tmp_path / ADDRESS_FILE).exists()
    (tmp_path / ADDRESS_FILE).write_text("{not json")
    assert read_address(tmp_path) is None


@pytest.mark.parametrize(
    ("flags", "field"),
    [(["--consolidate-at", "25:00"], "consolidate_at"), (["--timezone", "Mars/Base"], "timezone")],
)
def test_serve_refuses_a_bad_schedule_before_starting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], field: str
) -> None:
    code, _, err = run_cli(capsys, "--path", str(tmp_path / "mem"), "serve", *flags)
    assert code == 2
    assert err.startswith(f"error [invalid_input]: {field}: "), err
    assert not (tmp_path / "mem").exists()


def test_wildcard_binds_are_reached_on_loopback(tmp_path: Path) -> None:
    write_address(tmp_path, "0.0.0.0", 8123)
    addr = read_address(tmp_path)
    assert addr is not None and addr.url == "http://127.0.0.1:8123"
