"""`palimpsest serve` for real: a uvicorn process on a free loopback port, called with httpx."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from palimpsest import Memory
from palimpsest.api.tokens import create_token

STARTUP_S = 180.0  # `serve` loads spaCy and MiniLM before it answers: slow on a shared CPU
SHUTDOWN_S = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_healthy(proc: subprocess.Popen[str], base: str) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited early ({proc.returncode})")
        try:
            if httpx.get(f"{base}/v1/health", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"server not healthy within {STARTUP_S}s")


def test_serve_runs_uvicorn_answers_http_and_shuts_down_cleanly(tmp_path: Path) -> None:
    mem_path = tmp_path / "mem"
    tokens = tmp_path / "tokens.json"
    secret, _ = create_token(tokens, namespaces=["agent"])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env["HF_HUB_OFFLINE"] = "1"
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(mem_path), "serve",
            "--host", "127.0.0.1", "--port", str(port), "--tokens", str(tokens)]  # fmt: skip
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_healthy(proc, base)
        auth = {"Authorization": f"Bearer {secret}"}
        with httpx.Client(base_url=base, timeout=30.0) as http:
            r = http.post(
                "/v1/facts",
                headers=auth,
                json={"subject": "user", "predicate": "lives_in", "object": "Sydney",
                      "valid_from": "2024-06-01T00:00:00Z"},
            )  # fmt: skip
            assert r.status_code == 201, r.text
            assert r.json()["namespace"] == "agent"
            r = http.get("/v1/facts", headers=auth, params={"valid_at": "2024-09-01T00:00:00Z"})
            assert [f["object"] for f in r.json()["items"]] == ["Sydney"]
            r = http.get("/v1/facts")
            assert r.status_code == 401
            assert r.headers["content-type"] == "application/problem+json"
            r = http.get("/v1/facts", headers=auth, params={"valid_at": "2024-09-01T00:00:00"})
            assert (r.status_code, r.json()["code"]) == (422, "naive_datetime")

            def chunks() -> Iterator[bytes]:  # streamed: no Content-Length
                for _ in range(3):
                    yield b"x" * (1024 * 1024)

            r = http.post("/v1/facts", headers=auth, content=chunks())
            assert (r.status_code, r.json()["code"]) == (413, "too_large")
            assert http.get("/docs").status_code == 200
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=SHUTDOWN_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate(timeout=SHUTDOWN_S)
            raise AssertionError("server did not stop on SIGINT") from None
    assert "Application shutdown complete" in err, err
    assert "Traceback" not in err, err
    # the lifespan closed the memory: the directory opens again, with what was written
    with Memory.open(mem_path, namespace="agent", extractor=None) as mem:
        assert [
            f.object for f in mem.facts("user", "lives_in", valid_at="2024-09-01T00:00:00Z")
        ] == ["Sydney"]
