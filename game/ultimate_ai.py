"""Computer players for ultimate tic-tac-toe (:mod:`game.ultimate`), weakest first: ``random``,
``casual`` (takes a small board it can win, blocks one it would lose, otherwise careless),
``smart`` (rules: win the game, block, win a small board, send the opponent nowhere useful) and
``minimax``, the strongest: a Monte Carlo tree search (:class:`UltimateMcts`) whose playouts end
in a hand-tuned evaluation, within a time budget a move. The level keeps its name: it was an
alpha-beta search with that evaluation (:class:`UltimateMinimax`, still here), until the tree
search beat it at the same time a move (issue 39; bench/README.md has the figures).

Every player picks among the moves it rates equally with the ``random.Random`` it was given, so a
seeded game repeats (the strongest's, given a node budget, for it a number of iterations, rather
than a time one).

>>> import random
>>> board = UltimateBoard.from_moves(["E5"])
>>> get_ultimate_strategy("smart", random.Random(1)).choose(board) in board.legal_moves
True
"""

from __future__ import annotations

import functools
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

from game.board import Mark
from game.budget import SearchBudget
from game.errors import IllegalMoveError
from game.ultimate import (
    FULL_SMALL,
    GRID_CELL,
    HAS_FREE_LINE,
    HAS_LINE,
    LINE_MASKS,
    LOCAL_OF,
    META_LINES,
    SMALL_OF,
    UltimateBoard,
    apply_move,
    takeable_boards,
)

__all__ = [
    "ULTIMATE_STRATEGIES",
    "WIN_SCORE",
    "UltimateAnalysis",
    "UltimateCasual",
    "UltimateMcts",
    "UltimateMinimax",
    "UltimateRandom",
    "UltimateSmart",
    "UltimateStrategy",
    "forced_result",
    "get_ultimate_strategy",
    "play_ultimate_game",
    "plies_to_end",
]


class UltimateStrategy(Protocol):
    """A computer player: ``choose`` returns the grid cell it plays in a position not over."""

    name: str

    def choose(self, board: UltimateBoard) -> int: ...


def _require_moves(board: UltimateBoard) -> tuple[int, ...]:
    moves = board.legal_moves
    if not moves:
        raise IllegalMoveError(board, -1, "no move to choose: the game is over")
    return moves


def _completes(marks: int, local: int) -> bool:
    """Whether a mark in ``local`` gives the 9-bit ``marks`` of a small board a line."""
    return HAS_LINE[marks | 1 << local]


def _sides(board: UltimateBoard) -> tuple[int, int, int, int]:
    """The side to move's marks and the opponent's (81-bit), and their won boards (9-bit)."""
    x, o, won_x, won_o, _, _ = board.masks
    if board.turn is Mark.X:
        return x, o, won_x, won_o
    return o, x, won_o, won_x


def _small_marks(marks: int, small: int) -> int:
    return marks >> (small * 9) & FULL_SMALL


def _wins_small(marks: int, cell: int) -> bool:
    """Whether the side with ``marks`` wins a small board by playing ``cell``."""
    return _completes(_small_marks(marks, SMALL_OF[cell]), LOCAL_OF[cell])


def _wins_game(marks: int, won: int, cell: int) -> bool:
    small = SMALL_OF[cell]
    return _wins_small(marks, cell) and HAS_LINE[won | 1 << small]


