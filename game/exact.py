"""Exact values on any board, by a search with no budget: 5x5 (4 in a row) solved move by move.

:class:`ExactSolver` answers what a position is worth with perfect play on both sides (+1 the side
to move wins, 0 a draw, -1 it loses), and which moves keep that value, by negamax with alpha-beta
pruning over those three values alone (so every cut is a proof), without any depth limit. What
makes that affordable in pure Python:

- **Threat rules**, each a proof, not a heuristic: a side that can complete a line wins; two
  cells that would complete the opponent's lines are a loss; a single one must be blocked (the
  only move searched); a move that leaves two such cells of one's own, while the opponent has
  none, wins; so when the opponent has such a move, a move that neither makes a threat (which
  must be answered first) nor spoils every such fork loses, and is not searched.
- **Pairing strategies**: if disjoint pairs of free cells can be chosen, one inside each line
  still open to a side, that side cannot win (its opponent answers each move in a pair with
  the other cell), so its value is at most a draw. Late in the game this settles most
  positions at once.
- **Dead cells skipped**: a cell on no line still open to either side changes nothing but whose
  turn it is, and an extra mark never harms its owner, so such a move is never better than one
  on an open line (and when no line is open the game is a draw).
- **Bounds from open lines**: a side with no open line cannot win.
- **A transposition table** of each position's proven bounds, keyed by the position's canonical
  image under the board's eight symmetries while few marks are down (where most transpositions
  are), by the plain masks after that (where computing the images would cost more than it saves).
- **Moves ordered** by how much each cell attacks and defends open lines, and inside a search
  by how often each cell has refuted a move since the question began (the history heuristic:
  a cell that cut one line of play off tends to cut its neighbours off too).
- **Nothing a node's parent did done again**: a line holding both sides' marks is
  dropped for the rest of the search below; after a move made where no cell completed a line,
  the opponent's new threats can only lie on the lines through that move, looked at alone
  (a third of the nodes end there, on a threat); and the pass over the lines adds up the move
  ordering's worths as it counts their marks, every cell's in one integer.

From the empty 5x5 board the search proves the draw in about 0.2 s; a position of the first
few moves can take up to about a second (``python -m bench.engine`` measures them), which the
shipped opening book (:mod:`game.book5x5`) answers instead.

A won position is converted by the fastest win: the fewest moves of one's own against the
longest defence (:meth:`ExactSolver.moves_to_win`), found by a search of the forced wins within
1, 2, ... moves (no win in two without a fork, none before the emptiest open line could fill),
then the first move that wins that fast.

>>> from game.board import Board
>>> solver = ExactSolver(Board(5).geometry)
>>> solver.value(Board.from_string("XXX../OO.../O..../...../....."))  # X completes the row
1
>>> solver.value(Board.from_moves(["A5", "C1", "C4", "B4"], 5))  # after the blunder B4, O wins
1
"""

from __future__ import annotations

import functools
import random
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from game.board import Board, Geometry
from game.symmetry import BoardSymmetry

__all__ = ["CANONICAL_UP_TO", "TABLE_LIMIT", "ExactSolver", "solved_outcome"]

# Up to how many marks the table is keyed by the canonical image: past that, transpositions
# through a symmetry are rare and the eight images cost more than they save (measured on 5x5
# over the positions of the first three moves: 8 is about 15% faster than 11 or 14).
CANONICAL_UP_TO = 8
# A position's proven bounds (low, high) on its value, stored as one small integer.
_BOUNDS = tuple((low, high) for low in (-1, 0, 1) for high in (-1, 0, 1))
_CODE = {bounds: code for code, bounds in enumerate(_BOUNDS)}
# Move ordering: what a line holding n marks of the mover's only (attack) or of the opponent's
# only (defence) adds to each of its free cells; each further mark weighs several times more.
_ATTACK = tuple(1 + 6**count for count in range(10))
_DEFENCE = tuple(1 + 5**count for count in range(10))
# Inside a search, a cut-off made by a cell counts as much as 1/HISTORY_WEIGHT of a line-worth
# point in its ordering. Measured on 5x5 over the 996 positions of the first three moves (their
# values and minimax's replies'): 4.19 million nodes at 40 and 4.22 at 20, against 5.29 million
# ordered by line worths alone (8: 4.71; 300: 4.83). The counts start again with each question:
# kept over a run of questions they outweighed the lines (5.54 million at 100).
HISTORY_WEIGHT = 32
# By default the table is emptied when it holds this many positions, so memory stays bounded
# (about 60 MB); building the opening book allows more.
TABLE_LIMIT = 600_000


