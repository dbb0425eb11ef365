"""What keeping a tournament's message current costs: its standings worked out and its message
drawn, at 64, 128 and 256 players after every round of a Swiss.

    python -m bench.tournament_message [--runs N] [--players N ...]

The target is 50 ms at 256 players. The yardstick, measured in the same run, is drawing one
3x3 board (``render.board_message``), which every click does.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from bot import i18n, render
from bot.render.tournaments import tournament_message
from bot.storage.base import GameRecord, GameStatus, TournamentStatus
from bot.tournaments.state import Entry, Rules, Table, TournamentState
from tournament import Format, pair_swiss, swiss_rounds


def played(players: int, seed: int) -> TournamentState:
    """A Swiss of ``players``, every round played with seeded results."""
    rng = random.Random(seed)
    rounds = swiss_rounds(players)
    rules = Rules("Grand Prix", Format.SWISS, 3, 300.0, 256, rounds, "en")
    entries = tuple(
        Entry(10_000 + n, f"player-{n:03}", float(n), rating=1000.0 + n) for n in range(players)
    )
    state = TournamentState(rules=rules, organiser_id=1, starts_at=None, entries=entries)
    state = state.but(rounds=rounds)
    for number in range(1, rounds + 1):
        state = state.paired(number, pair_swiss(state.entrants(), state.games(), number))
        for table in state.round_tables(number):
            if not table.decided:
                points = rng.choice((0.0, 0.5, 1.0))
                state = state.with_table(
                    Table(table.round, table.board, table.x, table.o, x_points=points)
                )
    return state


def median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def a_board() -> GameRecord:
    return GameRecord(
        id=7,
        guild_id=1,
        channel_id=2,
        x_id=3,
        o_id=4,
        x_name="alice",
        o_name="bob",
        moves=(4, 0, 8),
        status=GameStatus.ACTIVE,
        winner=None,
        end_reason=None,
        message_id=None,
        deadline=1.0,
        version=1,
        created_at=0.0,
        updated_at=0.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--players", type=int, nargs="+", default=[64, 128, 256])
    arguments = parser.parse_args()
    runs = arguments.runs
    lang = i18n.language("en")
    game = a_board()
    board = median_ms(lambda: render.board_message(game), runs * 10)
    print(f"yardstick: one 3x3 board drawn, median {board:.3f} ms")
    for players in arguments.players:
        state = played(players, seed=players)

        def keep_current(state: TournamentState = state) -> object:
            table = state.standings()
            return tournament_message(7, TournamentStatus.RUNNING, state, table, lang)

        took = median_ms(keep_current, runs)
        print(
            f"{players} players, {state.rounds} rounds: standings and message, median "
            f"{took:.1f} ms ({took / board:.0f}x a board)"
        )


if __name__ == "__main__":
    main()
