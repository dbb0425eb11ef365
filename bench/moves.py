"""How many moves a second one bot process's domain and database take, Discord left out.

    python -m bench.moves                          # SQLite, in a temporary folder
    python -m bench.moves --database-url URL       # e.g. an empty PostgreSQL database

It plays member games through :class:`bot.service.GameService` (what a click on a cell does
once discord.py has parsed it: read the game, check the move, write it with a compare-and-set
on its version; the move that ends a game also records stats and ratings in that transaction).
The yardstick, measured in the same run on the same connection(s), is the cheapest thing the
storage does: reading one setting, a single round trip. The games it writes stay in the
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
from dataclasses import dataclass, field
from pathlib import Path

from bench.samples import percentile
from bot.clock import SystemClock
from bot.config import DatabaseUrl, parse_database_url
from bot.domain import Actor
from bot.service import Clicked, GameService
from bot.storage.base import Storage
from bot.storage.connect import open_storage
from game import Mark, cell_name

BOT = Actor(1, "tttbot", is_bot=True)
GUILD = 1 << 22


@dataclass
class Tally:
    moves: int = 0
    games: int = 0
    latencies: list[float] = field(default_factory=list)


async def play_one_game(
    service: GameService, channel: int, rng: random.Random, tally: Tally
) -> None:
    """Two members play a game of random moves in ``channel``, from challenge to its end."""
    x, o = Actor(channel * 2, "x"), Actor(channel * 2 + 1, "o")
    challenge = await service.challenge(GUILD, channel, x, o)
    await service.storage.set_challenge_message(challenge.id, challenge.id)
    _, game = await service.accept(challenge.id, o, Clicked(channel, challenge.id))
    while game.is_active:
        board = game.board
        player = x if board.turn is Mark.X else o
        cell = cell_name(rng.choice(board.legal_moves))
        start = time.perf_counter()
        game = (await service.move_in_channel(channel, player, cell)).game
        tally.latencies.append(time.perf_counter() - start)
        tally.moves += 1
    tally.games += 1


async def timed(call: Callable[[], Awaitable[object]], count: int) -> list[float]:
    latencies = []
    for _ in range(count):
        start = time.perf_counter()
        await call()
        latencies.append(time.perf_counter() - start)
    return latencies


async def measure(database: DatabaseUrl, seconds: float, channels: int) -> None:
    clock = SystemClock()
    storage: Storage = await open_storage(database, clock)
    try:
        service = GameService(storage, clock, bot_user=BOT, turn_timeout=300, challenge_timeout=120)
        rng = random.Random(1)
        # Channel ids of this run only, so that a second run on one database starts afresh.
        base = int(time.time() * 1000) << 8
        print(f"database: {database.describe()}")

        await storage.set_setting("bench:yardstick", "x")
        round_trip = statistics.median(
            await timed(lambda: storage.get_setting("bench:yardstick"), 2000)
        )
        print(f"yardstick: a round trip (read one setting), median {round_trip * 1e3:.3f} ms")

        alone = Tally()
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            await play_one_game(service, base, rng, alone)
        median = statistics.median(alone.latencies)
        print(
            f"a move, one channel at a time: median {median * 1e3:.3f} ms, "
            f"p99 {percentile(alone.latencies, 0.99) * 1e3:.3f} ms "
            f"({median / round_trip:.1f}x the round trip); {alone.moves / seconds:,.0f} moves/s"
        )

        together = Tally()
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        deadline = wall_start + seconds

        async def keep_playing(channel: int) -> None:
            while time.perf_counter() < deadline:
                await play_one_game(service, channel, rng, together)

        await asyncio.gather(*(keep_playing(base + 1 + n) for n in range(channels)))
        wall = time.perf_counter() - wall_start
        cpu = time.process_time() - cpu_start
        print(
            f"{channels} channels at once: {together.moves / wall:,.0f} moves/s "
            f"({together.games / wall:,.0f} games/s), move median "
            f"{statistics.median(together.latencies) * 1e3:.2f} ms, p99 "
            f"{percentile(together.latencies, 0.99) * 1e3:.2f} ms; this process's CPU "
            f"{cpu / together.moves * 1e3:.3f} ms a move (challenges and accepts included)"
        )
    finally:
        await storage.close()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.moves", description=__doc__)
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", ""),
        help="where to play (DATABASE_URL's forms); default: SQLite in a temporary folder",
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="per phase (default 5)")
    parser.add_argument("--channels", type=int, default=32, help="games at once (default 32)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        database = (
            parse_database_url(args.database_url)
            if args.database_url
            else DatabaseUrl(str(Path(folder) / "bench.sqlite3"))
        )
        asyncio.run(measure(database, args.seconds, args.channels))


if __name__ == "__main__":
    main()
