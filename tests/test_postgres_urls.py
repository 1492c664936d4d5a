"""A `postgresql://` URL works wherever a memory directory does: `Memory.open`,
`palimpsest.connect`, `--path`/PALIMPSEST_PATH (every command), `palimpsest mcp`,
`palimpsest serve` and its dashboard, import/export; `palimpsest migrate` creates or
upgrades the schema. No message ever shows the password.

    $ palimpsest --path postgresql://palimpsest:secret@127.0.0.1:5432/mem facts --json
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from palimpsest.cli import main
from palimpsest.errors import SchemaError, StoreUnavailable, ValidationError
from palimpsest.memory import Memory
from palimpsest.postgres._db import safe_url


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`palimpsest ARGS` in this process: its exit status, stdout and stderr."""
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def password(url: str) -> str:
    secret = url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]
    assert len(secret) >= 8  # the fixture's database has one, so the checks below mean it
    return secret


def open_plain(url: str) -> Memory:
    return Memory.open(url, extractor=None, embedder=None)


# --- palimpsest migrate ---------------------------------------------------------------------
def test_migrate_creates_the_schema_and_prints_its_version(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from palimpsest.postgres._schema import SCHEMA_VERSION

    code, out, err = cli(capsys, "migrate", pg_url)
    assert code == 0, err
    assert out.strip() == f"{safe_url(pg_url)}: schema version {SCHEMA_VERSION}"
    assert password(pg_url) not in out + err
    # again: nothing to do, the same answer; --path names it too, --json for scripts
    code, out, err = cli(capsys, "--path", pg_url, "migrate", "--json")
    assert code == 0, err
    assert json.loads(out) == {
        "location": safe_url(pg_url),
        "backend": "postgresql",
        "schema_version": SCHEMA_VERSION,
    }


def test_an_older_schema_is_refused_naming_migrate_which_upgrades_it(
    pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from palimpsest.postgres import _store
    from palimpsest.postgres._schema import Migration, migrations

    assert cli(capsys, "migrate", pg_url)[0] == 0  # the schema this package has
    # ... then a package one migration newer
    later = Migration(_store.SCHEMA_VERSION + 1, "test", ("CREATE TABLE test_later (x int)",))
    monkeypatch.setattr(_store, "migrations", lambda: [*migrations(), later])
    monkeypatch.setattr(_store, "SCHEMA_VERSION", later.version)
    with pytest.raises(SchemaError) as e:
        open_plain(pg_url)
    assert f"palimpsest migrate {safe_url(pg_url)}" in e.value.message
    assert password(pg_url) not in e.value.message
    code, out, err = cli(capsys, "--path", pg_url, "facts")
    assert code == 2 and "error [schema_error]" in err and "palimpsest migrate" in err
    assert password(pg_url) not in out + err
    code, out, err = cli(capsys, "migrate", pg_url)
    assert code == 0, err
    assert out.strip() == f"{safe_url(pg_url)}: schema version {later.version}"


def test_migrate_on_a_directory_says_it_migrates_when_it_opens(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "migrate", str(tmp_path / "none"))
    assert code == 2 and "error [no_memory]" in err
    code, out, err = cli(capsys, "--path", str(tmp_path), "migrate")
    assert code == 0, err
    assert "migrates when it opens" in out


# --- bad and unreachable URLs --------------------------------------------------------------
def test_a_malformed_url_is_refused_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for url in (
        "postgresql://me:hunter2secret@127.0.0.1:notaport/mem",
        "postgresql://me:hunter2secret@127.0.0.1:5432/mem?nosuchparameter=1",
        "postgresql://me:hunter2 secret@127.0.0.1:5432/mem",
    ):
        with pytest.raises(ValidationError) as e:
            Memory.open(url, extractor=None, embedder=None)
        assert "hunter2" not in e.value.message and "me@127.0.0.1" in e.value.message
        code, out, err = cli(capsys, "--path", url, "facts")
        assert code == 2 and "error [invalid_input]" in err, err
        assert "hunter2" not in out + err
        code, out, err = cli(capsys, "migrate", url)
        assert code == 2 and "error [invalid_input]" in err and "hunter2" not in out + err


def test_an_unreachable_database_is_store_unavailable_without_its_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from .pg_server import free_port

    url = f"postgresql://me:hunter2secret@127.0.0.1:{free_port()}/mem"  # nothing listens
    with pytest.raises(StoreUnavailable) as e:
        Memory.open(url, extractor=None, embedder=None)
    assert "hunter2" not in e.value.message and safe_url(url) in e.value.message
    code, out, err = cli(capsys, "--path", url, "stats")
    assert code == 2 and "error [store_unavailable]" in err
    assert "hunter2" not in out + err


def test_a_url_naming_a_primary_and_its_standby_opens_the_one_that_answers(
    pg_url: str,
) -> None:
    """libpq's multi-host form (a failover pair): tried in order, the first that answers
    and accepts writes serves; a port that is not a number is still refused."""
    from .pg_server import free_port

    head, _, tail = pg_url.rpartition("@")
    hostport, _, rest = tail.partition("/")
    down = f"127.0.0.1:{free_port()}"  # the failed primary: nothing listens
    url = f"{head}@{down},{hostport}/{rest}?target_session_attrs=read-write"
    with open_plain(url) as mem:
        mem.assert_fact("user", "lives_in", "Lisbon")
    with open_plain(pg_url) as mem:
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Lisbon"]
    with pytest.raises(ValidationError, match="not a number"):
        open_plain(f"{head}@{hostport},127.0.0.1:x/{rest}")


# --- Memory.open, palimpsest.connect ---------------------------------------------------------
def test_memory_location_is_the_url_without_its_password(pg_url: str) -> None:
    with open_plain(pg_url) as mem:
        assert mem.location == safe_url(pg_url)
        assert password(pg_url) not in mem.location
        with pytest.raises(ValidationError, match=r"Memory\.location"):
            mem.path  # noqa: B018 - a database has no directory
        mem.assert_fact("user", "lives_in", "Sydney", valid_from="2024-06-01T00:00:00Z")
    with open_plain(pg_url) as mem:  # it was written, not just cached
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Sydney"]


def test_memory_location_of_a_directory_is_its_path(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m", extractor=None, embedder=None) as mem:
        assert mem.location == str(tmp_path / "m") and mem.path == tmp_path / "m"


def test_connect_opens_a_database_here_with_no_owner(pg_url: str, tmp_path: Path) -> None:
    import palimpsest
    from palimpsest.owner.client import OwnerClient

    with palimpsest.connect(pg_url, models=False) as mem:
        assert isinstance(mem, Memory) and not isinstance(mem, OwnerClient)
        assert mem.location == safe_url(pg_url)
        mem.assert_fact("user", "lives_in", "Perth", valid_from="2024-06-01T00:00:00Z")
        # a second process (here: a second Memory) opens it alongside, no lock between
        with palimpsest.connect(pg_url, models=False) as other:
            assert [f.object for f in other.facts("user", "lives_in")] == ["Perth"]


def test_an_owner_refuses_a_database(pg_url: str) -> None:
    from palimpsest.owner.client import OwnerClient
    from palimpsest.owner.run import run

    with pytest.raises(ValidationError, match="no owner process") as e:
        OwnerClient(pg_url, start=False)
    assert password(pg_url) not in e.value.message
    assert run(pg_url, models=False) == 3


# --- the CLI ---------------------------------------------------------------------------------
def test_cli_commands_take_a_url(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(
        capsys, "--path", pg_url, "assert", "user", "lives_in", "Sydney",
        "--from", "2024-06-01T00:00:00Z",
    )  # fmt: skip
    assert code == 0, err
    code, out, err = cli(capsys, "--path", pg_url, "facts", "user", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["Sydney"]
    code, out, err = cli(capsys, "--path", pg_url, "stats", "--json")
    assert code == 0, err
    assert json.loads(out)["path"] == safe_url(pg_url)
    code, out, err = cli(capsys, "--path", pg_url, "owner", "status")
    assert code == 0 and "no process owns" in out and password(pg_url) not in out
    # export from the database, import into a directory, and back into another database
    dump = tmp_path / "memory.jsonl"
    code, out, err = cli(capsys, "--path", pg_url, "export", "-o", str(dump))
    assert code == 0, err
    code, out, err = cli(capsys, "--path", str(tmp_path / "kuzu"), "import", str(dump))
    assert code == 0, err
    code, out, err = cli(capsys, "--path", str(tmp_path / "kuzu"), "facts", "user", "--json")
    assert [f["object"] for f in json.loads(out)] == ["Sydney"]
    for text in (out, err):
        assert password(pg_url) not in text


def test_path_from_the_environment_may_be_a_url(
    pg_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PALIMPSEST_PATH", pg_url)
    code, out, err = cli(capsys, "assert", "user", "likes", "tea")
    assert code == 0, err
    code, out, err = cli(capsys, "facts", "user", "likes", "--json")
    assert code == 0, err
    assert [f["object"] for f in json.loads(out)] == ["tea"]


# --- palimpsest mcp, palimpsest serve ----------------------------------------------------------
def test_mcp_opens_a_database_in_its_own_process(pg_url: str) -> None:
    from palimpsest.mcp.server import _reach

    mem = _reach(pg_url, "default", False, True, True, None)  # sharing on, as the CLI runs it
    try:
        assert isinstance(mem, Memory) and mem.location == safe_url(pg_url)
        mem.assert_fact("user", "lives_in", "Hobart", valid_from="2024-06-01T00:00:00Z")
        assert [f.object for f in mem.facts("user", "lives_in")] == ["Hobart"]
    finally:
        mem.close()


def test_serve_and_its_dashboard_take_a_url(pg_url: str, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from palimpsest.api import create_app

    app = create_app(
        pg_url, extractor=None, embedder=None, share=True, address=("127.0.0.1", 8765)
    )  # as `palimpsest serve` builds it
    with TestClient(app, client=("127.0.0.1", 50000)) as client:
        r = client.post(
            "/v1/facts",
            json={"subject": "user", "predicate": "lives_in", "object": "Darwin",
                  "valid_from": "2024-06-01T00:00:00Z"},
        )  # fmt: skip
        assert r.status_code == 201, r.text
        r = client.get("/v1/facts", params={"subject": "user"})
        assert r.status_code == 200 and [f["object"] for f in r.json()["items"]] == ["Darwin"]
        assert client.get("/ui/").status_code == 200
        state = app.state.palimpsest
        assert state.memory().location == safe_url(pg_url)
    assert not Path("postgresql:").exists()  # no directory made of the URL


def test_server_settings_keep_a_url(pg_url: str) -> None:
    from palimpsest.api.settings import ServerSettings

    assert ServerSettings.from_env({"PALIMPSEST_PATH": pg_url}).path == pg_url


def test_demo_replays_into_an_empty_database_only(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "--path", pg_url, "demo")
    assert code == 0, out[-2000:] + err
    assert "as-of answers matched the story" in out
    assert f"--path {safe_url(pg_url)} history" in out
    assert password(pg_url) not in out + err
    code, out, err = cli(capsys, "--path", pg_url, "demo")
    assert code == 2 and "error [path_in_use]" in err and password(pg_url) not in err
