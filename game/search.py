"""A game-tree search under a budget, for boards too large to solve in advance (5x5, 4 in a row).

Negamax with alpha-beta pruning, deepened one ply at a time until the budget runs out, over
bitmasks; a transposition table remembers each position's bound and best move between
iterations. Threats drive it: a side that can complete a line does, a single threat must be
blocked (and blocking does not use up depth, so forced lines are read to the end), and two
threats at once are a loss. Moves are tried best-first: the table's move, then by how much each
cell attacks and defends open lines. At the root, moves that a symmetry of the position makes
equivalent are searched once.

>>> from game.board import Board
>>> search = ThreatSearch(Board(5).geometry)
>>> search.choose(Board.from_string("XXX../OO.../O..../...../....."), SearchBudget(nodes=2000))
3
"""

from __future__ import annotations

import functools
import random
import time
from typing import NamedTuple

from game.board import Board, Geometry
from game.budget import DEFAULT_TIME_BUDGET, SearchBudget
from game.symmetry import cell_permutations

__all__ = ["DEFAULT_TIME_BUDGET", "SearchBudget", "SearchResult", "ThreatSearch"]

_WIN = 100_000
# A score this far from _WIN is a forced result found by the search, not a heuristic estimate.
_DECIDED = _WIN - 1_000
_EXACT, _LOWER, _UPPER = 0, 1, 2
# How often (in nodes) the clock is read: reading it costs about as much as a node.
_CLOCK_EVERY = 256


class _OutOfBudget(Exception):
    """Raised inside the search when the budget is spent; the last finished depth answers."""


# Named tuples rather than dataclasses: building a dataclass costs about a millisecond at import.
class SearchResult(NamedTuple):
    """A search's answer: the move, its score for the side to move, and what it cost."""

    move: int
    score: int
    depth: int
    nodes: int

    @property
    def forced_win(self) -> bool:
        return self.score >= _DECIDED

    @property
    def forced_loss(self) -> bool:
        return self.score <= -_DECIDED


class _Tables(NamedTuple):
    """What the search reads at every node, precomputed once per geometry."""

    line_masks: tuple[int, ...]
    cell_lines: tuple[tuple[int, ...], ...]  # the indices of the lines through each cell
    full_mask: int
    # Weights by how many marks a line holds (an open line, none of the other side's):
    # for the static evaluation, and for ordering moves by attack and by defence.
    value_of_count: tuple[int, ...]
    attack_of_count: tuple[int, ...]
    defence_of_count: tuple[int, ...]
    permutations: tuple[tuple[int, ...], ...]


@functools.cache
def _tables(geo: Geometry) -> _Tables:
    k = geo.line_length
    cell_lines = tuple(
        tuple(index for index, line in enumerate(geo.lines) if cell in line)
        for cell in range(geo.cell_count)
    )
    # Each further mark in an open line is worth several times the last: two lines of two are
    # worth less than one of three, which is one move from a threat.
    value = tuple(0 if count == 0 else 4 ** (count - 1) for count in range(k + 1))
    attack = tuple(1 + 6**count for count in range(k + 1))
    defence = tuple(1 + 5**count for count in range(k + 1))
    return _Tables(
        line_masks=geo.line_masks,
        cell_lines=cell_lines,
        full_mask=geo.full_mask,
        value_of_count=value,
        attack_of_count=attack,
        defence_of_count=defence,
        permutations=cell_permutations(geo.size),
    )


def cell_scores(geo: Geometry, mine: int, theirs: int) -> dict[int, int]:
    """How much each free cell attacks (extends open lines of ``mine``) and defends (cuts open
    lines of ``theirs``): the positional preference of ``smart`` and the search's move order."""
    tables = _tables(geo)
    line_worth = _line_worth(tables, mine, theirs)
    free = tables.full_mask & ~(mine | theirs)
    return {
        cell: sum(line_worth[line] for line in tables.cell_lines[cell])
        for cell in range(geo.cell_count)
        if free >> cell & 1
    }


def _line_worth(tables: _Tables, mine: int, theirs: int) -> list[int]:
    attack, defence = tables.attack_of_count, tables.defence_of_count
    worth = []
    for line in tables.line_masks:
        my_part, their_part = line & mine, line & theirs
        if my_part and their_part:
            worth.append(0)
        elif their_part:
            worth.append(defence[their_part.bit_count()])
        else:
            worth.append(attack[my_part.bit_count()])
    return worth


