"""Palimpsest: an embedded, offline, bitemporal knowledge-graph memory for AI agents.

>>> from palimpsest import Memory
>>> with Memory.open("palimpsest-data") as mem:
...     f = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
...     mem.facts("user", "lives_in")[0].object
'Sydney'
"""

from .errors import (
    AlreadyErased,
    ClosedError,
    Conflict,
    InvalidName,
    InvalidTime,
    InvalidWindow,
    MemoryLocked,
    NaiveDatetime,
    NotFound,
    PalimpsestError,
    SchemaError,
    StoreError,
    TooLarge,
    UnknownPredicate,
    ValidationError,
)
from .memory import UNSET, Memory
from .models import (
    Changes,
    Entity,
    EntityFacts,
    EntityProfile,
    Episode,
    Fact,
    Predicate,
    Snapshot,
    Stats,
    Tombstone,
)

__version__ = "0.1.0"

__all__ = [
    "UNSET",
    "AlreadyErased",
    "Changes",
    "ClosedError",
    "Conflict",
    "Entity",
    "EntityFacts",
    "EntityProfile",
    "Episode",
    "Fact",
    "InvalidName",
    "InvalidTime",
    "InvalidWindow",
    "Memory",
    "MemoryLocked",
    "NaiveDatetime",
    "NotFound",
    "PalimpsestError",
    "Predicate",
    "SchemaError",
    "Snapshot",
    "Stats",
    "StoreError",
    "Tombstone",
    "TooLarge",
    "UnknownPredicate",
    "ValidationError",
    "__version__",
]
