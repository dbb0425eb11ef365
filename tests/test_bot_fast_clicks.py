"""The hot path (bot/fast_clicks.py): plain cell and Rematch clicks answered from the gateway
payload, and every other click handed on to discord.py with what was already done, the move
played (or the rematch started) once.

The rest of the suite runs through it too: every plain click of every test is answered here.
These tests say which clicks are, and what happens to a click handed on part way.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
from collections.abc import Callable
from typing import Any

import pytest

from bot.client import TTTBot
from bot.components import CELL_ID, GAME_ACTION_ID
from bot.domain import Actor
from bot.fast_clicks import CellClick, RematchClick, board_click
from bot.service import Clicked, MoveResult, Started
from bot.storage.base import DatabaseUnavailableError
from tests.bot_harness import (
    HTTP,
    BotHarness,
    both_front_doors,
    button_id,
    cell_buttons,
    refused,
    shown_board,
    start_member_game,
    text_of,
)
from tests.bot_harness import cell_id as cell_button
from tests.discord_sim import DiscordSim, SimChannel, SimMessage, SimUser

CALLBACK = "POST /interactions/{id}/{token}/callback"
MEMBER_ROUTE = "GET /guilds/{guild_id}/members/{user_id}"
# The bot's deferral deadline in the tests of slow answers: they wait past it. Long enough
# that the plain clicks of their set-up, on a busy machine, are still answered at once.
SHORT_DEFER = 0.5
JSON = dict[str, Any]


def callbacks(sim: DiscordSim) -> list[str | None]:
    """The fault each interaction callback met, in order (None: none)."""
    return [call.fault for call in sim.requests if call.path.endswith("/callback")]


def count_moves(bot: TTTBot, *, delay: float = 0.0, slow_in: int | None = None) -> list[int]:
    """Count the service's moves on boards (one entry per call), each ``delay`` s late (only
    in channel ``slow_in``, if given)."""
    calls: list[int] = []
    move = bot.service.move_on_board

    async def counted(
        game_id: int, user: Actor, cell: int, clicked: Clicked, ply: int | None
    ) -> MoveResult:
        calls.append(cell)
        if slow_in in (None, clicked.channel_id):
            await asyncio.sleep(delay)
        return await move(game_id, user, cell, clicked, ply)

    bot.service.move_on_board = counted  # type: ignore[method-assign]
    return calls


def count_rematches(bot: TTTBot, *, delay: float = 0.0, slow_in: int | None = None) -> list[int]:
    """Count the service's rematches (the game each rematches), each ``delay`` s late (only
    in channel ``slow_in``, if given)."""
    calls: list[int] = []
    rematch = bot.service.rematch

    async def counted(game_id: int, user: Actor, clicked: Clicked) -> Started:
        calls.append(game_id)
        if slow_in in (None, clicked.channel_id):
            await asyncio.sleep(delay)
        return await rematch(game_id, user, clicked)

    bot.service.rematch = counted  # type: ignore[method-assign]
    return calls


async def finished_member_board(sim: DiscordSim, channel: SimChannel | None = None) -> SimMessage:
    """A game between alice and bob that alice resigned: its board, with Rematch on it."""
    board = await start_member_game(sim, channel=channel)
    resign = button_id(board, GAME_ACTION_ID, action="resign")
    assert (await sim.click(sim.seed.alice, board, resign)).response_type == 7
    return sim.message(board.id)


def rematch_button(board: SimMessage) -> str:
    return button_id(board, GAME_ACTION_ID, action="rematch")


def as_shown(message: SimMessage) -> str:
    """What a board message shows, its game's number replaced by N: two games' boards alike
    show the same."""
    number = CELL_ID.parse(cell_buttons(message)[0]["custom_id"])
    assert number is not None
    seen = (message.content, message.embeds, message.components, message.allowed_mentions)
    as_sent = json.dumps(seen, sort_keys=True, ensure_ascii=False)  # keys in any order
    ids = re.sub(rf"(ttt:[a-z]+):{number['game']}\b", r"\1:N", as_sent)
    return re.sub(rf"#{number['game']}\b", "#N", ids)


@both_front_doors
async def test_a_plain_click_is_answered_from_its_payload(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        moves = count_moves(bot)
        ix = await sim.click(s.alice, board, cell_button(board, "B2"))
        assert ix.response_type == 7
        assert ix.message is not None
        assert shown_board(ix.message) == ".../.X./..."
        assert "bob" in text_of(ix.message)
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == 1
        assert moves == [4]
        # Without asking Discord to send the message back, unlike discord.py's answers.
        (answer,) = [call for call in sim.requests if call.path.endswith("/callback")][-1:]
        assert answer.status == 204
    assert sim.take_violations() == []


@both_front_doors
async def test_a_database_outage_after_the_answer_is_a_warning_not_an_error(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The click is answered, and the database then fails to record the clicked message as
    the game's board: an outage, not a bug of the bot's, logged as the slow path logs one
    (a WARNING line), and the board goes on taking clicks."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        fields = CELL_ID.parse(cell_buttons(board)[0]["custom_id"])
        assert fields is not None
        game_id = int(fields["game"])
        # As if the clicked message's id had never been saved: the click adopts it.
        assert await bot.in_flight.wait_idle(patience=5)  # the start's own adoption
        await bot.storage.set_game_message(game_id, board.id + 1)
        bot.service.drop_copies(lambda game: game.id == game_id)  # read it as stored
        recording = bot.storage.set_game_message

        async def down(game_id: int, message_id: int, *, as_of: int | None = None) -> int | None:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        bot.storage.set_game_message = down  # type: ignore[method-assign]
        try:
            ix = await sim.click(s.alice, board, cell_button(board, "B2"))
            assert await bot.in_flight.wait_idle(patience=5)
        finally:
            bot.storage.set_game_message = recording  # type: ignore[method-assign]
        assert ix.response_type == 7
        assert bot.fast_clicks.answered == 1
        after = await sim.click(s.bob, sim.message(board.id), cell_button(board, "A1"))
        assert after.message is not None
        assert shown_board(after.message) == "O../.X./..."
    failures = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert failures == [], [r.getMessage() for r in failures]
    assert f"could not make message {board.id} the board of game {game_id}" in caplog.text


# By board size: moves alternating alice (X) and bob (O) to a win of X's, and X's line.
GAMES = {
    3: (["B2", "A1", "B1", "A3", "B3"], "B1 B2 B3"),
    4: (["A1", "A2", "B1", "B2", "C1", "C2", "D1"], "A1 B1 C1 D1"),
    5: (["A1", "A2", "B1", "B2", "C1", "C2", "D1"], "A1 B1 C1 D1"),
}


@both_front_doors
@pytest.mark.parametrize("size", sorted(GAMES))
@pytest.mark.parametrize("won", [False, True], ids=["a live board", "a won board"])
async def test_its_answer_is_the_one_discord_py_sends(
    sim: DiscordSim, harness: BotHarness, size: int, won: bool
) -> None:
    """The same moves on two boards alike, the last answered here and (its move slow enough
    to be deferred) by discord.py's edit of the clicked message: the same message, but for
    the game's number. On every board size: 3x3 and 4x4 boards are classic messages, 5x5
    ones components-v2."""
    s = sim.seed
    game, line = GAMES[size]
    moves = game if won else game[:1]
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        fast = await start_member_game(sim, size=size)
        handed = await start_member_game(sim, channel=s.other_channel, size=size)
        for turn, cell in enumerate(moves):
            player = s.alice if turn % 2 == 0 else s.bob
            if turn == len(moves) - 1:
                count_moves(bot, delay=SHORT_DEFER + 0.3, slow_in=s.other_channel.id)
            on_fast, on_handed = sim.message(fast.id), sim.message(handed.id)
            answered = await sim.click(player, on_fast, cell_button(on_fast, cell))
            deferred = await sim.click(player, on_handed, cell_button(on_handed, cell))
        await deferred.wait_done(timeout=5)
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == 2 * len(moves) - 1
    assert (answered.response_type, deferred.response_type) == (7, 6)
    assert answered.message is not None
    assert (f"alice** wins with {line}!" in text_of(answered.message)) is won
    assert as_shown(answered.message) == as_shown(sim.message(handed.id))


async def test_a_404_other_than_unknown_interaction_is_a_refusal_discord_py_answers(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Only Discord's code 10062 says an interaction is gone: any other 404 on the answer is
    a refusal, and the click is answered again by discord.py, its move played once."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        moves = count_moves(bot)
        sim.faults.add(CALLBACK, status=404, count=1)
        ix = await sim.click(s.alice, board, cell_button(board, "B2"))
        assert ix.response_type == 7
        assert ix.message is not None
        assert shown_board(ix.message) == ".../.X./..."
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == 0
        assert moves == [4]
    assert callbacks(sim)[-2:] == ["status", None]
    assert sim.take_violations() == []


@both_front_doors
async def test_a_refused_click_is_answered_by_discord_py_the_move_tried_once(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        moves = count_moves(bot)
        ix = await sim.click(s.bob, board, cell_button(board, "B2"))  # alice's turn
        refused(ix, "It is not your turn: waiting for alice.")
        assert await bot.in_flight.wait_idle(patience=5)
        assert moves == [4]
        assert bot.fast_clicks.answered == 0


@both_front_doors
async def test_a_slow_move_is_handed_on_and_deferred_in_time(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        board = await start_member_game(sim)
        moves = count_moves(bot, delay=SHORT_DEFER + 0.3)
        ix = await sim.click(s.alice, board, cell_button(board, "B2"))
        assert ix.response_type == 6  # deferred, then the message edited
        await sim.wait_for(lambda: shown_board(sim.message(board.id)) == ".../.X./...")
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == 0
        assert moves == [4]  # played once, though handed on part way
    assert sim.take_violations() == []


async def test_an_answer_dropped_after_discord_applied_it_is_not_sent_twice(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The connection drops after Discord took the answer: sent again, Discord refuses it as
    already answered (40060), which says the first one arrived; the move is played and shown
    once."""
    s = sim.seed
    async with harness.running() as bot:
        board = await start_member_game(sim)
        moves = count_moves(bot)
        sim.faults.add(CALLBACK, reset="after")
        ix = await sim.click(s.alice, board, cell_button(board, "B2"))
        assert ix.response_type == 7
        assert await bot.in_flight.wait_idle(patience=5)
        assert shown_board(sim.message(board.id)) == ".../.X./..."
        assert moves == [4]
        assert bot.fast_clicks.answered == 1
        nxt = await sim.click(s.bob, sim.message(board.id), cell_button(board, "A1"))
        assert nxt.response_type == 7
    answers = [call for call in sim.requests if call.path.endswith("/callback")][-3:]
    assert [(call.fault, call.status) for call in answers] == [
        ("reset-after", 204),  # applied, and the connection dropped
        (None, 400),  # "already acknowledged"
        (None, 204),  # bob's move
    ]
    assert sim.take_violations() == []


