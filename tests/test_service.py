"""The domain service on its own, for what a normal Discord client cannot send (the end-to-end
tests cover everything it can)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.clock import ManualClock
from bot.service import Actor, GameService, UserError
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
