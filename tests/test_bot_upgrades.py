"""A rolling upgrade as docs/operating.md describes it (Upgrading): a process of the newer
version starts on the database while processes of this one still run, and applies a migration
this version does not know. The running process plays on (moves, a game's end counted, a new
challenge), since a migration only adds; started again, it refuses the database with one line.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing

import asyncpg
import pytest

from bot.clock import SystemClock
from bot.config import POSTGRESQL, ConfigError, DatabaseUrl
from bot.storage.base import VS_MEMBER, GameStatus, Record
from bot.storage.connect import open_storage
from bot.storage.migrations import migration_files
from tests.bot_harness import BotHarness, both_engines, cell_id, start_member_game
from tests.discord_sim import DiscordSim

pytestmark = both_engines

# What a later version's migration may do, as this project's migrations do (docs/design.md):
# a column with a default on a table every move writes, a table, an index.
NEXT_MIGRATION = (
    "ALTER TABLE games ADD COLUMN spectators INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE challenges ADD COLUMN note TEXT",
    "CREATE TABLE next_feature (id INTEGER PRIMARY KEY, guild_id BIGINT NOT NULL)",
    "CREATE INDEX games_by_spectators ON games (spectators) WHERE status = 'active'",
)


async def apply_next_migration(database: DatabaseUrl, version: int) -> None:
    """What a newer process's start does to the database: its migration and its row."""
    if database.scheme == POSTGRESQL:
        db = await asyncpg.connect(database.url)
        try:
            async with db.transaction():
                for statement in NEXT_MIGRATION:
                    await db.execute(statement)
                await db.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)", version
                )
        finally:
            await db.close()
        return
    with closing(sqlite3.connect(database.path, timeout=10)) as lite, lite:
        for statement in NEXT_MIGRATION:
            lite.execute(statement)
        lite.execute(
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?, 0)", (version,)
        )


async def test_a_running_bot_plays_on_after_a_newer_one_migrates_and_is_refused_at_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    newest = max(version for version, _ in migration_files(harness.engine))
    async with harness.running() as bot:
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "A1"))
        assert await bot.in_flight.wait_idle(patience=5)
        await apply_next_migration(harness.database, newest + 1)
        for player, cell in ((s.bob, "A2"), (s.alice, "B1"), (s.bob, "B2"), (s.alice, "C1")):
            await sim.click(player, board, cell_id(board, cell))
        assert await bot.in_flight.wait_idle(patience=5)
        finished = await bot.storage.finished_game_in_channel(s.channel.id, None)
        assert finished is not None
        assert finished.status is GameStatus.FINISHED
        assert finished.moves == (0, 3, 1, 4, 2)
        stats = await bot.storage.player_stats(s.guild.id, s.alice.id)
        assert stats.against(VS_MEMBER) == Record(wins=1)
        # A new game and a new challenge: inserts into the tables the migration changed.
        again = await start_member_game(sim, channel=s.other_channel)
        await sim.click(s.alice, again, cell_id(again, "B2"))
        assert await bot.in_flight.wait_idle(patience=5)
        live = await bot.storage.live_game_in_channel(s.other_channel.id)
        assert live is not None
        assert live.moves == (4,)
    with pytest.raises(ConfigError) as refused:
        await open_storage(harness.database, SystemClock())
    assert str(refused.value) == (
        f"DATABASE_URL: refusing {harness.database.describe()}: its schema is version"
        f" {newest + 1}, newer than this bot's {newest}: a newer tttbot wrote it; run that"
        " version (the database was left unchanged)"
    )
