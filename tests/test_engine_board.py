"""The board's public API: cells, parsing, moves, outcomes and errors, with property tests."""

from __future__ import annotations

import doctest
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st

import game
import game.ai
import game.board
import game.positions
from game import (
    Board,
    GameError,
    IllegalMoveError,
    InvalidBoardError,
    InvalidCellError,
    Mark,
    Outcome,
    cell_name,
    parse_cell,
    reachable_positions,
)

ALL_POSITIONS = sorted(reachable_positions(), key=str)


@pytest.mark.parametrize("module", [game, game.board, game.ai, game.positions])
def test_docstring_examples_hold(module: ModuleType) -> None:
    failures, tried = doctest.testmod(module, verbose=False)
    assert tried > 0
    assert failures == 0


def test_every_error_is_a_game_error_and_a_value_error() -> None:
    for error in (InvalidCellError, InvalidBoardError, IllegalMoveError):
        assert issubclass(error, GameError)
    assert issubclass(GameError, ValueError)


@pytest.mark.parametrize(
    ("text", "cell"),
    [("A1", 0), ("B1", 1), ("C1", 2), ("A2", 3), ("B2", 4), ("c3", 8), ("  b3 ", 7)]
    + [(str(n), n - 1) for n in range(1, 10)],
)
def test_parse_cell_reads_names_and_numbers(text: str, cell: int) -> None:
    assert parse_cell(text) == cell


@pytest.mark.parametrize(
    "text", ["", "D1", "A4", "A0", "0", "10", "B 2", "2B", "BB", "B2!", "\u0661"]
)
def test_parse_cell_rejects_everything_else_quoting_it(text: str) -> None:
    with pytest.raises(InvalidCellError) as caught:
        parse_cell(text)
    assert f'"{text}"' in str(caught.value)
    assert "A-C" in str(caught.value)
    assert caught.value.text == text


def test_cell_names_round_trip() -> None:
    assert [cell_name(cell) for cell in range(9)] == [
        "A1", "B1", "C1", "A2", "B2", "C2", "A3", "B3", "C3",
    ]  # fmt: skip
    for cell in range(9):
        assert parse_cell(cell_name(cell)) == cell


def test_the_empty_board() -> None:
    board = Board()
    assert board.size == 3
    assert board.turn is Mark.X
    assert board.legal_moves == tuple(range(9))
    assert board.outcome() is None
    assert (board.winner, board.winning_line, board.is_over) == (None, None, False)
    assert str(board) == ".../.../..."


def test_a_win_reports_its_winner_and_line() -> None:
    board = Board.from_string("XXX/OO./...")
    assert board.outcome() == Outcome(winner=Mark.X, lines=((0, 1, 2),))
    assert board.winner is Mark.X
    assert board.winning_line == (0, 1, 2)
    assert board.is_over
    assert board.legal_moves == ()


def test_one_move_can_complete_two_lines() -> None:
    board = Board.from_string(".XX/XOO/XOO").play("A1")
    assert board.outcome() == Outcome(winner=Mark.X, lines=((0, 1, 2), (0, 3, 6)))
    assert board.winning_line == (0, 1, 2)
    assert Board.from_string(str(board)) == board


def test_a_full_board_without_a_line_is_a_draw() -> None:
    board = Board.from_string("XOX/XOO/OXX")
    assert board.outcome() == Outcome(winner=None)
    assert board.is_over
    assert board.winner is None
    assert board.winning_line is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("XX./.../...", "2 X and 0 O"),
        ("O../.../...", "0 X and 1 O"),
        ("XXX/OOO/...", "two winners"),
        ("XXX/OO./..O", "after X won"),
        ("OOO/XX./X.X", "after O won"),
        ("XXX/.../XXX", "X and"),
        ("XX/OO", "not a board"),
        ("XX./.../..", "not a board"),
        ("X.O/.Q./...", "'Q' is not X, O or '.'"),
    ],
)
def test_from_string_rejects_impossible_positions(text: str, reason: str) -> None:
    with pytest.raises(InvalidBoardError, match=reason) as caught:
        Board.from_string(text)
    assert caught.value.text == text


def test_two_separate_lines_are_impossible() -> None:
    # On 3x3 two lines of one mark always share a cell; on 4x4 the diagonals do not, and no
    # single last move completes both.
    with pytest.raises(InvalidBoardError, match="two separate winning lines"):
        Board.from_string("XOOX/OXXO/OXXO/XO.X")


def test_play_accepts_names_and_indexes_alike() -> None:
    assert Board().play("B2") == Board().play(4) == Board().play(" b2 ") == Board().play("5")


