"""How fast ``minimax`` answers, against the textbook recursion, measured in one run.

    python -m bench.engine            # a few seconds

Targets (issue "Foundation and the game engine"): from any reachable position, a median choice
in <= 20 us and a p99 <= 100 us, after a one-time cost <= 50 ms (import plus first call), and at
least 10,000 times faster than naive minimax choosing X's first move on the empty board.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from game import Board, reachable_positions
from game.ai import MinimaxStrategy

FIRST_CALL = """
import time
start = time.perf_counter()
from game import Board
from game.ai import get_strategy
get_strategy("minimax").choose(Board())
print(time.perf_counter() - start)
"""


class NaiveMinimax:
    """Minimax as the tutorials write it: a mutable list, no pruning, no memo, full depth."""

    LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))

    def __init__(self) -> None:
        self.nodes = 0

    def winner(self, cells: list[str]) -> str | None:
        for a, b, c in self.LINES:
            if cells[a] != " " and cells[a] == cells[b] == cells[c]:
                return cells[a]
        return None

    def value(self, cells: list[str], player: str, me: str) -> int:
        self.nodes += 1
        won = self.winner(cells)
        if won is not None:
            return 1 if won == me else -1
        if " " not in cells:
            return 0
        other = "O" if player == "X" else "X"
        results = []
        for cell in range(9):
            if cells[cell] == " ":
                cells[cell] = player
                results.append(self.value(cells, other, me))
                cells[cell] = " "
        return max(results) if player == me else min(results)

    def choose(self, cells: list[str], me: str) -> int:
        other = "O" if me == "X" else "X"
        best_cell, best_value = -1, -2
        for cell in range(9):
            if cells[cell] == " ":
                cells[cell] = me
                result = self.value(cells, other, me)
                cells[cell] = " "
                if result > best_value:
                    best_cell, best_value = cell, result
        return best_cell


class CopyingNaiveMinimax(NaiveMinimax):
    """The same search, copying the board at every node as many tutorials also do."""

    def value(self, cells: list[str], player: str, me: str) -> int:
        self.nodes += 1
        won = self.winner(cells)
        if won is not None:
            return 1 if won == me else -1
        if " " not in cells:
            return 0
        other = "O" if player == "X" else "X"
        results = []
        for cell in range(9):
            if cells[cell] == " ":
                child = list(cells)
                child[cell] = player
                results.append(self.value(child, other, me))
        return max(results) if player == me else min(results)


def time_naive(search: NaiveMinimax, runs: int) -> float:
    """Median seconds for ``search`` to choose X's first move on the empty board."""
    times = []
    for _ in range(runs):
        search.nodes = 0
        start = time.perf_counter()
        search.choose([" "] * 9, "X")
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def measure_first_call(runs: int) -> list[float]:
    """Import plus first answer, each in a fresh interpreter so nothing is cached."""
    return [
        float(subprocess.check_output([sys.executable, "-c", FIRST_CALL], text=True))
        for _ in range(runs)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over every position")
    parser.add_argument("--naive-runs", type=int, default=3, help="naive searches to time")
    args = parser.parse_args()

    first_calls = measure_first_call(runs=7)

    minimax = MinimaxStrategy()
    live = [board for board in reachable_positions() if not board.is_over]
    minimax.choose(Board())  # the one-time cost, measured above, is not part of these

    clock = time.perf_counter_ns
    per_position: list[float] = []
    for _ in range(args.rounds):
        for board in live:
            start = clock()
            minimax.choose(board)
            per_position.append((clock() - start) / 1000)

    empty = Board()
    empty_samples: list[float] = []
    for _ in range(20_000):
        start = clock()
        minimax.choose(empty)
        empty_samples.append((clock() - start) / 1000)

    naive, copying = NaiveMinimax(), CopyingNaiveMinimax()
    naive_s = time_naive(naive, args.naive_runs)
    copying_s = time_naive(copying, args.naive_runs)

    fast_empty = statistics.median(empty_samples)
    slow_empty = naive_s * 1e6
    print(f"python {sys.version.split()[0]}, {len(live)} live positions x {args.rounds} rounds")
    print(
        f"one-time cost (import + first call), median of 7: "
        f"{statistics.median(first_calls) * 1000:.1f} ms (target <= 50 ms)"
    )
    print(
        f"minimax choice, every position: median {statistics.median(per_position):.2f} us, "
        f"p99 {percentile(per_position, 0.99):.2f} us (targets <= 20 us, <= 100 us)"
    )
    print(f"minimax choice, empty board: median {fast_empty:.2f} us")
    print(
        f"naive minimax, empty board: median {naive_s:.2f} s, "
        f"copying the board {copying_s:.2f} s, over {args.naive_runs} runs, {naive.nodes:,} nodes"
    )
    print(f"speed-up on the empty board: {slow_empty / fast_empty:,.0f}x (target >= 10,000x)")
    print(f"speed-up against the copying search: {copying_s * 1e6 / fast_empty:,.0f}x")


if __name__ == "__main__":
    main()
