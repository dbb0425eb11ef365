"""The sweeper under ``python -m bot serve`` with several workers: two bots answering over
HTTP on one database, one of them sweeping at a time (the one holding the sweeper lease),
each due game and challenge settled and shown once, whichever worker holds the lease."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from bot.client import TTTBot
from bot.service import Swept
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    cell_id,
    edits_by_rest,
    http_only,
    is_live,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, SimMessage

# Past a turn's clock (five minutes) and a challenge's (two).
PAST_EVERY_DEADLINE = 301


def send_interactions_to(sim: DiscordSim, bot: TTTBot) -> None:
    sim.interactions_url = f"http://127.0.0.1:{bot.http_port}/interactions"


async def a_game_waiting_on_bob(sim: DiscordSim, bot: TTTBot) -> SimMessage:
    started = await start_member_game(sim)
    board = (await sim.click(sim.seed.alice, started, cell_id(started, "B2"))).message
    assert board is not None
    assert await bot.in_flight.wait_idle(patience=5)
    return board


@both_front_doors
async def test_the_harness_hands_the_bot_over_only_once_its_start_up_sweep_has_ended(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start-up sweep runs in the background, outside ``in_flight``: a test whose first
    steps ran beside it raced it (a tournament started by a command and run by the sweep at
    once had one of its round's games opened by each, the sweep's after the command's answer
    and ``wait_idle``). So ``harness.running()`` waits for it, here held open half a second."""
    ended: list[TTTBot] = []
    sweep = TTTBot.sweep

    async def slow_sweep(bot: TTTBot) -> Swept:
        await asyncio.sleep(0.5)
        swept = await sweep(bot)
        ended.append(bot)
        return swept

    monkeypatch.setattr(TTTBot, "sweep", slow_sweep)
    async with harness.running() as bot:
        assert ended == [bot]
        assert bot.first_sweep_done.is_set()


@http_only
@both_engines
async def test_two_workers_settle_each_due_item_once_and_the_next_takes_over(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    # Each bot's stack, so that whichever holds the lease can be stopped first.
    async with contextlib.AsyncExitStack() as first_running:
        first = await first_running.enter_async_context(harness.running())
        async with contextlib.AsyncExitStack() as second_running:
            second = await second_running.enter_async_context(harness.running())
            # Each swept at start; one of them took the lease.
            assert [first.holds_sweeper_lease, second.holds_sweeper_lease].count(True) == 1
            holder, other = (first, second) if first.holds_sweeper_lease else (second, first)
            send_interactions_to(sim, other)
            board = await a_game_waiting_on_bob(sim, other)
            challenge = await sim.slash(s.alice, s.other_channel, "ttt start", opponent=s.bob)
            assert challenge.message is not None
            assert await other.in_flight.wait_idle(patience=5)
            harness.clock.advance(PAST_EVERY_DEADLINE)
            swept = await asyncio.gather(*(bot.sweep() for bot in (first, second) * 2))
            assert sum(len(sweep.games) for sweep in swept) == 1
            assert sum(len(sweep.challenges) for sweep in swept) == 1
            # Whatever the order, only the holder swept.
            assert all(
                sweep.games == [] and sweep.challenges == []
                for bot, sweep in zip((first, second) * 2, swept, strict=True)
                if bot is other
            )
            await sim.wait_for(lambda: not is_live(sim.message(board.id)))
            assert "ran out of time" in text_of(sim.message(board.id))
            message = challenge.message
            await sim.wait_for(lambda: "expired" in (sim.message(message.id).content or ""))
            assert await first.in_flight.wait_idle(patience=5)
            assert await second.in_flight.wait_idle(patience=5)
            assert edits_by_rest(sim, board) == 1
            assert edits_by_rest(sim, message) == 1
            # The holder stops (SIGTERM): it gives the lease up, and the other one sweeps the
            # next due game at its next sweep.
            next_board = await a_game_waiting_on_bob(sim, other)
            harness.clock.advance(PAST_EVERY_DEADLINE)
            stopping = first_running if holder is first else second_running
            await stopping.aclose()
            send_interactions_to(sim, other)
            taken_over = await other.sweep()
            assert other.holds_sweeper_lease
            assert len(taken_over.games) == 1
            await sim.wait_for(lambda: not is_live(sim.message(next_board.id)))
