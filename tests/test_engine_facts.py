"""Known facts about tic-tac-toe, checked against the engine over the whole game tree."""

from __future__ import annotations

import itertools

import pytest

from game import Board, Mark, geometry, reachable_positions
from game.ai import evaluate, score


def count_games(board: Board) -> int:
    """The number of distinct move sequences from ``board`` to the end of the game."""
    if board.is_over:
        return 1
    return sum(count_games(board.play(cell)) for cell in board.legal_moves)


def test_there_are_5478_legal_positions() -> None:
    assert len(reachable_positions()) == 5478


@pytest.mark.slow  # every game played out: 5 s of CPU
def test_there_are_255168_possible_games() -> None:
    assert count_games(Board()) == 255168


def test_the_empty_board_is_a_draw_with_perfect_play() -> None:
    assert evaluate(Board()) == 0
    assert score(Board()) == 0


def test_a_3x3_board_has_8_winning_lines() -> None:
    lines = geometry(3).lines
    assert len(lines) == 8
    assert len(set(lines)) == 8
    assert all(len(line) == 3 for line in lines)


def test_there_are_958_final_positions_16_of_them_drawn() -> None:
    finished = [board for board in reachable_positions() if board.is_over]
    assert len(finished) == 958
    assert sum(1 for board in finished if board.winner is None) == 16


def test_from_string_accepts_exactly_the_reachable_positions() -> None:
    """Every one of the 3**9 strings is accepted if and only if a game reaches it."""
    reachable = {str(board) for board in reachable_positions()}
    accepted = set()
    for marks in itertools.product("XO.", repeat=9):
        text = "/".join("".join(marks[row * 3 : row * 3 + 3]) for row in range(3))
        try:
            board = Board.from_string(text)
        except ValueError:
            continue
        assert str(board) == text
        accepted.add(text)
    assert accepted == reachable


def test_turn_follows_from_the_counts_in_every_position() -> None:
    for board in reachable_positions():
        cells = board.cells
        x_count, o_count = cells.count(Mark.X), cells.count(Mark.O)
        assert board.turn is (Mark.X if x_count == o_count else Mark.O)


def test_every_finished_position_has_no_legal_moves() -> None:
    for board in reachable_positions():
        if board.is_over:
            assert board.legal_moves == ()
        else:
            assert board.legal_moves == board.empty_cells != ()
