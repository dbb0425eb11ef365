"""The daily puzzle and drills through the real discord.py client and the simulator: the day's
puzzle, the same in every server, in DMs and after a restart; solved right on the first try in
English, and answered wrong, refuted and solved on a second try in German; its results in
``/ttt puzzle stats`` with a server's solvers of the day; streaks across days on the manual
clock; a drill made from a known blunder with "Practise this", answered wrong and right, spaced
out over days until learned; and what only a game's players may do."""

from __future__ import annotations

import asyncio
import datetime
import re
from typing import Any

import pytest

from bot.components import (
    DRILL_ID,
    DRILL_NEXT_ID,
    FORGET_ID,
    GAME_ACTION_ID,
    LEGACY_PUZZLE_ID,
    PRACTISE_ID,
    PUZZLE_AGAIN_ID,
    PUZZLE_ID,
    decode_moves,
    encode_day,
)
from bot.i18n import ENGLISH_LANGUAGE, language
from bot.practice import (
    AGAIN_AFTER_WRONG,
    DAY_SECONDS,
    DRILL_INTERVALS,
    NOT_THIS_DRILL,
    NOT_THIS_PUZZLE,
)
from bot.render import refutation_sentence, reply_sentence, task_sentence, uses_layout
from bot.storage.base import DatabaseUnavailableError, Storage
from game import Board, parse_cell
from game.puzzles import Puzzle, StepKind, load_pool, puzzle_of_the_day, refute, step
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    refused,
    text_of,
)
from tests.discord_sim import DiscordSim, SimChannel, SimMessage, SimUser
from tests.discord_sim.models import FLAG_COMPONENTS_V2
from tests.known_games import FULL_5X5
from tests.test_bot_review import play_member_game, private_answer

# Noon in UTC: a day's puzzle is chosen by the day in UTC.
DAY = datetime.date(2026, 11, 26)
NOON = datetime.datetime(2026, 11, 26, 12, tzinfo=datetime.UTC).timestamp()
POOL = load_pool()
GERMAN = language("de")

# Every puzzle and drill, over the gateway and over HTTP (`python -m bot serve`).
pytestmark = both_front_doors


@pytest.fixture(autouse=True)
def at_noon(harness: BotHarness) -> None:
    """Every test starts at noon (UTC) of :data:`DAY`: a day's puzzle is the day's in UTC."""
    harness.clock.advance(NOON - harness.clock.now())


def todays(day: datetime.date = DAY) -> Puzzle:
    return puzzle_of_the_day(day, POOL)


def puzzle_buttons(message: SimMessage) -> dict[int, dict[str, str]]:
    """A puzzle message's cell buttons, by cell: their custom_ids' fields and whether they
    may be clicked."""
    found = {}
    for button in message.buttons():
        fields = PUZZLE_ID.parse(button["custom_id"])
        if fields is not None:
            found[int(fields["cell"])] = {
                **fields,
                "custom_id": button["custom_id"],
                "disabled": str(button.get("disabled", False)),
            }
    return found


def right_line(puzzle: Puzzle) -> list[int]:
    """The solver's moves of a right answer: the solution, then at each step the lowest move
    that keeps the win in time."""
    moves: list[int] = []
    cell = puzzle.solution
    while True:
        answered = step(puzzle, moves, cell)
        moves.append(cell)
        if answered.kind is StepKind.SOLVED:
            return moves
        assert answered.kind is StepKind.GOES_ON
        position = answered.next_position
        assert position is not None
        cell = next(
            move
            for move in position.legal_moves
            if step(puzzle, moves, move).kind in (StepKind.GOES_ON, StepKind.SOLVED)
        )


def wrong_move(puzzle: Puzzle) -> int:
    """The lowest free cell that is not the puzzle's answer."""
    return next(cell for cell in puzzle.board.legal_moves if cell != puzzle.solution)


async def click_cell(sim: DiscordSim, user: SimUser, message: SimMessage, cell: int) -> SimMessage:
    ix = await sim.click(user, message, puzzle_buttons(message)[cell]["custom_id"])
    assert ix.response_type == 7, (ix.response_type, ix.content)  # the same message, edited
    assert ix.message is not None
    return ix.message


async def open_puzzle(
    sim: DiscordSim, user: SimUser, channel: SimChannel | None = None
) -> SimMessage:
    ix = await sim.slash(user, channel or sim.seed.channel, "ttt puzzle today")
    assert ix.ephemeral, ix.content
    assert ix.message is not None
    assert ix.message.interaction_user is user
    return ix.message


