"""What each move of a game did to its value, a sentence a move; and the best move, for hints.

A position's value, for the side to move, is what perfect play by both sides gives it: +1 a
win, 0 a draw, -1 a loss. It is exact on every board the game offers: 3x3 and 4x4 (4 in a row),
solved outright, and 5x5 (4 in a row), from the opening book and the exact search
(:func:`game.ai.exact_5x5`); on any other board it is from the budgeted search, within a node
budget (:data:`REVIEW_BUDGET`): a win or a loss it proved, else a draw (see
:func:`position_value`).

Each move is judged by the value of the game for its player before and after it
(:class:`Verdict`): it kept it (good), turned a win into a draw (a missed win), or turned a win
or a draw into a loss (a blunder). A move that was not good comes with a move that kept the
value: a win at once when there was one. The sentences, one a move:

- a good move, the game going on, says who wins with best play from there: ``"1. X B2 —
  draw."``, ``"3. X C3 — X wins."``;
- a good move that ends the game: ``"5. X A3 — X wins the game."``, ``"9. X C3 — the game ends
  in a draw."``;
- a missed win: ``"5. X C1 — missed win: the game was a win for X, now a draw. C2 won at
  once."``, or ``"… C3 kept the win."`` when no move won at once;
- a blunder: ``"4. O B1 — blunder: the game was a draw, now X wins. A3 kept the draw."``, or
  from a win, ``"5. X B1 — blunder: the game was a win for X, now O wins. A3 won at once."``.

>>> for move in review_game(["A1", "B2", "A2", "B1", "A3"]):
...     print(move)
1. X A1 — draw.
2. O B2 — draw.
3. X A2 — draw.
4. O B1 — blunder: the game was a draw, now X wins. A3 kept the draw.
5. X A3 — X wins the game.
>>> for move in review_game(["B2", "A1", "A2", "A3", "C1", "C2", "B3", "B1", "C3"]):
...     print(move)
1. X B2 — draw.
2. O A1 — draw.
3. X A2 — draw.
4. O A3 — blunder: the game was a draw, now X wins. C2 kept the draw.
5. X C1 — missed win: the game was a win for X, now a draw. C2 won at once.
6. O C2 — draw.
7. X B3 — draw.
8. O B1 — draw.
9. X C3 — the game ends in a draw.
>>> blunder = review_game(["B2", "A1", "A2", "A3"])[-1]
>>> blunder.verdict, blunder.value_before, blunder.value_after, cell_name(blunder.better)
(<Verdict.BLUNDER: 'blunder'>, 0, -1, 'C2')
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from game.ai import MinimaxStrategy, evaluate, exact_5x5, is_searched_exactly, is_solved
from game.board import DEFAULT_SIZE, Board, Mark, cell_name
from game.exact import ExactSolver
from game.search import SearchBudget, ThreatSearch

__all__ = [
    "REVIEW_BUDGET",
    "MoveReview",
    "Verdict",
    "best_move",
    "position_value",
    "review_game",
]

# What the review's search may spend on each position of a board not solved exactly (another
# line length): nodes rather than seconds, so that a review reads the same every time and on
# every machine.
REVIEW_BUDGET = SearchBudget(seconds=None, nodes=20_000)
# The search orders equal moves with an rng: a fixed one, for the same reason.
_REVIEW_SEED = 0


class Verdict(Enum):
    """What a move did to the value of the game for the player who made it."""

    GOOD = "good"
    MISSED_WIN = "missed win"
    BLUNDER = "blunder"


@dataclass(frozen=True, slots=True)
class MoveReview:
    """One move of a game: the position it was played in, the cell, the value of the game for
    its player before and after it (+1 win, 0 draw, -1 loss), and, when it lost value, a move
    that kept it."""

    position: Board
    cell: int
    value_before: int
    value_after: int
    better: int | None = None

    def __post_init__(self) -> None:
        self.position.parse_move(self.cell)  # raises unless the move can be played there
        for value in (self.value_before, self.value_after):
            if value not in (-1, 0, 1):
                raise ValueError(f"a value is +1 (win), 0 (draw) or -1 (loss), not {value}")
        if (self.better is None) != (self.value_after >= self.value_before):
            raise ValueError(
                "a move that lost value needs a move that kept it (better), and only such a move"
            )
        if self.better is not None:
            self.position.parse_move(self.better)

    @property
    def number(self) -> int:
        """The move's number in the game: 1 for X's first."""
        return self.position.move_count + 1

    @property
    def mark(self) -> Mark:
        return self.position.turn

    @property
    def verdict(self) -> Verdict:
        if self.value_after >= self.value_before:
            return Verdict.GOOD
        return Verdict.BLUNDER if self.value_after < 0 else Verdict.MISSED_WIN

    @property
    def sentence(self) -> str:
        """The move in one sentence (see the module's documentation for every form)."""
        size = self.position.size
        mark = self.mark
        head = f"{self.number}. {mark} {cell_name(self.cell, size)} —"
        after = self.position.play(self.cell)
        if self.verdict is Verdict.GOOD:
            outcome = after.outcome()
            if outcome is None:
                return f"{head} {_forecast(mark, self.value_after)}."
            if outcome.winner is None:
                return f"{head} the game ends in a draw."
            return f"{head} {outcome.winner} wins the game."
        assert self.better is not None  # __post_init__ requires it of a move that lost value
        was = "a draw" if self.value_before == 0 else f"a win for {mark}"
        now = "a draw" if self.value_after == 0 else f"{mark.other} wins"
        if self.position.play(self.better).winner is mark:
            kept = "won at once"
        else:
            kept = "kept the draw" if self.value_before == 0 else "kept the win"
        return (
            f"{head} {self.verdict.value}: the game was {was}, now {now}. "
            f"{cell_name(self.better, size)} {kept}."
        )

    def __str__(self) -> str:
        return self.sentence


def _forecast(mark: Mark, value: int) -> str:
    """The value ``value`` for ``mark`` as who wins with best play."""
    if value == 0:
        return "draw"
    return f"{mark if value > 0 else mark.other} wins"


def position_value(board: Board, budget: SearchBudget = REVIEW_BUDGET) -> int:
    """+1, 0 or -1: the value of ``board`` for the side to move (-1 once the other side has won,
    0 for a finished draw). Exact on 3x3, 4x4 and 5x5 (their standard line lengths); on other
    boards from the search, within ``budget``: a win or a loss it proved, else 0.

    >>> position_value(Board.from_string("XX./OO./...")), position_value(Board(4))
    (1, 0)
    >>> position_value(Board.from_string(".OOO./XX.../X..../...../....."))  # A1 or E1 wins
    -1
    """
    return _analysis(board, budget)[0]


def best_move(board: Board, budget: SearchBudget | None = None) -> int:
    """A best move for the side to move, for a hint: one that keeps the position's value (in a
    won position one of the fastest wins, the lowest cell among equals on 3x3 and 4x4), exact on
    3x3, 4x4 and 5x5 (the book's move, or the exact search's first); on other boards
    ``minimax``'s choice within ``budget`` (its default budget of 0.3 s unless given).

    >>> cell_name(best_move(Board.from_string("XX./OO./...")))
    'C1'
    """
    if is_solved(board):
        if is_searched_exactly(board):
            return _exact(board)[1]
        return MinimaxStrategy().best_moves(board)[0]
    strategy = MinimaxStrategy(random.Random(_REVIEW_SEED), budget)
    return strategy.best_moves(board)[0]


def _exact(board: Board, solver: ExactSolver | None = None) -> tuple[int, int]:
    value, move = exact_5x5(board, solver)
    if move is None:
        raise ValueError(f"no move to suggest: the game is over\n{board.grid()}")
    return value, move


def _analysis(
    board: Board, budget: SearchBudget, solver: ExactSolver | None = None
) -> tuple[int, int | None]:
    """``board``'s value for the side to move, and a move that keeps it (None once over);
    ``solver`` is the exact search a 5x5 game's positions share."""
    outcome = board.outcome()
    if outcome is not None:
        return (0 if outcome.winner is None else -1), None
    if is_solved(board):
        if is_searched_exactly(board):
            # Any move that keeps a win will do for a review: it need not be the fastest.
            return exact_5x5(board, solver, fastest=False)
        return evaluate(board), best_move(board)
    result = ThreatSearch(board.geometry).analyse(board, budget, random.Random(_REVIEW_SEED))
    value = 1 if result.forced_win else -1 if result.forced_loss else 0
    return value, result.move


def review_game(
    moves: Iterable[int | str],
    size: int = DEFAULT_SIZE,
    line_length: int | None = None,
    budget: SearchBudget = REVIEW_BUDGET,
) -> tuple[MoveReview, ...]:
    """Every move of the game played by ``moves`` (cells or names, from the empty board), with
    what it did to the game's value; ``budget`` bounds the search on boards not solved outright
    (other line lengths), once for each position. A move that cannot be played raises the
    board's error.

    On 5x5 one exact search serves the whole game, so each position reuses what the others
    proved. On boards judged by the budgeted search, it may see further from the position after
    a move than from the one before it: a move the search itself would have played is never
    called a mistake, and a move after which it finds more than it found before is good.
    """
    positions = [Board(size, line_length)]
    cells = []
    for move in moves:
        cell = positions[-1].parse_move(move)
        cells.append(cell)
        positions.append(positions[-1].play(cell))
    solver = ExactSolver(positions[0].geometry) if is_searched_exactly(positions[0]) else None
    # Last position first: the exact search then meets the earlier ones' lines already proven.
    analyses = [_analysis(position, budget, solver) for position in reversed(positions)][::-1]
    reviews = []
    for index, cell in enumerate(cells):
        before, kept_by = analyses[index]
        after = -analyses[index + 1][0]
        if kept_by == cell:
            before = after  # its own choice: from the position after it, the search saw further
        better = kept_by if after < before else None
        reviews.append(MoveReview(positions[index], cell, before, after, better))
    return tuple(reviews)
