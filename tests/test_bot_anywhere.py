"""Playing where the bot is not a member: the app installed to a member's own account, used in
a group DM, in a server that never added the bot, and in the bot's own DM.

There the bot can only answer interactions: it must never call the channel's routes (the local
server answers them 403 Missing Access, as Discord does, and counts each one here), it edits a
board after a timeout through the latest interaction token still valid, and when none is, the
next interaction there shows the result. Games outside servers count in one record per member.
"""

from __future__ import annotations

import re

import pytest

from bot import i18n
from bot.boards import UNSHOWN_GRACE
from bot.client import TTTBot
from bot.components import CHALLENGE_ID
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
    refused,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, SimChannel, SimMessage, SimTimeout
from tests.discord_sim.models import DEFAULT_MEMBER_PERMISSIONS, PERM_VIEW_CHANNEL


def channel_route_calls(sim: DiscordSim, channel: SimChannel) -> list[str]:
    """The bot's requests to ``channel``'s own routes (posting, editing, reading messages)."""
    return [
        f"{r.method} {r.path} -> {r.status}"
        for r in sim.requests
        if r.path.startswith(f"/channels/{channel.id}")
    ]


def token_edits(sim: DiscordSim, message: SimMessage) -> list[str]:
    """Edits of ``message`` through an interaction token, outside an interaction's answer."""
    return [
        r.path
        for r in sim.requests
        if r.method == "PATCH"
        and re.fullmatch(rf"/webhooks/[0-9]+/[^/]+/messages/{message.id}", r.path)
    ]


async def idle(sim: DiscordSim, harness: BotHarness, seconds: float) -> None:
    """Time passes for the bot (its turn clock) and for Discord (its tokens) alike."""
    harness.clock.advance(seconds)
    sim.advance_clock(seconds)


async def alice_moves_and_bob_runs_out(
    sim: DiscordSim, harness: BotHarness, bot: TTTBot, board: SimMessage, turn: float
) -> None:
    """Alice plays B2, and bob's ``turn`` (seconds) passes: the sweeper settles the game, and
    its board shows bob lost on time."""
    await sim.click(sim.seed.alice, board, cell_id(board, "B2"))
    assert await bot.in_flight.wait_idle(patience=5)
    await idle(sim, harness, turn)
    bot.wake_sweeper()
    final = await sim.wait_for(lambda: None if is_live(board) else board, 5)
    assert "⭕ **bob** ran out of time: ❌ **alice** wins." in text_of(final)


async def play_a_win_for_alice(sim: DiscordSim, board: SimMessage) -> SimMessage:
    """Alice (X) takes the top row while bob plays the middle one."""
    s = sim.seed
    for user, cell in [(s.alice, "A1"), (s.bob, "A2"), (s.alice, "B1"), (s.bob, "B2")]:
        ix = await sim.click(user, board, cell_id(board, cell))
        assert ix.response_type == 7, ix.content
    final = await sim.click(s.alice, board, cell_id(board, "C1"))
    assert final.message is not None
    return final.message


@both_front_doors
@both_engines
async def test_two_members_play_a_whole_game_in_a_group_dm(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob, s.carol)
    sim.install_for_user(s.alice)
    async with harness.running():
        board = await start_member_game(sim, group)
        final = await play_a_win_for_alice(sim, board)
        assert "**alice** wins" in text_of(final)
        # Bob has not installed the app, but plays through Alice's install all the same; his
        # stats outside servers count it, and so do Alice's.
        sim.install_for_user(s.bob)
        bob = text_of(await sim.slash(s.bob, group, "ttt stats"))
        alice = text_of(await sim.slash(s.alice, sim.dm_channel(s.alice), "ttt stats"))
        refused(await sim.slash(s.alice, group, "ttt leaderboard"), "That only works in a server")
    assert "Against members: 0 W · 1 L · 0 D" in bob
    assert "Against members: 1 W · 0 L · 0 D" in alice
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


