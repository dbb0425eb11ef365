"""The computer players, checked over every reachable position and every line of play."""

from __future__ import annotations

import functools
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable

import pytest

import game.book5x5
import game.solved
import game.solved3x3
from game import Board, IllegalMoveError, Mark, geometry, reachable_positions
from game.ai import (
    STRATEGIES,
    MinimaxStrategy,
    RandomStrategy,
    SmartStrategy,
    evaluate,
    get_strategy,
    is_searched_exactly,
    is_solved,
    score,
)
from game.solved3x3 import TABLE_PATH, Solver, pack, shipped_table

ALL_POSITIONS = sorted(reachable_positions(), key=str)
LIVE_POSITIONS = [board for board in ALL_POSITIONS if not board.is_over]


def can_ever_lose(side: Mark, candidates: Callable[[Board], tuple[int, ...]]) -> bool:
    """Whether ``side`` can lose from the empty board, playing any move ``candidates`` allows
    against every possible reply: the question "is this player unbeatable?" answered exactly.
    """

    @functools.cache
    def loses_somewhere(position: Board) -> bool:
        outcome = position.outcome()
        if outcome is not None:
            return outcome.winner is side.other
        moves = candidates(position) if position.turn is side else position.legal_moves
        return any(loses_somewhere(position.play(cell)) for cell in moves)

    return loses_somewhere(Board())


def naive_value(board: Board) -> int:
    """Plain recursive minimax, the textbook way: the reference the fast solver must match."""
    outcome = board.outcome()
    if outcome is not None:
        return 0 if outcome.winner is None else -1  # the side to move has lost
    return max(-naive_value(board.play(cell)) for cell in board.legal_moves)


@pytest.mark.slow  # a plain minimax from 300 positions: 1.7 s of CPU
def test_evaluate_matches_plain_minimax_in_sample_positions() -> None:
    rng = random.Random(7)
    for board in rng.sample(LIVE_POSITIONS, 300):
        assert evaluate(board) == naive_value(board), str(board)


def test_evaluate_is_consistent_with_its_children_everywhere() -> None:
    """Negamax consistency over every live position: the value is the best child's negation."""
    for board in LIVE_POSITIONS:
        children = [-evaluate(board.play(cell)) for cell in board.legal_moves]
        assert evaluate(board) == max(children), str(board)


def test_minimax_never_picks_a_losing_move_when_another_exists() -> None:
    minimax = MinimaxStrategy()
    for board in LIVE_POSITIONS:
        best = max(-evaluate(board.play(cell)) for cell in board.legal_moves)
        for cell in minimax.best_moves(board):
            assert -evaluate(board.play(cell)) == best, (str(board), cell)


def test_minimax_always_takes_a_win_in_one() -> None:
    minimax = MinimaxStrategy()
    checked = 0
    for board in LIVE_POSITIONS:
        winning = {cell for cell in board.legal_moves if board.play(cell).winner is board.turn}
        if winning:
            checked += 1
            assert set(minimax.best_moves(board)) <= winning, str(board)
    assert checked > 1000


def test_minimax_prefers_the_fastest_win_and_the_slowest_loss() -> None:
    # X can win now at C1, or later through the fork at C3: it must win now.
    board = Board.from_string("XX./.O./O.X")
    assert MinimaxStrategy().best_moves(board) == (2,)
    # O is lost whatever it does (X forks next); it must not lose at once, so it blocks at A1.
    lost = Board.from_string(".../.X./.OX")
    assert evaluate(lost) == -1
    assert MinimaxStrategy().best_moves(lost) == (0,)


@functools.cache
def recursive_negamax(board: Board) -> tuple[int, tuple[int, ...]]:
    """The score and best moves the solver must give, found the straightforward way: recursion
    over boards, scoring a win by how many cells it leaves free (sooner is better).
    """
    outcome = board.outcome()
    if outcome is not None:
        return (0 if outcome.winner is None else -(1 + len(board.empty_cells))), ()
    scores = {cell: -recursive_negamax(board.play(cell))[0] for cell in board.legal_moves}
    best = max(scores.values())
    return best, tuple(cell for cell, value in scores.items() if value == best)


