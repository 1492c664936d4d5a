"""The `palimpsest` command, run for real in subprocesses against tmp_path memories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(sys.executable).parent / "palimpsest"

K_BEFORE = "2000-01-01T00:00:00Z"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
    # commands open the memory themselves: no owner process stays behind a test
    # (tests/test_owner.py runs commands through owners)
    env["PALIMPSEST_OWNER"] = "off"
    env.update(extra or {})
    return env


def run(
    *args: str,
    path: Path | None = None,
    input: str | None = None,
    env: dict[str, str] | None = None,
    expect: int | None = 0,
    cmd: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    base = cmd or [sys.executable, "-m", "palimpsest.cli"]
    argv = [*base, *(["--path", str(path)] if path is not None else []), *args]
    proc = subprocess.run(
        argv, input=input, capture_output=True, text=True, env=_env(env), timeout=120
    )
    if expect is not None:
        assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def run_json(*args: str, path: Path, input: str | None = None) -> Any:
    return json.loads(run(*args, "--json", path=path, input=input).stdout)


def objects(path: Path, *args: str) -> list[str]:
    return [f["object"] for f in run_json("facts", *args, path=path)]


@pytest.fixture
def mem_path(tmp_path: Path) -> Path:
    return tmp_path / "mem"


# --- writes and as-of reads -------------------------------------------------------------------
def test_assert_then_facts_json_round_trip_with_as_of_times(mem_path: Path) -> None:
    sydney = run_json(
        "assert", "user", "lives_in", "Sydney", "--from", "2024-06-01T00:00:00Z", path=mem_path
    )
    assert sydney["object"] == "Sydney" and sydney["id"].startswith("fa_")
    k1 = sydney["recorded_at"]
    plain = run(
        "assert", "user", "lives_in", "Melbourne", "--from", "2023-01-01T00:00:00Z", path=mem_path
    ).stdout.strip()
    assert re.fullmatch(r"fa_[0-9a-f]+", plain)  # plain output: just the id, for scripts

    [now_fact] = run_json("facts", "user", "lives_in", path=mem_path)
    assert now_fact["id"] == sydney["id"]
    assert now_fact["valid_from"] == "2024-06-01T00:00:00Z" and now_fact["valid_to"] is None
    assert now_fact["status"] == "current"

    [mel] = run_json(
        "facts", "user", "lives_in", "--valid-at", "2023-05-01T00:00:00Z", path=mem_path
    )
    assert mel["id"] == plain and mel["object"] == "Melbourne"
    assert mel["valid_to"] == "2024-06-01T00:00:00Z"  # cut back by the later Sydney
    # as known at K1 (before Melbourne was learned) nothing was known for 2023-05
    assert (
        objects(
            mem_path, "user", "lives_in", "--valid-at", "2023-05-01T00:00:00Z", "--known-at", k1
        )
        == []
    )
    assert objects(mem_path, "user", "--known-at", K_BEFORE) == []
    assert objects(mem_path, "--object", "Sydney") == ["Sydney"]

    table = run("facts", "user", path=mem_path).stdout
    assert table.splitlines()[0].split() == [
        "subject",
        "predicate",
        "object",
        "valid_from",
        "valid_to",
        "recorded",
        "id",
    ]
    assert "Sydney" in table and "2024-06-01" in table and sydney["id"] in table


def test_worked_example_end_retract_and_history(mem_path: Path) -> None:
    """DESIGN.md's worked example, through the command line."""
    sydney = run_json(
        "assert", "user", "lives_in", "Sydney", "--from", "2024-06-01T00:00:00Z", path=mem_path
    )
    run("assert", "user", "lives_in", "Melbourne", "--from", "2023-01-01T00:00:00Z", path=mem_path)
    end = run_json(
        "end", "user", "lives_in", "Sydney", "--at", "2025-02-01T00:00:00Z", path=mem_path
    )
    assert end["op"] == "end" and end["applied"] is True
    k3 = end["recorded_at"]
    sept = ("--valid-at", "2024-09-01T00:00:00Z")
    assert objects(mem_path, "user", "lives_in", *sept) == ["Sydney"]
    assert objects(mem_path, "user", "lives_in", "--valid-at", "2025-03-01T00:00:00Z") == []

    out = run("retract", sydney["id"], "--reason", "user corrected it", path=mem_path).stdout
    assert out.startswith(f"retracted {sydney['id']}")
    assert objects(mem_path, "user", "lives_in", *sept, "--known-at", k3) == ["Sydney"]
    assert objects(mem_path, "user", "lives_in", *sept) == ["Melbourne"]
    assert objects(mem_path, "user", "lives_in", "--valid-at", "2025-03-01T00:00:00Z") == [
        "Melbourne"
    ]

    history = run_json("history", "user", "lives_in", path=mem_path)
    by_status: dict[str, list[dict[str, Any]]] = {}
    for v in history:
        by_status.setdefault(v["status"], []).append(v)
    assert {"superseded", "retracted", "current"} <= set(by_status)
    [current] = by_status["current"]
    assert current["object"] == "Melbourne" and current["valid_to"] is None
    assert all(v["id"] == sydney["id"] for v in by_status["retracted"])
    assert all(v["expired_at"] is not None for v in by_status["superseded"])
    assert "retracted" in run("history", "user", path=mem_path).stdout

    again = run("retract", sydney["id"], path=mem_path, expect=2)
    assert again.stderr.startswith("error [conflict]:")


