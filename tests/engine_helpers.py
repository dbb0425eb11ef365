"""Walks of the whole game tree, shared by the engine tests."""

from __future__ import annotations

import functools
from collections.abc import Callable

from game import Board, Mark


@functools.cache
def reachable_positions() -> frozenset[Board]:
    """Every position some game reaches from the empty board, finished ones included."""
    seen: set[Board] = set()
    stack = [Board()]
    while stack:
        board = stack.pop()
        if board in seen:
            continue
        seen.add(board)
        stack.extend(board.play(cell) for cell in board.legal_moves)
    return frozenset(seen)


def count_games(board: Board) -> int:
    """The number of distinct move sequences from ``board`` to the end of the game."""
    if board.is_over:
        return 1
    return sum(count_games(board.play(cell)) for cell in board.legal_moves)


def can_ever_lose(side: Mark, candidates: Callable[[Board], tuple[int, ...]]) -> bool:
    """Whether ``side`` can lose from the empty board, playing any move ``candidates`` allows
    against every possible reply: the question "is this player unbeatable?" answered exactly.
    """

    @functools.cache
    def loses_somewhere(position: Board) -> bool:
        outcome = position.outcome()
        if outcome is not None:
            return outcome.winner is side.other
        moves = candidates(position) if position.turn is side else position.legal_moves
        return any(loses_somewhere(position.play(cell)) for cell in moves)

    return loses_somewhere(Board())
