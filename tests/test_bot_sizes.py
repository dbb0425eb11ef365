"""The larger boards end to end: 4x4 (classic message: four rows of cells and the control row)
and 5x5 (one components-v2 message), at every difficulty and between members, with challenges,
rematches, typed moves, autocomplete, stats and leaderboards per size, and the 5x5 search off
the event loop. Moves are chosen deterministically (the first free cell), so that every game
ends and plays the same way each run; the bot's searches run on the harness's node budget."""

from __future__ import annotations

import asyncio
import threading

import pytest

from bot.components import CHALLENGE_ID, GAME_ACTION_ID
from bot.domain import size_name
from bot.i18n import ENGLISH_LANGUAGE
from bot.render import EMPTY_EMOJI, MARK_EMOJI, ROW_EMOJI, WINNING_EMOJI, size_label
from game import Board, Mark, cell_name, parse_cell
from game.ai import MinimaxStrategy
from tests.bot_harness import (
    PAST_THE_WINDOW,
    SHORT_WINDOW,
    BotHarness,
    board_of,
    both_engines,
    both_front_doors,
    button_id,
    cell_buttons,
    cell_id,
    first_answers_lost,
    free_cells,
    is_live,
    refused,
    shown_board,
    size_of,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimMessage, SimTimeout, SimUser
from tests.discord_sim.models import FLAG_COMPONENTS_V2

GRID_MARKS = {
    **{emoji: mark.value for mark, emoji in MARK_EMOJI.items()},
    **{emoji: mark.value for mark, emoji in WINNING_EMOJI.items()},
    EMPTY_EMOJI: ".",
}
SUCCESS = 3  # the button style of a winning line's cells


def grid_of(message: SimMessage) -> tuple[str, set[int]]:
    """The position the message's emoji grid shows (``Board.from_string`` form), and the
    cells it marks as the winning line."""
    rows: list[str] = []
    winning: set[int] = set()
    for line in text_of(message).splitlines():
        first, _, rest = line.partition(" ")
        if first not in ROW_EMOJI:
            continue
        emojis = rest.split(" ")
        winning.update(
            len(rows) * len(emojis) + column
            for column, emoji in enumerate(emojis)
            if emoji in WINNING_EMOJI.values()
        )
        rows.append("".join(GRID_MARKS[emoji] for emoji in emojis))
    return "/".join(rows), winning


def check_board(message: SimMessage, size: int) -> Board:
    """The board message is in its size's form, and its grid, buttons and winning marks agree;
    returns the position it shows."""
    layout = bool(message.flags & FLAG_COMPONENTS_V2)
    assert layout == (size == 5)
    if layout:
        assert (message.content, message.embeds) == ("", [])
    else:
        assert len(message.components) == size + 1  # a row per board row, and the control
    assert size_of(message) == size
    grid, winning = grid_of(message)
    assert grid == shown_board(message)
    board = board_of(message)
    line = set(board.winning_line or ())
    assert winning == line
    styles = [button["style"] for button in cell_buttons(message)]
    assert {cell for cell, style in enumerate(styles) if style == SUCCESS} == line
    return board


async def play_first_free_cells(
    sim: DiscordSim, players: list[SimUser], message: SimMessage, size: int
) -> SimMessage:
    """Click the first free cell, the players taking turns, until the game ends; each click
    must edit the board in place and show the move. Returns the final board message."""
    turn = 0
    while is_live(message):
        cell = free_cells(message)[0]
        before = board_of(message)
        ix = await sim.click(players[turn % len(players)], message, cell_id(message, cell))
        assert ix.response_type == 7, ix.content
        assert ix.message is message
        after = check_board(message, size)
        assert after[parse_cell(cell, size)] is before.turn
        turn += 1
    return message


def the_control(message: SimMessage, action: str) -> str:
    return button_id(message, GAME_ACTION_ID, action=action)


# -- against the bot, at every size and difficulty ------------------------------------------------


@both_front_doors
@pytest.mark.parametrize("size", [3, 4, 5])
@pytest.mark.parametrize("difficulty", ["random", "casual", "smart", "minimax"])
async def test_a_full_game_at_each_size_against_each_difficulty(
    sim: DiscordSim, harness: BotHarness, size: int, difficulty: str
) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty=difficulty, size=size)
        assert ix.response_type == 4
        assert ix.message is not None
        assert check_board(ix.message, size) == Board(size)
        final = await play_first_free_cells(sim, [s.alice], ix.message, size)
        board = check_board(final, size)
        assert board.is_over
        text = text_of(final)
        if board.winner is None:
            assert "🤝 It's a draw." in text
        else:
            line = " ".join(cell_name(cell, size) for cell in board.winning_line or ())
            assert f"wins with {line}!" in text
        if difficulty == "minimax":
            assert board.winner is Mark.O  # the first free cell, every time, is no defence
        assert all(button["disabled"] for button in cell_buttons(final))
        assert the_control(final, "rematch")
        if size != 3:
            assert f"Tic-tac-toe {size_label(size, ENGLISH_LANGUAGE)}" in text


