"""Puzzles on 4x4 and 5x5 (4 in a row): a position, a task and its one correct first move, each
proven by the exact solver.

A :class:`Puzzle` is one of two tasks for the side to move:

- ``WIN``: "X to play and win in N". Exactly one move wins at all (every other move lets the
  opponent draw or win: so a wrong answer always has a refutation), and it completes a line in
  exactly N moves of the solver's own against the longest defence.
- ``HOLD``: "O to play: only one move keeps the draw". The position is a draw with best play,
  and every move but one loses.

The rule for WIN is stricter than chess's "exactly one move wins in N": there, another move may
still win more slowly; here no other move wins at all. :func:`verify` proves either task, with
the reason as a ``ValueError`` when it does not hold.

A puzzle is one line of text, like an EPD record (:meth:`Puzzle.line`,
:meth:`Puzzle.from_line`): its id, the board (rows top to bottom, ``/`` between them), ``k`` and
the line length, the side to move, the task (``win2`` .. ``win9``, or ``hold``) and the move::

    5h-93c44310 O...O/XX..X/..O../XX.../....O k4 O hold B3

The shipped pool (``game/data/puzzles.txt``) is made and re-proven by

    python -m game.puzzles build    # generate the pool from a seed (about 30 s)
    python -m game.puzzles verify   # prove every line again (about a second)

:func:`generate` finds puzzles along seeded games between the ``random``, ``casual`` and
``smart`` levels, keeping those that pass :func:`verify` and are worth asking (see
:func:`puzzle_task`); :func:`puzzle_of_the_day` picks one a day, the same everywhere;
:func:`refute` and :func:`reply` say what answers a wrong move and a right one, from the solved
tree.

>>> puzzle = Puzzle.from_line("4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2 C4")
>>> puzzle.statement
'X to play and win in 2'
>>> verify(puzzle)  # C4 threatens both D4 and C2: O blocks one, X completes the other
"""

from __future__ import annotations

import argparse
import datetime
import functools
import hashlib
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from game.ai import CasualStrategy, RandomStrategy, SmartStrategy, Strategy
from game.board import Board, Geometry, Mark, cell_name, parse_cell, quote_input
from game.book5x5 import LINE_LENGTH as BOOK_LINE_LENGTH
from game.book5x5 import SIZE as BOOK_SIZE
from game.book5x5 import book_entry, fastest_wins
from game.errors import GameError
from game.exact import ExactSolver
from game.solved import LINE_LENGTH as SOLVED_LINE_LENGTH
from game.solved import SIZE as SOLVED_SIZE
from game.solved import solved_table
from game.symmetry import BoardSymmetry

__all__ = [
    "DAILY_EPOCH",
    "MAX_WIN_MOVES",
    "MIN_CHOICES",
    "POOL_PATH",
    "Puzzle",
    "Reason",
    "Refutation",
    "Reply",
    "Step",
    "StepKind",
    "Task",
    "canonical_key",
    "generate",
    "line_position",
    "load_pool",
    "puzzle_id",
    "puzzle_of_the_day",
    "puzzle_task",
    "refute",
    "reply",
    "shipped_pool",
    "step",
    "verify",
    "verify_pool",
]

POOL_PATH = Path(__file__).parent / "data" / "puzzles.txt"
# Day 0 of the daily cycle: any fixed date will do, as long as it never changes (changing it
# changes every day's puzzle).
DAILY_EPOCH = datetime.date(2026, 1, 1)
# The longest win a puzzle may ask for: past it, no one solves it by looking.
MAX_WIN_MOVES = 9
# The fewest free cells a generated puzzle leaves to choose from.
MIN_CHOICES = 5
_ID = re.compile(r"[0-9a-z][0-9a-z-]{0,31}")
_TASK = re.compile(r"win([1-9])|hold")
_LINE_FIELDS = "id, board, line length (k4), side to move, task (win2 or hold) and move"
_EXAMPLE_LINE = "4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2 C4"


class Task(Enum):
    """What the side to move is asked to do."""

    WIN = "win"  # the only winning move, which wins in exactly N moves
    HOLD = "hold"  # the only move that keeps the draw