def test_the_solver_agrees_with_a_recursive_negamax_in_every_position() -> None:
    """Same score and the same best moves in the same order, so a seeded rng picks the same."""
    minimax = MinimaxStrategy()
    for board in ALL_POSITIONS:
        expected_score, expected_moves = recursive_negamax(board)
        assert score(board) == expected_score, str(board)
        if not board.is_over:
            assert minimax.best_moves(board) == expected_moves, str(board)


def test_the_shipped_3x3_table_is_what_the_solver_computes() -> None:
    """minimax reads 3x3 from a shipped table (game/data/solved_3x3.bin) rather than solving the
    game at every start: it is a fresh solve, byte for byte, and gives every reachable position
    the solver's score and best moves."""
    solver = Solver(geometry(3))
    entries = solver.solve()
    assert len(entries) == len(ALL_POSITIONS) == 5478
    with open(TABLE_PATH, "rb") as file:
        assert file.read() == pack(entries)
    table = shipped_table()
    for board in ALL_POSITIONS:
        assert table.entry(board) == solver.entry(board), str(board)
    assert game.solved3x3.main(["verify"]) == 0


def test_a_position_no_game_reaches_is_solved_on_demand() -> None:
    """Board.from_masks takes any masks: both rows complete, with X to move, is in no game (and
    not in the shipped table), and still has its score: O completed a line, 3 cells left."""
    board = Board.from_masks(0b000_000_111, 0b111_000_000)
    assert shipped_table().entry(board) is None
    assert score(board) == -4


# A 3x3 program: every level plays minimax, every position's value is asked. It must import none
# of the modules only the larger boards need (each costs every start milliseconds).
THREE_BY_THREE_PROGRAM = """
import random, sys
from game import Board, Mark, reachable_positions
from game.ai import STRATEGIES, evaluate, get_strategy, is_solved, play_game, score
for name in STRATEGIES:
    for side in Mark:
        players = {side: get_strategy("minimax"), side.other: get_strategy(name, random.Random(1))}
        play_game(Board(), players)
for board in reachable_positions():
    evaluate(board), score(board), is_solved(board)
print(" ".join(sorted(name for name in sys.modules if name.split(".")[0] == "game")))
"""
LARGER_BOARDS_MODULES = {"game.book5x5", "game.exact", "game.search", "game.solved"}


