"""The files the defaults read, shipped inside the package (and so inside the wheel).

    >>> (DATA / "predicates.json").is_file()
    True

`predicates.json`: the default predicate vocabulary (`engine/vocabulary.py`);
`demo_conversation.jsonl`: the conversation `palimpsest demo` walks through;
`minilm/tokenizer.json`: all-MiniLM-L6-v2's tokenizer (`recall/onnx_embedder.py`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["DATA"]

DATA = Path(__file__).resolve().parent
