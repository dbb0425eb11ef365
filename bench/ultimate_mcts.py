"""A Monte Carlo tree search player for ultimate tic-tac-toe, measured against the alpha-beta
``minimax`` level (:class:`game.ultimate_ai.UltimateMinimax`) by ``python -m bench.ultimate
--mcts-games N``; see bench/README.md for the figures and why it was not kept.

UCT (UCB1 over each node's children, the most visited root move played) with what knowledge
helped in short trial matches against alpha-beta:

- the early draw: a position where no line of small boards can be completed any more is a draw,
  as on the board (:func:`game.ultimate.takeable_boards`);
- playouts by the ``casual`` level's rules (win a small board if possible, else block one, else
  any move), cut off after :data:`PLAYOUT_PLIES` plies where the alpha-beta level's evaluation,
  squashed into a win chance, scores the position;
- an MCTS-Solver: a game won or lost at a node is proven, and so is a node whose side to move
  can win at once; proofs climb the tree (a move that wins the game is always played, one that
  lets the opponent win at once never when another does not).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from game.board import Mark
from game.budget import SearchBudget
from game.ultimate import FULL_SMALL, GRID_CELL, HAS_LINE, UltimateBoard, takeable_boards
from game.ultimate_ai import _evaluate, _play, _require_moves

__all__ = ["PLAYOUT_PLIES", "UltimateMcts"]

# How far a playout goes before the evaluation scores it, and how its points become a win chance
# (a logistic curve: 60 points, about two small boards, is a 73% chance).
PLAYOUT_PLIES = 4
EVALUATION_SCALE = 60.0
# UCB1's exploration constant, for results in 0..1 (tried: 0.15, 0.25, 0.4, 1.0).
EXPLORATION = 0.25
# How often (in iterations) the search looks at the clock.
_CLOCK_EVERY = 16

# The state of a position, as the alpha-beta search keeps it: (x, o, won_x, won_o, closed,
# forced, takeable_x, takeable_o).
State = tuple[int, int, int, int, int, int, int, int]

# The cells (9-bit) of a small board that complete a line for a side holding the 9-bit ``mine``
# there, taken or not.
_COMPLETING = tuple(
    sum(1 << local for local in range(9) if HAS_LINE[mine | 1 << local] and not mine >> local & 1)
    for mine in range(512)
)
# The set bits of every 9-bit mask, as cell numbers.
_BITS = tuple(tuple(local for local in range(9) if mask >> local & 1) for mask in range(512))

_WIN, _DRAW, _LOSS = 1.0, 0.5, 0.0


class _Node:
    """A position in the tree. ``score`` sums the results of the playouts through it for the side
    that moved into it; ``proven`` is that side's result once proven."""

    __slots__ = ("children", "move", "proven", "score", "state", "untried", "visits", "x_to_move")

    def __init__(self, state: State, x_to_move: bool, move: int) -> None:
        self.state = state
        self.x_to_move = x_to_move
        self.move = move  # small * 9 + local, -1 at the root
        self.untried: list[int] | None = None  # the moves not expanded yet, once listed
        self.children: list[_Node] = []
        self.visits = 0
        self.score = 0.0
        self.proven: float | None = None


def _moves(state: State) -> list[int]:
    x, o, _, _, closed, forced, _, _ = state
    taken = x | o
    smalls = range(9) if forced < 0 else (forced,)
    return [
        small * 9 + local
        for small in smalls
        if not closed >> small & 1
        for local in _BITS[~taken >> (small * 9) & FULL_SMALL]
    ]


def _result(state: State, mover_is_x: bool, small: int) -> float | None:
    """The mover's result if the game ended with its move in ``small``, else None."""
    _, _, won_x, won_o, _, _, takeable_x, takeable_o = state
    won = won_x if mover_is_x else won_o
    if won >> small & 1 and HAS_LINE[won]:
        return _WIN
    if not HAS_LINE[takeable_x] and not HAS_LINE[takeable_o]:
        return _DRAW
    return None


def _winning_move(state: State, x_to_move: bool) -> int:
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
    """Monte Carlo tree search within ``budget``: seconds (on ``clock``) or ``nodes``, here the
    number of iterations (one playout each). Deterministic for a given rng and node budget."""

    name = "mcts"

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
            small, local = divmod(winning, 9)
            return GRID_CELL[small][local]
        root = _Node(state, board.turn is Mark.X, -1)
        budget = self._budget
        deadline = self._clock() + budget.seconds if budget.seconds is not None else math.inf
        limit = budget.nodes if budget.nodes is not None else -1
        iterations = 0
        while root.proven is None and iterations != limit:
            if iterations % _CLOCK_EVERY == 0 and iterations and self._clock() > deadline:
                break
            iterations += 1
            self._iterate(root)
        self.last_iterations = iterations
        best = self._best_child(root)
        small, local = divmod(best.move, 9)
        return GRID_CELL[small][local]

    @staticmethod
    def _best_child(root: _Node) -> _Node:
        children = root.children
        for child in children:
            if child.proven == _WIN:
                return child
        alive = [child for child in children if child.proven != _LOSS] or children
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
                if child.proven == _LOSS:
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
                    child.proven = _LOSS  # the side to move there wins at once
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
            if _WIN in results:
                visited.proven = _LOSS
            elif not visited.untried and None not in results:
                visited.proven = 1.0 - max(result for result in results if result is not None)
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
                return _WIN if x_to_move == for_x else _LOSS
            if not HAS_LINE[takeable_x] and not HAS_LINE[takeable_o]:
                return _DRAW
            x_to_move = not x_to_move
        points = _evaluate(x, o, won_x, won_o, closed, forced, x_to_move, takeable_x, takeable_o)
        chance = 1.0 / (1.0 + math.exp(-points / EVALUATION_SCALE))  # for the side to move
        return chance if x_to_move == for_x else 1.0 - chance