@dataclass(frozen=True, slots=True)
class Puzzle:
    """A position, its task and its one correct first move (``solution``, a cell index).

    ``moves`` is the N of a WIN ("win in N": moves of the side to move's own, the last one
    completing a line, against the longest defence); None for a HOLD. Construction checks the
    shape only (a legal move, a position not over, N where it belongs); :func:`verify` proves
    that the task is true.
    """

    id: str
    board: Board
    task: Task
    solution: int
    moves: int | None = None

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(
                f"puzzle id {quote_input(self.id)} is not an id: use 1 to 32 lowercase letters, "
                "digits and '-', starting with a letter or digit"
            )
        if self.task is Task.WIN:
            if self.moves is None or not 1 <= self.moves <= MAX_WIN_MOVES:
                raise ValueError(
                    f"a win puzzle needs its number of moves, 1 to {MAX_WIN_MOVES}, "
                    f"not {self.moves}"
                )
        elif self.moves is not None:
            raise ValueError(f"a hold puzzle has no number of moves, not {self.moves}")
        # Raises the board's own error for a game already over or a cell that is taken.
        self.board.parse_move(self.solution)

    @property
    def turn(self) -> Mark:
        """The side to move: the one solving the puzzle."""
        return self.board.turn

    @property
    def size(self) -> int:
        return self.board.size

    @property
    def statement(self) -> str:
        """The task in words: ``"X to play and win in 3"``, ``"O to play: only one move keeps
        the draw"``."""
        if self.task is Task.WIN:
            return f"{self.turn} to play and win in {self.moves}"
        return f"{self.turn} to play: only one move keeps the draw"

    def line(self) -> str:
        """The puzzle as one line of text (see the module), which :meth:`from_line` reads."""
        task = f"win{self.moves}" if self.task is Task.WIN else "hold"
        return (
            f"{self.id} {self.board} k{self.board.line_length} {self.turn} {task} "
            f"{cell_name(self.solution, self.size)}"
        )

    @classmethod
    def from_line(cls, text: str) -> Puzzle:
        """Read a puzzle from :meth:`line`'s form. Anything wrong raises a ``ValueError`` that
        names the field and what was there.

        >>> Puzzle.from_line("4w-f8fe2513 .OX./OO../O.X./XX.. k4 O win2 C4")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: puzzle line says O to play, but the board has X to play (X moves first and ...
        """
        fields = text.split()
        if len(fields) != 6:
            raise ValueError(
                f"a puzzle line has 6 fields ({_LINE_FIELDS}), like {_EXAMPLE_LINE!r}; "
                f"{quote_input(text.strip())} has {len(fields)}"
            )
        puzzle_id, board_text, length_text, turn_text, task_text, move_text = fields
        if not re.fullmatch(r"k[0-9]", length_text):
            raise ValueError(
                f"puzzle line's line length {quote_input(length_text)} is not k and a digit, "
                "like k4"
            )
        try:
            board = Board.from_string(board_text, int(length_text[1:]))
        except GameError as error:
            raise ValueError(f"puzzle line's board: {_first_line(error)}") from None
        if turn_text not in ("X", "O"):
            raise ValueError(f"puzzle line's side to move {quote_input(turn_text)} is not X or O")
        if Mark(turn_text) is not board.turn:
            raise ValueError(
                f"puzzle line says {turn_text} to play, but the board has {board.turn} to play "
                "(X moves first and the players alternate)"
            )
        task_match = _TASK.fullmatch(task_text)
        if task_match is None:
            raise ValueError(
                f"puzzle line's task {quote_input(task_text)} is not win1 to win9 or hold"
            )
        task, moves = (Task.WIN, int(task_match[1])) if task_match[1] else (Task.HOLD, None)
        try:
            solution = board.parse_move(parse_cell(move_text, board.size))
        except GameError as error:
            raise ValueError(f"puzzle line's move: {_first_line(error)}") from None
        return cls(puzzle_id, board, task, solution, moves)


def _first_line(error: Exception) -> str:
    """An engine error's sentence without the board it draws under it: a line of text already
    shows the board."""
    return str(error).splitlines()[0]


# -- the exact values -------------------------------------------------------------------------


@functools.cache
def _solver(geo: Geometry) -> ExactSolver:
    """One exact search per geometry for the whole process: what it proves is exact for every
    later position, so sharing it only saves work (its table stays bounded)."""
    return ExactSolver(geo)


def _is_solved_4x4(board: Board) -> bool:
    return (board.size, board.line_length) == (SOLVED_SIZE, SOLVED_LINE_LENGTH)


def _move_values(board: Board) -> dict[int, int]:
    """Each legal move's value for the side to move (+1 win, 0 draw, -1 loss). On 4x4 from the
    shipped solved table, so that a 4x4 puzzle's values do not rest on the search that counts
    its moves; on 5x5 from the opening book where it holds the position after the move; else
    from the exact search."""
    if _is_book_board(board):
        return {cell: -_position_value(board.play(cell)) for cell in board.legal_moves}
    if not _is_solved_4x4(board):
        return _solver(board.geometry).move_values(board)
    table = solved_table()
    x_mask, o_mask = board.masks
    values = {}
    for cell in board.legal_moves:
        bit = 1 << cell
        child = (x_mask | bit, o_mask) if board.turn is Mark.X else (x_mask, o_mask | bit)
        # The table scores a finished game from the mover's side too: a completed line is a loss
        # for the side that would move next.
        values[cell] = -table.value(*child)
    return values


def _is_book_board(board: Board) -> bool:
    return (board.size, board.line_length) == (BOOK_SIZE, BOOK_LINE_LENGTH)


def _position_value(board: Board) -> int:
    """The value for the side to move: on 4x4 from the solved table, on 5x5 from the opening
    book where it holds the position (every position of up to 4 marks: there the exact search
    can take seconds), else from the exact search."""
    if _is_solved_4x4(board):
        return solved_table().value(*board.masks)
    if _is_book_board(board):
        found = book_entry(board)
        if found is not None:
            return found[0]
    return _solver(board.geometry).value(board)


