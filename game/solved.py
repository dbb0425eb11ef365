"""The 4x4 game (4 in a row) solved outright, and the table of its values shipped as package data.

Every position a 4x4 game can reach is scored win, draw or loss for the side to move, by an
exhaustive negamax over the positions up to symmetry. The values are stored at each position's
base-3 index (X's cells count 1, O's cells 2), four to a byte, and compressed: ``minimax`` plays
4x4 perfectly by looking up the value of each move's result.

    python -m game.solve4x4 build    # solve the game, write game/data/solved_4x4.xz (a minute)
    python -m game.solve4x4 verify   # prove the table exact and minimax perfect (minutes)

>>> from game.board import Board
>>> solved_value(Board(4))  # 4x4 with 4 in a row is a draw
0
>>> solved_value(Board.from_string("XXX./OOO./..../...."))  # X to move completes the row
1
"""

from __future__ import annotations

import functools
import json
import lzma
import random
import time
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path

from game.board import Board, Geometry, cell_name, geometry
from game.symmetry import BoardSymmetry

__all__ = [
    "TABLE_FILE",
    "SolvedTable",
    "build",
    "canonical_positions",
    "solved_table",
    "solved_value",
    "verify",
    "write_sample",
]

SIZE = 4
LINE_LENGTH = 4
TABLE_FILE = "solved_4x4.xz"
# Two bits per position: what the side to move gets with perfect play on both sides. Positions
# no game reaches keep code 0 (a draw), which is what makes the table compress so well.
_CODE_OF_VALUE = {0: 0, 1: 1, -1: 2}
_VALUE_OF_CODE = (0, 1, -1, 0)


@functools.cache
def _ternary_weights(cell_count: int) -> tuple[int, ...]:
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
        self._weights = _ternary_weights(SIZE * SIZE)

    def value(self, x_mask: int, o_mask: int) -> int:
        """+1 if the side to move wins with perfect play, 0 for a draw, -1 if it loses."""
        index = self._weights[x_mask] + 2 * self._weights[o_mask]
        return _VALUE_OF_CODE[self._packed[index >> 2] >> ((index & 3) << 1) & 3]


@functools.cache
def solved_table() -> SolvedTable:
    """The shipped table, decompressed once, on first use (about 11 MB in memory)."""
    compressed = resources.files("game.data").joinpath(TABLE_FILE).read_bytes()
    return SolvedTable(lzma.decompress(compressed))


def solved_value(board: Board) -> int:
    """The game-theoretic value of a 4x4 (4 in a row) position for the side to move."""
    if (board.size, board.line_length) != (SIZE, LINE_LENGTH):
        raise ValueError(
            f"only 4x4 with 4 in a row is solved, not {board.size}x{board.size} "
            f"with {board.line_length}"
        )
    x_mask, o_mask = board.masks
    return solved_table().value(x_mask, o_mask)


# -- building and proving the table ------------------------------------------------------------


class _Solver:
    """Exhaustive negamax over canonical positions: every child of every reachable position is
    scored (no pruning), so that the table holds every position a game can reach."""

    def __init__(self, geo: Geometry) -> None:
        self.geo = geo
        self.symmetry = BoardSymmetry(geo)
        self.has_line = bytes(geo.has_line(mask) for mask in range(1 << geo.cell_count))
        self.values: dict[tuple[int, int], int] = {}

    def value(self, x_mask: int, o_mask: int) -> int:
        key = self.symmetry.canonical(x_mask, o_mask)
        found = self.values.get(key)
        if found is not None:
            return found
        x_to_move = x_mask.bit_count() == o_mask.bit_count()
        taken = x_mask | o_mask
        if self.has_line[o_mask if x_to_move else x_mask]:
            result = -1  # the side that just moved has won
        elif taken == self.geo.full_mask:
            result = 0
        else:
            result = -1
            for cell in range(self.geo.cell_count):
                bit = 1 << cell
                if taken & bit:
                    continue
                if x_to_move:
                    child = -self.value(x_mask | bit, o_mask)
                else:
                    child = -self.value(x_mask, o_mask | bit)
                result = max(result, child)
        self.values[key] = result
        return result


