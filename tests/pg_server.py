"""A throwaway PostgreSQL server for the tests: `initdb` in a temp folder, loopback only,
a free port, stopped and removed afterwards.

    >>> with PostgresServer.start() as pg:          # doctest: +SKIP
    ...     pg.create_database("t1")
    'postgresql://palimpsest:...@127.0.0.1:54321/t1'

Debian's PostgreSQL (the `postgresql` package; `make test` installs it where it is
missing) keeps its server binaries in /usr/lib/postgresql/<major>/bin, off PATH;
`PALIMPSEST_PG_BINDIR` names another folder. PostgreSQL refuses to run as root, so
when the tests run as root the server runs as the `postgres` user, in a folder that
user owns. The cluster is what a user's would be, minus crash safety against a power
cut: `fsync=off` (a killed server still loses no acknowledged commit: the WAL is in
the kernel's cache), C collation (text sorts as Python sorts it), password
authentication on 127.0.0.1 only, no Unix socket outside the temp folder.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

SUPERUSER = "palimpsest"
START_S = 60.0  # pg_ctl's wait bound; the start takes about a second


class Unavailable(RuntimeError):
    """PostgreSQL's server programs are not on this machine (the reason says what to do)."""


def find_bindir() -> Path:
    """The folder of `initdb`, `pg_ctl` and `postgres`: PALIMPSEST_PG_BINDIR, else
    Debian's newest /usr/lib/postgresql/<major>/bin, else the one on PATH."""
    named = os.environ.get("PALIMPSEST_PG_BINDIR")
    if named:
        if not (Path(named) / "initdb").is_file():
            raise Unavailable(f"PALIMPSEST_PG_BINDIR={named} holds no initdb")
        return Path(named)

    def major(p: Path) -> int:
        return int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0

    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=major)
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    if on_path:
        return Path(on_path).resolve().parent
    raise Unavailable(
        "PostgreSQL's server is not installed (no initdb): `make test` installs Debian's "
        "`postgresql` (apt-get install postgresql), or set PALIMPSEST_PG_BINDIR"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _server_account() -> pwd.struct_passwd | None:
    """The account the server runs as: None for the caller's own, `postgres` for root."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError:
        raise Unavailable(
            "the tests run as root, which PostgreSQL refuses, and there is no `postgres` "
            "user to run it as (Debian's postgresql package creates one)"
        ) from None


@dataclass
class PostgresServer:
    """One running cluster; `url` connects to its `postgres` database as the superuser."""

    bindir: Path
    folder: Path
    port: int
    password: str
    account: pwd.struct_passwd | None
    version: str = ""
    started_in_s: float = 0.0
    databases: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}:{self.password}@127.0.0.1:{self.port}/{database}"

    # --- lifecycle -------------------------------------------------------------------------
    @classmethod
    def start(cls, *, tries: int = 3) -> PostgresServer:
        """initdb and start a new cluster (a port taken meanwhile is retried)."""
        bindir = find_bindir()
        account = _server_account()
        began = time.perf_counter()
        folder = Path(tempfile.mkdtemp(prefix="palimpsest-pg-"))
        server = cls(bindir, folder, 0, secrets.token_hex(16), account)
        try:
            if account is not None:
                os.chown(folder, account.pw_uid, account.pw_gid)
            server._initdb()
            for attempt in range(tries):
                server.port = free_port()
                try:
                    server._pg_ctl("start", "-w", "-t", str(int(START_S)), "-o", server._options())
                    break
                except subprocess.CalledProcessError:
                    if attempt == tries - 1:
                        raise
            server.started_in_s = time.perf_counter() - began
            return server
        except BaseException:
            server.stop()
            raise

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(subprocess.CalledProcessError):  # a server already gone
                self._pg_ctl("stop", "-m", "fast", "-w")
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def create_database(self, name: str) -> str:
        """A new empty database; its URL."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"not a plain database name: {name!r}")
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            # an identifier cannot be a parameter; sql.Identifier quotes it
            conn.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(psycopg.sql.Identifier(name)))
        self.databases.append(name)
        return self.url(name)

    # --- faults (bench/drills.py) ---------------------------------------------------------
    def kill(self) -> None:
        """SIGKILL the postmaster, as a crash would (its backends exit when they notice)."""
        pid = int((self.data / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 9)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        # backends linger a moment after their postmaster: wait until none holds the port
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) != 0:
                    return
            time.sleep(0.05)

    def restart(self) -> None:
        """Start the (killed or stopped) server again on its port: crash recovery runs."""
        (self.data / "postmaster.pid").unlink(missing_ok=True)
        self._pg_ctl("start", "-w", "-t", str(int(START_S)), "-o", self._options())

    def standby(self, *, synchronous: bool = True) -> PostgresServer:
        """A streaming replica of this server (pg_basebackup -R), on a port of its own;
        with `synchronous`, this server waits for it before acknowledging a commit."""
        folder = Path(tempfile.mkdtemp(prefix="palimpsest-pg-standby-"))
        other = PostgresServer(self.bindir, folder, free_port(), self.password, self.account)
        other.version = self.version
        if self.account is not None:
            os.chown(folder, self.account.pw_uid, self.account.pw_gid)
        hba = self.data / "pg_hba.conf"
        lines = [x for x in hba.read_text().splitlines() if not x.lstrip().startswith("#")]
        if not any("replication" in x for x in lines):
            hba.write_text(hba.read_text() + "host replication all 127.0.0.1/32 scram-sha-256\n")
        self._pg_ctl("reload")
        env_pw = self.folder / "pgpass"
        env_pw.write_text(f"127.0.0.1:{self.port}:*:{SUPERUSER}:{self.password}\n")
        if self.account is not None:
            os.chown(env_pw, self.account.pw_uid, self.account.pw_gid)
        env_pw.chmod(0o600)
        other._run_env(
            {"PGPASSFILE": str(env_pw)},
            str(self.bindir / "pg_basebackup"),
            "-h", "127.0.0.1", "-p", str(self.port), "-U", SUPERUSER,
            "-D", str(other.data), "-R", "-X", "stream", "--no-sync", "-c", "fast", "-w",
        )  # fmt: skip
        auto = other.data / "postgresql.auto.conf"
        auto.write_text(auto.read_text() + "application_name = 'standby'\n")
        conninfo = f"primary_conninfo = 'host=127.0.0.1 port={self.port} user={SUPERUSER} "
        conninfo += f"password={self.password} application_name=standby'\n"
        auto.write_text(auto.read_text() + conninfo)
        other._pg_ctl("start", "-w", "-t", str(int(START_S)), "-o", other._options())
        if synchronous:
            import psycopg

            with psycopg.connect(self.url(), autocommit=True) as conn:
                conn.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby'")
                conn.execute("SELECT pg_reload_conf()")
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    row = conn.execute(
                        "SELECT sync_state FROM pg_stat_replication"
                        " WHERE application_name = 'standby'"
                    ).fetchone()
                    if row and row[0] == "sync":
                        break
                    time.sleep(0.1)
        return other

    def promote(self) -> None:
        """Make this standby the primary (pg_ctl promote, waiting until it accepts writes)."""
        self._pg_ctl("promote", "-w", "-t", str(int(START_S)))

    # --- the programs ----------------------------------------------------------------------
    def _options(self) -> str:
        settings = {
            "listen_addresses": "127.0.0.1",
            "port": str(self.port),
            "unix_socket_directories": str(self.folder),
            "fsync": "off",
            "full_page_writes": "off",
            "max_connections": "200",
        }
        return " ".join(f"-c {k}={v}" for k, v in settings.items())

    def _initdb(self) -> None:
        pwfile = self.folder / "pw"
        pwfile.write_text(self.password + "\n")
        if self.account is not None:
            os.chown(pwfile, self.account.pw_uid, self.account.pw_gid)
        pwfile.chmod(0o600)
        try:
            self._run(
                str(self.bindir / "initdb"),
                "-D", str(self.data),
                "-U", SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-local=scram-sha-256",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions",
            )  # fmt: skip
        finally:
            pwfile.unlink(missing_ok=True)
        found = re.search(r"PostgreSQL\) (\S+)", self._run(str(self.bindir / "postgres"), "-V"))
        self.version = found[1] if found else ""

    def _pg_ctl(self, *args: str) -> str:
        log = str(self.folder / "server.log")
        return self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", log, *args)

    def _run(self, *argv: str) -> str:
        return self._run_env({}, *argv)

    def _run_env(self, extra: dict[str, str], *argv: str) -> str:
        kw: dict[str, Any] = {}
        if self.account is not None:
            kw.update(user=self.account.pw_uid, group=self.account.pw_gid, extra_groups=[])
        env = {**os.environ, "LC_ALL": "C", "PGTZ": "UTC", **extra}
        try:
            done = subprocess.run(
                argv,
                cwd=self.folder,
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=START_S + 30,
                **kw,
            )
        except subprocess.CalledProcessError as e:
            log = self.folder / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            e.add_note(f"{argv[0]} failed:\n{e.stdout}\n{e.stderr}\n{tail}")
            raise
        return done.stdout