class UltimateRandom:
    """Plays any legal cell, uniformly."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()

    def choose(self, board: UltimateBoard) -> int:
        return self._rng.choice(_require_moves(board))


class UltimateCasual:
    """Takes a small board it can win, else blocks a small board the opponent would win in one;
    otherwise plays any legal cell."""

    name = "casual"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()

    def urgent_moves(self, board: UltimateBoard) -> tuple[int, ...]:
        """The cells that win a small board, else those that take the cell the opponent would
        win one with; none when neither applies."""
        moves = _require_moves(board)
        mine, theirs, _, _ = _sides(board)
        return tuple(cell for cell in moves if _wins_small(mine, cell)) or tuple(
            cell for cell in moves if _wins_small(theirs, cell)
        )

    def choose(self, board: UltimateBoard) -> int:
        return self._rng.choice(self.urgent_moves(board) or _require_moves(board))


class UltimateSmart:
    """Simple rules, the first that applies: win the game; keep out of a move after which the
    opponent wins the game at once; win a small board; then the moves rated best by where they
    send the opponent (never where it wins a small board, nor to a free choice if avoidable)
    and what they do in their own board (block a line, make two in a row, take the centre)."""

    name = "smart"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()

    def choose(self, board: UltimateBoard) -> int:
        return self._rng.choice(self.candidates(board))

    def candidates(self, board: UltimateBoard) -> tuple[int, ...]:
        """The moves of the first rule that applies; :meth:`choose` picks one uniformly."""
        moves = _require_moves(board)
        mine, theirs, won_mine, _ = _sides(board)
        winning = tuple(cell for cell in moves if _wins_game(mine, won_mine, cell))
        if winning:
            return winning
        safe = tuple(cell for cell in moves if not self._loses_at_once(board, cell)) or moves
        small_wins = tuple(cell for cell in safe if _wins_small(mine, cell))
        if small_wins:
            return small_wins
        scores = {cell: self._score(board, cell, mine, theirs) for cell in safe}
        best = max(scores.values())
        return tuple(cell for cell, value in scores.items() if value == best)

    @staticmethod
    def _loses_at_once(board: UltimateBoard, cell: int) -> bool:
        after = board.play(cell)
        if after.is_over:
            return False
        theirs, _, won_theirs, _ = _sides(after)
        return any(_wins_game(theirs, won_theirs, reply) for reply in after.legal_moves)

    @staticmethod
    def _score(board: UltimateBoard, cell: int, mine: int, theirs: int) -> int:
        small, local = SMALL_OF[cell], LOCAL_OF[cell]
        x, o, won_x, won_o, closed, _ = board.masks
        x_to_move = board.turn is Mark.X
        x, o, won_x, won_o, closed, forced = apply_move(
            x, o, won_x, won_o, closed, x_to_move, small, local
        )
        mine_after = x if x_to_move else o
        score = 0
        # Where the opponent goes next: a board it can win at once is the worst place to send
        # it, a free choice the next worst.
        # These outweigh everything the move does in its own board (at most 13).
        if forced < 0:
            score -= 20
        elif _can_complete(_small_marks(theirs, forced), _small_marks(mine_after, forced)):
            score -= 30
        # What the move does in its own board.
        their_marks = _small_marks(theirs, small)
        my_marks = _small_marks(mine, small)
        if _completes(their_marks, local):
            score += 4  # takes the cell the opponent would complete a line with
        for line in LINE_MASKS:
            if line >> local & 1 and not line & their_marks and (line & my_marks).bit_count() == 1:
                score += 2  # two in a row, still open
        if local == 4:
            score += 1
        return score


def _can_complete(marks: int, blockers: int) -> bool:
    """Whether one more mark completes a line of ``marks`` not blocked by ``blockers``."""
    taken = marks | blockers
    return any(HAS_LINE[marks | 1 << local] for local in range(9) if not taken >> local & 1)


# -- the strongest: alpha-beta with an evaluation -------------------------------------------

# A won game, less the plies it took, so that a nearer win is preferred and a later loss.
WIN_SCORE = _WIN = 1_000_000
# No game lasts longer: scores within this of WIN_SCORE are forced results.
_MOST_PLIES = 100
# What a won small board is worth, by where it is in the big grid: the centre board lies on four
# lines of small boards, a corner on three, an edge on two. It counts only while a line of small
# boards through it can still be completed by its winner.
_BOARD_VALUE = (26, 22, 26, 22, 30, 22, 26, 22, 26)
# Two won small boards in a line whose third can still be taken, and one.
_META_TWO = 70
_META_ONE = 6
# A free choice of board for the side to move (it picks the one it needs).
_FREE_CHOICE = 8
# How often (in nodes) the search looks at the clock.
_CLOCK_EVERY = 256

_META_MASKS = tuple(sum(1 << small for small in line) for line in META_LINES)


@functools.cache
def _small_values() -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Every open small board's value for X and for O, indexed ``x_marks << 9 | o_marks``: for
    each side, two in a line with the third free 6, one alone 1, the centre 2. A side's value
    counts only where a line of small boards through the board is still open to it."""
    x_values = [0] * (1 << 18)
    o_values = [0] * (1 << 18)
    for code in range(3**9):
        x_marks = o_marks = 0
        for local in range(9):
            code, digit = divmod(code, 3)
            if digit == 1:
                x_marks |= 1 << local
            elif digit == 2:
                o_marks |= 1 << local
        x_value = 2 * (x_marks >> 4 & 1)
        o_value = 2 * (o_marks >> 4 & 1)
        for line in LINE_MASKS:
            x_count, o_count = (line & x_marks).bit_count(), (line & o_marks).bit_count()
            if not o_count:
                x_value += (0, 1, 6, 0)[x_count]
            if not x_count:
                o_value += (0, 1, 6, 0)[o_count]
        x_values[x_marks << 9 | o_marks] = x_value
        o_values[x_marks << 9 | o_marks] = o_value
    return tuple(x_values), tuple(o_values)


