"""What only the PostgreSQL engine has: migrations under an advisory lock, a connection pool,
and one-line errors for a server that cannot be used.

The storage contract (``test_storage.py``) runs against PostgreSQL too, and so does the bot end
to end (the tests marked ``both_engines`` in ``bot_harness.py``: restarts, races, timeouts);
these are the rest. All run on the session's throwaway cluster (``postgres_cluster.py``).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import asyncpg
import pytest

from bot.clock import ManualClock, SystemClock
from bot.config import ConfigError, DatabaseUrl, parse_database_url
from bot.storage import ChallengeStatus, ChannelBusyError, EndReason, GameRecord
from bot.storage.base import DatabaseUnavailableError
from bot.storage.connect import open_storage
from bot.storage.migrations import migration_files
from bot.storage.postgres import MIGRATION_LOCK, PostgresStorage
from game import Mark
from tests.bot_processes import bot_env
from tests.discord_sim import DiscordSim
from tests.postgres_cluster import PostgresCluster, free_port
from tests.test_storage import ALICE, BOB, CAROL, CHANNEL, T0, finished, new_challenge, new_game

pytestmark = pytest.mark.postgres

KNOWN = [version for version, _ in migration_files("postgresql")]


def database(url: str, pool_size: int = 10) -> DatabaseUrl:
    return replace(parse_database_url(url), pool_size=pool_size)


@pytest.fixture
async def connection(fresh_postgres_database: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain connection to the test's database, beside the storage's pool."""
    db = await asyncpg.connect(fresh_postgres_database)
    try:
        yield db
    finally:
        await db.close()