def _moves_to_win(board: Board) -> int | None:
    """How many moves of its own the side to move needs against the longest defence, or None
    when it cannot force a win; the value read as :func:`_position_value` reads it."""
    if _position_value(board) != 1:
        return None
    return _win_length(board)


def _win_length(board: Board) -> int:
    """:func:`_moves_to_win` in a position known to be won: on 5x5 from the book's fastest wins
    where they hold it, else from the book's move (one of the fastest wins, as ``python -m
    game.solve5x5 verify`` checks: how fast it wins is how fast the position is won, and trying
    one move a count is far cheaper than trying every move), else from the exact search."""
    solver = _solver(board.geometry)
    if _is_book_board(board):
        found = fastest_wins(board)
        if found is not None:
            return found[0]
        entry = book_entry(board)
        if entry is not None:
            for count in range(1, len(board.legal_moves) + 1):
                if solver.wins_within(board, entry[1], count):
                    return count
            raise AssertionError(f"the book's move does not win\n{board.grid()}")
    searched = solver.moves_to_win(board, won=True)
    assert searched is not None  # a won position, as the caller knows
    return searched


def _fastest_win(board: Board) -> tuple[int, int]:
    """In a won position, how many moves of its own the side to move needs against the longest
    defence (:func:`_win_length`), and the lowest cell among the moves that win that fast. A
    move that wins within that many moves wins, and none wins sooner, so the first cell that
    does is the lowest of the fastest wins, and no other move's value is needed; on 5x5 the
    book's fastest wins name them outright, and no cell past the book's move need be tried."""
    count = _win_length(board)
    known: int | None = None  # a move known to be one of the fastest wins
    if _is_book_board(board):
        found = fastest_wins(board)
        if found is not None:
            return count, found[1][0]
        entry = book_entry(board)
        if entry is not None:
            known = entry[1]
    solver = _solver(board.geometry)
    for cell in board.legal_moves:
        if cell == known or solver.wins_within(board, cell, count):
            return count, cell
    raise AssertionError(f"a won position with no move that wins in {count}\n{board.grid()}")


def _keeping_move(board: Board) -> int:
    """The move the exact search's :meth:`~game.exact.ExactSolver.best_moves` gives in a
    position that is not won: the first in its order whose result keeps the position's value,
    each result's value read as :func:`_position_value` reads it (on 5x5, mostly from the
    book)."""
    value = _position_value(board)
    ordered = _solver(board.geometry).ordered_moves(board)
    return next(
        (cell for cell in ordered if -_position_value(board.play(cell)) == value), ordered[0]
    )


def _completing_cells(board: Board, mark: Mark) -> tuple[int, ...]:
    """The free cells where ``mark`` would complete a line."""
    x_mask, o_mask = board.masks
    marks = x_mask if mark is Mark.X else o_mask
    free = board.geometry.full_mask & ~(x_mask | o_mask)
    found = set()
    for line in board.geometry.line_masks:
        gap = line & ~marks
        if gap.bit_count() == 1 and gap & free:
            found.add(gap.bit_length() - 1)
    return tuple(sorted(found))


def _names(cells: Iterable[int], size: int) -> str:
    return ", ".join(cell_name(cell, size) for cell in sorted(cells))


# -- verification -----------------------------------------------------------------------------


def verify(puzzle: Puzzle) -> None:
    """Prove ``puzzle`` true with the exact values, or raise ``ValueError`` saying why not.

    WIN: the side to move wins, exactly one move wins (every other lets the opponent draw or
    win), that move is the puzzle's, and the win takes exactly N moves of the solver's own
    against the longest defence. HOLD: the position is a draw with best play and every move
    but the puzzle's loses.
    """
    board = puzzle.board
    if board.is_over:  # a Puzzle cannot be made so, but its board could be swapped in
        raise ValueError(f"the position is over\n{board.grid()}")
    size, mover = board.size, board.turn
    values = _move_values(board)
    answer = cell_name(puzzle.solution, size)
    if puzzle.task is Task.WIN:
        winners = [cell for cell, value in values.items() if value == 1]
        if not winners:
            held = "draws" if max(values.values()) == 0 else "loses"
            raise ValueError(f"{mover} to play cannot force a win: with best play {mover} {held}")
        if len(winners) > 1:
            raise ValueError(
                f"{len(winners)} moves win ({_names(winners, size)}): a win puzzle has exactly one"
            )
        if winners[0] != puzzle.solution:
            raise ValueError(
                f"{answer} does not win: {cell_name(winners[0], size)} is the only winning move"
            )
        fewest = _moves_to_win(board)
        if fewest != puzzle.moves:
            raise ValueError(
                f"{answer} wins in {fewest} moves of {mover}'s against the best defence, "
                f"not in {puzzle.moves}"
            )
        return
    best = max(values.values())
    if best == 1:
        winners = [cell for cell, value in values.items() if value == 1]
        raise ValueError(f"{mover} to play wins ({_names(winners, size)}): not a drawing position")
    if best == -1:
        raise ValueError(f"{mover} to play loses whatever it plays: no move keeps a draw")
    keepers = [cell for cell, value in values.items() if value == 0]
    if len(keepers) > 1:
        raise ValueError(
            f"{len(keepers)} moves keep the draw ({_names(keepers, size)}): a hold puzzle has "
            "exactly one"
        )
    if keepers[0] != puzzle.solution:
        raise ValueError(
            f"{answer} loses: {cell_name(keepers[0], size)} is the only move that keeps the draw"
        )