def _evaluate(
    x: int,
    o: int,
    won_x: int,
    won_o: int,
    closed: int,
    forced: int,
    x_to_move: bool,
    takeable_x: int,
    takeable_o: int,
) -> int:
    """The value for the side to move, by the weights above, of a position where some line of
    small boards can still be completed (``takeable_x`` and ``takeable_o``: the small boards
    each side can still count in a line)."""
    x_values, o_values = _small_values()
    value = 0
    live_x = live_o = 0  # the small boards on a line of small boards each side can complete
    for line in _META_MASKS:
        if line & takeable_x == line:
            live_x |= line
            count = (line & won_x).bit_count()
            value += _META_TWO if count == 2 else _META_ONE * count
        if line & takeable_o == line:
            live_o |= line
            count = (line & won_o).bit_count()
            value -= _META_TWO if count == 2 else _META_ONE * count
    for small in range(9):
        bit = 1 << small
        if won_x & bit:
            if live_x & bit:
                value += _BOARD_VALUE[small]
        elif won_o & bit:
            if live_o & bit:
                value -= _BOARD_VALUE[small]
        elif not closed & bit and (live_x | live_o) & bit:
            shift = small * 9
            code = (x >> shift & FULL_SMALL) << 9 | (o >> shift & FULL_SMALL)
            if live_x & bit:
                value += x_values[code]
            if live_o & bit:
                value -= o_values[code]
    if not x_to_move:
        value = -value
    return value + (_FREE_CHOICE if forced < 0 else 0)


def _play(
    x: int,
    o: int,
    won_x: int,
    won_o: int,
    closed: int,
    takeable_x: int,
    takeable_o: int,
    x_to_move: bool,
    small: int,
    local: int,
) -> tuple[int, int, int, int, int, int, int, int]:
    """:func:`game.ultimate.apply_move`, keeping the small boards each side can still count in a
    line up to date (only the board played in changes): ``(x, o, won_x, won_o, closed, forced,
    takeable_x, takeable_o)``."""
    shift = small * 9
    board_bit = 1 << small
    if x_to_move:
        x |= 1 << (shift + local)
        marks = x >> shift & FULL_SMALL
        if HAS_LINE[marks]:
            won_x |= board_bit
            closed |= board_bit
            takeable_o &= ~board_bit
        elif (marks | o >> shift) & FULL_SMALL == FULL_SMALL:
            closed |= board_bit
            takeable_x &= ~board_bit
            takeable_o &= ~board_bit
        elif not HAS_FREE_LINE[marks]:
            takeable_o &= ~board_bit
    else:
        o |= 1 << (shift + local)
        marks = o >> shift & FULL_SMALL
        if HAS_LINE[marks]:
            won_o |= board_bit
            closed |= board_bit
            takeable_x &= ~board_bit
        elif (marks | x >> shift) & FULL_SMALL == FULL_SMALL:
            closed |= board_bit
            takeable_x &= ~board_bit
            takeable_o &= ~board_bit
        elif not HAS_FREE_LINE[marks]:
            takeable_x &= ~board_bit
    forced = -1 if closed >> local & 1 else local
    return x, o, won_x, won_o, closed, forced, takeable_x, takeable_o


class UltimateAnalysis(NamedTuple):
    """What a search's ``analyse`` found (:meth:`UltimateMcts.analyse`,
    :meth:`UltimateMinimax.analyse`): the best move (a grid cell) and its score for the side to
    move. The score is a forced result the search proved, :data:`WIN_SCORE` less the plies to the
    end (a win; the negative, a loss; see :func:`forced_result`), or otherwise in the
    evaluation's points: about 25 a small board won, 70 more for two in a line of small boards
    whose third is still open (the alpha-beta search's evaluation at its horizon; the tree
    search's win chance, through the inverse of its playouts' logistic curve)."""

    move: int
    score: int


