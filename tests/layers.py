"""Drivers for the front ends, shared by the cross-layer tests: the CLI in process, a
real `palimpsest serve` over a given memory, and `palimpsest mcp` over stdio with
the official MCP client (models on or off)."""

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
