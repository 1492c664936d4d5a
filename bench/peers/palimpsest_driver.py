"""Palimpsest behind bench/peers.py's driver protocol, at the defaults a user gets.

>>> # .venv/bin/python bench/peers/palimpsest_driver.py   # spoken to by bench/peers.py

`Memory.open(path, clock=...)` with every other argument at its default (the
spaCy extractor, MiniLM, the default namespace); the clock stands where
bench/locomo.py puts it, one day after the conversation's last session, when
LoCoMo's questions are asked. The turns go in through one `remember_many` call,
as bench/locomo.py feeds them (`palimpsest.transfer.parse_locomo`'s items:
speaker, session, `dia_id` as source, the session date plus a few seconds a
turn as `occurred_at`). Search is `recall(query, k=k)`, nothing else, unless the
open options carry `min_score` (the labelled variant). A hit's turns are its
episode's `dia_id`, or for a fact hit the `dia_id`s of its evidence episodes.
"""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _wire import serve

from palimpsest import Memory
from palimpsest.models import Hit


class PalimpsestDriver:
    def __init__(self) -> None:
        self._mem: Memory | None = None
        self._min_score: float | None = None
        self._source: dict[str, str] = {}  # episode id -> dia_id

    def info(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "system": "palimpsest",
            "versions": {"palimpsest": version("palimpsest"), "kuzu": version("kuzu")},
            "config": (
                "Memory.open(path, clock=<one day after the last session>), all else default"
                " (extractor='spacy', embedder='minilm'); remember_many(parse_locomo items);"
                " recall(q, k=k)"
            ),
        }

    def open(self, path: str, conv_id: str, now: str, options: dict[str, Any]) -> None:
        at = datetime.fromisoformat(now)
        self._mem = Memory.open(path, clock=lambda: at)
        self._min_score = options.get("min_score")
        self._source = {}

    def ingest(self, turns: list[dict[str, Any]]) -> None:
        assert self._mem is not None
        items = [
            {
                "text": t["text"],
                "speaker": t["speaker"],
                "author_kind": "user",
                "occurred_at": datetime.fromisoformat(t["occurred_at"]),
                "session": t["session"],
                "source": t["dia_id"],
            }
            for t in turns
        ]
        for ep in self._mem.remember_many(items):
            if ep.source:
                self._source[ep.id] = ep.source

    def search(self, query: str, k: int) -> list[Hit]:
        assert self._mem is not None
        if self._min_score is None:
            return self._mem.recall(query, k=k)
        return self._mem.recall(query, k=k, min_score=self._min_score)

    def hits(self, answer: list[Hit]) -> list[dict[str, Any]]:
        out = []
        for h in answer:
            if h.kind == "episode":
                turns = [h.source] if h.source else []
            else:
                turns = [self._source[e] for e in h.evidence if e in self._source]
            derived = h.kind != "episode"  # a fact's turns are the episodes it came from
            out.append({"turns": turns, "kind": h.kind, "score": h.score, "derived": derived})
        return out

    def check(self, turns: list[dict[str, Any]]) -> dict[str, Any]:
        import os

        assert self._mem is not None and self._mem._index.embedder is not None
        return {
            "episodes": len(self._source),
            "embedder": self._mem._index.embedder.identity(),
            "cpus": len(os.sched_getaffinity(0)),
        }

    def close(self) -> None:
        if self._mem is not None:
            self._mem.close()
            self._mem = None


if __name__ == "__main__":
    serve(PalimpsestDriver())
