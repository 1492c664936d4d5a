"""`palimpsest demo`: two years of a user's life, replayed into a fresh memory.

    $ palimpsest demo            # a temporary memory, removed afterwards
    $ palimpsest demo --keep     # kept, to explore with the other commands

The sample (`palimpsest/data/demo_conversation.jsonl`) is a list of conversation turns, each
with the explicit fact operation a host model took from it (assert / end /
retract). Each line is replayed at the time it was said: the turn is stored as
an episode, then the operation is recorded with that episode as evidence. A
demo clock walks through the recorded times, so transaction times ("as known
at") mean what they would have meant in a live deployment.

The walk-through then asks the questions the engine exists for, and checks the
answers against the story; a mismatch is printed and makes the demo fail.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..data import DATA
from .common import CliError, echo, is_url, settings, shown
from .format import changes_text, fmt_time, history_table, profile_text, snapshot_text

if TYPE_CHECKING:
    from ..memory import Memory
    from ..models import AuthorKind

DEMO_DATA = DATA / "demo_conversation.jsonl"
SOURCE = "demo_conversation"
_RECORD_LAG = timedelta(seconds=30)  # a turn is recorded shortly after it is said

Out = Callable[[str], None]


def _utc(text: str) -> datetime:
    t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if t.tzinfo is None:
        raise ValueError(f"naive time in demo data: {text!r}")
    return t.astimezone(UTC)


@dataclass
class DemoClock:
    """The transaction clock of the demo: set by hand as the story advances."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance_to(self, t: datetime) -> None:
        self.now = max(t, self.now + timedelta(seconds=1))


@dataclass
class Story:
    turns: int = 0
    sessions: set[str] = field(default_factory=set)
    episodes: set[str] = field(default_factory=set)
    labels: dict[str, str] = field(default_factory=dict)  # label -> fact id
    first: datetime | None = None
    last: datetime | None = None


def load_lines(path: Path) -> list[dict[str, Any]]:
    lines = []
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except json.JSONDecodeError as e:
            raise CliError("invalid_input", f"{path}:{n}: not JSON ({e.msg})") from None
        if not isinstance(item, dict) or item.get("op") not in ("assert", "end", "retract"):
            raise CliError("invalid_input", f"{path}:{n}: expected an object with op")
        item["_line"] = n
        lines.append(item)
    return sorted(lines, key=lambda i: (_utc(i["occurred_at"]), i["_line"]))


def _describe(item: dict[str, Any]) -> str:
    op = item["op"]
    if op == "retract":
        return f"retract the earlier '{item['target']}' claim ({item.get('reason', '')})"
    what = f"{item['subject']} {item['predicate']} {item.get('object') or ''}".rstrip()
    if op == "end":
        return f"end {what} at {fmt_time(_utc(item['at']))}"
    start = item.get("valid_from", "default")
    start_t = (
        "always"
        if start is None
        else (
            f"said-at {fmt_time(_utc(item['occurred_at']))}"
            if start == "default"
            else fmt_time(_utc(start))
        )
    )
    end = fmt_time(_utc(item["valid_to"])) if item.get("valid_to") else "open"
    return f"assert {what}  [{start_t}, {end})"


def replay_story(mem: Memory, clock: DemoClock, lines: Sequence[dict[str, Any]], out: Out) -> Story:
    story = Story()
    last_text: tuple[str, str] | None = None
    for item in lines:
        said = _utc(item["occurred_at"])
        clock.advance_to(said + _RECORD_LAG)
        ep = mem.remember(
            item["text"],
            speaker=item.get("speaker", "user"),
            occurred_at=said,
            session=item.get("session"),
            source=SOURCE,
        )
        if (item["text"], item.get("session", "")) != last_text:
            story.turns += 1
            out(
                f"  {fmt_time(said)}  {item.get('session', '-'):<4} {item.get('speaker', 'user')}:"
                f' "{item["text"]}"'
            )
            last_text = (item["text"], item.get("session", ""))
        story.sessions.add(item.get("session") or "-")
        story.episodes.add(ep.id)
        story.first = story.first or said
        story.last = said
        op = item["op"]
        if op == "assert":
            kwargs: dict[str, Any] = {}
            if "valid_from" in item:
                kwargs["valid_from"] = item["valid_from"]
            fact = mem.assert_fact(
                item["subject"],
                item["predicate"],
                item["object"],
                valid_to=item.get("valid_to"),
                evidence=[ep.id],
                occurred_at=said,
                **kwargs,
            )
            if item.get("label"):
                story.labels[item["label"]] = fact.id
        elif op == "end":
            mem.end_fact(
                item["subject"],
                item["predicate"],
                item.get("object"),
                at=item["at"],
                evidence=[ep.id],
                occurred_at=said,
            )
        else:
            target = story.labels.get(item["target"])
            if target is None:
                raise CliError("invalid_input", f"retract: unknown label {item['target']!r}")
            mem.retract(target, reason=item.get("reason"))
        out(f"{'':22}-> {_describe(item)}")
    return story