def test_end_that_ends_nothing_says_so(mem_path: Path) -> None:
    run("assert", "user", "lives_in", "Sydney", "--from", "2024-06-01T00:00:00Z", path=mem_path)
    proc = run("end", "user", "lives_in", "Paris", "--at", "2025-01-01T00:00:00Z", path=mem_path)
    assert proc.stdout.startswith("fa_") and "ended nothing" in proc.stderr
    assert objects(mem_path, "user", "lives_in", "--valid-at", "2025-06-01T00:00:00Z") == ["Sydney"]


def test_erase_removes_the_fact_from_every_view(mem_path: Path) -> None:
    ep = run(
        "remember",
        "My sister Mira lives in Oslo.",
        "--session",
        "s1",
        "--occurred-at",
        "2024-01-05T10:00:00Z",
        path=mem_path,
    ).stdout.strip()
    assert ep.startswith("ep_")
    fact = run_json(
        "assert",
        "Mira",
        "lives_in",
        "Oslo",
        "--evidence",
        ep,
        "--occurred-at",
        "2024-01-05T10:00:00Z",
        path=mem_path,
    )
    assert fact["evidence"] == [ep] and fact["valid_from"] == "2024-01-05T10:00:00Z"
    k = fact["recorded_at"]
    assert objects(mem_path, "Mira", "--known-at", k) == ["Oslo"]

    # the extractor read the same fact from the episode: erasing the episode takes both
    tombs = run_json("erase", ep, "--reason", "privacy request", path=mem_path)
    kinds = {(t["id"], t["kind"], t["reason"]) for t in tombs}
    assert (ep, "episode", "privacy request") in kinds
    assert (fact["id"], "fact", "privacy request") in kinds
    assert len(tombs) == 4  # the episode, the explicit fact, two extracted (sibling, lives_in)
    assert objects(mem_path, "Mira", "--known-at", k) == []  # gone from past views too
    assert objects(mem_path, "Mira") == []
    hist = run_json("history", "Mira", path=mem_path)
    assert hist and all(t["status"] == "erased" and t["object"] is None for t in hist)
    assert "Oslo" not in run("history", "Mira", path=mem_path).stdout

    again = run("erase", fact["id"], path=mem_path, expect=2)
    assert again.stderr.startswith("error [erased]:")
    missing = run("retract", "fa_doesnotexist", path=mem_path, expect=2)
    assert missing.stderr.startswith("error [not_found]:")


# --- errors -----------------------------------------------------------------------------------
def test_a_write_run_again_with_its_idempotency_key_prints_the_first_outcome(
    mem_path: Path,
) -> None:
    key = ("--idempotency-key", "req-1")
    first = run_json("assert", "user", "likes", "jazz", *key, path=mem_path)
    assert run_json("assert", "user", "likes", "jazz", *key, path=mem_path) == first
    assert [f["id"] for f in run_json("history", "user", path=mem_path)] == [first["id"]]
    reused = run("assert", "user", "likes", "tea", *key, path=mem_path, expect=2)
    assert reused.stderr.startswith("error [idempotency_key_reused]:")
    ep = run_json("remember", "We met at the harbour.", "--idempotency-key", "e", path=mem_path)
    again = run_json("remember", "We met at the harbour.", "--idempotency-key", "e", path=mem_path)
    assert again == ep and run_json("stats", path=mem_path)["episodes"] == 1


def test_naive_datetime_is_rejected_with_exit_2_and_nothing_stored(mem_path: Path) -> None:
    proc = run(
        "assert",
        "user",
        "lives_in",
        "Sydney",
        "--from",
        "2024-06-01T00:00:00",
        path=mem_path,
        expect=2,
    )
    assert proc.stderr.startswith("error [naive_datetime]:")
    assert "timezone" in proc.stderr and proc.stdout == ""
    assert run_json("facts", path=mem_path) == []
    read = run("facts", "--valid-at", "2024-06-01T00:00:00", path=mem_path, expect=2)
    assert read.stderr.startswith("error [naive_datetime]:")
    bad = run("changes", "--since", "last tuesday", path=mem_path, expect=2)
    assert bad.stderr.startswith("error [invalid_time]:")


