"""Every position a game can reach, for exhaustive checks and for benchmarks.

>>> from game import Board
>>> positions = reachable_positions()
>>> len(positions), sum(1 for board in positions if board.is_over)
(5478, 958)
>>> Board() in positions, Board.from_moves(["A1", "B2"]) in positions
(True, True)
"""

from __future__ import annotations

import functools

from game.board import DEFAULT_SIZE, Board

__all__ = ["reachable_positions"]


@functools.cache
def reachable_positions(size: int = DEFAULT_SIZE) -> frozenset[Board]:
    """Every position some game reaches from the empty ``size`` x ``size`` board, finished ones
    included: 5,478 for 3x3.

    The walk visits each of them, so it is for 3x3 (tens of milliseconds); a 4x4 board has
    millions. The result is cached, and immutable so that callers can share it.
    """
    seen: set[Board] = set()
    stack = [Board(size)]
    while stack:
        board = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        stack.extend(board.play(cell) for cell in board.legal_moves)
    return frozenset(seen)