@dataclass
class Checker:
    out: Out
    failures: list[str] = field(default_factory=list)
    passed: int = 0

    def answer(self, label: str, got: list[str], expected: list[str]) -> None:
        shown = ", ".join(got) if got else "(nothing)"
        if sorted(got) == sorted(expected):
            self.passed += 1
            self.out(f"    {label:<34} {shown}")
        else:
            want = ", ".join(expected) or "(nothing)"
            self.failures.append(f"{label}: got {shown}, expected {want}")
            self.out(f"    {label:<34} {shown}    <-- MISMATCH: the story says {want}")


def _objects(mem: Memory, s: str, p: str, v: str | datetime, k: str | datetime) -> list[str]:
    return [f.object or "-" for f in mem.facts(s, p, valid_at=v, known_at=k)]


def _header(out: Out, title: str) -> None:
    out("")
    out(f"== {title} ==")


def walkthrough(mem: Memory, story: Story, out: Out) -> Checker:
    now = mem.now()
    check = Checker(out)

    _header(out, "2. As-of questions: what was true then, as known then vs. as known now")
    out("  Every answer names a valid time (when it was true) and a known time (when the")
    out("  memory believed it). Defaults for both are now (the story's present,")
    out(f"  {fmt_time(now)}).")
    out("")
    out("  Where did the user live in September 2024?")
    check.answer(
        "as known then (2024-09-15):",
        _objects(mem, "user", "lives_in", "2024-09-15T00:00:00Z", "2024-09-15T00:00:00Z"),
        ["Sydney"],
    )
    check.answer(
        "as known now:",
        _objects(mem, "user", "lives_in", "2024-09-15T00:00:00Z", now),
        ["Melbourne"],
    )
    out("    (on 2024-11-03 the user said the move had slipped to 1 October: a fact learned")
    out("     late. The old belief is not overwritten; it is still there as of September.)")
    out("")
    out("  Where did Mira live in August 2024?")
    check.answer(
        "as known then (2024-08-01):",
        _objects(mem, "Mira", "lives_in", "2024-08-01T00:00:00Z", "2024-08-01T00:00:00Z"),
        ["Wellington"],
    )
    check.answer(
        "as known now:",
        _objects(mem, "Mira", "lives_in", "2024-08-01T00:00:00Z", now),
        ["Auckland"],
    )
    out("    (the Wellington claim was retracted on 2024-09-12; what it had cut back,")
    out("     Auckland, is restored for every view known after the retraction.)")
    out("")
    out("  Where did the user work? (a job change, announced three months ahead)")
    check.answer(
        "on 2024-03-01:",
        _objects(mem, "user", "works_at", "2024-03-01T00:00:00Z", now),
        ["Bluegum Analytics"],
    )
    check.answer(
        "on 2024-06-01:",
        _objects(mem, "user", "works_at", "2024-06-01T00:00:00Z", now),
        ["Harbour Health"],
    )
    check.answer("job title now:", _objects(mem, "user", "job_title", now, now), ["analytics lead"])
    out("")
    out('  Does the user play anything? ("I gave up the cello at Christmas": an end)')
    check.answer(
        "in October 2024:",
        _objects(mem, "user", "plays", "2024-10-01T00:00:00Z", now),
        ["cello"],
    )
    check.answer("now:", _objects(mem, "user", "plays", now, now), [])
    check.answer("pets now:", _objects(mem, "user", "pet", now, now), ["Pickle", "Biscuit"])

    _header(out, "3. history user lives_in: every version ever believed, never scraped off")
    out(history_table(mem.history("user", "lives_in"), indent="  "))
    out("  superseded = replaced by a later belief; current = believed now (valid now or")
    out("  later); ended = believed, but its window has closed; retracted = withdrawn.")

    _header(out, f"4. snapshot: the world model believed now ({fmt_time(now)}), by entity")
    out(snapshot_text(mem.snapshot(), indent="  "))

    _header(out, "5. changes between 2024-04-01 and 2025-01-01 (as known now)")
    out(changes_text(mem.changes("2024-04-01T00:00:00Z", "2025-01-01T00:00:00Z"), indent="  "))

    visit = "2025-04-16T00:00:00Z"
    _header(out, f"6. entity Mira, during her April 2025 visit (valid {fmt_time(_utc(visit))})")
    profile = mem.entity("Mira", valid_at=visit)
    out(profile_text(profile, indent="  "))
    check.answer(
        "Mira staying with (2025-04-16):",
        [f.object or "-" for f in profile.outgoing if f.predicate == "staying_with"],
        ["user"],
    )
    return check


