"""The 5x5 opening book (4 in a row): exact values and a move that keeps each, shipped as package
data, for the first moves, where the exact search (:mod:`game.exact`) can take seconds.

It holds every position of at most :data:`FULL_UP_TO` marks, and the positions ``minimax`` can
meet up to :data:`MINIMAX_UP_TO` marks, playing either side: there its own moves are the book's,
so only the opponent's moves branch, and the book stays small. Each position is stored once, by
its canonical image under the board's eight symmetries, with its value for the side to move
(+1, 0, -1) and a move that keeps it (in a won position one of the fastest wins), as the exact
search found them.

Its won positions of at most :data:`WINS_UP_TO` marks also have all their fastest wins and how
many moves those take (:func:`fastest_wins`, ``game/data/book_5x5_wins.txt``): there the search
for them takes a second or more, and a drill's refutation says both (:func:`game.puzzles.refute`).

    python -m game.solve5x5 build    # solve the positions, write game/data/book_5x5.xz
    python -m game.solve5x5 wins     # find the fastest wins, write game/data/book_5x5_wins.txt
    python -m game.solve5x5 verify   # re-solve every position and check both against it

Only the lookup is here, so that importing the engine stays cheap; making and checking the book
is in :mod:`game.solve5x5`.

>>> from game.board import Board
>>> book_entry(Board(5))  # the empty board is a draw
(0, 12)
"""

from __future__ import annotations

import functools
import lzma
from pathlib import Path

from game.board import Board, geometry
from game.symmetry import BoardSymmetry

__all__ = [
    "BOOK_FILE",
    "BOOK_PATH",
    "FULL_UP_TO",
    "LINE_LENGTH",
    "MINIMAX_UP_TO",
    "RECORD_BYTES",
    "SIZE",
    "WINS_FILE",
    "WINS_PATH",
    "WINS_UP_TO",
    "FastestWins",
    "OpeningBook",
    "book_entry",
    "canonical",
    "fastest_wins",
    "fastest_wins_table",
    "opening_book",
    "to_canonical",
]

SIZE = 5
LINE_LENGTH = 4
BOOK_FILE = "book_5x5.xz"
BOOK_PATH = Path(__file__).parent / "data" / BOOK_FILE
# Every position with at most this many marks is in the book.
FULL_UP_TO = 4
# And every position minimax can meet, as X or as O, with at most this many marks.
MINIMAX_UP_TO = 5
WINS_FILE = "book_5x5_wins.txt"
WINS_PATH = Path(__file__).parent / "data" / WINS_FILE
# Every won position of the book with at most this many marks has its fastest wins there too.
# With more marks the search finds them in a fraction of a second (bench.engine's drill answers).
WINS_UP_TO = 3
# A record: the canonical key (X-to-move's mask, then the other's, 25 bits each: 7 bytes), then
# one byte: the move (in the canonical image's orientation) times 4, plus the value's code.
RECORD_BYTES = 8
_KEY_BYTES = 7
_VALUE_OF_CODE = (0, 1, -1)
CODE_OF_VALUE = {0: 0, 1: 1, -1: 2}
_CELLS = SIZE * SIZE


@functools.cache
def _symmetry() -> BoardSymmetry:
    return BoardSymmetry(geometry(SIZE, LINE_LENGTH))


@functools.cache
def _inverse_permutations() -> tuple[tuple[int, ...], ...]:
    inverses = []
    for permutation in _symmetry().permutations:
        inverse = [0] * _CELLS
        for cell, target in enumerate(permutation):
            inverse[target] = cell
        inverses.append(tuple(inverse))
    return tuple(inverses)


def canonical(mine: int, theirs: int) -> tuple[int, int]:
    """The key of the position where ``mine`` is to move against ``theirs`` (the smallest of its
    eight images, ``mine`` in the low bits), and which symmetry gives it."""
    symmetry = _symmetry()
    keys = [
        image_mine | image_theirs << _CELLS
        for image_mine, image_theirs in zip(
            symmetry.all_images(mine), symmetry.all_images(theirs), strict=True
        )
    ]
    key = min(keys)
    return key, keys.index(key)


def to_canonical(symmetry: int, cell: int) -> int:
    """Where ``cell`` goes in the canonical image that ``symmetry`` (from :func:`canonical`)
    makes of its position."""
    return _symmetry().permutations[symmetry][cell]


def _split(board: Board) -> tuple[int, int]:
    x_mask, o_mask = board.masks
    return (x_mask, o_mask) if board.turn.value == "X" else (o_mask, x_mask)


