"""Reviews and hints for ultimate tic-tac-toe (:mod:`game.ultimate`), from the strongest level's
search (the Monte Carlo tree search :class:`game.ultimate_ai.UltimateMcts`) within a fixed
number of iterations and seed, so that the same game reads the same on every machine.

Ultimate tic-tac-toe is not solved: every verdict is the search's judgement, not a proof. A
position's score, for the side to move, is a forced result the search proved (a win or a loss
within so many moves) or otherwise the win chance of its best move, in the points of the
evaluation its playouts end with (about 25 a small board won, 70 more for two in a line of small
boards whose third is still open: 60 points is a 73% chance; see
:class:`game.ultimate_ai.UltimateAnalysis`).

Each move is judged by its player's score before it (the best the search found) and after it
(the search's score of the position it led to), as :class:`UltimateVerdict` says:

- ``blunder``: the move turned a position the search had not proved lost into a proven loss,
  or lost at least :data:`BLUNDER_POINTS`;
- ``missed win``: the search had proved a win, and after the move it proves none;
- ``mistake``: it lost at least :data:`MISTAKE_POINTS`, ``inaccuracy`` at least
  :data:`INACCURACY_POINTS`;
- ``good`` otherwise, and always for the move the search itself would have played there.

A move that was not good comes with the search's better move and the opponent's best answer to
the move played (the refutation). The sentences, one a move (the bot builds its translated ones
from the fields):

>>> review = review_ultimate_game(["E5", "E4", "E2"], budget=SearchBudget(None, nodes=500))
>>> print(review[0])
1. X E5 — good by the engine's search (not proven).
>>> review[0].number, review[0].mark, review[0].cell_name, review[0].verdict.value
(1, <Mark.X: 'X'>, 'E5', 'good')

The other forms are in :attr:`UltimateMoveReview.sentence`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from game.board import Mark
from game.budget import SearchBudget
from game.ultimate import (
    SMALL_OF,
    UltimateBoard,
    small_board_name,
    ultimate_cell_name,
)
from game.ultimate_ai import (
    WIN_SCORE,
    UltimateAnalysis,
    UltimateMcts,
    forced_result,
)

__all__ = [
    "BLUNDER_POINTS",
    "HINT_BUDGET",
    "INACCURACY_POINTS",
    "MISTAKE_POINTS",
    "REVIEW_BUDGET",
    "ReplyEffect",
    "UltimateMoveReview",
    "UltimateVerdict",
    "analyse_position",
    "judge",
    "review_ultimate_game",
    "ultimate_best_move",
]

# A hint's search: iterations rather than seconds, so that a position gets the same hint on every
# machine (about 0.35 s of CPU on the 2-core machine of bench/README.md, a little more than the
# level's 0.3 s a move).
HINT_BUDGET = SearchBudget(seconds=None, nodes=5_000)
# Each position of a reviewed game: a 60-move game takes about 60 of these (see bench/README.md).
REVIEW_BUDGET = SearchBudget(seconds=None, nodes=2_000)
# The search orders equally rated moves with an rng: a fixed one, for the same reason.
_SEED = 0

# What a move may lose, in the evaluation's points, before it is called an inaccuracy (about a
# small board), a mistake (about two in a line of small boards) or a blunder (about the game).
INACCURACY_POINTS = 25
MISTAKE_POINTS = 60
BLUNDER_POINTS = 150


class UltimateVerdict(Enum):
    """What a move did to its player's score, by the engine's search (not a proof)."""

    GOOD = "good"
    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"
    MISSED_WIN = "missed win"


class ReplyEffect(Enum):
    """What the opponent's best answer to a move (its refutation) does at once."""

    WINS_GAME = "wins the game"
    WINS_BOARD = "wins a small board"
    NOTHING_AT_ONCE = "nothing at once"


def analyse_position(
    board: UltimateBoard, budget: SearchBudget = REVIEW_BUDGET
) -> UltimateAnalysis:
    """The search's best move in ``board`` (not over) and its score for the side to move,
    within ``budget`` and with the fixed seed: the same on every machine."""
    return UltimateMcts(random.Random(_SEED), budget).analyse(board)


def ultimate_best_move(board: UltimateBoard, budget: SearchBudget = HINT_BUDGET) -> int:
    """A hint: the search's best move for the side to move in ``board`` (a grid cell), the same
    for the same position on every machine. A win in one is always found (the search's first
    two plies are complete). Raises :class:`game.errors.IllegalMoveError` once the game is over.
    """
    return analyse_position(board, budget).move


