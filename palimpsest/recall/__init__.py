"""Hybrid recall: the embedder boundary and the pure ranking functions.

    >>> from palimpsest.recall import HashingEmbedder
    >>> HashingEmbedder().embed(["hello"]).shape
    (1, 384)

Wiring into `Memory.recall` (vector cache, Kùzu full-text, graph expansion)
is the next step of issue 4; the ranking here was measured on LoCoMo by
`bench/locomo_prototype.py`.
"""

from .embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder

__all__ = ["Embedder", "HashingEmbedder", "SentenceTransformerEmbedder"]
