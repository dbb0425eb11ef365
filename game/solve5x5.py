"""``python -m game.solve5x5 build|verify|check``: make the 5x5 opening book, or prove it and
``minimax``.

``build`` solves, with the exact search (:mod:`game.exact`), every position the book holds (see
:mod:`game.book5x5`) and writes ``game/data/book_5x5.xz``. ``verify`` re-reads the shipped book
and checks every entry against a fresh exact search: its value, that its move keeps it, and in
a won position that the move is one of the fastest wins; and that the book holds every position
``minimax`` can meet in its opening. ``check`` plays the levels against ``minimax`` and checks
every 5x5 choice ``minimax`` makes against the exact search: every position it can meet up to
``--plies`` marks, as X and as O, and ``--games`` seeded games against each level. It lives
apart from :mod:`game.book5x5` because it needs the strategies, which themselves need the book.
"""

from __future__ import annotations

import argparse
import lzma
import random
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from game.ai import STRATEGIES, MinimaxStrategy, get_strategy
from game.board import Board, Mark, cell_name, geometry
from game.book5x5 import (
    BOOK_PATH,
    FULL_UP_TO,
    LINE_LENGTH,
    MINIMAX_UP_TO,
    SIZE,
    OpeningBook,
    canonical,
    opening_book,
    to_canonical,
)
from game.exact import ExactSolver

# The build keeps more of what it proved than a move does: it solves thousands of related
# positions in one run (about 4 GB at most).
_BUILD_TABLE_LIMIT = 8_000_000
_Entries = dict[int, tuple[int, int]]


def _solver() -> ExactSolver:
    return ExactSolver(geometry(SIZE, LINE_LENGTH), table_limit=_BUILD_TABLE_LIMIT)


def _split(board: Board) -> tuple[int, int]:
    x_mask, o_mask = board.masks
    return (x_mask, o_mask) if board.turn is Mark.X else (o_mask, x_mask)


def board_of_key(key: int) -> Board:
    """The position a book key stands for (its canonical image): the side to move's cells are
    the low 25 bits, and the counts say which side that is."""
    cells = SIZE * SIZE
    mine, theirs = key & ((1 << cells) - 1), key >> cells
    x_to_move = mine.bit_count() == theirs.bit_count()
    x_mask, o_mask = (mine, theirs) if x_to_move else (theirs, mine)
    return Board.from_masks(x_mask, o_mask, SIZE, LINE_LENGTH)


def positions_up_to(marks: int) -> Iterator[Board]:
    """Every position with at most ``marks`` marks, once up to symmetry (canonical images),
    fewest marks first."""
    level = {canonical(0, 0)[0]}
    for count in range(marks + 1):
        following = set()
        for key in sorted(level):
            board = board_of_key(key)
            yield board
            if count < marks and not board.is_over:
                for cell in board.legal_moves:
                    following.add(canonical(*_split(board.play(cell)))[0])
        level = following


class _Builder:
    """Solves the book's positions, remembering each by key so that none is solved twice."""

    def __init__(self, solver: ExactSolver, log: Callable[[str], None]) -> None:
        self.solver = solver
        self.entries: _Entries = {}
        self.log = log
        self.started = time.perf_counter()

    def add(self, board: Board, value: int, move: int) -> None:
        key, symmetry = canonical(*_split(board))
        self.entries[key] = (value, to_canonical(symmetry, move))

    def decide(self, board: Board) -> tuple[int, int]:
        """The book's entry for ``board`` in ``board``'s orientation, solving it if new."""
        found = OpeningBook(self.entries).entry(board)
        if found is None:
            value, move = self.solver.best_moves(board)
            self.add(board, value, move)
            found = (value, move)
            if len(self.entries) % 200 == 0:
                self.log(
                    f"{len(self.entries):,} positions in {time.perf_counter() - self.started:.0f}"
                    f" s ({self.solver.nodes:,} nodes)"
                )
        return found

    def walk(self, board: Board, side: Mark, seen: set[int]) -> None:
        """Every position ``minimax`` playing ``side`` meets from ``board`` on, up to
        :data:`MINIMAX_UP_TO` marks: its own moves from the book, every reply of the
        opponent's."""
        if board.is_over or board.move_count > MINIMAX_UP_TO:
            return
        key = canonical(*_split(board))[0]
        if key in seen:
            return
        seen.add(key)
        if board.turn is side:
            _, move = self.decide(board)
            self.walk(board.play(move), side, seen)
            return
        # The opponent's position: each reply's value is the negated value of minimax's
        # position after it, so the book gets the position's value and a keeping reply free.
        children: dict[int, int] = {}
        for cell in self.solver.ordered_moves(board) + list(board.legal_moves):
            if cell in children:
                continue
            child = board.play(cell)
            if child.move_count > MINIMAX_UP_TO:
                return  # its replies are past the book: no entry for this position
            self.walk(child, side, seen)
            if child.is_over:
                children[cell] = 1 if child.winner is not None else 0
            else:
                found = OpeningBook(self.entries).entry(child)
                assert found is not None
                children[cell] = -found[0]
        best = max(children.values())
        if best == 1 or key in self.entries:
            return  # a won position (none here) and one already solved keep the solver's move
        keeping = next(cell for cell, value in children.items() if value == best)
        self.add(board, best, keeping)


