"""`palimpsest reindex`: rebuild recall's search text and vectors.

$ palimpsest reindex --re-embed
"""

from __future__ import annotations

from typing import Annotated, Any

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the `palimpsest` app (imports no engine code)."""

    @app.command("reindex")
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

        from .cli import CliError, _dump_json, _echo, _settings
        from .memory import Memory

        s = _settings(ctx)
        if not Path(s.path).exists():
            raise CliError("no_memory", f"no memory at {s.path!r}")
        with Memory.open(s.path, namespace=s.namespace, extractor=None, reembed=re_embed) as mem:
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
            _dump_json(report)
            return
        paths = ", ".join(f"{ns}: {k}" for ns, k in sorted(report["vector_path"].items()))
        _echo(
            f"reindexed {report['episodes']} episodes in {report['namespaces']} namespace(s);"
            f" re-embedded {report['re_embedded']}; full-text index rebuilt;"
            f" vector search: {paths or 'none'}"
        )