def test_reads_do_not_create_a_memory(tmp_path: Path) -> None:
    where = tmp_path / "nowhere"
    proc = run("facts", path=where, expect=2)
    assert proc.stderr.startswith("error [no_memory]:")
    assert not where.exists()


def test_unexpected_errors_exit_1(tmp_path: Path) -> None:
    a_file = tmp_path / "file"
    a_file.write_text("not a directory")
    proc = run("assert", "user", "likes", "tea", path=a_file, expect=1)
    assert proc.stderr.startswith("error [unexpected]:")


def test_usage_errors_exit_2(mem_path: Path) -> None:
    proc = run("assert", "user", path=mem_path, expect=2)
    assert "Missing argument" in proc.stderr


# --- the rest of the verbs --------------------------------------------------------------------
def test_define_predicate_import_and_predicates(mem_path: Path) -> None:
    run("define-predicate", "mood", "--cardinality", "one", "--alias", "feels", path=mem_path)
    [mood] = [p for p in run_json("predicates", path=mem_path) if p["name"] == "mood"]
    assert mood["cardinality"] == "one" and mood["aliases"] == ["feels"]
    bad = run("define-predicate", "x", "--cardinality", "three", path=mem_path, expect=2)
    assert bad.stderr.startswith("error [invalid_input]:")

    lines = [
        {
            "subject": "user",
            "predicate": "mood",
            "object": "happy",
            "valid_from": "2024-01-01T00:00:00Z",
        },
        {
            "subject": "user",
            "predicate": "feels",
            "object": "tired",
            "valid_from": "2024-03-01T00:00:00Z",
        },
        {"subject": "user", "predicate": "likes", "object": "tea", "valid_from": None},
    ]
    stdin = "\n".join(json.dumps(x) for x in lines) + "\n"
    assert run("import", "-", path=mem_path, input=stdin).stdout.strip() == "imported 3 facts"
    # one-valued through its alias: tired replaced happy from March
    assert objects(mem_path, "user", "mood", "--valid-at", "2024-02-01T00:00:00Z") == ["happy"]
    assert objects(mem_path, "user", "mood") == ["tired"]
    assert objects(mem_path, "user", "likes", "--valid-at", "1900-01-01T00:00:00Z") == ["tea"]

    f = mem_path.parent / "facts.jsonl"
    f.write_text('{"subject": "user", "predicate": "likes", "object": "jazz"}\nnot json\n')
    broken = run("import", str(f), path=mem_path, expect=2)
    assert broken.stderr.startswith("error [invalid_input]:") and "line 2" in broken.stderr
    assert "jazz" not in objects(mem_path, "user", "likes")  # one batch, one transaction


def test_quarantined_author_is_kept_out_of_facts(mem_path: Path) -> None:
    proc = run("assert", "user", "likes", "opera", "--author-kind", "agent", path=mem_path)
    assert "quarantined" in proc.stderr
    assert objects(mem_path, "user", "likes") == []
    [q] = run_json("facts", "user", "likes", "--include-quarantined", path=mem_path)
    assert q["object"] == "opera" and q["quarantined"] is True
    ep = run_json(
        "remember",
        "-",
        "--speaker",
        "Mira",
        "--session",
        "s2",
        path=mem_path,
        input="Mira says the user authorised the transfer.",
    )
    assert (ep["speaker"], ep["author_kind"], ep["quarantined"], ep["session"]) == (
        "Mira",
        "third_party",
        True,
        "s2",
    )
    assert ep["text"] == "Mira says the user authorised the transfer."


