"""A throwaway PostgreSQL cluster for the tests: ``initdb`` into a temporary folder, a random
port on 127.0.0.1, durability off (``fsync``, ``full_page_writes``, ``synchronous_commit``), and
stopped and removed when the session ends.

The ``postgres_cluster`` fixture starts it on first use, so a run that selects no PostgreSQL
test never pays for it. Without the server binaries (Debian's ``postgresql`` package; ``.ci/run``
installs it) the tests that need it skip with the reason, which ``CI=true`` turns into a
failure. ``fresh_postgres_database`` gives a test an empty database of its own.
"""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import asyncpg
import pytest

from bot.clock import SystemClock
from bot.config import parse_database_url
from bot.storage.connect import open_storage

SERVER_BINARIES = ("initdb", "pg_ctl", "postgres")
# initdb refuses to run as root, and so does the server: as root, both run as this user.
UNPRIVILEGED_USER = "postgres"
SUPERUSER = "tttbot_admin"
# An empty database that every test database is copied from: cheaper than template1, whose
# copy also carries whatever the distribution put there.
TEMPLATE = "tttbot_template"
# The same with the bot's schema applied (every migration), for the tests that run the bot: it
# starts on it as on a database it already migrated. Made once a process.
MIGRATED_TEMPLATE = "tttbot_template_migrated"
START_TIMEOUT_SECONDS = 60


def find_server_binaries() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres: the newest of Debian's
    ``/usr/lib/postgresql/<version>/bin``, else wherever PATH finds initdb (resolved, since a
    symlink such as ``/usr/local/bin/initdb`` points into such a folder)."""
    candidates = sorted(
        (Path(folder) for folder in glob.glob("/usr/lib/postgresql/*/bin")),
        key=lambda folder: _version_key(folder.parent.name),
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path is not None:
        candidates.append(Path(on_path).resolve().parent)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in SERVER_BINARIES):
            return folder
    return None


def _version_key(name: str) -> tuple[int, ...]:
    return tuple(int(part) for part in name.split(".") if part.isdigit())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class PostgresCluster:
    """A running cluster: where it listens and how to log in as its superuser."""

    port: int
    password: str = field(repr=False)
    host: str = "127.0.0.1"
    user: str = SUPERUSER
    _names: Iterator[int] = field(default_factory=itertools.count, repr=False)
    _template_made: bool = field(default=False, repr=False)
    _migrated_template_made: bool = field(default=False, repr=False)

    def url(self, database: str, *, password: str | None = None, port: int | None = None) -> str:
        secret = quote(self.password if password is None else password, safe="")
        return f"postgresql://{self.user}:{secret}@{self.host}:{port or self.port}/{database}"

    async def admin(self) -> asyncpg.Connection:
        """A connection to the maintenance database, to create and drop others."""
        return await asyncpg.connect(self.url("postgres"))

    @asynccontextmanager
    async def fresh_database(self, *, migrated: bool = False) -> AsyncIterator[str]:
        """The name of a new database, dropped afterwards: empty (no schema yet), or with
        ``migrated`` the bot's whole schema applied."""
        name = f"tttbot_test_{os.getpid()}_{next(self._names)}"
        admin = await self.admin()
        try:
            if not self._template_made:
                # Made here, not when the cluster starts: that fixture runs outside any loop,
                # or inside a test's, where another cannot be run.
                await admin.execute(f'CREATE DATABASE "{TEMPLATE}" TEMPLATE template0')
                self._template_made = True
            template = TEMPLATE
            if migrated:
                if not self._migrated_template_made:
                    await admin.execute(f'CREATE DATABASE "{MIGRATED_TEMPLATE}" TEMPLATE template0')
                    url = parse_database_url(self.url(MIGRATED_TEMPLATE))
                    await (await open_storage(url, SystemClock())).close()
                    self._migrated_template_made = True
                template = MIGRATED_TEMPLATE
            # FILE_COPY (PostgreSQL 15's other strategy) copies the small template's files
            # rather than writing them through the WAL: half the time, with durability off.
            strategy = " STRATEGY FILE_COPY" if admin.get_server_version().major >= 15 else ""
            await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"{strategy}')
            try:
                yield name
            finally:
                # FORCE: a test that failed half-way may have left a connection open.
                await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
        finally:
            await admin.close()


