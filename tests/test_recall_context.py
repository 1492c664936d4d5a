"""An episode's context vector: the unit mean of its own vector and its previous turn's,
weighted by their word counts, with each distinct text encoded once.

    >>> emb, ctx = episode_vectors(embedder, rows, prevs)
"""

from __future__ import annotations

import numpy as np

from palimpsest.recall import HashingEmbedder
from palimpsest.recall._episode_rows import episode_vectors

from .test_embed_writes import Counting


def test_the_context_is_the_word_weighted_unit_mean_of_the_two_turns() -> None:
    emb = Counting()
    a = {"text": "my flight to Lisbon leaves on Friday"}  # 7 words
    b = {"text": "send pictures"}  # 2 words
    c = {"text": "of the tiles"}  # 3 words
    own, ctx = episode_vectors(emb, [a, b, c], [None, a, b])
    assert sorted(emb.texts) == sorted(t["text"] for t in (a, b, c))  # each once
    va, vb, vc = (HashingEmbedder().embed([t["text"]])[0] for t in (a, b, c))
    assert np.allclose(own, np.stack([va, vb, vc]), atol=1e-6)
    assert np.allclose(ctx[0], va / np.linalg.norm(va), atol=1e-6)  # no previous turn
    for got, mine, n, theirs, m in ((ctx[1], vb, 2, va, 7), (ctx[2], vc, 3, vb, 2)):
        want = n * mine + m * theirs
        assert np.allclose(got, want / np.linalg.norm(want), atol=1e-6)
        assert abs(float(np.linalg.norm(got)) - 1.0) < 1e-5


def test_a_previous_turn_outside_the_batch_is_encoded_with_it_once() -> None:
    emb = Counting()
    prev = {"text": "the tiles in Porto"}
    rows = [{"text": "blue and white"}, {"text": "blue and white"}]
    _, ctx = episode_vectors(emb, rows, [prev, prev])
    assert sorted(emb.texts) == ["blue and white", "the tiles in Porto"]
    assert np.allclose(ctx[0], ctx[1])
