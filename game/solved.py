"""The 4x4 game (4 in a row) solved outright, and the table of its values shipped as package data.

Every position a 4x4 game can reach is scored win, draw or loss for the side to move, by an
exhaustive negamax over the positions up to symmetry. The values are stored at each position's
base-3 index (X's cells count 1, O's cells 2), four to a byte, and compressed: ``minimax`` plays
4x4 perfectly by looking up the value of each move's result.

    python -m game.solve4x4 build    # solve the game, write game/data/solved_4x4.xz (a minute)
    python -m game.solve4x4 verify   # prove the table exact and minimax perfect (minutes)

Only the lookup is here, so that importing the engine stays cheap; making and proving the table
is in :mod:`game.solve4x4`.

>>> from game.board import Board
>>> solved_value(Board(4))  # 4x4 with 4 in a row is a draw
0
>>> solved_value(Board.from_string("XXX./OOO./..../...."))  # X to move completes the row
1
"""

from __future__ import annotations

import functools
import lzma
from pathlib import Path

from game.board import Board

__all__ = [
    "CODE_OF_VALUE",
    "LINE_LENGTH",
    "SIZE",
    "TABLE_FILE",
    "TABLE_PATH",
    "SolvedTable",
    "solved_table",
    "solved_value",
    "ternary_weights",
]

SIZE = 4
LINE_LENGTH = 4
TABLE_FILE = "solved_4x4.xz"
# Beside the module rather than through importlib.resources: that import alone would add a few
# milliseconds to every program's start, 3x3 included.
TABLE_PATH = Path(__file__).parent / "data" / TABLE_FILE
# Two bits per position: what the side to move gets with perfect play on both sides. Positions
# no game reaches keep code 0 (a draw), which is what makes the table compress so well.
CODE_OF_VALUE = {0: 0, 1: 1, -1: 2}
_VALUE_OF_CODE = (0, 1, -1, 0)


@functools.cache
def ternary_weights(cell_count: int) -> tuple[int, ...]:
    """``weights[mask]``: the sum of 3**cell over the cells of ``mask``, so that a position's
    base-3 index is ``weights[x] + 2 * weights[o]``: two lookups instead of a loop."""
    weights = [0] * (1 << cell_count)
    for mask in range(1, 1 << cell_count):
        low = mask & -mask
        weights[mask] = weights[mask ^ low] + 3 ** (low.bit_length() - 1)
    return tuple(weights)


class SolvedTable:
    """Win, draw or loss for the side to move in every reachable 4x4 position."""

    def __init__(self, packed: bytes) -> None:
        self._packed = packed
        self._weights = ternary_weights(SIZE * SIZE)

    def value(self, x_mask: int, o_mask: int) -> int:
        """+1 if the side to move wins with perfect play, 0 for a draw, -1 if it loses."""
        index = self._weights[x_mask] + 2 * self._weights[o_mask]
        return _VALUE_OF_CODE[self._packed[index >> 2] >> ((index & 3) << 1) & 3]


@functools.cache
def solved_table() -> SolvedTable:
    """The shipped table, decompressed once, on first use (about 11 MB in memory)."""
    return SolvedTable(lzma.decompress(TABLE_PATH.read_bytes()))


def solved_value(board: Board) -> int:
    """The game-theoretic value of a 4x4 (4 in a row) position for the side to move."""
    if (board.size, board.line_length) != (SIZE, LINE_LENGTH):
        raise ValueError(
            f"only 4x4 with 4 in a row is solved, not {board.size}x{board.size} "
            f"with {board.line_length}"
        )
    x_mask, o_mask = board.masks
    return solved_table().value(x_mask, o_mask)
