"""The 3x3 game solved: every reachable position's score and best moves, shipped as package data.

``minimax`` answers a 3x3 position by one lookup in this table. The whole game used to be solved
in the first process that asked, about 20-40 ms at every start (the terminal game, every test
process); the table is the same every time, so it ships instead (``game/data/solved_3x3.bin``,
38 KB) and reading it takes well under a millisecond.

A score is for the side to move: 0 is a draw, ``1 + k`` a win that leaves ``k`` cells empty (a
faster win scores higher), and ``-(1 + k)`` a loss (a slower loss scores higher). The best moves
are every move with the best score, in ascending order.

    python -m game.solved3x3 build    # solve the game, write game/data/solved_3x3.bin
    python -m game.solved3x3 verify   # solve it again and compare it with the shipped table

The tests prove the shipped table equal to what :class:`Solver` computes, and the solver equal
to a plain recursive negamax in every position.

>>> from game.board import Board
>>> shipped_table().entry(Board())  # the empty board is a draw, and every move keeps it
(0, (0, 1, 2, 3, 4, 5, 6, 7, 8))
>>> shipped_table().entry(Board.from_string("XX./OO./..."))  # X wins at once, 4 cells left
(5, (2,))
"""

from __future__ import annotations

import functools
import os
import sys

from game.board import Board, Geometry, geometry

__all__ = [
    "LINE_LENGTH",
    "SIZE",
    "TABLE_FILE",
    "TABLE_PATH",
    "ShippedTable",
    "Solver",
    "pack",
    "shipped_table",
    "ternary_weights",
]

SIZE = 3
LINE_LENGTH = 3
TABLE_FILE = "solved_3x3.bin"
# A plain path rather than pathlib's: this module is on every 3x3 program's start, and pathlib
# is not always imported already (it is in a development install, for its import hook).
TABLE_PATH = os.path.join(os.path.dirname(__file__), "data", TABLE_FILE)
_CELLS = SIZE * SIZE
# An entry is two bytes, little-endian, at its position's base-3 index: the best moves as a
# 9-bit mask, and above them the score plus _SCORE_OFFSET (scores run from -10 to 10).
_SCORE_OFFSET = 10
_MOVE_BITS = 9
_ABSENT = 0xFFFF  # no game reaches this index


@functools.cache
def ternary_weights(cell_count: int) -> tuple[int, ...]:
    """``weights[mask]``: the sum of 3**cell over the cells of ``mask``, so that a position's
    base-3 index is ``weights[x] + 2 * weights[o]``: two lookups instead of a loop."""
    weights = [0] * (1 << cell_count)
    for mask in range(1, 1 << cell_count):
        low = mask & -mask
        weights[mask] = weights[mask ^ low] + 3 ** (low.bit_length() - 1)
    return tuple(weights)


@functools.cache
def _cells_of_mask() -> tuple[tuple[int, ...], ...]:
    """``cells[mask]``: the cells of a 9-bit mask in ascending order."""
    cells: list[tuple[int, ...]] = [()]
    for mask in range(1, 1 << _CELLS):
        low = mask & -mask
        cells.append((low.bit_length() - 1, *cells[mask ^ low]))
    return tuple(cells)


class ShippedTable:
    """The shipped scores and best moves of every reachable 3x3 position."""

    def __init__(self, packed: bytes) -> None:
        if len(packed) != 2 * 3**_CELLS:
            raise ValueError(
                f"a 3x3 table is 2 bytes for each of the {3**_CELLS} base-3 indices, "
                f"not {len(packed)} bytes"
            )
        self._packed = packed
        self._weights = ternary_weights(_CELLS)
        self._cells = _cells_of_mask()

    def entry(self, board: Board) -> tuple[int, tuple[int, ...]] | None:
        """``board``'s score for the side to move and its best moves, or None when no game
        reaches it (a board made with :meth:`Board.from_masks` can be anything)."""
        x_mask, o_mask = board.masks
        at = 2 * (self._weights[x_mask] + 2 * self._weights[o_mask])
        packed = self._packed
        word = packed[at] | packed[at + 1] << 8
        if word == _ABSENT:
            return None
        return (word >> _MOVE_BITS) - _SCORE_OFFSET, self._cells[word & (1 << _MOVE_BITS) - 1]


@functools.cache
def shipped_table() -> ShippedTable:
    """The shipped table, read once, on first use."""
    with open(TABLE_PATH, "rb") as file:
        return ShippedTable(file.read())


def pack(entries: dict[int, tuple[int, tuple[int, ...]]]) -> bytes:
    """The table file's bytes for ``entries`` (:attr:`Solver.entries`' form: key ``x | o << 9``
    to score and best moves)."""
    weights = ternary_weights(_CELLS)
    words = [_ABSENT] * 3**_CELLS
    full = (1 << _CELLS) - 1
    for key, (score, moves) in entries.items():
        x_mask, o_mask = key & full, key >> _CELLS
        words[weights[x_mask] + 2 * weights[o_mask]] = (score + _SCORE_OFFSET) << _MOVE_BITS | sum(
            1 << cell for cell in moves
        )
    return b"".join(word.to_bytes(2, "little") for word in words)