def build_entries(log: Callable[[str], None] = print) -> _Entries:
    """Solve every position the book holds: all those with at most :data:`FULL_UP_TO` marks,
    then those ``minimax`` meets as X and as O up to :data:`MINIMAX_UP_TO` marks."""
    builder = _Builder(_solver(), log)
    for board in positions_up_to(FULL_UP_TO):
        if not board.is_over:
            builder.decide(board)
    for side in (Mark.X, Mark.O):
        builder.walk(Board(SIZE, LINE_LENGTH), side, set())
        log(f"minimax as {side}: {len(builder.entries):,} positions so far")
    return builder.entries


def build(output: Path) -> None:
    started = time.perf_counter()
    entries = build_entries()
    packed = OpeningBook.pack(entries)
    compressed = lzma.compress(packed, preset=9 | lzma.PRESET_EXTREME)
    output.write_bytes(compressed)
    print(
        f"wrote {output} ({len(entries):,} positions, {len(compressed):,} bytes) in "
        f"{time.perf_counter() - started:.0f} s"
    )


def minimax_positions(
    choose: Callable[[Board], int], side: Mark, marks: int
) -> Iterator[tuple[Board, int]]:
    """Every position ``choose``, playing ``side``, meets up to ``marks`` marks, once up to
    symmetry, with the move it chose there; the opponent's positions are walked through with
    every reply."""
    seen: set[int] = set()
    stack = [Board(SIZE, LINE_LENGTH)]
    while stack:
        board = stack.pop()
        if board.is_over or board.move_count > marks:
            continue
        key = canonical(*_split(board))[0]
        if key in seen:
            continue
        seen.add(key)
        if board.turn is side:
            choice = choose(board)
            yield board, choice
            stack.append(board.play(choice))
        else:
            stack.extend(board.play(cell) for cell in board.legal_moves)


def verify(book: OpeningBook, log: Callable[[str], None] = print) -> int:
    """Check every entry of ``book`` against a fresh exact search, and that it holds every
    position it promises to; raises AssertionError at the first disagreement. Returns how
    many entries were checked."""
    solver = _solver()
    records = book.records()
    started = time.perf_counter()
    for checked, key in enumerate(sorted(records), 1):
        board = board_of_key(key)
        value, move = records[key]
        assert value == solver.value(board), f"{board}: stored value {value} is wrong"
        assert move in board.legal_moves, f"{board}: stored move {move} cannot be played"
        assert -solver.value(board.play(move)) == value, f"{board}: {move} loses value"
        if value == 1:
            assert solver.is_fastest_win(board, move), f"{board}: {move} is not a fastest win"
        if checked % 500 == 0:
            log(f"{checked:,} entries checked in {time.perf_counter() - started:.0f} s")
    for board in positions_up_to(FULL_UP_TO):
        assert board.is_over or book.entry(board) is not None, f"{board} is missing"

    def from_book(board: Board) -> int:
        found = book.entry(board)
        assert found is not None, f"{board}: minimax's position is missing"
        return found[1]

    for side in (Mark.X, Mark.O):
        for _ in minimax_positions(from_book, side, MINIMAX_UP_TO):
            pass
    return len(records)


