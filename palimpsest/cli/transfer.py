"""`palimpsest import` / `export`: moving memories in and out.

$ palimpsest export -o memory.jsonl                 # one namespace, losslessly
$ palimpsest --path elsewhere import memory.jsonl   # same ids, times and answers
$ palimpsest import chat.jsonl --format transcript
$ palimpsest export --graphml world.graphml --valid-at 2024-09-01T00:00:00Z
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import (
    CliError,
    JsonOpt,
    NamespaceOpt,
    Uses,
    dump_json,
    echo,
    open_memory,
    settings,
)

if TYPE_CHECKING:
    from ..memory import Memory

_IMPORT_FORMATS = ("auto", "facts", "export", "transcript", "locomo", "mcp-memory")


def _lines(text: str) -> list[str]:
    return text.splitlines()


@contextmanager
def _progress(total: int, batch: int, label: str) -> Iterator[Any]:
    """A progress bar on stderr for imports of more than one batch, else nothing."""
    if total <= batch:
        yield None
        return
    with typer.progressbar(length=total, label=label, file=sys.stderr) as bar:
        done = [0]

        def update(n: int, _total: int) -> None:
            bar.update(n - done[0])
            done[0] = n

        yield update


def import_cmd(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="The file to import ('-' for stdin).")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="auto (sniffed from the first line), facts (assert_fact items per line),"
            " export (a `palimpsest export` file), transcript ({speaker, text, timestamp,"
            " session} per line), locomo, mcp-memory (the MCP memory server's memory.json).",
        ),
    ] = "auto",
    namespace: Annotated[
        str | None,
        typer.Option(
            "--namespace",
            "-n",
            metavar="NAME",
            help="Namespace (default: the global one; an export's own for an export).",
        ),
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            min=1,
            help="Items per transaction (facts: 20,000 unless given; chat turns: at most 500).",
        ),
    ] = None,
    conversation: Annotated[
        list[str] | None,
        typer.Option(
            "--conversation", metavar="ID", help="LoCoMo: only this sample_id (repeatable)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Import facts, an export, a chat transcript, LoCoMo or MCP memory.json.

    An export goes back into the namespace it came from unless --namespace
    (or the global -n) names another; the namespace must be empty.
    """
    if fmt not in _IMPORT_FORMATS:
        raise CliError("invalid_input", f"--format: one of {', '.join(_IMPORT_FORMATS)}")
    if file != "-" and not Path(file).is_file():
        raise CliError("not_found", f"no file {file!r}")
    text = sys.stdin.read() if file == "-" else None
    if fmt == "auto":
        fmt = _sniff(file, text)
    s = settings(ctx)
    ns = namespace
    # chats and LoCoMo are remembered turn by turn: read and embedded
    uses: tuple[Uses, ...] = () if fmt in ("facts", "export", "mcp-memory") else ("vectors", "text")
    with open_memory(ctx, uses=uses) as mem:
        if fmt == "facts":
            count = _import_facts(mem, file, text, batch, ns)
            if as_json:
                dump_json({"format": fmt, "imported": count})
            else:
                echo(f"imported {count} facts")
            return
        if fmt == "export":
            # the export's own namespace, unless one was asked for
            if ns is None and s.namespace != "default":
                ns = s.namespace
            counts = _read_lines(file, text, lambda lines: mem.restore(lines, namespace=ns))
        elif fmt == "mcp-memory":
            load = _compat("import_memory_json")
            counts = _read_lines(file, text, lambda lines: load(mem, lines, namespace=ns))
        else:
            body = text if text is not None else Path(file).read_text(encoding="utf-8")
            counts = _remember(mem, fmt, body, ns, min(batch or 500, 500), conversation)
    if as_json:
        dump_json({"format": fmt, **counts})
        return
    echo(f"imported ({fmt}): " + ", ".join(f"{v} {k}" for k, v in counts.items()))


