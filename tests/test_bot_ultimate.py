"""Ultimate tic-tac-toe end to end, through the local Discord server: one components-v2 message
a game, its buttons the nine cells of the small board to play in, or first the open small boards
when the player may choose; typed moves with autocomplete of the legal cells only; challenges,
rematches, stats and leaderboards kept apart from the square boards; and every hand-made or
stale click refused with a sentence, changing nothing.

The position a message shows is checked against the stored game (its moves), which the test
reads from the bot's storage: a won small board is drawn as one big mark, so the grid alone
does not say every cell."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import re
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pytest

from bot import i18n, render
from bot.client import TTTBot
from bot.components import (
    CELL_ID,
    CHALLENGE_ID,
    GAME_ACTION_ID,
    PICK_ID,
    PRACTISE_ID,
    TOURNAMENT_ID,
)
from bot.render import EMPTY_EMOJI, MARK_EMOJI, ROW_EMOJI, WINNING_EMOJI
from bot.render.ultimate import IDLE_EMOJI
from bot.service import GameService, UltimateReview
from bot.storage.base import GameRecord, GameStatus
from bot.thinking import WORKER_NICENESS, EngineWorkers, ultimate_move
from game import Mark, UltimateBoard, cell_name
from game.budget import SearchBudget
from game.ultimate import small_board_cells, small_board_of
from game.ultimate_review import review_ultimate_game
from game.variants import ULTIMATE_SIZE
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    final_answer,
    is_live,
    refused,
    refused_showing_the_game,
    text_of,
)
from tests.discord_sim import DiscordSim, SimMessage, SimUser
from tests.discord_sim.models import FLAG_COMPONENTS_V2, message_text, walk_components

ULTIMATE = ULTIMATE_SIZE
COMPONENT_LIMIT = 40
TEXT_LIMIT = 4000
CHANGED = "The board changed while you were moving"


def cells_offered(message: SimMessage) -> list[int]:
    """The cells the message's cell buttons name, in order."""
    return [
        int(fields["cell"])
        for button in message.buttons()
        if (fields := CELL_ID.parse(button["custom_id"])) is not None
    ]


def boards_offered(message: SimMessage) -> dict[int, bool]:
    """The small boards the message's pick buttons name, each with whether it can be clicked."""
    return {
        int(fields["board"]): not button["disabled"]
        for button in message.buttons()
        if (fields := PICK_ID.parse(button["custom_id"])) is not None and fields["board"] != "all"
    }


def pick_id(message: SimMessage, board: int | str) -> str:
    return button_id(message, PICK_ID, board=str(board))


def cell_button(message: SimMessage, cell: int) -> str:
    return button_id(message, CELL_ID, cell=str(cell))


def grid_rows(message: SimMessage) -> list[list[str]]:
    """The 81 cells of the text grid, as emoji, row by row."""
    rows = []
    for line in text_of(message).splitlines():
        first, _, rest = line.partition(" ")
        if first in ROW_EMOJI:
            rows.append([part for part in rest.split(" ") if part != "┃"])
    assert len(rows) == 9, rows
    assert all(len(row) == 9 for row in rows), rows
    return rows


async def stored(bot: TTTBot, message: SimMessage) -> GameRecord:
    """The game the board message shows, as stored."""
    game = await bot.storage.live_game_in_channel(message.channel.id)
    if game is None:
        game = await bot.storage.finished_game_in_channel(message.channel.id, None)
    assert game is not None
    return game


def ultimate(game: GameRecord) -> UltimateBoard:
    board = game.board
    assert isinstance(board, UltimateBoard)
    return board


