"""Ultimate tic-tac-toe's computer players (game/ultimate_ai.py): each level's rules on
hand-made positions, and each level beating the one below it in short seeded matches."""

from __future__ import annotations

import doctest
import itertools
import random

import pytest

import game.ultimate_ai
from game import (
    IllegalMoveError,
    Mark,
    UltimateBoard,
    parse_ultimate_cell,
    small_board_cells,
    small_board_of,
)
from game.budget import SearchBudget
from game.ultimate import META_LINES, SMALL_LINES
from game.ultimate_ai import (
    ULTIMATE_STRATEGIES,
    WIN_SCORE,
    UltimateCasual,
    UltimateMcts,
    UltimateMinimax,
    UltimateSmart,
    UltimateStrategy,
    forced_result,
    get_ultimate_strategy,
    play_ultimate_game,
)
from tests.test_ultimate_rules import X_WINS_DIAGONAL

# The strongest level's budget in tests, the same on any machine: 600 iterations of its tree
# search (about 40 ms a move); and the alpha-beta search's, a few plies.
TEST_BUDGET = SearchBudget(seconds=None, nodes=600)
ALPHA_BETA_BUDGET = SearchBudget(seconds=None, nodes=3_000)
SEEDS = range(6)


def at(small: int, local: int) -> int:
    return small_board_cells(small)[local]


def play(*pairs: tuple[int, int]) -> UltimateBoard:
    return UltimateBoard.from_moves(at(small, local) for small, local in pairs)


def player(name: str, seed: int) -> UltimateStrategy:
    return get_ultimate_strategy(name, random.Random(seed), TEST_BUDGET)


# X to move, sent to the top-left board where it holds two cells of its middle row.
X_CAN_WIN_TOP_LEFT = play((1, 0), (0, 0), (0, 3), (3, 0), (0, 4), (4, 0))
# O to move, sent to the top-left board, where X holds two cells of the middle row; O has no
# small board to win.
O_MUST_BLOCK_TOP_LEFT = play((1, 0), (0, 0), (0, 3), (3, 0), (0, 4), (4, 2), (2, 0))
# O to move: X holds the top-left and centre boards, and two in a row in the bottom-right one;
# O's move I3 (as played in that game) sends X there to win the game.
O_MUST_NOT_SEND_X_TO_WIN = UltimateBoard.from_moves(X_WINS_DIAGONAL[:19])
# X to move, and H8 wins the game.
X_WINS_IN_ONE = UltimateBoard.from_moves(X_WINS_DIAGONAL[:20])
# X to move, in any board (found by seeded play). O holds the top-left and bottom-right boards, X
# the bottom-left one, and the centre is full: X can complete no line of small boards any more.
# O's only lines left (the top row and the right column of boards) both need the top-right
# board, where O's last line free of X's marks is the middle column, H1-H3 (O holds H2): X's H1
# or H3 ends the game drawn at once. The search before it knew the early draw played F3 here
# (at the tests' budget), after which O wins by force.
X_CAN_ONLY_DRAW = UltimateBoard.from_moves([
    "B5", "E5", "F5", "H5", "F4", "G2", "A6", "C9", "H8", "F6", "H9", "E8", "D4", "A3", "B8", "E4",
    "D1", "B2", "E6", "D7", "C1", "H2", "D5", "C4", "I2", "G6", "B7", "D2", "A4", "B3", "F9", "H7",
    "E2", "D6", "B9", "F7", "I1", "I3", "I9", "G7", "B1", "F2", "H4", "F1", "G3", "I7", "G1", "C3",
])  # fmt: skip


def test_docstring_examples_hold() -> None:
    failures, tried = doctest.testmod(game.ultimate_ai, verbose=False)
    assert tried > 0
    assert failures == 0


def test_the_four_levels_weakest_first_and_an_unknown_one() -> None:
    assert list(ULTIMATE_STRATEGIES) == ["random", "casual", "smart", "minimax"]
    for name in ULTIMATE_STRATEGIES:
        assert get_ultimate_strategy(f" {name.upper()} ").name == name
    with pytest.raises(ValueError, match='unknown strategy "genius": choose one of random'):
        get_ultimate_strategy("genius")


