"""The `palimpsest` command: a thin shell over the `Memory` facade.

    $ palimpsest assert user lives_in Sydney --from 2024-06-01T00:00:00Z
    $ palimpsest facts user lives_in --valid-at 2024-09-01T00:00:00Z --json
    $ palimpsest demo

Short verbs in the style of sqlite-utils; every read takes `--json`, and prints
plain aligned columns otherwise. Times are ISO-8601 strings with a timezone
(naive times are refused by the engine). Engine errors print
`error [<code>]: <message>` on stderr and exit 2; anything unexpected exits 1.

`palimpsest --help` must stay instant: the engine (`palimpsest.memory`, and with
it Kùzu) is imported inside the commands, never at module level. This is the
only module of the package that reads environment variables.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from . import _cli_consolidate, _cli_mcp, _cli_recall, _cli_transfer
from ._cli_options import JsonOpt

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .memory import Memory
    from .models import Changes, EntityProfile, Fact, Snapshot

DEFAULT_PATH = "palimpsest-data"  # the facade's default; repeated here to keep --help cheap
ENV_PATH = "PALIMPSEST_PATH"
ENV_DEBUG = "PALIMPSEST_DEBUG"
ENV_TOKEN = "PALIMPSEST_TOKEN"  # a bearer token for reads through a running server
_AUTHOR_KINDS = ("user", "agent", "tool", "document", "third_party")

app = typer.Typer(
    name="palimpsest",
    help=(
        "Palimpsest: an offline, bitemporal knowledge-graph memory for AI agents.\n\n"
        "Every fact is dated twice: when it is true (valid time, --valid-at) and when "
        "the memory believed it (transaction time, --known-at). Times are ISO-8601 "
        "with a timezone, e.g. 2024-09-01T00:00:00Z."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class CliError(Exception):
    """A command-line problem that is not the engine's (e.g. no memory at --path)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Settings:
    path: str
    namespace: str
    path_given: bool  # --path on the command line (not the default, not the environment)


# --- shared option types -------------------------------------------------------------------
ValidAtOpt = Annotated[
    str | None,
    typer.Option("--valid-at", help="What was true at this time (default: now).", metavar="T"),
]
KnownAtOpt = Annotated[
    str | None,
    typer.Option(
        "--known-at", help="As the memory believed it at this time (default: now).", metavar="T"
    ),
]
ReasonOpt = Annotated[str | None, typer.Option("--reason", help="Why (kept in the record).")]


def _settings(ctx: typer.Context) -> Settings:
    obj = ctx.find_root().obj
    if not isinstance(obj, Settings):  # pragma: no cover - the callback always sets it
        return Settings(DEFAULT_PATH, "default", path_given=False)
    return obj


@contextmanager
def _memory(ctx: typer.Context, *, create: bool = True) -> Iterator[Memory]:
    """Open the memory at --path; reads refuse to create one where there is none."""
    s = _settings(ctx)
    if not create and not Path(s.path).exists():
        raise CliError(
            "no_memory",
            f"no memory at {s.path!r} (pass --path or set {ENV_PATH}; "
            "a write such as `palimpsest remember` creates one)",
        )
    from .errors import MemoryLocked
    from .memory import Memory

    try:
        mem = Memory.open(s.path, namespace=s.namespace)
    except MemoryLocked as e:
        # A running server holds the directory: reads go through it, the rest name it.
        held = _held_by_server(s.path)
        if held is None:
            raise
        if create:
            raise held from None
        from .api.address import read_address
        from .api.remote import RemoteMemory

        addr = read_address(Path(s.path))
        if addr is None:  # pragma: no cover - the server stopped in between
            raise e from None
        token = os.environ.get(ENV_TOKEN) or None
        with RemoteMemory(addr, path=s.path, namespace=s.namespace, token=token) as remote:
            yield cast("Memory", remote)
        return
    with mem:
        yield mem


def _held_by_server(path: str) -> Exception | None:
    """The error naming the live server that holds `path` (it records its address there)."""
    from .api.address import held_message, read_address
    from .errors import MemoryLocked

    addr = read_address(Path(path))
    if addr is None:
        return None
    return MemoryLocked(held_message(path, addr), path=path, url=addr.url, pid=addr.pid)


