"""``python -m game.solve4x4 build|verify``: make the 4x4 table, or prove it and ``minimax``.

``build`` solves every reachable 4x4 position (4 in a row) by exhaustive negamax and writes the
compressed table ``minimax`` plays from (about 45 s here). ``verify`` re-reads the shipped table
and proves it exact by induction over every reachable position, then checks that every move
``minimax`` may choose keeps the position's value (a few minutes). ``sample --output FILE``
writes the positions and solved values the test suite checks
(``tests/data/solved_4x4_sample.json``). It lives apart from
``game.solved`` because it needs the strategies, which themselves need the table.
"""

from __future__ import annotations

import argparse
import json
import lzma
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from game.ai import MinimaxStrategy
from game.board import Board, Geometry, cell_name, geometry
from game.solved import (
    CODE_OF_VALUE,
    LINE_LENGTH,
    SIZE,
    TABLE_PATH,
    SolvedTable,
    solved_table,
    ternary_weights,
)
from game.symmetry import BoardSymmetry


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
    weights = ternary_weights(geo.cell_count)
    packed = bytearray((3**geo.cell_count + 3) // 4)
    for (x_mask, o_mask), value in solver.values.items():
        code = CODE_OF_VALUE[value]
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m game.solve4x4", description=__doc__)
    parser.add_argument("command", choices=["build", "verify", "sample"])
    parser.add_argument(
        "--output",
        type=Path,
        default=TABLE_PATH,
        help="where build writes the table (default: the package's own copy) or sample its "
        "positions",
    )
    parser.add_argument("--count", type=int, default=2500, help="positions in a sample")
    parser.add_argument("--seed", type=int, default=4, help="the sample's random games")
    args = parser.parse_args(argv)
    if args.command == "sample":
        write_sample(args.output, args.count, args.seed)
        return 0
    if args.command == "build":
        build(args.output)
        return 0
    started = time.perf_counter()
    checked = verify(solved_table(), MinimaxStrategy().best_moves)
    print(
        f"verified {checked:,} positions up to symmetry, each with its images, in "
        f"{time.perf_counter() - started:.0f} s: the table is exact and minimax keeps every value"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