class OpeningBook:
    """Positions' exact values and a move keeping each, by canonical key."""

    def __init__(self, entries: dict[int, tuple[int, int]]) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, board: Board) -> tuple[int, int] | None:
        """``board``'s value for the side to move and a move that keeps it (a cell of ``board``
        itself), or None when the book does not hold it."""
        if (board.size, board.line_length) != (SIZE, LINE_LENGTH):
            return None
        key, symmetry = canonical(*_split(board))
        found = self._entries.get(key)
        if found is None:
            return None
        value, move = found
        return value, _inverse_permutations()[symmetry][move]

    def records(self) -> dict[int, tuple[int, int]]:
        """Every stored entry, key to (value, move in the key's orientation): for the checks."""
        return dict(self._entries)

    @staticmethod
    def pack(entries: dict[int, tuple[int, int]]) -> bytes:
        """The records, sorted by key, as the shipped file holds them before compression."""
        return b"".join(
            key.to_bytes(_KEY_BYTES, "little") + bytes([move << 2 | CODE_OF_VALUE[value]])
            for key, (value, move) in sorted(entries.items())
        )

    @classmethod
    def unpack(cls, packed: bytes) -> OpeningBook:
        if len(packed) % RECORD_BYTES:
            raise ValueError(
                f"an opening book is whole records of {RECORD_BYTES} bytes, not {len(packed)}"
            )
        entries = {}
        for start in range(0, len(packed), RECORD_BYTES):
            key = int.from_bytes(packed[start : start + _KEY_BYTES], "little")
            last = packed[start + _KEY_BYTES]
            entries[key] = (_VALUE_OF_CODE[last & 3], last >> 2)
        return cls(entries)


@functools.cache
def opening_book() -> OpeningBook:
    """The shipped book, read once, on first use."""
    return OpeningBook.unpack(lzma.decompress(BOOK_PATH.read_bytes()))


def book_entry(board: Board) -> tuple[int, int] | None:
    """The shipped book's (value, move) for ``board``, or None when it does not hold it."""
    return opening_book().entry(board)


class FastestWins:
    """Won positions' fastest wins, by canonical key: how many moves of its own the side to
    move needs against the longest defence, and every move that wins that fast (a mask of
    cells, in the key's orientation)."""

    def __init__(self, entries: dict[int, tuple[int, int]]) -> None:
        self._entries = entries

    def __len__(self) -> int:
        return len(self._entries)

    def entry(self, board: Board) -> tuple[int, tuple[int, ...]] | None:
        """How many moves ``board``'s side to move needs to win, and the cells of ``board``
        that win that fast, in ascending order; None when the table does not hold it."""
        if (board.size, board.line_length) != (SIZE, LINE_LENGTH):
            return None
        key, symmetry = canonical(*_split(board))
        found = self._entries.get(key)
        if found is None:
            return None
        moves, cells = found
        inverse = _inverse_permutations()[symmetry]
        return moves, tuple(sorted(inverse[cell] for cell in range(_CELLS) if cells >> cell & 1))

    def records(self) -> dict[int, tuple[int, int]]:
        """Every stored entry, key to (moves, mask of cells in the key's orientation)."""
        return dict(self._entries)

    @staticmethod
    def format(entries: dict[int, tuple[int, int]]) -> str:
        """The records, sorted by key, one a line as the shipped file holds them: the key, the
        moves and the mask, in hexadecimal, decimal and hexadecimal."""
        return "".join(
            f"{key:x} {moves} {cells:x}\n" for key, (moves, cells) in sorted(entries.items())
        )

    @classmethod
    def parse(cls, text: str) -> FastestWins:
        """Read :meth:`format`'s lines; blank lines and lines starting with ``#`` are skipped."""
        entries = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 3:
                raise ValueError(f"{WINS_FILE} line {number}: not a key, a count and a mask")
            entries[int(fields[0], 16)] = (int(fields[1]), int(fields[2], 16))
        return cls(entries)


@functools.cache
def fastest_wins_table() -> FastestWins:
    """The shipped fastest wins, read once, on first use."""
    return FastestWins.parse(WINS_PATH.read_text(encoding="utf-8"))


def fastest_wins(board: Board) -> tuple[int, tuple[int, ...]] | None:
    """For a won position of the book with at most :data:`WINS_UP_TO` marks: how many moves of
    its own the side to move needs against the longest defence, and every cell that wins that
    fast; None for any other position."""
    return fastest_wins_table().entry(board)
