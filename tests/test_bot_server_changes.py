"""What a server does to the bot mid-game: permissions taken away and given back, channels and
threads deleted or archived, the bot removed; through the local Discord server, on both engines
and both front doors."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bot.client import TTTBot
from bot.components import FORGET_ID, TOURNAMENT_ID
from bot.storage.base import VS_MEMBER, EndReason, GameRecord, Record
from tests.bot_harness import (
    PAST_THE_WINDOW,
    SHORT_WINDOW,
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    cell_id,
    first_answers_lost,
    is_live,
    recorded_post,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, SimChannel, SimMessage, SimTimeout
from tests.discord_sim.models import PERM_CREATE_PUBLIC_THREADS, PERM_SEND_MESSAGES
from tests.test_bot_tournaments import current, round_games

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


async def clicked_without_send_messages(sim: DiscordSim, bot: TTTBot) -> SimMessage:
    """alice's board against the bot, her first move clicked while the bot lacks Send Messages
    in the channel: answered through the click's token, which the bot keeps as its way to
    reach the channel (its route), as where it is no member."""
    s = sim.seed
    first = await recorded_post(sim, bot, "ttt vs-ai", difficulty="minimax")
    with bot_denied(sim, s.channel, PERM_SEND_MESSAGES):
        played = await sim.click(s.alice, first, cell_id(first, "B2"))
        assert played.response_type == 7, played.content
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.storage.reply_route(s.channel.id) is not None
    return first


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


async def test_a_channel_given_back_to_the_bot_gets_its_timeouts_shown_there_again(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A click while the bot lacked Send Messages in the channel answered through its token,
    which the bot kept as the way to reach the channel, as where it is not a member. Once
    the permission is back, the next command there says the bot reaches the channel: a turn
    that then runs out is shown on the board by the bot itself, not left to a token long
    dead (the board looked live until some interaction came)."""
    s = sim.seed
    async with harness.running(turn_timeout=3600) as bot:
        await clicked_without_send_messages(sim, bot)
        harness.clock.advance(20 * 60)  # her turn runs long; the token's 15 minutes are out
        board = await recorded_post(sim, bot, "ttt board")
        assert is_live(board)
        assert await bot.storage.reply_route(s.channel.id) is None
        harness.clock.advance(3601)
        await bot.sweep()
        assert not is_live(board), text_of(board)