@pytest.mark.slow  # a Python process of its own
def test_the_domain_loads_no_postgresql_driver() -> None:
    """Like SQLite's: only opening a database (``bot.storage.connect``) loads asyncpg."""
    code = (
        "import sys, bot.storage, bot.service, bot.render, bot.results, bot.config; "
        "print('asyncpg' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert result.stdout.strip() == "False"


# -- migrations ----------------------------------------------------------------------------


async def test_processes_starting_together_apply_each_migration_once(
    fresh_postgres_database: str, connection: asyncpg.Connection
) -> None:
    storages = await asyncio.gather(
        *(PostgresStorage.open(fresh_postgres_database, ManualClock(T0)) for _ in range(4))
    )
    try:
        for storage in storages:
            assert await storage.schema_versions() == dict.fromkeys(KNOWN, T0)
        rows = await connection.fetch("SELECT version FROM schema_migrations ORDER BY version")
        assert [row["version"] for row in rows] == KNOWN
        game = await storages[0].create_game(new_game())
        assert await storages[3].get_game(game.id) == game
    finally:
        for storage in storages:
            await storage.close()


async def test_start_up_waits_for_the_migration_lock(
    fresh_postgres_database: str, connection: asyncpg.Connection
) -> None:
    """Another process applying migrations holds the advisory lock: a second one waits for it
    instead of applying them alongside."""
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        opening = asyncio.create_task(
            PostgresStorage.open(fresh_postgres_database, ManualClock(T0))
        )
        await asyncio.sleep(0.3)
        assert not opening.done()
        exists = await connection.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
        assert not exists
    storage = await asyncio.wait_for(opening, 10)
    try:
        assert sorted(await storage.schema_versions()) == KNOWN
    finally:
        await storage.close()


async def test_a_database_from_a_newer_bot_is_refused_and_left_untouched(
    fresh_postgres_database: str, connection: asyncpg.Connection
) -> None:
    url = database(fresh_postgres_database)
    storage = await open_storage(url, ManualClock(T0))
    await storage.set_setting("kept", "yes")
    await storage.close()
    newest = KNOWN[-1]
    await connection.execute(
        "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)", newest + 1
    )
    before = await _everything(connection)
    with pytest.raises(ConfigError) as caught:
        await open_storage(url, ManualClock(T0 + 100))
    assert str(caught.value) == (
        f"DATABASE_URL: refusing {url.describe()}: its schema is version {newest + 1}, newer "
        f"than this bot's {newest}: a newer tttbot wrote it; run that version (the database "
        "was left unchanged)"
    )
    assert await _everything(connection) == before


async def _everything(db: asyncpg.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table in the public schema."""
    tables = await db.fetch(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
    )
    return {
        row["tablename"]: [
            tuple(r) for r in await db.fetch(f'SELECT * FROM "{row["tablename"]}" ORDER BY 1')
        ]
        for row in tables
    }


async def test_no_database_time_comes_from_the_server_clock(
    fresh_postgres_database: str, connection: asyncpg.Connection
) -> None:
    """Every time in the schema is the bot clock's: a migration dated in the past, rows too."""
    clock = ManualClock(1_000.5)
    storage = await PostgresStorage.open(fresh_postgres_database, clock)
    try:
        assert set((await storage.schema_versions()).values()) == {1_000.5}
        defaults = await connection.fetch(
            "SELECT table_name, column_name, column_default FROM information_schema.columns"
            " WHERE table_schema = 'public' AND column_default IS NOT NULL"
        )
        assert [r for r in defaults if "now" in r["column_default"].lower()] == []
    finally:
        await storage.close()


# -- the pool ------------------------------------------------------------------------------


async def test_the_pool_holds_at_most_pool_size_connections(
    fresh_postgres_database: str, connection: asyncpg.Connection
) -> None:
    storage = await open_storage(database(fresh_postgres_database, pool_size=3), ManualClock(T0))
    try:
        name = await connection.fetchval("SELECT current_database()")
        counts: list[int] = []

        async def play(i: int) -> None:
            game = await storage.create_game(new_game(CHANNEL + i))
            await storage.save_game(finished(game, Mark.X, EndReason.LINE))

        burst = asyncio.gather(*(play(i) for i in range(30)))
        while not burst.done():
            counts.append(
                await connection.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> $2",
                    name,
                    connection.get_server_pid(),
                )
            )
        await burst
        assert max(counts) == 3
        assert (await storage.player_stats(new_game().guild_id, ALICE)).rated_games == 30
    finally:
        await storage.close()


async def test_one_connection_is_enough_for_every_race(fresh_postgres_database: str) -> None:
    """With DATABASE_POOL_SIZE=1 the races queue for the connection instead of deadlocking,
    and are still decided as with many."""
    storage = await open_storage(database(fresh_postgres_database, pool_size=1), ManualClock(T0))
    try:
        created = await asyncio.gather(
            *(storage.create_game(new_game(x_id=ALICE + i)) for i in range(3)),
            storage.create_challenge(new_challenge()),
            return_exceptions=True,
        )
        assert sum(isinstance(r, GameRecord) for r in created) == 1
        assert sum(isinstance(r, ChannelBusyError) for r in created) == 3
        challenge = await storage.create_challenge(new_challenge(CHANNEL + 1, opponent_id=None))
        accepted = await asyncio.gather(
            *(
                storage.close_challenge(
                    challenge.id, ChallengeStatus.ACCEPTED, new_game(CHANNEL + 1, x_id=user)
                )
                for user in (BOB, CAROL)
            )
        )
        assert sum(r is not None for r in accepted) == 1
    finally:
        await storage.close()


# -- a server that cannot be used ------------------------------------------------------------


async def open_fails(url: str) -> str:
    with pytest.raises(ConfigError) as caught:
        await open_storage(database(url), SystemClock())
    message = str(caught.value)
    assert "\n" not in message
    return message


async def test_a_wrong_password_is_one_line_without_the_password(
    postgres_cluster: PostgresCluster, fresh_postgres_database: str
) -> None:
    name = fresh_postgres_database.rsplit("/", 1)[1]
    url = postgres_cluster.url(name, password="not-the-password")
    message = await open_fails(url)
    assert message == (
        f"DATABASE_URL: postgresql database {name} on 127.0.0.1:{postgres_cluster.port} "
        f"refused the user name or password (user {postgres_cluster.user})"
    )
    assert "not-the-password" not in message


async def test_a_database_that_does_not_exist_is_one_line(
    postgres_cluster: PostgresCluster,
) -> None:
    message = await open_fails(postgres_cluster.url("no_such_database"))
    assert message == (
        f"DATABASE_URL: postgresql database no_such_database on 127.0.0.1:"
        f"{postgres_cluster.port}: the server has no database named no_such_database "
        "(create it first)"
    )
    assert postgres_cluster.password not in message


async def test_a_port_nothing_listens_on_is_one_line(postgres_cluster: PostgresCluster) -> None:
    port = free_port()
    message = await open_fails(postgres_cluster.url("tttbot", port=port))
    assert message.startswith(
        f"DATABASE_URL: cannot reach postgresql database tttbot on 127.0.0.1:{port}: "
    )
    assert postgres_cluster.password not in message


@pytest.mark.slow  # a real python -m bot process
async def test_python_m_bot_with_an_unreachable_database_exits_with_one_line(
    sim: DiscordSim, tmp_path: Path, postgres_cluster: PostgresCluster
) -> None:
    port = free_port()
    url = postgres_cluster.url("tttbot", port=port)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        env=bot_env(
            sim, tmp_path, DATABASE_URL=url, LOG_LEVEL="CRITICAL", DISCORD_LOG_LEVEL="CRITICAL"
        ),
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 1
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"tttbot: DATABASE_URL: cannot reach postgresql database tttbot on 127.0.0.1:{port}: "
    )
    assert postgres_cluster.password not in (out + err).decode()


class _EndedSessionPool:
    """A pool whose connection the server ended mid-operation, as asyncpg reports it."""

    async def fetchrow(self, *args: object) -> None:
        raise asyncpg.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress"
        )


async def test_a_session_the_server_ended_mid_operation_is_an_outage() -> None:
    """A PostgreSQL shutting down under a query left asyncpg's protocol mid-state: that was an
    "unexpected error" with a traceback, where the bot says the database did not answer."""
    storage = PostgresStorage(_EndedSessionPool(), ManualClock(T0))  # type: ignore[arg-type]
    with pytest.raises(DatabaseUnavailableError) as raised:
        await storage.reply_route(CHANNEL)
    assert not raised.value.nothing_written  # a statement may have reached the server
