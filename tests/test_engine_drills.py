"""Drills (``game/drills.py``): the drills a review gives each player of known games on 3x3, 4x4
and 5x5, their answers (right for any move that keeps the value, else refuted), checked cell by
cell against the review's own values, and the line format and its errors."""

from __future__ import annotations

import doctest
import re

import pytest

import game.drills
from game.board import Board, Mark, cell_name, parse_cell
from game.book5x5 import FULL_UP_TO
from game.drills import Drill, DrillAnswer, answer, drills_of
from game.exact import ExactSolver
from game.puzzles import Puzzle, Reason, Refutation, refute
from game.review import position_value, review_game
from tests.exact_search import shared_5x5_solver
from tests.known_games import BLUNDER, FULL_5X5, MISSED_WIN

# On 4x4, X holds A1, B1 and C1: O's D4 instead of the block at D1 loses.
BLUNDER_4X4 = ["A1", "A4", "B1", "B4", "C1", "D4", "D1"]
# From the shipped pool: a 5x5 draw that only B3 keeps (O to play).
HOLD_5X5 = "5h-93c44310 O...O/XX..X/..O../XX.../....O k4 O hold B3"


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(game.drills, verbose=False)
    assert tried > 0
    assert failures == 0


def cells(*names: str, size: int = 3) -> list[int]:
    return [parse_cell(name, size) for name in names]


def right_cells(drill: Drill) -> list[int]:
    """The cells :func:`answer` calls right, every answer checked: a refutation with each wrong
    one (the opponent's answer to that move), none with a right one."""
    found = []
    for cell in drill.position.legal_moves:
        tried = answer(drill, cell)
        assert (tried.drill, tried.move) == (drill, cell)
        if tried.right:
            assert tried.refutation is None
            found.append(cell)
        else:
            assert tried.refutation == refute(drill.position, cell)
    return found


def keeping_cells(drill: Drill) -> list[int]:
    """The cells that keep the drill's value by the review's values, a source of its own
    (3x3 by minimax, 4x4 by the solved table, 5x5 by the book and a fresh exact search)."""
    position = drill.position
    return [
        cell for cell in position.legal_moves if -position_value(position.play(cell)) >= drill.value
    ]


# -- the drills of a game ---------------------------------------------------------------------


def test_a_blunder_is_the_losers_one_drill() -> None:
    """O's B1 (move 4) lets X complete column A: the one drill, O's, at the position before
    B1, a draw that only the block A3 keeps."""
    reviews = review_game(BLUNDER)
    (drill,) = drills_of(reviews, Mark.O)
    assert drill == Drill(Board.from_moves(["A1", "B2", "A2"]), parse_cell("B1"), 0)
    assert drills_of(reviews, Mark.X) == ()
    assert answer(drill, parse_cell("A3")) == DrillAnswer(drill, parse_cell("A3"), True, None)
    wrong = answer(drill, parse_cell("B1"))
    assert not wrong.right
    assert wrong.refutation is not None
    assert wrong.refutation.reason is Reason.COMPLETES_LINE
    assert wrong.refutation.sentence == "B1? A3 completes a line: X wins."
    assert right_cells(drill) == keeping_cells(drill) == cells("A3")


def test_a_missed_win_is_a_drill_any_winning_move_answers() -> None:
    """After O's A3 (a blunder: O's drill, which only C2 keeps), X wins with C2 at once, or by
    B1 or B3; X's C1 (move 5) blocks O's diagonal and lets the win slip. C1 leaves X's own
    threat at C2, which O then blocks: the engine calls it BLOCK, not HOLDS."""
    reviews = review_game(MISSED_WIN)
    (blunder,) = drills_of(reviews, Mark.O)
    assert (str(blunder.position), blunder.played, blunder.value) == (
        "O../XX./...",
        parse_cell("A3"),
        0,
    )
    assert right_cells(blunder) == cells("C2")
    (missed,) = drills_of(reviews, Mark.X)
    assert missed == Drill(Board.from_moves(MISSED_WIN[:4]), parse_cell("C1"), 1)
    assert answer(missed, parse_cell("C2")).right
    assert right_cells(missed) == keeping_cells(missed) == cells("B1", "C2", "B3")
    slipped = answer(missed, parse_cell("C1")).refutation
    assert slipped is not None
    assert slipped.reason is Reason.BLOCK
    assert slipped.sentence == "C1? C2 blocks the threat: a draw."


