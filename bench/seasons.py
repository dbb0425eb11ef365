"""What a season's table costs: its games read and replayed from fresh ratings, every time a
member asks for it (bot.seasons, docs/design.md "Seasons").

    python -m bench.seasons                          # SQLite, in a temporary folder
    python -m bench.seasons --database-url URL       # e.g. an empty PostgreSQL database
    python -m bench.seasons --games 5000 --members 200

It stores ``--games`` finished games between ``--members`` members of one server in one month
(through the storage's own create and save, as the bot does), then times the season's table
(:meth:`bot.ladder.Ladder.table`: one read of the month's games and their replay) and its two
halves. The yardstick, measured in the same run on the same database, is the all-time table,
which reads the stored ratings (one row a member) and ranks them. The games stay in the
database: point it at a database of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path

from bot.clock import ManualClock
from bot.config import DatabaseUrl, parse_database_url
from bot.ladder import Ladder
from bot.seasons import ALL_TIME, Season, table
from bot.server_settings import SettingsService
from bot.storage.base import EndReason, GameStatus, NewGame, Storage
from bot.storage.connect import open_storage
from game import DEFAULT_SIZE, Mark

GUILD = 1 << 22
SEASON = Season(2026, 11)
RUNS = 7


async def fill(storage: Storage, games: int, members: int, rng: random.Random) -> None:
    """``games`` finished games between random pairs of ``members``, spread over SEASON."""
    span = SEASON.end - SEASON.start
    ends = sorted(SEASON.start + rng.random() * span for _ in range(games))
    for number, ended in enumerate(ends):
        x, o = rng.sample(range(1, members + 1), 2)
        new = NewGame(
            guild_id=GUILD,
            channel_id=1000 + number,
            x_id=x,
            o_id=o,
            x_name=f"member{x}",
            o_name=f"member{o}",
            deadline=ended + 60,
            created_at=ended - 60,
        )
        game = await storage.create_game(new)
        winner = rng.choice((Mark.X, Mark.O, None))
        finished = replace(
            game,
            status=GameStatus.FINISHED,
            winner=winner,
            end_reason=EndReason.LINE if winner else EndReason.DRAW,
            deadline=None,
            updated_at=ended,
        )
        assert await storage.save_game(finished) is not None


async def median_of(call: Callable[[], Awaitable[object]]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


async def measure(database: DatabaseUrl, games: int, members: int) -> None:
    clock = ManualClock(SEASON.end - 3600)  # the season's last hour: all its games are in
    storage = await open_storage(database, clock)
    try:
        started = time.perf_counter()
        await fill(storage, games, members, random.Random(1))
        print(f"stored {games:,} games between {members} members in {SEASON.name}", end="")
        print(f" ({time.perf_counter() - started:.1f} s)")
        ladder = Ladder(storage, clock, SettingsService(storage, clock))
        read = await storage.season_games(GUILD, DEFAULT_SIZE, SEASON.start, SEASON.end)
        assert len(read) == games, len(read)

        async def replay() -> object:
            return table(read, clock.now())

        yardstick = await median_of(lambda: ladder.table(GUILD, DEFAULT_SIZE, ALL_TIME))
        season = await median_of(lambda: ladder.table(GUILD, DEFAULT_SIZE, SEASON.name))
        reading = await median_of(
            lambda: storage.season_games(GUILD, DEFAULT_SIZE, SEASON.start, SEASON.end)
        )
        replaying = await median_of(replay)
        print(f"yardstick: the all-time table (stored ratings), median {yardstick * 1e3:.2f} ms")
        print(
            f"the season's table, median of {RUNS}: {season * 1e3:.1f} ms"
            f" ({season / yardstick:.0f}x the yardstick)"
        )
        print(f"  reading its {games:,} games: {reading * 1e3:.1f} ms")
        print(f"  replaying them (bot.results.replay, then ranked): {replaying * 1e3:.1f} ms")
    finally:
        await storage.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.seasons", description=__doc__)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", ""),
        help="where to store the games (DATABASE_URL's forms); default: SQLite in a temporary "
        "folder",
    )
    parser.add_argument("--games", type=int, default=5000, help="in the month (default 5000)")
    parser.add_argument("--members", type=int, default=200, help="playing them (default 200)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = (
            parse_database_url(args.database_url)
            if args.database_url
            else DatabaseUrl(str(Path(folder) / "bench.sqlite3"))
        )
        asyncio.run(measure(database, args.games, args.members))


if __name__ == "__main__":
    main()
