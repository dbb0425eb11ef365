"""What a server does to the bot mid-game: permissions taken away and given back, channels and
threads deleted or archived, the bot removed; through the local Discord server, on both engines
and both front doors."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.bot_harness import (
    PAST_THE_WINDOW,
    SHORT_WINDOW,
    BotHarness,
    both_engines,
    both_front_doors,
    first_answers_lost,
    text_of,
)
from tests.discord_sim import DiscordSim, SimChannel, SimTimeout
from tests.discord_sim.models import PERM_SEND_MESSAGES

pytestmark = [both_engines, both_front_doors]


@contextmanager
def bot_denied(sim: DiscordSim, channel: SimChannel, permissions: int) -> Iterator[None]:
    """While the block runs, the server's admins deny the bot ``permissions`` in ``channel``;
    then they take the overwrite away."""
    sim.deny(channel, sim.bot_user, permissions)
    try:
        yield
    finally:
        sim.deny(channel, sim.bot_user, 0)


def posts_to(sim: DiscordSim, channel: SimChannel) -> list[int]:
    """The statuses of the bot's posts in ``channel`` so far, oldest first."""
    path = f"/channels/{channel.id}/messages"
    return [r.status for r in sim.requests if r.method == "POST" and r.path.endswith(path)]


async def test_an_unshown_game_in_a_channel_closed_to_the_bot_is_not_posted_every_sweep(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A game saved without its board, in a channel where the bot then lost Send Messages:
    the sweeper's post is refused (403), and tried again a minute later, not at every sweep
    (every refusal counts against the bot's invalid requests); once the permission is back
    the board is posted."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(
                s.alice, s.channel, "ttt vs-ai", difficulty="smart", timeout=PAST_THE_WINDOW
            )
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(31)
        with bot_denied(sim, s.channel, PERM_SEND_MESSAGES):
            for _ in range(12):  # a minute of sweeps, one every 5 s
                await bot.sweep()
                harness.clock.advance(5)
            assert posts_to(sim, s.channel) == [403]
        await bot.sweep()
        assert posts_to(sim, s.channel) == [403, 200]
        board = sim.last_message(s.channel)
        assert board is not None
        assert "alice" in text_of(board)
