"""Larger boards (4x4 with 4 in a row, 5x5 with 4 in a row): known facts, the Board API at every
size, the solved 4x4 table against stored solved values, and the 5x5 search's promises.

The full runs live outside CI: ``python -m game.solve4x4 verify`` proves the whole 4x4 table and
minimax's play on it, and ``python -m bench.engine --games 1000`` plays 1,000 5x5 games each as X
and as O against smart and random. Here, seeded samples of both.
"""

from __future__ import annotations

import functools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from game import BOARD_SIZES, Board, Mark, Outcome, cell_name, geometry, parse_cell
from game.ai import (
    MinimaxStrategy,
    SearchBudget,
    SmartStrategy,
    evaluate,
    get_strategy,
    play_game,
    score,
)
from game.errors import IllegalMoveError, InvalidBoardError, InvalidCellError

SAMPLE_4X4 = Path(__file__).parent / "data" / "solved_4x4_sample.json"
# A node budget, unlike a time budget, plays the same moves on any machine: CI's games repeat.
SEARCH_NODES = 2000


def quick_minimax(seed: int) -> MinimaxStrategy:
    return MinimaxStrategy(random.Random(seed), SearchBudget(seconds=None, nodes=SEARCH_NODES))


# -- known facts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "line_length", "count"),
    [(3, 3, 8), (4, 4, 10), (5, 4, 28), (4, 3, 24), (5, 5, 12), (5, 3, 48)],
)
def test_the_number_of_winning_lines(size: int, line_length: int, count: int) -> None:
    lines = geometry(size, line_length).lines
    assert len(lines) == count
    assert len(set(lines)) == count
    assert all(len(line) == line_length for line in lines)


def test_each_size_has_its_standard_line_length() -> None:
    assert BOARD_SIZES == (3, 4, 5)
    assert [Board(size).line_length for size in BOARD_SIZES] == [3, 4, 4]


def test_4x4_with_4_in_a_row_is_a_draw_with_perfect_play() -> None:
    assert evaluate(Board(4)) == 0
    # ...and so is every first move, though not every second one.
    assert {evaluate(Board(4).play(cell)) for cell in range(16)} == {0}


def test_a_line_of_4_wins_on_5x5_and_one_move_can_make_two() -> None:
    board = Board.from_string("XXXX./OOO../...../...../.....")
    assert board.outcome() == Outcome(winner=Mark.X, lines=((0, 1, 2, 3),))
    both = Board.from_string("XX.XX/OOO../O..../...../.....").play("C1")
    assert both.outcome() == Outcome(winner=Mark.X, lines=((0, 1, 2, 3), (1, 2, 3, 4)))
    assert Board.from_string(str(both)) == both


# -- the Board API at every size -------------------------------------------------------------


@pytest.mark.parametrize("size", BOARD_SIZES)
def test_cell_names_and_numbers_cover_the_board(size: int) -> None:
    names = [cell_name(cell, size) for cell in range(size * size)]
    assert names[0] == "A1"
    assert names[-1] == "ABCDE"[size - 1] + str(size)
    for cell, name in enumerate(names):
        assert parse_cell(name, size) == cell
        assert parse_cell(name.lower(), size) == cell
        assert parse_cell(str(cell + 1), size) == cell


@pytest.mark.parametrize(
    ("size", "text", "expected"),
    [
        (4, "E1", "use a column letter A-D and a row number 1-4, like B2, or a number 1-16"),
        (4, "17", "(the board is 4x4)"),
        (5, "A6", "use a column letter A-E and a row number 1-5, like B2, or a number 1-25"),
        (5, "F5", "(the board is 5x5)"),
    ],
)
def test_a_cell_off_a_larger_board_says_which_board(size: int, text: str, expected: str) -> None:
    with pytest.raises(InvalidCellError) as caught:
        parse_cell(text, size)
    assert str(caught.value).startswith(f'"{text}" is not a cell')
    assert expected in str(caught.value)


@pytest.mark.parametrize("cell", [-1, 25])
def test_an_index_off_the_board_has_no_name(cell: int) -> None:
    with pytest.raises(ValueError, match=f"cell index {cell} is off a 5x5 board: use 0 to 24"):
        cell_name(cell, 5)


