"""Ultimate tic-tac-toe's rules (game/ultimate.py): hand-made positions, and property tests over
random games checked against a plain re-reading of the rules on the 9x9 grid."""

from __future__ import annotations

import doctest
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import game
import game.ultimate
from game import (
    ULTIMATE,
    GameError,
    IllegalMoveError,
    InvalidCellError,
    Mark,
    UltimateBoard,
    parse_ultimate_cell,
    small_board_cells,
    small_board_name,
    small_board_of,
    ultimate_cell_name,
)

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def at(small: int, local: int) -> int:
    """The grid cell of cell ``local`` (0..8, row-major) of small board ``small``."""
    return small_board_cells(small)[local]


def play(*pairs: tuple[int, int]) -> UltimateBoard:
    return UltimateBoard.from_moves(at(small, local) for small, local in pairs)


# X takes the middle row of the top-left board (cells 3, 4, 5) on its fourth move; O's replies
# each send it back there.
X_WINS_TOP_LEFT = ((1, 0), (0, 0), (0, 3), (3, 0), (0, 4), (4, 0), (0, 5))

# The bottom-right board filled without a line (X O X / X O O / O X X), each of its cells played
# in turn by X and O: X plays there, O answers in the board it was sent to, sending X to a third
# board, where X sends O back to the bottom-right one (and so on, each outside board getting at
# most two marks). The 25th move fills it and sends O there.
_DETOURS = (1, 2, 3, 4, 5, 6, 7, 0)
_ORDER = (0, 1, 2, 4, 3, 5, 7, 6)  # the bottom-right board's cells, in the order played
FILL_BOTTOM_RIGHT: tuple[tuple[int, int], ...] = (
    *(
        pair
        for local, detour in zip(_ORDER, _DETOURS, strict=True)
        for pair in ((8, local), (local, detour), (detour, 8))
    ),
    (8, 8),
)


# A game X wins on the diagonal of small boards (top-left, centre, bottom-right) at move 21.
X_WINS_DIAGONAL = [
    "D6",
    "A7",
    "A2",
    "B5",
    "F6",
    "G7",
    "C2",
    "G4",
    "B2",
    "E5",
    "E6",
    "E7",
    "E1",
    "E2",
    "B7",
    "F3",
    "G9",
    "C9",
    "I7",
    "I3",
    "H8",
]
# A game drawn at move 35 with two small boards still open (found by seeded random play).
DRAWN_EARLY = [
    "A1",
    "B2",
    "D4",
    "C1",
    "G2",
    "C5",
    "H5",
    "F6",
    "H7",
    "E1",
    "F2",
    "H6",
    "D8",
    "A5",
    "B5",
    "F5",
    "H4",
    "F1",
    "H2",
    "F4",
    "I2",
    "I4",
    "I7",
    "C9",
    "G7",
    "A3",
    "A7",
    "B9",
    "E8",
    "A9",
    "F8",
    "G5",
    "C6",
    "I6",
    "A4",
]


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(game.ultimate, verbose=False)
    assert tried > 0
    assert failures == 0


def test_the_variant_is_named_ultimate() -> None:
    assert ULTIMATE == "ultimate"


def test_cell_names_on_the_9x9_grid() -> None:
    assert [ultimate_cell_name(cell) for cell in (0, 8, 40, 72, 80)] == [
        "A1",
        "I1",
        "E5",
        "A9",
        "I9",
    ]
    assert [parse_ultimate_cell(name) for name in ("A1", "i1", " e5 ", "A9", "I9")] == [
        0,
        8,
        40,
        72,
        80,
    ]
    for cell in range(81):
        assert parse_ultimate_cell(ultimate_cell_name(cell)) == cell
    with pytest.raises(ValueError, match="cell index 81 is off the 9x9 grid"):
        ultimate_cell_name(81)


@pytest.mark.parametrize("text", ["", "J1", "A0", "A10", "5", "E 5", "EE", "E5!", "\u0661"])
def test_anything_but_a_grid_cell_is_refused_quoting_it(text: str) -> None:
    with pytest.raises(InvalidCellError) as caught:
        parse_ultimate_cell(text)
    assert str(caught.value) == (
        f'"{text}" is not a cell: use a column letter A-I and a row number 1-9, like E5'
    )
    assert caught.value.text == text
    assert isinstance(caught.value, GameError)


