"""Puzzles (``game/puzzles.py``): the line format and its errors, verification against the exact
values (hand-made puzzles, right and wrong, each rejected for its own reason), the shipped pool
proven in full, the daily choice, stable across processes and through the whole pool, and
stepping through a puzzle's line move by move (every WIN of the pool finishes in its count)."""

from __future__ import annotations

import dataclasses
import datetime
import doctest
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import game.puzzles
from game.board import Board, Mark, parse_cell
from game.puzzles import (
    DAILY_EPOCH,
    MIN_CHOICES,
    POOL_PATH,
    Puzzle,
    Reason,
    Step,
    StepKind,
    Task,
    canonical_key,
    generate,
    line_position,
    load_pool,
    puzzle_id,
    puzzle_of_the_day,
    puzzle_task,
    refute,
    reply,
    step,
    verify,
    verify_pool,
)
from game.symmetry import cell_permutations

REPO = Path(__file__).resolve().parent.parent
# X plays C4: three in row 4 (D4 completes it) and three in column C (C2 completes it).
FORK_IN_TWO = "4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2 C4"
# From the shipped pool: O's only winning move, and a win in 3.
WIN_IN_THREE = "4w-2b368c0e X.XO/XXO./..O./.X.O k4 O win3 D3"
# From the shipped pool: a 5x5 draw that only B3 keeps.
HOLD_5X5 = "5h-93c44310 O...O/XX..X/..O../XX.../....O k4 O hold B3"
# From the shipped pool: after B2 and O's answer A1, X completes column B with B3; A2 instead
# makes a second threat (D2) and still wins, but in 2 more moves where 1 was left.
SLOW_SECOND_MOVE = "4w-b2c464e6 .XOO/..X./O.X./OXOX k4 X win2 B2"
# X to play wins with B3 and with D4: no single answer.
TWO_WINNING_MOVES = "OXOX/.OX./X..X/.OO."
# O to play draws with B1 and with B3, and loses with anything else.
TWO_DRAWING_MOVES = "X..X/OX.O/X.OO/XX.O"


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(game.puzzles, verbose=False)
    assert tried > 0
    assert failures == 0


# -- the line format --------------------------------------------------------------------------


def test_a_line_reads_into_its_fields_and_writes_back_the_same() -> None:
    puzzle = Puzzle.from_line(WIN_IN_THREE)
    assert puzzle.id == "4w-2b368c0e"
    assert str(puzzle.board) == "X.XO/XXO./..O./.X.O"
    assert puzzle.board.line_length == 4
    assert puzzle.turn is Mark.O
    assert puzzle.task is Task.WIN
    assert puzzle.moves == 3
    assert puzzle.solution == parse_cell("D3", 4)
    assert puzzle.statement == "O to play and win in 3"
    assert puzzle.line() == WIN_IN_THREE
    hold = Puzzle.from_line(HOLD_5X5)
    assert (hold.task, hold.moves, hold.size) == (Task.HOLD, None, 5)
    assert hold.statement == "O to play: only one move keeps the draw"
    assert hold.line() == HOLD_5X5


