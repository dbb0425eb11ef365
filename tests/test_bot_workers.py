"""Several ``python -m bot serve`` workers on one database, any of them given any interaction
of any game (issue 40): what one worker keeps in its own memory either only saves it a round
trip, the database deciding (a copy made stale by another worker costs a retry at most), or has
been moved to the database. Two bots of the harness serve at once, and the sim is pointed at
one or the other for each interaction."""

from __future__ import annotations

import orjson

from bot.client import TTTBot
from bot.endpoint import SEEN_KEPT
from tests.bot_harness import (
    BotHarness,
    both_engines,
    http_only,
)
from tests.discord_sim import DiscordSim, InteractionRecord

pytestmark = [http_only, both_engines]


def to(sim: DiscordSim, bot: TTTBot) -> None:
    """Send the next interactions to ``bot``'s endpoint."""
    sim.interactions_url = f"http://127.0.0.1:{bot.http_port}/interactions"


def given(bot: TTTBot, ix: InteractionRecord) -> bool:
    """Whether ``ix`` was POSTed to ``bot`` (its endpoint remembers what it was given)."""
    assert bot.endpoint is not None
    return ix.id in bot.endpoint._seen


async def test_an_interaction_sent_again_to_another_worker_is_refused_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The interaction answered by one worker, sent again to the other within the window:
    401 there, nothing started or answered twice. The sweeper forgets it once a request
    signed then would be refused as stale anyway."""
    s = sim.seed
    async with harness.running() as first, harness.running() as second:
        to(sim, first)
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert started.response_type == 4
        assert not started.ephemeral
        to(sim, second)
        assert not given(second, started)  # so the database refuses it, not its own memory
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        # And back to the worker that answered it: refused by its own memory.
        to(sim, first)
        assert (await sim.post_signed(orjson.dumps(started.payload))).status == 401
        assert sim.messages(s.channel) == [started.message]
        assert sum(1 for request in sim.requests if request.http_response) == 1
        # Noted by the database until its signing time is SEEN_KEPT behind the sweeper's
        # clock: then the holder of the sweeper lease removes it.
        holder = first if first.holds_sweeper_lease else second
        assert holder.endpoint is not None
        clock = holder.endpoint.wall_clock
        await holder.sweep()
        assert not await holder.storage.note_interaction(started.id, clock())
        holder.endpoint.wall_clock = lambda: clock() + SEEN_KEPT + 2
        await holder.sweep()
        assert await holder.storage.note_interaction(started.id, clock())
