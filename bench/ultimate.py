"""Ultimate tic-tac-toe's computer players (issue 39), measured in one run.

    python -m bench.ultimate                      # the default: minutes
    python -m bench.ultimate --games 100 --uct-games 4
    python -m bench.ultimate --positions 0 --pairs minimax:smart --games 500 --first-game 500 \
        --nodes 30000                             # games 500-999 of a long match, on their own

Figures, each part skipped when its count is 0:

- ``--positions``: the strongest's (``minimax``) move time over positions from real games
  (median, p99, worst; target a median <= 0.5 s and the worst <= 1.5 s), against the yardstick
  of one random playout's time in the same run; with ``--nodes``, also the move time at that
  node budget (the deterministic budget long matches use, to be matched to the median);
- ``--games``: matches of every ``--pairs`` (by default each level against the one below, and the
  strongest against ``random``), sides alternating, each game seeded by its number so that a
  match split over runs (``--first-game``) plays the same games;
- ``--mcts-games``: the Monte Carlo tree search (the ``minimax`` level since issue 39's
  measurement) against the alpha-beta search it replaced, both with ``--mcts-seconds`` of their
  thread's CPU time a move (the same budget on a loaded machine);
- ``--uct-games``: the strongest against a plain textbook UCT (written here: uniform random
  playouts, UCB1 with c = sqrt(2), no other knowledge) with ``--uct-playouts`` playouts a move
  (10,000 by default: seconds a move in Python, so only a few games fit);
- ``--reviews``: hints (:func:`game.ultimate_review.ultimate_best_move`) on positions from real
  games and reviews of whole games, in CPU time.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence

from bench.samples import percentile
from game import Mark, UltimateBoard
from game.budget import SearchBudget
from game.ultimate import FULL_SMALL, HAS_LINE, apply_move
from game.ultimate_ai import (
    ULTIMATE_STRATEGIES,
    UltimateMcts,
    UltimateMinimax,
    UltimateStrategy,
    get_ultimate_strategy,
)
from game.ultimate_review import (
    HINT_BUDGET,
    REVIEW_BUDGET,
    review_ultimate_game,
    ultimate_best_move,
)

LEVELS = list(ULTIMATE_STRATEGIES)
DEFAULT_PAIRS = [
    *(f"{stronger}:{weaker}" for weaker, stronger in itertools.pairwise(LEVELS)),
    "minimax:random",
]


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


def time_moves(
    positions: list[UltimateBoard], budget: SearchBudget
) -> tuple[list[float], list[float]]:
    """The strongest's wall and CPU time choosing a move in each of ``positions``."""
    strongest = get_ultimate_strategy("minimax", random.Random(1), budget)
    wall, cpu = [], []
    for board in positions:
        started, started_cpu = time.perf_counter(), time.thread_time()
        strongest.choose(board)
        wall.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - started_cpu)
    return wall, cpu


# A player for a game, from the game's rng.
PlayerFactory = Callable[[random.Random], UltimateStrategy]


def level(name: str, budget: SearchBudget) -> PlayerFactory:
    """A level of :mod:`game.ultimate_ai`, ``minimax`` within ``budget``."""
    return lambda rng: get_ultimate_strategy(name, rng, budget)


class Record:
    """A player's wins, draws and losses in a match, as X and as O."""

    def __init__(self) -> None:
        self.as_x = [0, 0, 0]
        self.as_o = [0, 0, 0]
        self.cpu: list[float] = []  # its moves' CPU time, where it had a choice

    def add(self, mark: Mark, outcome: int) -> None:
        (self.as_x if mark is Mark.X else self.as_o)[outcome] += 1

    @property
    def total(self) -> list[int]:
        return [x + o for x, o in zip(self.as_x, self.as_o, strict=True)]

    @staticmethod
    def cells(counts: list[int]) -> str:
        return " / ".join(f"{count:,}" for count in counts)