def solve() -> _Solver:
    """Every reachable 4x4 position solved, up to symmetry (about 45 s here)."""
    solver = _Solver(geometry(SIZE, LINE_LENGTH))
    started = time.perf_counter()
    root = solver.value(0, 0)
    print(
        f"solved {len(solver.values):,} positions up to symmetry in "
        f"{time.perf_counter() - started:.0f} s; the empty board is worth {root}"
    )
    return solver


def build(output: Path) -> None:
    """Solve every reachable position and write the packed, compressed table to ``output``."""
    solver = solve()
    geo = solver.geo
    weights = _ternary_weights(geo.cell_count)
    packed = bytearray((3**geo.cell_count + 3) // 4)
    for (x_mask, o_mask), value in solver.values.items():
        code = _CODE_OF_VALUE[value]
        for image_x, image_o in solver.symmetry.images(x_mask, o_mask):
            index = weights[image_x] + 2 * weights[image_o]
            packed[index >> 2] |= code << ((index & 3) << 1)
    compressed = lzma.compress(bytes(packed), preset=9 | lzma.PRESET_EXTREME)
    output.write_bytes(compressed)
    print(f"wrote {output} ({len(compressed):,} bytes)")


def write_sample(output: Path, count: int, seed: int) -> None:
    """Write ``count`` live positions, met by random games, with the solver's value of each and
    of each move's result, as JSON: the test suite's check of the shipped table and of
    ``minimax``, from the solver's own values rather than the packed table."""
    solver = solve()
    rng = random.Random(seed)
    samples: dict[str, dict[str, object]] = {}
    while len(samples) < count:
        board = Board(SIZE, LINE_LENGTH)
        # Stop at a random ply, so that early, middle and late positions all appear.
        stop = rng.randrange(board.geometry.cell_count)
        while not board.is_over and board.move_count < stop:
            board = board.play(rng.choice(board.legal_moves))
        if board.is_over:
            continue
        samples[str(board)] = {
            "value": solver.value(*board.masks),
            "moves": {
                cell_name(cell, SIZE): -solver.value(*board.play(cell).masks)
                for cell in board.legal_moves
            },
        }
    output.write_text(json.dumps(samples, indent=0, sort_keys=True) + "\n")
    print(f"wrote {len(samples):,} positions to {output}")


def canonical_positions(geo: Geometry) -> Iterator[tuple[int, int]]:
    """Every reachable position up to symmetry, each once, by a walk from the empty board."""
    symmetry = BoardSymmetry(geo)
    seen = {(0, 0)}
    stack = [(0, 0)]
    while stack:
        x_mask, o_mask = stack.pop()
        yield x_mask, o_mask
        board = Board.from_masks(x_mask, o_mask, geo.size, geo.line_length)
        for cell in board.legal_moves:
            child = symmetry.canonical(*board.play(cell).masks)
            if child not in seen:
                seen.add(child)
                stack.append(child)


def verify(table: SolvedTable, best_moves: Callable[[Board], tuple[int, ...]]) -> int:
    """Prove the table exact, and ``best_moves`` perfect, over every reachable position.

    Finished positions must hold their real result, and every live one the best of its
    children's values (negated): by induction from the end of the game, the table is then the
    game-theoretic value everywhere. Each image of a position must hold the same value, and
    every move ``best_moves`` offers must keep the position's value. Returns how many positions
    (up to symmetry) were checked; raises AssertionError at the first disagreement.
    """
    geo = geometry(SIZE, LINE_LENGTH)
    symmetry = BoardSymmetry(geo)
    checked = 0
    for x_mask, o_mask in canonical_positions(geo):
        board = Board.from_masks(x_mask, o_mask, SIZE, LINE_LENGTH)
        value = table.value(x_mask, o_mask)
        for image in symmetry.images(x_mask, o_mask):
            assert table.value(*image) == value, f"{board}: its images disagree"
        outcome = board.outcome()
        if outcome is not None:
            expected = 0 if outcome.winner is None else -1
            assert value == expected, f"{board}: finished, worth {expected}, stored {value}"
        else:
            children = {cell: -table.value(*board.play(cell).masks) for cell in board.legal_moves}
            assert value == max(children.values()), f"{board}: {value}, children {children}"
            for cell in best_moves(board):
                assert children[cell] == value, f"{board}: best move {cell} loses value"
        checked += 1
    return checked
