"""The domain service on its own, for what a normal Discord client cannot send (the end-to-end
tests cover everything it can)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.clock import ManualClock
from bot.service import Actor, GameService, UserError
from bot.storage.base import ShardSlice
from bot.storage.sqlite import SqliteStorage

GUILD, CHANNEL = 10, 20
ALICE = Actor(101, "alice")


@pytest.fixture
async def service() -> AsyncIterator[GameService]:
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        yield GameService(
            storage,
            clock,
            bot_user=Actor(999, "tttbot", is_bot=True),
            turn_timeout=300,
            challenge_timeout=120,
        )
    finally:
        await storage.close()


@pytest.mark.parametrize(
    ("difficulty", "first", "sentence"),
    [
        ("impossible", "me", "Pick a difficulty: random, smart, minimax."),
        ("smart", "nobody", "Pick who moves first: me, bot, random."),
    ],
)
async def test_unknown_choices_are_refused_and_start_nothing(
    service: GameService, difficulty: str, first: str, sentence: str
) -> None:
    with pytest.raises(UserError) as refused:
        await service.start_vs_ai(GUILD, CHANNEL, ALICE, difficulty, first)
    assert str(refused.value) == sentence
    assert await service.storage.live_game_in_channel(CHANNEL) is None


async def test_a_process_settles_and_posts_only_its_own_shards_guilds() -> None:
    clock = ManualClock(1_700_000_000.0)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        on_shard = {
            shard: GameService(
                storage,
                clock,
                bot_user=Actor(999, "tttbot", is_bot=True),
                turn_timeout=300,
                challenge_timeout=120,
                shards=ShardSlice(2, frozenset({shard})),
            )
            for shard in (0, 1)
        }
        # Guilds 0 << 22 and 1 << 22: Discord routes them to shards 0 and 1 of 2.
        games = {
            shard: (
                await on_shard[shard].start_vs_ai(shard << 22, 20 + shard, ALICE, "random", "me")
            ).game
            for shard in (0, 1)
        }
        clock.advance(3600)  # saved without a message long ago, and out of time since
        for shard, service in on_shard.items():
            unshown = await service.unshown()
            assert [game.id for game in unshown.games] == [games[shard].id]
            settled = await service.settle_overdue()
            assert [game.id for game in settled.games] == [games[shard].id]
    finally:
        await storage.close()
