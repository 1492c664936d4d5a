"""Whether recall answers at all: the evidence a question has, apart from the ranking.

    >>> ev = Evidence(relevance=0.17, meaning=0.64, crowd=0.31, dated=0.0)
    >>> answers(ev, floor=0.26)          # a paraphrase: no shared word, a clear dense match
    True
    >>> answers(Evidence(relevance=0.12, meaning=0.45, crowd=0.33, dated=0.0), floor=0.26)
    False

The ranking (`ranking.relevance`) orders candidates; its best score alone made
the decision to answer, and that score needs both channels: a paraphrase with
no word in common lands at 0.15-0.19, under the 0.26 floor, however clear its
dense match (cosine 0.54-0.73 against 0.24-0.35 for the next memory). So the
decision weighs three kinds of evidence, each of which can answer alone:

* ``relevance`` — the best calibrated relevance (episode or fact) reaches the floor;
* ``meaning`` — the best cosine of the question (names removed) clears
  ``MEANING`` and stands ``MARGIN`` above the crowd (the ``CROWD_RANK``-th best
  cosine): a close sentence that is not merely what every question meets in a
  large memory;
* ``dated`` — the question names a day or a month, an episode occurred then, and
  that episode's own relevance (without the penalty for words the memory never
  saw, which a dated question's "what exercise did I do" suffers) reaches
  ``DATED_SHARE`` of the floor: the day is evidence, the words must still fit.

Once it answers, the hits are the ``k`` best by relevance (no floor cut of the
second-best evidence). Thresholds were chosen on LoCoMo's development split and
its never-mentioned questions (bench/locomo.py), the TimelineQA development
years (bench/timelineqa.py) and the paraphrase set of tests/test_recall_meaning.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["CROWD_RANK", "DATED_SHARE", "MARGIN", "MEANING", "Evidence", "answers", "crowd"]

MEANING = 0.4  # all-MiniLM-L6-v2: clear paraphrases 0.45-0.73
MARGIN = 0.2  # above the crowd's cosine (never-mentioned LoCoMo questions: 95% under 0.17)
CROWD_RANK = 10
DATED_SHARE = 0.6


@dataclass(frozen=True)
class Evidence:
    """What one question found: the best relevance, cosines, and the dated episodes' best."""

    relevance: float
    meaning: float = 0.0
    crowd: float = 0.0
    dated: float = 0.0


def crowd(cosines: npt.NDArray[np.float32], rank: int = CROWD_RANK) -> tuple[float, float]:
    """(best, rank-th best) of a cosine array; (0, 0) when empty.

    >>> crowd(np.array([0.1, 0.7, 0.3], np.float32), rank=2)
    (0.7, 0.3)
    """
    if cosines.size == 0:
        return 0.0, 0.0
    r = min(rank, cosines.size)
    top = np.partition(cosines, cosines.size - r)[cosines.size - r :]
    return round(float(top.max()), 6), round(float(top.min()), 6)


def answers(ev: Evidence, floor: float) -> bool:
    """Whether the memory holds anything on the question (see the module's docstring).

    >>> answers(Evidence(relevance=0.1, dated=0.2), floor=0.26)
    True
    >>> answers(Evidence(relevance=0.3), floor=0.26)
    True
    >>> answers(Evidence(relevance=0.3, meaning=0.9, crowd=0.1), floor=0.0)
    True
    """
    if ev.relevance >= floor:
        return True
    if floor <= 0:
        return True
    if ev.meaning >= MEANING and ev.meaning - ev.crowd >= MARGIN:
        return True
    return ev.dated >= DATED_SHARE * floor