# --- output helpers -------------------------------------------------------------------------
def _echo(text: str = "") -> None:
    typer.echo(text)


def _note(text: str) -> None:
    typer.echo(text, err=True)


def _dump_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, ensure_ascii=False, default=_json_default))


def _json_default(value: object) -> Any:
    if isinstance(value, datetime):
        return fmt_iso(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _models_json(items: Sequence[BaseModel]) -> list[Any]:
    return [m.model_dump(mode="json") for m in items]


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


# --- time arguments -------------------------------------------------------------------------
def _valid_from(value: str | None) -> Any:
    """`--from`: left out → the engine's default (the statement's time); `always` → None."""
    if value is None:
        from .memory import UNSET

        return UNSET
    if value.strip().lower() in ("always", "-inf"):
        return None
    return value


def _read_text_arg(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    return text


# --- root -----------------------------------------------------------------------------------
def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("palimpsest")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            v = "unknown"
        typer.echo(f"palimpsest {v}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    path: Annotated[
        str,
        typer.Option(
            "--path",
            envvar=ENV_PATH,
            metavar="DIR",
            help="The memory directory (created by the first write).",
            show_envvar=True,
        ),
    ] = DEFAULT_PATH,
    namespace: Annotated[
        str, typer.Option("--namespace", "-n", metavar="NAME", help="Namespace to read and write.")
    ] = "default",
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    source = ctx.get_parameter_source("path")
    given = source is not None and source.name == "COMMANDLINE"
    ctx.obj = Settings(path=path, namespace=namespace, path_given=given)


# --- writes ---------------------------------------------------------------------------------
@app.command("assert")
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
            help=f"Who states it: {', '.join(_AUTHOR_KINDS)}. Non-user facts are quarantined.",
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
) -> None:
    """Record that SUBJECT PREDICATE OBJECT holds (prints the fact id)."""
    with _memory(ctx) as mem:
        fact = mem.assert_fact(
            subject,
            predicate,
            object,
            valid_from=_valid_from(valid_from),
            valid_to=valid_to,
            confidence=confidence,
            author_kind=author_kind,  # type: ignore[arg-type]  # the engine validates it
            evidence=evidence or [],
            occurred_at=occurred_at,
        )
    if as_json:
        _dump_json(fact.model_dump(mode="json"))
        return
    _echo(fact.id)
    if fact.quarantined:
        _note(f"note: quarantined (author_kind={fact.author_kind}); not in facts until promoted")


@app.command("end")
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
) -> None:
    """Record "no longer": SUBJECT PREDICATE [OBJECT] stops holding at --at."""
    with _memory(ctx) as mem:
        kwargs: dict[str, Any] = {} if at is None else {"at": at}
        fact = mem.end_fact(subject, predicate, object, **kwargs)
    if as_json:
        _dump_json(fact.model_dump(mode="json"))
        return
    _echo(fact.id)
    if fact.applied is False:
        what = f"{subject} {predicate}" + (f" {object}" if object else "")
        _note(f"note: nothing matching {what!r} held then; the end is recorded but ended nothing")


@app.command("retract")
def retract_cmd(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(help="A fact id (from assert, facts or history).")],
    reason: ReasonOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Withdraw an assertion from now on; views known before now still see it."""
    with _memory(ctx, create=False) as mem:
        fact = mem.retract(id, reason=reason)
    if as_json:
        _dump_json(fact.model_dump(mode="json"))
        return
    _echo(f"retracted {fact.id}  ({fact.statement}) at {fmt_time(fact.expired_at)}")


@app.command("erase")
def erase_cmd(
    ctx: typer.Context,
    id: Annotated[str, typer.Argument(help="A fact id or an episode id.")],
    reason: ReasonOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Privacy deletion: remove a fact or an episode from every view; a tombstone remains."""
    with _memory(ctx, create=False) as mem:
        tombs = mem.erase(id, reason=reason)
    if as_json:
        _dump_json(_models_json(tombs))
        return
    for t in tombs:
        _echo(f"erased {t.kind} {t.id} at {fmt_time(t.erased_at)}")