def check_message(message: SimMessage, board: UltimateBoard) -> None:
    """The board message is one components-v2 message within Discord's limits, whose grid and
    buttons agree with ``board``: every mark where it was played (in a small board nobody won),
    white cells exactly where the player to move may play, and buttons for exactly the cells
    of the board to play in (or the open boards to pick from)."""
    assert message.flags & FLAG_COMPONENTS_V2
    assert (message.content, message.embeds) == ("", [])
    assert sum(1 for _ in message.iter_components()) <= COMPONENT_LIMIT
    assert len(text_of(message)) <= TEXT_LIMIT
    rows = grid_rows(message)
    forced = board.forced_board
    for cell in range(81):
        shown = rows[cell // 9][cell % 9]
        small = small_board_of(cell)
        won_by = board.small_winner(small)
        if won_by is not None:
            # One big mark: an X across the corners and the centre, an O around the centre,
            # in the winning look on a small board of the line that won the game.
            local = cell // 9 % 3 * 3 + cell % 9 % 3
            marked = local in ({0, 2, 4, 6, 8} if won_by is Mark.X else {0, 1, 2, 3, 5, 6, 7, 8})
            big = WINNING_EMOJI if small in (board.winning_line or ()) else MARK_EMOJI
            assert shown == (big[won_by] if marked else IDLE_EMOJI), cell_name(cell, 9)
            continue
        mark = board[cell]
        if mark is not None:
            assert shown == MARK_EMOJI[mark], cell_name(cell, 9)
        else:
            playable = not board.is_over and (
                small == forced if forced is not None else not board.small_is_closed(small)
            )
            assert shown == (EMPTY_EMOJI if playable else IDLE_EMOJI), cell_name(cell, 9)
    if board.is_over:
        assert cells_offered(message) == []
        assert boards_offered(message) == {}
    elif forced is not None:
        assert cells_offered(message) == list(small_board_cells(forced))
        assert boards_offered(message) == {}
    else:
        assert cells_offered(message) == []
        assert boards_offered(message) == {
            small: not board.small_is_closed(small) for small in range(9)
        }


async def play_one_move(sim: DiscordSim, bot: TTTBot, user: SimUser, message: SimMessage) -> int:
    """Play the first legal cell through the buttons, picking its small board first when the
    player may choose; returns the cell."""
    board = ultimate(await stored(bot, message))
    cell = board.legal_moves[0]
    if board.forced_board is None:
        small = small_board_of(cell)
        picked = await sim.click(user, message, pick_id(message, small))
        assert picked.response_type == 7, picked.content
        assert cells_offered(message) == list(small_board_cells(small))
        assert f"{cell_name(small_board_cells(small)[0], 9)}" in text_of(message)
        assert "is picked" in text_of(message)
    clicked = await sim.click(user, message, cell_button(message, cell))
    # The bot's answer from a worker process may come after the deferral deadline.
    assert clicked.response_type in (6, 7), clicked.content
    assert await final_answer(clicked) is message
    assert await bot.in_flight.wait_idle(patience=10)
    return cell


# -- a whole game against the bot ----------------------------------------------------------------


@both_front_doors
@both_engines
async def test_a_whole_game_against_the_bot_through_the_buttons(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", size=ULTIMATE)
        assert ix.response_type == 4
        message = ix.message
        assert message is not None
        assert "Ultimate tic-tac-toe" in text_of(message)
        check_message(message, UltimateBoard())
        assert "Any open small board may be played: pick one below." in text_of(message)
        picks = 0
        while True:
            game = await stored(bot, message)
            board = ultimate(game)
            check_message(message, board)
            if not game.is_active:
                break
            picks += board.forced_board is None
            cell = await play_one_move(sim, bot, s.alice, message)
            after = ultimate(await stored(bot, message))
            assert after.moves[: len(board.moves) + 1] == (*board.moves, cell)
            # The bot answered, unless the move ended the game.
            answered = len(after.moves) - len(board.moves) - 1
            assert answered == (0 if UltimateBoard.from_moves(after.moves[:-1]).is_over else 1)
        assert picks >= 1  # the first move at least, on the empty board
        assert game.status is GameStatus.FINISHED
        text = text_of(message)
        if board.winner is None:
            assert "🤝 It's a draw." in text
        else:
            assert "wins three small boards in a row!" in text
        assert [b["custom_id"] for b in message.buttons()] == [
            GAME_ACTION_ID.build(action=action, game=game.id) for action in ("rematch", "review")
        ]
        rematch = await sim.click(
            s.alice, message, GAME_ACTION_ID.build(action="rematch", game=game.id)
        )
        assert rematch.message is not None
        again = await stored(bot, rematch.message)
        assert (again.size, again.ai_mark, len(again.moves)) == (ULTIMATE, Mark.X, 1)
        check_message(rematch.message, ultimate(again))
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=ULTIMATE))
        on_3x3 = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=3))
    assert "(ultimate)" in stats
    assert "Against the bot (random): " in stats
    assert "No finished games yet in this server on 3\N{MULTIPLICATION SIGN}3 boards." in on_3x3


