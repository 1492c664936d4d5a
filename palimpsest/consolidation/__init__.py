"""Nightly consolidation: pure decisions here; `runner` and `steps/` carry them out.

    >>> from palimpsest.consolidation import Claim, judge
    >>> judge([claim], evidence={...}, trusted={...}, believed={...})  # -> [Decision, ...]

Each step has a module of pure rules here: `_dedupe` (near-identical episodes),
`_merge` (which entities are one), `_reconcile` (conflicting one-valued claims),
`_judge` (promote or reject quarantine), `_decay` (recall weight and archiving);
`_run` is the run's record. Nothing those touch is storage. The steps that gather
their inputs and write the outcomes as ordinary assertions, retractions and flags,
each with its reason, are `steps/` (one class each), run in order by
`runner.Consolidator` (`Memory.consolidate`); this package's `__init__` imports
only the pure rules.
"""

from ._decay import cold, idle_days, weight
from ._dedupe import Duplicate, duplicates
from ._judge import Claim, Decision, EvidenceInfo, judge
from ._merge import Cluster, Pair, candidates, clusters, distinctive, normalise
from ._reconcile import Outcome, conflicts, outcome, settled
from ._run import Run

__all__ = [
    "Claim",
    "Cluster",
    "Decision",
    "Duplicate",
    "EvidenceInfo",
    "Outcome",
    "Pair",
    "Run",
    "candidates",
    "clusters",
    "cold",
    "conflicts",
    "distinctive",
    "duplicates",
    "idle_days",
    "judge",
    "normalise",
    "outcome",
    "settled",
    "weight",
]