def test_a_4x4_blunder_is_a_drill_only_the_block_answers() -> None:
    (drill,) = drills_of(review_game(BLUNDER_4X4, 4), Mark.O)
    assert drill.line() == "XXX./..../..../OO.. k4 draw D4"
    assert drills_of(review_game(BLUNDER_4X4, 4), Mark.X) == ()
    assert right_cells(drill) == keeping_cells(drill) == cells("D1", size=4)
    refutation = answer(drill, parse_cell("D4", 4)).refutation
    assert refutation is not None
    assert refutation.sentence == "D4? D1 completes a line: X wins."


def test_a_full_5x5_game_gives_each_player_three_drills_in_game_order() -> None:
    """The review of FULL_5X5 (tests/known_games.py): X's missed wins at moves 5 and 11 and
    blunder at 15, O's blunders at 4 and 10 and missed win at 16."""
    reviews = review_game(FULL_5X5, 5)
    for mark, expected in [
        (
            Mark.X,
            [
                "XXOO./...../...../...../..... k4 win E1",
                "XXOOX/OOXXO/...../...../..... k4 win A3",
                "XXOOX/OOXXO/XXOO./...../..... k4 draw E3",
            ],
        ),
        (
            Mark.O,
            [
                "XXO../...../...../...../..... k4 draw D1",
                "XXOOX/OOXX./...../...../..... k4 draw E2",
                "XXOOX/OOXXO/XXOOX/...../..... k4 win A4",
            ],
        ),
    ]:
        drills = drills_of(reviews, mark)
        assert [drill.line() for drill in drills] == expected
        assert all(drill.position.turn is mark for drill in drills)


def test_any_move_that_keeps_the_value_is_right_not_only_the_reviews() -> None:
    """Mid-game 5x5 drills of FULL_5X5 (the early ones take seconds a cell to refute): the review
    named E5 for move 15 and D4 for move 16, but nine moves keep the draw there and two the
    win. Every cell agrees with the review's values; every wrong one is refuted."""
    reviews = review_game(FULL_5X5, 5)
    drills = {drill.position.move_count + 1: drill for drill in drills_of(reviews, Mark.X)}
    drills |= {drill.position.move_count + 1: drill for drill in drills_of(reviews, Mark.O)}
    expected = {
        10: ["A3", "B3", "C3", "D3", "E3", "B4", "E4"],
        11: ["C3", "D3", "D4", "D5"],
        15: ["A4", "B4", "C4", "D4", "E4", "B5", "C5", "D5", "E5"],
        16: ["C4", "D4"],
    }
    for number, names in expected.items():
        drill = drills[number]
        assert right_cells(drill) == keeping_cells(drill) == cells(*names, size=5), number
    lost = answer(drills[15], parse_cell("E3", 5)).refutation
    assert lost is not None
    assert lost.sentence == "E3? C4, and the win can no longer be stopped: O wins in 4."
    slipped = answer(drills[16], parse_cell("A4", 5)).refutation
    assert slipped is not None
    assert slipped.sentence == "A4? D4 holds the draw."


def test_a_5x5_hold_puzzles_position_with_a_losing_move_is_a_drill() -> None:
    """The HOLD puzzle's position, O having played C1 (which lets X fork on B3), is a drill of
    value 0 that only B3 answers."""
    puzzle = Puzzle.from_line(HOLD_5X5)
    drill = Drill(puzzle.board, parse_cell("C1", 5), 0)
    assert drill.line() == "O...O/XX..X/..O../XX.../....O k4 draw C1"
    assert right_cells(drill) == [puzzle.solution]
    refutation = answer(drill, drill.played).refutation
    assert refutation is not None
    assert refutation.sentence == "C1? B3 wins: B3 makes two threats at once."


# -- early 5x5 drills: the book's answers are the search's -----------------------------------


def completing_cells(board: Board, mark: Mark) -> set[int]:
    """The free cells where ``mark`` would complete a line."""
    x_mask, o_mask = board.masks
    marks = x_mask if mark is Mark.X else o_mask
    free = board.geometry.full_mask & ~(x_mask | o_mask)
    gaps = (line & ~marks for line in board.geometry.line_masks)
    return {gap.bit_length() - 1 for gap in gaps if gap.bit_count() == 1 and gap & free}