def test_small_boards_their_cells_and_names() -> None:
    assert small_board_cells(0) == (0, 1, 2, 9, 10, 11, 18, 19, 20)
    assert small_board_cells(4) == (30, 31, 32, 39, 40, 41, 48, 49, 50)
    assert small_board_cells(8) == (60, 61, 62, 69, 70, 71, 78, 79, 80)
    names = [small_board_name(small) for small in range(9)]
    assert names == [
        "top-left",
        "top",
        "top-right",
        "left",
        "centre",
        "right",
        "bottom-left",
        "bottom",
        "bottom-right",
    ]
    for small in range(9):
        assert all(small_board_of(cell) == small for cell in small_board_cells(small))
    assert sorted(cell for small in range(9) for cell in small_board_cells(small)) == list(
        range(81)
    )
    with pytest.raises(ValueError, match="small board 9 does not exist"):
        small_board_cells(9)


def test_the_empty_board() -> None:
    board = UltimateBoard.from_moves(())
    assert board == UltimateBoard()
    assert board.moves == ()
    assert board.turn is Mark.X
    assert board.forced_board is None
    assert board.legal_moves == tuple(range(81))
    assert not board.is_over
    assert not board.is_draw
    assert board.winner is None
    assert board.winning_line is None
    assert board.move_count == 0


def test_a_move_sends_the_opponent_to_the_board_of_its_cell() -> None:
    board = UltimateBoard().play("E5")  # the centre of the centre board
    assert board.turn is Mark.O
    assert board.forced_board == 4
    assert board.legal_moves == tuple(cell for cell in small_board_cells(4) if cell != 40)
    board = board.play("F6")  # bottom-right cell of the centre board
    assert board.forced_board == 8
    assert board.legal_moves == small_board_cells(8)
    assert board.moves == (40, 50)
    assert board[40] is Mark.X
    assert board[50] is Mark.O
    assert board[0] is None


def test_the_error_when_playing_outside_the_board_you_were_sent_to() -> None:
    board = UltimateBoard.from_moves(["E5", "F4"])  # O plays the top-right cell: X goes there
    assert board.forced_board == 2
    with pytest.raises(IllegalMoveError) as caught:
        board.parse_move("E5")
    assert str(caught.value) == (
        "E5 is not in the board you were sent to: play in the top-right board, G1..I3"
    )
    assert caught.value.board is board
    assert caught.value.cell == 40
    with pytest.raises(IllegalMoveError, match=r"^A9 is not in the board you were sent to"):
        board.play(72)  # the same check for a cell given by number
    with pytest.raises(IllegalMoveError, match=r"^cannot play E5: it is taken by X$"):
        UltimateBoard.from_moves(["E5"]).play("E5")  # O is sent to the centre board
    with pytest.raises(IllegalMoveError, match=r"^cannot play cell index 81: use 0 to 80$"):
        board.play(81)
    with pytest.raises(InvalidCellError, match=r'^"Z9" is not a cell'):
        board.play("Z9")


def test_a_small_board_won_and_being_sent_to_it() -> None:
    board = play(*X_WINS_TOP_LEFT)
    assert board.small_winner(0) is Mark.X
    assert board.small_is_closed(0)
    assert not board.is_over
    assert [board.small_winner(small) for small in range(1, 9)] == [None] * 8
    board = board.play(at(5, 0))  # O, sent to the right board, sends X to the won top-left one
    assert board.forced_board is None  # so X may play in any open board
    taken = set(board.moves)
    assert board.legal_moves == tuple(
        cell for cell in range(81) if small_board_of(cell) != 0 and cell not in taken
    )
    assert ultimate_cell_name(at(5, 0)) == "G4"
    with pytest.raises(IllegalMoveError) as caught:
        board.play("G4")  # O's last move
    assert str(caught.value) == "cannot play G4: it is taken by O"
    for name in ("C3", "A1"):  # a free cell and a taken one of the won board
        with pytest.raises(IllegalMoveError) as caught:
            board.play(name)
        assert str(caught.value) == (
            f"{name} is in the top-left board, which was won by X: play in a board that is "
            "still open"
        )


