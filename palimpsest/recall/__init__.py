"""Hybrid recall: the embedder boundary, the ranking, and the collaborators behind it.

    >>> from palimpsest.recall import HashingEmbedder
    >>> HashingEmbedder().embed(["hello"]).shape
    (1, 384)

This package exports the embedders: `OnnxEmbedder` (the default, int8 MiniLM on
onnxruntime), `SentenceTransformerEmbedder` (fp32 MiniLM on torch, the `fp32`
extra) and `HashingEmbedder` (a test fake). Its collaborators, imported by `Memory`:
`recaller` (the `recall` verb), `index` (each namespace's in-process index, its
upkeep and invalidation), `_facts` (fact hits), `embed_worker` (write-time
vectors of names and statements), `reindex`. Pure parts: `ranking` (measured on
LoCoMo by `bench/locomo.py`), `_bm25`, `_vectors`, `_text`,
`_statements`, `_expand`, `_query_time`, `_mmr`, `_episode_rows`.
"""

from .embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder
from .onnx_embedder import OnnxEmbedder

__all__ = ["Embedder", "HashingEmbedder", "OnnxEmbedder", "SentenceTransformerEmbedder"]