@app.command("remember")
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
) -> None:
    """Store one episode as it arrived (prints the episode id)."""
    body = _read_text_arg(text)
    with _memory(ctx) as mem:
        ep = mem.remember(
            body,
            speaker=speaker,
            author_kind=author_kind,  # type: ignore[arg-type]  # the engine validates it
            occurred_at=occurred_at,
            session=session,
            source=source,
        )
    if as_json:
        _dump_json(ep.model_dump(mode="json"))
        return
    _echo(ep.id)


@app.command("define-predicate")
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
) -> None:
    """Add a predicate to the vocabulary, or override one."""
    with _memory(ctx) as mem:
        pred = mem.define_predicate(
            name,
            cardinality,  # type: ignore[arg-type]  # the engine validates it
            aliases=alias or [],
            inverse=inverse,
            object_kind=object_kind,  # type: ignore[arg-type]
        )
    if as_json:
        _dump_json(pred.model_dump(mode="json"))
        return
    _echo(f"defined {pred.name} ({pred.cardinality})")


# --- reads ----------------------------------------------------------------------------------
@app.command("facts")
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
    with _memory(ctx, create=False) as mem:
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
        _dump_json(_models_json(facts))
    elif facts:
        _echo(facts_table(facts, status=include_quarantined))
    else:
        _note("(no facts)")


@app.command("history")
def history_cmd(
    ctx: typer.Context,
    subject: str,
    predicate: Annotated[str | None, typer.Argument()] = None,
    as_json: JsonOpt = False,
) -> None:
    """Every version ever believed for SUBJECT [PREDICATE], with status and both time axes."""
    with _memory(ctx, create=False) as mem:
        versions = mem.history(subject, predicate)
    if as_json:
        _dump_json(_models_json(versions))
    elif versions:
        _echo(history_table(versions))
    else:
        _note("(no history)")


@app.command("recall")
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
    with _memory(ctx, create=False) as mem:
        ask = partial(mem.recall, query, k=k, valid_at=valid_at, known_at=known_at)
        hits = ask(min_score=min_score, diversity=diversity)
    if as_json:
        _dump_json(_models_json(hits))
        return
    if not hits:
        _note("(nothing above the relevance floor)")
    for h in hits:
        when = h.occurred_at.isoformat() if h.occurred_at else "-"
        flag = f"  [{h.warning}]" if h.warning else ""
        _echo(f"{h.score:.2f}  {h.kind:<7} {when}  {h.text}{flag}")