# -- between members: challenge, game, rematch, stats and the leaderboard ---------------------


async def challenge_and_accept(
    sim: DiscordSim, x: SimUser, o: SimUser, size: int
) -> tuple[InteractionRecord, SimMessage]:
    s = sim.seed
    challenge = await sim.slash(x, s.channel, "ttt start", opponent=o, size=size)
    message = challenge.message
    assert message is not None
    assert message.pinged == [o.id]  # the challenged member, and only them, at every size
    assert bool(message.flags & FLAG_COMPONENTS_V2) == (size == 5)
    # 3x3 goes without saying; the larger boards are 4 in a row.
    board = "" if size == 3 else f" on a {size_name(size)} board (4 in a row)"
    assert f"challenges you to tic-tac-toe{board}!" in text_of(message)
    accepted = await sim.click(o, message, button_id(message, CHALLENGE_ID, action="accept"))
    assert accepted.response_type == 7
    assert accepted.message is message  # the challenge became the board, in its own form
    check_board(message, size)
    return challenge, message


@both_front_doors
@both_engines
@pytest.mark.parametrize("size", [3, 4, 5])
async def test_a_member_game_counts_on_its_size_and_its_rematch_keeps_it(
    sim: DiscordSim, harness: BotHarness, size: int
) -> None:
    s = sim.seed
    async with harness.running():
        _, board = await challenge_and_accept(sim, s.alice, s.bob, size)
        assert "❌ **alice** vs ⭕ **bob**" in text_of(board)
        final = await play_first_free_cells(sim, [s.alice, s.bob], board, size)
        # Row by row, the first free cell: X takes a diagonal on 3x3 and column A on 4x4; on
        # 5x5, O the diagonal from D1.
        winner, loser, line = {
            3: (s.alice, s.bob, "❌ **alice** wins with C1 B2 A3!"),
            4: (s.alice, s.bob, "❌ **alice** wins with A1 A2 A3 A4!"),
            5: (s.bob, s.alice, "⭕ **bob** wins with D1 C2 B3 A4!"),
        }[size]
        assert f"🏆 {line}" in text_of(final)

        rematch = await sim.click(s.bob, final, the_control(final, "rematch"))
        assert rematch.message is not None
        assert check_board(rematch.message, size) == Board(size)
        assert "❌ **bob** vs ⭕ **alice**" in text_of(rematch.message)
        await sim.click(winner, rematch.message, the_control(rematch.message, "resign"))

        won_first = text_of(await sim.slash(winner, s.channel, "ttt stats", size=size))
        lost_first = text_of(
            await sim.slash(winner, s.channel, "ttt stats", member=loser, size=size)
        )
        other = 4 if size == 3 else 3  # a size nobody played
        on_other = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=other))
        ladder = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard", size=size))
        ladder_other = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard", size=other))
    assert f"stats: {winner.name} ({size_name(size)})" in won_first
    # 1311 and 1089 after the first game; the underdog's win moves more than it lost, and the
    # second game makes both surer.
    assert "Against members: 1 W · 1 L · 0 D (rating 1183 ± 329, provisional)" in won_first
    assert "Against members: 1 W · 1 L · 0 D (rating 1217 ± 329, provisional)" in lost_first
    assert f"No finished games yet in this server on {size_name(other)} boards." in on_other
    assert f"Tic-tac-toe leaderboard ({size_name(size)})" in ladder
    assert ladder.index(f"<@{loser.id}>") < ladder.index(f"<@{winner.id}>")
    assert f"Nobody is rated yet on {size_name(other)} boards" in ladder_other


@both_front_doors
async def test_games_against_the_bot_count_per_size_and_the_rematch_keeps_it(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart", size=5)
        assert started.message is not None
        resigned = await sim.click(s.alice, started.message, the_control(started.message, "resign"))
        assert resigned.response_type == 7
        again = await sim.click(s.alice, started.message, the_control(started.message, "rematch"))
        assert again.message is not None
        rematch = check_board(again.message, 5)
        assert rematch.move_count == 1  # the bot, now X, has moved
        assert "❌ **tttbot (smart)** vs ⭕ **alice**" in text_of(again.message)
        on_5x5 = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=5))
        on_4x4 = text_of(await sim.slash(s.alice, s.channel, "ttt stats", size=4))
    assert "Against the bot (smart): 0 W · 1 L · 0 D" in on_5x5
    assert f"No finished games yet in this server on {size_name(4)} boards." in on_4x4


