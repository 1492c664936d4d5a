"""The world model as of (valid_at, known_at), as GraphML (via networkx).

    >>> write_graphml(mem.snapshot(valid_at="2024-09-01T00:00:00Z"), "world.graphml")

GraphML holds scalar attributes only: times become ISO-8601 strings and
missing values are left out (an open window has no `valid_to` attribute).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ._format import fmt_time

if TYPE_CHECKING:
    from ..models import Snapshot


def _scalars(attrs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in attrs.items():
        if v is None:
            continue
        if isinstance(v, datetime):
            v = fmt_time(v)
        elif not isinstance(v, str | int | float | bool):
            v = str(v)
        out[k] = v
    return out


def write_graphml(snapshot: Snapshot, target: str | Path | IO[bytes]) -> tuple[int, int]:
    """Write the snapshot's graph; returns (nodes, edges)."""
    import networkx as nx

    g = snapshot.to_networkx()
    g.graph.update(_scalars(dict(g.graph)))
    for k in [k for k, v in g.graph.items() if v is None]:
        del g.graph[k]
    g.graph["namespace"] = snapshot.namespace
    for _, data in g.nodes(data=True):
        clean = _scalars(dict(data))
        data.clear()
        data.update(clean)
    for _, _, data in g.edges(data=True):
        clean = _scalars(dict(data))
        data.clear()
        data.update(clean)
    nx.write_graphml(g, target)
    return g.number_of_nodes(), g.number_of_edges()
