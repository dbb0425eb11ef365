"""Every reply tells the truth under races, faults and tampered input: the real bot end to end
against the local Discord server, with what a hurried user or a hand-made payload sends."""

from __future__ import annotations

import asyncio

from tests.bot_harness import BotHarness
from tests.discord_sim import DiscordSim

BUSY = (
    "There is already a game in this channel",
    "There is already an open challenge in this channel",
)


async def test_start_and_vs_ai_at_once_leave_one_challenge_or_one_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        for attempt in range(5):
            channel = sim.add_channel(s.guild, f"race-{attempt}")
            challenge, game = await asyncio.gather(
                sim.slash(s.alice, channel, "ttt start", opponent=s.bob),
                sim.slash(s.carol, channel, "ttt vs-ai", difficulty="smart"),
            )
            public = [ix for ix in (challenge, game) if not ix.ephemeral]
            refused = [ix for ix in (challenge, game) if ix.ephemeral]
            assert len(public) == 1, (challenge.content, game.content)
            assert len(refused) == 1
            assert (refused[0].content or "").startswith(BUSY), refused[0].content
            storage = bot.service.storage
            live = await storage.live_game_in_channel(channel.id)
            pending = await storage.pending_challenge_in_channel(channel.id)
            assert (live is None) != (pending is None)
