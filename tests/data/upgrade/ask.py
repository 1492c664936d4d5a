"""The questions asked of the upgrade memory, through the public API only, so the
release that wrote it and today's code answer them the same way.

>>> answers = ask(mem, known_at_marks)      # JSON-ready: facts, history, snapshot, ...
"""

from __future__ import annotations

from typing import Any

VALID = ("2023-06-01T00:00:00Z", "2024-09-01T00:00:00Z", "2025-06-01T00:00:00Z")


def _iso(t: Any) -> str | None:
    return None if t is None else t.isoformat()


def ask(m: Any, marks: list[str]) -> list[dict[str, Any]]:
    """Facts at three valid times as known at each mark, the user's history, a past
    snapshot, a words-only recall and the counts."""
    out: list[dict[str, Any]] = []
    for v in VALID:
        for k in marks:
            facts = sorted(
                [f.subject, f.predicate, f.object, _iso(f.valid_from), _iso(f.valid_to), f.status]
                for f in m.facts(valid_at=v, known_at=k)
            )
            out.append({"call": "facts", "valid_at": v, "known_at": k, "answer": facts})
    history = sorted([f.predicate, f.object, f.status] for f in m.history("user"))
    out.append({"call": "history", "subject": "user", "answer": history})
    snap = m.snapshot(valid_at=VALID[1], known_at=marks[1])
    triples = sorted([f.subject, f.predicate, f.object] for f in snap.facts)
    out.append({"call": "snapshot", "valid_at": VALID[1], "known_at": marks[1], "answer": triples})
    hits = m.recall("Tofu the cat", k=5, min_score=0)
    texts = sorted(h.text for h in hits if h.kind == "episode")
    out.append({"call": "recall", "query": "Tofu the cat", "answer": texts})
    st = m.stats()
    counts = {"versions": st.versions, "assertions": st.assertions, "episodes": st.episodes}
    out.append({"call": "stats", "answer": {**counts, "entities": st.entities}})
    return out