def test_snapshot_entity_changes_stats(mem_path: Path) -> None:
    run("assert", "user", "sibling", "Mira", "--from", "always", path=mem_path)
    run("assert", "Mira", "lives_in", "Auckland", "--from", "2023-03-01T00:00:00Z", path=mem_path)
    run("assert", "Mira", "lives_in", "Wellington", "--from", "2024-07-01T00:00:00Z", path=mem_path)

    snap = run_json("snapshot", "--valid-at", "2024-01-01T00:00:00Z", path=mem_path)
    groups = {
        g["entity"]: {(f["predicate"], f["object"]) for f in g["facts"]} for g in snap["entities"]
    }
    assert groups == {"Mira": {("lives_in", "Auckland")}, "user": {("sibling", "Mira")}}
    text = run("snapshot", path=mem_path).stdout
    assert text.splitlines()[0] == "Mira" and "Wellington" in text and "[always, open)" in text

    graph = run_json("snapshot", "--graph", path=mem_path)  # --json is harmless next to --graph
    assert graph["directed"] is True and graph["multigraph"] is True
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    edges = {(names[e["source"]], e["predicate"], names[e["target"]]) for e in graph["edges"]}
    assert edges == {("user", "sibling", "Mira"), ("Mira", "lives_in", "Wellington")}

    prof = run_json("entity", "mira", "--valid-at", "2024-01-01T00:00:00Z", path=mem_path)
    assert prof["entity"]["name"] == "Mira"
    assert [(f["predicate"], f["object"]) for f in prof["outgoing"]] == [("lives_in", "Auckland")]
    assert [(f["subject"], f["predicate"]) for f in prof["incoming"]] == [("user", "sibling")]
    assert run("entity", "Nobody", path=mem_path, expect=2).stderr.startswith("error [not_found]:")

    ch = run_json(
        "changes",
        "--since",
        "2024-06-01T00:00:00Z",
        "--until",
        "2024-08-01T00:00:00Z",
        path=mem_path,
    )
    assert [(f["object"], f["valid_from"]) for f in ch["started"]] == [
        ("Wellington", "2024-07-01T00:00:00Z")
    ]
    assert [f["object"] for f in ch["ended"]] == ["Auckland"]
    assert (
        "started (valid_from in range): 1"
        in run(
            "changes",
            "--since",
            "2024-06-01T00:00:00Z",
            "--until",
            "2024-08-01T00:00:00Z",
            path=mem_path,
        ).stdout
    )

    st = run_json("stats", path=mem_path)
    assert (st["assertions"], st["namespace"], st["path"]) == (3, "default", str(mem_path))


def test_namespaces_and_env_path(mem_path: Path) -> None:
    env = {"PALIMPSEST_PATH": str(mem_path)}
    run("--namespace", "work", "assert", "user", "uses", "vim", env=env)
    assert (
        json.loads(run("--namespace", "work", "facts", "--json", env=env).stdout)[0]["object"]
        == "vim"
    )
    assert json.loads(run("facts", "--json", env=env).stdout) == []  # default namespace
    assert mem_path.is_dir()


# --- startup cost and the console script ------------------------------------------------------
HEAVY = ("kuzu", "torch", "spacy", "sentence_transformers", "palimpsest.memory", "pydantic")


def _loaded_after(code: str) -> list[str]:
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=_env()
    ).stdout
    loaded: list[str] = json.loads(out.strip().replace("'", '"'))
    return loaded


def test_import_cli_does_not_load_kuzu() -> None:
    loaded = _loaded_after("import palimpsest.cli")
    for heavy in ("kuzu", "palimpsest.memory", "pydantic", "torch", "spacy"):
        assert heavy not in loaded


# every verb `palimpsest --help` lists, in its order; each is backed by a command
HELP_VERBS = [
    "assert", "end", "retract", "erase", "remember", "define-predicate", "facts", "history",
    "recall", "entity", "snapshot", "changes", "predicates", "stats", "demo", "serve",
    "import", "export", "consolidate", "unmerge", "reindex", "migrate", "mcp", "token", "owner",
]  # fmt: skip
HEAVY = ("torch", "spacy", "sentence_transformers", "transformers")

PROBE = """
import sys
from palimpsest.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print("loaded:", sorted(m for m in sys.argv[1:] if m in sys.modules))
"""


def test_help_loads_no_model_and_lists_exactly_the_backed_verbs() -> None:
    """Fast by construction: `--help` imports neither torch nor spaCy (seconds each).
    Only backed verbs: the Commands listed are exactly the registered commands, and
    each one's own `--help` runs."""
    import typer.main
    from typer.testing import CliRunner

    from palimpsest.cli.app import app

    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *HEAVY], capture_output=True, text=True, env=_env(),
        timeout=120, check=True,
    )  # fmt: skip
    assert proc.stdout.rstrip().endswith("loaded: []"), proc.stdout
    listed = re.findall(r"^  ([a-z][a-z-]*)  ", proc.stdout.split("Commands:")[1], re.M)
    assert listed == HELP_VERBS
    registered = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert sorted(registered) == sorted(HELP_VERBS)
    runner = CliRunner()
    for verb in HELP_VERBS:
        cb = registered[verb]
        assert cb.callback is not None or getattr(cb, "commands", None), verb  # or a group
        got = runner.invoke(app, [verb, "--help"])
        assert got.exit_code == 0 and got.stdout.startswith("Usage: "), (verb, got.stdout)
    assert "PALIMPSEST_PATH" in proc.stdout
    sub = run("facts", "--help").stdout
    assert "--valid-at" in sub and "--known-at" in sub and "--json" in sub


