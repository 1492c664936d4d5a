"""Nightly consolidation: pure decisions; the engine (`Memory.consolidate`) carries them out.

    >>> from palimpsest.consolidation import Claim, judge
    >>> judge([claim], evidence={...}, trusted={...}, believed={...})  # -> [Decision, ...]

Each step has a module of pure rules here: `_dedupe` (near-identical episodes),
`_merge` (which entities are one), `_reconcile` (conflicting one-valued claims),
`_judge` (promote or reject quarantine), `_decay` (recall weight and archiving).
The engine gathers their inputs and writes the outcomes as ordinary
assertions, retractions and flags, each with its reason; nothing here touches storage.
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