def match(
    first: PlayerFactory,
    second: PlayerFactory,
    games: range,
    seed: int,
    progress: Callable[[int, Record], None] | None = None,
) -> Record:
    """``first``'s record against ``second`` over games number ``games``: each game seeded by
    its number, ``first`` playing X in the even-numbered ones."""
    record = Record()
    for index in games:
        rng = random.Random(seed * 100_003 + index)
        one, other = first(rng), second(rng)
        players = {Mark.X: one, Mark.O: other} if index % 2 == 0 else {Mark.X: other, Mark.O: one}
        board = UltimateBoard()
        while not board.is_over:
            player = players[board.turn]
            choice = len(board.legal_moves) > 1
            started = time.thread_time()
            board = board.play(player.choose(board))
            if choice and player is one:
                record.cpu.append(time.thread_time() - started)
        winner = board.winner
        outcome = 1 if winner is None else 0 if players[winner] is one else 2
        record.add(Mark.X if players[Mark.X] is one else Mark.O, outcome)
        if progress is not None:
            progress(index, record)
    return record


def spread(seconds: list[float]) -> str:
    return (
        f"median {statistics.median(seconds) * 1000:.1f} ms, "
        f"p99 {percentile(seconds, 0.99) * 1000:.1f} ms, worst {max(seconds) * 1000:.1f} ms"
    )


def report_progress(label: str) -> Callable[[int, Record], None]:
    """Every 100th game, a line to stderr: a long match's log shows how far it got."""

    def progress(index: int, record: Record) -> None:
        if (index + 1) % 100 == 0:
            print(
                f"{label}: game {index + 1}, {Record.cells(record.total)}",
                file=sys.stderr,
                flush=True,
            )

    return progress


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ultimate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--positions", type=int, default=100, help="positions timed")
    parser.add_argument("--seconds", type=float, default=None, help="minimax's budget a move")
    parser.add_argument(
        "--nodes", type=int, default=None, help="minimax's budget in nodes instead, in matches"
    )
    parser.add_argument("--games", type=int, default=20, help="games of each pair")
    parser.add_argument("--first-game", type=int, default=0, help="the first game's number")
    parser.add_argument(
        "--pairs", nargs="*", default=DEFAULT_PAIRS, help="matches, as stronger:weaker levels"
    )
    parser.add_argument("--mcts-games", type=int, default=2, help="MCTS against alpha-beta")
    parser.add_argument("--mcts-seconds", type=float, default=None, help="CPU seconds a move")
    parser.add_argument("--uct-games", type=int, default=2, help="games against textbook UCT")
    parser.add_argument("--uct-playouts", type=int, default=10_000)
    parser.add_argument("--reviews", type=int, default=2, help="games reviewed (and hints)")
    parser.add_argument(
        "--review-nodes",
        type=int,
        default=None,
        help="the hints' and reviews' node budget (by default the shipped ones)",
    )
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    seconds = SearchBudget().seconds if args.seconds is None else args.seconds
    budget = SearchBudget(seconds=seconds)
    match_budget = budget if args.nodes is None else SearchBudget(seconds=None, nodes=args.nodes)
    print(f"python -m bench.ultimate {' '.join(sys.argv[1:] if argv is None else argv)}")

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

    if args.positions:
        positions = positions_from_real_games(args.positions, args.seed)
        wall, cpu = time_moves(positions, budget)
        ratio = statistics.median(wall) / yardstick
        print(
            f"minimax's move over {len(positions)} positions from real games (budget "
            f"{budget.seconds} s): {spread(wall)}; the median is {ratio:.0f} playouts' time; "
            f"CPU: {spread(cpu)}"
        )
        if args.nodes is not None:
            wall, cpu = time_moves(positions, match_budget)
            print(
                f"minimax's move over the same positions at {args.nodes:,} nodes: {spread(wall)}; "
                f"CPU: {spread(cpu)}"
            )

    games = range(args.first_game, args.first_game + args.games)
    if args.games and args.pairs:
        budget_name = f"{args.nodes:,} nodes" if args.nodes is not None else f"{seconds} s"
        print()
        print(
            f"| games {games.start}-{games.stop - 1}, minimax at {budget_name} a move | "
            "as X: wins / draws / losses | as O | together |"
        )
        print("|---|---|---|---|")
        for pair in args.pairs:
            stronger, weaker = pair.split(":")
            record = match(
                level(stronger, match_budget),
                level(weaker, match_budget),
                games,
                args.seed,
                report_progress(pair),
            )
            print(
                f"| {stronger} against {weaker} | {Record.cells(record.as_x)} | "
                f"{Record.cells(record.as_o)} | {Record.cells(record.total)} |",
                flush=True,
            )

    if args.mcts_games:
        mcts_seconds = seconds if args.mcts_seconds is None else args.mcts_seconds
        cpu_budget = SearchBudget(seconds=mcts_seconds)
        mcts_games = range(args.first_game, args.first_game + args.mcts_games)
        started = time.perf_counter()
        record = match(
            lambda rng: UltimateMcts(rng, cpu_budget, clock=time.thread_time),
            lambda rng: UltimateMinimax(rng, cpu_budget, clock=time.thread_time),
            mcts_games,
            args.seed,
            report_progress("mcts:alpha-beta"),
        )
        print()
        print(
            f"MCTS against alpha-beta, {mcts_seconds} s of CPU a move each, games "
            f"{mcts_games.start}-{mcts_games.stop - 1} ({time.perf_counter() - started:.0f} s): "
            f"as X {Record.cells(record.as_x)}, as O {Record.cells(record.as_o)}, together "
            f"{Record.cells(record.total)} (MCTS's wins / draws / losses); MCTS's move, CPU: "
            f"{spread(record.cpu)}",
            flush=True,
        )

    if args.uct_games:
        started = time.perf_counter()
        uct_games = range(args.first_game, args.first_game + args.uct_games)
        record = match(
            level("minimax", match_budget),
            lambda rng: TextbookUct(rng, args.uct_playouts),
            uct_games,
            args.seed,
        )
        print()
        print(
            f"| minimax against textbook UCT, {args.uct_playouts:,} playouts a move "
            f"({args.uct_games} games, {time.perf_counter() - started:.0f} s) | "
            f"{Record.cells(record.as_x)} | {Record.cells(record.as_o)} | "
            f"{Record.cells(record.total)} |",
            flush=True,
        )

    if args.reviews:
        time_reviews(args.reviews, args.seed, args.review_nodes)


