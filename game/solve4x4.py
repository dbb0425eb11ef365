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
import sys
import time
from pathlib import Path

from game.ai import MinimaxStrategy
from game.solved import TABLE_FILE, build, solved_table, verify, write_sample


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m game.solve4x4", description=__doc__)
    parser.add_argument("command", choices=["build", "verify", "sample"])
    parser.add_argument(
        "--output",
        type=Path,
        default=Path(__file__).parent / "data" / TABLE_FILE,
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
