"""The OpenAPI document tells the truth: schemathesis against a real `palimpsest serve`.

The same run a user would make (the server's defaults: spaCy and MiniLM loaded, a
fresh memory on disk, real uvicorn), with every check and 25 examples per operation,
derandomised so that CI meets the same requests every time:

    palimpsest --path /tmp/mem serve --port 8716
    schemathesis --config-file tests/schemathesis.toml run \\
        http://127.0.0.1:8716/openapi.json --checks all -n 25 --generation-deterministic

Any failure fails the test: a status or content type a route returns but does not
document, a response its schema rejects, a request the schema allows but the server
refuses (or the reverse), a 5xx, a time-out. tests/schemathesis.toml configures one
thing, the rule no JSON Schema can state (a window does not end before it starts), taught
to the generator of valid requests by tests/openapi_rules.py; no check is turned off or
given other expectations (a value over a bound the schema states is a 422, as any other
schema violation; 413 is only for a body over the server's byte limit). Without that
rule, the same run finds only `invalid_window` refusals of generated reversed windows.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .test_api_serve import free_port, wait_healthy

ROOT = Path(__file__).resolve().parent.parent
RUN_S = 900  # measured about 45-90 s on 2 shared cores; the bound only stops a hang


def _schemathesis() -> str:
    found = shutil.which("schemathesis", path=str(Path(sys.executable).parent))
    if found is None:  # pragma: no cover - the dev extra installs it
        pytest.fail("schemathesis is not installed (make setup installs the dev extra)")
    return found


def test_schemathesis_finds_nothing_against_a_real_server(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    argv = [sys.executable, "-m", "palimpsest.cli", "--path", str(tmp_path / "mem"),
            "serve", "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    server = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_healthy(server, base)
        config = str(ROOT / "tests" / "schemathesis.toml")
        argv = [_schemathesis(), "--config-file", config, "--no-color", "run",
                f"{base}/openapi.json", "--checks", "all", "--max-examples", "25",
                "--generation-deterministic"]  # fmt: skip
        run = subprocess.run(
            argv,
            cwd=ROOT,
            env={**env, "SCHEMATHESIS_REPORT_DIR": str(tmp_path / "report")},
            capture_output=True,
            text=True,
            timeout=RUN_S,
        )
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung shutdown
            server.kill()
            server.wait()
    out = run.stdout + run.stderr
    summary = out[out.rfind("SUMMARY") :] if "SUMMARY" in out else out[-3000:]
    assert run.returncode == 0, f"schemathesis exit {run.returncode}:\n{out[-12000:]}"
    selected = re.search(r"Selected: (\d+)/(\d+)", summary)
    tested = re.search(r"Tested: (\d+)", summary)
    assert selected and tested, summary
    assert selected[1] == selected[2] == tested[1], summary  # every operation was reached
    cases = re.search(r"(\d+) generated, (\d+) passed", summary)
    assert cases and cases[1] == cases[2], summary  # 0 failures, every case counted as passed


def test_bad_writes_store_nothing(tmp_path: Path) -> None:
    """Hand-made bad writes (broken JSON, a batch with one bad item, a naive time, a
    reversed window) are refused as problems, and none of them stored anything."""
    from fastapi.testclient import TestClient

    from palimpsest.api import create_app
    from palimpsest.api.problems import PROBLEM_JSON

    app = create_app(tmp_path / "mem", extractor=None, embedder=None)
    good = {"subject": "user", "predicate": "lives_in", "object": "Sydney"}
    bad_writes: list[tuple[str, Any]] = [
        ("/v1/facts", {**good, "valid_from": "2024-06-01T00:00:00"}),  # naive
        ("/v1/facts", {**good, "valid_from": "2025-01-01Z", "valid_to": "2024-01-01Z"}),
        ("/v1/facts", {**good, "valid_from": "2025-01-01T00:00:00Z", "valid_to": "2024-01-01Z"}),
        ("/v1/facts", {**good, "subject": "a\x00b"}),
        ("/v1/facts", {**good, "confidence": True}),  # strict: a boolean is not a number
        ("/v1/facts:batch", {"items": [good, {**good, "valid_to": "not a time"}]}),
        ("/v1/facts:batch", {"items": [good, {**good, "predicate": "0bad"}]}),
        ("/v1/episodes:batch", {"items": [{"text": "hi"}, {"text": "x", "occurred_at": "x"}]}),
        ("/v1/episodes", {"text": "hi", "importance": 2}),
        ("/v1/episodes", {"text": "hi", "importance": False}),
        ("/v1/episodes", {"text": "hi\x00"}),
        ("/v1/episodes", {"text": "hi", "occurred_at": "0001-01-01T00:00:00Z"}),
        ("/v1/facts:end", {"subject": "user", "predicate": "lives_in", "at": "soon"}),
    ]
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        before = c.get("/v1/stats").json()
        sent = [(f"POST {url} {body}", c.post(url, json=body)) for url, body in bad_writes]
        json_type = {"content-type": "application/json"}
        broken = c.post("/v1/facts", content=b'{"subject": "user",', headers=json_type)
        sent.append(("POST /v1/facts (broken JSON)", broken))
        for where, r in sent:
            assert r.status_code in (400, 413, 422), (where, r.text)
            assert r.headers["content-type"] == PROBLEM_JSON, where
            problem = r.json()
            assert problem["status"] == r.status_code, (where, problem)
            assert problem["type"] == "urn:palimpsest:problem:" + problem["code"], where
        assert c.get("/v1/stats").json() == before
        assert c.get("/v1/history", params={"subject": "user"}).json() == []