# -- the 5x5 message -------------------------------------------------------------------------------


@both_front_doors
async def test_the_5x5_board_is_one_components_v2_message_within_discords_limits(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", size=5)
        message = ix.message
        assert message is not None
        assert message.flags & FLAG_COMPONENTS_V2
        assert (message.content, message.embeds) == ("", [])
        assert len(cell_buttons(message)) == 25
        assert [b["label"] for b in message.buttons()[25:]] == ["Resign"]
        # The sim refuses more than 40 components or 4000 characters of text; well within.
        assert sum(1 for _ in message.iter_components()) <= 36
        assert len(text_of(message)) < 1000
        clicked = await sim.click(s.alice, message, cell_id(message, "C3"))
        assert clicked.response_type == 7
        assert board_of(message)[parse_cell("C3", 5)] is Mark.X
        assert "Last move: C3. 🤖 I played" in text_of(message)
        assert message.flags & FLAG_COMPONENTS_V2
        old_e5 = cell_id(message, "E5")
        # Shown again below: the new board is the live one; the old keeps its form, no buttons.
        again = await sim.slash(s.bob, s.channel, "ttt board")
        assert again.message is not None
        assert shown_board(again.message) == shown_board(message)
        await sim.wait_for(lambda: message.buttons() == [])
        assert message.flags & FLAG_COMPONENTS_V2
        assert "moved to a newer message" in text_of(message)
        newer = again.message
        moved = await sim.click(s.alice, newer, cell_id(newer, free_cells(newer)[0]))
        assert moved.response_type == 7
        refused(
            await sim.click(s.alice, message, old_e5, stale=True),
            "That button is no longer on this message",
        )


@both_front_doors
async def test_a_5x5_turn_that_runs_out_is_settled_on_its_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        _, board = await challenge_and_accept(sim, s.alice, s.bob, 5)
        # The board's message id is saved after the answer.
        assert await bot.in_flight.wait_idle(patience=5)
        harness.clock.advance(301)
        bot.wake_sweeper()
        await sim.wait_for(lambda: not is_live(board))
        assert "⏰ ❌ **alice** ran out of time: ⭕ **bob** wins." in text_of(board)
        assert board.flags & FLAG_COMPONENTS_V2


async def test_a_5x5_board_whose_answers_were_lost_is_posted_and_edited_in_its_form(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Outside an interaction too (the sweeper's post, an edit through the channel), a 5x5
    board is a components-v2 message."""
    s = sim.seed
    harness.last_try_after = SHORT_WINDOW
    async with harness.running() as bot:
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(
                s.alice, s.channel, "ttt vs-ai", difficulty="smart", size=5, timeout=PAST_THE_WINDOW
            )
        assert await bot.in_flight.wait_idle(patience=10)
        harness.clock.advance(31)
        await bot.sweep()
        board = sim.last_message(s.channel)
        assert board is not None
        assert check_board(board, 5) == Board(5)
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.click(s.alice, board, cell_id(board, "A1"), timeout=PAST_THE_WINDOW)
        await sim.wait_for(lambda: board_of(board).move_count == 2)
        check_board(board, 5)


@both_front_doors
async def test_a_5x5_challenge_is_declined_withdrawn_and_shown_again_in_its_form(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        first = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob, size=5)
        assert first.message is not None
        shown = await sim.slash(s.alice, s.channel, "ttt board")
        assert shown.message is not None
        await sim.wait_for(lambda: first.message is not None and first.message.buttons() == [])
        assert first.message.flags & FLAG_COMPONENTS_V2
        assert "challenge moved to a newer message below" in text_of(first.message)
        latest = shown.message
        declined = await sim.click(s.bob, latest, button_id(latest, CHALLENGE_ID, action="decline"))
        assert declined.response_type == 7
        assert "**bob** declined **alice**'s challenge." in text_of(latest)
        assert latest.flags & FLAG_COMPONENTS_V2
        assert latest.buttons() == []
        open_one = await sim.slash(s.carol, s.channel, "ttt start", size=5)
        assert open_one.message is not None
        assert f"tic-tac-toe opponent on a {size_name(5)} board" in text_of(open_one.message)
        assert open_one.message.pinged == []
        withdrawn = await sim.click(
            s.carol, open_one.message, button_id(open_one.message, CHALLENGE_ID, action="withdraw")
        )
        assert withdrawn.response_type == 7
        assert "**carol** withdrew the challenge." in text_of(open_one.message)


@both_front_doors
async def test_the_5x5_search_runs_off_the_event_loop_and_is_answered_in_time(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bot's own budget (0.3 s a move, a whole search from the empty board), each search
    held at its start until the test lets it go: meanwhile another channel is answered and the
    command (then a click) is deferred, which could not happen if the search held the event
    loop."""
    s = sim.seed
    harness.search_budget = None
    harness.defer_after = 0.1
    searching, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []
    search = MinimaxStrategy.choose

    def held(strategy: MinimaxStrategy, board: Board) -> int:
        threads.append(threading.current_thread())
        searching.set()
        assert release.wait(10)
        return search(strategy, board)

    monkeypatch.setattr(MinimaxStrategy, "choose", held)
    async with harness.running():
        started = asyncio.create_task(
            sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax", first="bot", size=5)
        )
        assert await asyncio.to_thread(searching.wait, 10)
        # Answered while the search is held, but perhaps deferred too (after 0.1 s): its
        # board is the message once it is done.
        other = await sim.slash(s.bob, s.other_channel, "ttt vs-ai", difficulty="smart", size=4)
        await other.wait_done()
        assert other.message is not None
        check_board(other.message, 4)
        deferred = await started  # returns at the first answer: the deferral
        assert deferred.response_type == 5  # "thinking...", within Discord's 3 s
        release.set()
        await deferred.wait_done()
        board = deferred.message
        assert board is not None
        assert check_board(board, 5).move_count == 1
        # A click: deferred too, then the board is edited in place with both moves.
        release.clear()
        clicked = await sim.click(s.alice, board, cell_id(board, free_cells(board)[0]))
        assert clicked.response_type == 6
        release.set()
        await clicked.wait_done()
        assert check_board(board, 5).move_count == 3
    assert len(threads) == 2
    assert threading.main_thread() not in threads


# -- typed moves and autocomplete per size ---------------------------------------------------------


@both_front_doors
async def test_typed_moves_and_autocomplete_follow_the_games_size(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
        refused(
            await sim.slash(s.alice, s.channel, "ttt move", cell="e5"),
            f"E5 is not on this board, which is {size_name(3)} (3 in a row): use A1 to C3, or 1 "
            "to 9.",
        )
        refused(
            await sim.slash(s.alice, s.channel, "ttt move", cell="16"),
            f"16 is not on this board, which is {size_name(3)}",
        )
        await sim.slash(s.alice, s.channel, "ttt resign")

        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart", size=4)
        moved = await sim.slash(s.alice, s.channel, "ttt move", cell="d4")
        assert moved.message is not None
        assert board_of(moved.message)[15] is Mark.X
        refused(
            await sim.slash(s.alice, s.channel, "ttt move", cell="E1"),
            f"E1 is not on this board, which is {size_name(4)} (4 in a row): use A1 to D4, or 1 "
            "to 16.",
        )
        free = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="")
        assert len(free) == 14
        assert "D4" not in [c["value"] for c in free]
        assert [c["value"] for c in free][-1] == "C4"
        await sim.slash(s.alice, s.channel, "ttt resign")

        await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random", size=5)
        every = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="")
        assert [c["value"] for c in every] == [cell_name(cell, 5) for cell in range(25)]
        column_e = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="e")
        assert [c["value"] for c in column_e] == ["E1", "E2", "E3", "E4", "E5"]
        last = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="25")
        assert [c["value"] for c in last] == ["E5"]
        by_number = await sim.slash(s.alice, s.channel, "ttt move", cell="25")
        assert by_number.message is not None
        assert board_of(by_number.message)[24] is Mark.X
        refused(
            await sim.slash(s.alice, s.channel, "ttt move", cell="F1"),
            '"F1" is not a cell: use a column letter A-E and a row number 1-5',
        )


