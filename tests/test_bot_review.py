"""The difficulty ladder, reviews and hints through the real discord.py client and the simulator:
the levels offered weakest first with their descriptions (in the choices, the help and the
stats), the Review button and ``/ttt review`` word for word (a blunder, a missed win, a perfect
draw, a whole 5x5 game; on boards of every size; after a restart), and ``/ttt hint`` given,
refused, and its games counted in no stats, across the live-game cache and a restart."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

import bot.service
from bot.components import DRILL_ID, GAME_ACTION_ID, PRACTISE_ID
from bot.domain import size_name
from bot.i18n import ENGLISH_LANGUAGE
from bot.render import ASSISTED, size_label
from bot.service import NO_GAME
from game import Board, cell_name, parse_cell
from game.ai import DIFFICULTIES
from game.review import best_move, review_game
from tests.bot_harness import (
    TEST_SEARCH_BUDGET,
    BotHarness,
    board_of,
    both_engines,
    both_front_doors,
    button_id,
    cell_buttons,
    cell_id,
    free_cells,
    is_live,
    refused,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord, SimChannel, SimMessage
from tests.discord_sim.models import FLAG_COMPONENTS_V2
from tests.known_games import (
    BLUNDER,
    BLUNDER_REVIEW,
    FULL_5X5,
    FULL_5X5_REVIEW,
    MISSED_WIN,
    MISSED_WIN_REVIEW,
    PERFECT_DRAW,
    PERFECT_DRAW_REVIEW,
)
from tests.test_bot_sizes import challenge_and_accept

MEMBERS = f"❌ **alice** (X) vs ⭕ **bob** (O), {size_label(3, ENGLISH_LANGUAGE)}"
_T = TypeVar("_T")
HINT_SENTENCE = "Hint: {}. This game is assisted now, so it counts in no stats."


def game_number(board: SimMessage) -> int:
    """The number a board shows its game by ("Game #12")."""
    found = re.search(r"Game #([0-9]+)", text_of(board))
    assert found is not None, text_of(board)
    return int(found[1])


def controls(message: SimMessage) -> list[str]:
    """The labels of a board's buttons other than its cells, in order."""
    cells = {button["custom_id"] for button in cell_buttons(message)}
    return [b["label"] for b in message.buttons() if b["custom_id"] not in cells]


async def private_answer(ix: InteractionRecord) -> SimMessage:
    """The answer to ``ix``, once it is complete, checking that only its member sees it: the
    first response, or after a deferral (an answer that took long), the follow-up (a private
    one after a command's public "thinking...", which goes)."""
    message = ix.message
    if ix.response_type in (5, 6):
        message = (await ix.wait_followups())[-1]
    assert message is not None, ix
    assert message.ephemeral, message.content
    assert message.interaction_user is ix.user
    return message


async def review_of(ix: InteractionRecord) -> tuple[str, list[str], list[str]]:
    """A review's title, its header lines (players, result...) and its moves, shown only to the
    member who asked."""
    (embed,) = (await private_answer(ix)).embeds
    header, _, moves = embed["description"].partition("\n\n")
    return embed["title"], header.splitlines(), moves.splitlines()


async def vs_bot(
    sim: DiscordSim, difficulty: str, size: int = 3, channel: SimChannel | None = None
) -> SimMessage:
    """alice starts a game against the bot, moving first: its board."""
    s = sim.seed
    started = await sim.slash(
        s.alice, channel or s.channel, "ttt vs-ai", difficulty=difficulty, size=size
    )
    assert started.message is not None, started.content
    return started.message


async def play_member_game(
    sim: DiscordSim, moves: list[str], *, typed: bool = False, size: int = 3
) -> SimMessage:
    """alice (X) challenges bob (O), who accepts, and they play ``moves``: clicked on the
    board, or typed with ``/ttt move``. Returns the board that shows the end."""
    s = sim.seed
    _, board = await challenge_and_accept(sim, s.alice, s.bob, size)
    for number, cell in enumerate(moves):
        player = (s.alice, s.bob)[number % 2]
        if typed:
            ix = await sim.slash(player, s.channel, "ttt move", cell=cell)
        else:
            ix = await sim.click(player, board, cell_id(board, cell))
        assert not ix.ephemeral, ix.content
        assert ix.message is not None
        board = ix.message
    assert not is_live(board)
    return board


# -- the levels ---------------------------------------------------------------------------------