def canonical_key(board: Board) -> tuple[int, int, int, int]:
    """The same for a position and its seven images under the board's symmetries (and for no
    other position): its size, line length and smallest image's masks."""
    x_mask, o_mask = _symmetry(board.geometry).canonical(*board.masks)
    return board.size, board.line_length, x_mask, o_mask


@functools.cache
def _symmetry(geo: Geometry) -> BoardSymmetry:
    return BoardSymmetry(geo)


def puzzle_id(board: Board, task: Task) -> str:
    """A short id made from the position up to symmetry and the task, so that it stays the same
    when the pool is rebuilt and the same puzzle turned round gets the same one:
    ``"4w-..."``/``"5h-..."`` and 8 hex digits of a sha256."""
    size, length, x_mask, o_mask = canonical_key(board)
    digest = hashlib.sha256(f"{size}:{length}:{x_mask}:{o_mask}:{task.value}".encode()).hexdigest()
    return f"{size}{task.value[0]}-{digest[:8]}"


def verify_pool(puzzles: Sequence[Puzzle]) -> None:
    """:func:`verify` every puzzle, and check that no two have the same id or the same position
    up to symmetry. The first failure raises ``ValueError`` naming the puzzle's line."""
    ids: dict[str, int] = {}
    keys: dict[tuple[int, int, int, int], int] = {}
    for number, puzzle in enumerate(puzzles, 1):
        where = f"puzzle {number} ({puzzle.line()})"
        if puzzle.id in ids:
            raise ValueError(f"{where}: id {puzzle.id} is puzzle {ids[puzzle.id]}'s too")
        key = canonical_key(puzzle.board)
        if key in keys:
            raise ValueError(f"{where}: puzzle {keys[key]}'s position, up to symmetry")
        ids[puzzle.id] = keys[key] = number
        try:
            verify(puzzle)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None


# -- generation -------------------------------------------------------------------------------


def puzzle_task(board: Board) -> Puzzle | None:
    """The puzzle ``board`` makes, if any is worth asking: proven by :func:`verify`'s rules and
    past these filters, cheapest first:

    - the game is not over, and at least :data:`MIN_CHOICES` cells are free: with fewer, the
      answer is found by trying each, and with one it is no choice at all;
    - neither side can complete a line at once: a win in one is no puzzle, and when the
      opponent threatens one, the only move is the block, which needs no thought;
    - the side to move wins with exactly one move, in 2 to 4 of its own moves (WIN), or draws
      with exactly one move (HOLD).
    """
    if board.is_over or len(board.legal_moves) < MIN_CHOICES:
        return None
    if _completing_cells(board, board.turn) or _completing_cells(board, board.turn.other):
        return None
    value = _position_value(board)
    if value == -1:
        return None
    values = _move_values(board)
    keepers = [cell for cell, move_value in values.items() if move_value == value]
    if len(keepers) != 1:
        return None
    if value == 0:
        return Puzzle(puzzle_id(board, Task.HOLD), board, Task.HOLD, keepers[0])
    moves = _moves_to_win(board)
    if moves is None or not 2 <= moves <= 4:
        return None
    return Puzzle(puzzle_id(board, Task.WIN), board, Task.WIN, keepers[0], moves)


def _players(rng: random.Random) -> dict[Mark, Strategy]:
    """A pairing for one game: each side random, casual or smart, each with its own seeded rng.
    Casual and smart games reach the positions people reach; random ones, stranger ones."""
    players: dict[Mark, Strategy] = {}
    for mark in Mark:
        seeded = random.Random(rng.getrandbits(64))
        kind = rng.choice(("random", "casual", "casual", "smart"))
        if kind == "random":
            players[mark] = RandomStrategy(seeded)
        elif kind == "casual":
            players[mark] = CasualStrategy(seeded)
        else:
            players[mark] = SmartStrategy(seeded)
    return players


def _game_positions(size: int, rng: random.Random) -> Iterator[Board]:
    """The positions of one seeded game, before each move, the empty board left out."""
    players = _players(rng)
    board = Board(size)
    while not board.is_over:
        board = board.play(players[board.turn].choose(board))
        if not board.is_over:
            yield board


