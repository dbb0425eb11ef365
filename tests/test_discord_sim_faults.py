"""The sim serves long fast runs."""

from __future__ import annotations

import asyncio
import time

from tests.discord_sim import DiscordSim
from tests.discord_sim.demo_client import DemoClient

# -- long and fast runs ---------------------------------------------------------------------------


async def test_300_fast_interactions_through_one_session(sim: DiscordSim) -> None:
    """discord.py allows 120 gateway sends a minute; the sim's ordering barrier (a websocket
    ping) costs none of them, so a long run is not stalled. Every second interaction is a
    click right after the reply that registered its View, which the barrier keeps in order."""
    s = sim.seed
    async with sim.running(DemoClient()) as client:
        (session,) = sim.live_sessions()
        started = time.monotonic()
        async with asyncio.timeout(30):
            for n in range(150):
                if n % 2:
                    ix = await sim.slash(s.alice, s.channel, "echo", text=f"echo {n}")
                    assert ix.content == f"echo {n}"
                    board = await sim.slash(s.bob, s.channel, "board")
                    assert board.message is not None
                    clicked = await sim.click(s.alice, board.message, f"cell:{n % 9}")
                    assert clicked.response_type == 7
                    assert clicked.content == f"played {n % 9}"
                else:
                    ix = await sim.slash(s.carol, s.thread, "echo", text=f"thread {n}")
                    assert ix.content == f"thread {n}"
        elapsed = time.monotonic() - started
        assert client.ws is not None
        # Its own first heartbeat and IDENTIFY are all the client sent (of 110 a minute).
        assert client.ws._rate_limiter.remaining >= 105
    assert len(sim.interactions) == 300
    assert all(ix.answered and ix.rejected is None for ix in sim.interactions)
    assert sim.identifies == 1
    assert session.resumes == 0
    assert elapsed < 30
