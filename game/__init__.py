"""A pure tic-tac-toe engine: positions, rules, cell names and computer players, on 3x3 (3 in a
row), 4x4 (4 in a row) and 5x5 (4 in a row) boards, or any side and line length.

It imports nothing from Discord or any database, so the bot, the terminal game and the tests all
drive the same rules.

>>> from game import Board, parse_cell, cell_name
>>> board = Board().play("B2")
>>> board.turn, cell_name(parse_cell("c3"))
(<Mark.O: 'O'>, 'C3')
"""

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
from game.positions import reachable_positions

__all__ = [
    "BOARD_SIZES",
    "COLUMN_LETTERS",
    "DEFAULT_SIZE",
    "Board",
    "GameError",
    "Geometry",
    "IllegalMoveError",
    "InvalidBoardError",
    "InvalidCellError",
    "Mark",
    "Outcome",
    "cell_name",
    "geometry",
    "parse_cell",
    "reachable_positions",
    "standard_line_length",
]