def _final_score(board: UltimateBoard) -> int:
    """The score of a finished game for the side to move (who did not make the last move)."""
    return 0 if board.winner is None else -WIN_SCORE


def judge(score_before: int, score_after: int) -> UltimateVerdict:
    """The verdict on a move from its player's scores before and after it (see the module's
    documentation)."""
    before, after = forced_result(score_before), forced_result(score_after)
    if after < 0 and before >= 0:
        return UltimateVerdict.BLUNDER
    if before > 0 and after <= 0:
        return UltimateVerdict.MISSED_WIN
    if before != 0 and after == before:
        return UltimateVerdict.GOOD  # still won (or still lost): how fast does not count
    loss = score_before - score_after
    if loss >= BLUNDER_POINTS:
        return UltimateVerdict.BLUNDER
    if loss >= MISTAKE_POINTS:
        return UltimateVerdict.MISTAKE
    if loss >= INACCURACY_POINTS:
        return UltimateVerdict.INACCURACY
    return UltimateVerdict.GOOD


@dataclass(frozen=True, slots=True)
class UltimateMoveReview:
    """One move of a game, judged by the engine's search: the position it was played in, the
    cell, its player's score before it (the best the search found) and after it, and, when it
    was not good, the search's better move and the opponent's best answer (``reply``)."""

    position: UltimateBoard
    cell: int
    score_before: int
    score_after: int
    better: int | None = None
    reply: int | None = None

    def __post_init__(self) -> None:
        self.position.play(self.cell)  # raises unless the move can be played there
        if (self.better is None) != (self.verdict is UltimateVerdict.GOOD):
            raise ValueError("a move that was not good needs a better move, and only such a move")
        if self.better is not None:
            if self.better == self.cell:
                raise ValueError("the better move must be another move")
            self.position.play(self.better)
        if self.reply is not None:
            self.after.play(self.reply)

    # -- the parts a sentence is made of (the bot translates from these) ---------------------

    @property
    def number(self) -> int:
        """The move's number in the game: 1 for X's first."""
        return self.position.move_count + 1

    @property
    def mark(self) -> Mark:
        return self.position.turn

    @property
    def cell_name(self) -> str:
        return ultimate_cell_name(self.cell)

    @property
    def better_name(self) -> str | None:
        return None if self.better is None else ultimate_cell_name(self.better)

    @property
    def reply_name(self) -> str | None:
        return None if self.reply is None else ultimate_cell_name(self.reply)

    @property
    def reply_board(self) -> int | None:
        """The small board (0..8) the opponent's best answer is played in; None without one."""
        return None if self.reply is None else SMALL_OF[self.reply]

    @property
    def after(self) -> UltimateBoard:
        """The position the move led to."""
        return self.position.play(self.cell)

    @property
    def result_before(self) -> int:
        """+1 when the search proved a win for the move's player before it, -1 a loss, else 0."""
        return forced_result(self.score_before)

    @property
    def result_after(self) -> int:
        """The same after the move (a finished game counts as proven)."""
        return forced_result(self.score_after)

    @property
    def proven(self) -> bool:
        """Whether what the move led to is certain: the game ended with it, or the search
        proved the position after it won or lost. Otherwise the verdict rests on the search's
        evaluation (the sentences say "not proven")."""
        return self.after.is_over or self.result_after != 0

    @property
    def loss(self) -> int:
        """How much the move lost by the search's scores (0 if none), in the evaluation's
        points; forced results count as :data:`game.ultimate_ai.WIN_SCORE` less their plies."""
        return max(0, self.score_before - self.score_after)

    @property
    def verdict(self) -> UltimateVerdict:
        return judge(self.score_before, self.score_after)

    @property
    def sent_to(self) -> int | None:
        """The small board the opponent must play in next; None when it may choose any open
        board, or the game is over."""
        after = self.after
        return None if after.is_over else after.forced_board

    @property
    def reply_effect(self) -> ReplyEffect | None:
        """What the opponent's best answer does at once; None without one."""
        if self.reply is None:
            return None
        answered = self.after.play(self.reply)
        if answered.winner is not None:
            return ReplyEffect.WINS_GAME
        if answered.small_winner(SMALL_OF[self.reply]) is self.mark.other:
            return ReplyEffect.WINS_BOARD
        return ReplyEffect.NOTHING_AT_ONCE

    @property
    def better_wins_at_once(self) -> bool:
        """Whether the better move wins the game at once."""
        return self.better is not None and self.position.play(self.better).winner is self.mark

    # -- the sentence ----------------------------------------------------------------------

    @property
    def sentence(self) -> str:
        """The move in one sentence, in English (for the terminal and the tests):

        - a move that ends the game: ``"21. X H8 — X wins the game."``, ``"… — the game ends in
          a draw."``;
        - a good move: ``"1. X E5 — good by the engine's search (not proven)."``, or with a
          result the search proved, ``"… (proven): X wins by force."``;
        - a missed win: ``"… — missed win by the engine's search (not proven): H8 won the game
          at once."``, or ``"… H8 kept a forced win."``;
        - any other: ``"20. O I3 — blunder by the engine's search (proven): it sends X to the
          bottom-right board, where X wins the game with H8. I7 was better."``; the middle
          part says what the opponent's best answer does: wins the game, wins a small board
          (``"…, which X then wins with E4."``) or neither (``"X's best answer is D2."``); when
          the opponent may play anywhere, ``"it lets X play in any board, and X wins …"``.
        """
        mark = self.mark
        head = f"{self.number}. {mark} {self.cell_name} —"
        after = self.after
        verdict = self.verdict
        if after.is_over and verdict is UltimateVerdict.GOOD:
            if after.winner is None:
                return f"{head} the game ends in a draw."
            return f"{head} {after.winner} wins the game."
        by_search = f"{verdict.value} by the engine's search"
        proof = "proven" if self.proven else "not proven"
        if verdict is UltimateVerdict.GOOD:
            if self.result_after > 0:
                return f"{head} {by_search} ({proof}): {mark} wins by force."
            if self.result_after < 0:
                return f"{head} {by_search} ({proof}): {mark.other} wins by force."
            return f"{head} {by_search} ({proof})."
        ends = "it ends the game in a draw. " if after.is_over else ""
        if verdict is UltimateVerdict.MISSED_WIN:
            kept = "won the game at once" if self.better_wins_at_once else "kept a forced win"
            return f"{head} {by_search} ({proof}): {ends}{self.better_name} {kept}."
        why = ends or f"{self._why()} "
        return f"{head} {by_search} ({proof}): {why}{self.better_name} was better."

    def _why(self) -> str:
        """What the opponent's best answer makes of the move."""
        opponent = self.mark.other
        reply = self.reply_name
        effect = self.reply_effect
        sent_to = self.sent_to
        if sent_to is None:
            where = f"it lets {opponent} play in any board, and {opponent}"
        else:
            where = f"it sends {opponent} to the {small_board_name(sent_to)} board"
        if effect is ReplyEffect.WINS_GAME:
            if sent_to is None:
                return f"{where} wins the game with {reply}."
            return f"{where}, where {opponent} wins the game with {reply}."
        if effect is ReplyEffect.WINS_BOARD:
            if sent_to is None:
                reply_board = self.reply_board
                assert reply_board is not None  # an effect comes with a reply
                return f"{where} wins the {small_board_name(reply_board)} board with {reply}."
            return f"{where}, which {opponent} then wins with {reply}."
        return f"{opponent}'s best answer is {reply}."

    def __str__(self) -> str:
        return self.sentence