def generate(
    size: int,
    rng: random.Random,
    wins: Mapping[int, int],
    holds: int,
    max_games: int = 5_000,
    min_marks: int | None = None,
) -> list[Puzzle]:
    """Up to ``wins[n]`` WIN puzzles in ``n`` and ``holds`` HOLD puzzles on a ``size`` x
    ``size`` board, found along games played with ``rng`` (so the same seed gives the same
    puzzles), no two the same up to symmetry, in at most ``max_games`` games. Quotas per N keep
    the pool from being mostly wins in 2, which games meet far more often than longer ones.

    Positions with fewer than ``min_marks`` marks are skipped: early positions are rarely won,
    and on 5x5 they are the slowest to solve (by default 5 marks on 4x4, 7 on 5x5).
    """
    if size not in (4, 5):
        raise ValueError(f"puzzles are made on 4x4 and 5x5 boards, not {size}x{size}")
    fewest_marks = min_marks if min_marks is not None else (5 if size == 4 else 7)
    # What is still wanted, by (task, N): N is None for HOLD.
    wanted: dict[tuple[Task, int | None], int] = {
        (Task.WIN, moves): count for moves, count in wins.items()
    }
    wanted[Task.HOLD, None] = holds
    found: list[Puzzle] = []
    seen: set[tuple[int, int, int, int]] = set()
    for _ in range(max_games):
        if not any(wanted.values()):
            break
        for board in _game_positions(size, rng):
            if board.move_count < fewest_marks:
                continue
            key = canonical_key(board)
            if key in seen:
                continue
            seen.add(key)
            puzzle = puzzle_task(board)
            if puzzle is not None and wanted.get((puzzle.task, puzzle.moves), 0) > 0:
                wanted[puzzle.task, puzzle.moves] -= 1
                found.append(puzzle)
    return found


# -- the pool ---------------------------------------------------------------------------------


def load_pool(path: Path = POOL_PATH) -> tuple[Puzzle, ...]:
    """The puzzles of a pool file: one a line; blank lines and lines starting with ``#`` are
    skipped. A line that is no puzzle raises ``ValueError`` naming its number."""
    puzzles = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            puzzles.append(Puzzle.from_line(stripped))
        except ValueError as error:
            raise ValueError(f"{path.name} line {number}: {error}") from None
    return tuple(puzzles)


@functools.cache
def shipped_pool() -> tuple[Puzzle, ...]:
    """The pool shipped with the engine (:data:`POOL_PATH`), read once a process: it does not
    change while one runs, and reading it is some 35 ms (each bot made in a process, a test's
    included, would pay it again)."""
    return load_pool(POOL_PATH)


def puzzle_of_the_day(date: datetime.date, pool: Sequence[Puzzle]) -> Puzzle:
    """The puzzle for ``date``: the same in every process and after a restart, and within a
    cycle every puzzle of the pool once.

    Days count from :data:`DAILY_EPOCH`; each run of ``len(pool)`` days (a cycle) goes through
    the pool in the order of the sha256 of the cycle's number and each puzzle's id, so the order
    depends on the pool's ids only, not on the order of its lines, and differs from one cycle
    to the next. So across a cycle's end a puzzle can come back sooner than a cycle: a puzzle
    may end one cycle and start the next.
    """
    if not pool:
        raise ValueError("no puzzle to choose from: the pool is empty")
    if len({puzzle.id for puzzle in pool}) != len(pool):
        raise ValueError("the pool has two puzzles with the same id: the daily order needs ids")
    cycle, place = divmod(date.toordinal() - DAILY_EPOCH.toordinal(), len(pool))
    order = sorted(
        pool, key=lambda puzzle: hashlib.sha256(f"{cycle}:{puzzle.id}".encode()).digest()
    )
    return order[place]


# -- answers: the refutation of a wrong move, the defence against a right one ----------------


class Reason(Enum):
    """Why the opponent's reply refutes a wrong move, read off the position after it."""

    COMPLETES_LINE = "completes a line"
    FORK = "makes two threats at once"  # two free cells that each complete a line of its own
    FORCED_WIN = "and the win can no longer be stopped"  # neither at once nor by a fork
    BLOCK = "blocks the threat"  # the wrong move made a threat; the draw follows the block
    HOLDS = "holds the draw"  # the wrong move let a won game slip to a draw


@dataclass(frozen=True, slots=True)
class Refutation:
    """The opponent's best answer to a wrong move: the fastest win when the move lost, a move
    keeping the draw when it only let a win slip; ``replier_moves`` is how many moves of its
    own the opponent then needs to win, the reply counted (None for a draw)."""

    position: Board
    move: int
    reply: int
    reason: Reason
    replier_moves: int | None

    @property
    def sentence(self) -> str:
        """``"B3? C2 wins: C2 makes two threats at once."``, ``"B3? C2 completes a line."``,
        ``"B3? C2, and the win can no longer be stopped: O wins in 3."``, ``"B3? C2 blocks
        the threat: a draw."``, ``"B3? C2 holds the draw."``."""
        size = self.position.size
        wrong, reply = cell_name(self.move, size), cell_name(self.reply, size)
        replier = self.position.turn.other
        if self.reason is Reason.COMPLETES_LINE:
            return f"{wrong}? {reply} completes a line: {replier} wins."
        if self.reason is Reason.FORK:
            return f"{wrong}? {reply} wins: {reply} makes two threats at once."
        if self.reason is Reason.FORCED_WIN:
            return (
                f"{wrong}? {reply}, and the win can no longer be stopped: {replier} wins in "
                f"{self.replier_moves}."
            )
        if self.reason is Reason.BLOCK:
            return f"{wrong}? {reply} blocks the threat: a draw."
        return f"{wrong}? {reply} holds the draw."


