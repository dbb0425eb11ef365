"""The difficulty ladder: every level against every other, as X and as O, at every board size.

    python -m bench.ladder                          # 1,000 games a pairing, 3x3, 4x4 and 5x5
    python -m bench.ladder --sizes 3 --games 200    # one size, fewer games
    python -m bench.ladder --jobs 2                 # the same figures, on two processes

Prints a markdown table a size: rows play X, columns play O, each cell X's wins / draws /
losses; then each level's record against each other level, both sides together; on 3x3 also
the expected record, computed exactly over the game tree (every strategy's move chances are
known there), which the sampled counts should approach.

Every game is seeded from ``--seed``, the size, the two levels and the game's number, so a run
repeats whatever ``--jobs`` and whichever sizes are asked for. ``minimax`` plays every offered
size exactly (on 5x5 the opening book, then the exact search, whatever its budget), so its
games repeat too; ``--nodes`` is the budget of its search on boards it does not play exactly,
none of those the ladder plays.

Targets (issue "Difficulty ladder and game review"), on 3x3: ``casual`` loses at least 25% of
its games against ``minimax`` (both sides together: as X it cannot, see ``CASUAL_SKILL``) and
wins at least 60% against ``random``; ``smart`` and ``minimax`` never lose.
"""

from __future__ import annotations

import argparse
import functools
import random
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

from game import BOARD_SIZES, Board, Mark
from game.ai import (
    CASUAL_SKILL,
    STRATEGIES,
    CasualStrategy,
    MinimaxStrategy,
    SearchBudget,
    SmartStrategy,
    get_strategy,
    play_game,
)

LEVELS = tuple(STRATEGIES)
DEFAULT_NODES = 2000
# Games handed to a worker at once: enough to outweigh the hand-off, few enough to share out.
CHUNK = 100


class Pairing(NamedTuple):
    size: int
    x_level: str
    o_level: str


# How a pairing's games ended: how many X won, how many O won, how many (under None) were drawn.
Winners = Counter[Mark | None]


def play_games(pairing: Pairing, games: range, seed: int, nodes: int) -> Winners:
    """How games number ``games`` of ``pairing`` ended, each seeded on its own."""
    budget = SearchBudget(seconds=None, nodes=nodes)
    winners: Winners = Counter()
    for game in games:
        rng = random.Random(f"{seed}/{pairing.size}/{pairing.x_level}/{pairing.o_level}/{game}")
        players = {
            Mark.X: get_strategy(pairing.x_level, rng, budget),
            Mark.O: get_strategy(pairing.o_level, rng, budget),
        }
        winners[play_game(Board(pairing.size), players).winner] += 1
    return winners


def _play_chunk(task: tuple[Pairing, range, int, int]) -> tuple[Pairing, Winners]:
    pairing, games, seed, nodes = task
    return pairing, play_games(pairing, games, seed, nodes)


def play_ladder(
    sizes: Iterable[int], games: int, seed: int, nodes: int, jobs: int
) -> dict[Pairing, Winners]:
    """How every pairing's games ended at every size in ``sizes``, played on ``jobs`` processes."""
    tasks = [
        (Pairing(size, x_level, o_level), range(start, min(start + CHUNK, games)), seed, nodes)
        for size in sizes
        for x_level in LEVELS
        for o_level in LEVELS
        for start in range(0, games, CHUNK)
    ]
    results: dict[Pairing, Winners] = {}
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            done: Iterator[tuple[Pairing, Winners]] = pool.map(_play_chunk, tasks)
            for pairing, winners in done:
                results.setdefault(pairing, Counter()).update(winners)
    else:
        for task in tasks:
            pairing, winners = _play_chunk(task)
            results.setdefault(pairing, Counter()).update(winners)
    return results


def record(winners: Winners, side: Mark) -> tuple[int, int, int]:
    """``side``'s wins, draws and losses."""
    return winners[side], winners[None], winners[side.other]


# -- exact expectations on 3x3 ---------------------------------------------------------------

_SMART = SmartStrategy()
_CASUAL = CasualStrategy()
_MINIMAX = MinimaxStrategy()


def _uniform(cells: tuple[int, ...]) -> dict[int, float]:
    return dict.fromkeys(cells, 1 / len(cells))


def move_chances(level: str, board: Board, skill: float = CASUAL_SKILL) -> dict[int, float]:
    """The chance that ``level`` plays each cell here: the candidates each strategy's ``choose``
    picks from uniformly, mixed as ``casual`` mixes them at ``skill``."""
    if level == "random":
        return _uniform(board.legal_moves)
    if level == "smart":
        return _uniform(_SMART.candidates(board))
    if level == "minimax":
        return _uniform(_MINIMAX.best_moves(board))
    urgent = _CASUAL.urgent_moves(board)
    if urgent:
        return _uniform(urgent)
    chances = {cell: (1 - skill) / len(board.legal_moves) for cell in board.legal_moves}
    for cell, chance in _uniform(_SMART.candidates(board)).items():
        chances[cell] += skill * chance
    return chances