class ThreatSearch:
    """Chooses moves on one geometry by iterative-deepening alpha-beta (see the module)."""

    def __init__(self, geo: Geometry) -> None:
        self._geo = geo
        self._tables = _tables(geo)
        self._k = geo.line_length
        self._table: dict[int, tuple[int, int, int, int]] = {}
        self._nodes = 0
        self._node_limit: int | None = None
        self._deadline: float | None = None

    def choose(self, board: Board, budget: SearchBudget, rng: random.Random | None = None) -> int:
        return self.search(board, budget, rng).move

    def search(
        self, board: Board, budget: SearchBudget, rng: random.Random | None = None
    ) -> SearchResult:
        """The best move found within ``budget``; ``rng`` orders equally rated moves."""
        mine, theirs = self._start(board, budget)
        # The rules no search may override: win now, else block the threat.
        wins, threats = self._completions(mine, theirs), self._completions(theirs, mine)
        if wins or threats:
            cells = _cells(wins or threats)
            move = (rng or random).choice(cells) if len(cells) > 1 else cells[0]
            return SearchResult(move, _WIN if wins else 0, 0, 0)
        moves = self._root_moves(mine, theirs, rng)
        if len(moves) == 1:
            return SearchResult(moves[0], 0, 0, 0)
        return self._deepen(mine, theirs, moves, budget)

    def analyse(
        self, board: Board, budget: SearchBudget, rng: random.Random | None = None
    ) -> SearchResult:
        """What :meth:`search` finds, with the position's value as far as ``budget`` lets the
        search prove it: unlike :meth:`search`, which plays a forced block at once and scores it
        0, this searches what follows the block, and scores two threats as the loss they are.

        A score that is not a forced win or loss is the search's estimate, not a proof of a
        draw, unless ``depth`` reached the number of free cells (then it is exact).
        """
        mine, theirs = self._start(board, budget)
        wins, threats = self._completions(mine, theirs), self._completions(theirs, mine)
        if wins:
            return SearchResult(_cells(wins)[0], _WIN, 0, 0)
        if threats & (threats - 1):
            return SearchResult(_cells(threats)[0], -(_WIN - 1), 0, 0)
        if threats:
            return self._deepen(mine, theirs, _cells(threats), budget)
        return self._deepen(mine, theirs, self._root_moves(mine, theirs, rng), budget)

    def _start(self, board: Board, budget: SearchBudget) -> tuple[int, int]:
        """The side to move's cells and the other side's, with the budget set and the table
        emptied for a new search."""
        x_mask, o_mask = board.masks
        mine, theirs = (x_mask, o_mask) if board.turn.value == "X" else (o_mask, x_mask)
        if not self._tables.full_mask & ~(mine | theirs) or board.is_over:
            raise ValueError(f"no move to search: the game is over\n{board.grid()}")
        self._table = {}
        self._nodes = 0
        self._node_limit = budget.nodes
        self._deadline = None if budget.seconds is None else time.perf_counter() + budget.seconds
        return mine, theirs

    def _deepen(
        self, mine: int, theirs: int, moves: list[int], budget: SearchBudget
    ) -> SearchResult:
        """Iterative deepening over the root ``moves`` until a forced result, the end of the
        game or the end of the budget; the last depth finished answers."""
        free = self._tables.full_mask & ~(mine | theirs)
        best_move, best_score, finished_depth = moves[0], 0, 0
        for depth in range(1, min(budget.max_depth, free.bit_count()) + 1):
            try:
                score, move = self._root(mine, theirs, depth, moves)
            except _OutOfBudget:
                break
            best_move, best_score, finished_depth = move, score, depth
            moves.remove(move)
            moves.insert(0, move)  # the last best first: it sharpens the next iteration's bounds
            if abs(score) >= _DECIDED:
                break
        return SearchResult(best_move, best_score, finished_depth, self._nodes)

    def _root_moves(self, mine: int, theirs: int, rng: random.Random | None) -> list[int]:
        """The free cells, one per class of cells a symmetry of the position makes equivalent,
        best first by :func:`cell_scores` (shuffled first, so that ties vary)."""
        stones = (mine, theirs)
        keeping = [
            permutation
            for permutation in self._tables.permutations[1:]
            if tuple(_permuted(mask, permutation) for mask in stones) == stones
        ]
        scores = cell_scores(self._geo, mine, theirs)
        order = list(scores)
        (rng or random).shuffle(order)
        order.sort(key=scores.__getitem__, reverse=True)
        chosen: list[int] = []
        seen: set[int] = set()
        for cell in order:
            if cell in seen:
                continue
            chosen.append(cell)
            seen.update(permutation[cell] for permutation in keeping)
        return chosen

    def _root(self, mine: int, theirs: int, depth: int, moves: list[int]) -> tuple[int, int]:
        alpha, beta = -_WIN - 1, _WIN + 1
        best_move = moves[0]
        for cell in moves:
            score = -self._negamax(theirs, mine | 1 << cell, depth - 1, -beta, -alpha, 1)
            if score > alpha:
                alpha, best_move = score, cell
        return alpha, best_move

    def _completions(self, marks: int, blockers: int) -> int:
        """The free cells that would complete a line of ``marks``, as a mask."""
        k1 = self._k - 1
        cells = 0
        for line in self._tables.line_masks:
            if not line & blockers and (line & marks).bit_count() == k1:
                cells |= line & ~marks
        return cells

    def _negamax(self, mine: int, theirs: int, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The score of the position for ``mine`` (to move), within (alpha, beta)."""
        self._nodes += 1
        if self._nodes % _CLOCK_EVERY == 0:
            self._check_budget()
        tables = self._tables
        free = tables.full_mask & ~(mine | theirs)
        if not free:
            return 0
        k1 = self._k - 1
        value_of_count = tables.value_of_count
        my_wins = their_threats = 0
        evaluation = 0
        open_lines = False
        # One pass over the lines finds both sides' completing cells and the static score.
        for line in tables.line_masks:
            my_part = line & mine
            their_part = line & theirs
            if my_part:
                if their_part:
                    continue
                count = my_part.bit_count()
                if count == k1:
                    my_wins |= line & ~mine
                evaluation += value_of_count[count]
            elif their_part:
                count = their_part.bit_count()
                if count == k1:
                    their_threats |= line & ~theirs
                evaluation -= value_of_count[count]
            open_lines = True
        if my_wins:
            return _WIN - ply
        if not open_lines:
            return 0  # nobody can complete a line any more: a draw, however it is played out
        if their_threats:
            if their_threats & (their_threats - 1):
                return -(_WIN - ply - 1)  # two threats: one block, then they complete the other
            # A forced block: the only sensible move, searched without spending depth.
            cell = their_threats.bit_length() - 1
            return -self._negamax(theirs, mine | 1 << cell, depth, -beta, -alpha, ply + 1)
        if depth <= 0:
            return evaluation

        key = mine | theirs << tables.full_mask.bit_length()
        entry = self._table.get(key)
        table_move = -1
        if entry is not None:
            entry_depth, entry_score, entry_kind, table_move = entry
            if entry_depth >= depth:
                score = _from_table(entry_score, ply)
                if entry_kind == _EXACT:
                    return score
                if entry_kind == _LOWER and score >= beta:
                    return score
                if entry_kind == _UPPER and score <= alpha:
                    return score

        original_alpha = alpha
        best_score, best_move = -_WIN - 1, -1
        for cell in self._ordered_moves(mine, theirs, free, table_move):
            score = -self._negamax(theirs, mine | 1 << cell, depth - 1, -beta, -alpha, ply + 1)
            if score > best_score:
                best_score, best_move = score, cell
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        if best_score <= original_alpha:
            kind = _UPPER
        elif best_score >= beta:
            kind = _LOWER
        else:
            kind = _EXACT
        self._table[key] = (depth, _to_table(best_score, ply), kind, best_move)
        return best_score

    def _ordered_moves(self, mine: int, theirs: int, free: int, first: int) -> list[int]:
        tables = self._tables
        line_worth = _line_worth(tables, mine, theirs)
        cell_lines = tables.cell_lines
        scored = []
        rest = free
        while rest:
            bit = rest & -rest
            rest ^= bit
            cell = bit.bit_length() - 1
            worth = 0
            for line in cell_lines[cell]:
                worth += line_worth[line]
            scored.append((worth, cell))
        scored.sort(reverse=True)
        moves = [cell for _, cell in scored]
        if first >= 0:
            moves.remove(first)
            moves.insert(0, first)
        return moves

    def _check_budget(self) -> None:
        if self._node_limit is not None and self._nodes >= self._node_limit:
            raise _OutOfBudget
        if self._deadline is not None and time.perf_counter() >= self._deadline:
            raise _OutOfBudget


def _to_table(score: int, ply: int) -> int:
    """A forced result is stored as distance from this position, not from the root, so that it
    stays true wherever the position is met again."""
    if score >= _DECIDED:
        return score + ply
    if score <= -_DECIDED:
        return score - ply
    return score


def _from_table(score: int, ply: int) -> int:
    if score >= _DECIDED:
        return score - ply
    if score <= -_DECIDED:
        return score + ply
    return score


def _cells(mask: int) -> list[int]:
    return [cell for cell in range(mask.bit_length()) if mask >> cell & 1]


def _permuted(mask: int, permutation: tuple[int, ...]) -> int:
    image = 0
    for cell in _cells(mask):
        image |= 1 << permutation[cell]
    return image
