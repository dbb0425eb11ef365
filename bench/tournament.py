"""How fast the tournament engine pairs a Swiss round and ranks the standings.

    python -m bench.tournament                     # 64, 128 and 256 players, 3 repeats
    python -m bench.tournament --players 32 --repeats 1

Targets (issue 38, "Tournaments and seasons"): a round of 256 players paired in under 1 s, and
the standings of 256 players after 8 rounds computed well under 50 ms (the message rendered
from them must fit in 50 ms).

Each event is played out with seeded random results (X wins, draws and O wins; now and then a
forfeit), every round paired by ``pair_swiss`` itself, so a run repeats. Pairing is timed at
round 1 (the fold by rating, no matching), a middle round and the last round, median of the
repeats.

The yardstick, measured in the same run: networkx's maximum-weight matching over every
possible pair of 64 players with seeded random weights (the complete graph the engine avoids
by offering each player only nearby opponents first). ``--complete N`` also times it at N
players (256 takes about 20 s). ``--long-rounds`` (20 by default, the most an organiser may
set) also times the last round of an event that long at the largest size, where players near
each other in the ranking have mostly met.
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time
from collections.abc import Callable

import networkx  # type: ignore[import-untyped]

from tournament import MOST_ROUNDS, Entrant, Game, pair_swiss, standings, swiss_rounds

YARDSTICK_PLAYERS = 64


def play_event(players: int, rounds: int, seed: int) -> tuple[list[Entrant], list[Game]]:
    """Entrants and the games of ``rounds`` rounds, paired by the engine, results seeded."""
    rng = random.Random(seed)
    entrants = [
        Entrant(10**17 + 7919 * n, float(rng.randrange(1000, 2000))) for n in range(players)
    ]
    games: list[Game] = []
    for number in range(1, rounds + 1):
        for pairing in pair_swiss(entrants, games, number):
            if pairing.o is None:
                games.append(Game(number, pairing.x, None, 1.0))
            else:
                result = rng.choice((1.0, 1.0, 0.5, 0.0, 0.0))
                games.append(Game(number, pairing.x, pairing.o, result, rng.random() < 0.03))
    return entrants, games


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def complete_graph_matching(players: int, seed: int) -> float:
    """Seconds for networkx to match ``players`` nodes over every pair, random weights."""
    rng = random.Random(seed)
    graph = networkx.Graph()
    for a in range(players):
        for b in range(a + 1, players):
            graph.add_edge(a, b, weight=(1 << 50) - rng.randrange(1 << 40))
    started = time.perf_counter()
    networkx.max_weight_matching(graph, maxcardinality=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tournament", description=__doc__)
    parser.add_argument("--players", type=int, nargs="+", default=[64, 128, 256])
    parser.add_argument("--repeats", type=int, default=3, help="timings a figure (median)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--long-rounds",
        type=int,
        default=MOST_ROUNDS,
        help="also the last round of an event this long at the largest size (0: not)",
    )
    parser.add_argument(
        "--complete", type=int, default=0, help="also time the complete graph at N players"
    )
    args = parser.parse_args()
    if args.repeats < 1 or min(args.players) < 2:
        parser.error("--repeats must be at least 1 and --players at least 2")

    yardstick = complete_graph_matching(YARDSTICK_PLAYERS, args.seed)
    print(f"python {sys.version.split()[0]}, networkx {networkx.__version__}")
    print(
        f"yardstick: networkx matching over every pair of {YARDSTICK_PLAYERS} players: "
        f"{yardstick * 1e3:.0f} ms"
    )
    print()
    print("| players | round | pairing, median | against the yardstick |")
    print("|---|---|---|---|")
    for players in args.players:
        last = swiss_rounds(players)
        entrants, games = play_event(players, last, args.seed)
        for number in sorted({1, last // 2 + 1, last}):
            earlier = [game for game in games if game.round < number]
            seconds = median_seconds(
                functools.partial(pair_swiss, entrants, earlier, number), args.repeats
            )
            print(
                f"| {players} | {number} of {last} | {seconds * 1e3:.1f} ms | "
                f"{seconds / yardstick:.3f}x |"
            )
    players = max(args.players)
    if args.long_rounds:
        last = args.long_rounds
        entrants, games = play_event(players, last - 1, args.seed)
        seconds = median_seconds(functools.partial(pair_swiss, entrants, games, last), args.repeats)
        print(
            f"| {players} | {last} of {last} (set by hand) | {seconds * 1e3:.1f} ms | "
            f"{seconds / yardstick:.3f}x |"
        )
    print()
    entrants, games = play_event(players, max(8, swiss_rounds(players)), args.seed)
    seconds = median_seconds(lambda: standings(entrants, games), max(args.repeats, 20))
    rounds = max(game.round for game in games)
    print(
        f"standings of {players} players after {rounds} rounds, median: "
        f"{seconds * 1e3:.2f} ms ({seconds / yardstick:.3f}x the yardstick)"
    )
    if args.complete:
        seconds = complete_graph_matching(args.complete, args.seed)
        print(f"networkx matching over every pair of {args.complete} players: {seconds:.1f} s")


if __name__ == "__main__":
    main()