def test_every_pool_line_round_trips() -> None:
    for puzzle in load_pool():
        assert Puzzle.from_line(puzzle.line()) == puzzle


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2", "a puzzle line has 6 fields"),
        ("4W_x .OX./OO../O.X./XX.. k4 X win2 C4", 'puzzle id "4W_x" is not an id'),
        ("p1 .OX./OO../O.X./XX. k4 X win2 C4", "puzzle line's board: "),
        ("p1 .OX./OO../O.X./XX.. four X win2 C4", 'line length "four" is not k'),
        ("p1 .OX./OO../O.X./XX.. k5 X win2 C4", "line length must be between 3 and 4"),
        ("p1 .OX./OO../O.X./XX.. k4 Y win2 C4", 'side to move "Y" is not X or O'),
        ("p1 .OX./OO../O.X./XX.. k4 O win2 C4", "says O to play, but the board has X"),
        ("p1 .OX./OO../O.X./XX.. k4 X lose C4", 'task "lose" is not win1 to win9 or hold'),
        ("p1 .OX./OO../O.X./XX.. k4 X win0 C4", 'task "win0" is not win1'),
        ("p1 .OX./OO../O.X./XX.. k4 X win2 E4", 'puzzle line\'s move: "E4" is not a cell'),
        ("p1 .OX./OO../O.X./XX.. k4 X win2 B1", "move: cannot play B1: it is taken by O"),
        ("p1 XXXX/OOO./..../.... k4 O hold D2", "move: cannot play D2: the game is over"),
    ],
)
def test_a_wrong_line_says_what_is_wrong(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        Puzzle.from_line(line)
    assert "\n" not in str(raised.value)


def test_a_puzzle_is_checked_for_its_shape_when_made() -> None:
    board = Board.from_string(".OX./OO../O.X./XX..")
    with pytest.raises(ValueError, match="a win puzzle needs its number of moves"):
        Puzzle("p1", board, Task.WIN, parse_cell("C4", 4))
    with pytest.raises(ValueError, match="a hold puzzle has no number of moves, not 2"):
        Puzzle("p1", board, Task.HOLD, parse_cell("C4", 4), 2)


# -- verification -----------------------------------------------------------------------------


@pytest.mark.parametrize("line", [FORK_IN_TWO, WIN_IN_THREE, HOLD_5X5])
def test_verify_accepts_true_puzzles(line: str) -> None:
    verify(Puzzle.from_line(line))


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        # The right move, the wrong count: C4 forks, so the win takes 2 moves, not 3.
        (FORK_IN_TWO.replace("win2", "win3"), "C4 wins in 2 moves of X's against the best "),
        # Another move: only C4 wins.
        (FORK_IN_TWO.replace("C4", "D4"), "D4 does not win: C4 is the only winning move"),
        (f"p1 {TWO_WINNING_MOVES} k4 X win2 B3", "2 moves win (B3, D4): a win puzzle has exactly"),
        # A won position is no hold puzzle.
        (FORK_IN_TWO.replace("win2", "hold"), "X to play wins (C4): not a drawing position"),
        (f"p1 {TWO_DRAWING_MOVES} k4 O hold B1", "2 moves keep the draw (B1, B3): a hold puzzle"),
        (f"p1 {TWO_DRAWING_MOVES} k4 O win2 B1", "O to play cannot force a win: with best play O"),
        (HOLD_5X5.replace("B3", "A3"), "A3 loses: B3 is the only move that keeps the draw"),
    ],
)
def test_verify_rejects_a_false_puzzle_with_the_reason(line: str, reason: str) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(reason)):
        verify(Puzzle.from_line(line))


def test_verify_rejects_a_position_already_over() -> None:
    """A Puzzle refuses a finished game when made; one whose board was swapped for a finished
    one afterwards is refused by verify too."""
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    over = Board.from_string("XXXX/OOO./..../....")
    with pytest.raises(ValueError, match="the game is over"):
        dataclasses.replace(puzzle, board=over)
    object.__setattr__(puzzle, "board", over)
    with pytest.raises(ValueError, match=r"^the position is over"):
        verify(puzzle)


def test_verify_pool_rejects_a_duplicate_up_to_symmetry() -> None:
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    mirror = cell_permutations(4)[4]  # reflection across the vertical axis
    x_mask, o_mask = puzzle.board.masks
    flipped = Board.from_masks(
        sum(1 << mirror[cell] for cell in range(16) if x_mask >> cell & 1),
        sum(1 << mirror[cell] for cell in range(16) if o_mask >> cell & 1),
        4,
    )
    turned = Puzzle("p2", flipped, Task.WIN, mirror[puzzle.solution], 2)
    verify(turned)  # the mirror image is as true
    assert puzzle_id(flipped, Task.WIN) == puzzle.id
    with pytest.raises(ValueError, match=r"puzzle 2 .*: puzzle 1's position, up to symmetry"):
        verify_pool([puzzle, turned])
    with pytest.raises(ValueError, match=r"puzzle 2 .*: id 4w-f8fe2513 is puzzle 1's too"):
        verify_pool([puzzle, dataclasses.replace(Puzzle.from_line(HOLD_5X5), id=puzzle.id)])