@pytest.mark.parametrize("name", list(ULTIMATE_STRATEGIES))
def test_every_level_plays_legal_moves_and_refuses_a_finished_game(name: str) -> None:
    strategy = player(name, 1)
    board = UltimateBoard()
    for _ in range(12):
        cell = strategy.choose(board)
        assert cell in board.legal_moves
        board = board.play(cell)
    finished = UltimateBoard.from_moves(X_WINS_DIAGONAL)
    with pytest.raises(IllegalMoveError, match="no move to choose: the game is over"):
        strategy.choose(finished)


def test_the_positions_are_what_the_tests_say() -> None:
    assert X_CAN_WIN_TOP_LEFT.turn is Mark.X
    assert X_CAN_WIN_TOP_LEFT.forced_board == 0
    assert O_MUST_BLOCK_TOP_LEFT.turn is Mark.O
    assert O_MUST_BLOCK_TOP_LEFT.forced_board == 0
    assert O_MUST_NOT_SEND_X_TO_WIN.turn is Mark.O
    losing = O_MUST_NOT_SEND_X_TO_WIN.play("I3")
    assert losing.play("H8").winner is Mark.X
    assert X_WINS_IN_ONE.play("H8").winner is Mark.X


@pytest.mark.parametrize("seed", SEEDS)
def test_casual_takes_a_small_board_and_blocks_one(seed: int) -> None:
    casual = UltimateCasual(random.Random(seed))
    assert casual.choose(X_CAN_WIN_TOP_LEFT) == at(0, 5)
    assert casual.choose(O_MUST_BLOCK_TOP_LEFT) == at(0, 5)


def test_casual_is_careless_otherwise() -> None:
    board = UltimateBoard.from_moves(["E5"])
    assert UltimateCasual().urgent_moves(board) == ()
    chosen = {UltimateCasual(random.Random(seed)).choose(board) for seed in range(40)}
    assert chosen == set(board.legal_moves)


def loses_at_once(board: UltimateBoard) -> bool:
    """Whether the side to move can win the game with its next move."""
    return any(board.play(cell).winner is board.turn for cell in board.legal_moves)


@pytest.mark.parametrize("name", ["smart", "minimax", "alpha-beta"])
@pytest.mark.parametrize("seed", SEEDS)
def test_smart_and_the_searches_block_a_game_losing_line(name: str, seed: int) -> None:
    board = O_MUST_NOT_SEND_X_TO_WIN
    assert any(loses_at_once(board.play(cell)) for cell in board.legal_moves)
    assert not loses_at_once(board.play(searcher(name, seed).choose(board)))


@pytest.mark.parametrize("name", ["smart", "minimax", "alpha-beta"])
@pytest.mark.parametrize("seed", SEEDS)
def test_smart_and_the_searches_win_the_game_when_they_can(name: str, seed: int) -> None:
    assert X_WINS_IN_ONE.play(searcher(name, seed).choose(X_WINS_IN_ONE)).winner is Mark.X


def lines_open_to(board: UltimateBoard, mark: Mark) -> list[tuple[int, int, int]]:
    """The lines of small boards ``mark`` can still complete, read off the board: every board
    in it won by ``mark``, or open with a line of cells holding none of the other's marks."""

    def can_take(small: int) -> bool:
        if board.small_winner(small) is not None or board.small_is_closed(small):
            return board.small_winner(small) is mark
        cells = small_board_cells(small)
        return any(
            all(board[cells[local]] is not mark.other for local in line) for line in SMALL_LINES
        )

    return [line for line in META_LINES if all(can_take(small) for small in line)]


def test_the_early_draw_position_is_what_the_test_says() -> None:
    board = X_CAN_ONLY_DRAW
    assert board.turn is Mark.X
    assert board.forced_board is None
    assert [board.small_winner(small) for small in range(9)] == [
        Mark.O, None, None, None, None, None, Mark.X, None, Mark.O,
    ]  # fmt: skip
    assert board.small_is_closed(4)
    assert lines_open_to(board, Mark.X) == []
    assert lines_open_to(board, Mark.O) == [(0, 1, 2), (2, 5, 8)]
    drawing = {cell for cell in board.legal_moves if board.play(cell).is_draw}
    assert drawing == {parse_ultimate_cell("H1"), parse_ultimate_cell("H3")}
    assert len(board.legal_moves) == 22


