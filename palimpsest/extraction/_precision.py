"""The learned precision gate: a logistic regression over ``_gate_features``, stored as JSON.

>>> gate = PrecisionGate.load()                                      # doctest: +SKIP
>>> gate.judge(fact, features(doc, fact, span, speaker="Ana", addressee="Bo")).doubt
'the precision gate rates this reading 0.21 (it needs 0.55): the sentence is a question'

The weights (``data/gate.json``) are plain numbers fitted by
``bench/train_gate.py`` on hand-judged development facts (LoCoMo conv-26/30/41/
42/43; the rule they were judged by is ``bench/data/precision_rule.md``), with
the threshold chosen on held-out folds. Reading them needs numpy only: no
pickle, no scikit-learn. A fact the gate rates below its threshold is kept but
held (``CandidateFact.doubt`` says why); the engine stores it quarantined.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ._gate_features import feature_names
from ._types import CandidateFact

__all__ = ["GATE_WEIGHTS", "PrecisionGate", "default_gate"]

GATE_WEIGHTS = Path(__file__).parent / "data" / "gate.json"
# Words for the features that lower a rating, shown on the review page.
_WHY = {
    "mood_question": "the sentence is a question",
    "mood_can": "'can' or 'could' comes before it",
    "mood_would": "a modal ('would', 'should', 'might') comes before it",
    "mood_if": "it is a condition ('if')",
    "mood_maybe": "it is hedged ('maybe', 'probably')",
    "mood_future": "it is in the future tense",
    "mood_want": "it is a wish ('want', 'hope', 'try')",
    "mood_lets": "it is a suggestion ('let's')",
    "intent": "it reads as an intention ('planning', 'off to')",
    "negated": "the clause is negated",
    "subject_listener": "it is said of the listener",
    "subject_other": "it is said of someone other than the speaker",
    "sentence_we": "'we' did it: maybe not the speaker's own",
    "sentence_you": "the sentence speaks to the listener ('you')",
    "turn_photo": "the turn reacts to a shared photo",
    "sentence_praise": "the sentence is praise or a reaction ('amazing', 'cool')",
    "object_single_noun": "the object is a bare common noun",
    "object_plural": "the object is a plural",
    "object_abstract": "the object names an idea or a time, not a thing",
    "object_long": "the object is a long phrase",
    "object_after_another": "the object is one more of a kind ('another', 'more'), not named",
    "object_after_some": "the object is unspecified ('some', 'a few')",
    "object_pointed": "the object is pointed at ('this', 'that'), not named",
    "object_after_your": "the object is the listener's ('your')",
    "object_loses_phrase": "the object leaves out the phrase that says what it is",
    "object_loses_clause": "the object leaves out what follows it",
    "object_cut": "the object is cut from a longer phrase",
    "object_is_subject": "the object is what the sentence is about, not what was done",
    "time_elsewhere": "a date near it is not the fact's",
    "future_time": "the sentence speaks of a time still to come",
    "predicate_taste": "a taste read from one remark",
    "predicate_event": "an event read from the verb alone",
    "predicate_made": "'made' readings are often wrong",
    "open_predicate": "the verb is no relation of the vocabulary",
    "verb_have": "'had' may be a game played or a time had",
}


@dataclass(frozen=True)
class PrecisionGate:
    """Weights of a logistic regression on standardised features, and its threshold."""

    names: tuple[str, ...]
    mean: npt.NDArray[np.float64]
    scale: npt.NDArray[np.float64]
    coef: npt.NDArray[np.float64]
    intercept: float
    threshold: float

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PrecisionGate:
        """Weights from plain data (what ``bench/train_gate.py`` writes); the feature
        names must be today's, in today's order."""
        names = tuple(data["features"])
        if names != feature_names():
            raise ValueError("gate weights are for other features; retrain the gate")
        mean, scale, coef = (
            np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "coef")
        )
        if not (mean.shape == scale.shape == coef.shape == (len(names),)):
            raise ValueError("gate weights: mean, scale and coef need one number per feature")
        return cls(names, mean, scale, coef, float(data["intercept"]), float(data["threshold"]))

    @classmethod
    def load(cls, path: Path = GATE_WEIGHTS) -> PrecisionGate:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))

    def _contributions(self, x: Sequence[float]) -> npt.NDArray[np.float64]:
        return self.coef * (np.asarray(x, dtype=np.float64) - self.mean) / self.scale

    def score(self, x: Sequence[float]) -> float:
        """The gate's estimate that the reading is right, in [0, 1]."""
        z = float(self._contributions(x).sum()) + self.intercept
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def why(self, x: Sequence[float], top: int = 3) -> list[str]:
        """The features that pull this rating down most, in words."""
        c = self._contributions(x)
        order = np.argsort(c)
        out: list[str] = []
        for i in order[: top * 3]:
            if c[i] >= -0.15 or len(out) == top:
                break
            phrase = _WHY.get(self.names[i])
            if phrase is not None and x[i] != 0:
                out.append(phrase)
        return out

    def judge(self, fact: CandidateFact, x: Sequence[float]) -> CandidateFact:
        """The fact with the gate's rating; held (a ``doubt``) below the threshold."""
        p = self.score(x)
        doubt = None
        if p < self.threshold:
            reasons = self.why(x) or ["its features together"]
            doubt = (
                f"the precision gate rates this reading {p:.2f} (it needs "
                f"{self.threshold:.2f}): " + "; ".join(reasons)
            )
        return replace(fact, gate=round(p, 4), doubt=doubt)


_lock = threading.Lock()
_default: list[PrecisionGate] = []


def default_gate() -> PrecisionGate:
    """The packaged gate, read once per process."""
    if not _default:
        with _lock:
            if not _default:
                _default.append(PrecisionGate.load())
    return _default[0]