@dataclass(frozen=True, slots=True)
class Reply:
    """The defender's answer to a right move: the longest resistance when the move wins (None
    once it completed a line), a move keeping the draw when it holds; ``moves_left`` is how
    many moves of its own the solver still needs after that answer (None for a draw)."""

    position: Board
    move: int
    answer: int | None
    moves_left: int | None

    @property
    def sentence(self) -> str:
        """``"C4 completes a line: X wins."``, ``"C4! O's longest defence is D4; X wins in 1
        more."``, ``"B3! The draw is held; X answers C2."``."""
        size = self.position.size
        right = cell_name(self.move, size)
        solver, defender = self.position.turn, self.position.turn.other
        if self.answer is None:
            return f"{right} completes a line: {solver} wins."
        answer = cell_name(self.answer, size)
        if self.moves_left is None:
            return f"{right}! The draw is held; {defender} answers {answer}."
        return (
            f"{right}! {defender}'s longest defence is {answer}; {solver} wins in "
            f"{self.moves_left} more."
        )


def refute(position: Board, wrong_move: int) -> Refutation:
    """The opponent's best answer to ``wrong_move`` in ``position`` and why it works, from the
    exact values. Raises ``ValueError`` when the move is not wrong: it ends the game, or it
    keeps a win, or it keeps a draw that was all the position held."""
    before = _position_value(position)
    after = position.play(wrong_move)
    name = cell_name(wrong_move, position.size)
    if after.is_over:
        raise ValueError(f"{name} ends the game: there is nothing to refute")
    replier_value = _position_value(after)
    if -replier_value >= before:
        raise ValueError(f"{name} keeps the position's value: there is nothing to refute")
    replier = after.turn
    if replier_value == 1:
        moves, reply = _fastest_win(after)
        replied = after.play(reply)
        if replied.winner is replier:
            reason = Reason.COMPLETES_LINE
        elif len(_completing_cells(replied, replier)) >= 2 and not _completing_cells(
            replied, replied.turn
        ):
            reason = Reason.FORK
        else:
            reason = Reason.FORCED_WIN
        return Refutation(position, wrong_move, reply, reason, moves)
    threats = _completing_cells(after, position.turn)
    if len(threats) == 1:
        # The wrong move made a threat, so the reply is the block; the draw is what is left.
        return Refutation(position, wrong_move, threats[0], Reason.BLOCK, None)
    return Refutation(position, wrong_move, _keeping_move(after), Reason.HOLDS, None)


def reply(position: Board, right_move: int) -> Reply:
    """The defender's best answer to ``right_move`` in ``position``: in a won position the
    longest resistance (the answer after which the solver needs the most moves; among equals a
    block of a threat first, then the lowest cell), in a drawn one a move that keeps the draw.
    Raises ``ValueError`` when the move loses value."""
    before = _position_value(position)
    after = position.play(right_move)
    if after.is_over:
        return Reply(position, right_move, None, None)
    if -_position_value(after) < before:
        raise ValueError(f"{cell_name(right_move, position.size)} loses value: it is no right move")
    if before == 1:
        lengths = {cell: _moves_to_win(after.play(cell)) or 0 for cell in after.legal_moves}
        longest = max(lengths.values())
        # Among equally long defences, a block reads as one: it answers a threat on the board.
        blocks = set(_completing_cells(after, position.turn))
        answer = min(
            (cell for cell, moves in lengths.items() if moves == longest),
            key=lambda cell: (cell not in blocks, cell),
        )
        return Reply(position, right_move, answer, longest)
    return Reply(position, right_move, _keeping_move(after), None)


# -- stepping through a puzzle's line ---------------------------------------------------------


class StepKind(Enum):
    """What one move of the solver's does to the puzzle, told as the member plays it."""

    SOLVED = "solved"  # the task is done: a WIN's line completed, or a HOLD's saving move
    GOES_ON = "goes on"  # right, in a WIN, with no line completed yet: the defender answers
    WRONG = "wrong"  # the move loses value: a win let slip, or the draw lost
    TOO_SLOW = "too slow"  # (WIN, after the first move) it still wins, but not within the count


# Each kind as it reads before "step", for Step's errors.
_STEP_KINDS = {
    StepKind.SOLVED: "solved",
    StepKind.GOES_ON: "going-on",
    StepKind.WRONG: "wrong",
    StepKind.TOO_SLOW: "too-slow",
}