@both_front_doors
async def test_the_size_options_are_the_documented_contract(
    sim: DiscordSim, harness: BotHarness
) -> None:
    async with harness.running():
        ttt, _settings = sim.commands()
    subcommands = {option["name"]: option for option in ttt["options"]}
    for name in ("start", "vs-ai", "stats", "leaderboard"):
        options = {option["name"]: option for option in subcommands[name].get("options", [])}
        size = options["size"]
        assert size["type"] == 4, name  # an integer
        assert size.get("required", False) is False, name
        assert [(c["name"], c["value"]) for c in size["choices"]] == [
            (f"{size_name(3)} (3 in a row)", 3),
            (f"{size_name(4)} (4 in a row)", 4),
            (f"{size_name(5)} (4 in a row)", 5),
            # Ultimate tic-tac-toe: stored as its 9x9 grid's side (game.variants).
            ("ultimate (nine small boards)", 9),
        ], name
    # Tournaments and the servers' default offer the same four.
    create = {option["name"]: option for option in subcommands["tournament"]["options"]}
    tournament_sizes = {option["name"]: option for option in create["create"]["options"]}
    assert [c["value"] for c in tournament_sizes["size"]["choices"]] == [3, 4, 5, 9]
    assert size_name(4) == "4\N{MULTIPLICATION SIGN}4"
    assert size_name(9) == "ultimate"