async def solve(sim: DiscordSim, user: SimUser, message: SimMessage, puzzle: Puzzle) -> SimMessage:
    """Play the right line; each answer shows the defender's reply in English."""
    moves: list[int] = []
    for cell in right_line(puzzle):
        answered = step(puzzle, moves, cell)
        message = await click_cell(sim, user, message, cell)
        assert answered.reply is not None
        assert reply_sentence(answered.reply, ENGLISH_LANGUAGE) in text_of(message)
        moves.append(cell)
    return message


def footer_puzzle(message: SimMessage) -> str:
    found = re.search(r"Puzzle ([0-9a-z-]+), proven", text_of(message))
    assert found is not None, text_of(message)
    return found[1]


@both_engines
async def test_the_daily_puzzle_solved_right_on_the_first_try(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    puzzle = todays()
    async with harness.running():
        shown = await open_puzzle(sim, s.alice)
        text = text_of(shown)
        assert "Puzzle of the day" in text
        assert "November 26, 2026" in text
        assert f"**{puzzle.statement}**" in text
        assert task_sentence(puzzle, ENGLISH_LANGUAGE) == puzzle.statement
        assert footer_puzzle(shown) == puzzle.id
        cells = puzzle_buttons(shown)
        assert len(cells) == puzzle.size**2
        free = {cell for cell, fields in cells.items() if fields["disabled"] == "False"}
        assert free == set(puzzle.board.legal_moves)
        assert {fields["moves"] for fields in cells.values()} == {""}

        solved = await solve(sim, s.alice, shown, puzzle)
        stats = await sim.slash(s.bob, s.channel, "ttt puzzle stats", member=s.alice)

    final = text_of(solved)
    assert "🏆 **Solved on the first try!**" in final
    assert "🔥 Streak: 1 day in a row." in final
    # Once solved, nothing is left to click, and there is nothing to try again.
    assert all(fields["disabled"] == "True" for fields in puzzle_buttons(solved).values())
    assert not [b for b in solved.buttons() if PUZZLE_AGAIN_ID.parse(b["custom_id"])]
    # The stats are public, and name the day's solvers of this server without pinging them.
    assert not stats.ephemeral
    shown_stats = text_of(stats)
    assert "Solved: 1 of 1 answered, 1 on the first try." in shown_stats
    assert "🔥 Streak: 1 day in a row. Best: 1 day." in shown_stats
    assert "Today's puzzle: solved." in shown_stats
    assert f"<@{s.alice.id}> ★" in shown_stats


async def test_a_wrong_answer_is_refuted_and_a_second_try_solves_it_in_german(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    s.bob.locale = "de"
    puzzle = todays()
    wrong = wrong_move(puzzle)
    refutation = refute(puzzle.board, wrong)
    async with harness.running():
        shown = await open_puzzle(sim, s.bob)
        assert f"**{task_sentence(puzzle, GERMAN)}**" in text_of(shown)
        assert GERMAN.gettext("Puzzle of the day") in text_of(shown)
        missed = await click_cell(sim, s.bob, shown, wrong)
        # The message is edited in place by each click: read it as it was.
        text = text_of(missed)
        played = {
            cell for cell, fields in puzzle_buttons(missed).items() if fields["disabled"] == "True"
        }
        again = await sim.click(s.bob, missed, button_id(missed, PUZZLE_AGAIN_ID))
        assert again.message is not None
        fresh = again.message
        fresh_moves = {fields["moves"] for fields in puzzle_buttons(fresh).values()}
        solved = await solve_in(sim, s.bob, fresh, puzzle)
        stats = await sim.slash(s.bob, s.channel, "ttt puzzle stats")

    sentence = refutation_sentence(refutation, GERMAN)
    assert sentence != refutation.sentence  # in German, not English
    assert f"❌ {sentence}" in text
    assert GERMAN.gettext("Not solved: try again from the start.") in text
    # The refutation is played on the board: the wrong move and the answer to it.
    taken_before = {cell for cell in range(puzzle.size**2) if puzzle.board[cell] is not None}
    assert {wrong, refutation.reply} <= played - taken_before
    # Try again starts over, from the puzzle's own position.
    assert fresh_moves == {""}
    assert GERMAN.gettext("Solved.") in text_of(solved)
    assert GERMAN.gettext("Solved on the first try!") not in text_of(solved)
    shown_stats = text_of(stats)
    # The stats are public: in the server's language, not bob's.
    assert "Solved: 1 of 1 answered, 0 on the first try." in shown_stats
    assert f"<@{s.bob.id}>" in shown_stats
    assert f"<@{s.bob.id}> ★" not in shown_stats


async def solve_in(
    sim: DiscordSim, user: SimUser, message: SimMessage, puzzle: Puzzle
) -> SimMessage:
    """Play the right line, whatever the language."""
    for cell in right_line(puzzle):
        message = await click_cell(sim, user, message, cell)
    return message


async def test_the_days_puzzle_is_the_same_everywhere_and_after_a_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        here = footer_puzzle(await open_puzzle(sim, s.alice))
        in_dm = footer_puzzle(await open_puzzle(sim, s.bob, sim.dm_channel(s.bob)))
        # Outside servers there are no solvers of a server to name.
        dm_stats = text_of(await sim.slash(s.bob, sim.dm_channel(s.bob), "ttt puzzle stats"))
        other_guild = footer_puzzle(await open_puzzle(sim, s.alice, s.other_channel))
    async with harness.running():
        after_restart = footer_puzzle(await open_puzzle(sim, s.carol))
        harness.clock.advance(DAY_SECONDS)
        tomorrow = footer_puzzle(await open_puzzle(sim, s.carol))
    assert here == in_dm == other_guild == after_restart == todays().id
    assert "Today's puzzle: not solved yet." in dm_stats
    assert "in this server" not in dm_stats
    assert tomorrow == todays(DAY + datetime.timedelta(days=1)).id != here


async def test_streaks_count_days_in_a_row_on_the_manual_clock(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        for offset in range(3):
            day = DAY + datetime.timedelta(days=offset)
            solved = await solve_in(sim, s.alice, await open_puzzle(sim, s.alice), todays(day))
            assert f"Streak: {offset + 1} day" in text_of(solved)
            harness.clock.advance(DAY_SECONDS)
        # A day missed ends the streak once the next has passed too; the best stays.
        still = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
        harness.clock.advance(DAY_SECONDS)
        broken = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
        solved = await solve_in(
            sim, s.alice, await open_puzzle(sim, s.alice), todays(DAY + datetime.timedelta(4))
        )
    assert "Streak: 3 days in a row. Best: 3 days." in text_of(still)
    assert "Today's puzzle: not solved yet." in text_of(still)
    assert "Streak: 0 days in a row. Best: 3 days." in text_of(broken)
    assert "Streak: 1 day in a row." in text_of(solved)
    assert "Nobody yet: `/ttt puzzle today`." in text_of(broken)


async def test_a_solved_puzzle_answered_again_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    puzzle = todays()
    async with harness.running():
        await solve_in(sim, s.alice, await open_puzzle(sim, s.alice), puzzle)
        missed = await click_cell(sim, s.alice, await open_puzzle(sim, s.alice), wrong_move(puzzle))
        stats = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
    assert "You solved this puzzle already: this try changes nothing." in text_of(missed)
    assert "Solved: 1 of 1 answered, 1 on the first try." in text_of(stats)


async def test_a_second_click_on_the_move_that_ended_an_attempt_counts_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A double click: the second arrives with the button as it was before the first's edit."""
    s = sim.seed
    puzzle = todays()
    wrong = wrong_move(puzzle)
    async with harness.running() as bot:
        shown = await open_puzzle(sim, s.alice)
        custom_id = puzzle_buttons(shown)[wrong]["custom_id"]
        await click_cell(sim, s.alice, shown, wrong)
        again = await sim.click(s.alice, shown, custom_id, stale=True)
        (result,) = await bot.storage.puzzle_results(s.alice.id)
    refused(again, "That button is no longer on this message")
    assert (result.tries, result.solved) == (1, False)


async def test_a_puzzle_answered_after_its_day_is_played_out_but_not_counted(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A message kept open past midnight must not fill in a missed day of a streak."""
    s = sim.seed
    puzzle = todays()
    async with harness.running():
        kept = await open_puzzle(sim, s.alice)
        harness.clock.advance(DAY_SECONDS)
        late = await solve(sim, s.alice, kept, puzzle)
        stats = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
    text = text_of(late)
    assert "This was an earlier day's puzzle: it no longer counts." in text
    assert "Solved" not in text
    assert "Solved: 0 of 0 answered, 0 on the first try." in text_of(stats)


async def test_hand_made_puzzle_buttons_change_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    puzzle = todays()
    async with harness.running():
        shown = await open_puzzle(sim, s.alice)
        fields = puzzle_buttons(shown)[puzzle.solution]
        tomorrow = (DAY + datetime.timedelta(days=1)).strftime("%Y%m%d")
        other = next(kept for kept in POOL if kept.id != puzzle.id).id
        # An earlier day's puzzle drawn in the other form (a classic message, or a
        # components-v2 one): its answer could not be shown on this message.
        earlier = next(
            day
            for day in (DAY - datetime.timedelta(days=back) for back in range(1, 60))
            if uses_layout(todays(day).size) != uses_layout(puzzle.size)
        )
        other_form = todays(earlier)
        forged = [
            # A day to come, a date that is none, a line that is not the puzzle's, and another
            # puzzle than the day's (a message drawn before the pool changed).
            cell_id(tomorrow, puzzle.id, "", puzzle.solution),
            cell_id("20261399", puzzle.id, "", puzzle.solution),
            cell_id(fields["day"], puzzle.id, "00", puzzle.solution),
            cell_id(fields["day"], other, "", puzzle.solution),
            # The earlier day's puzzle, rightly named, and its Try again, on this message.
            cell_id(encode_day(earlier), other_form.id, "", other_form.solution),
            PUZZLE_AGAIN_ID.build(day=encode_day(earlier), puzzle=other_form.id),
            # A cell as drawn before cells carried the day's tries.
            LEGACY_PUZZLE_ID.build(
                day=fields["day"], puzzle=puzzle.id, moves="", cell=puzzle.solution
            ),
        ]
        answers = []
        for custom_id in forged:
            # As if the message carried them: a client shows what the bot drew.
            answers.append(await sim.click(s.alice, shown, custom_id, forged=True))
        stats = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
    for ix in answers:
        refused(ix, NOT_THIS_PUZZLE)
    assert "Solved: 0 of 0 answered" in text_of(stats)
    assert decode_moves(fields["moves"]) == ()


def cell_id(day: str, puzzle: str, moves: str, cell: int, tries: int = 0) -> str:
    return PUZZLE_ID.build(day=day, puzzle=puzzle, tries=tries, moves=moves, cell=cell)


@both_engines
async def test_two_wrong_clicks_at_the_same_moment_count_one_try(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Two cells clicked on one message at once, each ending the attempt: the first to be
    counted shows its refutation on the message, the other is told privately that an answer
    was counted before it; a message drawn afterwards counts the next try."""
    s = sim.seed
    puzzle = todays()
    first, second = [cell for cell in puzzle.board.legal_moves if cell != puzzle.solution][:2]
    async with harness.running() as bot:
        shown = await open_puzzle(sim, s.alice)
        buttons = puzzle_buttons(shown)
        answers = await asyncio.gather(
            sim.click(s.alice, shown, buttons[first]["custom_id"]),
            sim.click(s.alice, shown, buttons[second]["custom_id"]),
        )
        (once,) = await bot.storage.puzzle_results(s.alice.id)
        later = await click_cell(sim, s.alice, await open_puzzle(sim, s.alice), first)
        (twice,) = await bot.storage.puzzle_results(s.alice.id)
    edited = [ix for ix in answers if ix.response_type == 7]
    told = [ix for ix in answers if ix.response_type != 7]
    assert len(edited) == len(told) == 1, [ix.response_type for ix in answers]
    refused(told[0], "That answer came after another one was counted")
    assert (once.tries, once.solved) == (1, False)
    assert all(button["tries"] == "1" for button in puzzle_buttons(later).values())
    assert twice.tries == 2


# -- drills ---------------------------------------------------------------------------------

# X A1, O B2, X A2, O B1? (A3 kept the draw), X A3 wins: bob's B1 lost the draw.
BLUNDER_GAME = ["A1", "B2", "A2", "B1", "A3"]
BEFORE_BLUNDER = Board.from_string("X../XO./...")


async def review_of_game(sim: DiscordSim, user: SimUser, board: SimMessage) -> SimMessage:
    """The review of a finished board for ``user`` alone (a 5x5 game's, searched, may come
    after a deferral on a busy machine)."""
    ix = await sim.click(user, board, button_id(board, GAME_ACTION_ID, action="review"))
    return await private_answer(ix)


async def test_a_drill_from_a_known_blunder_is_answered_and_spaced_until_learned(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        board = await play_member_game(sim, BLUNDER_GAME)
        bobs_review = await review_of_game(sim, s.bob, board)
        alices_review = await review_of_game(sim, s.alice, board)
        carols_review = await review_of_game(sim, s.carol, board)
        # /ttt review offers the same, to the same player alone.
        bobs_typed = await private_answer(await sim.slash(s.bob, s.channel, "ttt review"))
        alices_typed = await private_answer(await sim.slash(s.alice, s.channel, "ttt review"))
        practise = await sim.click(s.bob, bobs_review, button_id(bobs_review, PRACTISE_ID))
        assert practise.ephemeral
        assert practise.message is not None
        asked = practise.message
        text = text_of(asked)  # before the answer edits it
        wrong = await sim.click(s.bob, asked, drill_cell(asked, "B1"))
        too_soon = await sim.slash(s.bob, s.channel, "ttt drill")
        harness.clock.advance(AGAIN_AFTER_WRONG)
        answers = []
        for interval in (0, *DRILL_INTERVALS):
            harness.clock.advance(interval * DAY_SECONDS)
            again = await sim.slash(s.bob, s.channel, "ttt drill")
            assert again.ephemeral, again.content
            assert again.message is not None
            answered = await sim.click(s.bob, again.message, drill_cell(again.message, "A3"))
            answers.append(text_of(answered))
        learned = await sim.slash(s.bob, s.channel, "ttt drill")

    # Only the player who made the mistake is offered to practise it.
    assert not [b for b in alices_review.buttons() if PRACTISE_ID.parse(b["custom_id"])]
    assert not [b for b in carols_review.buttons() if PRACTISE_ID.parse(b["custom_id"])]
    assert button_id(bobs_typed, PRACTISE_ID) == button_id(bobs_review, PRACTISE_ID)
    assert not [b for b in alices_typed.buttons() if PRACTISE_ID.parse(b["custom_id"])]
    assert "1 drill from game #1: here is the first." in text
    assert "The game was a draw here: find a move that keeps the draw." in text
    assert "In the game, B1 was played here." in text
    refutation = refute(BEFORE_BLUNDER, parse_cell("B1", 3))
    assert refutation.sentence == "B1? A3 completes a line: X wins."
    assert "❌ B1? A3 completes a line: X wins." in text_of(wrong)
    refused(too_soon, "No drill is due now: your next one is due <t:")
    assert all("✅ A3 keeps the draw." in answer for answer in answers)
    for answer in answers[:-1]:
        assert "It comes back <t:" in answer, answer
    assert "🎓 Learned: right 4 times in a row." in answers[-1]
    refused(learned, "Every drill of yours is learned")


async def test_practise_this_again_waits_for_the_schedule_and_next_drill_crosses_sizes(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Drills of a 3x3 and of a 5x5 game: the next drill is a message of its own, since a
    classic message (3x3) cannot become a components-v2 one (5x5)."""
    s = sim.seed
    async with harness.running() as bot:
        board = await play_member_game(sim, BLUNDER_GAME)
        review = await review_of_game(sim, s.bob, board)
        practise_id = button_id(review, PRACTISE_ID)
        await sim.click(s.bob, review, practise_id)
        harness.clock.advance(60)  # the 5x5 game's drills are due after the 3x3 one
        big = await play_member_game(sim, FULL_5X5, size=5)
        big_review = await review_of_game(sim, s.bob, big)
        await sim.click(s.bob, big_review, button_id(big_review, PRACTISE_ID))
        asked = await sim.slash(s.bob, s.channel, "ttt drill")
        assert asked.message is not None
        assert "From game #1, 3×3 (3 in a row)." in text_of(asked)  # noqa: RUF001
        answered = await sim.click(s.bob, asked.message, drill_cell(asked.message, "A3"))
        answered_text = text_of(answered)
        next_one = await sim.click(s.bob, asked.message, button_id(asked.message, DRILL_NEXT_ID))
        again = await sim.click(s.bob, review, practise_id)
        # The 5x5 drill's cell, hand-made onto the 3x3 drill's message: its answer could not be
        # shown there, so it is not taken.
        assert next_one.message is not None
        big_cell = next(
            fields
            for button in next_one.message.buttons()
            if not button.get("disabled")
            and (fields := DRILL_ID.parse(button["custom_id"])) is not None
        )
        forged = await sim.click(s.bob, asked.message, DRILL_ID.build(**big_cell), forged=True)
        big_drill = await bot.storage.get_drill(int(big_cell["drill"]))
    assert "✅ A3 keeps the draw." in answered_text
    assert "3 more drills are due." in answered_text
    # The next drill comes in a message of its own: the 5x5 game's first, O's D1 at move 4.
    assert next_one.response_type == 4
    assert next_one.message is not None
    assert next_one.message.ephemeral
    assert next_one.message.flags & FLAG_COMPONENTS_V2
    text = text_of(next_one.message)
    assert "From game #2, 5×5 (4 in a row)." in text  # noqa: RUF001
    assert "In the game, D1 was played here." in text
    # Practise this again on a game whose drill was answered right: not asked before its day.
    refused(again, "The drills of game #1 are kept already: the next is due <t:")
    refused(forged, NOT_THIS_DRILL)
    assert big_drill is not None
    assert big_drill.answers == 0


async def test_puzzle_results_and_drills_are_a_members_data_and_forget_me_deletes_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running():
        await solve_in(sim, s.bob, await open_puzzle(sim, s.bob), todays())
        board = await play_member_game(sim, BLUNDER_GAME)
        review = await review_of_game(sim, s.bob, board)
        await sim.click(s.bob, review, button_id(review, PRACTISE_ID))
        shown = await sim.slash(s.bob, s.channel, "ttt my-data")
        question = await sim.slash(s.bob, s.channel, "ttt forget-me")
        assert question.message is not None
        asked = text_of(question)
        done = await sim.click(
            s.bob, question.message, button_id(question.message, FORGET_ID, action="confirm")
        )
        drills = await sim.slash(s.bob, s.channel, "ttt drill")
        stats = await sim.slash(s.bob, s.channel, "ttt puzzle stats")
    assert "Daily puzzles answered on 1 day; 1 drill from your games." in text_of(shown)
    assert "Your daily puzzle results and your drills are deleted too." in asked
    assert "Your daily puzzle results and your drills are deleted." in text_of(done)
    refused(drills, "You have no drills yet")
    assert "Solved: 0 of 0 answered, 0 on the first try." in text_of(stats)


def drill_cell(message: SimMessage, cell: str, size: int = 3) -> str:
    return button_id(message, DRILL_ID, cell=str(parse_cell(cell, size)))


def reads_fail_after(
    monkeypatch: pytest.MonkeyPatch, storage: Storage, write: str, reads: tuple[str, ...]
) -> None:
    """Once ``storage``'s ``write`` went through, the database fails every one of ``reads``."""
    real = getattr(storage, write)

    async def down(*args: object) -> None:
        raise DatabaseUnavailableError("connection refused", nothing_written=True)

    async def then_down(*args: Any) -> Any:
        done = await real(*args)
        for read in reads:
            monkeypatch.setattr(storage, read, down)
        return done

    monkeypatch.setattr(storage, write, then_down)


async def test_a_solve_whose_streak_the_database_failed_to_read_still_shows_it_counted(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attempt is counted, then the streak read for its answer: a database failing at
    that read must not answer 'nothing was done' (asked again, the attempt is counted
    already). The answer shows the solve without its streak."""
    s = sim.seed
    async with harness.running() as bot:
        reads_fail_after(monkeypatch, bot.storage, "record_puzzle", ("puzzle_results",))
        solved = await solve(sim, s.alice, await open_puzzle(sim, s.alice), todays())
        monkeypatch.undo()
        stats = await sim.slash(s.alice, s.channel, "ttt puzzle stats")
    assert "🏆 **Solved on the first try!**" in text_of(solved)
    assert "Streak" not in text_of(solved)
    assert "Solved: 1 of 1 answered, 1 on the first try." in text_of(stats)


async def test_a_drill_answer_whose_queue_the_database_failed_to_read_still_shows_it_judged(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer is saved, then the queue and the game read for its message: a database
    failing at those reads must not answer 'nothing was done' (asked again, the drill is
    answered already). The message shows the judgement without the queue."""
    s = sim.seed
    async with harness.running() as bot:
        board = await play_member_game(sim, BLUNDER_GAME)
        review = await review_of_game(sim, s.bob, board)
        practise = await sim.click(s.bob, review, button_id(review, PRACTISE_ID))
        assert practise.message is not None
        reads = ("drill_queue", "get_game")
        reads_fail_after(monkeypatch, bot.storage, "answer_drill", reads)
        asked = practise.message
        answered = await sim.click(s.bob, asked, drill_cell(asked, "A3"))
        monkeypatch.undo()
    assert "✅ A3 keeps the draw." in text_of(answered), text_of(answered)
