"""The Kùzu store: the only package that imports kuzu or holds Cypher.

    >>> from palimpsest.graph import Store
    >>> store = Store.open(Path("palimpsest-data"))

Switching engines (e.g. to LadybugDB) is a change to `_db.py` alone.
"""

from ._changes import VersionDelta
from ._consolidation import ConsolidationStore
from ._db import Database, check_params
from ._lines import LineStart
from ._predicate_log import PredicateLog
from ._recall import RecallStore
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._store import DB_FILE, Store
from ._store_reads import fact_order
from ._store_slots import FactWrite, LineAsk, LineEdit, LineWindow, SlotHead, line_of

__all__ = [
    "DB_FILE",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ConsolidationStore",
    "Database",
    "FactWrite",
    "LineAsk",
    "LineEdit",
    "LineStart",
    "LineWindow",
    "PredicateLog",
    "RecallStore",
    "SlotHead",
    "Store",
    "VersionDelta",
    "check_params",
    "fact_order",
    "line_of",
]
