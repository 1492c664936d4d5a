"""Recall's reads beyond the search tables: the archived set, and fact neighbourhoods.

    >>> xs = ExpandStore(store.db)
    >>> xs.archived("default")          # {episode id, ...} out of the hot recall set

Archived episodes (consolidation's decay and dedupe set `Episode.archived`)
stay readable by id and in history; recall leaves them out of its candidates.
"""

from __future__ import annotations

from ._db import Database


class ExpandStore:
    """Reads that recall needs and `RecallStore` does not hold."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def archived(self, namespace: str) -> set[str]:
        """Ids of the namespace's archived episodes."""
        rows = self.db.query(
            "MATCH (e:Episode) WHERE e.namespace = $ns AND e.archived RETURN e.id AS id",
            ns=namespace,
        )
        return {str(r["id"]) for r in rows}