@both_front_doors
async def test_a_game_against_the_bot_in_its_own_dm(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    dm = sim.dm_channel(s.carol)
    async with harness.running():
        started = await sim.slash(s.carol, dm, "ttt vs-ai", difficulty="minimax", first="me")
        board = started.message
        assert board is not None
        while is_live(board):
            free = [b for b in board.buttons() if not b.get("disabled") and b.get("label")]
            ix = await sim.click(s.carol, board, free[0]["custom_id"])
            assert ix.response_type == 7, ix.content
        stats = text_of(await sim.slash(s.carol, dm, "ttt stats"))
        refused(await sim.slash(s.carol, dm, "ttt end"), "That only works in a server")
        refused(
            await sim.slash(s.carol, dm, "ttt tournament standings"),
            "That only works in a server: the leaderboard, `/ttt end` and tournaments belong",
        )
    assert "Against the bot (minimax): 0 W" in stats
    assert sim.take_violations() == []


@both_front_doors
async def test_a_timeout_in_the_bots_own_dm(sim: DiscordSim, harness: BotHarness) -> None:
    """The bot is in its DM: it edits the board there itself, as in a server channel."""
    s = sim.seed
    dm = sim.dm_channel(s.carol)
    async with harness.running() as bot:
        started = await sim.slash(s.carol, dm, "ttt vs-ai", difficulty="random", first="me")
        board = started.message
        assert board is not None
        # The board's message id is saved after the answer.
        assert await bot.in_flight.wait_idle(patience=5)
        await idle(sim, harness, 301)
        bot.wake_sweeper()
        final = await sim.wait_for(lambda: None if is_live(board) else board, 5)
    assert "ran out of time" in text_of(final)
    assert token_edits(sim, board) == []
    assert [call.split(" -> ")[1] for call in channel_route_calls(sim, dm)] == ["200"]


@both_front_doors
@both_engines
async def test_a_timeout_in_a_group_dm_edits_the_board_through_the_latest_token(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    async with harness.running() as bot:
        board = await start_member_game(sim, group)
        await alice_moves_and_bob_runs_out(sim, harness, bot, board, 301)
    assert len(token_edits(sim, board)) == 1
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


@both_front_doors
async def test_a_server_channel_hidden_from_the_bot_is_played_through_tokens(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The server added the bot, but the bot may not see this channel: the interaction's
    app permissions say so, and it plays there as where it is no member, never trying the
    channel's routes, and shows a timeout through the latest token."""
    s = sim.seed
    # The sim has no channel overwrites: the channel is hidden from the bot by its role and
    # @everyone, and the players see it through a role of their own.
    unseen = DEFAULT_MEMBER_PERMISSIONS & ~PERM_VIEW_CHANNEL
    hidden = sim.add_guild("hidden", bot_permissions=unseen)
    hidden.everyone.permissions = unseen
    players = sim.add_role(hidden, "players", permissions=DEFAULT_MEMBER_PERMISSIONS)
    lobby = sim.add_channel(hidden, "lobby")
    sim.add_member(hidden, s.alice, roles=[players])
    sim.add_member(hidden, s.bob, roles=[players])
    async with harness.running() as bot:
        board = await start_member_game(sim, lobby)
        await alice_moves_and_bob_runs_out(sim, harness, bot, board, 301)
    assert len(token_edits(sim, board)) == 1
    assert channel_route_calls(sim, lobby) == []
    assert sim.take_violations() == []


@both_front_doors
@both_engines
async def test_a_turn_longer_than_the_refresh_window_runs_out_through_the_latest_token(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The stored token is renewed at most every few minutes of play, but a 12-minute turn
    outlives a token kept from 4 minutes before its move: the move's own token, still valid
    when the turn runs out, must be the one kept."""
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    async with harness.running(turn_timeout=720) as bot:
        board = await start_member_game(sim, group)
        assert await bot.in_flight.wait_idle(patience=5)
        await idle(sim, harness, 240)
        # Then 961 s after the challenge's token was made (dead), 721 s after the move's.
        await alice_moves_and_bob_runs_out(sim, harness, bot, board, 721)
    assert len(token_edits(sim, board)) == 1
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


@both_front_doors
@both_engines
@pytest.mark.parametrize("next_command", ["ttt stats", "ttt move"])
async def test_a_timeout_with_no_token_left_is_shown_by_the_next_interaction_there(
    sim: DiscordSim, harness: BotHarness, next_command: str
) -> None:
    """Whatever comes next there: an answer (the game follows it), or a refusal (there is no
    game to move in any more: the game comes first, then the refusal)."""
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    # A turn longer than a token lives: when it runs out, no token can edit the board.
    async with harness.running(turn_timeout=1200) as bot:
        board = await start_member_game(sim, group)
        await sim.click(s.alice, board, cell_id(board, "B2"))
        # The click's token is saved.
        assert await bot.in_flight.wait_idle(patience=5)
        await idle(sim, harness, 1201)
        # The sweep itself, not a wake-up of the sweeper as well: the background one could
        # settle the game while this one found nothing, and note it unseen after the slash.
        await bot.sweep()
        assert is_live(board)  # nothing could show it
        options = {"cell": "A1"} if next_command == "ttt move" else {}
        shown = await sim.slash(s.alice, group, next_command, options=options)
        await sim.wait_for(lambda: shown.followups, 5)
        texts = [text_of(message) for message in [shown.message, *shown.followups] if message]
        assert sum("⭕ **bob** ran out of time: ❌ **alice** wins." in text for text in texts) == 1
        if next_command == "ttt move":
            assert any("There is no game in this channel" in text for text in texts)
        # Shown once: the next interaction does not show it again.
        again = await sim.slash(s.alice, group, "ttt stats")
    assert again.followups == []
    assert token_edits(sim, board) == []
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


async def lost_and_swept(
    sim: DiscordSim,
    harness: BotHarness,
    bot: TTTBot,
    channel: SimChannel,
    command: str,
    **options: object,
) -> None:
    """Alice's ``command`` in ``channel``: its answer is lost (``harness.last_try_after`` set
    to :data:`SHORT_WINDOW` before the bot started), and the sweeper comes by twice once its
    handler has surely given up on it."""
    with first_answers_lost(sim), pytest.raises(SimTimeout):
        await sim.slash(sim.seed.alice, channel, command, options=options, timeout=PAST_THE_WINDOW)
    assert await bot.in_flight.wait_idle(patience=5)
    await idle(sim, harness, UNSHOWN_GRACE + 1)
    await bot.sweep()
    await bot.sweep()


@both_front_doors
@both_engines
async def test_a_game_whose_board_never_showed_there_is_shown_by_the_next_interaction(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The answer that should have shown a new game is lost. In a channel of its own the
    sweeper posts the board; here it could only try the channel's routes and be refused at
    every sweep: the next interaction there shows the board instead, and it is played on."""
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        await lost_and_swept(sim, harness, bot, group, "ttt vs-ai", difficulty="random")
        stats = await sim.slash(s.alice, group, "ttt stats")
        (board,) = await stats.wait_followups()
        assert is_live(board)
        moved = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert moved.response_type == 7, moved.content
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.service.storage.live_game_in_channel(group.id)
    assert game is not None
    assert game.message_id == board.id
    assert len(game.moves) == 2  # B2, and the bot's answer
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


@both_front_doors
async def test_a_challenge_that_never_showed_there_is_shown_when_asked_again(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        await lost_and_swept(sim, harness, bot, group, "ttt start", opponent=s.bob)
        again = await sim.slash(s.alice, group, "ttt start", opponent=s.bob)
        assert again.message is not None
        accepted = await sim.click(
            s.bob, again.message, button_id(again.message, CHALLENGE_ID, action="accept")
        )
        assert accepted.message is not None
        assert is_live(accepted.message)
    assert channel_route_calls(sim, group) == []
    assert sim.take_violations() == []


@both_front_doors
async def test_outside_servers_a_game_is_shown_in_its_starters_language(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """No server, so no server language: the board reads as the member who started it does,
    whoever clicks after."""
    s = sim.seed
    s.alice.locale = "de"
    s.bob.locale = "ja"
    group = sim.group_dm("friends", s.alice, s.bob)
    sim.install_for_user(s.alice)
    async with harness.running():
        board = await start_member_game(sim, group)
        for user, cell in [(s.alice, "A1"), (s.bob, "B2")]:
            ix = await sim.click(user, board, cell_id(board, cell))
            assert ix.message is not None
            board = ix.message
    german = i18n.language("de")
    assert text_of(board).startswith(f"\n{german._('Tic-tac-toe')}\n")
    assert german._("Last move: {cell}.", cell="B2") in text_of(board)


@both_front_doors
@both_engines
async def test_a_server_that_never_added_the_bot(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    elsewhere = sim.add_guild("elsewhere", with_bot=False)
    lobby = sim.add_channel(elsewhere, "lobby")
    sim.add_member(elsewhere, s.alice)
    sim.add_member(elsewhere, s.bob)
    sim.install_for_user(s.alice)
    async with harness.running():
        board = await start_member_game(sim, lobby)
        await play_a_win_for_alice(sim, board)
        # The server's own record, not the one outside servers.
        here = text_of(await sim.slash(s.alice, lobby, "ttt stats"))
        board_again = await sim.slash(s.alice, lobby, "ttt leaderboard")
    assert "Against members: 1 W · 0 L · 0 D" in here
    assert f"🥇 <@{s.alice.id}>: **1311** ± 339* (1 W · 0 L · 0 D)" in text_of(board_again)
    assert channel_route_calls(sim, lobby) == []
    assert sim.take_violations() == []
