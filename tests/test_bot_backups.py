"""Backups as docs/operating.md says to take them, while the bot plays, and restored into a
fresh place: SQLite with ``python -m bot backup`` (``VACUUM INTO``), PostgreSQL with
``pg_dump`` and ``pg_restore``. The restored bot starts, its games are there, and a live game
goes on from a click on the board posted before the backup. Also the backup command's one-line
refusals, which leave every file as it was."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Awaitable, Callable
from contextlib import closing
from pathlib import Path

import pytest

from bot.__main__ import main
from bot.config import POSTGRESQL, DatabaseUrl, parse_database_url
from bot.storage.base import VS_MEMBER, GameStatus, Record
from tests.bot_harness import BotHarness, board_of, cell_id, start_member_game
from tests.discord_sim import DiscordSim, SimMessage
from tests.postgres_cluster import PostgresCluster, find_server_binaries

postgres_only = pytest.mark.parametrize(
    "harness", [pytest.param(POSTGRESQL, marks=pytest.mark.postgres)], indirect=True
)


async def run(*command: str | Path) -> None:
    """Run one of PostgreSQL's programs to its end, failing the test if it fails."""
    process = await asyncio.create_subprocess_exec(*command)
    assert await asyncio.wait_for(process.wait(), 60) == 0, command


async def play_until_won(sim: DiscordSim, board: SimMessage) -> None:
    """Alice (X) takes the top row while bob (O) plays the middle one."""
    s = sim.seed
    for player, cell in ((s.alice, "A1"), (s.bob, "A2"), (s.alice, "B1"), (s.bob, "B2")):
        await sim.click(player, board, cell_id(board, cell))
    await sim.click(s.alice, board, cell_id(board, "C1"))


async def games_then_backup(
    sim: DiscordSim, harness: BotHarness, back_up: Callable[[], Awaitable[None]]
) -> SimMessage:
    """A finished game in one channel and a live one (alice has played B2) in another, then
    ``back_up`` called while the bot still runs; returns the live game's board."""
    s = sim.seed
    async with harness.running() as bot:
        await play_until_won(sim, await start_member_game(sim))
        board = await start_member_game(sim, channel=s.other_channel)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        assert await bot.in_flight.wait_idle(patience=5)
        await back_up()
    return board


async def check_restored(
    sim: DiscordSim, harness: BotHarness, board: SimMessage, restored: DatabaseUrl
) -> None:
    """The bot started on the restored database has both games and alice's win, and the live
    game goes on from its board as posted before the backup."""
    s = sim.seed
    async with harness.running(database=restored) as bot:
        finished = await bot.storage.finished_game_in_channel(s.channel.id, None)
        assert finished is not None
        assert finished.moves == (0, 3, 1, 4, 2)
        stats = await bot.storage.player_stats(s.guild.id, s.alice.id)
        assert stats.against(VS_MEMBER) == Record(wins=1)
        await sim.click(s.bob, board, cell_id(board, "A1"))
        assert await bot.in_flight.wait_idle(patience=5)
        live = await bot.storage.live_game_in_channel(s.other_channel.id)
        assert live is not None
        assert live.status is GameStatus.ACTIVE
        assert live.moves == (4, 0)  # B2 from before the backup, A1 after the restore
        assert board_of(board).move_count == 2


async def test_a_sqlite_backup_taken_mid_play_restores_with_its_games(
    sim: DiscordSim, harness: BotHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup = tmp_path / "backups" / "tttbot-backup.sqlite3"
    backup.parent.mkdir()
    plain_copy = tmp_path / "plain-copy.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{harness.db_path}")

    async def back_up() -> None:
        # What the docs warn against: the file alone, without its write-ahead log, lacks the
        # latest commits (here, everything the bot wrote since it opened the file).
        shutil.copyfile(harness.db_path, plain_copy)
        assert main(["backup", str(backup)]) == 0

    board = await games_then_backup(sim, harness, back_up)
    with closing(sqlite3.connect(plain_copy)) as copied:
        assert copied.execute("SELECT count(*) FROM games").fetchone() == (0,)
    # Restored as the docs say: the bot stopped, the backup put where DATABASE_URL points,
    # with no -wal or -shm file of the old database beside it.
    restored = tmp_path / "restored" / "tttbot.sqlite3"
    restored.parent.mkdir()
    shutil.copyfile(backup, restored)
    await check_restored(sim, harness, board, DatabaseUrl(str(restored)))


@postgres_only
async def test_a_postgresql_dump_taken_mid_play_restores_with_its_games(
    sim: DiscordSim, harness: BotHarness, postgres_cluster: PostgresCluster, tmp_path: Path
) -> None:
    binaries = find_server_binaries()
    assert binaries is not None  # the cluster fixture found them
    dump = tmp_path / "tttbot.dump"
    source = harness.database.url

    async def back_up() -> None:
        await run(binaries / "pg_dump", "--format=custom", f"--file={dump}", source)

    board = await games_then_backup(sim, harness, back_up)
    async with postgres_cluster.fresh_database() as name:
        target = postgres_cluster.url(name)
        await run(binaries / "pg_restore", "--no-owner", "--exit-on-error", "-d", target, dump)
        await check_restored(sim, harness, board, parse_database_url(target))


def test_a_backup_refuses_with_one_line_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "tttbot.sqlite3"
    existing = tmp_path / "existing.sqlite3"
    existing.write_bytes(b"an older backup")

    def refusal(url: str, target: Path) -> tuple[int, str]:
        monkeypatch.setenv("DATABASE_URL", url)
        code = main(["backup", str(target)])
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1, err
        return code, err.strip()

    sqlite_url = f"sqlite:///{database}"
    assert refusal(sqlite_url, tmp_path / "new.sqlite3") == (
        1,
        f"tttbot: DATABASE_URL: there is no database to back up at sqlite file {database}",
    )
    assert not database.exists()  # a backup never creates the database it names
    with closing(sqlite3.connect(database)) as other:
        other.execute("CREATE TABLE notes (text TEXT)")
    assert refusal(sqlite_url, tmp_path / "new.sqlite3") == (
        1,
        f"tttbot: sqlite file {database} is not a tttbot database: nothing was backed up",
    )
    assert not (tmp_path / "new.sqlite3").exists()
    assert refusal(sqlite_url, existing) == (
        1,
        f"tttbot: {existing} already exists: a backup never overwrites a file",
    )
    assert existing.read_bytes() == b"an older backup"
    missing = tmp_path / "no-such-folder" / "backup.sqlite3"
    assert refusal(sqlite_url, missing) == (
        1,
        f"tttbot: the folder of {missing} does not exist",
    )
    assert refusal("postgresql://bot:secret@db.example:5432/tttbot", existing) == (
        2,
        "tttbot: DATABASE_URL names postgresql database tttbot on db.example:5432: back it up"
        " with pg_dump, as docs/operating.md says (Backups)",
    )