# -- generation -------------------------------------------------------------------------------


def test_generation_is_deterministic_and_keeps_only_proven_interesting_puzzles() -> None:
    first = generate(4, random.Random(7), {2: 4}, 0, max_games=300)
    again = generate(4, random.Random(7), {2: 4}, 0, max_games=300)
    assert [puzzle.line() for puzzle in first] == [puzzle.line() for puzzle in again]
    assert len(first) == 4
    verify_pool(first)
    for puzzle in first:
        assert len(puzzle.board.legal_moves) >= MIN_CHOICES
        assert puzzle_task(puzzle.board) == puzzle


def test_a_position_where_the_opponent_threatens_a_line_is_no_puzzle() -> None:
    """O to play must block A1..D1's last cell, D1: the only move that keeps the draw, but a
    block, so not a puzzle."""
    board = Board.from_string("XXX./O.O./..../.O.X")
    assert board.turn is Mark.O
    assert puzzle_task(board) is None


# -- the shipped pool -------------------------------------------------------------------------


@pytest.mark.slow  # the whole pool proven: 2 s of CPU
def test_the_whole_shipped_pool_is_proven() -> None:
    """Every line, as ``python -m game.puzzles verify`` does (about a second)."""
    verify_pool(load_pool())


def test_the_pool_mixes_sizes_and_tasks_with_no_duplicate_up_to_symmetry() -> None:
    pool = load_pool()
    assert 200 <= len(pool) <= 400
    kinds = Counter((puzzle.size, puzzle.task) for puzzle in pool)
    assert set(kinds) == {(size, task) for size in (4, 5) for task in Task}
    assert {puzzle.moves for puzzle in pool if puzzle.task is Task.WIN} == {2, 3, 4}
    assert {puzzle.turn for puzzle in pool} == {Mark.X, Mark.O}
    assert len({canonical_key(puzzle.board) for puzzle in pool}) == len(pool)
    assert len({puzzle.id for puzzle in pool}) == len(pool)
    assert all(puzzle.id == puzzle_id(puzzle.board, puzzle.task) for puzzle in pool)


def test_the_pool_verify_command_exits_1_naming_a_false_line(tmp_path: Path) -> None:
    bad_pool = tmp_path / "puzzles.txt"
    bad_pool.write_text("# a comment\n" + FORK_IN_TWO.replace("win2", "win3") + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "game.puzzles", "verify", "--path", str(bad_pool)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"not proven: puzzle 1 ({FORK_IN_TWO.replace('win2', 'win3')}): C4 wins in 2 moves of "
        "X's against the best defence, not in 3"
    )


def test_a_pool_line_that_is_no_puzzle_names_its_line_number(tmp_path: Path) -> None:
    bad_pool = tmp_path / "puzzles.txt"
    bad_pool.write_text(f"# header\n\n{FORK_IN_TWO}\n{FORK_IN_TWO} extra\n")
    with pytest.raises(ValueError, match=r"^puzzles\.txt line 4: a puzzle line has 6 fields"):
        load_pool(bad_pool)


def test_the_pool_file_says_how_it_was_made() -> None:
    header = POOL_PATH.read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("# tttbot puzzles: made by `python -m game.puzzles build --seed 1`")
    assert f"{len(load_pool())} in all" in header


# -- the daily puzzle -------------------------------------------------------------------------


def test_a_date_always_gets_the_same_puzzle() -> None:
    pool = load_pool()
    assert puzzle_of_the_day(datetime.date(2026, 11, 26), pool).id == "5w-ad180a7d"
    assert puzzle_of_the_day(datetime.date(2027, 1, 1), pool).id == "4w-2b368c0e"
    # The order of the pool's lines does not matter: only the ids do.
    reordered = tuple(reversed(pool))
    assert puzzle_of_the_day(datetime.date(2026, 11, 26), reordered).id == "5w-ad180a7d"


