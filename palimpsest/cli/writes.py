"""Writes: `assert`, `end`, `retract`, `erase`, `remember`, `define-predicate`.

$ palimpsest assert user lives_in Sydney --from 2024-06-01T00:00:00Z
$ palimpsest remember "My sister Mira lives in Berlin." --occurred-at 2024-07-02T10:00:00Z
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from .common import (
    AUTHOR_KINDS,
    JsonOpt,
    KeyOpt,
    ReasonOpt,
    dump_json,
    echo,
    models_json,
    note,
    open_memory,
    read_text_arg,
    valid_from_arg,
)
from .format import fmt_time


def assert_cmd(
    ctx: typer.Context,
    subject: str,
    predicate: str,
    object: str,
    valid_from: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="T",
            help="Start of validity (default: --occurred-at, else now; 'always' = unbounded).",
        ),
    ] = None,
    valid_to: Annotated[
        str | None, typer.Option("--to", metavar="T", help="End of validity (exclusive).")
    ] = None,
    confidence: Annotated[float, typer.Option("--confidence", min=0.0, max=1.0)] = 1.0,
    author_kind: Annotated[
        str,
        typer.Option(
            "--author-kind",
            help=f"Who states it: {', '.join(AUTHOR_KINDS)}. Non-user facts are quarantined.",
        ),
    ] = "user",
    evidence: Annotated[
        list[str] | None,
        typer.Option("--evidence", help="An episode id supporting it (repeatable)."),
    ] = None,
    occurred_at: Annotated[
        str | None,
        typer.Option("--occurred-at", metavar="T", help="When it was said (the default --from)."),
    ] = None,
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Record that SUBJECT PREDICATE OBJECT holds (prints the fact id)."""
    with open_memory(ctx) as mem:
        fact = mem.assert_fact(
            subject,
            predicate,
            object,
            valid_from=valid_from_arg(valid_from),
            valid_to=valid_to,
            confidence=confidence,
            author_kind=author_kind,  # type: ignore[arg-type]  # the engine validates it
            evidence=evidence or [],
            occurred_at=occurred_at,
            idempotency_key=idempotency_key,
        )
    if as_json:
        dump_json(fact.model_dump(mode="json"))
        return
    echo(fact.id)
    if fact.quarantined:
        note(f"note: quarantined (author_kind={fact.author_kind}); not in facts until promoted")


def end_cmd(
    ctx: typer.Context,
    subject: str,
    predicate: str,
    object: Annotated[
        str | None,
        typer.Argument(help="What no longer holds (for a one-valued predicate: optional)."),
    ] = None,
    at: Annotated[str | None, typer.Option("--at", metavar="T", help="When (default: now).")] = (
        None
    ),
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Record "no longer": SUBJECT PREDICATE [OBJECT] stops holding at --at."""
    with open_memory(ctx) as mem:
        kwargs: dict[str, Any] = {} if at is None else {"at": at}
        if idempotency_key is not None:
            kwargs["idempotency_key"] = idempotency_key
        fact = mem.end_fact(subject, predicate, object, **kwargs)
    if as_json:
        dump_json(fact.model_dump(mode="json"))
        return
    echo(fact.id)
    if fact.applied is False:
        what = f"{subject} {predicate}" + (f" {object}" if object else "")
        note(f"note: nothing matching {what!r} held then; the end is recorded but ended nothing")


def retract_cmd(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(help="A fact id (from assert, facts or history).")],
    reason: ReasonOpt = None,
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Withdraw an assertion from now on; views known before now still see it."""
    with open_memory(ctx, create=False) as mem:
        fact = mem.retract(id, reason=reason, idempotency_key=idempotency_key)
    if as_json:
        dump_json(fact.model_dump(mode="json"))
        return
    echo(f"retracted {fact.id}  ({fact.statement}) at {fmt_time(fact.expired_at)}")


def erase_cmd(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(help="A fact id or an episode id.")],
    reason: ReasonOpt = None,
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Privacy deletion: remove a fact or an episode from every view; a tombstone remains."""
    with open_memory(ctx, create=False) as mem:
        tombs = mem.erase(id, reason=reason, idempotency_key=idempotency_key)
    if as_json:
        dump_json(models_json(tombs))
        return
    for t in tombs:
        echo(f"erased {t.kind} {t.id} at {fmt_time(t.erased_at)}")


def remember_cmd(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(help="What was said or read ('-' reads stdin).")],
    speaker: Annotated[str, typer.Option("--speaker")] = "user",
    occurred_at: Annotated[
        str | None,
        typer.Option("--occurred-at", metavar="T", help="When it was said (default: now)."),
    ] = None,
    session: Annotated[str | None, typer.Option("--session")] = None,
    source: Annotated[str | None, typer.Option("--source")] = None,
    author_kind: Annotated[
        str | None,
        typer.Option("--author-kind", help="Default: user for the user, else third_party."),
    ] = None,
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Store one episode as it arrived (prints the episode id)."""
    body = read_text_arg(text)
    with open_memory(ctx, uses=("vectors", "text")) as mem:
        ep = mem.remember(
            body,
            speaker=speaker,
            author_kind=author_kind,  # type: ignore[arg-type]  # the engine validates it
            occurred_at=occurred_at,
            session=session,
            source=source,
            idempotency_key=idempotency_key,
        )
    if as_json:
        dump_json(ep.model_dump(mode="json"))
        return
    echo(ep.id)


def define_predicate_cmd(
    ctx: typer.Context,
    name: str,
    cardinality: Annotated[
        str,
        typer.Option("--cardinality", help="one: at most one object at a time; many: any number."),
    ],
    alias: Annotated[
        list[str] | None, typer.Option("--alias", help="Another wording (repeatable).")
    ] = None,
    inverse: Annotated[str | None, typer.Option("--inverse")] = None,
    object_kind: Annotated[
        str, typer.Option("--object-kind", help="entity (a thing) or value (a literal).")
    ] = "entity",
    as_json: JsonOpt = False,
    idempotency_key: KeyOpt = None,
) -> None:
    """Add a predicate to the vocabulary, or override one."""
    with open_memory(ctx) as mem:
        pred = mem.define_predicate(
            name,
            cardinality,  # type: ignore[arg-type]  # the engine validates it
            aliases=alias or [],
            inverse=inverse,
            object_kind=object_kind,  # type: ignore[arg-type]
            idempotency_key=idempotency_key,
        )
    if as_json:
        dump_json(pred.model_dump(mode="json"))
        return
    echo(f"defined {pred.name} ({pred.cardinality})")
