"""Game review: known games word for word on every board, every judgement against the solved
values of 3x3 and 4x4, the hint's best move, and the search's analysis past a forced block."""

from __future__ import annotations

import doctest
import random
from types import ModuleType

import pytest

import game.review
import game.search
from game import Board, IllegalMoveError, InvalidCellError, Mark, cell_name, reachable_positions
from game.ai import evaluate
from game.review import MoveReview, Verdict, best_move, position_value, review_game
from game.search import SearchBudget, ThreatSearch
from tests import known_games


def sentences(moves: list[str], size: int = 3) -> list[str]:
    return [move.sentence for move in review_game(moves, size)]


def completing_cells(board: Board, side: Mark) -> set[int]:
    """The free cells where a mark of ``side`` would complete a line, by the plain rules."""
    x_mask, o_mask = board.masks
    marks = x_mask if side is Mark.X else o_mask
    return {cell for cell in board.empty_cells if board.geometry.has_line(marks | 1 << cell)}


@pytest.mark.parametrize("module", [game.review, game.search])
def test_docstring_examples_hold(module: ModuleType) -> None:
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0
    assert failures == 0


# -- known games, word for word ---------------------------------------------------------------


def test_a_blunder_that_lets_a_line_through() -> None:
    assert sentences(known_games.BLUNDER) == known_games.BLUNDER_REVIEW


def test_a_missed_win_at_once_then_a_draw() -> None:
    assert sentences(known_games.MISSED_WIN) == known_games.MISSED_WIN_REVIEW


def test_a_missed_win_that_needed_a_fork() -> None:
    # X (B3, A1) against O (B1, A2) wins by forking at C3; no move wins at once.
    reviewed = sentences(["B3", "B1", "A1", "A2", "C2", "C3", "B2", "C1", "A3"])
    assert reviewed[3] == "4. O A2 — blunder: the game was a draw, now X wins. A3 kept the draw."
    assert reviewed[4] == (
        "5. X C2 — missed win: the game was a win for X, now a draw. C3 kept the win."
    )
    assert reviewed[8] == "9. X A3 — the game ends in a draw."


def test_a_win_thrown_into_a_loss() -> None:
    assert sentences(["A3", "C1", "C3", "A1", "B2", "B1"]) == [
        "1. X A3 — draw.",
        "2. O C1 — blunder: the game was a draw, now X wins. B2 kept the draw.",
        "3. X C3 — X wins.",
        "4. O A1 — X wins.",
        "5. X B2 — blunder: the game was a win for X, now O wins. B3 won at once.",
        "6. O B1 — O wins the game.",
    ]


def test_a_perfect_game_is_a_draw_at_every_move() -> None:
    moves = ["A2", "B2", "C1", "B3", "B1", "A1", "C3", "C2", "A3"]
    expected = [f"{n}. {'XO'[(n - 1) % 2]} {cell} — draw." for n, cell in enumerate(moves, 1)]
    expected[-1] = "9. X A3 — the game ends in a draw."
    assert sentences(moves) == expected
    assert all(move.verdict is Verdict.GOOD for move in review_game(moves))


def test_a_blunder_on_the_larger_boards() -> None:
    # X holds A1, B1 and C1: D1 completes its line, so O must block there.
    moves = ["A1", "A4", "B1", "B4", "C1", "D4", "D1"]
    assert sentences(moves, 4) == [
        "1. X A1 — draw.",
        "2. O A4 — draw.",
        "3. X B1 — draw.",
        "4. O B4 — draw.",
        "5. X C1 — draw.",
        "6. O D4 — blunder: the game was a draw, now X wins. D1 kept the draw.",
        "7. X D1 — X wins the game.",
    ]


def test_a_blunder_on_5x5_long_before_the_line() -> None:
    # The same moves on 5x5, judged exactly: O's B5 already loses (then X wins by D1, not C1),
    # which the budgeted search that judged 5x5 before could not see.
    moves = ["A1", "A5", "B1", "B5", "C1", "C5", "D1"]
    assert sentences(moves, 5) == [
        "1. X A1 — draw.",
        "2. O A5 — draw.",
        "3. X B1 — draw.",
        "4. O B5 — blunder: the game was a draw, now X wins. C1 kept the draw.",
        "5. X C1 — missed win: the game was a win for X, now a draw. D1 kept the win.",
        "6. O C5 — blunder: the game was a draw, now X wins. D1 kept the draw.",
        "7. X D1 — X wins the game.",
    ]


def test_5x5_the_search_proves_a_loss_long_before_the_line() -> None:
    # On 5x5 with 4 in a row, O must answer X's centre diagonally: an orthogonal neighbour loses.
    assert sentences(["C3", "C4"], size=5) == [
        "1. X C3 — draw.",
        "2. O C4 — blunder: the game was a draw, now X wins. D4 kept the draw.",
    ]


# -- every judgement against the solved values ----------------------------------------------