def review_ultimate_game(
    moves: Iterable[int | str], budget: SearchBudget = REVIEW_BUDGET
) -> tuple[UltimateMoveReview, ...]:
    """Every move of the game played by ``moves`` (grid cells or names, from the empty board),
    judged by the search within ``budget`` once for each position: at most one search a move,
    so a 60-move game takes about 60 times the budget (see bench/README.md for the time). A
    move that cannot be played raises the board's error.

    The search may see further from the position after a move than from the one before it: a
    move the search itself would have played is never called a mistake, and a move after which
    it finds more than it found before is good.
    """
    positions = [UltimateBoard()]
    for move in moves:
        positions.append(positions[-1].play(move))
    analyses = [
        None if position.is_over else analyse_position(position, budget) for position in positions
    ]
    reviews = []
    for index, after in enumerate(positions[1:]):
        analysis = analyses[index]
        assert analysis is not None  # a move was played there, so the game went on
        cell = after.moves[-1]
        following = analyses[index + 1]
        score_after = -(_final_score(after) if following is None else following.score)
        score_before = analysis.score
        if analysis.move == cell:
            score_before = score_after  # its own choice: from after it, the search saw further
        better = reply = None
        if judge(score_before, score_after) is not UltimateVerdict.GOOD:
            better = analysis.move
            reply = None if following is None else following.move
        reviews.append(
            UltimateMoveReview(positions[index], cell, score_before, score_after, better, reply)
        )
    return tuple(reviews)