class PostgresServer:
    """Starts and stops one cluster through its own binaries."""

    def __init__(self, binaries: Path, root: Path, run_as: str | None) -> None:
        self.binaries = binaries
        self.root = root
        self.data = root / "data"
        self.log = root / "server.log"
        self.run_as = run_as

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        command: list[str] = [str(self.binaries / str(args[0])), *(str(arg) for arg in args[1:])]
        if self.run_as is not None:
            command = ["runuser", "-u", self.run_as, "--", *command]
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_SECONDS,
            check=False,
            cwd=self.root,
        )

    def check(self, *args: str | Path) -> None:
        result = self.run(*args)
        if result.returncode != 0:
            log = self.log.read_text(errors="replace") if self.log.exists() else ""
            raise RuntimeError(
                f"{args[0]} failed ({result.returncode}): {result.stdout}{result.stderr}{log}"
            )

    def start(self, cluster: PostgresCluster) -> None:
        password_file = self.root / "password"
        password_file.write_text(cluster.password + "\n")
        self._give_away(password_file)
        self.check(
            "initdb",
            "--pgdata",
            self.data,
            "--username",
            cluster.user,
            "--pwfile",
            password_file,
            # Passwords over TCP, so that a wrong one is refused as on a real server.
            "--auth-host=scram-sha-256",
            "--auth-local=peer",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        password_file.unlink()
        self.restart(cluster)

    def restart(self, cluster: PostgresCluster) -> None:
        """Start the server of a cluster made (and stopped) before."""
        options: Sequence[str] = (
            f"-p {cluster.port}",
            "-c listen_addresses=127.0.0.1",
            # No Unix socket: the default folder may not exist or not be writable here.
            "-c unix_socket_directories=''",
            # Throwaway data: durability buys nothing and costs seconds.
            "-c fsync=off",
            "-c full_page_writes=off",
            "-c synchronous_commit=off",
            "-c max_connections=200",
        )
        self.check(
            "pg_ctl",
            "--pgdata",
            self.data,
            "--log",
            self.log,
            "--wait",
            "--options",
            " ".join(options),
            "start",
        )

    def stop(self) -> None:
        """Stop the server, its data thrown away next: at once, with no shutdown checkpoint
        (a crash, which with ``synchronous_commit=off`` may lose the last commits)."""
        self.run("pg_ctl", "--pgdata", self.data, "--mode", "immediate", "--wait", "stop")

    def shut_down(self) -> None:
        """Stop the server as an operator would, every commit kept, to :meth:`restart` it."""
        self.check("pg_ctl", "--pgdata", self.data, "--mode", "fast", "--wait", "stop")

    def _give_away(self, path: Path) -> None:
        if self.run_as is not None:
            entry = pwd.getpwnam(self.run_as)
            os.chown(path, entry.pw_uid, entry.pw_gid)


def _unprivileged_user() -> str | None:
    """Who runs the server: nobody else when the tests are not root (they run it themselves)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        pytest.skip(
            f"PostgreSQL tests need the {UNPRIVILEGED_USER!r} system user when run as root "
            "(initdb refuses root): install Debian's postgresql package, which creates it"
        )
    return UNPRIVILEGED_USER


@contextmanager
def postgres_server() -> Iterator[tuple[PostgresCluster, PostgresServer]]:
    """A new cluster, running, and its server (to stop and start it again); removed at the
    end. Skips without the server binaries (a failure under CI=true)."""
    binaries = find_server_binaries()
    if binaries is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found under "
            "/usr/lib/postgresql/*/bin or on PATH: install Debian's postgresql package"
        )
    run_as = _unprivileged_user()
    root = Path(tempfile.mkdtemp(prefix="tttbot-pg-"))
    server = PostgresServer(binaries, root, run_as)
    try:
        server._give_away(root)
        cluster = PostgresCluster(port=free_port(), password=secrets.token_urlsafe(16))
        server.start(cluster)
        try:
            yield cluster, server
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    with postgres_server() as (cluster, _):
        yield cluster


@pytest.fixture
async def fresh_postgres_database(postgres_cluster: PostgresCluster) -> AsyncIterator[str]:
    """The URL of a new, empty database on the session's cluster, dropped after the test."""
    async with postgres_cluster.fresh_database() as name:
        yield postgres_cluster.url(name)


@pytest.fixture
async def migrated_postgres_database(postgres_cluster: PostgresCluster) -> AsyncIterator[str]:
    """The URL of a new database with the bot's schema applied, dropped after the test: for
    the tests that run the bot (its migrations are the storage tests' business)."""
    async with postgres_cluster.fresh_database(migrated=True) as name:
        yield postgres_cluster.url(name)
