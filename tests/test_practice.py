"""The practice rules (``bot/practice.py``) against a real storage: streaks and the drill
schedule (their doctests), and the refusals no button the bot draws can reach (a drill of
someone else's, a second answer to one question, a day that has no puzzle), each changing
nothing."""

from __future__ import annotations

import asyncio
import datetime
import doctest
from collections.abc import AsyncIterator

import pytest

import bot.practice
from bot.clock import ManualClock
from bot.domain import UserError
from bot.i18n import ENGLISH_LANGUAGE
from bot.practice import (
    ALREADY_COUNTED,
    DRILL_ANSWERED,
    NOT_THIS_DRILL,
    NOT_THIS_PUZZLE,
    NOT_YOUR_DRILL,
    PracticeService,
    PuzzleStats,
    Streak,
    day_of,
    schedule,
    streak,
)
from bot.render import puzzle_stats_message
from bot.storage import NewDrill, PuzzleResult
from bot.storage.sqlite import SqliteStorage
from game import parse_cell
from game.puzzles import DAILY_EPOCH

NOON = datetime.datetime(2026, 11, 26, 12, tzinfo=datetime.UTC).timestamp()
ALICE, BOB = 101, 102
# O to move after X A1, O B2, X A2: only A3 keeps the draw (B1 lost it in the game).
DRILL = "X../XO./... k3 draw B1"


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(bot.practice, verbose=False)
    assert tried > 0
    assert failures == 0


def test_a_day_is_the_day_in_utc() -> None:
    assert day_of(NOON) == datetime.date(2026, 11, 26)
    assert day_of(NOON + 12 * 3600 - 1) == datetime.date(2026, 11, 26)
    assert day_of(NOON + 12 * 3600) == datetime.date(2026, 11, 27)


def test_a_streak_still_stands_on_the_day_after_its_last() -> None:
    day = datetime.date(2026, 3, 10)
    solved = [day - datetime.timedelta(days=n) for n in range(5)]
    assert streak(solved, day) == Streak(5, 5)
    assert streak(solved, day + datetime.timedelta(days=1)) == Streak(5, 5)
    assert streak(solved, day + datetime.timedelta(days=2)) == Streak(0, 5)
    assert streak([], day) == Streak(0, 0)


def test_a_drill_comes_back_after_1_3_then_7_days_and_is_learned_at_the_fourth_right() -> None:
    """The schedule docs/playing.md promises, in days and minutes rather than in the module's
    own constants (the end-to-end test follows those)."""
    day = 86_400.0
    now, in_row, waits = 0.0, 0, []
    for _ in range(3):
        in_row, due_at, learned_at = schedule(in_row, True, now)
        assert learned_at is None
        waits.append((due_at - now) / day)
        now = due_at
    assert waits == [1, 3, 7]
    assert schedule(in_row, True, now) == (4, now, now)
    # A wrong answer, even after three right ones: back in 10 minutes, counting from nothing.
    assert schedule(3, False, now) == (0, now + 10 * 60, None)


def test_a_servers_solvers_of_the_day_name_thirty_and_count_the_rest() -> None:
    """However many solve the day's puzzle in a server, the stats stay one short message."""
    day = datetime.date(2026, 11, 26)
    solvers = tuple(
        PuzzleResult(1000 + n, day, "5h-00000000", 10, 1, NOON + n, n % 2 == 0) for n in range(32)
    )
    stats = PuzzleStats(day, 1, 1, 1, Streak(1, 1), True, True, solvers)
    message = puzzle_stats_message(stats, "alice", ENGLISH_LANGUAGE)
    assert message.embed is not None
    text = str(message.embed.description)
    named = text.split("\n")[-2]
    assert named.startswith("<@1000> ★, <@1001>, <@1002> ★")
    assert named.endswith("<@1028> ★, <@1029>, and 2 more")
    assert "<@1030>" not in text
    # Mentioned, never pinged.
    assert message.payload()["allowed_mentions"] == {"parse": []}


@pytest.fixture
async def practice() -> AsyncIterator[PracticeService]:
    clock = ManualClock(NOON)
    storage = await SqliteStorage.open(":memory:", clock)
    try:
        yield PracticeService(storage, clock)
    finally:
        await storage.close()


async def kept_drill(practice: PracticeService) -> int:
    (record,) = await practice.storage.add_drills([NewDrill(ALICE, 10, 1, DRILL, NOON)])
    return record.id


async def test_a_drill_answers_only_to_its_member(practice: PracticeService) -> None:
    drill_id = await kept_drill(practice)
    with pytest.raises(UserError) as refused:
        await practice.answer_drill(BOB, drill_id, 0, parse_cell("A3", 3))
    assert refused.value.template == NOT_YOUR_DRILL
    stored = await practice.storage.get_drill(drill_id)
    assert stored is not None
    assert stored.answers == 0