@dataclass(frozen=True, slots=True)
class Step:
    """One move of the solver's in ``position`` and what it did, with what that kind needs to be
    told: the defender's :class:`Reply` to a right move (SOLVED, GOES_ON; for a HOLD the answer
    that keeps the draw), the :class:`Refutation` of a wrong one (WRONG), a move that still wins
    in time (``faster``, TOO_SLOW). ``remaining`` is how many moves of its own a WIN's solver
    still had before this one (N for the first move); None for a HOLD, which has no count.
    Construction checks that each kind comes with its own field and no other's."""

    kind: StepKind
    position: Board
    move: int
    reply: Reply | None = None
    refutation: Refutation | None = None
    faster: int | None = None
    remaining: int | None = None

    def __post_init__(self) -> None:
        self.position.parse_move(self.move)  # raises unless the move can be played there
        kind = _STEP_KINDS[self.kind]
        for field, needed, present in (
            ("a reply", self.kind in (StepKind.SOLVED, StepKind.GOES_ON), self.reply),
            ("a refutation", self.kind is StepKind.WRONG, self.refutation),
            ("a faster move", self.kind is StepKind.TOO_SLOW, self.faster),
        ):
            if needed and present is None:
                raise ValueError(f"a {kind} step needs {field}")
            if present is not None and not needed:
                raise ValueError(f"a {kind} step has no {field[2:]}, not {present!r}")
        if self.kind is StepKind.GOES_ON and self.reply is not None and self.reply.answer is None:
            raise ValueError("a step that completes a line is solved: it does not go on")

    @property
    def next_position(self) -> Board | None:
        """Where the solver plays next, after this move and the defender's answer: for a step
        that goes on only (None for every other kind: nothing follows them)."""
        if self.kind is not StepKind.GOES_ON or self.reply is None or self.reply.answer is None:
            return None
        return self.position.play(self.move).play(self.reply.answer)


def line_position(puzzle: Puzzle, moves: Sequence[int]) -> tuple[Board, int | None]:
    """The position after the solver's ``moves`` (cells), each followed by the defender's
    answer, and the moves the solver still has: N minus ``len(moves)`` for a WIN, None for a
    HOLD. The defender's answers are fixed (:func:`reply`), so the solver's moves are all the
    state a puzzle being solved needs to keep.

    Raises ``ValueError`` naming the first move that is not a right step that goes on: one
    that cannot be played, is wrong or too slow, or has solved the puzzle already; and any
    move at all for a HOLD, which its first move solves.

    >>> puzzle = Puzzle.from_line("4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2 C4")
    >>> position, remaining = line_position(puzzle, [parse_cell("C4", 4)])
    >>> str(position), remaining  # O blocked C2: X has D4 left, its last move
    ('.OX./OOO./O.X./XXX.', 1)
    """
    position, remaining = puzzle.board, puzzle.moves
    size = position.size
    if puzzle.task is Task.HOLD and moves:
        raise ValueError(
            f"the line's move 1, {_cell_text(moves[0], size)}: a hold puzzle is done in one "
            "move, so no move comes before the one asked"
        )
    for number, move in enumerate(moves, 1):
        cell = _legal_cell(position, move, f"the line's move {number}: ")
        if number == 1:
            done = _first_step(puzzle, cell)
        else:
            assert remaining is not None  # a WIN: a HOLD has no line past its first move
            done = _later_step(position, remaining, cell)
        following = done.next_position
        if following is None:
            raise ValueError(
                f"the line's move {number}, {cell_name(cell, size)}, {_why_it_stops(done)}"
            )
        position = following
        remaining = None if remaining is None else remaining - 1
    return position, remaining


def step(puzzle: Puzzle, moves: Sequence[int], cell: int) -> Step:
    """What the solver's ``cell`` does after its ``moves`` (see :func:`line_position`).

    The first move is right only when it is the puzzle's solution: in a WIN it goes on (or is
    solved, when it completes a line), in a HOLD it is solved. Every other first move is wrong,
    since a proven puzzle has one right answer. After it (WIN only), a move that completes a
    line is solved; one that keeps the win goes on when it still wins within the moves left
    (its own and the longest defence's count), else it is too slow and a move that does is
    given; one that lets the win slip is wrong.

    Raises ``ValueError`` for ``moves`` that are no line (:func:`line_position`) and for a
    ``cell`` that cannot be played, with the board's sentence (not its grid: the bot shows the
    board). The puzzle is taken as proven (:func:`verify`); on a false one a refutation or a
    reply may find nothing to answer and raise ``ValueError`` too.

    >>> puzzle = Puzzle.from_line("4w-f8fe2513 .OX./OO../O.X./XX.. k4 X win2 C4")
    >>> step(puzzle, [], parse_cell("C4", 4)).reply.sentence
    "C4! O's longest defence is C2; X wins in 1 more."
    >>> step(puzzle, [parse_cell("C4", 4)], parse_cell("D4", 4)).kind
    <StepKind.SOLVED: 'solved'>
    """
    position, remaining = line_position(puzzle, moves)
    played = _legal_cell(position, cell)
    if not moves:
        return _first_step(puzzle, played)
    assert remaining is not None  # line_position takes no moves for a HOLD
    return _later_step(position, remaining, played)