def test_playing_a_taken_cell_names_it_and_shows_the_board() -> None:
    board = Board().play("B2")
    with pytest.raises(IllegalMoveError) as caught:
        board.play("B2")
    message = str(caught.value)
    assert "cannot play B2: it is taken by X" in message
    assert ". X ." in message
    assert caught.value.board == board
    assert caught.value.cell == 4


def test_playing_after_the_end_says_the_game_is_over() -> None:
    with pytest.raises(IllegalMoveError, match="game is over, it ended with a win for X") as caught:
        Board.from_string("XXX/OO./...").play("C3")
    assert str(caught.value).splitlines()[1] == "X X X"
    with pytest.raises(IllegalMoveError, match="ended in a draw"):
        Board.from_string("XOX/XOO/OXX").play(0)


@pytest.mark.parametrize("index", [-1, 9, 100])
def test_playing_off_the_board_is_illegal(index: int) -> None:
    with pytest.raises(
        IllegalMoveError, match=f"cannot play cell index {index}: use 0 to 8"
    ) as caught:
        Board().play(index)
    assert str(caught.value).splitlines()[1:] == [". . .", ". . .", ". . ."]


def test_a_bad_name_is_an_invalid_cell_not_an_illegal_move() -> None:
    with pytest.raises(InvalidCellError):
        Board().play("Z9")


def test_from_moves_replays_a_game() -> None:
    board = Board.from_moves(["B2", "A1", "C3", 2])
    assert str(board) == "O.O/.X./..X"
    assert board.turn is Mark.X


def test_the_standard_line_length_given_or_left_out_is_the_same_board() -> None:
    """Boards compare by their geometry's identity: one geometry per side and line length,
    however it was asked for, or a board read back from text with its "k4" would differ from
    the same position played from the empty board."""
    for size in (3, 4, 5):
        played = Board.from_moves(["A1", "B2"], size)
        read = Board.from_string(str(played), line_length=game.standard_line_length(size))
        assert read == played
        assert hash(read) == hash(played)
        assert read.geometry is played.geometry is game.geometry(size)
    assert Board(5, line_length=5) != Board(5)


def test_winning_lines_of_every_finished_position_are_real_lines() -> None:
    for board in ALL_POSITIONS:
        outcome = board.outcome()
        if outcome is None or outcome.winner is None:
            continue
        for line in outcome.lines:
            assert all(board[cell] is outcome.winner for cell in line)


# -- property tests --------------------------------------------------------------------------

positions = st.sampled_from(ALL_POSITIONS)


@given(positions)
def test_from_string_and_str_round_trip(board: Board) -> None:
    assert Board.from_string(str(board)) == board
    assert str(Board.from_string(str(board))) == str(board)
    assert Board.from_string(str(board).lower()) == board


@given(positions, st.integers(min_value=0, max_value=8))
def test_play_never_mutates_the_board(board: Board, cell: int) -> None:
    before = (str(board), board.turn, board.legal_moves, board.outcome())
    try:
        after = board.play(cell)
    except IllegalMoveError:
        after = None
    assert (str(board), board.turn, board.legal_moves, board.outcome()) == before
    if after is not None:
        assert after[cell] is board.turn
        assert after.turn is board.turn.other
        assert after.move_count == board.move_count + 1


@given(st.text())
def test_parse_cell_returns_a_cell_or_raises_invalid_cell(text: str) -> None:
    result: int | InvalidCellError
    try:
        result = parse_cell(text)
    except InvalidCellError as error:
        result = error
    if isinstance(result, InvalidCellError):
        assert result.text == text
    else:
        assert 0 <= result <= 8
        assert parse_cell(cell_name(result)) == result


@given(st.text(alphabet="XxOo./", max_size=14))
def test_from_string_accepts_or_raises_invalid_board(text: str) -> None:
    try:
        board = Board.from_string(text)
    except InvalidBoardError:
        return
    assert str(board) == text.upper()


def test_an_error_quotes_what_was_typed_on_one_line() -> None:
    """A newline or a quote in the input cannot cut the message short (the bot shows its first
    line)."""
    with pytest.raises(InvalidCellError) as caught:
        parse_cell('B2\n"@everyone')
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith('"B2\\n\\"@everyone" is not a cell')


def test_a_malformed_board_string_says_what_shape_any_size_takes() -> None:
    """Not only 3x3's: a 5x5 string with a row too short is told N rows of N cells."""
    with pytest.raises(InvalidBoardError, match=r"N rows of N cells \(N from 3 to 9\)"):
        Board.from_string("...../...../...../...../....")