@app.command("entity")
def entity_cmd(
    ctx: typer.Context,
    name: str,
    valid_at: ValidAtOpt = None,
    known_at: KnownAtOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """An entity's profile: facts about it and facts pointing at it."""
    with _memory(ctx, create=False) as mem:
        profile = mem.entity(name, valid_at=valid_at, known_at=known_at)
    if as_json:
        _dump_json(profile.model_dump(mode="json"))
    else:
        _echo(profile_text(profile))


@app.command("snapshot")
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
    with _memory(ctx, create=False) as mem:
        snap = mem.snapshot(valid_at=valid_at, known_at=known_at)
    if graph:
        _dump_json(node_link(snap))
    elif as_json:
        _dump_json(snap.model_dump(mode="json"))
    elif snap.entities:
        _echo(snapshot_text(snap, ids=True))
    else:
        _note("(empty)")


def node_link(snap: Snapshot) -> dict[str, Any]:
    from networkx.readwrite import json_graph

    g = snap.to_networkx()
    try:
        data: dict[str, Any] = json_graph.node_link_data(g, edges="edges")
    except TypeError:  # networkx < 3.4 has no `edges=` (and says "links")
        data = json_graph.node_link_data(g)
    return data


@app.command("changes")
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
    with _memory(ctx, create=False) as mem:
        changes = mem.changes(since, until, known_at=known_at)
    if as_json:
        _dump_json(changes.model_dump(mode="json"))
    else:
        _echo(changes_text(changes))


@app.command("predicates")
def predicates_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """The predicate vocabulary in force."""
    with _memory(ctx, create=False) as mem:
        preds = mem.predicates()
    if as_json:
        _dump_json(_models_json(preds))
        return
    rows = [[p.name, p.cardinality, p.object_kind, p.origin, ", ".join(p.aliases)] for p in preds]
    _echo(format_table(["name", "cardinality", "object", "origin", "aliases"], rows))


@app.command("stats")
def stats_cmd(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Counts of what this namespace holds."""
    with _memory(ctx, create=False) as mem:
        st = mem.stats()
        where = str(mem.path)
    if as_json:
        _dump_json({"path": where, **st.model_dump(mode="json")})
        return
    rows = [["path", where], *[[k, str(v)] for k, v in st.model_dump().items() if k != "details"]]
    width = max(len(r[0]) for r in rows)
    for k, v in rows:
        _echo(f"{k.ljust(width)}  {v}")


# --- demo -----------------------------------------------------------------------------------
@app.command("demo")
def demo_cmd(
    ctx: typer.Context,
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the temporary memory to explore afterwards.")
    ] = False,
    data: Annotated[
        str | None,
        typer.Option("--data", metavar="FILE", help="Another conversation file to load."),
    ] = None,
) -> None:
    """Load a two-year sample conversation and walk through the temporal queries."""
    from . import _demo

    s = _settings(ctx)
    ok = _demo.run(
        path=s.path if s.path_given else None,
        keep=keep,
        data=Path(data) if data else None,
        namespace=s.namespace,
        out=_echo,
    )
    if not ok:
        raise typer.Exit(1)


# --- server and tokens ------------------------------------------------------------------------
ENV_TOKENS = "PALIMPSEST_TOKENS"
DEFAULT_TOKENS = "palimpsest-tokens.json"

token_app = typer.Typer(
    help="API tokens for `palimpsest serve --tokens FILE` (only their SHA-256 is stored).",
    no_args_is_help=True,
)
app.add_typer(token_app, name="token")

TokensFileOpt = Annotated[
    str,
    typer.Option(
        "--tokens", envvar=ENV_TOKENS, metavar="FILE", help="The tokens file.", show_envvar=True
    ),
]


def _free_port(host: str) -> int:
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@app.command("serve")
def serve_cmd(
    ctx: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535)] = 8000,
    tokens: Annotated[
        str | None,
        typer.Option(
            "--tokens",
            envvar=ENV_TOKENS,
            metavar="FILE",
            show_envvar=True,
            help="Require bearer tokens from FILE; without it, loopback clients only.",
        ),
    ] = None,
    consolidate_at: Annotated[
        str,
        typer.Option(
            "--consolidate-at", metavar="HH:MM", help="Run the nightly consolidation daily at."
        ),
    ] = "03:00",
    timezone: Annotated[
        str,
        typer.Option(
            "--timezone",
            metavar="ZONE",
            help="IANA timezone of --consolidate-at (e.g. Europe/Berlin).",
        ),
    ] = "UTC",
    no_consolidate: Annotated[
        bool, typer.Option("--no-consolidate", help="No scheduled consolidation.")
    ] = False,
) -> None:
    """Serve the HTTP API and the dashboard (/ui/) over the memory (OpenAPI docs at /docs).

    While it runs, the server holds the memory and records its address in the
    directory (server.json): read commands on it go through the server (with
    PALIMPSEST_TOKEN as the bearer token if it wants one); the others name it.
    """
    try:
        import uvicorn

        from .api import create_app
        from .api.schedule import Schedule
        from .api.security import is_loopback
    except ImportError as e:  # pragma: no cover - depends on the installed extras
        raise CliError(
            "missing_extra", f"the server needs `pip install 'palimpsest[server]'` ({e.name})"
        ) from None
    s = _settings(ctx)
    schedule = None if no_consolidate else Schedule.parse(consolidate_at, timezone)
    held = _held_by_server(s.path)
    if held is not None:
        raise held
    if port == 0:  # the address recorded for the CLI needs the real port
        port = _free_port(host)
    server_app = create_app(
        s.path,
        tokens_file=tokens,
        default_namespace=s.namespace,
        consolidation=schedule,
        address=(host, port),
    )
    if tokens is None and not is_loopback(host):
        _note("warning: no --tokens: only loopback clients will be served")
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}"
    _note(f"palimpsest: serving {s.path!r} on {url} (dashboard at {url}/ui/, docs at /docs)")
    if schedule is not None:
        at = schedule.describe()
        _note(f"palimpsest: consolidating daily at {at['at']} {at['timezone']}")
    uvicorn.run(server_app, host=host, port=port, log_level="info")


@token_app.command("create")
def token_create_cmd(
    namespace: Annotated[
        list[str],
        typer.Option("--namespace", "-n", help="A namespace it may use (repeatable; * = any)."),
    ],
    read_only: Annotated[bool, typer.Option("--read-only", help="No writes.")] = False,
    tokens: TokensFileOpt = DEFAULT_TOKENS,
    as_json: JsonOpt = False,
) -> None:
    """Create a token; prints the secret once (only its hash is kept)."""
    from .api.tokens import create_token

    secret, rec = create_token(
        Path(tokens), namespaces=namespace, rights="read" if read_only else "write"
    )
    if as_json:
        _dump_json({"token": secret, **rec.to_json()})
        return
    _echo(secret)
    _note(f"{rec.id}: {rec.rights} on {', '.join(rec.namespaces)} (in {tokens}); shown once")


@token_app.command("list")
def token_list_cmd(tokens: TokensFileOpt = DEFAULT_TOKENS, as_json: JsonOpt = False) -> None:
    """The tokens in the file (ids, rights, namespaces; never secrets)."""
    from .api.tokens import list_tokens

    records = list_tokens(Path(tokens))
    if as_json:
        _dump_json([{k: v for k, v in r.to_json().items() if k != "sha256"} for r in records])
    elif records:
        rows = [[r.id, r.rights, ", ".join(r.namespaces), r.created_at or "-"] for r in records]
        _echo(format_table(["id", "rights", "namespaces", "created"], rows))
    else:
        _note("(no tokens)")


@token_app.command("revoke")
def token_revoke_cmd(
    id: Annotated[str, typer.Argument(help="A token id (from `token list`).")],
    tokens: TokensFileOpt = DEFAULT_TOKENS,
) -> None:
    """Revoke a token; a running server refuses it from its next request."""
    from .api.tokens import revoke_token

    rec = revoke_token(Path(tokens), id)
    _echo(f"revoked {rec.id}")


# --- commands kept in modules of their own (each owned by one room) -----------------------
# Registering imports no engine code: their bodies import what they need when run.
_cli_transfer.register(app)
_cli_consolidate.register(app)
_cli_recall.register(app)
_cli_mcp.register(app)


# --- entry point ----------------------------------------------------------------------------
def _report(code: str, message: str) -> None:
    typer.echo(f"error [{code}]: {message}", err=True)


def main(argv: Sequence[str] | None = None) -> None:
    """The console script: run the app, turning errors into `error [<code>]: ...` + exit code."""
    from .errors import PalimpsestError

    try:
        app(args=list(argv) if argv is not None else None, prog_name="palimpsest")
    except PalimpsestError as e:
        _report(e.code, e.message)
        sys.exit(2)
    except CliError as e:
        _report(e.code, e.message)
        sys.exit(2)
    except KeyboardInterrupt:
        _report("interrupted", "interrupted")
        sys.exit(130)
    except Exception as e:
        if os.environ.get(ENV_DEBUG):
            raise
        _report("unexpected", f"{type(e).__name__}: {e} (set {ENV_DEBUG}=1 for a traceback)")
        sys.exit(1)


if __name__ == "__main__":
    # Run the canonical module, not this `__main__` copy, so that exception classes and
    # helpers shared with `_demo` are one and the same.
    from palimpsest.cli import main as _main

    _main()
