"""Ultimate tic-tac-toe: nine small 3x3 boards in a 3x3 grid.

The rule set chosen (others exist, such as one where a decided small board stays playable):

- X moves first, anywhere. A move in cell *c* of a small board (0..8, row-major inside it)
  sends the opponent to small board *c*; when that board is closed (won, or full), the opponent
  may play in any board still open.
- Three in a row wins a small board, which is then closed; a full small board without a line
  counts for nobody. Three small boards in a row win the game.
- The game is drawn when nothing is left to play, or as soon as no line of small boards can be
  completed any more by either side: a side can still take a small board it has won, or an open
  one with a line free of the opponent's marks.

Cells are numbered ``row * 9 + column`` on the 9x9 grid and named like the other boards' cells,
column letter then row number: ``A1`` is the top-left cell, ``I9`` the bottom-right one.

>>> board = UltimateBoard.from_moves([]).play("E5")
>>> board.forced_board, small_board_name(board.forced_board)
(4, 'centre')
>>> [ultimate_cell_name(cell) for cell in board.legal_moves[:3]]
['D4', 'E4', 'F4']
>>> board.play("A1")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
game.errors.IllegalMoveError: A1 is not in the board you were sent to: play in the centre ...
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NoReturn

from game.board import COLUMN_LETTERS, Mark, quote_input
from game.errors import IllegalMoveError, InvalidCellError

__all__ = [
    "META_LINES",
    "SMALL_LINES",
    "ULTIMATE",
    "UltimateBoard",
    "parse_ultimate_cell",
    "small_board_cells",
    "small_board_name",
    "small_board_of",
    "takeable_boards",
    "ultimate_cell_name",
]

# How the variant is named wherever a board size is chosen (3, 4, 5 or this).
ULTIMATE = "ultimate"

SIDE = 9
CELL_COUNT = SIDE * SIDE
# The lines of a 3x3 board, by cell (0..8, row-major): those of a small board inside it, and of
# small boards in the big grid.
SMALL_LINES = (
    *((row, row + 1, row + 2) for row in (0, 3, 6)),
    *((column, column + 3, column + 6) for column in (0, 1, 2)),
    (0, 4, 8),
    (2, 4, 6),
)
META_LINES = SMALL_LINES
LINE_MASKS = tuple(sum(1 << cell for cell in line) for line in SMALL_LINES)
FULL_SMALL = 0b111_111_111
# Whether a 9-bit mask of a 3x3 board holds a line: one lookup instead of eight tests, since the
# engines ask it on every move.
HAS_LINE = tuple(any(mask & line == line for line in LINE_MASKS) for mask in range(512))
# Whether a 3x3 board where the opponent holds the 9-bit mask still has a line free of its marks.
HAS_FREE_LINE = tuple(any(not mask & line for line in LINE_MASKS) for mask in range(512))

_BOARD_NAMES = (
    "top-left",
    "top",
    "top-right",
    "left",
    "centre",
    "right",
    "bottom-left",
    "bottom",
    "bottom-right",
)
_CELL_NAME = re.compile(r"([A-Ia-i])([1-9])")


def small_board_of(cell: int) -> int:
    """Which small board (0..8, row-major) grid cell ``cell`` is in.

    >>> small_board_of(0), small_board_of(40), small_board_of(8), small_board_of(80)
    (0, 4, 2, 8)
    """
    row, column = divmod(cell, SIDE)
    return row // 3 * 3 + column // 3


def _local_of(cell: int) -> int:
    """Which cell of its small board (0..8, row-major) grid cell ``cell`` is."""
    row, column = divmod(cell, SIDE)
    return row % 3 * 3 + column % 3


def _grid_cell(small: int, local: int) -> int:
    return (small // 3 * 3 + local // 3) * SIDE + small % 3 * 3 + local % 3


# Grid cell -> (small board, cell in it) and back: the engines work small board by small board,
# with a 9-bit mask each inside one 81-bit mask (bit ``small * 9 + local``).
SMALL_OF = tuple(small_board_of(cell) for cell in range(CELL_COUNT))
LOCAL_OF = tuple(_local_of(cell) for cell in range(CELL_COUNT))
GRID_CELL = tuple(tuple(_grid_cell(small, local) for local in range(9)) for small in range(9))


def small_board_cells(small: int) -> tuple[int, ...]:
    """The nine grid cells of small board ``small``, row-major.

    >>> small_board_cells(2)
    (6, 7, 8, 15, 16, 17, 24, 25, 26)
    """
    _check_small(small)
    return GRID_CELL[small]


def small_board_name(small: int) -> str:
    """The name the errors and the terminal give small board ``small``.

    >>> small_board_name(0), small_board_name(4), small_board_name(8)
    ('top-left', 'centre', 'bottom-right')
    """
    _check_small(small)
    return _BOARD_NAMES[small]


def _check_small(small: int) -> None:
    if not 0 <= small < 9:
        raise ValueError(f"small board {small} does not exist: use 0 to 8")


def _small_board_range(small: int) -> str:
    """``G1..I3``: the names of a small board's first and last cells."""
    cells = GRID_CELL[small]
    return f"{ultimate_cell_name(cells[0])}..{ultimate_cell_name(cells[-1])}"