def forced_result(score: int) -> int:
    """+1 when ``score`` (for a side) is a win the search proved, -1 a proven loss, else 0."""
    if score >= WIN_SCORE - _MOST_PLIES:
        return 1
    if score <= _MOST_PLIES - WIN_SCORE:
        return -1
    return 0


def plies_to_end(score: int) -> int | None:
    """How many plies (moves by either side) a proven result ``score`` takes, else None."""
    return WIN_SCORE - abs(score) if forced_result(score) else None


class _OutOfBudget(Exception):
    """Raised inside the search when its budget is spent: the deepest finished iteration's
    move stands."""


class UltimateMinimax:
    """The alpha-beta search the ``minimax`` level was until the tree search beat it (issue 39):
    a negamax search with a transposition table, deepened one ply at a time until ``budget`` (by
    default :class:`SearchBudget`'s seconds a move) is spent; the move of the deepest finished
    search is played. A position where no line of small boards can be completed any more is a
    draw, as on the board. The first two plies are always searched in full, whatever the budget,
    so it never misses a win in one and never leaves a loss in one it can prevent. Holds the
    calling thread: call it off an event loop.

    ``clock`` is what the budget's seconds are measured on: wall time by default, as a player
    waiting for a move sees it; a benchmark may pass :func:`time.thread_time` so that a loaded
    machine does not cut one side's moves short."""

    name = "alpha-beta"

    def __init__(
        self,
        rng: random.Random | None = None,
        budget: SearchBudget | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self._rng = rng or random.Random()
        self._budget = budget or SearchBudget()
        self._clock = clock
        self._table: dict[tuple[int, int, int], tuple[int, int, int, int]] = {}
        self._nodes = 0
        self._deadline = 0.0
        self._node_limit = 0
        self._checked_budget = False
        self.last_depth = 0

    def choose(self, board: UltimateBoard) -> int:
        moves = _require_moves(board)
        if len(moves) == 1:
            self.last_depth = 0
            return moves[0]
        return self.analyse(board).move

    def analyse(self, board: UltimateBoard) -> UltimateAnalysis:
        """The search's best move in ``board`` (not over) and its score for the side to move,
        within the budget; searched even when only one move is legal."""
        moves = _require_moves(board)
        x, o, won_x, won_o, closed, _ = board.masks
        takeable_x = takeable_boards(o, won_x, closed)
        takeable_o = takeable_boards(x, won_o, closed)
        x_to_move = board.turn is Mark.X
        root = [(SMALL_OF[cell], LOCAL_OF[cell]) for cell in moves]
        self._rng.shuffle(root)  # equally rated moves: the first found is played
        self._table.clear()
        self._nodes = 0
        budget = self._budget
        started = self._clock()
        self._deadline = started + budget.seconds if budget.seconds is not None else float("inf")
        self._node_limit = budget.nodes if budget.nodes is not None else -1
        best = root[0]
        best_value = 0
        self.last_depth = 0
        for depth in range(1, max(budget.max_depth, 2) + 1):
            # The first two plies finish whatever the budget (a win in one, a loss in one).
            self._checked_budget = depth > 2
            try:
                value, found = self._root(
                    (x, o, won_x, won_o, closed, takeable_x, takeable_o), x_to_move, root, depth
                )
            except _OutOfBudget:
                break
            best, best_value = found, value
            self.last_depth = depth
            root.remove(found)
            root.insert(0, found)
            if forced_result(value) or depth >= 81 - board.move_count:
                break  # a forced result, or the whole game searched: deeper changes nothing
        return UltimateAnalysis(GRID_CELL[best[0]][best[1]], best_value)

    def _root(
        self,
        state: tuple[int, int, int, int, int, int, int],
        x_to_move: bool,
        root: list[tuple[int, int]],
        depth: int,
    ) -> tuple[int, tuple[int, int]]:
        x, o, won_x, won_o, closed, takeable_x, takeable_o = state
        alpha, beta = -_WIN - 1, _WIN + 1
        best = root[0]
        for small, local in root:
            value = -self._negamax(
                *_play(x, o, won_x, won_o, closed, takeable_x, takeable_o, x_to_move, small, local),
                not x_to_move,
                small,
                depth - 1,
                1,
                -beta,
                -alpha,
            )
            if value > alpha:
                alpha, best = value, (small, local)
        return alpha, best

    def _negamax(
        self,
        x: int,
        o: int,
        won_x: int,
        won_o: int,
        closed: int,
        forced: int,
        takeable_x: int,
        takeable_o: int,
        x_to_move: bool,
        last_small: int,
        depth: int,
        ply: int,
        alpha: int,
        beta: int,
    ) -> int:
        self._nodes += 1
        if (
            self._checked_budget
            and self._nodes % _CLOCK_EVERY == 0
            and (0 <= self._node_limit <= self._nodes or self._clock() > self._deadline)
        ):
            raise _OutOfBudget
        # The side that just moved (not the side to move) may have won, on the board it played.
        won_last = won_o if x_to_move else won_x
        if won_last >> last_small & 1 and HAS_LINE[won_last]:
            return ply - _WIN
        # Drawn: no line of small boards can be completed any more (every board closed, too).
        if not HAS_LINE[takeable_x] and not HAS_LINE[takeable_o]:
            return 0
        if depth == 0:
            return _evaluate(x, o, won_x, won_o, closed, forced, x_to_move, takeable_x, takeable_o)
        key = (x, o, forced)
        entry = self._table.get(key)
        first = -1
        if entry is not None:
            entry_depth, entry_value, entry_kind, first = entry
            if entry_depth >= depth:
                if entry_kind == 0:
                    return entry_value
                if entry_kind > 0 and entry_value >= beta:
                    return entry_value
                if entry_kind < 0 and entry_value <= alpha:
                    return entry_value
        moves = _ordered_moves(x, o, closed, forced, x_to_move, first)
        original_alpha = alpha
        best_value = -_WIN - 1
        best_move = moves[0]
        for move in moves:
            small, local = divmod(move, 9)
            value = -self._negamax(
                *_play(x, o, won_x, won_o, closed, takeable_x, takeable_o, x_to_move, small, local),
                not x_to_move,
                small,
                depth - 1,
                ply + 1,
                -beta,
                -alpha,
            )
            if value > best_value:
                best_value, best_move = value, move
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        break
        if best_value <= original_alpha:
            kind = -1  # an upper bound
        elif best_value >= beta:
            kind = 1  # a lower bound
        else:
            kind = 0
        self._table[key] = (depth, best_value, kind, best_move)
        return best_value


def _ordered_moves(
    x: int, o: int, closed: int, forced: int, x_to_move: bool, first: int
) -> list[int]:
    """The legal moves as ``small * 9 + local``: ``first`` (the table's best), then those that
    win a small board, then those that send the opponent to a board of its own choice last."""
    taken = x | o
    mine = x if x_to_move else o
    smalls = range(9) if forced < 0 else (forced,)
    winning: list[int] = []
    plain: list[int] = []
    freeing: list[int] = []
    for small in smalls:
        if closed >> small & 1:
            continue
        shift = small * 9
        free = ~taken >> shift & FULL_SMALL
        my_marks = mine >> shift & FULL_SMALL
        while free:
            low = free & -free
            free ^= low
            local = low.bit_length() - 1
            move = shift + local
            if move == first:
                continue
            if HAS_LINE[my_marks | low]:
                winning.append(move)
            elif closed >> local & 1 or local == small:
                freeing.append(move)  # closed, or about to be (a guess): a free choice
            else:
                plain.append(move)
    ordered = [first] if first >= 0 else []
    return ordered + winning + plain + freeing


# -- the strongest: Monte Carlo tree search ---------------------------------------------------
#
# UCT (UCB1 over each node's children, the most visited root move played) with what knowledge
# helped in trial matches against the alpha-beta search above (bench/README.md):
#
# - the early draw: a position where no line of small boards can be completed any more is a
#   draw, as on the board;
# - playouts by the ``casual`` level's rules (win a small board if possible, else block one,
#   else any move), cut off after PLAYOUT_PLIES plies where the alpha-beta search's evaluation,
#   squashed into a win chance, scores the position;
# - an MCTS-Solver: a game won or lost at a node is proven, and so is a node whose side to move
#   can win at once; proofs climb the tree (a move that wins the game is always played, one
#   that lets the opponent win at once never when another does not).

# How far a playout goes before the evaluation scores it, and how its points become a win chance
# (a logistic curve: 60 points, about two small boards, is a 73% chance).
PLAYOUT_PLIES = 4
EVALUATION_SCALE = 60.0
# UCB1's exploration constant, for results in 0..1 (tried: 0.15, 0.25, 0.4, 1.0).
EXPLORATION = 0.25
# How often (in iterations) the search looks at the clock.
_ITERATIONS_A_CLOCK = 16

# The state of a position, as :func:`_play` keeps it: (x, o, won_x, won_o, closed, forced,
# takeable_x, takeable_o).
_State = tuple[int, int, int, int, int, int, int, int]

# The cells (9-bit) of a small board that complete a line for a side holding the 9-bit ``mine``
# there, taken or not.
_COMPLETING = tuple(
    sum(1 << local for local in range(9) if HAS_LINE[mine | 1 << local] and not mine >> local & 1)
    for mine in range(512)
)
# The set bits of every 9-bit mask, as cell numbers.
_BITS = tuple(tuple(local for local in range(9) if mask >> local & 1) for mask in range(512))

# Results, for the side that moved into a node.
_WON, _DRAWN, _LOST = 1.0, 0.5, 0.0


class _Node:
    """A position in the tree. ``score`` sums the results of the playouts through it for the side
    that moved into it; ``proven`` is that side's result once proven, ``plies`` how many plies
    from here to the end the proof takes."""

    __slots__ = (
        "children",
        "move",
        "plies",
        "proven",
        "score",
        "state",
        "untried",
        "visits",
        "x_to_move",
    )

    def __init__(self, state: _State, x_to_move: bool, move: int) -> None:
        self.state = state
        self.x_to_move = x_to_move
        self.move = move  # small * 9 + local, -1 at the root
        self.untried: list[int] | None = None  # the moves not expanded yet, once listed
        self.children: list[_Node] = []
        self.visits = 0
        self.score = 0.0
        self.proven: float | None = None
        self.plies = 0


def _moves(state: _State) -> list[int]:
    x, o, _, _, closed, forced, _, _ = state
    taken = x | o
    smalls = range(9) if forced < 0 else (forced,)
    return [
        small * 9 + local
        for small in smalls
        if not closed >> small & 1
        for local in _BITS[~taken >> (small * 9) & FULL_SMALL]
    ]


def _result(state: _State, mover_is_x: bool, small: int) -> float | None:
    """The mover's result if the game ended with its move in ``small``, else None."""
    _, _, won_x, won_o, _, _, takeable_x, takeable_o = state
    won = won_x if mover_is_x else won_o
    if won >> small & 1 and HAS_LINE[won]:
        return _WON
    if not HAS_LINE[takeable_x] and not HAS_LINE[takeable_o]:
        return _DRAWN
    return None


def _winning_move(state: _State, x_to_move: bool) -> int:
    """A move (``small * 9 + local``) with which the side to move wins the game at once, or -1."""
    x, o, won_x, won_o, closed, forced, _, _ = state
    mine, won = (x, won_x) if x_to_move else (o, won_o)
    taken = x | o
    for small in range(9) if forced < 0 else (forced,):
        if closed >> small & 1 or not HAS_LINE[won | 1 << small]:
            continue
        shift = small * 9
        cells = _COMPLETING[mine >> shift & FULL_SMALL] & ~taken >> shift
        if cells:
            return shift + _BITS[cells & FULL_SMALL][0]
    return -1


class UltimateMcts:
    """The strongest, the ``minimax`` level: a Monte Carlo tree search (see above) within
    ``budget``, :class:`SearchBudget`'s seconds a move by default (on ``clock``: wall time, or
    :func:`time.thread_time` for a benchmark on a loaded machine), or its ``nodes``, here the
    number of iterations (one playout each): deterministic for a given rng. A move that wins the
    game at once is played without searching. Holds the calling thread: call it off an event
    loop."""

    # The level's name, whatever the search (issue 39: the alpha-beta search it replaced lost
    # to it, bench/README.md).
    name = "minimax"

    def __init__(
        self,
        rng: random.Random | None = None,
        budget: SearchBudget | None = None,
        clock: Callable[[], float] = time.perf_counter,
        exploration: float = EXPLORATION,
        playout_plies: int = PLAYOUT_PLIES,
    ) -> None:
        self._rng = rng or random.Random()
        self._budget = budget or SearchBudget()
        self._clock = clock
        self._exploration = exploration
        self._playout_plies = playout_plies
        self.last_iterations = 0

    def choose(self, board: UltimateBoard) -> int:
        moves = _require_moves(board)
        if len(moves) == 1:
            return moves[0]
        return self.analyse(board).move

    def analyse(self, board: UltimateBoard) -> UltimateAnalysis:
        """The search's move in ``board`` (not over) and its score for the side to move: a result
        the solver proved, or the most visited move's win chance as evaluation points (the
        inverse of the playouts' logistic curve); searched even when only one move is legal."""
        _require_moves(board)
        x, o, won_x, won_o, closed, forced = board.masks
        state = (
            x,
            o,
            won_x,
            won_o,
            closed,
            forced,
            takeable_boards(o, won_x, closed),
            takeable_boards(x, won_o, closed),
        )
        winning = _winning_move(state, board.turn is Mark.X)
        if winning >= 0:
            self.last_iterations = 0
            return UltimateAnalysis(GRID_CELL[winning // 9][winning % 9], _WIN - 1)
        root = _Node(state, board.turn is Mark.X, -1)
        budget = self._budget
        deadline = self._clock() + budget.seconds if budget.seconds is not None else math.inf
        limit = budget.nodes if budget.nodes is not None else -1
        iterations = 0
        while root.proven is None and iterations != limit:
            # The clock never stops the search before every move has been tried once: a move
            # that lets the opponent win at once is proven lost as it is tried, so even a
            # starved worker on a loaded machine never plays one it could avoid.
            if (
                iterations % _ITERATIONS_A_CLOCK == 0
                and root.untried == []
                and self._clock() > deadline
            ):
                break
            iterations += 1
            self._iterate(root)
        self.last_iterations = iterations
        best = self._best_child(root)
        return UltimateAnalysis(GRID_CELL[best.move // 9][best.move % 9], _mcts_score(best))

    @staticmethod
    def _best_child(root: _Node) -> _Node:
        children = root.children
        for child in children:
            if child.proven == _WON:
                return child
        alive = [child for child in children if child.proven != _LOST] or children
        return max(alive, key=lambda child: (child.visits, child.score))

    def _iterate(self, root: _Node) -> None:
        node = root
        path = [root]
        exploration = self._exploration
        # Selection: down the fully expanded nodes by UCB1, past proven losses for the mover.
        while node.proven is None and node.untried is not None and not node.untried:
            log_visits = math.log(node.visits)
            chosen = None
            chosen_value = -1.0
            for child in node.children:
                if child.proven == _LOST:
                    continue
                value = child.score / child.visits + exploration * math.sqrt(
                    log_visits / child.visits
                )
                if value > chosen_value:
                    chosen, chosen_value = child, value
            if chosen is None:
                break  # every move loses: the node is proven below
            node = chosen
            path.append(node)
        # Expansion: one new child.
        if node.proven is None:
            if node.untried is None:
                node.untried = _moves(node.state)
                self._rng.shuffle(node.untried)
            if node.untried:
                move = node.untried.pop()
                small, local = divmod(move, 9)
                x, o, won_x, won_o, closed, _, takeable_x, takeable_o = node.state
                after = _play(
                    x, o, won_x, won_o, closed, takeable_x, takeable_o, node.x_to_move, small, local
                )
                child = _Node(after, not node.x_to_move, move)
                child.proven = _result(after, node.x_to_move, small)
                if child.proven is None and _winning_move(after, child.x_to_move) >= 0:
                    child.proven = _LOST  # the side to move there wins at once
                    child.plies = 1
                node.children.append(child)
                node = child
                path.append(node)
        value = node.proven if node.proven is not None else self._playout(node)
        for visited in reversed(path):
            visited.visits += 1
            visited.score += value
            value = 1.0 - value
        # Proofs climb: a child won by the side to move proves a loss for the side that moved
        # in; every child proven, the best of them decides.
        for visited in reversed(path):
            if visited.proven is not None or visited.untried is None:
                continue
            results = [child.proven for child in visited.children]
            if _WON in results:
                visited.proven = _LOST
                visited.plies = 1 + min(
                    child.plies for child in visited.children if child.proven == _WON
                )
            elif not visited.untried and None not in results:
                visited.proven = 1.0 - max(result for result in results if result is not None)
                visited.plies = 1 + max(child.plies for child in visited.children)
            else:
                break

    def _free_choice(self, mine: int, theirs: int, taken: int, closed: int) -> int:
        """A ``casual`` move in any open board: one that wins a small board, else one that
        blocks one, else any."""
        open_boards = [small for small in range(9) if not closed >> small & 1]
        for side in (mine, theirs):
            urgent = [
                small * 9 + local
                for small in open_boards
                for local in _BITS[
                    _COMPLETING[side >> (small * 9) & FULL_SMALL] & ~taken >> (small * 9)
                ]
            ]
            if urgent:
                return self._rng.choice(urgent)
        return self._rng.choice(
            [
                small * 9 + local
                for small in open_boards
                for local in _BITS[~taken >> (small * 9) & FULL_SMALL]
            ]
        )

    def _playout(self, node: _Node) -> float:
        """A ``casual`` playout from ``node``, cut off by the evaluation: the result for the
        side that moved into ``node``."""
        x, o, won_x, won_o, closed, forced, takeable_x, takeable_o = node.state
        x_to_move = node.x_to_move
        for_x = not x_to_move  # the side the result is for
        rng = self._rng
        for _ in range(self._playout_plies):
            mine, theirs = (x, o) if x_to_move else (o, x)
            taken = x | o
            if forced >= 0:
                shift = forced * 9
                free = ~taken >> shift & FULL_SMALL
                cells = (
                    _COMPLETING[mine >> shift & FULL_SMALL] & free
                    or _COMPLETING[theirs >> shift & FULL_SMALL] & free
                    or free
                )
                move = shift + rng.choice(_BITS[cells])
            else:
                move = self._free_choice(mine, theirs, taken, closed)
            small, local = divmod(move, 9)
            x, o, won_x, won_o, closed, forced, takeable_x, takeable_o = _play(
                x, o, won_x, won_o, closed, takeable_x, takeable_o, x_to_move, small, local
            )
            won = won_x if x_to_move else won_o
            if won >> small & 1 and HAS_LINE[won]:
                return _WON if x_to_move == for_x else _LOST
            if not HAS_LINE[takeable_x] and not HAS_LINE[takeable_o]:
                return _DRAWN
            x_to_move = not x_to_move
        points = _evaluate(x, o, won_x, won_o, closed, forced, x_to_move, takeable_x, takeable_o)
        chance = 1.0 / (1.0 + math.exp(-points / EVALUATION_SCALE))  # for the side to move
        return chance if x_to_move == for_x else 1.0 - chance


def _mcts_score(chosen: _Node) -> int:
    """The score, for the side to move at the root, of its chosen child ``chosen``."""
    if chosen.proven is not None and chosen.proven != _DRAWN:
        plies = _WIN - 1 - chosen.plies
        return plies if chosen.proven == _WON else -plies
    if chosen.proven == _DRAWN:
        return 0
    chance = min(max(chosen.score / chosen.visits, _SURE_CHANCE_OFF), 1 - _SURE_CHANCE_OFF)
    return round(EVALUATION_SCALE * math.log(chance / (1 - chance)))


# A win chance is kept this far from 0 and 1 when turned into points (about 410 at most): the
# playouts prove nothing.
_SURE_CHANCE_OFF = 0.001


# -- lookup ----------------------------------------------------------------------------------

ULTIMATE_STRATEGIES: dict[
    str, type[UltimateRandom | UltimateCasual | UltimateSmart | UltimateMcts]
] = {
    "random": UltimateRandom,
    "casual": UltimateCasual,
    "smart": UltimateSmart,
    "minimax": UltimateMcts,
}


def get_ultimate_strategy(
    name: str, rng: random.Random | None = None, budget: SearchBudget | None = None
) -> UltimateStrategy:
    """The ultimate player called ``name`` (the levels of :mod:`game.ai`, weakest first);
    ``budget`` bounds what ``minimax`` may spend a move (the others ignore it).

    >>> get_ultimate_strategy("best")
    Traceback (most recent call last):
    ...
    ValueError: unknown strategy "best": choose one of random, casual, smart, minimax
    """
    key = name.strip().lower()
    if key not in ULTIMATE_STRATEGIES:
        known = ", ".join(ULTIMATE_STRATEGIES)
        raise ValueError(f'unknown strategy "{name}": choose one of {known}')
    factory = ULTIMATE_STRATEGIES[key]
    if factory is UltimateMcts:
        return UltimateMcts(rng, budget)
    return factory(rng)


def play_ultimate_game(
    board: UltimateBoard, players: Mapping[Mark, UltimateStrategy]
) -> UltimateBoard:
    """The finished board after ``players`` play on from ``board``."""
    while not board.is_over:
        board = board.play(players[board.turn].choose(board))
    return board