@both_front_doors
async def test_the_levels_are_offered_weakest_first_with_their_descriptions(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        ttt, _settings = sim.commands()
        help_text = text_of(await sim.slash(s.alice, s.channel, "ttt help"))
        stats = await sim.slash(s.alice, s.channel, "ttt stats")
    subcommands = {option["name"]: option for option in ttt["options"]}
    vs_ai = {option["name"]: option for option in subcommands["vs-ai"]["options"]}
    choices = [(c["name"], c["value"]) for c in vs_ai["difficulty"]["choices"]]
    assert choices == [
        ("random — Plays any free cell: the easiest.", "random"),
        ("casual — Takes a win and blocks yours, but often plays carelessly.", "casual"),
        ("smart — Plays by the classic rules: never loses on 3x3.", "smart"),
        ("minimax — Perfect on 3x3, 4x4 and 5x5: the strongest.", "minimax"),
    ]
    assert all(len(name) <= 100 for name, _ in choices)  # Discord's limit for a choice's name
    lines = [f"- `{level.name}`: {level.description}" for level in DIFFICULTIES]
    assert [help_text.index(line) for line in lines] == sorted(
        help_text.index(line) for line in lines
    )
    fields = [field["name"] for field in stats.embeds[0]["fields"]]
    assert fields == ["Against members"] + [
        f"Against the bot ({level})" for level in ("random", "casual", "smart", "minimax")
    ]
    assert "Games in which a hint was used (/ttt hint) count in no stats." in text_of(stats)


# -- reviews ------------------------------------------------------------------------------------


@both_front_doors
@both_engines
async def test_a_blunder_reviewed_word_for_word_from_the_button_and_the_command(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await play_member_game(sim, BLUNDER)
        number = game_number(board)
        assert controls(board) == ["Rematch", "Review"]
        review_button = button_id(board, GAME_ACTION_ID, action="review")
        edits = len(board.edits)
        answers = [
            await sim.click(s.alice, board, review_button),
            # Anyone in the channel may review it: the game was played in the open.
            await sim.click(s.carol, board, review_button),
            await sim.slash(s.carol, s.channel, "ttt review"),
            await sim.slash(s.bob, s.channel, "ttt review", game=number),
        ]
        assert len(board.edits) == edits  # the board itself is left as it is
    for ix in answers:
        title, header, moves = await review_of(ix)
        assert title == f"Review of game #{number}"
        assert header == [MEMBERS, "🏆 ❌ **alice** wins with A1 A2 A3!"]
        assert moves == BLUNDER_REVIEW
    assert answers[0].embeds[0]["footer"]["text"] == "Every move is judged against perfect play."


@both_front_doors
async def test_a_missed_win_and_a_perfect_draw_reviewed_by_number_and_the_last_one(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        missed = game_number(await play_member_game(sim, MISSED_WIN, typed=True))
        drawn = game_number(await play_member_game(sim, PERFECT_DRAW, typed=True))
        last = await sim.slash(s.alice, s.channel, "ttt review")
        earlier = await sim.slash(s.alice, s.channel, "ttt review", game=missed)
    assert await review_of(last) == (
        f"Review of game #{drawn}",
        [MEMBERS, "🤝 It's a draw."],
        PERFECT_DRAW_REVIEW,
    )
    assert await review_of(earlier) == (
        f"Review of game #{missed}",
        [MEMBERS, "🤝 It's a draw."],
        MISSED_WIN_REVIEW,
    )


@both_front_doors
@both_engines
async def test_a_game_is_reviewed_after_a_restart_from_its_old_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await play_member_game(sim, PERFECT_DRAW)
    # A new process: the game comes from the database, and the old board's button still works.
    async with harness.running():
        clicked = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="review"))
        typed = await sim.slash(s.carol, s.channel, "ttt review")
    for ix in (clicked, typed):
        assert (await review_of(ix))[2] == PERFECT_DRAW_REVIEW


@both_front_doors
async def test_a_whole_5x5_game_is_reviewed_within_discords_limits(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await play_member_game(sim, FULL_5X5, typed=True, size=5)
        assert "🤝 It's a draw." in text_of(board)
        ix = await sim.slash(s.carol, s.channel, "ttt review")
    _, header, moves = await review_of(ix)
    assert header == [
        f"❌ **alice** (X) vs ⭕ **bob** (O), {size_label(5, ENGLISH_LANGUAGE)}",
        "🤝 It's a draw.",
    ]
    assert moves == FULL_5X5_REVIEW
    # The sim refuses an embed over Discord's limits; this one is well within them. (On a busy
    # machine the review may take over 1.5 s and be deferred: the answer is then a follow-up.)
    (embed,) = (await private_answer(ix)).embeds
    assert len(embed["description"]) < 4096 // 2
    assert embed["footer"]["text"] == "Every move is judged against perfect play."


@both_front_doors
@pytest.mark.parametrize("size", [3, 4, 5])
async def test_only_a_finished_board_offers_review_at_every_size(
    sim: DiscordSim, harness: BotHarness, size: int
) -> None:
    """Against the bot, the player taking the first free cell: each move read off the board
    (the player's click, and the cell the bot took), then the review checked against the
    engine's."""
    s = sim.seed
    async with harness.running():
        board = await vs_bot(sim, "random", size)
        moves: list[int] = []
        while is_live(board):
            assert controls(board) == ["Resign"]
            before = board_of(board)
            cell = parse_cell(free_cells(board)[0], size)
            ix = await sim.click(s.alice, board, cell_id(board, cell))
            assert ix.response_type == 7, ix.content
            after = board_of(board)
            moves.append(cell)
            moves += [c for c in range(size * size) if before[c] != after[c] and c != cell]
        assert controls(board) == ["Rematch", "Review"]
        if size == 5:
            assert board.flags & FLAG_COMPONENTS_V2
            assert sum(1 for _ in board.iter_components()) <= 40
        else:
            # The control row is the row after the board's rows.
            control_row = [b["label"] for b in board.components[size]["components"]]
            assert control_row == ["Rematch", "Review"]
        review = await sim.click(s.bob, board, button_id(board, GAME_ACTION_ID, action="review"))
    assert Board.from_moves(moves, size) == board_of(board)
    _, header, lines = await review_of(review)
    assert (
        header[0]
        == f"❌ **alice** (X) vs ⭕ **tttbot (random)** (O), {size_label(size, ENGLISH_LANGUAGE)}"
    )
    assert lines == [move.sentence for move in review_game(moves, size)]


@both_front_doors
async def test_what_cannot_be_reviewed_is_refused_with_a_sentence(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        refused(
            await sim.slash(s.alice, s.channel, "ttt review"),
            "No game has finished in this channel yet: play one, then review it.",
        )
        refused(
            await sim.slash(s.alice, s.channel, "ttt review", game=999),
            "There is no game #999: its number is on its board.",
        )
        elsewhere = game_number(await vs_bot(sim, "smart", channel=s.other_channel))
        await sim.slash(s.alice, s.other_channel, "ttt resign")
        refused(
            await sim.slash(s.alice, s.channel, "ttt review", game=elsewhere),
            f"Game #{elsewhere} was played in another channel: review it there.",
        )
        number = game_number(await vs_bot(sim, "smart"))
        # A live game's review would be a hint for the player to move.
        refused(
            await sim.slash(s.carol, s.channel, "ttt review", game=number),
            f"Game #{number} is still going: review it once it is over.",
        )
        refused(
            await sim.slash(s.carol, s.channel, "ttt review"),
            "No game has finished in this channel yet",
        )


# -- old games removed (TTT_KEEP_FINISHED_GAMES_DAYS) ----------------------------------------------

DAY = 86_400


@both_front_doors
@both_engines
async def test_games_older_than_kept_are_removed_and_their_reviews_and_drills_say_so(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Kept 30 days: a game that ended 31 days ago is gone at the next sweep, its review says
    so (told apart from a number that never was), the drill made from it still plays and says
    its game is gone, and nobody's stats move."""
    s = sim.seed
    async with harness.running(keep_finished_games_days=30) as running:
        old_board = await play_member_game(sim, BLUNDER)  # bob's B1 lost the draw
        old = game_number(old_board)
        review = await sim.click(
            s.bob, old_board, button_id(old_board, GAME_ACTION_ID, action="review")
        )
        assert review.message is not None
        await sim.click(s.bob, review.message, button_id(review.message, PRACTISE_ID))
        harness.clock.advance(10 * DAY)
        recent = game_number(await play_member_game(sim, PERFECT_DRAW))
        harness.clock.advance(21 * DAY)
        stats = [
            text_of(await sim.slash(user, s.channel, "ttt stats")) for user in (s.alice, s.bob)
        ]
        await running.sweep()
        gone = [
            await sim.slash(s.carol, s.channel, "ttt review", game=old),
            await sim.click(
                s.carol, old_board, button_id(old_board, GAME_ACTION_ID, action="review")
            ),
        ]
        never = await sim.slash(s.carol, s.channel, "ttt review", game=recent + 100)
        last = await sim.slash(s.carol, s.channel, "ttt review")
        rematch = await sim.click(
            s.bob, old_board, button_id(old_board, GAME_ACTION_ID, action="rematch")
        )
        asked = await sim.slash(s.bob, s.channel, "ttt drill")
        assert asked.message is not None
        asked_text = text_of(asked)
        answered = await sim.click(
            s.bob, asked.message, button_id(asked.message, DRILL_ID, cell=str(parse_cell("A3", 3)))
        )
        after = [
            text_of(await sim.slash(user, s.channel, "ttt stats")) for user in (s.alice, s.bob)
        ]
        mine = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
        # Ten days on, the other game is as old: none of this channel's is left.
        harness.clock.advance(10 * DAY)
        await running.sweep()
        none_left = await sim.slash(s.carol, s.channel, "ttt review")
    for ix in gone:
        refused(ix, f"Game #{old} is no longer kept: finished games are kept for 30 days.")
    refused(never, f"There is no game #{recent + 100}: its number is on its board.")
    assert (await review_of(last))[0] == f"Review of game #{recent}"
    refused(rematch, "That game no longer exists.")
    assert f"From game #{old} (no longer kept), 3×3 (3 in a row)." in asked_text  # noqa: RUF001
    assert "In the game, B1 was played here." in asked_text
    assert "✅ A3 keeps the draw." in text_of(answered)
    assert f"From game #{old} (no longer kept)" in text_of(answered)
    assert after == stats  # counted when the games ended
    assert "- 3×3: 1 game stored" in mine  # noqa: RUF001
    refused(
        none_left,
        "No game has finished in this channel in the last 30 days: play one, then review it.",
    )


@both_front_doors
async def test_the_sweeper_removes_old_games_a_small_batch_at_a_time(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot.service, "PRUNE_BATCH", 2)
    monkeypatch.setattr(bot.service, "PRUNE_BATCHES_PER_SWEEP", 2)
    async with harness.running(keep_finished_games_days=1) as running:
        numbers = [game_number(await play_member_game(sim, PERFECT_DRAW)) for _ in range(5)]
        batches = []
        real = running.storage.prune_finished

        async def counted(*args: Any) -> Any:
            pruned = await real(*args)
            batches.append(pruned.games)
            return pruned

        monkeypatch.setattr(running.storage, "prune_finished", counted)
        await running.sweep()  # nothing is a day old yet
        harness.clock.advance(DAY)
        await running.sweep()
        await running.sweep()
        kept = [await running.storage.get_game(number) for number in numbers]
    assert batches == [
        (),
        tuple(numbers[:2]),
        tuple(numbers[2:4]),  # two batches in a sweep, at most
        (numbers[4],),
    ]
    assert kept == [None] * 5


@both_front_doors
async def test_games_are_kept_for_good_unless_the_operator_sets_a_retention(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as running:
        number = game_number(await play_member_game(sim, PERFECT_DRAW))
        harness.clock.advance(10 * 365 * DAY)
        await running.sweep()
        review = await sim.slash(s.carol, s.channel, "ttt review", game=number)
    assert (await review_of(review))[0] == f"Review of game #{number}"


# -- hints --------------------------------------------------------------------------------------


def public(sim: DiscordSim, channel: SimChannel) -> list[SimMessage]:
    return [m for m in sim.messages(channel) if not m.ephemeral]


@both_front_doors
@both_engines
async def test_a_hint_is_private_marks_the_game_assisted_and_it_counts_for_nobody(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await vs_bot(sim, "minimax")
        # The board's message id, which the hint edits.
        assert await bot.in_flight.wait_idle(patience=5)
        messages = len(public(sim, s.channel))
        hint = await private_answer(await sim.slash(s.alice, s.channel, "ttt hint"))
        assert hint.content == HINT_SENTENCE.format(cell_name(best_move(Board())))
        assert len(public(sim, s.channel)) == messages
        # The board says so to everyone at once, and keeps showing so after the next move
        # (played from the process's copy of the live game, which must have the flag too).
        await sim.wait_for(lambda: ASSISTED in text_of(board))
        ix = await sim.click(s.alice, board, cell_id(board, "B2"))
        assert ix.response_type == 7, ix.content
        assert ASSISTED in text_of(board)
        again = await private_answer(await sim.slash(s.alice, s.channel, "ttt hint"))
        assert again.content == HINT_SENTENCE.format(cell_name(best_move(board_of(board))))
    # And in the database: a new process finishes it, assisted, and counts it for nobody.
    async with harness.running():
        ix = await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert ix.response_type == 7, ix.content
        assert ASSISTED in text_of(board)
        helped = game_number(board)
        review = await sim.slash(s.alice, s.channel, "ttt review")
        assisted_stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        # The same game without a hint counts.
        await vs_bot(sim, "minimax")
        await sim.slash(s.alice, s.channel, "ttt resign")
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
    title, header, _ = await review_of(review)
    assert title == f"Review of game #{helped}"
    assert header[-1] == f"💡 {ASSISTED}"
    assert f"No finished games yet in this server on {size_name(3)} boards." in assisted_stats
    assert "Against the bot (minimax): 0 W · 0 L · 0 D" in assisted_stats
    assert "Against the bot (minimax): 0 W · 1 L · 0 D" in stats


@both_front_doors
async def test_a_5x5_hint_is_the_searchs_move(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    async with harness.running() as bot:
        board = await vs_bot(sim, "smart", 5)
        await sim.click(s.alice, board, cell_id(board, "C3"))
        assert await bot.in_flight.wait_idle(patience=5)
        hint = await private_answer(await sim.slash(s.alice, s.channel, "ttt hint"))
        # The bot searches on the harness's node budget: the same move as here, every run.
        expected = best_move(board_of(board), TEST_SEARCH_BUDGET)
        assert hint.content == HINT_SENTENCE.format(cell_name(expected, 5))
        await sim.wait_for(lambda: ASSISTED in text_of(board))
        assert board.flags & FLAG_COMPONENTS_V2


@both_front_doors
async def test_a_hint_is_refused_outside_ones_own_game_against_the_bot(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        refused(await sim.slash(s.alice, s.channel, "ttt hint"), NO_GAME)
        _, board = await challenge_and_accept(sim, s.alice, s.bob, 3)
        for member in (s.alice, s.bob):  # on one's turn or not
            refused(
                await sim.slash(member, s.channel, "ttt hint"),
                "Hints are only for games against me: between members, you're on your own.",
            )
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        assert ASSISTED not in text_of(board)
        against_bot = await vs_bot(sim, "casual")
        refused(
            await sim.slash(s.carol, s.channel, "ttt hint"),
            "You are not playing in this game, so there is no hint for you.",
        )
        await sim.slash(s.alice, s.channel, "ttt resign")
        # The game is over: there is nothing left to hint at.
        refused(await sim.slash(s.alice, s.channel, "ttt hint"), NO_GAME)
        assert ASSISTED not in text_of(against_bot)
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
    assert "Against the bot (casual): 0 W · 1 L · 0 D" in stats


@both_front_doors
async def test_a_5x5_review_and_hint_run_off_the_event_loop_and_answer_privately_in_time(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each engine call held at its start until the test lets it go: meanwhile another channel
    is answered, and the command or click is deferred, then answered for its member alone."""
    s = sim.seed
    harness.defer_after = 0.5  # the held call waits past it; /ttt help meanwhile does not
    thinking, release = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []

    def held(work: Callable[..., _T]) -> Callable[..., _T]:
        def holding(*args: Any, **kwargs: Any) -> _T:
            threads.append(threading.current_thread())
            thinking.set()
            assert release.wait(10)
            return work(*args, **kwargs)

        return holding

    async def while_held(ask: Awaitable[InteractionRecord]) -> InteractionRecord:
        thinking.clear()
        release.clear()
        asked = asyncio.ensure_future(ask)
        assert await asyncio.to_thread(thinking.wait, 10)
        other = await sim.slash(s.bob, s.other_channel, "ttt help")
        assert other.response_type == 4
        deferred = await asked  # returns at the first answer: the deferral
        release.set()
        return deferred

    monkeypatch.setattr(bot.service, "review_game", held(review_game))
    monkeypatch.setattr(bot.service, "best_move", held(best_move))
    async with harness.running():
        board = await vs_bot(sim, "random", 5)
        hint = await while_held(sim.slash(s.alice, s.channel, "ttt hint"))
        assert hint.response_type == 5
        assert (await private_answer(hint)).content.startswith("Hint: ")
        # The hint's handler then marks the board assisted: after that, not on top of Resign.
        await sim.wait_for(lambda: ASSISTED in text_of(board))
        await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="resign"))
        click = await while_held(
            sim.click(s.carol, board, button_id(board, GAME_ACTION_ID, action="review"))
        )
        assert click.response_type == 6
        clicked = await review_of(click)  # the follow-up, once the search is done
        # The same game asked for again: its review is kept, answered at once, unsearched.
        typed = await sim.slash(s.carol, s.channel, "ttt review")
        assert typed.response_type == 4
        assert await review_of(typed) == clicked
    # Resigned before a move, after the hint: nothing to judge, and assisted.
    _, header, moves = clicked
    assert header[1:] == ["🏳️ ❌ **alice** resigned: ⭕ **tttbot (random)** wins.", f"💡 {ASSISTED}"]
    assert moves == ["No move was played."]
    assert len(threads) == 2  # the hint's search and the review's
    assert threading.main_thread() not in threads