def searcher(name: str, seed: int) -> UltimateStrategy:
    """The strongest level, or the alpha-beta search it replaced, at the tests' budgets."""
    if name == "alpha-beta":
        return UltimateMinimax(random.Random(seed), ALPHA_BETA_BUDGET)
    return player(name, seed)


@pytest.mark.parametrize("name", ["alpha-beta", "minimax"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_searches_draw_at_once_when_they_can_no_longer_win(name: str, seed: int) -> None:
    # X cannot win, so a draw is the best it can get: the search must score the position after
    # H1 or H3 as the draw it is, not by the small boards O holds.
    chosen = searcher(name, seed).choose(X_CAN_ONLY_DRAW)
    assert X_CAN_ONLY_DRAW.play(chosen).is_draw


def test_the_move_the_alpha_beta_search_played_before_it_knew_the_early_draw_loses() -> None:
    # The search proves it within the budget (a win in 13 plies), in a fraction of a second.
    after = X_CAN_ONLY_DRAW.play("F3")
    analysis = UltimateMinimax(random.Random(0), SearchBudget(None, nodes=300_000)).analyse(after)
    assert forced_result(analysis.score) == 1  # a win for O, to move, proven


@pytest.mark.parametrize("seed", SEEDS)
def test_smart_wins_a_small_board_when_it_cannot_win_the_game(seed: int) -> None:
    assert UltimateSmart(random.Random(seed)).choose(X_CAN_WIN_TOP_LEFT) == at(0, 5)


def sends_to_a_small_win(board: UltimateBoard, cell: int) -> bool:
    """Whether playing ``cell`` lets the opponent win a small board with its reply."""
    after = board.play(cell)
    if after.is_over:
        return False
    return any(
        after.play(reply).small_winner(small_board_of(reply)) is after.turn
        for reply in after.legal_moves
    )


@pytest.mark.parametrize("seed", range(30))
def test_smart_does_not_send_the_opponent_where_it_wins_a_small_board(seed: int) -> None:
    # Positions of random games where smart has neither the game nor a small board to win, and
    # some move keeps the opponent from winning a small board next: smart plays one of those.
    rng = random.Random(seed)
    board = UltimateBoard()
    smart = UltimateSmart(random.Random(seed))
    checked = 0
    while not board.is_over:
        moves = board.legal_moves
        if not any(board.play(cell).small_winner(small_board_of(cell)) for cell in moves):
            careful = [cell for cell in moves if not sends_to_a_small_win(board, cell)]
            if careful:
                assert not sends_to_a_small_win(board, smart.choose(board))
                checked += 1
        board = board.play(rng.choice(moves))
    assert checked > 0


def test_the_strongest_is_deterministic_with_a_node_budget() -> None:
    def moves(seed: int) -> tuple[int, ...]:
        players = {Mark.X: player("minimax", seed), Mark.O: player("smart", seed)}
        board = UltimateBoard()
        for _ in range(8):
            board = board.play(players[board.turn].choose(board))
        return board.moves

    assert moves(3) == moves(3)


def test_the_strongest_is_the_tree_search_and_keeps_the_level_s_name() -> None:
    strongest = get_ultimate_strategy("minimax", random.Random(1), TEST_BUDGET)
    assert isinstance(strongest, UltimateMcts)
    assert strongest.name == "minimax"
    assert UltimateMinimax().name == "alpha-beta"


# O to move in any open board (found by seeded play between casual players): 30 legal moves, 17
# of which send X where X wins the game at once.
THIRTY_MOVES_SEVENTEEN_LOSE = UltimateBoard.from_moves(
    [
        "E6",
        "F7",
        "G2",
        "C4",
        "H2",
        "F4",
        "I2",
        "I4",
        "D6",
        "A7",
        "B3",
        "F9",
        "H7",
        "D1",
        "C1",
        "F8",
        "I6",
        "I8",
        "H5",
        "F6",
        "H9",
        "F5",
        "G4",
        "A3",
        "A9",
        "A8",
        "B4",
        "D3",
        "C9",
        "H8",
    ]
)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_tree_search_tries_every_move_however_late_its_clock(seed: int) -> None:
    # A clock past the deadline from the start (a starved worker on a loaded machine): the
    # search still tries each of the 30 moves once, so it proves the 17 losing ones lost and
    # plays none of them.
    board = THIRTY_MOVES_SEVENTEEN_LOSE
    losing = [cell for cell in board.legal_moves if loses_at_once(board.play(cell))]
    assert (len(board.legal_moves), len(losing)) == (30, 17)
    search = UltimateMcts(
        random.Random(seed), SearchBudget(seconds=0.0), clock=itertools.count().__next__
    )
    chosen = search.choose(board)
    assert len(board.legal_moves) <= search.last_iterations < len(board.legal_moves) + 16
    assert chosen not in losing


def test_the_tree_search_spends_its_iterations_and_no_more() -> None:
    board = UltimateBoard.from_moves(["E5"])
    for iterations in (50, 700):
        search = UltimateMcts(random.Random(1), SearchBudget(seconds=None, nodes=iterations))
        search.choose(board)
        assert search.last_iterations == iterations


def test_the_tree_search_scores_a_win_in_one_without_searching() -> None:
    search = UltimateMcts(random.Random(1), TEST_BUDGET)
    assert search.analyse(X_WINS_IN_ONE) == (parse_ultimate_cell("H8"), WIN_SCORE - 1)
    assert search.last_iterations == 0


def test_the_tree_search_proves_the_loss_a_move_allows_and_keeps_out_of_it() -> None:
    # O to move: I3 (among others) lets X win at once with H8. The search proves X's win after
    # I3, and plays none of the moves that allow one.
    board = O_MUST_NOT_SEND_X_TO_WIN
    after = board.play("I3")
    assert UltimateMcts(random.Random(1), TEST_BUDGET).analyse(after) == (
        parse_ultimate_cell("H8"),
        WIN_SCORE - 1,
    )
    cell, points = UltimateMcts(random.Random(1), TEST_BUDGET).analyse(board)
    assert not loses_at_once(board.play(cell))
    assert forced_result(points) != -1


def test_the_tree_search_scores_an_open_position_by_its_win_chance() -> None:
    cell, points = UltimateMcts(random.Random(1), TEST_BUDGET).analyse(UltimateBoard())
    assert cell in UltimateBoard().legal_moves
    assert forced_result(points) == 0
    assert -60 < points < 60  # X's first move: no side near a small board yet


def test_the_alpha_beta_search_searches_deeper_with_more_budget() -> None:
    board = UltimateBoard.from_moves(["E5"])
    small = UltimateMinimax(random.Random(1), SearchBudget(seconds=None, nodes=300))
    large = UltimateMinimax(random.Random(1), SearchBudget(seconds=None, nodes=20_000))
    small.choose(board)
    large.choose(board)
    assert 2 <= small.last_depth < large.last_depth


def score(strong: str, weak: str, games: int) -> tuple[int, int]:
    """Wins of ``strong`` and of ``weak`` over ``games`` seeded games, sides alternating."""
    wins = {strong: 0, weak: 0}
    for index in range(games):
        rng = random.Random(index)
        first, second = (strong, weak) if index % 2 == 0 else (weak, strong)
        players = {
            Mark.X: get_ultimate_strategy(first, rng, TEST_BUDGET),
            Mark.O: get_ultimate_strategy(second, rng, TEST_BUDGET),
        }
        winner = play_ultimate_game(UltimateBoard(), players).winner
        if winner is not None:
            wins[players[winner].name] += 1
    return wins[strong], wins[weak]


@pytest.mark.parametrize(("strong", "weak"), [("casual", "random"), ("smart", "casual")])
def test_each_rule_level_beats_the_one_below(strong: str, weak: str) -> None:
    # Many ultimate games end drawn early (no line of small boards left): wins are counted.
    won, lost = score(strong, weak, 16)
    assert won >= 8
    assert won >= 4 * lost


@pytest.mark.slow  # six games of searches: about 8 s of CPU
def test_the_strongest_beats_smart() -> None:
    won, lost = score("minimax", "smart", 6)
    assert won >= 5
    assert lost == 0