def _first_step(puzzle: Puzzle, cell: int) -> Step:
    """The first move: a proven puzzle has exactly one right answer, its solution, so every
    other move loses value and has a refutation."""
    position = puzzle.board
    if cell != puzzle.solution:
        return Step(
            StepKind.WRONG,
            position,
            cell,
            refutation=refute(position, cell),
            remaining=puzzle.moves,
        )
    right = reply(position, cell)
    done = puzzle.task is Task.HOLD or right.answer is None
    kind = StepKind.SOLVED if done else StepKind.GOES_ON
    return Step(kind, position, cell, reply=right, remaining=puzzle.moves)


def _later_step(position: Board, remaining: int, cell: int) -> Step:
    """A WIN's move after the first, in ``position``, with ``remaining`` moves of the solver's
    left. The line so far was right, so ``position`` is won: a move is wrong unless it keeps
    the win."""
    after = position.play(cell)
    if after.winner is position.turn:
        return Step(
            StepKind.SOLVED, position, cell, reply=reply(position, cell), remaining=remaining
        )
    if -_position_value(after) < 1:
        return Step(
            StepKind.WRONG, position, cell, refutation=refute(position, cell), remaining=remaining
        )
    right = reply(position, cell)
    if 1 + (right.moves_left or 0) <= remaining:
        return Step(StepKind.GOES_ON, position, cell, reply=right, remaining=remaining)
    faster = _fastest_win(position)[1]
    return Step(StepKind.TOO_SLOW, position, cell, faster=faster, remaining=remaining)


def _legal_cell(position: Board, cell: int, where: str = "") -> int:
    """``cell``, when it can be played in ``position``; else a ``ValueError`` with the board's
    sentence after ``where``, without its grid (whoever asked shows the board)."""
    try:
        return position.parse_move(cell)
    except GameError as error:
        raise ValueError(f"{where}{_first_line(error)}") from None


def _cell_text(cell: int, size: int) -> str:
    """A cell's name, or the index as given when it names no cell (for an error message)."""
    try:
        return cell_name(cell, size)
    except ValueError:
        return f"cell index {cell}"


def _why_it_stops(done: Step) -> str:
    """Why a step in a line given as played does not go on, after its number and cell."""
    size = done.position.size
    if done.refutation is not None:
        return f"is wrong: {done.refutation.sentence}"
    if done.faster is not None:
        left = f"{done.remaining} move{'' if done.remaining == 1 else 's'}"
        return (
            f"is too slow: it wins, but not within the {left} left; "
            f"{cell_name(done.faster, size)} does"
        )
    return "solves the puzzle: no move follows it"


# -- python -m game.puzzles build|verify ------------------------------------------------------

# What the shipped pool holds: (size, WIN puzzles by N, HOLD puzzles), and the seed it comes
# from. The 4x4 quotas are more than its games give: they reach a win in 3 about once in 500
# games, never one in 4, and a hold past the filters about once in 5,000 (4x4 is so drawn that
# a lone saving move is almost always a block), so 4x4 gives mostly wins in 2 and 5x5 the rest.
POOL_PLAN: tuple[tuple[int, dict[int, int], int], ...] = (
    (4, {2: 60, 3: 20}, 20),
    (5, {2: 50, 3: 50, 4: 40}, 100),
)
POOL_SEED = 1


def build(path: Path, seed: int) -> None:
    """Generate the pool of :data:`POOL_PLAN` from ``seed``, prove it whole, and write it to
    ``path`` under a header saying how it was made."""
    started = time.perf_counter()
    rng = random.Random(seed)
    puzzles: list[Puzzle] = []
    counts = []
    for size, wins, holds in POOL_PLAN:
        made = generate(size, rng, wins, holds)
        puzzles.extend(made)
        by_task = Counter(
            f"win in {puzzle.moves}" if puzzle.task is Task.WIN else "hold" for puzzle in made
        )
        counts.append(
            f"{size}x{size}: "
            + ", ".join(f"{count} {kind}" for kind, count in sorted(by_task.items()))
        )
        print(f"{counts[-1]} ({time.perf_counter() - started:.0f} s)", flush=True)
    verify_pool(puzzles)
    header = [
        f"# tttbot puzzles: made by `python -m game.puzzles build --seed {seed}`, "
        f"{len(puzzles)} in all ({'; '.join(counts)}).",
        "# Each was found along seeded games between random, casual and smart players and",
        "# proven by the exact solver (`python -m game.puzzles verify` proves them all again).",
        f"# One a line: {_LINE_FIELDS}.",
    ]
    path.write_text("\n".join([*header, *(puzzle.line() for puzzle in puzzles)]) + "\n")
    print(f"wrote {len(puzzles)} puzzles to {path} in {time.perf_counter() - started:.0f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m game.puzzles", description=__doc__)
    parser.add_argument("command", choices=["build", "verify"])
    parser.add_argument("--path", type=Path, default=POOL_PATH, help="the pool file")
    parser.add_argument("--seed", type=int, default=POOL_SEED, help="build: the games' seed")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.path, args.seed)
        return 0
    started = time.perf_counter()
    try:
        puzzles = load_pool(args.path)
        verify_pool(puzzles)
    except ValueError as error:
        print(f"not proven: {error}", file=sys.stderr)
        return 1
    print(f"verified {len(puzzles)} puzzles in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