READING = (
    ("2024-03-01T09:00:00Z", "I live in Lisbon and I work at Atlas Robotics as an engineer."),
    ("2024-03-01T09:01:00Z", "My brother Tiago has a dog named Bolt."),
    ("2024-11-20T18:30:00Z", "I no longer work at Atlas Robotics. I moved to Porto last month."),
    ("2024-11-20T18:31:00Z", "Thanks, talk soon!"),
)


def reading_demo(out: Out) -> None:
    """Section 7: what the engine reads from text by itself (spaCy, no LLM)."""
    _header(out, "7. Remembering raw text: the engine reads facts by itself (spaCy, no LLM)")
    from ..memory import Memory

    with tempfile.TemporaryDirectory(prefix="palimpsest-reading-") as tmp:
        last = _utc(READING[-1][0])
        with Memory.open(Path(tmp) / "m", clock=lambda: last + timedelta(minutes=5)) as mem:
            for when, text in READING:
                ep = mem.remember(text, occurred_at=when, session="reading")
                out(f"  {when[:16]}Z  user: {text!r}  (importance {ep.importance:.2f})")
                for f in ep.facts:
                    window = fmt_time(f.valid_from) if f.valid_from else "always"
                    out(f"      -> {f.op} {f.subject} {f.predicate} {f.object}  from {window}")
            moments: tuple[tuple[str, str | None], ...] = (
                ("in June 2024", "2024-06-01T00:00:00Z"),
                ("now", None),
            )
            for label, moment in moments:
                where = [f.object or "" for f in mem.facts("user", "lives_in", valid_at=moment)]
                jobs = [f.object or "" for f in mem.facts("user", "works_at", valid_at=moment)]
                lives, works = ", ".join(where) or "-", ", ".join(jobs) or "-"
                out(f"  {label}: lives in {lives}; works at {works}")
            _header(out, "8. recall and the nightly consolidation")
            for question in ("what is my brother's dog called?", "who is my dentist?"):
                hits = mem.recall(question, k=2)
                out(f"  recall {question!r}:")
                for h in hits:
                    out(f"      {h.score:.2f}  [{h.kind}] {h.text}")
                if not hits:
                    out("      (nothing above the relevance floor: the memory abstains)")
            outside: tuple[tuple[str, AuthorKind, str], ...] = (
                ("search", "tool", "The user plays chess."),
                ("Ana", "third_party", "The user plays chess every Sunday."),
            )
            for session, (who, kind, text) in enumerate(outside):
                mem.remember(
                    text,
                    speaker=who,
                    author_kind=kind,
                    session=f"q{session}",
                    occurred_at=READING[-1][0],
                )
            chess = [f.object for f in mem.facts("user", "plays")]
            out(f"  two outside sources say the user plays chess; active before: {chess or '-'}")
            report = mem.consolidate()
            out(f"  consolidate: {report.summary}")
            for c in report.changes:
                out(f"      {c.action}: {c.reason}")
            chess = [f.object for f in mem.facts("user", "plays")]
            out(f"  active after: {chess or '-'}; a second run: {mem.consolidate().summary}")


