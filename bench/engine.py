"""How fast ``minimax`` answers, against the textbook recursion, measured in one run.

    python -m bench.engine            # a minute or two
    python -m bench.engine --games 1000   # and 5x5 minimax against smart and random (long)

Targets (issue "Foundation and the game engine"): from any reachable position, a median choice
in <= 20 us and a p99 <= 100 us, after a one-time cost <= 50 ms (import plus first call, in a
fresh interpreter; issue 36 holds it there again, and it is shown against the same run's bare
interpreter, ``python -c pass``), and at least 10,000 times faster than naive minimax choosing
X's first move on the empty board.

Drills (issue 36): an answer to a drill (:func:`game.drills.answer`, the refutation included) in
at most 1 s at p99 on every size, over every move of the drills of seeded games between the
levels, each answer from a cold start.

Larger boards (issue "Larger boards"), over positions met in real games (minimax against smart,
smart against random), on one core: 4x4 (4 in a row) a median <= 50 ms and a p99 <= 250 ms.

5x5 (4 in a row, issue "A computer player that never loses on any board"), where minimax plays
exactly (the opening book, then the exact search): over every move minimax makes in seeded
games against each level, as X and as O, a median <= 20 ms, a p99 <= 250 ms and the slowest
<= 1 s; the exact search proving the empty board a draw; and a 25-move review <= 1 s. It also
times a choice from any position of games between the other levels (hints land there), which
has no target. ``--games N`` also plays N 5x5 games each as X and as O against smart and against
random, counting losses (there must be none).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple

import game
import game.puzzles
from bench.samples import percentile
from game import BOARD_SIZES, Board, Mark, reachable_positions
from game.ai import STRATEGIES, MinimaxStrategy, SearchBudget, get_strategy, play_game
from game.book5x5 import FULL_UP_TO, opening_book
from game.drills import Drill, answer, drills_of
from game.exact import ExactSolver
from game.review import review_game

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


class StartUp(NamedTuple):
    """Seconds, one figure a fresh interpreter: the engine's one-time cost (import and first
    3x3 choice, timed inside the process) with its bytecode cached, as an installed package has
    it (pip compiles at install); the same compiling the engine's source at every start, as a
    checkout run with PYTHONDONTWRITEBYTECODE=1 does; and the yardstick, a bare interpreter's
    whole run (``python -c pass``, timed from outside)."""

    one_time: list[float]
    uncached: list[float]
    bare: list[float]


def measure_start_up(runs: int) -> StartUp:
    """:class:`StartUp`'s figures, ``runs`` of each. The bytecode goes to a cache of the run's
    own (PYTHONPYCACHEPREFIX), so that neither this shell's settings nor the checkout's files
    decide whether the engine is compiled."""
    figures = StartUp([], [], [])
    with tempfile.TemporaryDirectory() as cache:
        cached = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        cached.pop("PYTHONDONTWRITEBYTECODE", None)
        first_call = [sys.executable, "-c", FIRST_CALL]
        subprocess.check_output(first_call, env=cached)  # fills the cache
        for _ in range(runs):
            figures.one_time.append(float(subprocess.check_output(first_call, env=cached)))
            started = time.perf_counter()
            subprocess.check_call([sys.executable, "-c", "pass"], env=cached)
            figures.bare.append(time.perf_counter() - started)
        # Only the engine's own bytecode goes: the standard library's stays cached.
        engine = os.path.dirname(os.path.abspath(game.__file__))
        shutil.rmtree(os.path.join(cache, engine.lstrip(os.sep)))
        uncached = {**cached, "PYTHONDONTWRITEBYTECODE": "1"}
        for _ in range(runs):
            figures.uncached.append(float(subprocess.check_output(first_call, env=uncached)))
    return figures


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


def time_5x5_minimax_moves(games: int) -> list[float]:
    """Milliseconds each 5x5 minimax move takes in ``games`` seeded games against each level,
    as X and as O (a fresh strategy a game, as the bot makes one a move), once the opening book
    is loaded (a one-time cost, as the 4x4 table's)."""
    opening_book()
    samples = []
    for opponent in STRATEGIES:
        for side in (Mark.X, Mark.O):
            for seed in range(games):
                rng = random.Random(seed)
                minimax = MinimaxStrategy(rng)
                other = get_strategy(opponent, rng)
                board = Board(5)
                while not board.is_over:
                    if board.turn is side:
                        start = time.perf_counter()
                        move = minimax.choose(board)
                        samples.append((time.perf_counter() - start) * 1000)
                    else:
                        move = other.choose(board)
                    board = board.play(move)
    return samples


def time_5x5_choices_anywhere(count: int) -> list[float]:
    """Milliseconds a fresh minimax takes on each of ``count`` positions of games between the
    other levels (random, casual, smart): openings minimax itself never plays into."""
    rng = random.Random(5)
    names = [name for name in STRATEGIES if name != "minimax"]
    positions: list[Board] = []
    while len(positions) < count:
        players = {mark: get_strategy(rng.choice(names), rng) for mark in (Mark.X, Mark.O)}
        board = Board(5)
        while not board.is_over:
            positions.append(board)
            board = board.play(players[board.turn].choose(board))
    samples = []
    for board in positions[:count]:
        start = time.perf_counter()
        MinimaxStrategy(random.Random(1)).choose(board)
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def time_5x5_reviews(games: int) -> tuple[list[float], list[float]]:
    """Seconds to review each of ``games`` 25-move 5x5 games (smart as X against minimax: a draw
    every time, so the board fills) and each of ``games`` games between casual and smart (any
    length, openings off minimax's book)."""
    own: list[float] = []
    others: list[float] = []
    for seed in range(games):
        rng = random.Random(seed)
        for players, times in (
            ({Mark.X: get_strategy("smart", rng), Mark.O: MinimaxStrategy(rng)}, own),
            ({Mark.X: get_strategy("casual", rng), Mark.O: get_strategy("smart", rng)}, others),
        ):
            board, moves = Board(5), []
            while not board.is_over:
                move = players[board.turn].choose(board)
                moves.append(move)
                board = board.play(move)
            start = time.perf_counter()
            review_game(moves, 5)
            times.append(time.perf_counter() - start)
            if times is own:
                assert len(moves) == 25, moves  # smart never beats minimax; a draw fills the board
    return own, others


# A 25-move game between members that fills the board with no 4 in a row, each row played in
# the order A, C, B, D, E (the tests' FULL_5X5): its opening is off minimax's book, and O's
# fourth move already loses, so the review meets won positions early.
FILLED_GAME = [f"{column}{row}" for row in range(1, 6) for column in "ACBDE"]


def time_filled_game_review(runs: int) -> list[float]:
    """Seconds to review :data:`FILLED_GAME`, each run from scratch."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        review_game(FILLED_GAME, 5)
        times.append(time.perf_counter() - start)
    return times


def time_empty_5x5_solve(runs: int) -> list[float]:
    """Seconds a fresh exact search takes to prove the empty 5x5 board a draw."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        value = ExactSolver(Board(5).geometry).value(Board(5))
        times.append(time.perf_counter() - start)
        assert value == 0
    return times


def drills_of_games(size: int, games: int) -> list[Drill]:
    """The drills of ``games`` seeded games between levels picked at random (each side its own),
    for both players, once each: the moves where a member's game lost value, as
    :func:`game.drills.drills_of` makes them."""
    rng = random.Random(size)
    found: dict[str, Drill] = {}
    for _ in range(games):
        players = {mark: get_strategy(rng.choice(list(STRATEGIES)), rng) for mark in Mark}
        board, moves = Board(size), []
        while not board.is_over:
            move = players[board.turn].choose(board)
            moves.append(move)
            board = board.play(move)
        reviews = review_game(moves, size)
        for mark in Mark:
            for drill in drills_of(reviews, mark):
                found.setdefault(drill.line(), drill)
    return list(found.values())


def time_drill_answers(drills: list[Drill]) -> list[tuple[float, Drill, int]]:
    """Seconds :func:`game.drills.answer` takes for every move of every drill (a member may try
    any), each from a cold start: the exact search the answers share in a process forgets what
    it proved before each answer, as in a process that just started."""
    samples = []
    for drill in drills:
        for cell in drill.position.legal_moves:
            game.puzzles._solver.cache_clear()  # the process-wide search the answers share
            start = time.perf_counter()
            answer(drill, cell)
            samples.append((time.perf_counter() - start, drill, cell))
    return samples


def spread(seconds: list[float]) -> str:
    """The median, p99 and slowest of ``seconds``, in milliseconds ("none" for no sample)."""
    if not seconds:
        return "none"
    return (
        f"median {statistics.median(seconds) * 1000:.2f} ms, p99 "
        f"{percentile(seconds, 0.99) * 1000:.1f} ms, slowest {max(seconds) * 1000:.1f} ms"
    )


def count_losses(games: int) -> dict[str, int]:
    """5x5 games that minimax loses, per opponent and side (seeded: a run repeats)."""
    losses = {}
    for opponent in ("smart", "random"):
        for side in (Mark.X, Mark.O):
            lost = 0
            for seed in range(games):
                rng = random.Random(seed)
                minimax = MinimaxStrategy(rng)
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
    parser.add_argument(
        "--timed-games", type=int, default=10, help="5x5 games timed against each level and side"
    )
    parser.add_argument("--reviews", type=int, default=10, help="5x5 games reviewed, each kind")
    parser.add_argument(
        "--drill-games", type=int, default=100, help="games whose drills are answered, each size"
    )
    args = parser.parse_args()

    start_up = measure_start_up(runs=7)

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
    one_time, bare = statistics.median(start_up.one_time), statistics.median(start_up.bare)
    print(
        f"one-time cost (import + first call), median of 7: {one_time * 1000:.1f} ms "
        f"(target <= 50 ms), {one_time / bare:.2f}x a bare interpreter's whole run (python -c "
        f"pass: {bare * 1000:.1f} ms); compiling the engine's source at each start: "
        f"{statistics.median(start_up.uncached) * 1000:.1f} ms"
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

    samples = time_larger_board(4, args.positions)
    print(
        f"minimax on 4x4, {len(samples)} positions from real games: median "
        f"{statistics.median(samples):.1f} ms, p99 {percentile(samples, 0.99):.1f} ms, "
        f"max {max(samples):.1f} ms (targets <= 50 ms, <= 250 ms)"
    )
    solves = time_empty_5x5_solve(3)
    print(
        f"exact search, empty 5x5 board proven a draw: median of 3 "
        f"{statistics.median(solves):.2f} s"
    )
    started = time.perf_counter()
    opening_book()
    print(f"5x5 opening book loaded (once): {(time.perf_counter() - started) * 1000:.1f} ms")
    samples = time_5x5_minimax_moves(args.timed_games)
    print(
        f"minimax on 5x5, its {len(samples)} moves in {args.timed_games} games against each "
        f"level as X and as O: median {statistics.median(samples):.3f} ms, p99 "
        f"{percentile(samples, 0.99):.2f} ms, max {max(samples):.2f} ms (targets <= 20 ms, "
        "<= 250 ms, <= 1000 ms)"
    )
    samples = time_5x5_choices_anywhere(args.positions)
    print(
        f"minimax on 5x5, {len(samples)} positions of games between the other levels: median "
        f"{statistics.median(samples):.3f} ms, p99 {percentile(samples, 0.99):.2f} ms, "
        f"max {max(samples):.2f} ms (no target: a hint's)"
    )
    own, others = time_5x5_reviews(args.reviews)
    print(
        f"5x5 review, {len(own)} 25-move games of smart against minimax: median "
        f"{statistics.median(own) * 1000:.1f} ms, max {max(own) * 1000:.1f} ms (target <= 1 s); "
        f"{len(others)} games of casual against smart: median "
        f"{statistics.median(others) * 1000:.1f} ms, max {max(others) * 1000:.1f} ms"
    )
    filled = time_filled_game_review(5)
    print(
        f"5x5 review, a 25-move game between members off the book, median of 5: "
        f"{statistics.median(filled) * 1000:.0f} ms (target <= 1 s)"
    )
    for size in BOARD_SIZES:
        drills = drills_of_games(size, args.drill_games)
        timed = time_drill_answers(drills)
        seconds = [took for took, _, _ in timed]
        early = [took for took, drill, _ in timed if drill.position.move_count <= FULL_UP_TO]
        print(
            f"drill answers, {size}x{size}: every move of the {len(drills)} drills of "
            f"{args.drill_games} games between the levels ({len(seconds)} answers), each from a "
            f"cold start: {spread(seconds)} (target p99 <= 1 s); of drills of at most "
            f"{FULL_UP_TO} marks ({len(early)} answers): {spread(early)}"
        )
    if args.games:
        started = time.perf_counter()
        losses = count_losses(args.games)
        summary = ", ".join(f"{lost} {where}" for where, lost in losses.items())
        print(
            f"5x5 minimax, {args.games} games each side "
            f"against each opponent, losses: {summary} ({time.perf_counter() - started:.0f} s)"
        )


if __name__ == "__main__":
    main()