class Solver:
    """The game-theoretic score of every position of a small board (up to 16 cells), solved by
    a memoised negamax over bitmasks: the table's maker, and the answer for a position the
    shipped table does not hold (one no game reaches).

    :meth:`solve` fills :attr:`entries` with every position reachable from the empty board
    (5,478 on 3x3), each with its score and best moves; :meth:`entry` solves any other position
    on demand.
    """

    def __init__(self, geo: Geometry) -> None:
        self._geo = geo
        # A table of "does this mask hold a line" is 512 bytes for 3x3; past 4x4 it stops paying.
        self._has_line: bytes | None = None
        if geo.cell_count <= 16:
            self._has_line = bytes(geo.has_line(mask) for mask in range(1 << geo.cell_count))
        # Key ``x | o << cell_count``: score and best moves.
        self.entries: dict[int, tuple[int, tuple[int, ...]]] = {}

    def solve(self) -> dict[int, tuple[int, tuple[int, ...]]]:
        """Every position reachable from the empty board, solved: :attr:`entries`."""
        self._solve(0, 0)
        return self.entries

    def entry(self, board: Board) -> tuple[int, tuple[int, ...]]:
        x_mask, o_mask = board.masks
        key = x_mask | o_mask << self._geo.cell_count
        found = self.entries.get(key)
        if found is None:
            self._solve(x_mask, o_mask)
            found = self.entries[key]
        return found

    def _line(self, mask: int) -> bool:
        table = self._has_line
        return bool(table[mask]) if table is not None else self._geo.has_line(mask)

    def _solve(self, x_mask: int, o_mask: int) -> None:
        """Put this position and every position below it in the table, children first.

        A loop over an explicit stack rather than recursion, so that solving neither depends on
        nor changes the interpreter's recursion limit. Children are solved one after the other in
        ascending cell order, as a recursive negamax would solve them, so the table gets the same
        entries in the same order.
        """
        table = self.entries
        n = self._geo.cell_count
        full = self._geo.full_mask
        # A frame is a position's key and whether its children are in the table yet.
        stack: list[tuple[int, bool]] = [(x_mask | o_mask << n, False)]
        while stack:
            key, children_solved = stack.pop()
            if key in table:
                continue  # reached again by another order of the same moves
            x_mask, o_mask = key & full, key >> n
            x_to_move = x_mask.bit_count() == o_mask.bit_count()
            taken = x_mask | o_mask
            # A move sets the cell's bit in the mover's half of the key.
            shift = 0 if x_to_move else n
            if children_solved:
                table[key] = self._best(key, taken, shift)
                continue
            empties = n - taken.bit_count()
            if self._line(o_mask if x_to_move else x_mask):
                table[key] = (-(1 + empties), ())
            elif empties == 0:
                table[key] = (0, ())
            else:
                stack.append((key, True))
                # Highest cell first, so that the lowest is popped, and solved, first.
                for cell in range(n - 1, -1, -1):
                    child = key | 1 << cell << shift
                    if not taken >> cell & 1 and child not in table:
                        stack.append((child, False))

    def _best(self, key: int, taken: int, shift: int) -> tuple[int, tuple[int, ...]]:
        """The score of a live position whose children are all solved, and its best moves."""
        table = self.entries
        best = -(self._geo.cell_count + 2)
        best_moves: list[int] = []
        for cell in range(self._geo.cell_count):
            if taken >> cell & 1:
                continue
            child = -table[key | 1 << cell << shift][0]
            if child > best:
                best = child
                best_moves = [cell]
            elif child == best:
                best_moves.append(cell)
        return best, tuple(best_moves)


def main(argv: list[str] | None = None) -> int:
    """``build`` writes the table, ``verify`` compares the shipped one with a fresh solve.
    (Two words, read without argparse: importing it would cost every 3x3 program's start.)"""
    command = sys.argv[1:] if argv is None else argv
    if command not in (["build"], ["verify"]):
        print("usage: python -m game.solved3x3 build|verify", file=sys.stderr)
        return 2
    packed = pack(Solver(geometry(SIZE, LINE_LENGTH)).solve())
    if command == ["build"]:
        with open(TABLE_PATH, "wb") as file:
            file.write(packed)
        print(f"wrote {len(packed):,} bytes to {TABLE_PATH}")
        return 0
    with open(TABLE_PATH, "rb") as file:
        if file.read() != packed:
            print(f"{TABLE_PATH} differs from a fresh solve: build it again", file=sys.stderr)
            return 1
    print("the shipped 3x3 table equals a fresh solve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