# struct's format of an unsigned integer of so many bytes.
_FIELD_FORMATS = {2: "H", 4: "I", 8: "Q"}


class _Tables(NamedTuple):
    """What the search reads at every node, precomputed once per geometry."""

    line_masks: tuple[int, ...]
    cell_lines: tuple[tuple[int, ...], ...]  # the masks of the lines through each cell
    # Move ordering adds up every cell's worth at once, in one integer holding a field of
    # 16 bits a cell (more if a cell's worth could need them), cell c's the c-th field from
    # the lowest: a line's vector holds its worth in the field of each of its cells, by line
    # and by how many marks of one side it holds (attack: the mover's, defence: the
    # opponent's; a line of neither: empty). unpack_worths reads the fields back from the
    # integer's vector_bytes bytes (little-endian), one per cell.
    attack_vectors: dict[int, tuple[int, ...]]
    defence_vectors: dict[int, tuple[int, ...]]
    empty_vectors: dict[int, int]
    unpack_worths: Callable[[bytes], tuple[int, ...]]
    vector_bytes: int
    cell_bits: int  # enough bits for a cell's index, below its worth in a sort key
    full_mask: int
    cell_count: int
    k: int
    symmetry: BoardSymmetry


@functools.cache
def _tables(geo: Geometry) -> _Tables:
    k = geo.line_length
    cell_lines = tuple(
        tuple(mask for mask in geo.line_masks if mask >> cell & 1) for cell in range(geo.cell_count)
    )
    most_lines = max(len(lines) for lines in cell_lines)
    highest_worth = max(2, *_ATTACK[: k + 1], *_DEFENCE[: k + 1])
    worth_bytes = next(
        size for size in (2, 4, 8) if (most_lines * highest_worth).bit_length() <= 8 * size
    )
    vectors = {
        mask: sum(1 << 8 * worth_bytes * cell for cell in _cells(mask)) for mask in geo.line_masks
    }
    unpack = struct.Struct(f"<{geo.cell_count}{_FIELD_FORMATS[worth_bytes]}").unpack
    return _Tables(
        line_masks=geo.line_masks,
        cell_lines=cell_lines,
        attack_vectors={
            mask: tuple(worth * vector for worth in _ATTACK[: k + 1])
            for mask, vector in vectors.items()
        },
        defence_vectors={
            mask: tuple(worth * vector for worth in _DEFENCE[: k + 1])
            for mask, vector in vectors.items()
        },
        empty_vectors={mask: 2 * vector for mask, vector in vectors.items()},
        unpack_worths=unpack,
        vector_bytes=worth_bytes * geo.cell_count,
        cell_bits=geo.cell_count.bit_length(),
        full_mask=geo.full_mask,
        cell_count=geo.cell_count,
        k=k,
        symmetry=BoardSymmetry(geo),
    )


def solved_outcome(board: Board) -> int | None:
    """The value of a finished game for the side that would move next (-1 once the other side
    has completed a line, 0 for a full board), or None while it goes on."""
    outcome = board.outcome()
    if outcome is None:
        return None
    return 0 if outcome.winner is None else -1


