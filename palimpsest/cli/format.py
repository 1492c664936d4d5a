"""How commands print: compact times, aligned tables, snapshots, profiles and changes.

    >>> print(facts_table(mem.facts("user")))
    subject  predicate  object  valid_from  valid_to  recorded  id

Plain text only (no engine import): the demo prints with these too.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models import Changes, EntityProfile, Fact, Snapshot


def fmt_iso(t: datetime | None) -> str | None:
    """An aware time as ISO-8601 UTC with a `Z`."""
    if t is None:
        return None
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")


def fmt_time(t: datetime | None, missing: str = "-") -> str:
    """A compact time for tables: the date alone at UTC midnight, else minutes (or seconds)."""
    if t is None:
        return missing
    u = t.astimezone(UTC)
    if (u.hour, u.minute, u.second, u.microsecond) == (0, 0, 0, 0):
        return u.strftime("%Y-%m-%d")
    if u.second == 0 and u.microsecond == 0:
        return u.strftime("%Y-%m-%dT%H:%MZ")
    return u.strftime("%Y-%m-%dT%H:%M:%SZ")


def fmt_window(f: Fact) -> str:
    """A half-open valid-time window, `[from, to)`; unbounded ends print as words."""
    start = fmt_time(f.valid_from, "always")
    end = fmt_time(f.valid_to, "open")
    return f"[{start}, {end})"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Plain left-aligned columns, two spaces apart, under a header and a rule."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        return indent + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out)


def fact_rows(facts: Sequence[Fact], *, status: bool = False, ids: bool = True) -> list[list[str]]:
    rows = []
    for f in facts:
        row = [
            f.subject,
            f.predicate,
            f.object if f.object is not None else "-",
            fmt_time(f.valid_from, "always"),
            fmt_time(f.valid_to, "open"),
            fmt_time(f.recorded_at),
        ]
        if status:
            flag = " (quarantined)" if f.quarantined and f.status != "quarantined" else ""
            row.append(f.status + flag)
        if ids:
            row.append(f.id)
        rows.append(row)
    return rows


def facts_table(
    facts: Sequence[Fact], *, status: bool = False, ids: bool = True, indent: str = ""
) -> str:
    headers = ["subject", "predicate", "object", "valid_from", "valid_to", "recorded"]
    if status:
        headers.append("status")
    if ids:
        headers.append("id")
    return format_table(headers, fact_rows(facts, status=status, ids=ids), indent=indent)


def history_table(facts: Sequence[Fact], indent: str = "") -> str:
    rows = []
    for f in facts:
        obj = f.object if f.object is not None else ("(erased)" if f.status == "erased" else "-")
        rows.append(
            [
                f.predicate,
                obj,
                fmt_time(f.valid_from, "always") if f.status != "erased" else "-",
                fmt_time(f.valid_to, "open") if f.status != "erased" else "-",
                fmt_time(f.recorded_at),
                fmt_time(f.expired_at),
                f.status,
                f.id,
            ]
        )
    headers = ["predicate", "object", "valid_from", "valid_to", "recorded", "expired", "status"]
    return format_table([*headers, "id"], rows, indent=indent)


def snapshot_text(snap: Snapshot, *, ids: bool = False, indent: str = "") -> str:
    lines = []
    for group in snap.entities:
        lines.append(f"{indent}{group.entity}")
        rows = [
            [f.predicate, f.object or "-", fmt_window(f)] + ([f.id] if ids else [])
            for f in group.facts
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))] if rows else []
        for r in rows:
            cells = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            lines.append(f"{indent}  {cells}")
    return "\n".join(lines)


def profile_text(p: EntityProfile, indent: str = "") -> str:
    e = p.entity
    lines = [f"{indent}{e.name}  (type {e.type}, id {e.id})"]
    if e.aliases:
        lines.append(f"{indent}  aliases: {', '.join(e.aliases)}")
    lines.append(f"{indent}  as of valid {fmt_time(p.valid_at)}, known {fmt_time(p.known_at)}")
    for title, facts in (("facts about it", p.outgoing), ("facts pointing at it", p.incoming)):
        lines.append(f"{indent}  {title}:")
        if facts:
            lines.append(facts_table(facts, ids=False, indent=indent + "    "))
        else:
            lines.append(f"{indent}    (none)")
    return "\n".join(lines)


def changes_text(c: Changes, indent: str = "") -> str:
    lines = [
        f"{indent}between {fmt_time(c.since)} and {fmt_time(c.until)} "
        f"(started/ended as known {fmt_time(c.known_at)})"
    ]
    sections: list[tuple[str, Sequence[Fact], bool]] = [
        ("started (valid_from in range)", c.started, False),
        ("ended (valid_to in range)", c.ended, False),
        ("learned (recorded in range)", c.learned, True),
        ("revised (stopped being believed in range)", c.revised, True),
    ]
    for title, facts, status in sections:
        lines.append(f"{indent}{title}: {len(facts)}")
        if facts:
            lines.append(facts_table(facts, status=status, ids=False, indent=indent + "  "))
    return "\n".join(lines)


def node_link(snap: Snapshot) -> dict[str, Any]:
    from networkx.readwrite import json_graph

    g = snap.to_networkx()
    try:
        data: dict[str, Any] = json_graph.node_link_data(g, edges="edges")
    except TypeError:  # networkx < 3.4 has no `edges=` (and says "links")
        data = json_graph.node_link_data(g)
    return data
