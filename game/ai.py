"""Computer players, weakest first: ``random``, ``casual`` (wins and blocks, otherwise often
careless), ``smart`` (rule-based) and ``minimax`` (the strongest), on every board.

``minimax`` is perfect on 3x3 (a shipped table of the whole game solved, see
:mod:`game.solved3x3`), on 4x4 with 4 in a row (a shipped table of every position's value, see
:mod:`game.solved`) and on 5x5 with 4 in a row (a shipped opening book, see :mod:`game.book5x5`,
then an exact search, see :mod:`game.exact`); on any other board it searches under a time budget
(see :mod:`game.search`). The modules of the larger boards are imported on their first use (see
:mod:`game.lazy`): a 3x3 game never loads them.

>>> from game import Board
>>> import random
>>> get_strategy("minimax", rng=random.Random(1)).choose(Board.from_string("XX./OO./..."))
2
>>> evaluate(Board())
0

Every strategy picks uniformly among the moves it rates equally, with the ``random.Random`` it was
given, so that games vary but a seeded run repeats.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol

from game.board import Board, Geometry, Mark
from game.budget import DEFAULT_TIME_BUDGET, SearchBudget
from game.errors import IllegalMoveError
from game.lazy import ModuleOnFirstUse
from game.solved3x3 import Solver, shipped_table

if TYPE_CHECKING:
    from game import book5x5, exact, search, solved
    from game.exact import ExactSolver
    from game.search import ThreatSearch
else:
    # Only the larger boards need these: each is imported when first used (see game.lazy), so
    # that a 3x3 game does not pay for them. The type checker reads the real modules above.
    book5x5 = ModuleOnFirstUse("game.book5x5")
    exact = ModuleOnFirstUse("game.exact")
    search = ModuleOnFirstUse("game.search")
    solved = ModuleOnFirstUse("game.solved")

__all__ = [
    "CASUAL_SKILL",
    "DEFAULT_TIME_BUDGET",
    "DIFFICULTIES",
    "STRATEGIES",
    "CasualStrategy",
    "Difficulty",
    "MinimaxStrategy",
    "RandomStrategy",
    "SearchBudget",
    "SmartStrategy",
    "Strategy",
    "describe",
    "evaluate",
    "exact_5x5",
    "get_strategy",
    "is_searched_exactly",
    "is_solved",
    "play_game",
    "score",
]

# The boards with a shipped table (game.solved) and an opening book (game.book5x5), as (size,
# line length): the same as those modules' SIZE and LINE_LENGTH (a test checks), written here
# so that asking which board a position is on imports neither.
_TABLE_BOARD = (4, 4)
_BOOK_BOARD = (5, 4)


class Strategy(Protocol):
    """A computer player: ``choose`` returns the cell it plays in a position that is not over."""

    name: str

    def choose(self, board: Board) -> int: ...


def _require_moves(board: Board) -> tuple[int, ...]:
    moves = board.legal_moves
    if not moves:
        raise IllegalMoveError(board, -1, f"no move to choose: the game is over\n{board.grid()}")
    return moves


class RandomStrategy:
    """Plays any free cell, uniformly."""

    name = "random"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()

    def choose(self, board: Board) -> int:
        return self._rng.choice(_require_moves(board))


# -- perfect play ----------------------------------------------------------------------------


# Solving outright, as on 3x3, stops paying past this many cells (4x4 has millions of positions).
_SOLVE_UP_TO_CELLS = 9
# For a 3x3 position the shipped table does not hold (one no game reaches, made with
# Board.from_masks): solved on demand, kept.
_solvers: dict[Geometry, Solver] = {}


def _entry(board: Board) -> tuple[int, tuple[int, ...]]:
    """A 3x3 position's score (see :func:`score`) and best moves: from the shipped table, else
    solved."""
    geo = board.geometry
    if geo.cell_count > _SOLVE_UP_TO_CELLS:
        raise ValueError(
            f"exact scores are for 3x3 boards; a {geo.size}x{geo.size} board has none "
            "(evaluate() knows the value of 4x4 and 5x5 positions)"
        )
    found = shipped_table().entry(board)
    if found is None:
        solver = _solvers.get(geo)
        if solver is None:
            solver = _solvers[geo] = Solver(geo)
        found = solver.entry(board)
    return found


def _is_solved_4x4(board: Board) -> bool:
    return (board.size, board.line_length) == _TABLE_BOARD


def is_searched_exactly(board: Board) -> bool:
    """Whether ``board``'s exact values come from the opening book and the exact search rather
    than a table solved outright: 5x5 with 4 in a row."""
    return (board.size, board.line_length) == _BOOK_BOARD


def is_solved(board: Board) -> bool:
    """Whether :func:`evaluate` knows ``board``'s value: on 3x3, on 4x4 with 4 in a row and on
    5x5 with 4 in a row (the boards the game offers), not on other line lengths.

    >>> is_solved(Board()), is_solved(Board(4)), is_solved(Board(5))
    (True, True, True)
    >>> is_solved(Board(5, line_length=5))
    False
    """
    return (
        board.geometry.cell_count <= _SOLVE_UP_TO_CELLS
        or _is_solved_4x4(board)
        or is_searched_exactly(board)
    )


def exact_5x5(
    board: Board, solver: ExactSolver | None = None, fastest: bool = True
) -> tuple[int, int | None]:
    """A 5x5 (4 in a row) position's value for the side to move and a move that keeps it (None
    once the game is over; in a won position one of the fastest wins, unless ``fastest`` is
    False and the book does not hold it): from the shipped opening book where it holds the
    position, else from an exact search by ``solver`` (a fresh one unless given: a solver kept
    for a game's positions shares their work).

    The search holds the calling thread: a move takes milliseconds once the book is left
    (``python -m bench.engine`` measures it), but call it off an event loop.
    """
    finished = exact.solved_outcome(board)
    if finished is not None:
        return finished, None
    found = book5x5.book_entry(board)
    if found is not None:
        return found
    return (solver or exact.ExactSolver(board.geometry)).best_moves(board, fastest=fastest)


def score(board: Board) -> int:
    """The exact score for the side to move on 3x3: 0 draw, ``1 + k`` a win leaving ``k`` cells
    free.

    >>> score(Board.from_string("XX./OO./..."))  # X wins now, leaving 4 cells free
    5
    """
    return _entry(board)[0]


def evaluate(board: Board) -> int:
    """The game-theoretic value for the side to move: +1 win, 0 draw, -1 loss; on 3x3, 4x4 (4 in
    a row, a table lookup) and 5x5 (4 in a row: the opening book, else an exact search).

    >>> evaluate(Board()), evaluate(Board.from_string("XX./OO./...")), evaluate(
    ...     Board.from_string("XXX/OO./..."))
    (0, 1, -1)
    >>> evaluate(Board(4))
    0
    """
    if _is_solved_4x4(board):
        x_mask, o_mask = board.masks
        return solved.solved_table().value(x_mask, o_mask)
    if is_searched_exactly(board):
        return exact_5x5(board)[0]
    value = score(board)  # 3x3, or a ValueError that says which boards have values
    return (value > 0) - (value < 0)


class MinimaxStrategy:
    """The strongest player. Perfect on 3x3 (never loses, forces a win when it can, wins fastest
    and loses slowest), on 4x4 and on 5x5 with 4 in a row (keeps every position's value, and in
    a won position plays one of the fastest wins); on other boards a search within ``budget``
    (by default :data:`DEFAULT_TIME_BUDGET` seconds a move) that always completes a line it can
    and always blocks a threat. The budget bounds only that search: on the offered boards play
    is exact whatever the budget.

    On 5x5 its search runs in the calling thread (in its games, well under a millisecond a move
    at the median and a few milliseconds at worst, ``python -m bench.engine``; an arbitrary
    position of the opening that its book does not hold can take longer, ``python -m
    game.solve5x5 check``): a program with an event loop calls :meth:`choose` in a worker thread
    or process.
    """

    name = "minimax"

    def __init__(
        self, rng: random.Random | None = None, budget: SearchBudget | None = None
    ) -> None:
        self._rng = rng or random.Random()
        self._budget = budget or SearchBudget()
        self._searches: dict[Geometry, ThreatSearch] = {}
        self._exact: dict[Geometry, ExactSolver] = {}

    def best_moves(self, board: Board) -> tuple[int, ...]:
        """The moves :meth:`choose` picks from uniformly: every move with the best score on 3x3
        and 4x4 (the fastest wins among them), on 5x5 the book's move or the first the exact
        search finds that keeps the value (a fastest win), the one move the search found best
        elsewhere."""
        moves = _require_moves(board)
        if board.geometry.cell_count <= _SOLVE_UP_TO_CELLS:
            return _entry(board)[1]
        if _is_solved_4x4(board):
            return _best_solved_moves(board, moves, self._exact_solver(board))
        if is_searched_exactly(board):
            found = book5x5.book_entry(board)
            if found is None:
                # The search orders equally rated moves with the strategy's rng, so games vary.
                found = self._exact_solver(board).best_moves(board, self._rng)
            return (found[1],)
        threat_search = self._searches.get(board.geometry)
        if threat_search is None:
            threat_search = self._searches[board.geometry] = search.ThreatSearch(board.geometry)
        return (threat_search.choose(board, self._budget, self._rng),)

    def choose(self, board: Board) -> int:
        return self._rng.choice(self.best_moves(board))

    def _exact_solver(self, board: Board) -> ExactSolver:
        """The strategy's exact search for ``board``'s geometry: kept, so that a game's
        positions share what it proved."""
        solver = self._exact.get(board.geometry)
        if solver is None:
            solver = self._exact[board.geometry] = exact.ExactSolver(board.geometry)
        return solver


def _best_solved_moves(
    board: Board, moves: tuple[int, ...], solver: ExactSolver
) -> tuple[int, ...]:
    """The moves that keep a 4x4 position's value, by the table; in a won position only the
    fastest wins among them (by ``solver``'s search of forced wins), so that a won game ends
    without delay."""
    table = solved.solved_table()
    x_mask, o_mask = board.masks
    x_to_move = board.turn.value == "X"
    child_values = {}
    for cell in moves:
        bit = 1 << cell
        child = (x_mask | bit, o_mask) if x_to_move else (x_mask, o_mask | bit)
        child_values[cell] = -table.value(*child)
    best = max(child_values.values())
    best_moves = tuple(cell for cell, value in child_values.items() if value == best)
    if best == 1:
        return solver.fastest_wins(board, best_moves)
    return best_moves


# -- rules -----------------------------------------------------------------------------------


class SmartStrategy:
    """Newell and Simon's rules, first that applies: win, block, fork, block a fork, centre,
    opposite corner, empty corner, empty side. On 3x3 it never loses, yet it searches no game
    tree. On larger boards: win, block, fork, take the opponent's fork cell, then the cells that
    attack and defend the most open lines (:func:`game.search.cell_scores`).
    """

    name = "smart"

    def __init__(self, rng: random.Random | None = None) -> None:
        self._rng = rng or random.Random()

    def choose(self, board: Board) -> int:
        return self._rng.choice(self.candidates(board))

    def candidates(self, board: Board) -> tuple[int, ...]:
        """The moves of the first rule that applies; :meth:`choose` picks one uniformly."""
        moves = _require_moves(board)
        geo = board.geometry
        mine, theirs, free = _split_masks(board)
        if geo.cell_count > 9:
            return self._larger_board_candidates(geo, mine, theirs, free)

        # Each rule is tried only when every earlier one found nothing.
        return (
            _completing(geo, mine, free)  # win
            or _completing(geo, theirs, free)  # block
            or _forks(geo, mine, theirs, free)
            or self._block_fork(geo, mine, theirs, free)
            or _centre(geo, free)
            or _opposite_corners(geo, theirs, free)
            or _cells_in(_corners(geo), free)
            or _cells_in(_sides(geo), free)
            or moves
        )

    def _larger_board_candidates(
        self, geo: Geometry, mine: int, theirs: int, free: int
    ) -> tuple[int, ...]:
        scores = search.cell_scores(geo, mine, theirs)
        return (
            _completing(geo, mine, free)  # win
            or _completing(geo, theirs, free)  # block
            or _best_scored(_double_threat_cells(geo, mine, theirs, free), scores)  # fork
            or _best_scored(_double_threat_cells(geo, theirs, mine, free), scores)  # block it
            or _best_scored(tuple(scores), scores)
        )

    def _block_fork(self, geo: Geometry, mine: int, theirs: int, free: int) -> tuple[int, ...]:
        if not _forks(geo, theirs, mine, free):
            return ()
        safe = [cell for cell in _cells(free) if _leaves_no_fork(geo, mine, theirs, free, cell)]
        their_forks = set(_forks(geo, theirs, mine, free))
        # Prefer taking a fork cell, then forcing a reply with a threat, then any safe move.
        for group in (
            [cell for cell in safe if cell in their_forks],
            [cell for cell in safe if _completing(geo, mine | 1 << cell, free & ~(1 << cell))],
            safe,
        ):
            if group:
                return tuple(group)
        return ()


def _split_masks(board: Board) -> tuple[int, int, int]:
    """The side to move's cells, the opponent's, and the free ones, as masks."""
    x_mask, o_mask = board.masks
    mine, theirs = (x_mask, o_mask) if board.turn.value == "X" else (o_mask, x_mask)
    return mine, theirs, ~(mine | theirs) & board.geometry.full_mask


def _cells(mask: int) -> list[int]:
    return [cell for cell in range(mask.bit_length()) if mask >> cell & 1]


def _cells_in(cells: tuple[int, ...], free: int) -> tuple[int, ...]:
    return tuple(cell for cell in cells if free >> cell & 1)


def _completing(geo: Geometry, marks: int, free: int) -> tuple[int, ...]:
    """Free cells that would complete a line of ``marks``."""
    found: set[int] = set()
    for line_mask in geo.line_masks:
        gap = line_mask & ~marks
        if gap.bit_count() == 1 and gap & free:
            found.add(gap.bit_length() - 1)
    return tuple(sorted(found))


def _threat_count(geo: Geometry, marks: int, blockers: int) -> int:
    """How many lines ``marks`` could complete with one more mark."""
    return sum(
        1
        for line_mask in geo.line_masks
        if not line_mask & blockers and (line_mask & ~marks).bit_count() == 1
    )


def _forks(geo: Geometry, marks: int, blockers: int, free: int) -> tuple[int, ...]:
    """Free cells that give ``marks`` two threats at once."""
    return tuple(
        cell
        for cell in _cells(free)
        if _threat_count(geo, marks | 1 << cell, blockers) >= 2
        and not _completing(geo, marks, free)
    )


def _double_threat_cells(geo: Geometry, marks: int, blockers: int, free: int) -> tuple[int, ...]:
    """Free cells where a mark of ``marks`` would leave two different cells completing a line:
    a fork on a board where two lines may need the same cell, which counting lines misses."""
    found = []
    for cell in _cells(free):
        completing = _completing(geo, marks | 1 << cell, free & ~(1 << cell))
        if len(completing) >= 2:
            found.append(cell)
    return tuple(found)


def _best_scored(cells: tuple[int, ...], scores: dict[int, int]) -> tuple[int, ...]:
    """The cells among ``cells`` with the highest score."""
    if not cells:
        return ()
    best = max(scores[cell] for cell in cells)
    return tuple(cell for cell in cells if scores[cell] == best)


def _leaves_no_fork(geo: Geometry, mine: int, theirs: int, free: int, cell: int) -> bool:
    """Whether playing ``cell`` leaves the opponent no fork, counting the reply it forces."""
    mine |= 1 << cell
    free &= ~(1 << cell)
    forced = _completing(geo, mine, free)
    if len(forced) >= 2:
        return True  # a fork of our own: the fork rule would have found it; it wins anyway
    if forced:
        reply = forced[0]
        theirs |= 1 << reply
        free &= ~(1 << reply)
        return len(_completing(geo, theirs, free)) < 2
    return not _forks(geo, theirs, mine, free)


def _centre(geo: Geometry, free: int) -> tuple[int, ...]:
    if geo.size % 2 == 0:
        return ()
    middle = geo.cell_count // 2
    return (middle,) if free >> middle & 1 else ()


def _corners(geo: Geometry) -> tuple[int, ...]:
    last = geo.size - 1
    return (0, last, last * geo.size, geo.cell_count - 1)


def _sides(geo: Geometry) -> tuple[int, ...]:
    corners = set(_corners(geo))
    size = geo.size
    edge = {
        cell
        for cell in range(geo.cell_count)
        if cell // size in (0, size - 1) or cell % size in (0, size - 1)
    }
    return tuple(sorted(edge - corners))


def _opposite_corners(geo: Geometry, theirs: int, free: int) -> tuple[int, ...]:
    corners = _corners(geo)
    opposite = dict(zip(corners, reversed(corners), strict=True))
    return tuple(
        opposite[corner]
        for corner in corners
        if theirs >> corner & 1 and free >> opposite[corner] & 1
    )


# -- rules, sometimes -------------------------------------------------------------------------

# How often ``casual`` plays ``smart``'s move when no line is to be won or blocked at once. Chosen
# with bench.ladder's exact 3x3 figures: at 0.3 it loses a third of its games against minimax
# (9.0% as X, 56.5% as O; as X no value reaches 25%: even at 0, every other move random, it loses
# 16.5%), and wins 93.1% as X and 75.0% as O against random.
CASUAL_SKILL = 0.3


class CasualStrategy:
    """Wins in one when it can and blocks a loss in one; otherwise plays ``smart``'s move with
    probability ``skill`` (:data:`CASUAL_SKILL` by default), else any free cell, uniformly.

    ``smart``'s judgement rather than ``minimax``'s: it costs no search on any board, so 5x5 stays
    as fast as 3x3, and it makes ``casual`` a blend of the two levels around it: ``skill=1`` plays
    exactly as ``smart``, ``skill=0`` as ``random`` that never misses a win or a block.
    """

    name = "casual"

    def __init__(self, rng: random.Random | None = None, skill: float = CASUAL_SKILL) -> None:
        if not 0 <= skill <= 1:
            raise ValueError(f"casual's skill is a probability, between 0 and 1, not {skill}")
        self._rng = rng or random.Random()
        self._smart = SmartStrategy(self._rng)
        self._skill = skill

    @property
    def skill(self) -> float:
        """The chance of ``smart``'s move when no line is to be won or blocked at once."""
        return self._skill

    def choose(self, board: Board) -> int:
        moves = _require_moves(board)
        urgent = self.urgent_moves(board)
        if urgent:
            return self._rng.choice(urgent)
        if self._rng.random() < self._skill:
            return self._rng.choice(self._smart.candidates(board))
        return self._rng.choice(moves)

    def urgent_moves(self, board: Board) -> tuple[int, ...]:
        """The cells that win at once, else those that block a win at once; none when neither
        applies (then :meth:`choose` rolls for ``smart``'s move or any)."""
        mine, theirs, free = _split_masks(board)
        geo = board.geometry
        return _completing(geo, mine, free) or _completing(geo, theirs, free)


# -- lookup ----------------------------------------------------------------------------------

# Weakest first: the order the levels are offered in.
STRATEGIES: dict[str, type[RandomStrategy | CasualStrategy | SmartStrategy | MinimaxStrategy]] = {
    "random": RandomStrategy,
    "casual": CasualStrategy,
    "smart": SmartStrategy,
    "minimax": MinimaxStrategy,
}


class Difficulty(NamedTuple):
    """A level the computer plays at: its strategy's name and one line saying how it plays."""

    name: str
    description: str


# Every level, weakest first, with a line for help text and command choices.
DIFFICULTIES = (
    Difficulty("random", "Plays any free cell: the easiest."),
    Difficulty("casual", "Takes a win and blocks yours, but often plays carelessly."),
    Difficulty("smart", "Plays by the classic rules: never loses on 3x3."),
    Difficulty("minimax", "Perfect on 3x3, 4x4 and 5x5: the strongest."),
)


def describe(name: str) -> str:
    """The one-line description of the level called ``name`` (any case).

    >>> [level.name for level in DIFFICULTIES] == list(STRATEGIES)
    True
    >>> describe("Casual")
    'Takes a win and blocks yours, but often plays carelessly.'
    """
    known = _known_name(name)
    return next(level.description for level in DIFFICULTIES if level.name == known)


def _known_name(name: str) -> str:
    """``name`` as :data:`STRATEGIES` spells it, or a ValueError that lists the levels."""
    key = name.strip().lower()
    if key not in STRATEGIES:
        known = ", ".join(STRATEGIES)
        raise ValueError(f'unknown strategy "{name}": choose one of {known}')
    return key


def get_strategy(
    name: str, rng: random.Random | None = None, budget: SearchBudget | None = None
) -> Strategy:
    """The strategy called ``name``; ``rng`` makes its choices reproducible, and ``budget`` bounds
    what ``minimax`` may spend on a move where it searches (5x5; the others ignore it).

    >>> get_strategy("best")
    Traceback (most recent call last):
    ...
    ValueError: unknown strategy "best": choose one of random, casual, smart, minimax
    """
    factory = STRATEGIES[_known_name(name)]
    if factory is MinimaxStrategy:
        return MinimaxStrategy(rng, budget)
    return factory(rng)


def play_game(board: Board, players: Mapping[Mark, Strategy]) -> Board:
    """The finished board after ``players`` play on from ``board``, each choosing its side's moves.

    >>> play_game(Board(), {Mark.X: get_strategy("minimax"), Mark.O: get_strategy("smart")}).winner
    """
    while not board.is_over:
        board = board.play(players[board.turn].choose(board))
    return board