class _Scan(NamedTuple):
    """One pass over the lines from the side to move's point of view."""

    lines: list[int]  # the lines not yet holding marks of both sides: the only ones below too
    my_wins: int  # free cells that complete a line of mine
    their_threats: int  # free cells that complete a line of theirs
    live: int  # free cells on a line still open to either side
    my_lines: list[int]  # the free cells of each line still open to me (none of theirs)
    their_lines: list[int]
    my_fork: bool  # whether one move of mine would leave two cells completing lines of mine
    my_makers: int  # free cells where a move of mine makes a cell completing a line of mine
    their_pairs: list[int]  # the two free cells of each line with k - 2 of theirs, none mine
    worths: int  # every cell's worth for move ordering, in its field (see _Tables)


class ExactSolver:
    """Perfect play on one geometry (see the module). Keeps what it has proven between calls,
    so a game's positions, asked in turn, share the work; the facts stored are exact, so the
    solver may be shared (calls from several threads at once only duplicate work)."""

    def __init__(self, geo: Geometry, table_limit: int = TABLE_LIMIT) -> None:
        self._geo = geo
        self._table_limit = table_limit
        self._tables = _tables(geo)
        self._bounds: dict[int, int] = {}
        self._wins: dict[int, tuple[int, int]] = {}  # key: (longest refuted, shortest proven)
        # The cut-offs each cell made in this question (see HISTORY_WEIGHT): a heuristic only,
        # so questions from several threads at once may share it.
        self._cutoffs = [0] * self._tables.cell_count
        self.nodes = 0

    # -- answers -------------------------------------------------------------------------

    def value(self, board: Board) -> int:
        """+1, 0 or -1: what the side to move gets with perfect play (for a finished game, see
        :func:`solved_outcome`)."""
        self._check(board)
        finished = solved_outcome(board)
        if finished is not None:
            return finished
        self._new_question()
        return self._value(*self._split(board), -1, 1, self._tables.line_masks)

    def move_values(self, board: Board, moves: Iterable[int] | None = None) -> dict[int, int]:
        """The value for the side to move of each of ``moves`` (by default every legal move):
        what it gets after playing there."""
        self._check(board)
        mine, theirs = self._split(board)
        cells = board.legal_moves if moves is None else tuple(moves)
        scan_lines = self._tables.line_masks
        self._new_question()
        values = {}
        for cell in cells:
            if self._completes(mine, cell):
                values[cell] = 1
            else:
                values[cell] = -self._value(theirs, mine | 1 << cell, -1, 1, scan_lines)
        return values

    def best_moves(
        self, board: Board, rng: random.Random | None = None, fastest: bool = True
    ) -> tuple[int, int]:
        """The position's value and a move that keeps it: the first in :meth:`ordered_moves`
        (shuffled by ``rng`` among equally rated cells) that does; in a won position, unless
        ``fastest`` is False (a review needs only a move that keeps the win), the first of the
        fastest wins."""
        self._check(board)
        if board.is_over:
            raise ValueError(f"no move to choose: the game is over\n{board.grid()}")
        mine, theirs = self._split(board)
        scan = self._scan(mine, theirs, self._tables.line_masks)
        if scan.my_wins:
            return 1, _lowest(scan.my_wins, rng)
        order = self._root_order(mine, theirs, scan, rng)
        self._new_question()
        best, best_move = -2, order[0]
        for cell in order:
            # After the first move, each other one need only be tested against the best so far.
            alpha = max(best, -1)
            value = -self._value(theirs, mine | 1 << cell, -1, -alpha, scan.lines)
            if value > best:
                best, best_move = value, cell
                if best == 1:
                    break
        if best == 1 and fastest:
            return 1, self._fastest_win(mine, theirs, order)
        return best, best_move

    def moves_to_win(self, board: Board, won: bool = False) -> int | None:
        """How many moves of its own the side to move needs to complete a line against the
        longest defence (1: it completes one now), or None when it cannot force a win.
        ``won`` says the position is known to be won (by the opening book, say), so that its
        value is not proven again."""
        if not won and self.value(board) != 1:
            return None
        return self._moves_to_win(*self._split(board))

    def _moves_to_win(self, mine: int, theirs: int) -> int:
        """:meth:`moves_to_win` in a position proven won."""
        moves = 1
        while not self._wins_within(mine, theirs, moves, self._tables.line_masks):
            moves += 1
            if moves > self._tables.cell_count:
                raise AssertionError(f"a won position with no win found: {mine:#x} {theirs:#x}")
        return moves

    def is_fastest_win(self, board: Board, move: int) -> bool:
        """Whether ``move`` wins in as few moves as the position allows (False when the position
        is not won)."""
        fewest = self.moves_to_win(board)
        if fewest is None:
            return False
        mine, theirs = self._split(board)
        return self._wins_with(mine, theirs, move, fewest)

    def wins_within(self, board: Board, move: int, moves: int) -> bool:
        """Whether ``move`` completes a line within ``moves`` moves of the side to move's own
        (``move`` the first), however the opponent defends."""
        self._check(board)
        return self._wins_with(*self._split(board), move, moves)

    def fastest_wins(self, board: Board, moves: Iterable[int]) -> tuple[int, ...]:
        """Those of ``moves`` that win in the fewest moves of the side to move's, against the
        longest defence; none when none of them wins (``moves`` should hold a winning move:
        proving that none wins takes a search to the end of the game)."""
        mine, theirs = self._split(board)
        candidates = tuple(moves)
        limit = (self._tables.full_mask & ~(mine | theirs)).bit_count()
        for count in range(1, limit + 1):
            fastest = tuple(
                cell for cell in candidates if self._wins_with(mine, theirs, cell, count)
            )
            if fastest:
                return fastest
        return ()

    def ordered_moves(self, board: Board, rng: random.Random | None = None) -> list[int]:
        """The free cells on lines still open to either side, most promising first."""
        mine, theirs = self._split(board)
        return self._root_order(
            mine, theirs, self._scan(mine, theirs, self._tables.line_masks), rng
        )

    # -- the search ----------------------------------------------------------------------

    def _check(self, board: Board) -> None:
        geo = board.geometry
        if (geo.size, geo.line_length) != (self._geo.size, self._geo.line_length):
            raise ValueError(
                f"this solver is for {self._geo.size}x{self._geo.size} boards with "
                f"{self._geo.line_length} in a row, not {board.size}x{board.size} with "
                f"{board.line_length}"
            )

    def _new_question(self) -> None:
        self._cutoffs = [0] * self._tables.cell_count

    @staticmethod
    def _split(board: Board) -> tuple[int, int]:
        x_mask, o_mask = board.masks
        return (x_mask, o_mask) if board.turn.value == "X" else (o_mask, x_mask)

    def _scan(self, mine: int, theirs: int, lines: Sequence[int]) -> _Scan:
        """The pass over ``lines``, which hold every line still open to either side (a line
        holding marks of both sides stays so, so a node passes its open lines to its moves)."""
        tables = self._tables
        k1, k2 = tables.k - 1, tables.k - 2
        open_lines = []
        my_wins = their_threats = live = 0
        my_lines = []
        their_lines = []
        # A line with k - 2 of my marks and none of theirs: the cell its first free cell would
        # leave to complete it. Two different such cells from one move are a fork.
        completes: dict[int, int] = {}
        my_fork = False
        my_makers = 0
        their_pairs = []
        # Each line's worth for move ordering counts here, where its marks are counted anyway:
        # most positions scanned go on to order their moves.
        worths = 0
        attack_vectors = tables.attack_vectors
        defence_vectors = tables.defence_vectors
        for line in lines:
            my_part = line & mine
            their_part = line & theirs
            if my_part:
                if their_part:
                    continue
                count = my_part.bit_count()
                worths += attack_vectors[line][count]
                if count == k1:
                    my_wins |= line & ~mine
                elif count == k2:
                    empty = line & ~mine
                    my_makers |= empty
                    if not my_fork:
                        low = empty & -empty
                        high = empty ^ low
                        if completes.setdefault(low, high) != high:
                            my_fork = True
                        if completes.setdefault(high, low) != low:
                            my_fork = True
                my_lines.append(line & ~mine)
            elif their_part:
                count = their_part.bit_count()
                worths += defence_vectors[line][count]
                if count == k1:
                    their_threats |= line & ~theirs
                elif count == k2:
                    their_pairs.append(line & ~theirs)
                their_lines.append(line & ~theirs)
            else:
                worths += tables.empty_vectors[line]
                my_lines.append(line)
                their_lines.append(line)
            live |= line
            open_lines.append(line)
        free = tables.full_mask & ~(mine | theirs)
        return _Scan(
            open_lines,
            my_wins,
            their_threats,
            live & free,
            my_lines,
            their_lines,
            my_fork,
            my_makers,
            their_pairs,
            worths,
        )

    def _key(self, mine: int, theirs: int) -> int:
        tables = self._tables
        shift = tables.cell_count
        if (mine | theirs).bit_count() <= CANONICAL_UP_TO:
            symmetry = tables.symmetry
            return min(
                image_mine | image_theirs << shift
                for image_mine, image_theirs in zip(
                    symmetry.all_images(mine), symmetry.all_images(theirs), strict=True
                )
            )
        return mine | theirs << shift

    def _value(
        self, mine: int, theirs: int, alpha: int, beta: int, lines: Sequence[int], last: int = -1
    ) -> int:
        """The value for ``mine`` (to move) if it lies within (alpha, beta); else a bound on the
        far side of the window (fail-soft). ``lines``: those still open (see :meth:`_scan`).
        ``last``, when given, is the cell ``theirs`` just played, in a position where no cell
        completed a line of theirs, and none of mine but perhaps ``last`` (a block): so no cell
        completes a line of mine now, and those completing one of theirs lie on the lines
        through ``last``, found without the pass over every line (a third of the nodes end
        there)."""
        self.nodes += 1
        if last >= 0:
            threats = self._threats_through(theirs, mine, last)
            if threats:
                if threats & (threats - 1):
                    return -1
                return -self._value(
                    theirs, mine | threats, -beta, -alpha, lines, threats.bit_length() - 1
                )
            scan = self._scan(mine, theirs, lines)
        else:
            scan = self._scan(mine, theirs, lines)
            if scan.my_wins:
                return 1
            threats = scan.their_threats
            if threats:
                if threats & (threats - 1):
                    return -1
                return -self._value(
                    theirs, mine | threats, -beta, -alpha, scan.lines, threats.bit_length() - 1
                )
        if not scan.live:
            return 0
        if scan.my_fork:
            return 1
        low = -1 if scan.their_lines else 0
        high = 1 if scan.my_lines else 0
        key = self._key(mine, theirs)
        code = self._bounds.get(key)
        if code is not None:
            stored_low, stored_high = _BOUNDS[code]
            low, high = max(low, stored_low), min(high, stored_high)
        if low >= high or high <= alpha or low >= beta:
            return low if low >= beta or low >= high else high
        # A pairing strategy: if the opponent can answer each of our moves in a pair of cells
        # that leaves each of our open lines a cell short, we cannot win; and the other way.
        # Each is looked for only when it could cut or narrow the window.
        if high == 1 and beta > 0 and _pairable(scan.my_lines):
            high = 0
        if low == -1 and alpha < 0 and _pairable(scan.their_lines):
            low = 0
        if low >= high or high <= alpha or low >= beta:
            return low if low >= beta or low >= high else high
        alpha, beta = max(alpha, low), min(beta, high)
        window_alpha, window_beta = alpha, beta
        best = -1  # the value when every move loses to the opponent's fork (none to search)
        for cell in self._candidates(mine, theirs, scan):
            value = -self._value(theirs, mine | 1 << cell, -beta, -alpha, scan.lines, cell)
            if value > best:
                best = value
                if value > alpha:
                    alpha = value
                    if alpha >= beta:
                        self._cutoffs[cell] += 1
                        break
        if best <= window_alpha:
            high = best
        elif best >= window_beta:
            low = best
        else:
            low = high = best
        if len(self._bounds) >= self._table_limit:
            self._bounds.clear()
        self._bounds[key] = _CODE[low, high]
        return best

    def _threats_through(self, attacker: int, defender: int, cell: int) -> int:
        """The free cells completing a line of ``attacker``'s through ``cell``."""
        k1 = self._tables.k - 1
        threats = 0
        for line in self._tables.cell_lines[cell]:
            if not line & defender and (line & attacker).bit_count() == k1:
                threats |= line & ~attacker
        return threats

    def _candidates(self, mine: int, theirs: int, scan: _Scan) -> list[int]:
        """The moves worth searching, best first: the live cells, less those that lose at once
        to a fork. When the opponent has a move that would leave two cells completing its
        lines, a move of ours that neither makes a threat (which the opponent must answer
        first) nor spoils every such fork loses: the opponent forks and completes a line."""
        moves = self._ordered(scan.live, scan.worths, cutoffs=True)
        pairs = scan.their_pairs
        if len(pairs) < 2 or not _has_fork(pairs, 0):
            return moves
        makers = scan.my_makers
        return [cell for cell in moves if makers >> cell & 1 or not _has_fork(pairs, 1 << cell)]

    def _ordered(self, cells: int, worths: int, cutoffs: bool = False) -> list[int]:
        """``cells`` by their ``worths`` (a scan's: how much each attacks the mover's open lines,
        more the fuller, and defends against the opponent's), best first; with ``cutoffs``
        (inside a search, not at the root, whose order decides which of equal moves is played)
        the cut-offs each made in this question count too."""
        cell_bits = self._tables.cell_bits
        worth_of = self._cell_worths(worths)
        # Each cell's sort key: its worth, then the cell itself, so that equal cells come
        # highest first (measured: a few percent fewer nodes on 5x5 than lowest first).
        keys = []
        if cutoffs:
            made = self._cutoffs
            while cells:
                bit = cells & -cells
                cells ^= bit
                cell = bit.bit_length() - 1
                keys.append((worth_of[cell] * HISTORY_WEIGHT + made[cell]) << cell_bits | cell)
        else:
            while cells:
                bit = cells & -cells
                cells ^= bit
                cell = bit.bit_length() - 1
                keys.append(worth_of[cell] << cell_bits | cell)
        keys.sort(reverse=True)
        cell_mask = (1 << cell_bits) - 1
        return [key & cell_mask for key in keys]

    def _cell_worths(self, worths: int) -> tuple[int, ...]:
        """Each cell's worth, by cell, out of a scan's ``worths`` (see :class:`_Tables`)."""
        tables = self._tables
        return tables.unpack_worths(worths.to_bytes(tables.vector_bytes, "little"))

    def _root_order(
        self, mine: int, theirs: int, scan: _Scan, rng: random.Random | None
    ) -> list[int]:
        """The root's candidate moves, best first, equally rated cells in ``rng``'s order: the
        block when one cell would complete a line of the opponent's, the live cells otherwise
        (every free cell once none is live)."""
        cells = scan.their_threats or scan.live or self._tables.full_mask & ~(mine | theirs)
        ordered = self._ordered(cells, scan.worths)
        if rng is None or len(ordered) < 2:
            return ordered
        worth = self._cell_worths(scan.worths)
        rng.shuffle(ordered)
        ordered.sort(key=worth.__getitem__, reverse=True)  # stable: ties keep the shuffle
        return ordered

    # -- the fastest win -----------------------------------------------------------------

    def _fastest_win(self, mine: int, theirs: int, order: list[int]) -> int:
        """The first move in ``order`` that wins fastest, in a position proven won: how fast
        first (a search of the wins within 1, 2, ... moves, which stops at the first found),
        then which move."""
        fewest = self._moves_to_win(mine, theirs)
        return next(cell for cell in order if self._wins_with(mine, theirs, cell, fewest))

    def _completes(self, marks: int, cell: int) -> bool:
        """Whether a mark on ``cell`` completes a line of ``marks``: the searches below take a
        position where the side that just moved has won for one still going, so the answers
        above ask this first."""
        with_cell = marks | 1 << cell
        return any(line & with_cell == line for line in self._tables.cell_lines[cell])

    def _wins_with(self, mine: int, theirs: int, cell: int, moves: int) -> bool:
        """Whether ``mine`` playing ``cell`` then completes a line within ``moves`` moves of its
        own in all (``cell`` the first)."""
        if self._completes(mine, cell):
            return True
        return not self._holds(theirs, mine | 1 << cell, moves - 1, self._tables.line_masks)

    def _wins_within(
        self, mine: int, theirs: int, moves: int, lines: Sequence[int], last: int = -1
    ) -> bool:
        """Whether ``mine``, to move, can complete a line within ``moves`` moves of its own,
        however the opponent defends. ``lines`` and ``last``: as for :meth:`_value`."""
        if moves <= 0:
            return False
        if last >= 0:
            if moves == 1:  # no cell completes a line of mine (see _value)
                return False
            threats = self._threats_through(theirs, mine, last)
            if threats:
                if threats & (threats - 1):
                    return False
                return not self._holds(
                    theirs, mine | threats, moves - 1, lines, threats.bit_length() - 1
                )
            scan = self._scan(mine, theirs, lines)
            if not scan.my_lines:
                return False
        else:
            scan = self._scan(mine, theirs, lines)
            if scan.my_wins:
                return True
            if moves == 1 or not scan.my_lines:
                return False
            threats = scan.their_threats
            if threats:
                if threats & (threats - 1):
                    return False
                return not self._holds(
                    theirs, mine | threats, moves - 1, scan.lines, threats.bit_length() - 1
                )
        if scan.my_fork:
            return True
        # With no fork, the opponent blocks any single threat: no win in two. Nor before the
        # emptiest of our open lines could fill, nor if the opponent can pair them all.
        if moves == 2 or min(map(int.bit_count, scan.my_lines)) > moves:
            return False
        if _pairable(scan.my_lines):
            return False
        key = self._key(mine, theirs)
        refuted, proven = self._wins.get(key, (0, 1 << 30))
        if moves <= refuted:
            return False
        if moves >= proven:
            return True
        found = False
        for cell in self._ordered(scan.live, scan.worths, cutoffs=True):
            if not self._holds(theirs, mine | 1 << cell, moves - 1, scan.lines, cell):
                found = True
                break
        if found:
            proven = moves
        else:
            refuted = moves
        if len(self._wins) >= self._table_limit:
            self._wins.clear()
        self._wins[key] = (refuted, proven)
        return found

    def _holds(
        self, defender: int, attacker: int, moves: int, lines: Sequence[int], last: int = -1
    ) -> bool:
        """Whether ``defender``, to move, stops ``attacker`` completing a line within ``moves``
        more moves of the attacker's (completing a line of its own stops it too). ``lines``
        and ``last`` (the attacker's last move): as for :meth:`_value`."""
        if moves <= 0:
            return True
        # With no cell completing a line of the attacker's, it needs two moves at least, and as
        # many as the emptiest of its open lines has free cells.
        if last >= 0:
            threats = self._threats_through(attacker, defender, last)
            if threats:
                if threats & (threats - 1):
                    return False
                return not self._wins_within(
                    attacker, defender | threats, moves, lines, threats.bit_length() - 1
                )
            if moves == 1:
                return True
            scan = self._scan(defender, attacker, lines)
        else:
            scan = self._scan(defender, attacker, lines)
            if scan.my_wins:
                return True
            threats = scan.their_threats
            if threats:
                if threats & (threats - 1):
                    return False
                return not self._wins_within(
                    attacker, defender | threats, moves, scan.lines, threats.bit_length() - 1
                )
            if moves == 1:
                return True
        if not scan.their_lines:
            return True
        if min(map(int.bit_count, scan.their_lines)) > moves or _pairable(scan.their_lines):
            return True
        return any(
            not self._wins_within(attacker, defender | 1 << cell, moves, scan.lines, cell)
            for cell in self._candidates(defender, attacker, scan)
        )


