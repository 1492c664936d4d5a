"""Recall weight that fades with age unless the episode is used, and when to archive.

    >>> weight(0.4, age_days=60.0)
    0.1
    >>> cold(0.4, age_days=200.0)
    True

An episode's weight is its importance halved every `HALF_LIFE_DAYS` since it
was last reinforced: recorded, or returned by recall (a use, `engine/uses.py`),
whichever is later. A low-importance episode whose weight fell under `FLOOR`
leaves the hot recall set (archived; still readable by id and in history).
Important ones never do, and neither does one that use keeps warm.

    >>> idle_days(age_days=200.0, used_days=3.0)
    3.0
"""

from __future__ import annotations

HALF_LIFE_DAYS = 30.0
FLOOR = 0.05
LOW_IMPORTANCE = 0.5  # only episodes below this ever go cold
MIN_AGE_DAYS = 30.0  # nothing younger is archived, however unimportant


def weight(importance: float, *, age_days: float, half_life: float = HALF_LIFE_DAYS) -> float:
    """Importance decayed by age (in days since last use)."""
    decayed: float = importance * 0.5 ** (max(age_days, 0.0) / half_life)
    return round(decayed, 6)


def idle_days(*, age_days: float, used_days: float | None) -> float:
    """Days since the last reinforcement: since recorded, or since last used if later."""
    if used_days is None:
        return max(age_days, 0.0)
    return max(min(age_days, used_days), 0.0)


def cold(importance: float, *, age_days: float) -> bool:
    """Whether an episode should leave the hot recall set."""
    return (
        importance < LOW_IMPORTANCE
        and age_days >= MIN_AGE_DAYS
        and weight(importance, age_days=age_days) < FLOOR
    )