def test_a_3x3_game_imports_nothing_that_only_the_larger_boards_need() -> None:
    result = subprocess.run(
        [sys.executable, "-c", THREE_BY_THREE_PROGRAM],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    imported = set(result.stdout.split())
    assert "game.ai" in imported
    assert imported & LARGER_BOARDS_MODULES == set()


# Each board's module, imported on first use by the one that needs it, in a fresh interpreter.
LARGER_BOARD_PROGRAM = """
import random, sys
from game import Board
from game.ai import get_strategy
print(",".join(sorted(name for name in {modules!r} if name in sys.modules)))
get_strategy("minimax", random.Random(1)).choose(Board({size}))
print(",".join(sorted(name for name in {modules!r} if name in sys.modules)))
"""


@pytest.mark.parametrize(
    ("size", "imported"),
    # 4x4: the table, and the exact search that converts a won position fastest. 5x5: the
    # empty board's move is in the opening book.
    [(4, "game.exact,game.solved"), (5, "game.book5x5")],
)
def test_a_larger_board_imports_its_modules_on_its_first_move(size: int, imported: str) -> None:
    code = LARGER_BOARD_PROGRAM.format(modules=sorted(LARGER_BOARDS_MODULES), size=size)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["", imported]


def test_the_boards_played_exactly_are_those_of_the_shipped_table_and_book() -> None:
    """game.ai names the 4x4 table's and the 5x5 book's boards itself, so that asking which
    board a position is on imports neither module: the same boards as the modules'."""
    table_board = Board(game.solved.SIZE, line_length=game.solved.LINE_LENGTH)
    book_board = Board(game.book5x5.SIZE, line_length=game.book5x5.LINE_LENGTH)
    assert is_solved(table_board)
    assert not is_searched_exactly(table_board)
    assert is_searched_exactly(book_board)
    assert evaluate(table_board) == game.solved.solved_value(table_board)
    entry = game.book5x5.book_entry(book_board)
    assert entry is not None
    assert evaluate(book_board) == entry[0]


# Run in a fresh interpreter, so that this call is the one that solves the game. The limit is set
# low, well under the default, so that a solver that raised it to suit itself would be caught.
SOLVE_UNDER_A_LOW_RECURSION_LIMIT = """
import sys
from game import geometry
from game.solved3x3 import Solver
sys.setrecursionlimit(50)
print(len(Solver(geometry(3)).solve()), sys.getrecursionlimit())
"""


def test_solving_leaves_the_recursion_limit_alone() -> None:
    """The engine leaves interpreter-wide state alone: the limit is the caller's to set."""
    result = subprocess.run(
        [sys.executable, "-c", SOLVE_UNDER_A_LOW_RECURSION_LIMIT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["5478", "50"]


@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_minimax_never_loses_against_any_sequence(side: Mark) -> None:
    assert not can_ever_lose(side, MinimaxStrategy().best_moves)


@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_smart_never_loses_against_any_sequence(side: Mark) -> None:
    assert not can_ever_lose(side, SmartStrategy().candidates)


@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_random_does_lose_somewhere(side: Mark) -> None:
    """The walk above can tell a beatable player: random must be caught losing."""
    assert can_ever_lose(side, lambda board: board.legal_moves)


def test_smart_plays_by_its_rules() -> None:
    smart = SmartStrategy()
    assert smart.candidates(Board()) == (4,)  # centre first
    assert smart.candidates(Board.from_string("XX./OO./...")) == (2,)  # win beats block
    assert smart.candidates(Board.from_string("XX./O../...")) == (2,)  # block
    # X's C1 opens the C column and the anti-diagonal at once: a fork, before the free centre.
    assert smart.candidates(Board.from_string(".../O.X/XO.")) == (2,)  # fork
    assert smart.candidates(Board.from_string("O../.X./...")) == (8,)  # opposite corner
    assert set(smart.candidates(Board.from_string(".../.X./..."))) == {0, 2, 6, 8}  # a corner
    # X in opposite corners against O's centre: O must take a side, never a corner.
    assert set(smart.candidates(Board.from_string("X../.O./..X"))) == {1, 3, 5, 7}


def test_every_strategy_plays_only_legal_moves_everywhere() -> None:
    strategies = [get_strategy(name, rng=random.Random(3)) for name in STRATEGIES]
    for board in LIVE_POSITIONS:
        for strategy in strategies:
            assert strategy.choose(board) in board.legal_moves


def test_minimax_varies_its_choice_among_equal_moves() -> None:
    minimax = MinimaxStrategy(rng=random.Random(11))
    openings = Counter(minimax.choose(Board()) for _ in range(900))
    assert set(openings) == set(range(9))  # every opening draws, so every one is chosen
    assert min(openings.values()) > 50


def test_a_seeded_rng_repeats_the_same_choices() -> None:
    for name in STRATEGIES:
        first = [get_strategy(name, random.Random(5)).choose(Board()) for _ in range(5)]
        again = [get_strategy(name, random.Random(5)).choose(Board()) for _ in range(5)]
        assert first == again


def test_random_is_uniform_over_legal_moves() -> None:
    strategy = RandomStrategy(random.Random(2))
    board = Board.from_string("X../.O./...")
    counts = Counter(strategy.choose(board) for _ in range(7000))
    assert set(counts) == set(board.legal_moves)
    assert all(800 < count < 1200 for count in counts.values())


def test_unknown_strategy_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match="random, casual, smart, minimax"):
        get_strategy("grandmaster")


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_choosing_in_a_finished_game_is_an_error(name: str) -> None:
    with pytest.raises(IllegalMoveError, match="game is over"):
        get_strategy(name).choose(Board.from_string("XXX/OO./..."))
