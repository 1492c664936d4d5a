"""Compartment (PyPI `compartment`) behind bench/peers.py's driver protocol.

>>> # ~/.cache/palimpsest-bench/venvs/compartment/bin/python bench/peers/compartment_driver.py

One vault per conversation, `Vault.create(path, passphrase)`. Each turn goes in
the way Compartment's own chat integration captures one (its authored path
refuses a quarter of LoCoMo's turns at 200 characters):
`Vault.store(f"{speaker}: {text}", caller="user", namespace=<conversation>,
tags=[speaker, session, dia_id],
importance=compartment.salience.assess_turn(text).importance,
created=<turn time>, _gate=False)`. Search is
`Vault.search(query, caller="user", top_k=k)`. The open option
`recency_half_life_share` (0 turns its recency prior off) is written to the
vault's settings before the first store; otherwise every setting is Compartment's
default, including the shared embedding daemon it starts on first use
(its socket lives in this run's own session directory, `COMPARTMENT_SESSION_DIR`,
and `exit` ends that daemon by its pid).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compartment
from _wire import serve
from compartment import salience
from compartment.embed import intra_op_threads
from compartment.vault import Vault

_DIA = re.compile(r"D\d+:\d+")
PASSPHRASE = "palimpsest-bench-passphrase"


class CompartmentDriver:
    def __init__(self) -> None:
        self._vault: Any = None
        self._ns = ""
        self._daemon: int | None = None

    def info(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "system": "compartment",
            "versions": {
                "compartment": compartment.__version__,
                "onnxruntime": version("onnxruntime"),
            },
            "config": (
                "Vault.create(path, passphrase); per turn Vault.store(f'{speaker}: {text}',"
                " caller='user', namespace=<conv>, tags=[speaker, session, dia_id],"
                " importance=salience.assess_turn(text).importance, created=<turn time>,"
                " _gate=False); Vault.search(q, caller='user', top_k=k)"
            ),
        }

    def open(self, path: str, conv_id: str, now: str, options: dict[str, Any]) -> None:
        Path(path).mkdir(parents=True)
        vault_path = str(Path(path) / "bench.vault")
        self._vault = Vault.create(vault_path, PASSPHRASE)
        if "recency_half_life_share" in options:
            self._vault.config.settings["recency_half_life_share"] = options[
                "recency_half_life_share"
            ]
            self._vault.config.save(vault_path)
        self._ns = conv_id

    def ingest(self, turns: list[dict[str, Any]]) -> None:
        for t in turns:
            self._vault.store(
                f"{t['speaker']}: {t['text']}",
                caller="user",
                namespace=self._ns,
                tags=[t["speaker"], t["session"], t["dia_id"]],
                importance=salience.assess_turn(t["text"]).importance,
                created=datetime.fromisoformat(t["occurred_at"]).timestamp(),
                _gate=False,
            )

    def search(self, query: str, k: int) -> dict[str, Any]:
        return self._vault.search(query, caller="user", top_k=k)  # type: ignore[no-any-return]

    def hits(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for r in answer["results"]:
            turns = [tag for tag in r["tags"] if _DIA.fullmatch(tag)]
            out.append({"turns": turns, "kind": r.get("kind", "fact"), "score": r["score"]})
        return out

    def helper_pids(self) -> list[int]:
        """The embedding daemon, whose CPU an ingest's stores spend (known once the
        warm-up memory closed)."""
        return [self._daemon] if self._daemon else []

    def check(self, turns: list[dict[str, Any]]) -> dict[str, Any]:
        status = self._vault.status(caller="user")
        self._daemon = status["embedder"].get("daemon_pid") or self._daemon
        return {
            "records": status["records"],
            "recency_half_life_share": self._vault._recency_half_life(),
            "embedder": status["embedder"],
            "index": status["index"],
            "onnx_threads": intra_op_threads() or "onnxruntime's choice",
            "cpus": len(os.sched_getaffinity(0)),
        }

    def close(self) -> None:
        if self._vault is not None:
            self._daemon = self._vault.status()["embedder"].get("daemon_pid") or self._daemon
            self._vault.lock()
            self._vault = None

    def end(self) -> None:
        """End the embedding daemon this process started (it would idle on for minutes)."""
        if self._daemon:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._daemon, signal.SIGTERM)


if __name__ == "__main__":
    driver = CompartmentDriver()
    try:
        serve(driver)
    finally:
        driver.end()
