"""Recall: `recall` (hybrid search) and `reindex` (rebuild its search text and vectors).

$ palimpsest recall "when does my sister arrive?"
$ palimpsest reindex --re-embed
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

import typer

from .common import (
    CliError,
    JsonOpt,
    KnownAtOpt,
    ValidAtOpt,
    dump_json,
    echo,
    is_url,
    models_json,
    note,
    open_memory,
    reach_owner,
    settings,
)


def recall_cmd(
    ctx: typer.Context,
    query: str,
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="How many hits at most.")] = 5,
    valid_at: ValidAtOpt = None,
    known_at: KnownAtOpt = None,
    min_score: Annotated[
        float | None, typer.Option("--min-score", help="Relevance floor (default: engine's).")
    ] = None,
    diversity: Annotated[
        float | None,
        typer.Option(
            "--diversity", min=0.0, max=1.0, help="Near-duplicate demotion (default 0.8; 0: off)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find memories by meaning and words, as of (valid, known); nothing when nothing fits."""
    with open_memory(ctx, create=False, uses=("vectors",)) as mem:
        ask = partial(mem.recall, query, k=k, valid_at=valid_at, known_at=known_at)
        hits = ask(min_score=min_score, diversity=diversity)
    if as_json:
        dump_json(models_json(hits))
        return
    if not hits:
        note("(nothing above the relevance floor)")
    for h in hits:
        when = h.occurred_at.isoformat() if h.occurred_at else "-"
        flag = f"  [{h.warning}]" if h.warning else ""
        echo(f"{h.score:.2f}  {h.kind:<7} {when}  {h.text}{flag}")


def reindex_cmd(
    ctx: typer.Context,
    re_embed: Annotated[
        bool,
        typer.Option(
            "--re-embed",
            help="Recompute every episode's vectors with the current model and record it"
            " as the memory's model (needed after changing models).",
        ),
    ] = False,
    batch_size: Annotated[
        int,
        typer.Option("--batch-size", min=1, metavar="N", help="Episodes embedded per batch."),
    ] = 256,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Rebuild the full-text and vector indexes; with --re-embed, first recompute every
    vector with the current embedding model. Exit 0 on success."""
    from contextlib import ExitStack
    from pathlib import Path

    s = settings(ctx)
    if not is_url(s.path) and not Path(s.path).exists():
        raise CliError("no_memory", f"no memory at {s.path!r}")
    # an owner answers it (without reopening); else opened here, re-embedding if asked
    opened = reach_owner(s.path, s.namespace, start=False)
    if opened is None:
        from ..memory import Memory

        opened = Memory.open(s.path, namespace=s.namespace, extractor=None, reembed=re_embed)
    with opened as mem:
        report: dict[str, Any]
        if re_embed and not as_json:
            with ExitStack() as stack:
                bar: Any = None
                seen = 0

                def tick(done: int, total: int) -> None:
                    # the total is known once the reindex has listed the episodes
                    nonlocal bar, seen
                    if bar is None:
                        bar = stack.enter_context(
                            typer.progressbar(length=total, label="re-embedding")
                        )
                    bar.update(done - seen)
                    seen = done

                report = mem.reindex(re_embed=True, batch_size=batch_size, progress=tick)
        else:
            report = mem.reindex(re_embed=re_embed, batch_size=batch_size)
    if as_json:
        dump_json(report)
        return
    paths = ", ".join(f"{ns}: {k}" for ns, k in sorted(report["vector_path"].items()))
    echo(
        f"reindexed {report['episodes']} episodes in {report['namespaces']} namespace(s);"
        f" re-embedded {report['re_embedded']}; full-text index rebuilt;"
        f" vector search: {paths or 'none'}"
    )