def time_reviews(count: int, seed: int, nodes: int | None) -> None:
    """Hints on positions from ``count`` games of smart against smart and casual, and those
    games' reviews, in CPU time, within the shipped budgets or ``nodes``."""
    hint_budget = HINT_BUDGET if nodes is None else SearchBudget(seconds=None, nodes=nodes)
    review_budget = REVIEW_BUDGET if nodes is None else SearchBudget(seconds=None, nodes=nodes)
    rng = random.Random(seed)
    games = []
    for index in range(count):
        players = {
            Mark.X: get_ultimate_strategy("smart", rng),
            Mark.O: get_ultimate_strategy("casual" if index % 2 else "smart", rng),
        }
        board = UltimateBoard()
        while not board.is_over:
            board = board.play(players[board.turn].choose(board))
        games.append(board)
    hints = []
    for board in games:
        for played in range(0, len(board.moves), 6):
            position = UltimateBoard.from_moves(board.moves[:played])
            started = time.thread_time()
            ultimate_best_move(position, hint_budget)
            hints.append(time.thread_time() - started)
    print()
    print(
        f"hint ({hint_budget.nodes:,} nodes), {len(hints)} positions of {count} games, CPU: "
        f"{spread(hints)}"
    )
    per_move = []
    for board in games:
        started = time.thread_time()
        review_ultimate_game(board.moves, review_budget)
        spent = time.thread_time() - started
        per_move.append(spent / len(board.moves))
        print(
            f"review ({review_budget.nodes:,} nodes a position) of a {len(board.moves)}-move "
            f"game, CPU: {spent:.2f} s"
        )
    print(
        f"review, CPU a move: {spread(per_move)}; a 60-move game at the worst rate: "
        f"{max(per_move) * 60:.1f} s"
    )


if __name__ == "__main__":
    main()
