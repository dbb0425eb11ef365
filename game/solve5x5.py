"""``python -m game.solve5x5 build|wins|verify|check``: make the 5x5 opening book and its
fastest wins, or prove them and ``minimax``.

``build`` solves, with the exact search (:mod:`game.exact`), every position the book holds (see
:mod:`game.book5x5`) and writes ``game/data/book_5x5.xz``. ``wins`` finds, for every won
position of the book with at most :data:`~game.book5x5.WINS_UP_TO` marks, how many moves the
win takes and every move that wins that fast, and writes ``game/data/book_5x5_wins.txt``.
``verify`` re-reads the shipped book and checks every entry against a fresh exact search: its
value, that its move keeps it, and in a won position that the move is one of the fastest wins;
that the book holds every position ``minimax`` can meet in its opening; and every fastest win
shipped, and that every won position it promises is there. ``check`` plays the levels against
``minimax`` and checks every 5x5 choice ``minimax`` makes against the exact search: every
position it can meet up to ``--plies`` marks, as X and as O, and ``--games`` seeded games
against each level. It lives apart from :mod:`game.book5x5` because it needs the strategies,
which themselves need the book.
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
    WINS_PATH,
    WINS_UP_TO,
    FastestWins,
    OpeningBook,
    canonical,
    fastest_wins_table,
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


def won_positions(book: OpeningBook) -> list[int]:
    """The keys of the book's won positions with at most :data:`WINS_UP_TO` marks: those
    :func:`game.book5x5.fastest_wins` holds."""
    return sorted(
        key
        for key, (value, _) in book.records().items()
        if value == 1 and key.bit_count() <= WINS_UP_TO
    )


def fastest_wins_of(solver: ExactSolver, key: int) -> tuple[int, int]:
    """How many moves the win of the book's won position ``key`` takes, and the mask of every
    move that wins that fast, in the key's orientation (a :class:`FastestWins` record)."""
    board = board_of_key(key)
    moves = solver.moves_to_win(board)
    assert moves is not None, f"{board}: the book says won, the search does not"
    cells = sum(1 << cell for cell in board.legal_moves if solver.wins_within(board, cell, moves))
    return moves, cells


def build_wins(output: Path, book: OpeningBook) -> None:
    started = time.perf_counter()
    solver = _solver()
    keys = won_positions(book)
    entries = {}
    for done, key in enumerate(keys, 1):
        entries[key] = fastest_wins_of(solver, key)
        if done % 20 == 0:
            print(f"{done} of {len(keys)} in {time.perf_counter() - started:.0f} s", flush=True)
    header = (
        f"# tttbot: the fastest wins of the 5x5 opening book's {len(entries)} won positions of "
        f"at most {WINS_UP_TO} marks,\n"
        "# made by `python -m game.solve5x5 wins` (`verify` checks them against the search).\n"
        "# One a line: the canonical key (the side to move's cells in the low 25 bits), the\n"
        "# moves of its own the side to move needs, and the mask of the cells that win so fast.\n"
    )
    output.write_text(header + FastestWins.format(entries), encoding="utf-8")
    print(f"wrote {output} ({len(entries)} positions) in {time.perf_counter() - started:.0f} s")


def verify_wins(book: OpeningBook, wins: FastestWins, keys: list[int] | None = None) -> int:
    """Check ``wins`` against a fresh exact search, every entry or those of ``keys``, and that
    it holds every won position it promises to and no other; raises AssertionError at the
    first disagreement. Returns how many entries were checked."""
    solver = _solver()
    records = wins.records()
    assert sorted(records) == won_positions(book), "not exactly the book's won positions"
    checked = sorted(records) if keys is None else keys
    for key in checked:
        found = fastest_wins_of(solver, key)
        assert records[key] == found, f"{board_of_key(key)}: stored {records[key]}, not {found}"
    return len(checked)


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
    parser.add_argument("command", choices=["build", "wins", "verify", "check"])
    parser.add_argument(
        "--output", type=Path, help="where build writes the book, or wins the fastest wins"
    )
    parser.add_argument("--plies", type=int, default=5, help="check: minimax's positions")
    parser.add_argument("--all-plies", type=int, default=3, help="check: every position")
    parser.add_argument("--games", type=int, default=100, help="check: games a level and side")
    parser.add_argument("--seed", type=int, default=1, help="check: the games' seed")
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.output or BOOK_PATH)
    elif args.command == "wins":
        build_wins(args.output or WINS_PATH, opening_book())
    elif args.command == "verify":
        started = time.perf_counter()
        checked = verify(opening_book())
        print(
            f"verified {checked:,} entries in {time.perf_counter() - started:.0f} s: every value "
            "exact, every move keeps it, every position minimax meets in its opening is there"
        )
        started = time.perf_counter()
        checked = verify_wins(opening_book(), fastest_wins_table())
        print(
            f"verified the fastest wins of {checked:,} won positions in "
            f"{time.perf_counter() - started:.0f} s"
        )
    else:
        check(args.plies, args.all_plies, args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