def judged_by_the_search(solver: ExactSolver, drill: Drill, cell: int) -> DrillAnswer:
    """``cell``'s answer as the exact search alone gives it, with nothing read from the opening
    book or its fastest wins (as :func:`answer` gave it before it read them): right when the
    move keeps the drill's value; else the opponent's reply, the lowest of the fastest wins
    when the move lost (those of every move: one that does not win wins in no count), the
    search's move that keeps the draw when it let a win slip."""
    position = drill.position
    after = position.play(cell)
    if after.winner is position.turn or -solver.value(after) >= drill.value:
        return DrillAnswer(drill, cell, True, None)
    replier = after.turn
    if solver.value(after) == 1:
        reply = min(solver.fastest_wins(after, after.legal_moves))
        replied = after.play(reply)
        if replied.winner is replier:
            reason = Reason.COMPLETES_LINE
        elif len(completing_cells(replied, replier)) >= 2 and not completing_cells(
            replied, position.turn
        ):
            reason = Reason.FORK
        else:
            reason = Reason.FORCED_WIN
        moves = solver.moves_to_win(after)
        return DrillAnswer(drill, cell, False, Refutation(position, cell, reply, reason, moves))
    threats = completing_cells(after, position.turn)
    if len(threats) == 1:
        refutation = Refutation(position, cell, threats.pop(), Reason.BLOCK, None)
    else:
        refutation = Refutation(position, cell, solver.best_moves(after)[1], Reason.HOLDS, None)
    return DrillAnswer(drill, cell, False, refutation)


# Early drills, one to four marks down, where answer() reads the book and its fastest wins
# rather than search; the search alone takes up to seconds a cell there.
# O's first move after X's C1: A3 and six more lose (X wins in 6 or 7).
AFTER_C1 = "..X../...../...../...../..... k4 draw A3"
# X's second move after B1 and B4: B5 and 17 more lose.
AFTER_B1_B4 = ".X.../...../...../.O.../..... k4 draw B5"
# O's second move in FULL_5X5: D1 and four more lose.
FULL_5X5_O2 = "XXO../...../...../...../..... k4 draw D1"
# X's third move in FULL_5X5: C3 alone keeps the win; every other move lets it slip.
FULL_5X5_X3 = "XXOO./...../...../...../..... k4 win E1"


def assert_judged_as_by_the_search(line: str, names: list[str] | None = None) -> None:
    """Each of the cells called ``names`` (by default every legal move) answers ``line``'s drill
    as the exact search alone judges it."""
    drill = Drill.from_line(line)
    assert drill.position.move_count <= FULL_UP_TO
    solver = shared_5x5_solver()
    tried = drill.position.legal_moves if names is None else cells(*names, size=5)
    for cell in tried:
        assert answer(drill, cell) == judged_by_the_search(solver, drill, cell), cell_name(cell, 5)


@pytest.mark.slow  # the search alone: up to about a minute a drill
@pytest.mark.parametrize("line", [AFTER_C1, AFTER_B1_B4, FULL_5X5_O2, FULL_5X5_X3])
def test_early_5x5_answers_are_the_exact_searchs_in_every_cell(line: str) -> None:
    assert_judged_as_by_the_search(line)


@pytest.mark.slow  # exact searches: 2 s of CPU
def test_early_5x5_answers_are_the_exact_searchs_in_a_few_cells() -> None:
    """Cells of the drills above that the search alone judges in a few seconds in all: wrong
    ones, refuted by a forced win or by the draw held, and right ones."""
    assert_judged_as_by_the_search(AFTER_C1, ["E5", "C3", "B2"])
    assert_judged_as_by_the_search(AFTER_B1_B4, ["B5", "C4", "D3", "D2"])
    assert_judged_as_by_the_search(FULL_5X5_O2, ["A4", "C2"])
    assert_judged_as_by_the_search(FULL_5X5_X3, ["E1", "B2", "D3", "C3"])


# -- answers that cannot be judged ------------------------------------------------------------