# Past this many open lines a pairing is rarely there and costly to look for.
_PAIRING_LINES = 10
# Whether each set of lines (their free cells, in line order) can be paired: the same sets come
# back across positions and searches. Plain facts, so shared by every solver and thread; kept
# small (about 7 MB at most, measured) since it lives as long as the process: 200,000 would
# save about 10% of a long search's time for about 60 MB.
_PAIRINGS: dict[tuple[int, ...], bool] = {}
_PAIRINGS_KEPT = 20_000


def _pairable(lines: list[int]) -> bool:
    """Whether disjoint pairs of free cells can be chosen so that each line (its free cells,
    at least two) holds one pair: then whoever owns those lines cannot complete any, since the
    other side answers a move in a pair with its partner."""
    if len(lines) > _PAIRING_LINES:
        return False
    key = tuple(lines)
    found = _PAIRINGS.get(key)
    if found is None:
        if len(_PAIRINGS) >= _PAIRINGS_KEPT:
            _PAIRINGS.clear()
        found = _PAIRINGS[key] = not lines or _pair_from(lines)
    return found


def _pair_from(lines: list[int]) -> bool:
    """Pair ``lines`` (at least one; of each, the cells no pair chosen so far takes): the line
    with the fewest cells first (two: its pair is forced; fewer: no pairing). A line that
    holds a pair chosen is done; one that holds one of its cells loses that cell."""
    fewest = lines[0]
    fewest_count = fewest.bit_count()
    for line in lines:
        count = line.bit_count()
        if count < fewest_count:
            fewest, fewest_count = line, count
            if count < 3:  # the fewest there can be with a pair, or none
                break
    for pair in _pairs_in(fewest):
        rest = [line & ~pair for line in lines if line & pair != pair]
        if not rest or _pair_from(rest):
            return True
    return False


@functools.cache
def _pairs_in(mask: int) -> tuple[int, ...]:
    """Every pair of ``mask``'s cells, as a mask (none for fewer than two cells): ``mask`` is
    part of a line, so there are few of them."""
    bits = [1 << cell for cell in _cells(mask)]
    return tuple(one | other for first, one in enumerate(bits) for other in bits[first + 1 :])


def _has_fork(pairs: list[int], taken: int) -> bool:
    """Whether one cell would leave two different cells completing lines, given the two free
    cells of each line one move from a threat (``pairs``), once ``taken`` is occupied."""
    completes: dict[int, int] = {}
    for empty in pairs:
        if empty & taken:
            continue
        low = empty & -empty
        high = empty ^ low
        if completes.setdefault(low, high) != high or completes.setdefault(high, low) != low:
            return True
    return False


def _cells(mask: int) -> list[int]:
    cells = []
    while mask:
        bit = mask & -mask
        cells.append(bit.bit_length() - 1)
        mask ^= bit
    return cells


def _lowest(mask: int, rng: random.Random | None) -> int:
    cells = [cell for cell in range(mask.bit_length()) if mask >> cell & 1]
    return rng.choice(cells) if rng and len(cells) > 1 else cells[0]