def test_the_last_open_cell_of_the_board_you_are_sent_to_and_a_full_board() -> None:
    before_last = play(*FILL_BOTTOM_RIGHT[:-1])
    assert before_last.turn is Mark.X
    assert before_last.forced_board == 8
    assert before_last.legal_moves == (at(8, 8),)  # the one cell left there: I9
    assert ultimate_cell_name(before_last.legal_moves[0]) == "I9"
    board = before_last.play("I9")
    assert board.small_is_closed(8)
    assert board.small_winner(8) is None  # full without a line: nobody's
    assert all(board.small_winner(small) is None for small in range(9))
    # O is sent to the full board, so it may play any free cell of the other eight.
    assert board.forced_board is None
    taken = set(board.moves)
    assert len(board.legal_moves) == 72 - 16
    assert board.legal_moves == tuple(
        cell for cell in range(81) if small_board_of(cell) != 8 and cell not in taken
    )
    with pytest.raises(IllegalMoveError) as caught:
        board.parse_move("h8")  # every cell of a full board is taken, which is what is said
    assert str(caught.value) == "cannot play H8: it is taken by O"


def test_the_game_is_won_on_a_line_of_small_boards() -> None:
    board = UltimateBoard.from_moves(X_WINS_DIAGONAL)
    assert board.winner is Mark.X
    assert board.winning_line == (0, 4, 8)
    assert board.is_over
    assert not board.is_draw
    assert board.legal_moves == ()
    assert [board.small_winner(small) for small in (0, 4, 8)] == [Mark.X] * 3
    with pytest.raises(IllegalMoveError) as caught:
        board.play("A1")
    assert str(caught.value) == "cannot play A1: the game is over, it ended with a win for X"
    one_short = UltimateBoard.from_moves(X_WINS_DIAGONAL[:-1])
    assert not one_short.is_over
    assert one_short.winner is None
    assert [one_short.small_winner(small) for small in (0, 4, 8)] == [Mark.X, Mark.X, None]


def test_a_drawn_game_ends_early_when_no_line_of_small_boards_can_be_completed() -> None:
    board = UltimateBoard.from_moves(DRAWN_EARLY)
    # X holds the top-right, left, bottom and bottom-right boards; O the top-left, centre and
    # bottom-left ones. The top board is open but every line through it is held by both sides;
    # the right board is open, and X would win its column of boards (top-right, right,
    # bottom-right) with it, but every line of the right board holds an O: X cannot take it.
    assert [board.small_winner(small) for small in range(9)] == [
        Mark.O, None, Mark.X, Mark.X, Mark.O, None, Mark.O, Mark.X, Mark.X,
    ]  # fmt: skip
    assert not board.small_is_closed(1)
    assert not board.small_is_closed(5)
    assert board.is_over
    assert board.is_draw
    assert board.winner is None
    assert board.winning_line is None
    assert board.legal_moves == ()
    with pytest.raises(IllegalMoveError, match=r"^cannot play B1: the game is over, it ended in a"):
        board.play("B1")
    # One move earlier the right board still had a line free of O's marks: the game went on.
    before = UltimateBoard.from_moves(DRAWN_EARLY[:-1])
    assert not before.is_over
    assert before.legal_moves


# -- property tests: random games against the rules read plainly off the 9x9 grid ----------


class Reference:
    """The rules again, written the slow and obvious way over the 9x9 grid of marks."""

    def __init__(self) -> None:
        self.grid: list[Mark | None] = [None] * 81
        self.last: int | None = None
        self.turn = Mark.X

    def board_marks(self, small: int) -> list[Mark | None]:
        top, left = small // 3 * 3, small % 3 * 3
        return [
            self.grid[(top + row) * 9 + left + column] for row in range(3) for column in range(3)
        ]

    def small_winner(self, small: int) -> Mark | None:
        marks = self.board_marks(small)
        for mark in Mark:
            if any(all(marks[cell] is mark for cell in line) for line in LINES):
                return mark
        return None

    def closed(self, small: int) -> bool:
        return self.small_winner(small) is not None or None not in self.board_marks(small)

    def can_take(self, side: Mark, small: int) -> bool:
        if self.closed(small):
            return self.small_winner(small) is side
        marks = self.board_marks(small)
        return any(all(marks[cell] is not side.other for cell in line) for line in LINES)

    def winner(self) -> tuple[Mark, tuple[int, int, int]] | None:
        for line in LINES:
            owners = {self.small_winner(small) for small in line}
            if len(owners) == 1 and None not in owners:
                (owner,) = owners
                assert owner is not None
                return owner, line
        return None

    def over(self) -> bool:
        if self.winner() is not None or all(self.closed(small) for small in range(9)):
            return True
        return not any(
            all(self.can_take(side, small) for small in line) for side in Mark for line in LINES
        )

    def legal(self) -> list[int]:
        if self.over():
            return []
        allowed = set(range(9))
        if self.last is not None:
            row, column = divmod(self.last, 9)
            sent_to = row % 3 * 3 + column % 3
            if not self.closed(sent_to):
                allowed = {sent_to}
        return [
            cell
            for cell in range(81)
            if self.grid[cell] is None
            and small_board_of(cell) in allowed
            and not self.closed(small_board_of(cell))
        ]

    def play(self, cell: int) -> None:
        self.grid[cell] = self.turn
        self.turn = self.turn.other
        self.last = cell


