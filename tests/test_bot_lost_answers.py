"""A first answer lost on the way to Discord is sent again while Discord's deadline allows.

Discord takes one first answer per interaction within 3 s and refuses a second one (400, code
40060), so sending a lost one again never shows anything twice, and that refusal says the first
one arrived. Each case here loses the first answer's connection once, before Discord applied it
(it never arrived) or after (it arrived, and the bot never heard so), through the local Discord
server's fault injection, and checks that the member sees the answer and the change is made
once. What happens when every try is lost is in ``test_bot_reliability.py``.
"""

from __future__ import annotations

from typing import Literal

import pytest

from bot.components import GAME_ACTION_ID
from tests.bot_harness import (
    CALLBACK,
    PAST_THE_WINDOW,
    SHORT_WINDOW,
    BotHarness,
    button_id,
    cell_id,
    first_answers_lost,
    shown_board,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimTimeout

RESETS: list[Literal["before", "after"]] = ["before", "after"]


def callbacks_of(sim: DiscordSim, ix: InteractionRecord) -> list[tuple[str | None, int | None]]:
    """Each callback request for ``ix``: the fault it met, and the status Discord answered."""
    path = f"/interactions/{ix.id}/{ix.token}/callback"
    return [(call.fault, call.status) for call in sim.requests if call.path == path]


def sent_again(sim: DiscordSim, ix: InteractionRecord, reset: Literal["before", "after"]) -> None:
    """``ix``'s first answer met the reset and was sent once more: taken (the lost one had not
    arrived: 204, or 200 with a new message's id), or refused as already answered (400: it
    had)."""
    (lost, _), (fault, status), *_ = callbacks_of(sim, ix)
    assert lost == f"reset-{reset}"
    assert fault is None
    assert status in ((200, 204) if reset == "before" else (400,))


async def vs_ai(sim: DiscordSim, size: int = 3, first: str = "me") -> InteractionRecord:
    s = sim.seed
    return await sim.slash(
        s.alice, s.channel, "ttt vs-ai", difficulty="smart", first=first, size=size
    )


@pytest.mark.parametrize("reset", RESETS)
@pytest.mark.parametrize(
    ("size", "first"), [(3, "me"), (5, "bot")], ids=["3x3", "5x5-the-bot-first"]
)
async def test_vs_ai_is_shown_once_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"], size: int, first: str
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        sim.faults.add(CALLBACK, reset=reset)
        ix = await vs_ai(sim, size, first)
        assert ix.response_type == 4
        assert ix.message is not None
        assert "to move" in text_of(ix.message)
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == ix.message.id
        assert len(game.moves) == (1 if first == "bot" else 0)
        assert sim.messages(s.channel) == [ix.message]
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


@pytest.mark.parametrize("reset", RESETS)
async def test_a_challenge_is_shown_once_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"]
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        sim.faults.add(CALLBACK, reset=reset)
        ix = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        assert ix.response_type == 4
        assert ix.message is not None
        assert "challenges you to tic-tac-toe" in (ix.message.content or "")
        assert await bot.in_flight.wait_idle(patience=5)
        challenge = await bot.service.storage.pending_challenge_in_channel(s.channel.id)
        assert challenge is not None
        assert challenge.message_id == ix.message.id
        assert sim.messages(s.channel) == [ix.message]
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


@pytest.mark.parametrize("reset", RESETS)
async def test_a_resign_is_shown_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"]
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await start_member_game(sim)
        sim.faults.add(CALLBACK, reset=reset)
        ix = await sim.slash(s.bob, s.channel, "ttt resign")
        assert ix.response_type == 4
        assert ix.message is not None
        assert "**bob** resigned" in text_of(ix.message)
        assert await bot.in_flight.wait_idle(patience=5)
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


@pytest.mark.parametrize("reset", RESETS)
@pytest.mark.parametrize("size", [3, 5])
async def test_a_click_is_shown_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"], size: int
) -> None:
    """Answered from the gateway payload (bot.fast_clicks), on a classic and on a
    components-v2 board: sent again there."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim, size=size)
        sim.faults.add(CALLBACK, reset=reset)
        ix = await sim.click(s.alice, board, cell_id(board, "A1"))
        assert ix.response_type == 7
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == 1
        assert shown_board(sim.message(board.id)).startswith("X")
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.moves == (0,)
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


@pytest.mark.parametrize("reset", RESETS)
async def test_a_rematch_is_shown_once_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"]
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        resign = await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert resign.response_type == 7
        sim.faults.add(CALLBACK, reset=reset)
        over = sim.message(board.id)
        ix = await sim.click(s.bob, over, button_id(over, GAME_ACTION_ID, action="rematch"))
        assert ix.response_type == 4
        assert ix.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == ix.message.id
        rematches = [
            m for m in sim.messages(s.channel) if "❌ **bob** vs ⭕ **alice**" in text_of(m)
        ]
        assert rematches == [ix.message]
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


@pytest.mark.parametrize("reset", RESETS)
async def test_a_hint_is_shown_though_its_answer_was_lost(
    sim: DiscordSim, harness: BotHarness, reset: Literal["before", "after"]
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await vs_ai(sim)
        assert await bot.in_flight.wait_idle(patience=5)
        sim.faults.add(CALLBACK, reset=reset)
        ix = await sim.slash(s.alice, s.channel, "ttt hint")
        assert ix.response_type == 4
        assert ix.ephemeral
        assert (ix.content or "").startswith("Hint: ")
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.assisted
    sent_again(sim, ix, reset)
    assert sim.take_violations() == []


async def test_a_hint_never_shown_leaves_its_game_unassisted(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Every try of the hint's answer lost until Discord's deadline: the member never saw it,
    so the game still counts."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        board = await vs_ai(sim)
        assert board.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(s.alice, s.channel, "ttt hint", timeout=PAST_THE_WINDOW)
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert not game.assisted
        assert "Assisted" not in text_of(sim.message(board.message.id))
        # Asked again, it is given, and then the game is assisted.
        again = await sim.slash(s.alice, s.channel, "ttt hint")
        assert (again.content or "").startswith("Hint: ")
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.assisted