_ENDINGS = (Mark.X, None, Mark.O)


def exact_shares(
    x_level: str, o_level: str, skill: float = CASUAL_SKILL
) -> tuple[float, float, float]:
    """The chances that X wins, that the game is drawn, that O wins, from the empty 3x3 board,
    ``casual`` playing at ``skill``."""

    @functools.cache
    def shares(board: Board) -> tuple[float, float, float]:
        outcome = board.outcome()
        if outcome is not None:
            winner = outcome.winner
            return float(winner is Mark.X), float(winner is None), float(winner is Mark.O)
        level = x_level if board.turn is Mark.X else o_level
        total = [0.0, 0.0, 0.0]
        for cell, chance in move_chances(level, board, skill).items():
            for index, share in enumerate(shares(board.play(cell))):
                total[index] += chance * share
        return total[0], total[1], total[2]

    return shares(Board())


# -- the tables ------------------------------------------------------------------------------


def _counts(counts: Iterable[int]) -> str:
    return " / ".join(f"{count:,}" for count in counts)


def side_table(results: dict[Pairing, Winners], size: int) -> str:
    """Rows play X, columns O: X's wins / draws / losses."""
    lines = [f"| X \\ O | {' | '.join(LEVELS)} |", "|---" * (len(LEVELS) + 1) + "|"]
    for x_level in LEVELS:
        cells = [
            _counts(record(results[Pairing(size, x_level, o_level)], Mark.X)) for o_level in LEVELS
        ]
        lines.append(f"| **{x_level}** | {' | '.join(cells)} |")
    return "\n".join(lines)


def level_table(results: dict[Pairing, Winners], size: int) -> str:
    """Each row level's share of wins / draws / losses against each column level, as X and as O
    together."""
    lines = [f"| level \\ against | {' | '.join(LEVELS)} |", "|---" * (len(LEVELS) + 1) + "|"]
    for level in LEVELS:
        cells = []
        for opponent in LEVELS:
            as_x = record(results[Pairing(size, level, opponent)], Mark.X)
            as_o = record(results[Pairing(size, opponent, level)], Mark.O)
            both = [x + o for x, o in zip(as_x, as_o, strict=True)]
            cells.append(" / ".join(f"{count / sum(both):.1%}" for count in both))
        lines.append(f"| **{level}** | {' | '.join(cells)} |")
    return "\n".join(lines)


def exact_table(games: int) -> str:
    """:func:`side_table`'s layout for 3x3, filled with the expected counts of ``games`` games."""
    expected: dict[Pairing, Winners] = {}
    for x_level in LEVELS:
        for o_level in LEVELS:
            shares = zip(_ENDINGS, exact_shares(x_level, o_level), strict=True)
            expected[Pairing(3, x_level, o_level)] = Counter(
                {winner: round(share * games) for winner, share in shares}
            )
    return side_table(expected, 3)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ladder", description=__doc__)
    parser.add_argument("--games", type=int, default=1000, help="games a pairing (1,000)")
    parser.add_argument(
        "--sizes", type=int, nargs="+", choices=BOARD_SIZES, default=list(BOARD_SIZES)
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--nodes",
        type=int,
        default=DEFAULT_NODES,
        help="minimax's search budget a move where it does not play exactly (no offered size)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="processes to play on (1)")
    args = parser.parse_args()
    if args.games < 1 or args.nodes < 1 or args.jobs < 1:
        parser.error("--games, --nodes and --jobs must be at least 1")

    started = time.perf_counter()
    for size in args.sizes:
        size_started = time.perf_counter()
        records = play_ladder([size], args.games, args.seed, args.nodes, args.jobs)
        seconds = time.perf_counter() - size_started
        line_length = Board(size).line_length
        print(f"## {size}x{size}, {line_length} in a row: {args.games:,} games a pairing")
        print()
        print(
            f"Seed {args.seed}, casual's skill {CASUAL_SKILL}; {seconds:.1f} s on "
            f"{args.jobs} process{'es' if args.jobs > 1 else ''}."
        )
        print()
        print("Rows play X, columns play O; each cell is X's wins / draws / losses.")
        print()
        print(side_table(records, size))
        print()
        print(
            "Each row level's share of wins / draws / losses against each column level, "
            "as X and as O together."
        )
        print()
        print(level_table(records, size))
        print()
        if size == 3:
            print(f"Expected per {args.games:,} games, computed exactly over the game tree:")
            print()
            print(exact_table(args.games))
            print()
    print(f"Total: {time.perf_counter() - started:.0f} s.")


if __name__ == "__main__":
    main()