async def test_a_game_that_ended_unseen_is_shown_on_its_board_once_the_bot_is_back(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The turn ran out after the token kept while the bot lacked Send Messages had died, with
    the permission back: nothing could show it then. The next command in the channel shows it
    on its board, which looked live till then (the bot showed such a game only where it is no
    member, so never here). Where the bot keeps a token as its way there, the sweeper does not
    ask Discord whether the channel is still there: one the bot cannot see may be answered as
    unknown, and the game is an ordinary timeout."""
    s = sim.seed
    async with harness.running(turn_timeout=3600) as bot:
        first = await clicked_without_send_messages(sim, bot)
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        harness.clock.advance(3601)
        await bot.sweep()
        assert is_live(first)  # the token was dead: nothing could show it yet
        timed_out = await bot.storage.get_game(game.id)
        assert timed_out is not None
        assert timed_out.end_reason is EndReason.TIMEOUT
        channel = f"/channels/{s.channel.id}"
        assert not [r for r in sim.requests if r.method == "GET" and r.path.endswith(channel)]
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        assert started.message is not None, started.content
        assert await bot.in_flight.wait_idle(patience=5)
        assert not is_live(first), text_of(first)
        assert is_live(started.message)
        assert await bot.storage.reply_route(s.channel.id) is None


async def member_game_in_a_deleted_channel(
    sim: DiscordSim, bot: TTTBot
) -> tuple[SimMessage, GameRecord]:
    """alice's game against bob in the seed's channel, a move each (alice to move), then the
    channel deleted by an admin: its board and the game as stored before the deletion."""
    s = sim.seed
    board = await start_member_game(sim)
    await sim.click(s.alice, board, cell_id(board, "B2"))
    await sim.click(s.bob, board, cell_id(board, "A1"))
    assert await bot.in_flight.wait_idle(patience=5)
    game = await bot.storage.live_game_in_channel(s.channel.id)
    assert game is not None
    sim.delete_channel(s.channel)
    return board, game


async def test_a_game_whose_channel_was_deleted_ends_for_nobody_when_its_turn_runs_out(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An admin deletes the channel of a game between members: the bot is not told (it asks
    for no gateway events). When the turn runs out, the sweeper asks Discord about the
    channel, once, and ends the game for nobody at its deadline, as a moderator's end does:
    alice, to move, could not move there, so bob is owed no win and nobody's record or rating
    moves. The board is not edited (there is nothing to edit), and nothing is logged as an
    error (the harness fails a test on any)."""
    s = sim.seed
    async with harness.running() as bot:
        board, game = await member_game_in_a_deleted_channel(sim, bot)
        assert game.deadline is not None
        harness.clock.advance(301)
        for _ in range(3):
            await bot.sweep()
            harness.clock.advance(60)
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert ended.end_reason is EndReason.ENDED
        assert ended.winner is None
        assert ended.updated_at == game.deadline
        for player in (s.alice, s.bob):
            stats = await bot.storage.player_stats(s.guild.id, player.id)
            assert stats.against(VS_MEMBER) == Record()
            assert stats.rating is None
        asked = [r for r in sim.requests if f"/channels/{s.channel.id}" in r.path]
        assert [(r.method, r.status) for r in asked[-1:]] == [("GET", 404)]
        assert sum(r.method == "GET" for r in asked) == 1
        assert not [r for r in asked if r.method == "PATCH" and str(board.id) in r.path]


async def test_a_forget_me_settles_a_game_whose_channel_was_deleted_as_the_sweeper_would(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """alice's turn ran out in a channel deleted since, and she asks to be forgotten before
    the next sweep: her overdue game is settled first "as the sweeper would" (docs/operating.md),
    and the sweeper ends such a game for nobody. It was settled as an ordinary timeout all the
    same: bob got a rated win over a player who could not move there."""
    s = sim.seed
    async with harness.running() as bot:
        _, game = await member_game_in_a_deleted_channel(sim, bot)
        harness.clock.advance(301)
        asked = await sim.slash(s.alice, s.other_channel, "ttt forget-me")
        assert asked.message is not None, asked.content
        forget = button_id(asked.message, FORGET_ID, action="confirm")
        await sim.click(s.alice, asked.message, forget)
        assert await bot.in_flight.wait_idle(patience=5)
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert (ended.end_reason, ended.winner) == (EndReason.ENDED, None)
        assert ended.updated_at == game.deadline
        stats = await bot.storage.player_stats(s.guild.id, s.bob.id)
        assert stats.against(VS_MEMBER) == Record()
        assert stats.rating is None


async def test_a_game_whose_channel_discord_cannot_tell_about_waits_for_the_next_sweep(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord fails the question about a timed-out game's channel (a 503): the game is left
    live for the next sweep rather than ended either way, and that sweep times it out as
    usual, the channel being there."""
    s = sim.seed
    async with harness.running() as bot:
        await recorded_post(sim, bot, "ttt vs-ai", difficulty="minimax")
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        sim.faults.add("GET /channels/{id}", status=503, count=1)
        harness.clock.advance(301)
        await bot.sweep()
        still = await bot.storage.get_game(game.id)
        assert still is not None
        assert still.is_active
        await bot.sweep()
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert ended.end_reason is EndReason.TIMEOUT
        assert ended.winner is game.board.turn.other


@pytest.mark.parametrize(
    "answer",
    [
        {"status": 404, "body": {"message": "Unknown Guild", "code": 10004}},
        {"status": 400, "body": {"message": "Invalid Form Body", "code": 50035}},
    ],
    ids=["404-another-code", "400"],
)
async def test_a_game_whose_channel_discord_refuses_to_say_about_times_out_as_before(
    sim: DiscordSim, harness: BotHarness, answer: dict[str, Any]
) -> None:
    """Discord answers the question about a timed-out game's channel with an error that is no
    "Unknown Channel" and that asking again would not change (another 404, a 400): the game
    times out as it did before the question was asked, at that sweep, rather than being
    asked about at every sweep for ever."""
    s = sim.seed
    async with harness.running() as bot:
        await recorded_post(sim, bot, "ttt vs-ai", difficulty="minimax")
        game = await bot.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        sim.faults.add("GET /channels/{id}", count=1, **answer)
        harness.clock.advance(301)
        await bot.sweep()
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert ended.end_reason is EndReason.TIMEOUT
        assert ended.winner is game.board.turn.other


async def test_a_tournament_whose_threads_were_refused_is_not_held_by_a_clock_stepped_back(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The round's threads are refused (Create Public Threads denied to the bot after the
    tournament was created): the tournament waits a minute before it asks again. The wall
    clock then steps back 10 minutes (NTP) and the permission is given back: the next sweep
    opens the round's games, rather than holding them until the clock catches up with the
    refusal's time, 11 minutes on."""
    s = sim.seed
    players = [s.alice, s.bob, s.carol, sim.add_user("dave")]
    sim.add_member(s.guild, players[-1])
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Cup")
        assert created.message is not None, created.content
        join = button_id(created.message, TOURNAMENT_ID, action="join")
        for player in players:
            await sim.click(player, created.message, join)
        with bot_denied(sim, s.channel, PERM_CREATE_PUBLIC_THREADS):
            await sim.slash(s.owner, s.channel, "ttt tournament start")
            assert await bot.in_flight.wait_idle(patience=5)
            assert (await current(bot, sim)).record.games == {}
            threads = [r for r in sim.requests if r.path.endswith(f"/{s.channel.id}/threads")]
            assert threads
            assert {r.status for r in threads} == {403}
        harness.clock.advance(-600)
        await bot.sweep()
        tournament = await current(bot, sim)
        assert len(await round_games(bot, tournament)) == 2


async def test_a_failure_after_a_command_was_answered_does_not_answer_it_again(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What follows a command's answer (here the look at the channel's route, as when the
    database went down just then) failing unforeseen went on to discord.py, which answered
    the interaction a second time ("answered twice", and "the database did not answer,
    nothing was done" over a game that started). The answer stands; the failure is logged."""
    s = sim.seed
    async with harness.running(expect_errors=True) as bot:

        async def unforeseen(channel_id: int) -> None:
            raise RuntimeError("the route could not be read")

        monkeypatch.setattr(bot.storage, "reply_route", unforeseen)
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        assert await bot.in_flight.wait_idle(patience=5)
        assert started.message is not None
        assert is_live(started.message)
        assert sim.take_violations() == []
        assert await bot.storage.live_game_in_channel(s.channel.id) is not None
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "bot.client"]
    assert (logging.ERROR, "interaction answered, but what follows it failed") in logged