def ultimate_cell_name(cell: int) -> str:
    """The name of grid cell ``cell``: column letter A..I, then row number 1..9.

    >>> ultimate_cell_name(0), ultimate_cell_name(40), ultimate_cell_name(80)
    ('A1', 'E5', 'I9')
    """
    if not 0 <= cell < CELL_COUNT:
        raise ValueError(f"cell index {cell} is off the 9x9 grid: use 0 to {CELL_COUNT - 1}")
    row, column = divmod(cell, SIDE)
    return f"{COLUMN_LETTERS[column]}{row + 1}"


def parse_ultimate_cell(text: str) -> int:
    """The grid cell ``text`` names (``A1``..``I9``, any case, spaces around ignored), by the
    grid alone: whether it may be played is :meth:`UltimateBoard.parse_move`'s business.

    >>> parse_ultimate_cell("e5"), parse_ultimate_cell(" I9 ")
    (40, 80)
    >>> parse_ultimate_cell("J1")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    game.errors.InvalidCellError: "J1" is not a cell: use a column letter A-I and a row number...
    """
    match = _CELL_NAME.fullmatch(text.strip())
    if match is None:
        raise InvalidCellError(
            text,
            f"{quote_input(text)} is not a cell: use a column letter A-I and a row number 1-9, "
            "like E5",
        )
    return (int(match[2]) - 1) * SIDE + COLUMN_LETTERS.index(match[1].upper())


def apply_move(
    x: int, o: int, won_x: int, won_o: int, closed: int, x_to_move: bool, small: int, local: int
) -> tuple[int, int, int, int, int, int]:
    """The masks after the side to move plays cell ``local`` of small board ``small`` (unchecked)
    and the board the opponent is sent to (-1: any open one): ``(x, o, won_x, won_o, closed,
    forced)``."""
    bit = 1 << (small * 9 + local)
    if x_to_move:
        x |= bit
        marks = x >> (small * 9) & FULL_SMALL
    else:
        o |= bit
        marks = o >> (small * 9) & FULL_SMALL
    if HAS_LINE[marks]:
        if x_to_move:
            won_x |= 1 << small
        else:
            won_o |= 1 << small
        closed |= 1 << small
    elif (x | o) >> (small * 9) & FULL_SMALL == FULL_SMALL:
        closed |= 1 << small
    forced = -1 if closed >> local & 1 else local
    return x, o, won_x, won_o, closed, forced


def can_still_take(mine: int, theirs: int, small: int, won_mine: int, closed: int) -> bool:
    """Whether a side can still count small board ``small`` in a line: it won it, or the board
    is open and has a line free of the opponent's marks (``mine`` and ``theirs`` are 81-bit)."""
    return bool(takeable_boards(theirs, won_mine, closed) >> small & 1)


def takeable_boards(theirs: int, won_mine: int, closed: int) -> int:
    """The small boards (a 9-bit mask) a side can still count in a line: those it won, and the
    open ones with a line free of the opponent's marks (``theirs``, 81-bit)."""
    takeable = won_mine
    for small in range(9):
        if not closed >> small & 1 and HAS_FREE_LINE[theirs >> (small * 9) & FULL_SMALL]:
            takeable |= 1 << small
    return takeable


def meta_line_alive(x: int, o: int, won_x: int, won_o: int, closed: int) -> bool:
    """Whether either side can still complete a line of small boards."""
    return (
        HAS_LINE[takeable_boards(o, won_x, closed)] or HAS_LINE[takeable_boards(x, won_o, closed)]
    )