# -- rematches ------------------------------------------------------------------------------


@both_front_doors
async def test_a_rematch_is_answered_from_its_payload(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await finished_member_board(sim)
        rematches = count_rematches(bot)
        before = bot.fast_clicks.answered
        ix = await sim.click(s.bob, board, rematch_button(board))
        assert ix.response_type == 4
        assert ix.message is not None
        assert not ix.ephemeral
        assert "❌ **bob** vs ⭕ **alice**" in text_of(ix.message)
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == before + 1
        assert len(rematches) == 1
        # Asked for the message, to make it the new game's board: with the callback over the
        # gateway, after the response over HTTP.
        (answer,) = [call for call in sim.requests if call.path.endswith("/callback")][-1:]
        if harness.front_door == HTTP:
            assert answer.http_response
            (asked,) = [call for call in sim.requests if call.path.endswith("/@original")][-1:]
            assert (asked.method, asked.status) == ("GET", 200)
            assert asked.path.split("/")[3] == ix.token
        else:
            assert answer.status == 200
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == ix.message.id
        played = await sim.click(s.bob, ix.message, cell_button(ix.message, "B2"))
        assert played.response_type == 7
        assert shown_board(sim.message(ix.message.id)) == ".../.X./..."
    assert sim.take_violations() == []


@both_front_doors
async def test_a_rematch_asks_about_the_opponent_only_where_the_server_has_player_roles(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Without player roles a Rematch costs what it did: no request to Discord before its
    answer. With them, the opponent's roles are asked for (the payload carries only the
    clicker's), and the click is still answered here."""
    s = sim.seed
    players = sim.add_role(s.guild, "players")
    for user in (s.alice, s.bob):
        s.guild.member(user).roles.append(players)  # type: ignore[union-attr]

    def asked() -> list[str]:
        return [call.path for call in sim.requests if call.route == MEMBER_ROUTE]

    async with harness.running() as bot:
        board = await finished_member_board(sim)
        before = bot.fast_clicks.answered
        again = await sim.click(s.bob, board, rematch_button(board))
        assert again.message is not None, again.content
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == before + 1
        assert asked() == []
        await sim.slash(s.owner, s.channel, "ttt-settings players add", role=players)
        resign = button_id(again.message, GAME_ACTION_ID, action="resign")
        assert (await sim.click(s.alice, again.message, resign)).response_type == 7
        third = await sim.click(s.bob, again.message, rematch_button(again.message))
        assert third.message is not None, third.content
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == before + 2  # a Resign is not answered here
        assert asked() == [f"/guilds/{s.guild.id}/members/{s.alice.id}"]


@both_front_doors
async def test_a_rematch_answered_here_is_the_one_discord_py_sends(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Two finished games alike, each rematched: one answered here, the other (started slowly
    enough to be deferred) by discord.py's follow-up."""
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        fast = await finished_member_board(sim)
        handed = await finished_member_board(sim, channel=s.other_channel)
        rematches = count_rematches(bot, delay=SHORT_DEFER + 0.3, slow_in=s.other_channel.id)
        before = bot.fast_clicks.answered
        answered = await sim.click(s.bob, fast, rematch_button(fast))
        deferred = await sim.click(s.bob, handed, rematch_button(handed))
        (followed,) = await deferred.wait_followups(timeout=5)
        assert await bot.in_flight.wait_idle(patience=5)
        assert bot.fast_clicks.answered == before + 1
        assert len(rematches) == 2  # each started once
    assert (answered.response_type, deferred.response_type) == (4, 6)
    assert answered.message is not None
    assert as_shown(answered.message) == as_shown(followed)
    assert sim.take_violations() == []


@both_front_doors
async def test_a_refused_rematch_is_answered_by_discord_py(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await finished_member_board(sim)
        rematches = count_rematches(bot)
        before = bot.fast_clicks.answered
        ix = await sim.click(s.carol, board, rematch_button(board))
        refused(ix, "Only the players of this game can start a rematch.")
        assert await bot.in_flight.wait_idle(patience=5)
        assert len(rematches) == 1
        assert bot.fast_clicks.answered == before
        assert await bot.service.storage.live_game_in_channel(s.channel.id) is None


@both_front_doors
async def test_a_slow_rematch_is_handed_on_and_deferred_in_time(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    harness.defer_after = SHORT_DEFER
    async with harness.running() as bot:
        board = await finished_member_board(sim)
        rematches = count_rematches(bot, delay=SHORT_DEFER + 0.3)
        ix = await sim.click(s.bob, board, rematch_button(board))
        assert ix.response_type == 6  # deferred, then the board posted as a follow-up
        assert await bot.in_flight.wait_idle(patience=5)
        assert len(rematches) == 1
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id is not None
        assert "❌ **bob** vs ⭕ **alice**" in text_of(sim.message(game.message_id))
    assert sim.take_violations() == []


async def test_a_rematch_dropped_after_discord_showed_it_is_not_posted_twice(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The connection drops after Discord posted the new board: sent again, Discord refuses it
    as already answered (40060), and the message it shows, asked for, becomes the board."""
    s = sim.seed
    async with harness.running() as bot:
        board = await finished_member_board(sim)
        rematches = count_rematches(bot)
        sim.faults.add(CALLBACK, reset="after")
        ix = await sim.click(s.bob, board, rematch_button(board))
        assert ix.response_type == 4
        assert ix.message is not None
        assert await bot.in_flight.wait_idle(patience=5)
        assert len(rematches) == 1
        boards = [m for m in sim.messages(s.channel) if "❌ **bob** vs ⭕ **alice**" in text_of(m)]
        assert boards == [ix.message]  # not posted a second time
        game = await bot.service.storage.live_game_in_channel(s.channel.id)
        assert game is not None
        assert game.message_id == ix.message.id
    assert callbacks(sim)[-2:] == ["reset-after", None]  # sent again, refused with 40060
    assert sim.take_violations() == []


# -- which payloads are answered here ------------------------------------------------------


async def clicked_payload(sim: DiscordSim, harness: BotHarness, user: SimUser) -> JSON:
    """The INTERACTION_CREATE payload of a click by ``user`` on B2 of a fresh member game."""
    async with harness.running():
        board = await start_member_game(sim)
        ix = await sim.click(user, board, cell_button(board, "B2"))
    return copy.deepcopy(ix.payload)


def _thread_without_thread_rights(data: JSON) -> None:
    data["channel"]["type"] = 11
    data["app_permissions"] = str(int(data["app_permissions"]) & ~(1 << 38))


def _resign_instead(data: JSON) -> None:
    fields = CELL_ID.parse(data["data"]["custom_id"])
    assert fields is not None
    data["data"]["custom_id"] = GAME_ACTION_ID.build(action="resign", game=fields["game"])


TAMPERS: dict[str, Callable[[JSON], object]] = {
    "a command": lambda data: data.update(type=2),
    "a select menu": lambda data: data["data"].update(component_type=3),
    "in a DM": lambda data: data.update(context=1),
    "in a server the app is only installed by the user in": lambda data: data.update(
        authorizing_integration_owners={"1": data["member"]["user"]["id"]}
    ),
    "in a channel the bot cannot write in": lambda data: data.update(
        app_permissions=str(int(data["app_permissions"]) & ~(1 << 11))
    ),
    "in a thread the bot cannot write in": _thread_without_thread_rights,
    "on another game's board": lambda data: data["data"].update(
        custom_id=data["data"]["custom_id"].replace(":cell:", ":cell:9")
    ),
    "a button the message does not have": lambda data: data["message"].update(components=[]),
    "a board drawn before buttons named their ply": lambda data: data["data"].update(
        custom_id="ttt:cell:1:4"
    ),
    "on a message without a board's footer (a components-v2 board)": lambda data: data[
        "message"
    ].update(embeds=[]),
    "Resign, a button the board has": _resign_instead,
    "without a member": lambda data: data.pop("member"),
    "with a message that is no object": lambda data: data.update(message="x"),
}


async def test_a_plain_click_payload_is_read_as_the_click(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    data = await clicked_payload(sim, harness, s.alice)
    click = board_click(data)
    assert isinstance(click, CellClick)
    assert (click.ply, click.cell) == (0, 4)
    assert click.user == Actor(s.alice.id, "alice")
    assert click.clicked == Clicked(s.channel.id, int(data["message"]["id"]))
    assert click.interaction_id == int(data["id"])
    data["member"]["nick"] = "Al"
    assert board_click(data) == CellClick(
        interaction_id=click.interaction_id,
        token=click.token,
        game_id=click.game_id,
        user=Actor(s.alice.id, "Al"),
        clicked=click.clicked,
        ply=click.ply,
        cell=click.cell,
    )


async def test_a_rematch_payload_is_read_as_the_click_and_other_actions_are_not(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await finished_member_board(sim)
        ix = await sim.click(s.bob, board, rematch_button(board))
    data = copy.deepcopy(ix.payload)
    fields = GAME_ACTION_ID.parse(rematch_button(board))
    assert fields is not None
    assert board_click(data) == RematchClick(
        interaction_id=ix.id,
        token=ix.token,
        game_id=int(fields["game"]),
        user=Actor(s.bob.id, "bob"),
        clicked=Clicked(s.channel.id, board.id),
    )
    data["data"]["custom_id"] = button_id(board, GAME_ACTION_ID, action="review")
    assert board_click(data) is None


@pytest.mark.parametrize("tamper", TAMPERS.values(), ids=TAMPERS.keys())
async def test_other_payloads_are_left_to_discord_py(
    sim: DiscordSim, harness: BotHarness, tamper: Callable[[JSON], object]
) -> None:
    data = await clicked_payload(sim, harness, sim.seed.alice)
    assert board_click(data) is not None
    tamper(data)
    assert board_click(data) is None