def _check_choice(solver: ExactSolver, board: Board, choice: int) -> None:
    value = solver.value(board)
    after = -solver.value(board.play(choice))
    assert after == value, f"{board}: minimax plays {cell_name(choice, SIZE)}, {value} -> {after}"
    if value == 1:
        assert solver.is_fastest_win(board, choice), f"{board}: {choice} is not a fastest win"


class _Timed:
    """``minimax``'s choices, each by a fresh strategy (as the bot makes one a move, so nothing
    carries over from the positions before), with the time each took."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seconds: list[float] = []
        self.slowest = Board(SIZE, LINE_LENGTH)
        self.longest = 0.0

    def choose(self, board: Board) -> int:
        minimax = MinimaxStrategy(random.Random(self.rng.random()))
        started = time.perf_counter()
        choice = minimax.choose(board)
        elapsed = time.perf_counter() - started
        if elapsed > self.longest:
            self.slowest, self.longest = board, elapsed
        self.seconds.append(elapsed)
        return choice

    def summary(self) -> str:
        ordered = sorted(self.seconds)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        return (
            f"a choice: median {ordered[len(ordered) // 2] * 1000:.2f} ms, "
            f"p99 {p99 * 1000:.2f} ms, slowest {self.longest * 1000:.1f} ms ({self.slowest})"
        )


def check(plies: int, all_plies: int, games: int, seed: int) -> None:
    """``minimax``'s 5x5 choices against the exact search (see the module)."""
    solver = ExactSolver(geometry(SIZE, LINE_LENGTH))
    started = time.perf_counter()
    timed = _Timed(seed)
    for board in positions_up_to(all_plies):
        if not board.is_over:
            _check_choice(solver, board, timed.choose(board))
            if len(timed.seconds) % 5000 == 0:
                print(
                    f"{len(timed.seconds):,} positions checked "
                    f"({time.perf_counter() - started:.0f} s)"
                )
    print(
        f"every position up to {all_plies} marks: {len(timed.seconds):,} choices keep the value "
        f"({time.perf_counter() - started:.0f} s); {timed.summary()}"
    )
    for side in (Mark.X, Mark.O):
        started, timed = time.perf_counter(), _Timed(seed)
        for board, choice in minimax_positions(timed.choose, side, plies):
            _check_choice(solver, board, choice)
        print(
            f"minimax as {side}, every position it meets up to {plies} marks: "
            f"{len(timed.seconds):,} choices keep the value "
            f"({time.perf_counter() - started:.0f} s); {timed.summary()}"
        )
    started, timed = time.perf_counter(), _Timed(seed)
    rng = random.Random(seed)
    lost = 0
    for opponent in STRATEGIES:
        for side in (Mark.X, Mark.O):
            for _ in range(games):
                other = get_strategy(opponent, rng)
                board = Board(SIZE, LINE_LENGTH)
                while not board.is_over:
                    if board.turn is side:
                        choice = timed.choose(board)
                        _check_choice(solver, board, choice)
                    else:
                        choice = other.choose(board)
                    board = board.play(choice)
                lost += board.winner is side.other
    assert not lost, f"minimax lost {lost} games"
    print(
        f"{games} games as X and as O against each level: {len(timed.seconds):,} choices keep "
        f"the value, no game lost ({time.perf_counter() - started:.0f} s); {timed.summary()}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m game.solve5x5", description=__doc__)
    parser.add_argument("command", choices=["build", "verify", "check"])
    parser.add_argument(
        "--output", type=Path, default=BOOK_PATH, help="where build writes the book"
    )
    parser.add_argument("--plies", type=int, default=5, help="check: minimax's positions")
    parser.add_argument("--all-plies", type=int, default=3, help="check: every position")
    parser.add_argument("--games", type=int, default=100, help="check: games a level and side")
    parser.add_argument("--seed", type=int, default=1, help="check: the games' seed")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.output)
    elif args.command == "verify":
        started = time.perf_counter()
        checked = verify(opening_book())
        print(
            f"verified {checked:,} entries in {time.perf_counter() - started:.0f} s: every value "
            "exact, every move keeps it, every position minimax meets in its opening is there"
        )
    else:
        check(args.plies, args.all_plies, args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