def random_games(size: int, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        board, moves = Board(size), []
        while not board.is_over:
            moves.append(rng.choice(board.legal_moves))
            board = board.play(moves[-1])
        games.append(moves)
    return games


def solved_value(board: Board) -> int:
    outcome = board.outcome()
    if outcome is not None:
        return 0 if outcome.winner is None else -1
    return evaluate(board)


@pytest.mark.parametrize(("size", "count"), [(3, 1500), (4, 60)])
def test_every_judgement_matches_the_solved_values(size: int, count: int) -> None:
    verdicts = set()
    for moves in random_games(size, count, seed=size):
        for move in review_game(moves, size):
            after = move.position.play(move.cell)
            assert move.value_before == evaluate(move.position), str(move.position)
            assert move.value_after == -solved_value(after), str(after)
            verdicts.add(move.verdict)
            if move.verdict is not Verdict.GOOD:
                assert move.better is not None
                kept = move.position.play(move.better)
                assert -solved_value(kept) == move.value_before, str(move.position)
                if completing_cells(move.position, move.mark):
                    assert kept.winner is move.mark  # a win at once, when there is one
    assert verdicts == set(Verdict)


def test_the_hint_keeps_the_value_of_every_3x3_position() -> None:
    for board in reachable_positions():
        if board.is_over:
            continue
        hint = best_move(board)
        assert -solved_value(board.play(hint)) == evaluate(board), str(board)
        if completing_cells(board, board.turn):
            assert board.play(hint).winner is board.turn, str(board)


def test_the_hint_on_the_larger_boards() -> None:
    assert best_move(Board.from_string("XXX./OOO./..../....")) == 3  # win at once, not block
    assert best_move(Board.from_string("XXX./OO../O.../....")) == 3  # O must block D1
    budget = SearchBudget(seconds=None, nodes=2000)
    assert best_move(Board.from_string("XXX../OOO../...../...../....."), budget) == 3
    assert best_move(Board.from_string("OOO../XX.../X..../...../....."), budget) == 3


def test_position_values_of_finished_and_solved_boards() -> None:
    assert position_value(Board.from_string("XXX/OO./...")) == -1  # O to move has lost
    assert position_value(Board.from_string("XOX/XOO/OXX")) == 0
    assert position_value(Board()) == 0
    assert position_value(Board(4)) == 0


# -- the search's analysis ------------------------------------------------------------------


def test_analysis_looks_past_a_forced_block() -> None:
    # X must block B1 (O holds C2, D3, E4); then O's B3 threatens A3 and E3 (row 3) and A4
    # (with D1 and C2): X can block only one.
    board = Board.from_string("X..O./..OX./..OO./..X.O/...XX")
    assert completing_cells(board, Mark.O) == {1}
    blocked = board.play("B1").play("B3")
    assert completing_cells(blocked, Mark.O) == {10, 14, 15}
    assert not completing_cells(blocked, Mark.X)
    budget = SearchBudget(seconds=None, nodes=20_000)
    played = ThreatSearch(board.geometry).search(board, budget)
    assert (played.move, played.forced_loss) == (1, False)  # play plays the block, unscored
    analysed = ThreatSearch(board.geometry).analyse(board, budget)
    assert (analysed.move, analysed.forced_loss) == (1, True)
    assert position_value(board) == -1


def test_analysis_scores_two_threats_as_a_loss_and_a_line_as_a_win() -> None:
    budget = SearchBudget(seconds=None, nodes=100)
    two_threats = Board.from_string(".OOO./XX.../X..../...../.....")
    assert ThreatSearch(two_threats.geometry).analyse(two_threats, budget).forced_loss
    line = Board.from_string(".XXX./OO.../O..../...../.....")
    result = ThreatSearch(line.geometry).analyse(line, budget)
    assert result.forced_win
    assert cell_name(result.move, 5) in ("A1", "E1")


# -- what a review refuses ------------------------------------------------------------------


def test_a_review_of_an_impossible_game_raises_the_boards_errors() -> None:
    with pytest.raises(IllegalMoveError, match="taken"):
        review_game(["A1", "A1"])
    with pytest.raises(InvalidCellError):
        review_game(["Z9"])
    with pytest.raises(IllegalMoveError, match="game is over"):
        review_game(["A1", "B1", "A2", "B2", "A3", "B3"])
    assert review_game([]) == ()


def test_a_move_review_refuses_what_cannot_be() -> None:
    board = Board()
    with pytest.raises(ValueError, match="value is"):
        MoveReview(board, 4, 0, 2)
    with pytest.raises(ValueError, match="needs a move that kept it"):
        MoveReview(board, 4, 1, 0)
    with pytest.raises(ValueError, match="needs a move that kept it"):
        MoveReview(board, 4, 0, 0, better=0)
    with pytest.raises(IllegalMoveError):
        MoveReview(Board().play("B2"), 4, 0, 0)
