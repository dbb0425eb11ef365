"""Positions, cells and outcomes.

A :class:`Board` is an immutable position: two bitmasks, one per mark, over cells numbered
row-major from 0 (top left). Its side (``board.size``) and the number of marks in a row that win
(``board.line_length``, the game's ``k``) are properties of the board, never literals elsewhere:
a :class:`Geometry` derives everything else from the pair.

>>> board = Board().play("B2").play("A1")
>>> str(board)
'O../.X./...'
>>> board.turn
<Mark.X: 'X'>
>>> cell_name(board.legal_moves[0])
'B1'
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import NoReturn

from game.errors import IllegalMoveError, InvalidBoardError, InvalidCellError

DEFAULT_SIZE = 3
# The boards the game offers, each with the line length it is played with: 3x3 with 3 in a row,
# 4x4 with 4, and 5x5 with 4 (5 in a row on 5x5 is too easy to block to be worth playing).
STANDARD_LINE_LENGTHS = {3: 3, 4: 4, 5: 4}
BOARD_SIZES = tuple(STANDARD_LINE_LENGTHS)
# Public so that whatever labels a board's columns names them as cell names do. One letter a
# column is what caps a board's side at their count.
COLUMN_LETTERS = "ABCDEFGHI"
_CELL_NAME = re.compile(r"([A-Za-z])([0-9]+)")
_CELL_NUMBER = re.compile(r"[0-9]+")


class Mark(Enum):
    """A player's mark. X always moves first."""

    X = "X"
    O = "O"  # noqa: E741 - the game's own name for the mark

    @property
    def other(self) -> Mark:
        """The opponent's mark.

        >>> Mark.X.other
        <Mark.O: 'O'>
        """
        return Mark.O if self is Mark.X else Mark.X

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended: a winner and the line(s) it made, or a draw."""

    winner: Mark | None
    lines: tuple[tuple[int, ...], ...] = ()

    @property
    def line(self) -> tuple[int, ...] | None:
        """The winning line (the first, if one move completed two), or None for a draw."""
        return self.lines[0] if self.lines else None


# Compared and hashed by identity: :func:`geometry` makes one per (side, line length), and the
# strategies key their caches by it on every move, where hashing its lines would cost.
@dataclass(frozen=True, slots=True, eq=False)
class Geometry:
    """Everything that depends only on the board's side and line length: cell count, lines,
    their bitmasks."""

    size: int
    line_length: int
    cell_count: int
    lines: tuple[tuple[int, ...], ...]
    line_masks: tuple[int, ...]

    @property
    def full_mask(self) -> int:
        return (1 << self.cell_count) - 1

    def lines_of(self, mask: int) -> tuple[tuple[int, ...], ...]:
        """The lines entirely inside ``mask``."""
        return tuple(
            line
            for line, line_mask in zip(self.lines, self.line_masks, strict=True)
            if mask & line_mask == line_mask
        )

    def has_line(self, mask: int) -> bool:
        return any(mask & line_mask == line_mask for line_mask in self.line_masks)


def standard_line_length(size: int) -> int:
    """The line length a ``size`` x ``size`` board is played with: 3, 4 and 4 for the offered
    sizes 3, 4 and 5, and 4 on any larger board.

    >>> [standard_line_length(size) for size in (3, 4, 5)]
    [3, 4, 4]
    """
    return STANDARD_LINE_LENGTHS.get(size, min(size, 4))


def geometry(size: int = DEFAULT_SIZE, line_length: int | None = None) -> Geometry:
    """The shared :class:`Geometry` of a ``size`` x ``size`` board where ``line_length`` marks in
    a row, a column or a diagonal win (by default :func:`standard_line_length`): one object per
    side and line length, whether the standard length is given or left out, since boards
    compare (and strategies cache) by the geometry's identity.

    >>> [len(geometry(size).lines) for size in (3, 4, 5)]
    [8, 10, 28]
    >>> geometry(5) is geometry(5, 4)
    True
    """
    if not 3 <= size <= len(COLUMN_LETTERS):
        raise ValueError(f"board size must be between 3 and {len(COLUMN_LETTERS)}, not {size}")
    return _geometry(size, standard_line_length(size) if line_length is None else line_length)


@functools.cache
def _geometry(size: int, k: int) -> Geometry:
    if not 3 <= k <= size:
        raise ValueError(
            f"line length must be between 3 and {size} on a {size}x{size} board, not {k}"
        )
    lines: list[tuple[int, ...]] = []
    # Each direction is a step (row, column); a line starts wherever k steps stay on the board.
    for row_step, column_step in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for row in range(size):
            for column in range(size):
                end_row = row + row_step * (k - 1)
                end_column = column + column_step * (k - 1)
                if 0 <= end_row < size and 0 <= end_column < size:
                    lines.append(
                        tuple(
                            (row + row_step * i) * size + column + column_step * i for i in range(k)
                        )
                    )
    masks = tuple(sum(1 << cell for cell in line) for line in lines)
    return Geometry(
        size=size, line_length=k, cell_count=size * size, lines=tuple(lines), line_masks=masks
    )


def quote_input(text: str) -> str:
    """``text`` quoted for an error message, on one line: a newline or a quote in it is
    escaped, so the message cannot be cut short or broken by what was typed."""
    shown = text if len(text) <= 20 else text[:20] + "…"
    return json.dumps(shown, ensure_ascii=False)


def cell_name(cell: int, size: int = DEFAULT_SIZE) -> str:
    """The name of a cell index: column letter, then row number.

    >>> cell_name(0), cell_name(4), cell_name(8), cell_name(15, 4), cell_name(24, 5)
    ('A1', 'B2', 'C3', 'D4', 'E5')
    """
    if not 0 <= cell < size * size:
        raise ValueError(
            f"cell index {cell} is off a {size}x{size} board: use 0 to {size * size - 1}"
        )
    row, column = divmod(cell, size)
    return f"{COLUMN_LETTERS[column]}{row + 1}"


def parse_cell(text: str, size: int = DEFAULT_SIZE) -> int:
    """Parse a cell name (``A1``..``C3``, letter = column) or a number (``1``..``9``, row-major).

    ``size`` is the board's side: ``A1``..``D4`` and ``1``..``16`` on 4x4. Case and surrounding
    spaces do not matter; anything else raises :class:`InvalidCellError`, whose message says which
    board it was read for.

    >>> parse_cell("b2"), parse_cell(" C1 "), parse_cell("7")
    (4, 2, 6)
    >>> parse_cell("D4")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    game.errors.InvalidCellError: "D4" is not a cell: use a column letter A-C and a row...
    >>> parse_cell("D4", 4), parse_cell("16", 4), parse_cell("E5", 5)
    (15, 15, 24)
    >>> parse_cell("F1", 5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    game.errors.InvalidCellError: "F1" is not a cell: use a column letter A-E and a row...
    """
    if not 1 <= size <= len(COLUMN_LETTERS):
        raise ValueError(f"board size must be between 1 and {len(COLUMN_LETTERS)}, not {size}")
    stripped = text.strip()
    last_column = COLUMN_LETTERS[size - 1]
    if match := _CELL_NAME.fullmatch(stripped):
        column = COLUMN_LETTERS.find(match[1].upper())
        row = int(match[2]) - 1
        if 0 <= column < size and 0 <= row < size:
            return row * size + column
    elif _CELL_NUMBER.fullmatch(stripped):
        number = int(stripped)
        if 1 <= number <= size * size:
            return number - 1
    raise InvalidCellError(
        text,
        f"{quote_input(text)} is not a cell: use a column letter A-{last_column} and a row "
        f"number 1-{size}, like B2, or a number 1-{size * size} (the board is {size}x{size})",
    )


_UNSET = object()


class Board:
    """An immutable tic-tac-toe position.

    ``Board()`` is the empty 3x3 board with X to move; ``Board(4)`` and ``Board(5)`` the larger
    ones, with their standard line length (``Board(5, line_length=5)`` for another). :meth:`play`
    returns a new board.

    >>> board = Board.from_string("XX./OO./...")
    >>> board.turn, board.legal_moves
    (<Mark.X: 'X'>, (2, 5, 6, 7, 8))
    >>> board.play("C1").outcome()
    Outcome(winner=<Mark.X: 'X'>, lines=((0, 1, 2),))
    """

    __slots__ = ("_geometry", "_o", "_outcome", "_x")

    def __init__(self, size: int = DEFAULT_SIZE, line_length: int | None = None) -> None:
        self._geometry = geometry(size, line_length)
        self._x = 0
        self._o = 0
        self._outcome: object = _UNSET

    @classmethod
    def from_masks(
        cls, x_mask: int, o_mask: int, size: int = DEFAULT_SIZE, line_length: int | None = None
    ) -> Board:
        """A board from the bitmasks of X's and O's cells (bit ``i`` is cell ``i``).

        Unchecked: for engines that already know the position is legal. Use :meth:`from_string`
        for anything that comes from outside.
        """
        return cls._with_geometry(x_mask, o_mask, geometry(size, line_length))

    @classmethod
    def _with_geometry(cls, x_mask: int, o_mask: int, geo: Geometry) -> Board:
        board = cls.__new__(cls)
        board._geometry = geo
        board._x = x_mask
        board._o = o_mask
        board._outcome = _UNSET
        return board

    @classmethod
    def from_moves(
        cls,
        moves: Iterable[int | str],
        size: int = DEFAULT_SIZE,
        line_length: int | None = None,
    ) -> Board:
        """The board after playing ``moves`` in order from the empty board.

        >>> str(Board.from_moves(["B2", "A1", "C3"]))
        'O../.X./..X'
        """
        board = cls(size, line_length)
        for move in moves:
            board = board.play(move)
        return board

    @classmethod
    def from_string(cls, text: str, line_length: int | None = None) -> Board:
        """Parse the form ``str(board)`` gives: rows top to bottom separated by ``/``.

        The number of rows is the board's side; ``line_length`` is its standard one unless given.

        ``X`` and ``O`` (any case) are marks, ``.`` is empty. Whose turn it is follows from the
        counts. Positions no game can reach raise :class:`InvalidBoardError`.

        >>> Board.from_string("X.O/.X./...").turn
        <Mark.O: 'O'>
        >>> Board.from_string("XXX/OOO/...")
        Traceback (most recent call last):
        ...
        game.errors.InvalidBoardError: "XXX/OOO/..." has two winners: no game reaches it
        """
        rows = text.strip().split("/")
        size = len(rows)
        if not 3 <= size <= len(COLUMN_LETTERS) or any(len(row) != size for row in rows):
            raise InvalidBoardError(
                text,
                f"{quote_input(text)} is not a board: give N rows of N cells (N from 3 to "
                f"{len(COLUMN_LETTERS)}) separated by '/', each cell X, O or '.', like X.O/.X./...",
            )
        x_mask = o_mask = 0
        for index, char in enumerate("".join(rows).upper()):
            if char == "X":
                x_mask |= 1 << index
            elif char == "O":
                o_mask |= 1 << index
            elif char != ".":
                raise InvalidBoardError(
                    text, f"{quote_input(text)} is not a board: {char!r} is not X, O or '.'"
                )
        try:
            geo = geometry(size, line_length)
        except ValueError as error:
            raise InvalidBoardError(text, f"{quote_input(text)} is not a board: {error}") from None
        board = cls._with_geometry(x_mask, o_mask, geo)
        board._check_reachable(text)
        return board

    def _check_reachable(self, text: str) -> None:
        x_count, o_count = self._x.bit_count(), self._o.bit_count()
        if x_count not in (o_count, o_count + 1):
            raise InvalidBoardError(
                text,
                f"{quote_input(text)} has {x_count} X and {o_count} O: X moves first and the "
                "players alternate, so X has as many marks as O or one more",
            )
        x_lines = self._geometry.lines_of(self._x)
        o_lines = self._geometry.lines_of(self._o)
        if x_lines and o_lines:
            raise InvalidBoardError(
                text, f"{quote_input(text)} has two winners: no game reaches it"
            )
        if x_lines and x_count == o_count:
            raise InvalidBoardError(text, f"{quote_input(text)} has a move by O after X won")
        if o_lines and x_count > o_count:
            raise InvalidBoardError(text, f"{quote_input(text)} has a move by X after O won")
        winning_lines = x_lines or o_lines
        # Two lines are only reachable when one last mark completed both of them.
        if winning_lines and not set.intersection(*(set(line) for line in winning_lines)):
            raise InvalidBoardError(
                text,
                f"{quote_input(text)} has two separate winning lines: the game ended at the first",
            )

    # -- the position -------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The number of rows (and of columns)."""
        return self._geometry.size

    @property
    def line_length(self) -> int:
        """How many marks in a row win (the game's ``k``)."""
        return self._geometry.line_length

    @property
    def geometry(self) -> Geometry:
        return self._geometry

    @property
    def masks(self) -> tuple[int, int]:
        """The bitmasks of X's and O's cells, for engines."""
        return self._x, self._o

    @property
    def turn(self) -> Mark:
        """The mark to play next (still defined once the game is over)."""
        return Mark.X if self._x.bit_count() == self._o.bit_count() else Mark.O

    @property
    def move_count(self) -> int:
        return self._x.bit_count() + self._o.bit_count()

    def __getitem__(self, cell: int) -> Mark | None:
        if not 0 <= cell < self._geometry.cell_count:
            raise IndexError(f"cell index {cell} is off a {self.size}x{self.size} board")
        bit = 1 << cell
        if self._x & bit:
            return Mark.X
        if self._o & bit:
            return Mark.O
        return None

    @property
    def cells(self) -> tuple[Mark | None, ...]:
        """Every cell's mark, row-major."""
        return tuple(self[cell] for cell in range(self._geometry.cell_count))

    @property
    def empty_cells(self) -> tuple[int, ...]:
        taken = self._x | self._o
        return tuple(cell for cell in range(self._geometry.cell_count) if not taken >> cell & 1)

    @property
    def legal_moves(self) -> tuple[int, ...]:
        """The free cells in ascending order; empty once the game is over."""
        return () if self.is_over else self.empty_cells

    # -- results --------------------------------------------------------------------------

    def outcome(self) -> Outcome | None:
        """The :class:`Outcome` of a finished game, or None while it goes on.

        Everything else about the end of the game (:attr:`winner`, :attr:`winning_line`,
        :attr:`is_over`) is derived from this.
        """
        if self._outcome is _UNSET:
            self._outcome = self._compute_outcome()
        outcome = self._outcome
        assert outcome is None or isinstance(outcome, Outcome)
        return outcome

    def _compute_outcome(self) -> Outcome | None:
        # Only the side that just moved can have a line.
        last = self.turn.other
        lines = self._geometry.lines_of(self._x if last is Mark.X else self._o)
        if lines:
            return Outcome(winner=last, lines=lines)
        if self._x | self._o == self._geometry.full_mask:
            return Outcome(winner=None)
        return None

    @property
    def is_over(self) -> bool:
        return self.outcome() is not None

    @property
    def winner(self) -> Mark | None:
        outcome = self.outcome()
        return outcome.winner if outcome else None

    @property
    def winning_line(self) -> tuple[int, ...] | None:
        outcome = self.outcome()
        return outcome.line if outcome else None

    # -- moves ----------------------------------------------------------------------------

    def parse_move(self, cell: int | str) -> int:
        """Check that ``cell`` (an index or a name) can be played here and return its index.

        Raises :class:`InvalidCellError` for text that names no cell and
        :class:`IllegalMoveError` for a cell that cannot be played in this position; its
        message is one line naming the cell, then the board.

        >>> Board.from_string("X../.../...").parse_move("A1")
        Traceback (most recent call last):
        ...
        game.errors.IllegalMoveError: cannot play A1: it is taken by X
        X . .
        . . .
        . . .
        """
        index = parse_cell(cell, self.size) if isinstance(cell, str) else cell
        count = self._geometry.cell_count
        if not 0 <= index < count:
            self._illegal(index, f"cannot play cell index {index}: use 0 to {count - 1}")
        name = cell_name(index, self.size)
        outcome = self.outcome()
        if outcome is not None:
            ended = "in a draw" if outcome.winner is None else f"with a win for {outcome.winner}"
            self._illegal(index, f"cannot play {name}: the game is over, it ended {ended}")
        taken_by = self[index]
        if taken_by is not None:
            self._illegal(index, f"cannot play {name}: it is taken by {taken_by}")
        return index

    def _illegal(self, index: int, reason: str) -> NoReturn:
        raise IllegalMoveError(self, index, f"{reason}\n{self.grid()}")

    def play(self, cell: int | str) -> Board:
        """The board after the side to move plays ``cell`` (an index or a name like ``"B2"``).

        >>> print(Board().play("A1").play(4).grid())
        X . .
        . O .
        . . .
        """
        index = self.parse_move(cell)
        bit = 1 << index
        if self.turn is Mark.X:
            return Board._with_geometry(self._x | bit, self._o, self._geometry)
        return Board._with_geometry(self._x, self._o | bit, self._geometry)

    # -- text -----------------------------------------------------------------------------

    def grid(self) -> str:
        """The board as rows of ``X``, ``O`` and ``.`` separated by spaces, for people."""
        marks = ["." if mark is None else mark.value for mark in self.cells]
        size = self.size
        return "\n".join(" ".join(marks[row * size : (row + 1) * size]) for row in range(size))

    def __str__(self) -> str:
        marks = "".join("." if mark is None else mark.value for mark in self.cells)
        size = self.size
        return "/".join(marks[row * size : (row + 1) * size] for row in range(size))

    def __repr__(self) -> str:
        if self.line_length == standard_line_length(self.size):
            return f"Board.from_string({str(self)!r})"
        return f"Board.from_string({str(self)!r}, line_length={self.line_length})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Board):
            return NotImplemented
        # Geometries are shared per (size, line length), so identity compares the variant.
        return self._geometry is other._geometry and self._x == other._x and self._o == other._o

    def __hash__(self) -> int:
        return hash((self.size, self.line_length, self._x, self._o))
