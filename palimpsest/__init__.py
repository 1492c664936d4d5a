"""Palimpsest: an embedded, offline, bitemporal knowledge-graph memory for AI agents.

    >>> from palimpsest import Memory
    >>> with Memory.open("palimpsest-data") as mem:
    ...     f = mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    ...     mem.facts("user", "lives_in")[0].object
    'Sydney'
    >>> with palimpsest.connect("palimpsest-data") as mem:   # shared: through its owner
    ...     mem.facts("user", "lives_in")[0].object
    'Sydney'
    >>> with palimpsest.connect("postgresql://palimpsest@db:5432/mem") as mem:  # a database
    ...     mem.location
    'postgresql://palimpsest@db:5432/mem'

Only the exception tree is imported eagerly; `Memory` and the models load on
first use (PEP 562), so `palimpsest --help` never pays for Kùzu or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import (
    AlreadyErased,
    ClosedError,
    Conflict,
    EmbedderMismatch,
    InvalidName,
    InvalidTime,
    InvalidWindow,
    MemoryLocked,
    NaiveDatetime,
    NotFound,
    NotQuarantined,
    OwnerLost,
    OwnerUnavailable,
    PalimpsestError,
    SchemaError,
    StoreError,
    TooLarge,
    UnknownPredicate,
    ValidationError,
)

if TYPE_CHECKING:
    from .memory import UNSET, Memory
    from .models import (
        Changes,
        ConsolidationChange,
        ConsolidationReport,
        Entity,
        EntityFacts,
        EntityProfile,
        Episode,
        Fact,
        Hit,
        Predicate,
        Snapshot,
        Stats,
        Tombstone,
    )
    from .owner.client import OwnerClient
    from .owner.connect import connect

__version__ = "0.1.0"

_LAZY = {
    "Memory": "memory",
    "connect": "owner.connect",
    "OwnerClient": "owner.client",
    "UNSET": "memory",
    "Changes": "models",
    "ConsolidationChange": "models",
    "ConsolidationReport": "models",
    "Hit": "models",
    "Entity": "models",
    "EntityFacts": "models",
    "EntityProfile": "models",
    "Episode": "models",
    "Fact": "models",
    "Predicate": "models",
    "Snapshot": "models",
    "Stats": "models",
    "Tombstone": "models",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'palimpsest' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "UNSET",
    "AlreadyErased",
    "Changes",
    "ClosedError",
    "Conflict",
    "ConsolidationChange",
    "ConsolidationReport",
    "EmbedderMismatch",
    "Entity",
    "EntityFacts",
    "EntityProfile",
    "Episode",
    "Fact",
    "Hit",
    "InvalidName",
    "InvalidTime",
    "InvalidWindow",
    "Memory",
    "MemoryLocked",
    "NaiveDatetime",
    "NotFound",
    "NotQuarantined",
    "OwnerClient",
    "OwnerLost",
    "OwnerUnavailable",
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
    "connect",
]
