"""Whole games through the real discord.py client and the simulator: against the bot at each
difficulty, between members, across a restart, against the clock, and under concurrent clicks.
Every test runs on both database engines, SQLite and PostgreSQL, and all but the dropped gateway
connection's with both front doors: over the gateway and over HTTP (``python -m bot serve``)."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from bot.components import CHALLENGE_ID, GAME_ACTION_ID
from game import Board, Mark
from tests.bot_harness import (
    GATEWAY,
    HTTP,
    BotHarness,
    board_of,
    board_out_of_time,
    both_engines,
    both_front_doors,
    button_id,
    cell_buttons,
    cell_id,
    free_cells,
    is_live,
    recorded_post,
    shown_board,
    start_member_game,
    text_of,
    told_privately,
)
from tests.discord_sim import DiscordSim, SimMessage, SimUser

pytestmark = both_engines


def finished(sim: DiscordSim, message_id: int) -> SimMessage | None:
    """The board message once it no longer shows a live game."""
    message = sim.message(message_id)
    return None if is_live(message) else message


async def play_randomly_against_bot(
    sim: DiscordSim, user: SimUser, message: SimMessage, rng: random.Random
) -> SimMessage:
    """Click random free cells until the game ends; returns the final board message."""
    while is_live(message):
        cell = rng.choice(free_cells(message))
        ix = await sim.click(user, message, cell_id(message, cell))
        assert ix.response_type == 7, ix.content  # edited in place
        assert ix.message is not None
        message = ix.message
    return message


@both_front_doors
@pytest.mark.parametrize(("difficulty", "games"), [("minimax", 12), ("smart", 12), ("random", 6)])
async def test_full_games_against_each_difficulty(
    sim: DiscordSim, harness: BotHarness, difficulty: str, games: int
) -> None:
    s = sim.seed
    rng = random.Random(difficulty)
    results = []
    async with harness.running():
        for number in range(games):
            first = "bot" if number % 2 else "me"
            ix = await sim.slash(
                s.alice, s.channel, "ttt vs-ai", difficulty=difficulty, first=first
            )
            assert not ix.ephemeral
            assert ix.message is not None
            final = await play_randomly_against_bot(sim, s.alice, ix.message, rng)
            board = board_of(final)
            assert board.is_over
            text = text_of(final)
            human = Mark.O if first == "bot" else Mark.X
            results.append(board.winner is human)
            if board.winner is None:
                assert "It's a draw." in text
            else:
                assert "wins with" in text
            assert button_id(final, GAME_ACTION_ID, action="rematch")
            assert all(b["disabled"] for b in cell_buttons(final))
        stats = await sim.slash(s.alice, s.channel, "ttt stats")
    if difficulty in ("minimax", "smart"):
        assert not any(results), f"{difficulty} lost a game to random moves"
    assert f"Against the bot ({difficulty})" in text_of(stats)


@both_front_doors
async def test_a_challenge_played_to_a_win_counts_for_both(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        challenge = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        message = challenge.message
        assert message is not None
        accepted = await sim.click(
            s.bob, message, button_id(message, CHALLENGE_ID, action="accept")
        )
        assert accepted.response_type == 7
        board = accepted.message
        assert board is not None
        assert board.id == message.id  # the challenge became the board
        assert "❌ **alice** vs ⭕ **bob**" in text_of(board)
        for user, cell in [(s.alice, "A1"), (s.bob, "B1"), (s.alice, "A2"), (s.bob, "B2")]:
            board = (await sim.click(user, board, cell_id(board, cell))).message
            assert board is not None
        final = (await sim.click(s.alice, board, cell_id(board, "A3"))).message
        assert final is not None
        assert shown_board(final) == "XO./XO./X.."
        assert "🏆 ❌ **alice** wins with A1 A2 A3!" in text_of(final)
        assert "❎" in text_of(final)  # the winning line stands out in the grid...
        styles = [b["style"] for b in cell_buttons(final)]
        assert [styles[cell] for cell in (0, 3, 6)] == [3, 3, 3]  # ...and on the buttons
        assert styles[1] == 2
        alice = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        bob = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
        board_text = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard"))
    assert "Against members: 1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in alice
    assert "Against members: 0 W · 1 L · 0 D (rating 1089 ± 339, provisional)" in bob
    assert board_text.index(f"<@{s.alice.id}>") < board_text.index(f"<@{s.bob.id}>")


@both_front_doors
async def test_an_open_challenge_played_to_a_draw(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        challenge = await sim.slash(s.alice, s.channel, "ttt start")
        assert challenge.message is not None
        assert challenge.message.pinged == []
        board = (
            await sim.click(
                s.carol,
                challenge.message,
                button_id(challenge.message, CHALLENGE_ID, action="accept"),
            )
        ).message
        assert board is not None
        # X O X / X O O / O X X
        moves = ["A1", "B1", "C1", "B2", "A2", "C2", "B3", "A3", "C3"]
        for number, cell in enumerate(moves):
            assert text_of(board).endswith(" · click a cell or use /ttt move")
            player = s.alice if number % 2 == 0 else s.carol
            board = (await sim.click(player, board, cell_id(board, cell))).message
            assert board is not None
        assert shown_board(board) == "XOX/XOO/OXX"
        assert "🤝 It's a draw." in text_of(board)
        # A finished board only names its game: there is no cell left to click.
        assert re.search(r"\nGame #[0-9]+$", text_of(board))
        stats = text_of(await sim.slash(s.carol, s.channel, "ttt stats"))
    assert "Against members: 0 W · 0 L · 1 D (rating 1200 ± 339, provisional)" in stats


@both_front_doors
async def test_a_restart_mid_game_keeps_the_old_buttons_working(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        played = (await sim.click(s.alice, board, cell_id(board, "B2"))).message
        assert played is not None
    # A new process on the same database: nothing of the old one survives but the database.
    async with harness.running() as second:
        ix = await sim.click(s.bob, played, cell_id(played, "A1"))
        assert ix.response_type == 7, ix.content
        assert ix.message is not None
        assert shown_board(ix.message) == "O../.X./..."
        assert second.service is not None
        commands_synced = [r for r in sim.requests if r.method == "PUT" and "/commands" in r.path]
    assert len(commands_synced) == 1  # the restart found the same definitions: no second sync


async def test_a_bot_moved_from_the_gateway_to_http_and_back_plays_on(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """docs/operating.md: both front doors run on the same database, so switching is a matter
    of the Endpoint URL and the command. What one left (a game half played, a challenge open)
    the other plays on, settles and shows, and the stats add up across both."""
    s = sim.seed
    harness.front_door = GATEWAY
    async with harness.running():
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        challenge = await sim.slash(s.carol, s.other_channel, "ttt start", opponent=s.alice)
        assert challenge.message is not None
    harness.front_door = HTTP
    async with harness.running() as served:
        moved = await sim.click(s.bob, board, cell_id(board, "A1"))
        assert moved.response_type == 7, moved.content
        accepted = await sim.click(
            s.alice,
            challenge.message,
            button_id(challenge.message, CHALLENGE_ID, action="accept"),
        )
        assert accepted.response_type == 7, accepted.content
        second = accepted.message
        assert second is not None
        played = await sim.click(s.carol, second, cell_id(second, "C3"))
        assert played.response_type == 7, played.content
        # The sweep shows the timeouts on the boards whose ids were saved after the answers.
        assert await served.in_flight.wait_idle(patience=5)
        # Alice's turn runs out in both games, settled by the worker holding the lease.
        harness.clock.advance(301)
        await served.sweep()
        assert served.holds_sweeper_lease
        for shown in (board, second):
            assert "**alice** ran out of time" in text_of(shown), text_of(shown)
    harness.front_door = GATEWAY
    async with harness.running():
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        assert started.message is not None
        await sim.click(s.alice, started.message, cell_id(started.message, "B2"))
        assert board_of(started.message).move_count == 2
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
    assert "Against members: 0 W · 2 L · 0 D" in stats, stats
    assert sim.take_violations() == []


@both_front_doors
async def test_two_simultaneous_clicks_apply_exactly_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        first, second = await asyncio.gather(
            sim.click(s.alice, board, cell_id(board, "A1")),
            sim.click(s.alice, board, cell_id(board, "C3")),
        )
        # One played; the other refused, privately: at once, or with the board redrawn as
        # stored if it read the game after the other's move.
        told = await sim.wait_for(
            lambda: [text for ix in (first, second) if (text := told_privately(ix))]
        )
        assert told in (
            ["It is not your turn: waiting for bob."],
            ["The board changed while you were moving: look again and retry."],
        )
        assert sorted(ix.response_type or 0 for ix in (first, second)) in ([4, 7], [7, 7])
        final = sim.message(board.id)
        assert shown_board(final) in ("X../.../...", ".../.../..X")
        listing = await sim.slash(s.bob, s.channel, "ttt board")
        assert listing.message is not None
        assert shown_board(listing.message) == shown_board(final)


@both_front_doors
async def test_two_channels_hold_independent_games(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running():
        here = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        there = await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="random")
        thread = await sim.slash(s.bob, s.thread, "ttt vs-ai", difficulty="minimax")
        assert not here.ephemeral
        assert not there.ephemeral
        assert not thread.ephemeral
        moved = await sim.slash(s.alice, s.other_channel, "ttt move", cell="A1")
        assert moved.message is not None
        assert board_of(moved.message).move_count == 2
        assert "random" in text_of(moved.message)
        here_now = await sim.slash(s.alice, s.channel, "ttt board")
        assert here_now.message is not None
        assert board_of(here_now.message) == Board()
        thread_move = await sim.slash(s.bob, s.thread, "ttt move", cell="B2")
        assert thread_move.message is not None
        assert "minimax" in text_of(thread_move.message)


# -- the clock ---------------------------------------------------------------------------------


@both_front_doors
async def test_an_idle_player_loses_by_timeout(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        started = await start_member_game(sim)
        board = (await sim.click(s.alice, started, cell_id(started, "B2"))).message
        assert board is not None
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(299)
        bot.wake_sweeper()
        await bot.sweep()
        assert is_live(sim.message(board.id))
        harness.clock.advance(2)
        bot.wake_sweeper()
        final = await sim.wait_for(lambda: finished(sim, board.id))
        assert "⏰ ⭕ **bob** ran out of time: ❌ **alice** wins." in text_of(final)
        stats = text_of(await sim.slash(s.bob, s.channel, "ttt stats"))
    assert "Against members: 0 W · 1 L · 0 D" in stats


@both_front_doors
async def test_a_move_after_the_deadline_is_refused_and_settles_the_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await board_out_of_time(sim, harness, bot)
        late = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert late.response_type == 7  # the board shows the timeout in place...
        assert late.message is not None
        assert "ran out of time" in text_of(late.message)
        await late.wait_followups(1)
        assert late.followups[0].ephemeral  # ...and the player is told why, privately
        assert "Too late: alice's time ran out" in (late.followups[0].content or "")
        again = await sim.slash(s.alice, s.channel, "ttt move", cell="B2")
        assert again.ephemeral
        assert "There is no game in this channel" in (again.content or "")


@both_front_doors
async def test_games_that_ran_out_while_the_bot_was_down_are_settled_at_start(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        board = started.message
        assert board is not None
    harness.clock.advance(3600)
    async with harness.running():
        final = await sim.wait_for(lambda: finished(sim, board.id))
        assert "❌ **alice** ran out of time" in text_of(final)
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
    assert "Against the bot (smart): 0 W · 1 L · 0 D" in stats


@both_front_doors
async def test_a_challenge_expires(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        message = await recorded_post(sim, bot, "ttt start", opponent=s.bob)
        harness.clock.advance(121)
        bot.wake_sweeper()
        await sim.wait_for(lambda: "expired" in (sim.message(message.id).content or ""))
        expired = sim.message(message.id)
        assert expired.buttons() == []
        assert "alice**'s challenge expired: nobody accepted in time." in (expired.content or "")
        fresh = await sim.slash(s.carol, s.channel, "ttt vs-ai", difficulty="random")
        assert not fresh.ephemeral  # the channel is free again


async def test_a_dropped_gateway_connection_loses_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await start_member_game(sim)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        await sim.drop_connection()  # returns once the client has resumed
        ix = await sim.click(s.bob, board, cell_id(board, "A1"))
        assert ix.response_type == 7
        assert shown_board(board) == "O../.X./..."
    assert sim.identifies == 1  # resumed, not re-identified
