"""The default predicate vocabulary, read from `data/predicates.json`.

>>> [p.name for p in default_predicates()][:2]
['lives_in', 'works_at']
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .models import Predicate

VOCABULARY = Path(__file__).resolve().parent.parent / "data" / "predicates.json"


@cache
def default_predicates() -> tuple[Predicate, ...]:
    raw = json.loads(VOCABULARY.read_text(encoding="utf-8"))
    return tuple(
        Predicate(
            name=p["name"],
            cardinality=p["cardinality"],
            aliases=p.get("aliases", []),
            inverse=p.get("inverse"),
            object_kind=p.get("object_kind", "entity"),
            origin="vocabulary",
        )
        for p in raw["predicates"]
    )