def test_answer_refuses_a_cell_that_cannot_be_played_with_the_boards_sentence() -> None:
    drill = Drill.from_line("X../XO./... k3 draw B1")
    for cell, message in [(0, "cannot play A1: it is taken by X"), (9, "cannot play cell index 9")]:
        with pytest.raises(ValueError, match="^" + re.escape(message)) as raised:
            answer(drill, cell)
        assert "\n" not in str(raised.value)


def test_answer_refuses_a_drill_whose_value_is_not_its_positions() -> None:
    """A line that says win where the position is only a draw would call every drawing move
    wrong, with nothing to refute it."""
    drill = Drill.from_line("X../XO./... k3 win B1")
    with pytest.raises(
        ValueError,
        match=r"^the drill says O to play holds a win, but the position holds a draw: the drill",
    ):
        answer(drill, parse_cell("A3"))


def test_a_drill_answer_has_a_refutation_exactly_when_it_is_wrong() -> None:
    drill = Drill.from_line("X../XO./... k3 draw B1")
    refutation = refute(drill.position, drill.played)
    with pytest.raises(ValueError, match="a wrong answer needs its refutation"):
        DrillAnswer(drill, drill.played, False, None)
    with pytest.raises(ValueError, match="a right one has none"):
        DrillAnswer(drill, drill.played, True, refutation)
    with pytest.raises(ValueError, match="cannot play A1: it is taken by X"):
        DrillAnswer(drill, 0, True, None)


# -- the line format --------------------------------------------------------------------------


def test_every_drill_of_the_known_games_round_trips_through_its_line() -> None:
    games = [(BLUNDER, 3), (MISSED_WIN, 3), (BLUNDER_4X4, 4), (FULL_5X5, 5)]
    drills = [
        drill
        for moves, size in games
        for mark in Mark
        for drill in drills_of(review_game(moves, size), mark)
    ]
    drills.append(Drill(Puzzle.from_line(HOLD_5X5).board, parse_cell("C1", 5), 0))
    assert len(drills) == 11
    for drill in drills:
        assert Drill.from_line(drill.line()) == drill
    assert drills[0].line() == "X../XO./... k3 draw B1"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("X../XO./... k3 draw", "a drill line has 4 fields (board, line length (k3), value kept"),
        ("X../XO./... k3 draw B1 A3", "like 'X../XO./... k3 draw B1'; \"X../XO./... k3"),
        ("X../XO./... k3 draw B1 A3", " has 5"),
        ("X../XO./.. k3 draw B1", "drill line's board: "),
        ("OO./X../... k3 draw B1", "drill line's board: "),
        ("X../XO./... three draw B1", 'line length "three" is not k and a digit'),
        ("X..../XO.../...../...../..... k5 draw B1", "drill line's board: drills are made on"),
        ("X../XO./... k3 lose B1", 'drill line\'s value "lose" is not win or draw'),
        ("X../XO./... k3 loss B1", 'drill line\'s value "loss" is not win or draw'),
        ("X../XO./... k3 draw B2", "drill line's move: cannot play B2: it is taken by O"),
        ("X../XO./... k3 draw D1", 'drill line\'s move: "D1" is not a cell'),
        ("XXX/OO./... k3 draw C2", "drill line's move: cannot play C2: the game is over"),
    ],
)
def test_a_wrong_line_says_which_field_is_wrong(line: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as raised:
        Drill.from_line(line)
    assert "\n" not in str(raised.value)


def test_a_drill_is_checked_for_its_shape_when_made() -> None:
    position = Board.from_moves(["A1", "B2", "A2"])
    with pytest.raises(ValueError, match=r"1 \(a win\) or 0 \(a draw\), not -1"):
        Drill(position, parse_cell("B1"), -1)
    with pytest.raises(ValueError, match="cannot play B2: it is taken by O"):
        Drill(position, parse_cell("B2"), 0)
    with pytest.raises(ValueError, match="not on 5x5 with 5 in a row"):
        Drill(Board(5, line_length=5), 0, 0)
    # O's D5 lets X complete row 1 with E1: a blunder the review finds, on a board where its
    # values come from a budgeted search, so no drill.
    reviews = review_game(["A1", "A5", "B1", "B5", "C1", "C5", "D1", "D5"], 5, line_length=5)
    assert reviews[-1].value_after == -1
    with pytest.raises(ValueError, match="not on 5x5 with 5 in a row"):
        drills_of(reviews, Mark.O)