def test_the_daily_puzzle_is_the_same_in_another_process_with_another_hash_seed() -> None:
    code = (
        "import datetime; from game.puzzles import load_pool, puzzle_of_the_day; "
        "print(puzzle_of_the_day(datetime.date(2026, 11, 26), load_pool()).id)"
    )
    for hash_seed in ("1", "12345"):
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        )
        assert result.stdout.strip() == "5w-ad180a7d"


def test_the_daily_puzzle_goes_through_the_whole_pool_before_repeating() -> None:
    pool = load_pool()
    for cycle in (0, 1, -1):
        start = DAILY_EPOCH + datetime.timedelta(days=cycle * len(pool))
        chosen = [
            puzzle_of_the_day(start + datetime.timedelta(days=day), pool).id
            for day in range(len(pool))
        ]
        assert sorted(chosen) == sorted(puzzle.id for puzzle in pool)
    first = [puzzle_of_the_day(DAILY_EPOCH + datetime.timedelta(days=d), pool) for d in range(30)]
    assert len({puzzle.id for puzzle in first}) == 30


def test_across_a_cycles_end_a_puzzle_can_come_back_sooner() -> None:
    """What docs/playing.md says, exactly: no puzzle comes back within a cycle (above), but each
    cycle has its own order, so across a cycle's end one can come back sooner than a cycle.
    With the shipped pool, 4w-ba1d0c47 is the 290th of the first cycle (2026-10-17) and the
    5th of the second (2026-11-11): 25 days. It can be the next day: with a pool of two, the
    last puzzle of the fourth cycle is the first of the fifth."""
    pool = load_pool()
    shown = [
        puzzle_of_the_day(DAILY_EPOCH + datetime.timedelta(days=day), pool).id
        for day in range(2 * len(pool))
    ]
    returns = [
        day - shown.index(shown[day])
        for day in range(len(pool), 2 * len(pool))
        if shown.index(shown[day]) < len(pool)
    ]
    assert len(returns) == len(pool)  # every puzzle came back once in the second cycle
    assert min(returns) == 25
    soonest = shown[len(pool) + returns.index(25)]
    assert soonest == "4w-ba1d0c47"
    assert puzzle_of_the_day(datetime.date(2026, 10, 17), pool).id == soonest
    assert puzzle_of_the_day(datetime.date(2026, 11, 11), pool).id == soonest
    two = pool[:2]
    end_of_fourth = DAILY_EPOCH + datetime.timedelta(days=4 * len(two) - 1)
    last, first = (
        puzzle_of_the_day(end_of_fourth + datetime.timedelta(days=day), two) for day in (0, 1)
    )
    assert last == first


def test_the_daily_puzzle_needs_a_pool_with_unique_ids() -> None:
    with pytest.raises(ValueError, match="the pool is empty"):
        puzzle_of_the_day(DAILY_EPOCH, ())
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    with pytest.raises(ValueError, match="two puzzles with the same id"):
        puzzle_of_the_day(DAILY_EPOCH, (puzzle, puzzle))


# -- refutations and replies ------------------------------------------------------------------


def test_a_wrong_move_in_a_hold_puzzle_is_refuted_by_the_fork_it_allows() -> None:
    """O must take B3: X has A2, B2 and B4, so X on B3 leaves both B1 and B5 completing
    column B."""
    puzzle = Puzzle.from_line(HOLD_5X5)
    refutation = refute(puzzle.board, parse_cell("C1", 5))
    assert refutation.reason is Reason.FORK
    assert refutation.reply == parse_cell("B3", 5)
    assert refutation.sentence == "C1? B3 wins: B3 makes two threats at once."
    forked = puzzle.board.play("C1").play("B3")
    x_mask, _ = forked.masks
    completing = [
        cell for cell in forked.legal_moves if forked.geometry.has_line(x_mask | 1 << cell)
    ]
    assert completing == [parse_cell("B1", 5), parse_cell("B5", 5)]
    slower = refute(puzzle.board, parse_cell("B5", 5))
    assert slower.reason is Reason.FORCED_WIN
    assert slower.sentence == "B5? C2, and the win can no longer be stopped: X wins in 3."


