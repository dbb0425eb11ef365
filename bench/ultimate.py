"""Ultimate tic-tac-toe's computer players (issue 39), measured in one run.

    python -m bench.ultimate                      # the default: minutes
    python -m bench.ultimate --games 100 --uct-games 4

Figures: the strongest's (``minimax``) move time over positions from real games (median, p99,
worst; target a median <= 0.5 s and the worst <= 1.5 s), against the yardstick of one random
playout's time in the same run; matches of every level against the next, sides alternating;
and the strongest against a plain textbook UCT (written here: uniform random playouts, UCB1
with c = sqrt(2), no other knowledge) with ``--uct-playouts`` playouts a move (10,000 by
default: seconds a move in Python, so only a few games fit).
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time

from bench.samples import percentile
from game import Mark, UltimateBoard
from game.budget import SearchBudget
from game.ultimate import FULL_SMALL, HAS_LINE, apply_move
from game.ultimate_ai import (
    ULTIMATE_STRATEGIES,
    UltimateStrategy,
    get_ultimate_strategy,
    play_ultimate_game,
)

LEVELS = list(ULTIMATE_STRATEGIES)


def _state_moves(x: int, o: int, closed: int, forced: int) -> list[tuple[int, int]]:
    taken = x | o
    smalls = range(9) if forced < 0 else (forced,)
    return [
        (small, local)
        for small in smalls
        if not closed >> small & 1
        for local in range(9)
        if not taken >> (small * 9 + local) & 1
    ]


def random_playout(board: UltimateBoard, rng: random.Random) -> Mark | None:
    """The winner of a game played on from ``board`` with uniformly random moves (a line of
    small boards, or None when every board is closed: the textbook playout ignores the early
    draw, which only shortens it)."""
    x, o, won_x, won_o, closed, forced = board.masks
    x_to_move = board.turn is Mark.X
    while True:
        moves = _state_moves(x, o, closed, forced)
        if not moves:
            return None
        small, local = rng.choice(moves)
        x, o, won_x, won_o, closed, forced = apply_move(
            x, o, won_x, won_o, closed, x_to_move, small, local
        )
        won = won_x if x_to_move else won_o
        if won >> small & 1 and HAS_LINE[won]:
            return Mark.X if x_to_move else Mark.O
        if closed == FULL_SMALL:
            return None
        x_to_move = not x_to_move


class _Node:
    __slots__ = ("board", "children", "untried", "visits", "wins")

    def __init__(self, board: UltimateBoard) -> None:
        self.board = board
        self.children: dict[int, _Node] = {}
        self.untried = list(board.legal_moves)
        self.visits = 0
        self.wins = 0.0  # for the side that moved into this node


class TextbookUct:
    """Plain UCT: select by UCB1, expand one child, one uniformly random playout, back up
    (a win 1, a draw 0.5). Plays the most visited move."""

    name = "uct"

    def __init__(self, rng: random.Random, playouts: int) -> None:
        self._rng = rng
        self._playouts = playouts

    def choose(self, board: UltimateBoard) -> int:
        root = _Node(board)
        for _ in range(self._playouts):
            node, path = root, [root]
            while not node.untried and node.children:
                log_visits = math.log(node.visits)
                node = max(
                    node.children.values(),
                    key=lambda child: (
                        child.wins / child.visits + math.sqrt(2 * log_visits / child.visits)
                    ),
                )
                path.append(node)
            if node.untried:
                cell = node.untried.pop(self._rng.randrange(len(node.untried)))
                child = _Node(node.board.play(cell))
                node.children[cell] = child
                node = child
                path.append(node)
            winner = node.board.winner if node.board.is_over else None
            if not node.board.is_over:
                winner = random_playout(node.board, self._rng)
            for visited in path:
                visited.visits += 1
                mover = visited.board.turn.other
                visited.wins += 0.5 if winner is None else float(winner is mover)
        return max(root.children.items(), key=lambda item: item[1].visits)[0]


def positions_from_real_games(count: int, seed: int) -> list[UltimateBoard]:
    """Positions met in games of smart against random and against itself."""
    rng = random.Random(seed)
    found: list[UltimateBoard] = []
    while len(found) < count:
        opponent = rng.choice(["random", "smart", "casual"])
        players = {
            Mark.X: get_ultimate_strategy("smart", rng),
            Mark.O: get_ultimate_strategy(opponent, rng),
        }
        board = UltimateBoard()
        while not board.is_over and len(found) < count:
            found.append(board)
            board = board.play(players[board.turn].choose(board))
    return found


def time_moves(positions: list[UltimateBoard], budget: SearchBudget) -> list[float]:
    strongest = get_ultimate_strategy("minimax", random.Random(1), budget)
    seconds = []
    for board in positions:
        started = time.perf_counter()
        strongest.choose(board)
        seconds.append(time.perf_counter() - started)
    return seconds


def match(
    first: str, second: str, games: int, budget: SearchBudget, seed: int, uct_playouts: int = 0
) -> tuple[int, int, int]:
    """``first``'s wins, draws and losses against ``second`` over ``games`` seeded games, sides
    alternating (``second`` may be ``uct``)."""
    won = drawn = lost = 0
    for index in range(games):
        rng = random.Random(seed * 100_003 + index)
        one = get_ultimate_strategy(first, rng, budget)
        other: UltimateStrategy = (
            TextbookUct(rng, uct_playouts)
            if second == "uct"
            else get_ultimate_strategy(second, rng, budget)
        )
        players = {Mark.X: one, Mark.O: other} if index % 2 == 0 else {Mark.X: other, Mark.O: one}
        winner = play_ultimate_game(UltimateBoard(), players).winner
        if winner is None:
            drawn += 1
        elif players[winner] is one:
            won += 1
        else:
            lost += 1
    return won, drawn, lost


def spread(seconds: list[float]) -> str:
    return (
        f"median {statistics.median(seconds) * 1000:.1f} ms, "
        f"p99 {percentile(seconds, 0.99) * 1000:.1f} ms, worst {max(seconds) * 1000:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ultimate", description=__doc__)
    parser.add_argument("--positions", type=int, default=100, help="positions timed")
    parser.add_argument("--games", type=int, default=20, help="games of each level pair")
    parser.add_argument("--seconds", type=float, default=None, help="minimax's budget a move")
    parser.add_argument("--uct-games", type=int, default=2, help="games against textbook UCT")
    parser.add_argument("--uct-playouts", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    budget = SearchBudget() if args.seconds is None else SearchBudget(seconds=args.seconds)

    rng = random.Random(args.seed)
    empty = UltimateBoard()
    playouts = []
    for _ in range(200):
        started = time.perf_counter()
        random_playout(empty, rng)
        playouts.append(time.perf_counter() - started)
    yardstick = statistics.median(playouts)
    print(
        f"yardstick: one random playout from the empty board, median of 200: "
        f"{yardstick * 1000:.2f} ms"
    )

    positions = positions_from_real_games(args.positions, args.seed)
    seconds = time_moves(positions, budget)
    ratio = statistics.median(seconds) / yardstick
    print(
        f"minimax's move over {len(positions)} positions from real games (budget "
        f"{budget.seconds} s): {spread(seconds)}; the median is {ratio:.0f} playouts' time"
    )
    print()
    print(f"| {args.games} games, sides alternating | wins | draws | losses |")
    print("|---|---|---|---|")
    for weaker, stronger in itertools.pairwise(LEVELS):
        won, drawn, lost = match(stronger, weaker, args.games, budget, args.seed)
        print(f"| {stronger} against {weaker} | {won} | {drawn} | {lost} |")
    won, drawn, lost = match("minimax", "random", args.games, budget, args.seed)
    print(f"| minimax against random | {won} | {drawn} | {lost} |")
    if args.uct_games:
        started = time.perf_counter()
        won, drawn, lost = match(
            "minimax", "uct", args.uct_games, budget, args.seed, args.uct_playouts
        )
        print(
            f"| minimax against textbook UCT, {args.uct_playouts:,} playouts a move "
            f"({args.uct_games} games, {time.perf_counter() - started:.0f} s) | {won} | {drawn} "
            f"| {lost} |"
        )


if __name__ == "__main__":
    main()