async def test_a_drill_question_takes_one_answer(practice: PracticeService) -> None:
    drill_id = await kept_drill(practice)
    answered = await practice.answer_drill(ALICE, drill_id, 0, parse_cell("A3", 3))
    assert answered.answer is not None
    assert answered.answer.right
    assert answered.record.right_in_row == 1
    # The same question again (a second click, an old message) is refused, unchanged.
    with pytest.raises(UserError) as refused:
        await practice.answer_drill(ALICE, drill_id, 0, parse_cell("B1", 3))
    assert refused.value.template == DRILL_ANSWERED
    stored = await practice.storage.get_drill(drill_id)
    assert stored == answered.record


async def test_a_drill_gone_or_a_cell_taken_is_a_sentence(practice: PracticeService) -> None:
    with pytest.raises(UserError, match="no longer kept"):
        await practice.answer_drill(ALICE, 999, 0, 0)
    drill_id = await kept_drill(practice)
    with pytest.raises(UserError) as refused:
        await practice.answer_drill(ALICE, drill_id, 0, parse_cell("A1", 3))  # taken
    assert refused.value.template == NOT_THIS_DRILL


async def test_a_day_without_a_puzzle_is_refused(practice: PracticeService) -> None:
    today = practice.today()
    for day in (today + datetime.timedelta(days=1), DAILY_EPOCH - datetime.timedelta(days=1)):
        with pytest.raises(UserError) as refused:
            await practice.answer_puzzle(ALICE, 10, day, "4w-f8fe2513", 0, (), 0)
        assert refused.value.template == NOT_THIS_PUZZLE
    assert await practice.storage.puzzle_results(ALICE) == []


async def test_a_message_of_another_puzzle_or_line_is_refused(practice: PracticeService) -> None:
    """A message drawn before the pool changed names its own puzzle: its clicks would mean
    another position. A line that is not the puzzle's is hand-made."""
    today = practice.today()
    puzzle = (await practice.puzzle(ALICE)).puzzle
    other = next(kept for kept in practice.pool if kept.id != puzzle.id)
    wrong = next(cell for cell in puzzle.board.legal_moves if cell != puzzle.solution)
    for puzzle_id, moves in ((other.id, ()), (puzzle.id, (wrong,))):
        with pytest.raises(UserError) as refused:
            await practice.answer_puzzle(ALICE, 10, today, puzzle_id, 0, moves, puzzle.solution)
        assert refused.value.template == NOT_THIS_PUZZLE
    with pytest.raises(UserError) as refused:
        await practice.puzzle(ALICE, today, other.id)
    assert refused.value.template == NOT_THIS_PUZZLE
    assert await practice.storage.puzzle_results(ALICE) == []


async def test_an_attempt_is_counted_once_and_a_stale_message_is_told_so(
    practice: PracticeService,
) -> None:
    """Two wrong clicks on one message at the same moment: one counts; the other is told that
    an answer was counted before it. A message drawn after it carries the new count."""
    today = practice.today()
    shown = await practice.puzzle(ALICE)
    puzzle = shown.puzzle
    wrong = [cell for cell in puzzle.board.legal_moves if cell != puzzle.solution][:2]
    both = await asyncio.gather(
        *(
            practice.answer_puzzle(ALICE, 10, today, puzzle.id, shown.tries, (), cell)
            for cell in wrong
        ),
        return_exceptions=True,
    )
    refusals = [outcome for outcome in both if isinstance(outcome, UserError)]
    assert len(refusals) == 1, both
    assert refusals[0].template == ALREADY_COUNTED
    (result,) = await practice.storage.puzzle_results(ALICE)
    assert (result.tries, result.solved) == (1, False)
    again = await practice.puzzle(ALICE, today, puzzle.id)
    assert (shown.tries, again.tries) == (0, 1)
    missed = await practice.answer_puzzle(ALICE, 10, today, puzzle.id, again.tries, (), wrong[0])
    assert missed.result is not None
    assert missed.result.tries == 2


async def test_a_drill_is_not_answered_before_it_is_due(practice: PracticeService) -> None:
    drill_id = await kept_drill(practice)
    answered = await practice.answer_drill(ALICE, drill_id, 0, parse_cell("A3", 3))
    with pytest.raises(UserError, match="not due yet"):
        await practice.answer_drill(ALICE, drill_id, 1, parse_cell("A3", 3))
    assert await practice.storage.get_drill(drill_id) == answered.record