@dataclass(frozen=True, slots=True)
class UltimateBoard:
    """An immutable ultimate tic-tac-toe position: the moves played so far (grid cells, in
    order) and everything that follows from them.

    ``UltimateBoard()`` (or ``from_moves(())``) is the empty board with X to move;
    :meth:`play` returns a new board. Building one from ``moves`` checks every move.
    """

    moves: tuple[int, ...] = ()
    _x: int = field(default=0, init=False, repr=False, compare=False)
    _o: int = field(default=0, init=False, repr=False, compare=False)
    _won_x: int = field(default=0, init=False, repr=False, compare=False)
    _won_o: int = field(default=0, init=False, repr=False, compare=False)
    _closed: int = field(default=0, init=False, repr=False, compare=False)
    _forced: int = field(default=-1, init=False, repr=False, compare=False)
    _winner: Mark | None = field(default=None, init=False, repr=False, compare=False)
    _winning_line: tuple[int, int, int] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _over: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        moves = tuple(self.moves)
        board = UltimateBoard.__new__(UltimateBoard)
        _set_empty(board)
        for move in moves:
            board = board.play(move)
        for name in UltimateBoard.__slots__:
            object.__setattr__(self, name, getattr(board, name))
        object.__setattr__(self, "moves", moves)

    @classmethod
    def from_moves(cls, moves: Iterable[int | str]) -> UltimateBoard:
        """The board after ``moves`` (grid cells or their names) from the empty board; ``()`` is
        the empty board. A move that cannot be played raises what :meth:`play` raises.

        >>> UltimateBoard.from_moves(["E5", "E4"]).forced_board
        1
        """
        board = cls.__new__(cls)
        _set_empty(board)
        for move in moves:
            board = board.play(move)
        return board

    # -- the position -----------------------------------------------------------------------

    @property
    def turn(self) -> Mark:
        """The mark to play next (still defined once the game is over)."""
        return Mark.O if len(self.moves) % 2 else Mark.X

    @property
    def move_count(self) -> int:
        return len(self.moves)

    @property
    def size(self) -> int:
        """The side of its grid, 9: cells are numbered and named as on a 9x9 board
        (:func:`game.cell_name` with size 9 names them too)."""
        return SIDE

    @property
    def forced_board(self) -> int | None:
        """The small board (0..8) the side to move must play in, or None when it may choose any
        open one (the first move, or after being sent to a closed board)."""
        return None if self._forced < 0 else self._forced

    @property
    def masks(self) -> tuple[int, int, int, int, int, int]:
        """For engines: ``(x, o, won_x, won_o, closed, forced)`` with the marks as 81-bit masks
        (bit ``small * 9 + local``), the small boards as 9-bit masks and ``forced`` -1 for any
        open board (see :func:`apply_move`)."""
        return self._x, self._o, self._won_x, self._won_o, self._closed, self._forced

    def __getitem__(self, cell: int) -> Mark | None:
        """The mark in grid cell ``cell``, or None."""
        if not 0 <= cell < CELL_COUNT:
            raise IndexError(f"cell index {cell} is off the 9x9 grid")
        bit = 1 << (SMALL_OF[cell] * 9 + LOCAL_OF[cell])
        if self._x & bit:
            return Mark.X
        if self._o & bit:
            return Mark.O
        return None

    def small_winner(self, small: int) -> Mark | None:
        """Who won small board ``small``, or None (open, or full without a line)."""
        _check_small(small)
        if self._won_x >> small & 1:
            return Mark.X
        if self._won_o >> small & 1:
            return Mark.O
        return None

    def small_is_closed(self, small: int) -> bool:
        """Whether small board ``small`` takes no more moves: won, or full."""
        _check_small(small)
        return bool(self._closed >> small & 1)

    @property
    def legal_moves(self) -> tuple[int, ...]:
        """The grid cells the side to move may play, ascending; none once the game is over."""
        if self._over:
            return ()
        taken = self._x | self._o
        smalls = range(9) if self._forced < 0 else (self._forced,)
        return tuple(
            sorted(
                GRID_CELL[small][local]
                for small in smalls
                if not self._closed >> small & 1
                for local in range(9)
                if not taken >> (small * 9 + local) & 1
            )
        )

    # -- results ----------------------------------------------------------------------------

    @property
    def winner(self) -> Mark | None:
        return self._winner

    @property
    def winning_line(self) -> tuple[int, int, int] | None:
        """The three small boards in a row that won the game, or None."""
        return self._winning_line

    @property
    def is_over(self) -> bool:
        return self._over

    @property
    def is_draw(self) -> bool:
        """Over without a winner: nothing left to play, or no line of small boards can be
        completed any more by either side (the game then ends early)."""
        return self._over and self._winner is None

    # -- moves ------------------------------------------------------------------------------

    def parse_move(self, text: int | str) -> int:
        """The grid cell ``text`` names (or the cell index itself), checked against the rules
        here: an :class:`InvalidCellError` for text that names no cell, an
        :class:`IllegalMoveError` saying what may be played for one that cannot be played now.

        >>> board = UltimateBoard.from_moves(["E5", "E4"])
        >>> board.parse_move(" e2 ")
        13
        >>> board.parse_move("A1")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        game.errors.IllegalMoveError: A1 is not in the board you were sent to: play in the top ...
        """
        return self._check_move(parse_ultimate_cell(text) if isinstance(text, str) else text)

    def _check_move(self, cell: int) -> int:
        if not 0 <= cell < CELL_COUNT:
            self._illegal(cell, f"cannot play cell index {cell}: use 0 to {CELL_COUNT - 1}")
        name = ultimate_cell_name(cell)
        if self._over:
            ended = "in a draw" if self._winner is None else f"with a win for {self._winner}"
            self._illegal(cell, f"cannot play {name}: the game is over, it ended {ended}")
        small = SMALL_OF[cell]
        if self._forced >= 0 and small != self._forced:
            self._illegal(
                cell,
                f"{name} is not in the board you were sent to: play in the "
                f"{_BOARD_NAMES[self._forced]} board, {_small_board_range(self._forced)}",
            )
        # Where a cell may not be played at all, that is said first, with where to play; a
        # closed board with a free cell is a won one (a full board's cells are all taken).
        winner = self.small_winner(small)
        if winner is not None:
            self._illegal(
                cell,
                f"{name} is in the {_BOARD_NAMES[small]} board, which was won by {winner}: play "
                "in a board that is still open",
            )
        taken_by = self[cell]
        if taken_by is not None:
            self._illegal(cell, f"cannot play {name}: it is taken by {taken_by}")
        return cell

    def _illegal(self, cell: int, reason: str) -> NoReturn:
        raise IllegalMoveError(self, cell, reason)

    def play(self, move: int | str) -> UltimateBoard:
        """The board after the side to move plays ``move`` (a grid cell or its name).

        >>> UltimateBoard().play("E5").play(30).moves
        (40, 30)
        """
        cell = self.parse_move(move)
        small, local = SMALL_OF[cell], LOCAL_OF[cell]
        x_to_move = not len(self.moves) % 2
        x, o, won_x, won_o, closed, forced = apply_move(
            self._x, self._o, self._won_x, self._won_o, self._closed, x_to_move, small, local
        )
        board = UltimateBoard.__new__(UltimateBoard)
        winner: Mark | None = None
        winning_line = None
        won = won_x if x_to_move else won_o
        if won >> small & 1:
            for line in META_LINES:
                if small in line and all(won >> other & 1 for other in line):
                    winner = Mark.X if x_to_move else Mark.O
                    winning_line = line
                    break
        over = (
            winner is not None
            or closed == FULL_SMALL
            or not meta_line_alive(x, o, won_x, won_o, closed)
        )
        for name, value in (
            ("moves", (*self.moves, cell)),
            ("_x", x),
            ("_o", o),
            ("_won_x", won_x),
            ("_won_o", won_o),
            ("_closed", closed),
            ("_forced", forced),
            ("_winner", winner),
            ("_winning_line", winning_line),
            ("_over", over),
        ):
            object.__setattr__(board, name, value)
        return board

    # -- text -------------------------------------------------------------------------------

    def grid(self) -> str:
        """The 9x9 grid as text for people: ``X``, ``O`` and ``.``, small boards apart.

        >>> print(UltimateBoard.from_moves(["E5"]).grid().splitlines()[5])
        . . . | . X . | . . .
        """
        rows = []
        for row in range(SIDE):
            if row and row % 3 == 0:
                rows.append("------+-------+------")
            marks = [self[row * SIDE + column] for column in range(SIDE)]
            text = ["." if mark is None else mark.value for mark in marks]
            rows.append(" | ".join(" ".join(text[start : start + 3]) for start in (0, 3, 6)))
        return "\n".join(rows)


def _set_empty(board: UltimateBoard) -> None:
    for name, value in (
        ("moves", ()),
        ("_x", 0),
        ("_o", 0),
        ("_won_x", 0),
        ("_won_o", 0),
        ("_closed", 0),
        ("_forced", -1),
        ("_winner", None),
        ("_winning_line", None),
        ("_over", False),
    ):
        object.__setattr__(board, name, value)
