"""The games the bot offers, each named by a size: the square boards by their side (3, 4 and 5)
and ultimate tic-tac-toe by its grid's, 9 (:data:`ULTIMATE_SIZE`). Games, challenges, stats and
ratings store that size, so each game is kept apart from the others by it.

>>> position((40,), ULTIMATE_SIZE).forced_board, position((4,), 3).turn
(4, <Mark.O: 'O'>)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

from game.board import BOARD_SIZES, Board
from game.ultimate import SIDE, UltimateBoard

__all__ = ["GAME_SIZES", "ULTIMATE_SIZE", "Position", "is_ultimate", "position"]

# Ultimate's cells are numbered and named as a 9x9 board's: A1..I9, row * 9 + column.
ULTIMATE_SIZE = SIDE
GAME_SIZES = (*BOARD_SIZES, ULTIMATE_SIZE)

Position: TypeAlias = Board | UltimateBoard


def is_ultimate(size: int) -> bool:
    return size == ULTIMATE_SIZE


def position(moves: Iterable[int], size: int) -> Position:
    """The position ``moves`` make from the empty board of the game ``size`` names; a move
    that cannot be played raises the board's error."""
    if is_ultimate(size):
        return UltimateBoard.from_moves(moves)
    return Board.from_moves(moves, size)