def test_a_wrong_move_in_a_win_puzzle_is_met_by_a_block_or_a_hold() -> None:
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    # C2 makes one threat (C1, C2, C3: C4 completes it), which O blocks.
    assert refute(puzzle.board, parse_cell("C2", 4)).sentence == "C2? C4 blocks the threat: a draw."
    assert refute(puzzle.board, parse_cell("A1", 4)).sentence == "A1? C2 holds the draw."


def test_a_wrong_move_that_lets_a_line_be_completed_says_so() -> None:
    """X to play must block D1; A4 instead lets O complete the top row."""
    board = Board.from_string("OOO./XX../X.../....")
    refutation = refute(board, parse_cell("A4", 4))
    assert refutation.reason is Reason.COMPLETES_LINE
    assert refutation.sentence == "A4? D1 completes a line: O wins."


def test_refute_refuses_a_move_that_is_not_wrong() -> None:
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    with pytest.raises(ValueError, match="C4 keeps the position's value"):
        refute(puzzle.board, puzzle.solution)


def test_the_right_move_gets_the_longest_defence_or_the_draw_held() -> None:
    win = Puzzle.from_line(FORK_IN_TWO)
    answer = reply(win.board, win.solution)
    # Every defence loses in one more move; blocking one of the two threats reads best.
    assert answer.moves_left == 1
    assert answer.answer in {parse_cell("C2", 4), parse_cell("D4", 4)}
    assert answer.sentence == "C4! O's longest defence is C2; X wins in 1 more."
    three = Puzzle.from_line(WIN_IN_THREE)
    assert reply(three.board, three.solution).moves_left == 2
    hold = Puzzle.from_line(HOLD_5X5)
    assert reply(hold.board, hold.solution).sentence == "B3! The draw is held; X answers C2."
    finish = reply(win.board.play("C4").play("A1"), parse_cell("C2", 4))
    assert finish.sentence == "C2 completes a line: X wins."
    with pytest.raises(ValueError, match="C1 loses value"):
        reply(hold.board, parse_cell("C1", 5))


# -- stepping through a line ------------------------------------------------------------------


def cells(*names: str, size: int = 4) -> list[int]:
    return [parse_cell(name, size) for name in names]


def right_line(puzzle: Puzzle) -> list[Step]:
    """The steps of ``puzzle``'s line played right: its solution, then at each turn the lowest
    cell that goes on or solves, until one solves (every step asserted on the way)."""
    steps: list[Step] = []
    moves: list[int] = []
    while True:
        position, remaining = line_position(puzzle, moves)
        candidates = position.legal_moves if moves else (puzzle.solution,)
        done = next(
            found
            for found in (step(puzzle, moves, cell) for cell in candidates)
            if found.kind in (StepKind.GOES_ON, StepKind.SOLVED)
        )
        assert (done.position, done.remaining) == (position, remaining)
        steps.append(done)
        if done.kind is StepKind.SOLVED:
            return steps
        moves.append(done.move)
        assert done.next_position == line_position(puzzle, moves)[0]