def run(
    *,
    path: str | None,
    keep: bool,
    data: Path | None,
    namespace: str,
    out: Out,
) -> bool:
    """Replay the sample into a memory at `path` (default: a fresh temporary directory).

    Returns whether every as-of answer matched the story.
    """
    from ..memory import Memory

    source = data or DEMO_DATA
    if not source.is_file():
        raise CliError("not_found", f"demo data not found at {source}")
    lines = load_lines(source)
    temp: Path | None = None
    where: Path | str
    if path is not None and is_url(path):
        where = path  # a database: checked for emptiness once open
    elif path is None:
        temp = Path(tempfile.mkdtemp(prefix="palimpsest-demo-"))
        where = temp / "memory"
    else:
        where = Path(path)
        if where.exists() and (not where.is_dir() or any(where.iterdir())):
            raise CliError(
                "path_in_use",
                f"{path!r} is not empty; the demo replays two years of history and needs a "
                "fresh directory (or leave --path out to use a temporary one)",
            )
    first = _utc(lines[0]["occurred_at"]) if lines else datetime.now(UTC)
    clock = DemoClock(first)
    try:
        out("Palimpsest demo: two years of one user's life, told to an agent in short")
        out("sessions. Each turn is stored as an episode; the fact the host model took")
        out("from it is recorded with that episode as evidence, at the time it was said.")
        _header(out, "1. The conversation (replayed at its own times)")
        # the host model's facts are asserted explicitly, so the text is stored as evidence
        # only; section 7 shows what the engine reads from text by itself
        with Memory.open(where, clock=clock, namespace=namespace, extractor=None) as mem:
            if isinstance(where, str) and mem.namespaces():
                raise CliError(
                    "path_in_use",
                    f"{shown(where)} is not empty; the demo replays two years of history "
                    "and needs a fresh database (or leave --path out to use a directory)",
                )
            story = replay_story(mem, clock, lines, out)
            clock.advance_to(clock.now + timedelta(hours=1))
            st = mem.stats()
            out("")
            out(
                f"  {story.turns} turns in {len(story.sessions)} sessions, "
                f"{fmt_time(story.first)} to {fmt_time(story.last)}: {st.episodes} episodes, "
                f"{st.entities} entities, {st.assertions} assertions, {st.versions} versions."
            )
            check = walkthrough(mem, story, out) if source == DEMO_DATA else Checker(out)
        reading_demo(out)
        _header(out, "9. Where to go next")
        out("  palimpsest consolidate --history   every nightly run, each change with its reason")
        out("  palimpsest export -o memory.jsonl  the whole log; `palimpsest import` restores it")
        out("  palimpsest serve / palimpsest mcp  the same memory over HTTP or to an MCP client")
        out("")
        if check.failures:
            out(f"{len(check.failures)} answer(s) did not match the story:")
            for f in check.failures:
                out(f"  - {f}")
        elif source == DEMO_DATA:
            out(f"All {check.passed} as-of answers matched the story.")
        if temp is None or keep:
            at = shown(where) if isinstance(where, str) else where  # never the password
            out(f"The memory is kept at {at}. Explore it, e.g.:")
            out(
                f"  palimpsest --path {at} facts user --valid-at 2024-09-15T00:00:00Z"
                " --known-at 2024-09-15T00:00:00Z"
            )
            out(f"  palimpsest --path {at} history user lives_in")
            out("  (reads without --known-at see the memory as of the real now)")
        else:
            out("The temporary memory was removed (pass --keep to explore it afterwards).")
        return not check.failures
    finally:
        if temp is not None and not keep:
            shutil.rmtree(temp, ignore_errors=True)


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
    s = settings(ctx)
    ok = run(
        path=s.path if s.path_given else None,
        keep=keep,
        data=Path(data) if data else None,
        namespace=s.namespace,
        out=echo,
    )
    if not ok:
        raise typer.Exit(1)
