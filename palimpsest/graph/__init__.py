"""The Kùzu store: the only package that imports kuzu or holds Cypher.

    >>> from palimpsest.graph import Store
    >>> store = Store.open(Path("palimpsest-data"))

Switching engines (e.g. to LadybugDB) is a change to `_db.py` alone.
"""

from ._changes import VersionDelta
from ._consolidation import ConsolidationStore
from ._db import Database, check_params
from ._predicate_log import PredicateLog
from ._recall import RecallStore
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._slots import decode, encode
from ._store import DB_FILE, Store
from ._store_reads import fact_order

__all__ = [
    "DB_FILE",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ConsolidationStore",
    "Database",
    "PredicateLog",
    "RecallStore",
    "Store",
    "VersionDelta",
    "check_params",
    "decode",
    "encode",
    "fact_order",
]