def test_the_fork_in_two_is_played_through_against_the_longest_defence() -> None:
    """C4 makes two threats (D4 and C2); O blocks C2, the longest defence, and X completes row
    4 with D4. After the block O threatens D2 itself: any other move of X's loses or draws."""
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    first = step(puzzle, [], parse_cell("C4", 4))
    assert (first.kind, first.remaining) == (StepKind.GOES_ON, 2)
    assert first.reply is not None
    assert first.reply.sentence == "C4! O's longest defence is C2; X wins in 1 more."
    assert first.next_position == puzzle.board.play("C4").play("C2")
    assert line_position(puzzle, cells("C4")) == (first.next_position, 1)
    last = step(puzzle, cells("C4"), parse_cell("D4", 4))
    assert (last.kind, last.remaining, last.next_position) == (StepKind.SOLVED, 1, None)
    assert last.reply is not None
    assert last.reply.sentence == "D4 completes a line: X wins."
    assert [found.move for found in right_line(puzzle)] == cells("C4", "D4")
    late = step(puzzle, cells("C4"), parse_cell("A1", 4))
    assert late.kind is StepKind.WRONG
    assert late.refutation is not None
    assert late.refutation.sentence == "A1? D2 completes a line: O wins."
    blocked = step(puzzle, cells("C4"), parse_cell("D2", 4)).refutation
    assert blocked is not None
    assert blocked.sentence == "D2? D4 blocks the threat: a draw."


@pytest.mark.parametrize(
    ("move", "sentence"),
    [("A1", "A1? C2 holds the draw."), ("D4", "D4? C4 blocks the threat: a draw.")],
)
def test_a_wrong_first_move_is_refuted(move: str, sentence: str) -> None:
    """Only C4 wins: any other first move is wrong, and comes with its refutation."""
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    wrong = step(puzzle, [], parse_cell(move, 4))
    assert (wrong.kind, wrong.reply, wrong.faster, wrong.remaining) == (
        StepKind.WRONG,
        None,
        None,
        2,
    )
    assert wrong.refutation == refute(puzzle.board, parse_cell(move, 4))
    assert wrong.refutation.sentence == sentence
    assert wrong.next_position is None


def test_a_hold_puzzle_is_solved_by_its_one_move() -> None:
    puzzle = Puzzle.from_line(HOLD_5X5)
    held = step(puzzle, [], parse_cell("B3", 5))
    assert (held.kind, held.remaining, held.next_position) == (StepKind.SOLVED, None, None)
    assert held.reply is not None
    assert held.reply.sentence == "B3! The draw is held; X answers C2."
    lost = step(puzzle, [], parse_cell("C1", 5))
    assert (lost.kind, lost.remaining) == (StepKind.WRONG, None)
    assert lost.refutation is not None
    assert lost.refutation.sentence == "C1? B3 wins: B3 makes two threats at once."
    assert line_position(puzzle, []) == (puzzle.board, None)


def test_a_move_that_still_wins_but_not_in_time_is_too_slow() -> None:
    """Found by playing every WIN of the pool through: after B2 and A1, B3 completes column B;
    A2 threatens D2 as well, so it still wins, in 2 more moves where 1 is left."""
    puzzle = Puzzle.from_line(SLOW_SECOND_MOVE)
    assert line_position(puzzle, cells("B2")) == (puzzle.board.play("B2").play("A1"), 1)
    slow = step(puzzle, cells("B2"), parse_cell("A2", 4))
    assert (slow.kind, slow.faster, slow.remaining) == (StepKind.TOO_SLOW, parse_cell("B3", 4), 1)
    assert (slow.reply, slow.refutation, slow.next_position) == (None, None, None)
    assert reply(slow.position, slow.move).moves_left == 1  # it wins: in 1 + 1 moves
    assert step(puzzle, cells("B2"), parse_cell("B3", 4)).kind is StepKind.SOLVED


@pytest.mark.slow  # every line of the pool searched: 9 s of CPU
def test_every_win_of_the_pool_played_right_finishes_in_exactly_its_count() -> None:
    """Every WIN puzzle of the pool, 4x4 and 5x5 (about 3 s): the solution, then at each turn
    the lowest right move, is solved with the last of the N moves, never later, every step
    before it going on. (Against the longest defence a right move's line is exactly as long as
    the count: the count allows no slower one, and none is faster than the puzzle's N.)"""
    wins = [puzzle for puzzle in load_pool() if puzzle.task is Task.WIN]
    assert len(wins) > 150
    for puzzle in wins:
        steps = right_line(puzzle)
        assert len(steps) == puzzle.moves, puzzle.line()
        assert [found.remaining for found in steps] == list(range(len(steps), 0, -1))
        assert steps[0].move == puzzle.solution


