"""The engine's errors: every one is a :class:`GameError`, itself a :class:`ValueError`.

Like python-chess's ``InvalidMoveError``/``IllegalMoveError`` pair, syntax errors (text that
names no cell) are kept apart from rule errors (a real cell that cannot be played here), so a
caller can answer "that is not a cell" differently from "that cell is taken".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from game.board import Board
    from game.ultimate import UltimateBoard


# The position an IllegalMoveError was raised in: a square board, or an ultimate one.
Position = TypeVar("Position", "Board", "UltimateBoard")


class GameError(ValueError):
    """Base class of every error the engine raises."""


class InvalidCellError(GameError):
    """Text that does not name a cell, such as ``"D4"`` or ``"middle"``."""

    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text = text


class InvalidBoardError(GameError):
    """A board description that no game can reach, or that is malformed."""

    def __init__(self, text: str, message: str) -> None:
        super().__init__(message)
        self.text = text


class IllegalMoveError(GameError, Generic[Position]):
    """A real cell that cannot be played in this position: taken, off the board, game over, or
    (ultimate tic-tac-toe) outside the small board the player was sent to."""

    def __init__(self, board: Position, cell: int, message: str) -> None:
        super().__init__(message)
        self.board: Position = board
        self.cell = cell
