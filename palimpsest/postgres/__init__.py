"""The PostgreSQL store: the storage seam implemented a second time, for a memory many
processes (and machines) share.

    >>> from palimpsest.postgres import Store
    >>> store = Store.open("postgresql://palimpsest@127.0.0.1:5432/mem")

Every SQL statement the engine runs on PostgreSQL lives in this package, one slice
per module, as the Kùzu store's Cypher lives in `palimpsest.graph`. psycopg is
imported only when a store opens.
"""

from ._db import check_url
from ._store import Store

__all__ = ["Store", "check_url"]