VERB_PROBE = """
import json, sys
from palimpsest.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))
"""
MODELS = ("spacy", "onnxruntime", "tokenizers", "torch", "sentence_transformers")


def _models_after(*argv: str) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", VERB_PROBE, json.dumps(MODELS), *argv],
        capture_output=True, text=True, env=_env(), timeout=300, check=True,
    )  # fmt: skip
    loaded: list[str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.models
def test_a_verb_loads_only_the_models_it_uses(mem_path: Path) -> None:
    """A cold call: reads and fact writes load no model, recall only the int8 embedder
    (onnxruntime, no spaCy, no torch); remember reads text with spaCy (which, in an
    environment that has torch, imports it itself: tests/test_embedder_int8.py)."""
    run("remember", "My sister Mira moved to Lisbon in May.", path=mem_path)
    p = ["--path", str(mem_path)]
    assert _models_after(*p, "facts") == []
    assert _models_after(*p, "assert", "user", "likes", "jazz") == []
    assert _models_after(*p, "recall", "where does my sibling live?") == [
        "onnxruntime",
        "tokenizers",
    ]
    assert {"spacy", "onnxruntime"} <= set(_models_after(*p, "remember", "I like tea."))


@pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed (pip install -e .)")
def test_console_script(mem_path: Path) -> None:
    cmd = [str(SCRIPT)]
    fid = run(
        "assert", "user", "likes", "jazz", "--from", "2024-01-01T00:00:00Z", path=mem_path, cmd=cmd
    ).stdout.strip()
    facts = json.loads(run("facts", "user", "--json", path=mem_path, cmd=cmd).stdout)
    assert [(f["id"], f["object"]) for f in facts] == [(fid, "jazz")]
    err = run("facts", "--known-at", "2024-01-01T00:00:00", path=mem_path, cmd=cmd, expect=2)
    assert err.stderr.startswith("error [naive_datetime]:")
    assert run("--version", cmd=cmd).stdout.startswith("palimpsest ")


# --- the demo ---------------------------------------------------------------------------------
def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else None]


def test_demo_tells_the_story_and_answers_as_of_questions(tmp_path: Path) -> None:
    proc = run("demo", env={"TMPDIR": str(tmp_path)})
    out = proc.stdout
    lived = _section(out, "Where did the user live in September 2024?")
    assert re.search(r"as known then \(2024-09-15\):\s+Sydney$", lived, re.M)
    assert re.search(r"as known now:\s+Melbourne$", lived, re.M)
    mira = _section(out, "Where did Mira live in August 2024?")
    assert re.search(r"as known then \(2024-08-01\):\s+Wellington$", mira, re.M)
    assert re.search(r"as known now:\s+Auckland$", mira, re.M)
    assert re.search(r"on 2024-06-01:\s+Harbour Health$", out, re.M)
    assert "MISMATCH" not in out and "as-of answers matched the story" in out
    for heading in ("history user lives_in", "snapshot", "changes between", "entity Mira"):
        assert heading in out
    reading = _section(out, "Remembering raw text")
    assert "-> assert user lives_in Lisbon" in out and "-> end user works_at Atlas Robotics" in out
    assert "now: lives in Porto; works at -" in out, reading
    assert "[episode] My brother Tiago has a dog named Bolt." in out  # recall finds it first
    assert "the memory abstains" in out  # nothing about a dentist was ever said
    assert "consolidate: 1 promoted" in out and "a second run: nothing to consolidate" in out
    # the temporary memory is removed unless --keep
    assert not list(tmp_path.glob("palimpsest-demo-*"))


def test_demo_memory_is_queryable_afterwards(tmp_path: Path) -> None:
    where = tmp_path / "demo"
    proc = run("demo", path=where)
    assert f"kept at {where}" in proc.stdout
    sept = ("--valid-at", "2024-09-15T00:00:00Z")
    assert objects(where, "user", "lives_in", *sept, "--known-at", "2024-09-15T00:00:00Z") == [
        "Sydney"
    ]
    assert objects(where, "user", "lives_in", *sept) == ["Melbourne"]
    [ep] = {e for f in run_json("facts", "user", "works_at", path=where) for e in f["evidence"]}
    assert ep.startswith("ep_")
    # a second run refuses to replay two years of history over an existing memory
    again = run("demo", path=where, expect=2)
    assert again.stderr.startswith("error [path_in_use]:")
