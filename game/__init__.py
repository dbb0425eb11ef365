"""A pure tic-tac-toe engine: positions, rules, cell names and computer players, on 3x3 (3 in a
row), 4x4 (4 in a row) and 5x5 (4 in a row) boards, or any side and line length, and ultimate
tic-tac-toe (:mod:`game.ultimate`).

It imports nothing from Discord or any database, so the bot, the terminal game and the tests all
drive the same rules.

>>> from game import Board, parse_cell, cell_name
>>> board = Board().play("B2")
>>> board.turn, cell_name(parse_cell("c3"))
(<Mark.O: 'O'>, 'C3')
"""

from typing import TYPE_CHECKING

from game.board import (
    BOARD_SIZES,
    COLUMN_LETTERS,
    DEFAULT_SIZE,
    Board,
    Geometry,
    Mark,
    Outcome,
    cell_name,
    geometry,
    parse_cell,
    standard_line_length,
)
from game.errors import GameError, IllegalMoveError, InvalidBoardError, InvalidCellError
from game.lazy import ModuleOnFirstUse
from game.positions import reachable_positions

if TYPE_CHECKING:
    from game import ultimate as _ultimate
    from game.ultimate import (
        ULTIMATE,
        UltimateBoard,
        parse_ultimate_cell,
        small_board_cells,
        small_board_name,
        small_board_of,
        ultimate_cell_name,
    )
else:
    # Re-exported on first use (see game.lazy): a program that plays only the square boards
    # does not pay for building the ultimate tables at import.
    _ultimate = ModuleOnFirstUse("game.ultimate")

_ULTIMATE_NAMES = frozenset(
    {
        "ULTIMATE",
        "UltimateBoard",
        "parse_ultimate_cell",
        "small_board_cells",
        "small_board_name",
        "small_board_of",
        "ultimate_cell_name",
    }
)


def __getattr__(name: str) -> object:
    if name in _ULTIMATE_NAMES:
        return getattr(_ultimate, name)
    raise AttributeError(f"module 'game' has no attribute {name!r}")


__all__ = [
    "BOARD_SIZES",
    "COLUMN_LETTERS",
    "DEFAULT_SIZE",
    "ULTIMATE",
    "Board",
    "GameError",
    "Geometry",
    "IllegalMoveError",
    "InvalidBoardError",
    "InvalidCellError",
    "Mark",
    "Outcome",
    "UltimateBoard",
    "cell_name",
    "geometry",
    "parse_cell",
    "parse_ultimate_cell",
    "reachable_positions",
    "small_board_cells",
    "small_board_name",
    "small_board_of",
    "standard_line_length",
    "ultimate_cell_name",
]
