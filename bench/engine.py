"""How fast ``minimax`` answers, against the textbook recursion, measured in one run.

    python -m bench.engine            # about a minute
    python -m bench.engine --games 1000   # and 5x5 minimax against smart and random (long)

Targets (issue "Foundation and the game engine"): from any reachable position, a median choice
in <= 20 us and a p99 <= 100 us, after a one-time cost <= 50 ms (import plus first call), and at
least 10,000 times faster than naive minimax choosing X's first move on the empty board.

Larger boards (issue "Larger boards"), over positions met in real games (minimax against smart,
smart against random), with minimax's default time budget, on one core: 4x4 (4 in a row) a
median <= 50 ms and a p99 <= 250 ms, 5x5 (4 in a row) a median <= 250 ms and a p99 <= 1 s.
``--games N`` also plays N 5x5 games each as X and as O against smart and against random,
counting losses (there must be none), with a node budget so that a run repeats.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time

from bench.samples import percentile
from game import Board, Mark, reachable_positions
from game.ai import MinimaxStrategy, SearchBudget, get_strategy, play_game

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


def measure_first_call(runs: int) -> list[float]:
    """Import plus first answer, each in a fresh interpreter so nothing is cached."""
    return [
        float(subprocess.check_output([sys.executable, "-c", FIRST_CALL], text=True))
        for _ in range(runs)
    ]


def positions_from_real_games(size: int, count: int, seed: int) -> list[Board]:
    """Live positions met in games of minimax (a quick one) against smart and of smart against
    random, every side and pairing in turn."""
    rng = random.Random(seed)
    quick = MinimaxStrategy(rng, SearchBudget(seconds=None, nodes=2000))
    smart, random_player = get_strategy("smart", rng), get_strategy("random", rng)
    pairings = [(quick, smart), (smart, quick), (smart, random_player), (random_player, smart)]
    found: list[Board] = []
    game = 0
    while len(found) < count:
        x_player, o_player = pairings[game % len(pairings)]
        game += 1
        board = Board(size)
        while not board.is_over:
            found.append(board)
            board = board.play((x_player if board.turn is Mark.X else o_player).choose(board))
    return found[:count]


def time_larger_board(size: int, count: int) -> list[float]:
    """Milliseconds minimax takes, with its default budget, on each of ``count`` positions."""
    minimax = MinimaxStrategy(random.Random(size))
    minimax.choose(Board(size))  # load the 4x4 table, warm the caches: a one-time cost
    samples = []
    for board in positions_from_real_games(size, count, seed=size):
        start = time.perf_counter()
        minimax.choose(board)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def count_losses(games: int, nodes: int) -> dict[str, int]:
    """5x5 games that minimax (``nodes`` a move) loses, per opponent and side."""
    losses = {}
    for opponent in ("smart", "random"):
        for side in (Mark.X, Mark.O):
            lost = 0
            for seed in range(games):
                rng = random.Random(seed)
                minimax = MinimaxStrategy(rng, SearchBudget(seconds=None, nodes=nodes))
                final = play_game(
                    Board(5), {side: minimax, side.other: get_strategy(opponent, rng)}
                )
                lost += final.winner is side.other
            losses[f"as {side} against {opponent}"] = lost
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="passes over every position")
    parser.add_argument("--naive-runs", type=int, default=3, help="naive searches to time")
    parser.add_argument(
        "--positions", type=int, default=200, help="4x4 and 5x5 positions to time, each"
    )
    parser.add_argument(
        "--games", type=int, default=0, help="5x5 games against smart and random, each side"
    )
    parser.add_argument("--game-nodes", type=int, default=2000, help="minimax's nodes a move")
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

    targets = {4: "<= 50 ms, <= 250 ms", 5: "<= 250 ms, <= 1000 ms"}
    for size, target in targets.items():
        samples = time_larger_board(size, args.positions)
        print(
            f"minimax on {size}x{size}, {len(samples)} positions from real games: median "
            f"{statistics.median(samples):.1f} ms, p99 {percentile(samples, 0.99):.1f} ms, "
            f"max {max(samples):.1f} ms (targets {target})"
        )
    if args.games:
        started = time.perf_counter()
        losses = count_losses(args.games, args.game_nodes)
        summary = ", ".join(f"{lost} {where}" for where, lost in losses.items())
        print(
            f"5x5 minimax ({args.game_nodes} nodes a move), {args.games} games each side "
            f"against each opponent, losses: {summary} ({time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
