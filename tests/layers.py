"""Drivers for the front ends, shared by the cross-layer tests: the CLI in process, a
real `palimpsest serve` over a given memory, `palimpsest mcp` over stdio with the
official MCP client (models on or off) or as a host starts it, in raw JSON-RPC
(`Host`), and the owner processes of a memory (`owner_pids`; bench/shared_memory.py
uses these too)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from palimpsest.cli import main

from .test_api_serve import SHUTDOWN_S, free_port, wait_healthy


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`palimpsest <argv>` in this process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as e:
        main([*argv])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    code = e.value.code if isinstance(e.value.code, int) else 1
    return code, out, err


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["PALIMPSEST_OWNER_IDLE"] = "3"  # an owner a test's process starts leaves soon after
    return env


@contextmanager
def served_memory(mem_path: Path) -> Iterator[int]:
    """`palimpsest serve` (uvicorn, models as shipped, no schedule) holding `mem_path`
    on a free loopback port; yields the port. Stopped with SIGINT, as a user would."""
    port = free_port()
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(mem_path), "serve",
            "--port", str(port), "--no-consolidate"]  # fmt: skip
    proc = subprocess.Popen(
        argv, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}")
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=SHUTDOWN_S)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            _, err = proc.communicate(timeout=SHUTDOWN_S)
        assert "Traceback" not in err, err


def _console_script() -> str:
    exe = Path(sys.executable).parent / "palimpsest"
    found = str(exe) if exe.exists() else shutil.which("palimpsest")
    if found is None:  # pragma: no cover - the package is installed in the test venv
        pytest.skip("the palimpsest console script is not installed")
    return found


def mcp_session(
    path: Path, body: Callable[[Any], Awaitable[None]], *, models: bool, timeout: float = 300
) -> None:
    """Start `palimpsest mcp --path <path>` (with `--no-models` unless `models`) as a
    subprocess and run `body(session)` against it over stdio."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["mcp", "--path", str(path), *([] if models else ["--no-models"])]
    params = StdioServerParameters(command=_console_script(), args=args, env=_env())

    async def run() -> None:
        with (path.parent / "mcp-server.log").open("w") as log, anyio.fail_after(timeout):
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await body(session)

    anyio.run(run)


async def mcp_tool(session: Any, tool: str, **arguments: Any) -> Any:
    """Call an engine tool; its structured result (the JSON text says the same)."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


def at_once(work: Callable[[int], None], n: int, timeout: float = 600) -> list[BaseException]:
    """Run `work(0)` ... `work(n - 1)` on threads of their own, together; what they raised."""
    import threading

    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            work(i)
        except BaseException as e:  # returned to the caller
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return errors


def owner_pids(path: Path) -> list[int]:
    """Every `palimpsest.owner` process of the directory (read from /proc)."""
    want = str(path.absolute())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = [a.decode(errors="replace") for a in args]
        if "palimpsest.owner" in text and want in text:
            found.append(int(entry.name))
    return sorted(found)


def mapped(pid: int) -> str:
    """The files a process has mapped: the shared libraries it loaded."""
    return Path(f"/proc/{pid}/maps").read_text()


class Host:
    """`palimpsest mcp --path P` started as an MCP host starts it, spoken to in raw
    JSON-RPC over its stdin and stdout."""

    def __init__(self, path: Path, log: Path, *, env: dict[str, str] | None = None) -> None:
        self._log = log.open("w")
        self.proc = subprocess.Popen(
            [_console_script(), "mcp", "--path", str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env if env is not None else _env(),
        )
        self._id = 0
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test-host", "version": "1"},
            },
        )
        assert init["result"]["serverInfo"]["name"] == "palimpsest"
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert len(self.request("tools/list", {})["result"]["tools"]) > 10

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._id += 1
        self.send({"jsonrpc": "2.0", "id": self._id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the host's server hung up"
            reply = json.loads(line)
            if reply.get("id") == self._id:
                return dict(reply)

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.request("tools/call", {"name": tool, "arguments": arguments})["result"]
        assert not result["isError"], (tool, result["content"][0]["text"])
        return dict(result.get("structuredContent") or {})

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(60)
        self._log.close()
        return code
