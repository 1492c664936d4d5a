"""The Kùzu store: the only package that imports kuzu or holds Cypher.

    >>> from palimpsest.graph import Store
    >>> store = Store.open(Path("palimpsest-data"))
    >>> store.facts.facts_asof(namespace="default", valid_at=v, known_at=k)

`Store` implements the storage seam (`palimpsest.storage`): its slices, built once
when it opens, take and give the seam's logical rows. Switching engines (e.g. to
LadybugDB) is a change to `_db.py` alone.
"""

from ..storage.rows import fact_order
from ._consolidation import ConsolidationStore
from ._db import Database, check_params, quiet_module_probes
from ._embeddings import EmbeddingStore
from ._predicate_log import PredicateLog
from ._recall import EMB_DIM, RecallStore
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._store import DB_FILE, Store
from ._store_names import NameStore
from ._store_reads import FactStore
from ._store_slots import SlotStore
from ._transfer import GraphPages, TransferStore
from ._use import UseStore
from ._vectors import VectorStore

__all__ = [
    "DB_FILE",
    "EMB_DIM",
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "ConsolidationStore",
    "Database",
    "EmbeddingStore",
    "FactStore",
    "GraphPages",
    "NameStore",
    "PredicateLog",
    "RecallStore",
    "SlotStore",
    "Store",
    "TransferStore",
    "UseStore",
    "VectorStore",
    "check_params",
    "fact_order",
    "quiet_module_probes",
]
