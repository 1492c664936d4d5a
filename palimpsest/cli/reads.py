"""Reads: `facts`, `history`, `entity`, `snapshot`, `changes`, `predicates`, `stats`.

$ palimpsest facts user lives_in --valid-at 2024-09-01T00:00:00Z --json
$ palimpsest history user lives_in
"""

from __future__ import annotations

from typing import Annotated

import typer

from .common import (
    JsonOpt,
    KnownAtOpt,
    ValidAtOpt,
    dump_json,
    echo,
    is_url,
    models_json,
    note,
    open_memory,
    settings,
)
from .format import (
    changes_text,
    facts_table,
    format_table,
    history_table,
    node_link,
    profile_text,
    snapshot_text,
)


def facts_cmd(
    ctx: typer.Context,
    subject: Annotated[str | None, typer.Argument()] = None,
    predicate: Annotated[str | None, typer.Argument()] = None,
    object: Annotated[str | None, typer.Option("--object", help="Only facts with this object.")] = (
        None
    ),
    valid_at: ValidAtOpt = None,
    known_at: KnownAtOpt = None,
    include_quarantined: Annotated[
        bool, typer.Option("--include-quarantined", help="Also show quarantined facts.")
    ] = False,
    limit: Annotated[int | None, typer.Option("--limit", min=1)] = None,
    as_json: JsonOpt = False,
) -> None:
    """What was true at --valid-at, as believed at --known-at (both default to now)."""
    with open_memory(ctx, create=False) as mem:
        facts = mem.facts(
            subject,
            predicate,
            object,
            valid_at=valid_at,
            known_at=known_at,
            include_quarantined=include_quarantined,
            limit=limit,
        )
    if as_json:
        dump_json(models_json(facts))
    elif facts:
        echo(facts_table(facts, status=include_quarantined))
    else:
        note("(no facts)")


def history_cmd(
    ctx: typer.Context,
    subject: str,
    predicate: Annotated[str | None, typer.Argument()] = None,
    as_json: JsonOpt = False,
) -> None:
    """Every version ever believed for SUBJECT [PREDICATE], with status and both time axes."""
    with open_memory(ctx, create=False) as mem:
        versions = mem.history(subject, predicate)
    if as_json:
        dump_json(models_json(versions))
    elif versions:
        echo(history_table(versions))
    else:
        note("(no history)")


def entity_cmd(
    ctx: typer.Context,
    name: str,
    valid_at: ValidAtOpt = None,
    known_at: KnownAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """An entity's profile: facts about it and facts pointing at it."""
    with open_memory(ctx, create=False) as mem:
        profile = mem.entity(name, valid_at=valid_at, known_at=known_at)
    if as_json:
        dump_json(profile.model_dump(mode="json"))
    else:
        echo(profile_text(profile))


def snapshot_cmd(
    ctx: typer.Context,
    valid_at: ValidAtOpt = None,
    known_at: KnownAtOpt = None,
    graph: Annotated[
        bool, typer.Option("--graph", help="Print a networkx node-link JSON graph.")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """The world model: every believed fact at (valid, known), grouped by entity."""
    with open_memory(ctx, create=False) as mem:
        snap = mem.snapshot(valid_at=valid_at, known_at=known_at)
    if graph:
        dump_json(node_link(snap))
    elif as_json:
        dump_json(snap.model_dump(mode="json"))
    elif snap.entities:
        echo(snapshot_text(snap, ids=True))
    else:
        note("(empty)")


def changes_cmd(
    ctx: typer.Context,
    since: Annotated[str, typer.Option("--since", metavar="T", help="Start (inclusive).")],
    until: Annotated[
        str | None, typer.Option("--until", metavar="T", help="End (exclusive; default now).")
    ] = None,
    known_at: KnownAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What started, ended, was learned or was revised between --since and --until."""
    with open_memory(ctx, create=False) as mem:
        changes = mem.changes(since, until, known_at=known_at)
    if as_json:
        dump_json(changes.model_dump(mode="json"))
    else:
        echo(changes_text(changes))


def predicates_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The predicate vocabulary in force."""
    with open_memory(ctx, create=False) as mem:
        preds = mem.predicates()
    if as_json:
        dump_json(models_json(preds))
        return
    rows = [[p.name, p.cardinality, p.object_kind, p.origin, ", ".join(p.aliases)] for p in preds]
    echo(format_table(["name", "cardinality", "object", "origin", "aliases"], rows))


def stats_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Counts of what this namespace holds."""
    with open_memory(ctx, create=False) as mem:
        st = mem.stats()
        # a database's URL without its password; a directory as the owner or server knows it
        where = mem.location if is_url(settings(ctx).path) else str(mem.path)
    if as_json:
        dump_json({"path": where, **st.model_dump(mode="json")})
        return
    rows = [["path", where], *[[k, str(v)] for k, v in st.model_dump().items() if k != "details"]]
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        echo(f"{k.ljust(width)}  {v}")