@both_front_doors
async def test_the_strongest_level_answers_from_a_worker_process(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        ix = await sim.slash(
            s.alice, s.channel, "ttt vs-ai", difficulty="minimax", first="bot", size=ULTIMATE
        )
        message = await final_answer(ix)
        assert await bot.in_flight.wait_idle(patience=10)
        game = await stored(bot, message)
        assert (game.ai_mark, len(game.moves)) == (Mark.X, 1)
        await play_one_move(sim, bot, s.alice, message)
        game = await stored(bot, message)
        assert len(game.moves) == 3
        check_message(message, ultimate(game))
        assert "🤖 I played" in text_of(message)
        assert bot.service.engine_workers.started


# -- the two steps, and what they refuse ---------------------------------------------------------


@both_front_doors
async def test_picking_a_board_shows_its_cells_and_the_way_back_shows_the_boards(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        picked = await sim.click(s.alice, message, pick_id(message, 8))
        assert picked.response_type == 7
        assert cells_offered(message) == list(small_board_cells(8))
        assert "G7\N{EN DASH}I9 is picked" in text_of(message)
        back = await sim.click(s.alice, message, pick_id(message, "all"))
        assert back.response_type == 7
        assert boards_offered(message) == dict.fromkeys(range(9), True)
        assert (await stored(bot, message)).moves == ()  # choosing stores nothing
        # Bob may watch, not choose; nor may anyone who does not play.
        refused(await sim.click(s.bob, message, pick_id(message, 4)), "It is not your turn")
        refused(await sim.click(s.carol, message, pick_id(message, 4)), "You are not playing")
        await sim.click(s.alice, message, pick_id(message, 4))
        await sim.click(s.alice, message, cell_button(message, 30))  # D4, the centre's first
        assert (await stored(bot, message)).moves == (30,)


async def challenge_and_accept(sim: DiscordSim, x: SimUser, o: SimUser) -> SimMessage:
    s = sim.seed
    challenge = await sim.slash(x, s.channel, "ttt start", opponent=o, size=ULTIMATE)
    message = challenge.message
    assert message is not None
    assert message.flags & FLAG_COMPONENTS_V2
    assert "challenges you to tic-tac-toe, ultimate version (nine small boards)!" in text_of(
        message
    )
    accepted = await sim.click(o, message, button_id(message, CHALLENGE_ID, action="accept"))
    assert accepted.response_type == 7
    check_message(message, UltimateBoard())
    return message


def moves_until_a_closed_board_and_a_free_choice() -> tuple[int, ...]:
    """Moves after which a small board is won and the player to move may play anywhere: the
    first such position of seeded random games."""
    rng = random.Random(7)
    while True:
        board = UltimateBoard()
        while not board.is_over:
            board = board.play(rng.choice(board.legal_moves))
            won = [small for small in range(9) if board.small_winner(small) is not None]
            if won and board.forced_board is None and not board.is_over:
                return board.moves


async def play_typed(
    sim: DiscordSim, players: tuple[SimUser, SimUser], moves: tuple[int, ...]
) -> None:
    for number, cell in enumerate(moves):
        ix = await sim.slash(
            players[number % 2], sim.seed.channel, "ttt move", cell=cell_name(cell, ULTIMATE)
        )
        assert ix.response_type == 4, ix.content
        assert not ix.ephemeral, ix.content


FORGED: dict[str, tuple[Callable[[int], str], str]] = {
    # A cell outside the small board the player was sent to (E5 sent O to the centre).
    "outside": (
        lambda game: CELL_ID.build(game=game, ply=1, cell=0),
        "A1 is not in the small board you were sent to: play in the one from D4 to F6.",
    ),
    # A small board picked while the player was sent to one.
    "sent": (
        lambda game: PICK_ID.build(game=game, ply=1, board=0),
        "You were sent to the small board from D4 to F6: play there.",
    ),
    # Two-step clicks drawn before the last move.
    "stale pick": (lambda game: PICK_ID.build(game=game, ply=0, board=0), CHANGED),
    "stale cell": (lambda game: CELL_ID.build(game=game, ply=0, cell=41), CHANGED),
}


@both_front_doors
@pytest.mark.parametrize("kind", list(FORGED))
async def test_hand_made_and_stale_clicks_are_refused_and_change_nothing(
    sim: DiscordSim, harness: BotHarness, kind: str
) -> None:
    s = sim.seed
    build, sentence = FORGED[kind]
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        await sim.click(s.alice, message, pick_id(message, 4))
        await sim.click(s.alice, message, cell_button(message, 40))  # E5: O goes to the centre
        assert await bot.in_flight.wait_idle(patience=5)  # the board's id is saved after
        game = await stored(bot, message)
        clicked = await sim.click(s.bob, message, build(game.id), forged=True)
        if kind.startswith("stale"):  # drawn behind the game: redrawn as it is, and told why
            await refused_showing_the_game(clicked, sentence)
        else:
            refused(clicked, sentence)
        assert (await stored(bot, message)).moves == (40,)
        check_message(message, ultimate(game))


@both_front_doors
async def test_a_closed_board_cannot_be_picked_nor_played_in(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    moves = moves_until_a_closed_board_and_a_free_choice()
    board = UltimateBoard.from_moves(moves)
    won = next(small for small in range(9) if board.small_winner(small) is not None)
    winner = board.small_winner(won)
    assert winner is not None
    free = next(cell for cell in small_board_cells(won) if board[cell] is None)
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        await play_typed(sim, (s.alice, s.bob), moves)
        shown = await sim.slash(s.carol, s.channel, "ttt board")
        assert shown.message is not None
        message = shown.message
        game = await stored(bot, message)
        assert game.moves == moves
        check_message(message, board)
        assert boards_offered(message)[won] is False
        player = (s.alice, s.bob)[len(moves) % 2]
        pick = PICK_ID.build(game=game.id, ply=len(moves), board=won)
        refused(
            await sim.click(player, message, pick, forged=True),
            "That small board is closed: pick one that is still open.",
        )
        cell = CELL_ID.build(game=game.id, ply=len(moves), cell=free)
        refused(
            await sim.click(player, message, cell, forged=True),
            f"{cell_name(free, ULTIMATE)} is in a small board {winner.value} has won: play in one "
            "that is still open.",
        )
        typed = await sim.slash(player, s.channel, "ttt move", cell=cell_name(free, ULTIMATE))
        refused(typed, f"{cell_name(free, ULTIMATE)} is in a small board {winner.value} has won")
        assert (await stored(bot, message)).moves == moves


@both_front_doors
@both_engines
@pytest.mark.parametrize("meanwhile", ["resigned", "posted again"])
async def test_a_pick_answered_after_a_change_it_did_not_read_shows_the_change(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch, meanwhile: str
) -> None:
    """A pick reads the game, then draws the board with the small board picked. Bob's
    resignation (or a /ttt board) saved between the two had its edit land first, and the
    pick's answer drew over it: a live board with the picked cells on a game that was over
    (no Rematch), or on the board retired for a newer one. The pick is held here between its
    read and its answer; once shown, the board clicked shows the game as stored."""
    s = sim.seed
    read, release = asyncio.Event(), asyncio.Event()
    pick = GameService.pick_on_board

    async def held(service: GameService, *args: Any, **kwargs: Any) -> GameRecord:
        game = await pick(service, *args, **kwargs)
        read.set()
        await release.wait()
        return game

    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        assert await bot.in_flight.wait_idle(patience=5)  # the board's id is saved after
        monkeypatch.setattr(GameService, "pick_on_board", held)
        picking = asyncio.create_task(sim.click(s.alice, message, pick_id(message, 4)))
        await read.wait()
        newer: SimMessage | None = None
        if meanwhile == "resigned":
            resign = button_id(message, GAME_ACTION_ID, action="resign")
            assert (await sim.click(s.bob, message, resign)).response_type == 7
        else:
            newer = (await sim.slash(s.carol, s.channel, "ttt board")).message
            assert newer is not None
            await sim.wait_for(lambda: not is_live(message), what="the clicked board retired")
        release.set()
        assert (await picking).response_type == 7
        assert await bot.in_flight.wait_idle(patience=5)
        game = await stored(bot, newer or message)
        if newer is None:
            assert game.status is GameStatus.FINISHED
            assert (cells_offered(message), boards_offered(message)) == ([], {})
            assert not is_live(message)
            assert button_id(message, GAME_ACTION_ID, action="rematch")
        else:
            assert game.is_active
            assert game.message_id == newer.id
            assert "This board moved to a newer message below." in text_of(message)
            assert (cells_offered(message), boards_offered(message)) == ([], {})
            check_message(newer, ultimate(game))


@both_front_doors
async def test_a_pick_read_before_its_board_was_recorded_keeps_the_pick(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The accept's board is recorded as the game's after its answer: a pick read before
    that and answered after sees the game's board changed to the one it was clicked on, which
    is no change to show, and the small board picked stays on the message."""
    s = sim.seed
    read, release = asyncio.Event(), asyncio.Event()
    pick = GameService.pick_on_board

    async def held(service: GameService, *args: Any, **kwargs: Any) -> GameRecord:
        game = await pick(service, *args, **kwargs)
        assert game.message_id is None  # read before the accept's board was recorded
        read.set()
        await release.wait()
        return game

    async with harness.running() as bot:
        recording, reached, recorded = bot.storage.set_game_message, asyncio.Event(), False

        async def after_the_pick(*args: Any, **kwargs: Any) -> int | None:
            nonlocal recorded
            reached.set()
            await read.wait()
            previous = await recording(*args, **kwargs)
            recorded = True
            release.set()
            return previous

        monkeypatch.setattr(bot.storage, "set_game_message", after_the_pick)
        monkeypatch.setattr(GameService, "pick_on_board", held)
        message = await challenge_and_accept(sim, s.alice, s.bob)
        await asyncio.wait_for(reached.wait(), 5)
        picked = await sim.click(s.alice, message, pick_id(message, 4))
        assert picked.response_type == 7
        assert await bot.in_flight.wait_idle(patience=5)
        assert recorded
        assert (await stored(bot, message)).message_id == message.id
        assert cells_offered(message) == list(small_board_cells(4))


@both_front_doors
async def test_typed_moves_and_their_autocomplete_offer_legal_cells_only(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        first = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="")
        assert len(first) == 25  # Discord's most; 81 cells are legal
        await play_typed(sim, (s.alice, s.bob), (40,))  # E5: O is sent to the centre
        offered = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="")
        centre = [cell_name(cell, ULTIMATE) for cell in small_board_cells(4) if cell != 40]
        assert [choice["value"] for choice in offered] == centre
        on_d = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="d")
        assert [choice["value"] for choice in on_d] == ["D4", "D5", "D6"]
        refused(
            await sim.slash(s.bob, s.channel, "ttt move", cell="A1"),
            "A1 is not in the small board you were sent to: play in the one from D4 to F6.",
        )
        refused(
            await sim.slash(s.bob, s.channel, "ttt move", cell="J1"),
            '"J1" is not a cell: use a column letter A-I and a row number 1-9, like E5',
        )
        refused(
            await sim.slash(s.bob, s.channel, "ttt move", cell="E5"),
            "Cannot play E5: it is taken by X.",
        )
        refused(await sim.slash(s.alice, s.channel, "ttt move", cell="D4"), "It is not your turn")
        assert (await stored(bot, message)).moves == (40,)
        await play_typed(sim, (s.bob, s.alice), (30,))  # D4, sending X to the top-left
        assert (await stored(bot, message)).moves == (40, 30)


# -- everywhere a size is chosen -----------------------------------------------------------------


@both_front_doors
async def test_the_servers_default_board_can_be_ultimate(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        chosen = await sim.slash(s.owner, s.channel, "ttt-settings board-size", size=ULTIMATE)
        assert chosen.ephemeral
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
        message = await final_answer(ix)
        game = await stored(bot, message)
        assert game.size == ULTIMATE
        check_message(message, ultimate(game))
        shown = text_of(await sim.slash(s.owner, s.channel, "ttt-settings show"))
    assert "ultimate (nine small boards)" in shown


@both_front_doors
async def test_a_tournament_on_ultimate_plays_its_games_on_ultimate_boards(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        created = await sim.slash(
            s.owner, s.channel, "ttt tournament create", name="Big boards", size=ULTIMATE
        )
        announcement = created.message
        assert announcement is not None
        assert "ultimate (nine small boards)" in text_of(announcement)
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob):
            await sim.click(player, announcement, join)
        await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await bot.tournaments.here(s.guild.id, s.channel.id)
        (game_id,) = tournament.record.games.values()
        game = await bot.storage.get_game(game_id)
        assert game is not None
        assert game.size == ULTIMATE
        (board,) = [m for m in sim.messages(game.channel_id) if m.id == game.message_id]
        check_message(board, UltimateBoard())
        users = {s.alice.id: s.alice, s.bob.id: s.bob}
        await play_one_move(sim, bot, users[game.x_id], board)
        moved = await bot.storage.get_game(game_id)
        assert moved is not None
        assert len(moved.moves) == 1
        check_message(board, ultimate(moved))


# -- the board's text, and where the engine thinks -------------------------------------------------


def test_the_grid_stays_within_discords_text_limit_with_the_longest_custom_marks() -> None:
    """Custom emoji of 32-character names: a board with many marks would pass 4,000
    characters, so its grid falls back to the bot's own marks (the buttons keep the server's)."""
    mark_x = "<:" + "x" * 32 + ":" + "1" * 19 + ">"
    mark_o = "<a:" + "o" * 32 + ":" + "2" * 19 + ">"
    rng = random.Random(3)
    longest = 0
    for _ in range(20):
        board = UltimateBoard()
        while not board.is_over:
            board = board.play(rng.choice(board.legal_moves))
            game = record(board.moves, mark_x=mark_x, mark_o=mark_o)
            message = render.board_message(game, "Last move: A1. 🤖 I played **B2**.")
            text = message_text("", message.components)
            assert len(text) <= TEXT_LIMIT
            assert sum(1 for _ in walk_components(message.components)) <= COMPONENT_LIMIT
            longest = max(longest, len(text))
        # Early in a game the server's marks are shown in the grid itself.
        opening = render.board_message(record(board.moves[:6], mark_x=mark_x, mark_o=mark_o))
        assert mark_x in message_text("", opening.components)
    assert longest > TEXT_LIMIT // 2  # the fallback was needed, and the text still fits


def record(
    moves: tuple[int, ...], mark_x: str | None = None, mark_o: str | None = None
) -> GameRecord:
    return GameRecord(
        id=7,
        guild_id=1,
        channel_id=2,
        x_id=10,
        o_id=11,
        x_name="x" * 32,
        o_name="*_" * 16,
        size=ULTIMATE,
        moves=moves,
        status=GameStatus.ACTIVE,
        winner=None,
        end_reason=None,
        message_id=None,
        deadline=1e9,
        version=1,
        created_at=0,
        updated_at=0,
        mark_x=mark_x,
        mark_o=mark_o,
    )


async def test_the_engine_workers_run_in_another_process_and_survive_a_dead_one() -> None:
    workers = EngineWorkers(1)
    try:
        assert not workers.started
        assert await workers.run(os.getpid) != os.getpid()
        assert workers.started
        # Below the bot's priority, so that the event loop never waits for a core behind them.
        assert await workers.run(os.nice, 0) == min(19, os.nice(0) + WORKER_NICENESS)
        with pytest.raises(BrokenProcessPool):
            await workers.run(os._exit, 1)
        # The broken pool was let go: the next task gets a new one.
        assert await workers.run(ultimate_move, (40,), "smart", 0, None) in small_board_cells(4)
    finally:
        workers.close()
    assert not workers.started


@both_front_doors
async def test_a_servers_language_marks_threads_and_turn_clock_apply_to_ultimate(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """As on the other sizes: the server's language, its custom emoji marks (in the grid and
    on the buttons), a thread of its own for each game, and the turn clock, settled by the
    sweeper on the board."""
    s = sim.seed
    cross = sim.add_emoji(s.guild, "cross")
    async with harness.running() as bot:
        for command, options in (
            ("language", {"language": "fr"}),
            ("marks", {"x": cross.text, "o": "🍩"}),
            ("threads", {"enabled": True}),
        ):
            done = await sim.slash(s.owner, s.channel, f"ttt-settings {command}", **options)
            assert done.ephemeral, done.content
        pointer = await final_answer(
            await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart", size=ULTIMATE)
        )
        thread = re.search(r"<#([0-9]+)>", text_of(pointer))
        assert thread is not None, text_of(pointer)
        assert await bot.in_flight.wait_idle(patience=5)
        game = await bot.storage.live_game_in_channel(int(thread[1]))
        assert game is not None
        assert game.own_thread
        (board,) = [m for m in sim.messages(game.channel_id) if m.id == game.message_id]
        text = text_of(board)
        assert "Morpion ultimate" in text
        assert "Tout petit plateau ouvert peut être joué" in text
        assert f"{cross.text} **alice**" in text
        assert "❌" not in text
        # Over HTTP a board with a server's emoji is deferred, then shown through the webhook.
        picked = await sim.click(s.alice, board, pick_id(board, 4))
        assert await final_answer(picked) is board
        moved = await sim.click(s.alice, board, cell_button(board, 40))
        assert await final_answer(moved) is board
        assert await bot.in_flight.wait_idle(patience=10)
        grid = "\n".join(" ".join(row) for row in grid_rows(board))
        assert cross.text in grid  # alice's E5
        assert "🍩" in grid  # the bot's answer
        harness.clock.advance(301)
        bot.wake_sweeper()
        await sim.wait_for(lambda: "⏰" in text_of(board))
        assert "**alice**" in text_of(board)
        stored_game = await bot.storage.get_game(game.id)
        assert stored_game is not None
        assert stored_game.status is GameStatus.FINISHED
        assert stored_game.winner is Mark.O


# -- hints and reviews -----------------------------------------------------------------------------


def shortest_won_game(seeds: int = 100) -> tuple[int, ...]:
    """The shortest game won by a side among seeded random games."""
    games = []
    for seed in range(seeds):
        rng = random.Random(seed)
        board = UltimateBoard()
        while not board.is_over:
            board = board.play(rng.choice(board.legal_moves))
        if board.winner is not None:
            games.append(board.moves)
    return min(games, key=len)


@both_front_doors
@pytest.mark.slow  # the review searches each of some 30 positions (about 5 s of CPU)
async def test_a_finished_game_is_reviewed_by_the_engines_search(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    moves = shortest_won_game()
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        await play_typed(sim, (s.alice, s.bob), moves)
        game = await bot.storage.finished_game_in_channel(s.channel.id, None)
        assert game is not None
        assert game.moves == moves
        shown = await sim.slash(s.carol, s.channel, "ttt board")
        refused(shown, "There is no game in this channel")
        # The search takes seconds of CPU, but on a fast machine under the usual 1.5 s: the
        # deferral is made due long before the search can end, so the test does not depend on
        # the machine's speed.
        bot.answers.defer_after = 0.05
        asked = await sim.slash(s.carol, s.channel, "ttt review", timeout=30)
        assert asked.response_type == 5
        # About 5 s of a worker's CPU; the workers run at niceness 10, so beside a loaded
        # machine's other processes (a whole suite at once) they may get a small share of it.
        await sim.wait_for(lambda: asked.done or bool(asked.followups), timeout=240, what="review")
        review = await final_answer(asked)
        assert review.ephemeral
        text = text_of(review)
        assert f"Review of game #{game.id}" in text
        assert f"of {len(moves)} moves were good by the engine's search" in text
        winner = UltimateBoard.from_moves(moves).winner
        assert winner is not None
        last = f"{len(moves)}. {winner.value} {cell_name(moves[-1], ULTIMATE)}"
        assert f"{last} — {winner.value} wins the game." in text
        assert "ultimate tic-tac-toe is not solved" in text
        assert review.components == []  # no drills from ultimate
        # The review's deadline, not the click's: 50 ms defers a refusal that waits on the
        # database for longer.
        bot.answers.defer_after = harness.defer_after
        refused(
            await sim.click(s.alice, message, PRACTISE_ID.build(game=game.id), forged=True),
            "Drills come from games on the square boards: ultimate has none.",
        )


@both_front_doors
async def test_a_hint_is_a_legal_cell_and_makes_the_game_assisted(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="casual", size=9)
        message = await final_answer(started)
        await play_one_move(sim, bot, s.alice, message)
        before = ultimate(await stored(bot, message))
        hint = await final_answer(await sim.slash(s.alice, s.channel, "ttt hint", timeout=30))
        assert hint.ephemeral
        found = re.search(r"Hint: ([A-I][1-9]) ", text_of(hint))
        assert found is not None, text_of(hint)
        # Issue 39: hints, like reviews, say they are the search's verdict, not a proof.
        assert "by the engine's search, not proven" in text_of(hint)
        assert before.parse_move(found[1]) in before.legal_moves
        game = await stored(bot, message)
        assert game.assisted
        assert game.moves == before.moves


def test_every_review_sentence_reads_in_every_language() -> None:
    """Each move's sentence, from the parts of a real review, in each catalogue: every field
    filled, and the whole review within an embed's 4,096 characters."""
    rng = random.Random(5)
    board = UltimateBoard()
    while not board.is_over:
        board = board.play(rng.choice(board.legal_moves))
    reviews = review_ultimate_game(board.moves, budget=SearchBudget(seconds=None, nodes=200))
    verdicts = {move.verdict for move in reviews}
    assert len(verdicts) >= 3, verdicts  # random play gets several kinds of verdict
    review = UltimateReview(
        dataclasses.replace(record(board.moves), status=GameStatus.FINISHED, deadline=None),
        reviews,
    )
    for code in i18n.ALL_LANGUAGES:
        lang = i18n.language(code)
        for move in reviews:
            sentence = render.ultimate_move_sentence(move, lang)
            assert sentence.startswith(f"{move.number}. {move.mark.value} {move.cell_name} — ")
            assert "{" not in sentence
            assert "None" not in sentence
        embed = render.review_message(review, lang).embed
        assert embed is not None
        assert len(embed.description or "") <= 4096


@both_front_doors
@both_engines
async def test_a_member_game_is_rated_ranked_and_rematched_on_ultimate_alone(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 39: stats, the leaderboard and ratings keep ultimate apart from the other sizes,
    and a rematch of a game between members keeps the variant."""
    s = sim.seed
    async with harness.running() as bot:
        message = await challenge_and_accept(sim, s.alice, s.bob)
        game = await stored(bot, message)
        resigned = await sim.click(
            s.alice, message, GAME_ACTION_ID.build(action="resign", game=game.id)
        )
        assert resigned.response_type == 7, resigned.content
        rematch = await sim.click(
            s.bob, message, GAME_ACTION_ID.build(action="rematch", game=game.id)
        )
        assert rematch.message is not None, rematch.content
        again = await stored(bot, rematch.message)
        assert again.id != game.id
        assert (again.size, again.x_id, again.o_id, again.moves) == (
            ULTIMATE,
            s.bob.id,
            s.alice.id,
            (),
        )
        check_message(rematch.message, UltimateBoard())
        won = text_of(await sim.slash(s.bob, s.channel, "ttt stats", size=ULTIMATE))
        lost = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=ULTIMATE))
        on_3x3 = text_of(await sim.slash(s.bob, s.channel, "ttt stats", size=3))
        ladder = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard", size=ULTIMATE))
        ladder_3x3 = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard", size=3))
    assert "Against members: 1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in won
    assert "Against members: 0 W · 1 L · 0 D (rating 1089 ± 339, provisional)" in lost
    assert "No finished games yet in this server on 3\N{MULTIPLICATION SIGN}3 boards." in on_3x3
    assert "leaderboard (ultimate)" in ladder
    assert ladder.index(f"<@{s.bob.id}>") < ladder.index(f"<@{s.alice.id}>")
    assert "Nobody is rated yet on 3\N{MULTIPLICATION SIGN}3 boards" in ladder_3x3