@pytest.mark.parametrize(
    ("size", "line_length", "reason"),
    [
        (2, None, "board size must be between 3 and 9, not 2"),
        (4, 5, "line length must be between 3 and 4 on a 4x4 board, not 5"),
        (5, 2, "line length must be between 3 and 5 on a 5x5 board, not 2"),
    ],
)
def test_impossible_boards_are_refused(size: int, line_length: int | None, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        Board(size, line_length)


def test_the_line_length_is_part_of_the_position() -> None:
    standard, five = Board(5), Board(5, line_length=5)
    assert standard != five
    assert repr(five) == "Board.from_string('...../...../...../...../.....', line_length=5)"
    assert eval(repr(five)) == five
    four = Board.from_string("XXXX./OOO../...../...../.....")
    assert four.is_over
    assert not Board.from_string("XXXX./OOO../...../...../.....", line_length=5).is_over


def test_a_larger_board_plays_and_refuses_like_3x3() -> None:
    board = Board.from_moves(["D4", "A1", "16"][:2], 4)
    assert str(board) == "O.../..../..../...X"
    with pytest.raises(IllegalMoveError, match="cannot play D4: it is taken by X"):
        board.play("D4")
    with pytest.raises(IllegalMoveError, match="cannot play cell index 16: use 0 to 15"):
        board.play(16)
    with pytest.raises(InvalidBoardError, match="has 2 X and 0 O"):
        Board.from_string("XX.../...../...../...../.....")


def play_out(size: int, choices: list[int]) -> Board:
    """The board after playing, from the empty board, the free cell each choice picks."""
    board = Board(size)
    for choice in choices:
        if board.is_over:
            break
        moves = board.legal_moves
        board = board.play(moves[choice % len(moves)])
    return board


games = st.builds(
    play_out,
    st.sampled_from(BOARD_SIZES),
    st.lists(st.integers(min_value=0, max_value=24), max_size=25),
)


@given(games)
def test_any_game_round_trips_through_its_string(board: Board) -> None:
    assert Board.from_string(str(board)) == board
    assert Board.from_string(str(board).lower()) == board
    assert (
        Board.from_moves([cell_name(cell, board.size) for cell in _replay(board)], board.size).masks
        == board.masks
    )


def _replay(board: Board) -> list[int]:
    """A legal order of the board's moves: X's and O's cells alternately, the winner's last
    move (a cell of every winning line) kept for the end."""
    x_cells = [cell for cell in range(board.geometry.cell_count) if board[cell] is Mark.X]
    o_cells = [cell for cell in range(board.geometry.cell_count) if board[cell] is Mark.O]
    outcome = board.outcome()
    if outcome is not None and outcome.winner is not None:
        last = set.intersection(*(set(line) for line in outcome.lines)).pop()
        winner_cells = x_cells if outcome.winner is Mark.X else o_cells
        winner_cells.remove(last)
        winner_cells.append(last)
    order = []
    for index in range(len(x_cells)):
        order.append(x_cells[index])
        if index < len(o_cells):
            order.append(o_cells[index])
    return order


@given(games, st.integers(min_value=-1, max_value=25))
def test_play_never_mutates_and_moves_one_mark(board: Board, cell: int) -> None:
    before = (str(board), board.turn, board.legal_moves, board.outcome())
    try:
        after = board.play(cell)
    except IllegalMoveError:
        assert board.is_over or cell not in board.legal_moves
        return
    assert (str(board), board.turn, board.legal_moves, board.outcome()) == before
    assert after[cell] is board.turn
    assert after.move_count == board.move_count + 1
    winner = after.winner
    assert winner is None or winner is board.turn  # only the side that moved can have won


@given(st.sampled_from(BOARD_SIZES), st.text(max_size=6))
def test_parse_cell_returns_a_cell_or_raises_at_every_size(size: int, text: str) -> None:
    result: int | InvalidCellError
    try:
        result = parse_cell(text, size)
    except InvalidCellError as error:
        result = error
    if isinstance(result, InvalidCellError):
        assert result.text == text
        assert f"(the board is {size}x{size})" in str(result)
    else:
        assert 0 <= result < size * size
        assert parse_cell(cell_name(result, size), size) == result


# -- 4x4: the solved table -------------------------------------------------------------------


@functools.cache
def solved_sample() -> dict[str, dict[str, object]]:
    loaded: dict[str, dict[str, object]] = json.loads(SAMPLE_4X4.read_text())
    return loaded


def test_the_4x4_sample_is_large_and_spread_over_the_game() -> None:
    sample = solved_sample()
    assert len(sample) >= 2000
    plies = {Board.from_string(text).move_count for text in sample}
    assert plies == set(range(16))
    assert {entry["value"] for entry in sample.values()} == {-1, 0, 1}


def test_minimax_keeps_the_stored_solved_value_of_every_4x4_sample_position() -> None:
    minimax = MinimaxStrategy()
    for text, entry in solved_sample().items():
        board = Board.from_string(text)
        assert evaluate(board) == entry["value"], text
        moves = entry["moves"]
        assert isinstance(moves, dict)
        for name, value in moves.items():
            assert -evaluate(board.play(name)) == value, (text, name)
        keeping = {name for name, value in moves.items() if value == entry["value"]}
        assert {cell_name(cell, 4) for cell in minimax.best_moves(board)} <= keeping, text


@functools.cache
def plain_negamax(board: Board) -> int:
    """The textbook recursion, for positions small enough to read to the end here."""
    outcome = board.outcome()
    if outcome is not None:
        return 0 if outcome.winner is None else -1
    return max(-plain_negamax(board.play(cell)) for cell in board.legal_moves)


@pytest.mark.slow  # plain negamax: 5 s of CPU
def test_late_4x4_sample_positions_agree_with_a_plain_negamax() -> None:
    """An independent check of the stored values: a plain search where it is cheap."""
    late = [text for text in solved_sample() if text.count(".") <= 7]
    assert len(late) >= 500
    for text in late:
        assert plain_negamax(Board.from_string(text)) == solved_sample()[text]["value"], text


def test_exact_scores_are_for_3x3_only() -> None:
    with pytest.raises(ValueError, match="exact scores are for 3x3 boards"):
        score(Board(4))
    with pytest.raises(ValueError, match="exact scores are for 3x3 boards"):
        score(Board(5))
    # evaluate() knows the offered boards' values, not those of other line lengths.
    with pytest.raises(ValueError, match="exact scores are for 3x3 boards"):
        evaluate(Board(5, line_length=5))


# -- 5x5: the search's promises --------------------------------------------------------------


def positions_from_games(size: int, count: int, seed: int) -> list[Board]:
    """Live positions met in games between smart and random, both sides mixed."""
    rng = random.Random(seed)
    found: list[Board] = []
    while len(found) < count:
        players = {
            Mark.X: get_strategy(rng.choice(["smart", "random"]), rng),
            Mark.O: get_strategy(rng.choice(["smart", "random"]), rng),
        }
        board = Board(size)
        while not board.is_over:
            found.append(board)
            board = board.play(players[board.turn].choose(board))
    return found[:count]


def completing_cells(board: Board, mark: Mark) -> set[int]:
    geo = board.geometry
    x_mask, o_mask = board.masks
    marks = x_mask if mark is Mark.X else o_mask
    return {cell for cell in board.empty_cells if geo.has_line(marks | 1 << cell)}


@pytest.mark.parametrize("size", [4, 5])
def test_minimax_never_misses_a_win_and_never_leaves_a_threat(size: int) -> None:
    minimax = quick_minimax(1)
    checked_wins = checked_blocks = 0
    for board in positions_from_games(size, 600, seed=size):
        move = minimax.choose(board)
        wins = completing_cells(board, board.turn)
        threats = completing_cells(board, board.turn.other)
        if wins:
            checked_wins += 1
            assert move in wins, str(board)
        elif len(threats) == 1:
            checked_blocks += 1
            assert move in threats, str(board)
    assert checked_wins > 30
    assert checked_blocks > 30


@pytest.mark.slow  # a few seconds a pairing
@pytest.mark.parametrize("opponent", ["smart", "random"])
@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_5x5_minimax_never_loses_a_seeded_sample_of_games(opponent: str, side: Mark) -> None:
    games = 150 if opponent == "smart" else 100
    for seed in range(games):
        rng = random.Random(seed)
        players = {side: quick_minimax(seed), side.other: get_strategy(opponent, rng)}
        final = play_game(Board(5), players)
        assert final.winner is not side.other, (seed, str(final))


@pytest.mark.parametrize("opponent", ["smart", "random"])
@pytest.mark.parametrize("side", [Mark.X, Mark.O])
def test_4x4_minimax_never_loses(opponent: str, side: Mark) -> None:
    for seed in range(20):
        rng = random.Random(seed)
        players = {side: MinimaxStrategy(rng), side.other: get_strategy(opponent, rng)}
        assert play_game(Board(4), players).winner is not side.other


def test_the_search_with_a_node_budget_repeats_its_choices() -> None:
    board = Board(5).play("C3").play("B2")
    first = [quick_minimax(8).choose(board) for _ in range(3)]
    again = [quick_minimax(8).choose(board) for _ in range(3)]
    assert first == again


def test_smart_on_larger_boards_wins_blocks_and_forks() -> None:
    smart = SmartStrategy()
    assert smart.candidates(Board.from_string("XXX./OOO./..../....")) == (3,)  # win
    assert smart.candidates(Board.from_string("XX../OOO./X.../....")) == (7,)  # block
    # X at B1, C1 and B2..: D1 would make two threats on 5x5 (row 1 both ways is open).
    fork = Board.from_string(".XX../.O.../..O../...../.....")
    assert set(smart.candidates(fork)) <= {0, 3}
    assert smart.candidates(Board(5)) == (12,)  # the centre has the most lines


@pytest.mark.parametrize("size", BOARD_SIZES)
@pytest.mark.parametrize("name", ["random", "smart", "minimax"])
def test_every_strategy_plays_legal_moves_at_every_size(size: int, name: str) -> None:
    strategy = get_strategy(name, random.Random(3), SearchBudget(seconds=None, nodes=300))
    for board in positions_from_games(size, 40, seed=11):
        assert strategy.choose(board) in board.legal_moves


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([4, 5]), st.integers(min_value=0, max_value=10_000))
def test_a_finished_larger_game_cannot_be_played_on(size: int, seed: int) -> None:
    rng = random.Random(seed)
    final = play_game(
        Board(size), {Mark.X: get_strategy("random", rng), Mark.O: get_strategy("random", rng)}
    )
    with pytest.raises(IllegalMoveError, match="game is over"):
        get_strategy("smart").choose(final)