@st.composite
def games(draw: st.DrawFn) -> list[UltimateBoard]:
    """The positions of a random game (played to its end or cut short)."""
    seed = draw(st.integers(min_value=0, max_value=2**32))
    length = draw(st.integers(min_value=0, max_value=81))
    rng = random.Random(seed)
    board = UltimateBoard()
    boards = [board]
    while not board.is_over and len(boards) <= length:
        board = board.play(rng.choice(board.legal_moves))
        boards.append(board)
    return boards


# A random game checked position by position costs about 0.1 s of CPU against the reference.
@pytest.mark.slow  # 25 such games: about 3 s of CPU
@settings(max_examples=25, deadline=None)
@given(games())
def test_every_position_of_a_random_game_follows_the_rules(
    boards: list[UltimateBoard],
) -> None:
    reference = Reference()
    for index, board in enumerate(boards):
        assert board.moves == boards[-1].moves[:index]
        assert board.turn is reference.turn
        assert list(board.legal_moves) == reference.legal()  # every legal move, no illegal one
        assert board.is_over is reference.over()
        found = reference.winner()
        assert board.winner is (found[0] if found else None)  # a winner only with a line
        assert board.winning_line == (found[1] if found else None)
        assert board.is_draw is (reference.over() and found is None)
        for small in range(9):
            assert board.small_winner(small) is reference.small_winner(small)
            assert board.small_is_closed(small) is reference.closed(small)
        if index < len(boards) - 1:
            reference.play(boards[index + 1].moves[-1])
    # The moves replay to the same position, from cells or from their names.
    last = boards[-1]
    assert UltimateBoard.from_moves(last.moves) == last
    assert UltimateBoard(last.moves).masks == last.masks
    assert UltimateBoard.from_moves(ultimate_cell_name(cell) for cell in last.moves) == last


@settings(max_examples=40, deadline=None)
@given(games(), st.data())
def test_every_cell_is_either_played_or_refused_with_a_sentence(
    boards: list[UltimateBoard], data: st.DataObject
) -> None:
    board = data.draw(st.sampled_from(boards))
    legal = set(board.legal_moves)
    for cell in range(81):
        name = ultimate_cell_name(cell)
        if cell in legal:
            assert board.parse_move(name.lower()) == cell
            assert board.play(name).moves == (*board.moves, cell)
            continue
        with pytest.raises(IllegalMoveError) as caught:
            board.parse_move(name)
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(
            (f"{name} is not in the board you were sent to: play in the ", f"{name} is in the ")
        ) or message in (
            f"cannot play {name}: it is taken by X",
            f"cannot play {name}: it is taken by O",
            f"cannot play {name}: the game is over, it ended in a draw",
            f"cannot play {name}: the game is over, it ended with a win for X",
            f"cannot play {name}: the game is over, it ended with a win for O",
        )
        with pytest.raises(IllegalMoveError):
            board.play(cell)
    if board.forced_board is not None and not board.is_over:
        first, *_, last = small_board_cells(board.forced_board)
        where = f"{small_board_name(board.forced_board)} board, "
        where += f"{ultimate_cell_name(first)}..{ultimate_cell_name(last)}"
        outside = next(cell for cell in range(81) if small_board_of(cell) != board.forced_board)
        with pytest.raises(IllegalMoveError, match=f"play in the {where}$"):
            board.play(outside)


@given(st.text(max_size=6))
def test_any_text_is_a_cell_or_refused_quoting_it(text: str) -> None:
    if re.fullmatch(r"\s*[A-Ia-i][1-9]\s*", text):
        assert ultimate_cell_name(parse_ultimate_cell(text)) == text.strip().upper()
        return
    with pytest.raises(InvalidCellError) as caught:
        parse_ultimate_cell(text)
    assert caught.value.text == text
    assert "is not a cell: use a column letter A-I and a row number 1-9" in str(caught.value)