def export_cmd(
    ctx: typer.Context,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", metavar="FILE", help="Where to write ('-': stdout)."),
    ] = None,
    namespace: NamespaceOpt = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMAT",
            help="export (lossless JSON Lines) or mcp-memory (memory.json).",
        ),
    ] = "export",
    graphml: Annotated[
        str | None,
        typer.Option(
            "--graphml",
            metavar="FILE",
            help="Write the world model (as of the times) as GraphML.",
        ),
    ] = None,
    valid_at: Annotated[
        str | None, typer.Option("--valid-at", metavar="T", help="GraphML: valid at T.")
    ] = None,
    known_at: Annotated[
        str | None, typer.Option("--known-at", metavar="T", help="GraphML: as known at T.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export a namespace: everything, losslessly (JSON Lines), or a GraphML snapshot."""
    if fmt not in ("export", "mcp-memory"):
        raise CliError("invalid_input", "--format: export or mcp-memory")
    if output is None and graphml is None:
        output = "-"
    summary: dict[str, Any] = {}
    with open_memory(ctx, create=False) as mem:
        if graphml is not None:
            from ..transfer import write_graphml

            snap = mem.snapshot(valid_at=valid_at, known_at=known_at, namespace=namespace)
            nodes, edges = write_graphml(snap, graphml)
            summary["graphml"] = {"file": graphml, "nodes": nodes, "edges": edges}
        if output is not None:
            if fmt == "mcp-memory":
                lines = _compat("export_memory_json")(mem, namespace=namespace)
                summary["lines"] = _write(output, lines)
            elif output == "-":  # streamed as the rows are read
                summary["counts"] = mem.export(sys.stdout, namespace=namespace)
                sys.stdout.flush()
            else:
                summary["counts"] = mem.export(output, namespace=namespace)
            summary["output"] = output
    # the data may be on stdout: the summary then goes to stderr
    err = output == "-"
    if as_json:
        if err:
            import json

            typer.echo(json.dumps(summary, ensure_ascii=False), err=True)
        else:
            dump_json(summary)
        return
    if "graphml" in summary:
        g = summary["graphml"]
        typer.echo(f"wrote {g['nodes']} nodes, {g['edges']} edges to {g['file']}", err=err)
    if "counts" in summary:
        c = ", ".join(f"{v} {k}" for k, v in summary["counts"].items())
        typer.echo(f"exported {c} to {output}", err=err)
    elif "lines" in summary:
        typer.echo(f"exported {summary['lines']} lines to {output}", err=err)


def _compat(name: str) -> Any:
    """A function of `palimpsest.mcp.memory_compat` (the MCP memory.json bridge), loaded late."""
    import importlib

    try:
        module = importlib.import_module("palimpsest.mcp.memory_compat")
    except ModuleNotFoundError as e:
        if e.name != "palimpsest.mcp.memory_compat":
            raise
        raise CliError("unavailable", "mcp-memory support is not installed") from None
    return getattr(module, name)


def _sniff(file: str, text: str | None) -> str:
    from ..transfer import sniff

    if text is not None:
        first = next((x for x in text.splitlines() if x.strip()), "")
    else:
        first = ""
        with Path(file).open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    first = line
                    break
    return sniff(first)


def _import_facts(
    mem: Memory, file: str, text: str | None, batch: int | None, ns: str | None
) -> int:
    sized = {"batch": batch} if batch else {}  # else the library's own default
    count: int = _read_lines(
        file, text, lambda lines: mem.import_facts(lines, namespace=ns, **sized)
    )
    return count


def _remember(
    mem: Memory,
    fmt: str,
    body: str,
    ns: str | None,
    batch: int,
    conversations: list[str] | None,
) -> dict[str, int]:
    """Transcript or LoCoMo turns through remember_many, with a progress bar if long."""
    from ..transfer import parse_locomo, parse_transcript

    if fmt == "transcript":
        total = len(parse_transcript(_lines(body)))
    else:
        total = len(parse_locomo(body, conversations=conversations))
    with _progress(total, batch, "remembering") as progress:
        if fmt == "transcript":
            return mem.import_transcript(_lines(body), namespace=ns, batch=batch, progress=progress)
        return mem.import_locomo(
            body, conversations=conversations, namespace=ns, batch=batch, progress=progress
        )


def _read_lines(file: str, text: str | None, use: Callable[[Iterable[str]], Any]) -> Any:
    """`use(lines)` over stdin's text or the file, read line by line (never whole)."""
    if text is not None:
        return use(_lines(text))
    with Path(file).open(encoding="utf-8") as fh:
        return use(fh)


def _write(output: str, lines: Iterable[str]) -> int:
    """Write lines to a file (atomically) or stdout ('-') as they come; how many."""
    n = 0
    if output == "-":
        for line in lines:
            sys.stdout.write(line + "\n")
            n += 1
        sys.stdout.flush()
        return n
    path = Path(output)
    tmp = path.with_name(f".{path.name}.partial")
    with tmp.open("w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
            n += 1
    tmp.replace(path)
    return n
