"""What a click or a command leaves in memory once answered: nothing that waits for the garbage
collector.

discord.py builds, for each interaction, objects that point at each other (the interaction and
its response; a View and its items). Left as cycles, they pile up until a full collection,
which under load stalls the loop for tens of milliseconds; the bot breaks them once an
interaction is answered (``bot.cycles``), so that reference counting frees them at once.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager

import discord
import pytest

from bot.components import GAME_ACTION_ID
from tests.bot_harness import (
    BotHarness,
    both_front_doors,
    button_id,
    cell_id,
    drop_resolved_users,
    free_cells,
    is_live,
)
from tests.discord_sim import DiscordSim

# Every kind of object discord.py builds for an interaction and its answer that can be in a
# cycle: the interaction, its response, and Views with their items; over HTTP, a guild made up
# for the interaction and the members it holds.
PER_INTERACTION = (
    discord.Interaction,
    discord.InteractionResponse,
    discord.ui.View,
    discord.ui.Item,
    discord.Guild,
    discord.Member,
    discord.User,
)


@contextmanager
def unreachable_kept() -> Iterator[list[object]]:
    """Within the block, what the collector finds unreachable is kept (``DEBUG_SAVEALL``)
    instead of freed; the list given is filled with it on leaving."""
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    found: list[object] = []
    try:
        yield found
        gc.collect()
        found.extend(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@both_front_doors
@pytest.mark.parametrize("size", [3, 5])  # 5x5: a components-v2 message, Views nested
async def test_answered_clicks_leave_nothing_for_the_garbage_collector(
    sim: DiscordSim, harness: BotHarness, size: int
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax", size=size)
        assert ix.message is not None
        message = ix.message
        assert await bot.in_flight.wait_idle(patience=5)
        with unreachable_kept() as unreachable:
            while is_live(message):
                ix = await sim.click(s.alice, message, cell_id(message, free_cells(message)[0]))
                assert ix.message is not None
                message = ix.message
            # A rematch answers with a new message rather than an edit.
            ix = await sim.click(
                s.alice, message, button_id(message, GAME_ACTION_ID, action="rematch")
            )
            assert ix.response_type == 4
            assert await bot.in_flight.wait_idle(patience=5)
            # The click's task ends, and its done callbacks run, a turn or two of the loop on.
            for _ in range(3):
                await asyncio.sleep(0)
        left = sorted(type(o).__qualname__ for o in unreachable if isinstance(o, PER_INTERACTION))
    assert left == [], left


@both_front_doors
async def test_answered_commands_leave_nothing_for_the_garbage_collector(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.alice, s.channel, "ttt help")
        assert await bot.in_flight.wait_idle(patience=5)
        with unreachable_kept() as unreachable:
            ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
            assert ix.message is not None
            await sim.slash(s.alice, s.channel, "ttt stats")
            # Answered by discord.py itself, after the cog's callback returns.
            assert await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="")
            await sim.slash(s.alice, s.channel, "ttt move", cell="A1")
            # Refused: a sentence for the user, through the command's error handlers.
            refused = await sim.slash(s.alice, s.channel, "ttt move", cell="A1")
            assert refused.ephemeral
            await sim.slash(s.alice, s.channel, "ttt resign")
            # Refused before the command runs: an option naming nobody.
            forged = await sim.slash(
                s.alice, s.channel, "ttt start", opponent=s.bob, tamper=drop_resolved_users
            )
            assert forged.ephemeral
            assert await bot.in_flight.wait_idle(patience=5)
            # discord.py tells of a command done in a task of its own, made as it returns.
            await asyncio.gather(
                *(
                    task
                    for task in asyncio.all_tasks()
                    if task.get_name() == "discord.py: on_app_command_completion"
                )
            )
        left = sorted(type(o).__qualname__ for o in unreachable if isinstance(o, PER_INTERACTION))
    assert left == [], left