def test_a_line_round_trips_through_its_moves() -> None:
    """Each step's next position is where line_position puts the line with that move added."""
    puzzle = Puzzle.from_line(WIN_IN_THREE)
    steps = right_line(puzzle)
    assert [found.kind for found in steps] == [StepKind.GOES_ON] * 2 + [StepKind.SOLVED]
    moves = [found.move for found in steps]
    position = puzzle.board
    for count, found in enumerate(steps[:-1], 1):
        assert found.reply is not None
        assert found.reply.answer is not None
        position = position.play(found.move).play(found.reply.answer)
        assert line_position(puzzle, moves[:count]) == (position, 3 - count)


@pytest.mark.parametrize(
    ("line", "moves", "message"),
    [
        (FORK_IN_TWO, ["D4"], "the line's move 1, D4, is wrong: D4? C4 blocks the threat: a draw."),
        (
            FORK_IN_TWO,
            ["C4", "A1"],
            "the line's move 2, A1, is wrong: A1? D2 completes a line: O wins.",
        ),
        (FORK_IN_TWO, ["C4", "D4"], "the line's move 2, D4, solves the puzzle: no move follows it"),
        (
            SLOW_SECOND_MOVE,
            ["B2", "A2"],
            "the line's move 2, A2, is too slow: it wins, but not within the 1 move left; B3 does",
        ),
        (FORK_IN_TWO, ["B1"], "the line's move 1: cannot play B1: it is taken by O"),
        # O's answer to C4 took C2.
        (FORK_IN_TWO, ["C4", "C2"], "the line's move 2: cannot play C2: it is taken by O"),
        (
            HOLD_5X5,
            ["B3"],
            "the line's move 1, B3: a hold puzzle is done in one move, so no move comes before "
            "the one asked",
        ),
    ],
)
def test_line_position_names_the_move_that_is_no_step_on(
    line: str, moves: list[str], message: str
) -> None:
    puzzle = Puzzle.from_line(line)
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        line_position(puzzle, cells(*moves, size=puzzle.size))


def test_step_refuses_a_cell_that_cannot_be_played_with_the_boards_sentence() -> None:
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    for cell, message in [
        (parse_cell("B1", 4), "cannot play B1: it is taken by O"),
        (16, "cannot play cell index 16: use 0 to 15"),
    ]:
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$") as raised:
            step(puzzle, [], cell)
        assert type(raised.value) is ValueError
    with pytest.raises(ValueError, match=r"^cannot play C2: it is taken by O$"):
        step(puzzle, cells("C4"), parse_cell("C2", 4))
    with pytest.raises(ValueError, match=r"^the line's move 1, D4, is wrong"):
        step(puzzle, cells("D4"), parse_cell("A1", 4))


def test_a_step_comes_with_the_field_of_its_kind_only() -> None:
    puzzle = Puzzle.from_line(FORK_IN_TWO)
    board, move = puzzle.board, puzzle.solution
    answer = reply(board, move)
    with pytest.raises(ValueError, match=r"^a going-on step needs a reply$"):
        Step(StepKind.GOES_ON, board, move)
    with pytest.raises(ValueError, match=r"^a wrong step has no faster move, not 1$"):
        Step(StepKind.WRONG, board, move, refutation=refute(board, 0), faster=1)
    with pytest.raises(ValueError, match=r"^a too-slow step needs a faster move$"):
        Step(StepKind.TOO_SLOW, board, move)
    with pytest.raises(ValueError, match=r"^a step that completes a line is solved"):
        Step(StepKind.GOES_ON, board, move, reply=dataclasses.replace(answer, answer=None))
    with pytest.raises(ValueError, match="cannot play B1: it is taken by O"):
        Step(StepKind.SOLVED, board, parse_cell("B1", 4), reply=answer)
