"""Nightly consolidation: pure decisions over quarantined claims and their evidence.

    >>> from palimpsest.consolidation import Claim, judge
    >>> judge([claim], evidence={...}, trusted={...}, believed={...})  # -> [Decision, ...]

The engine (`Memory.consolidate`) gathers the inputs and carries the decisions
out as ordinary assertions and retractions, each with its reason; nothing here
touches storage.
"""

from ._judge import Claim, Decision, EvidenceInfo, judge

__all__ = ["Claim", "Decision", "EvidenceInfo", "judge"]
