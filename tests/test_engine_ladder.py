"""The difficulty ladder: ``casual``'s rules over every 3x3 position and on the larger boards, the
levels' names and descriptions, and the ladder's 3x3 targets on a seeded sample of games (the
1,000-game table is ``python -m bench.ladder``)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from bench.ladder import (
    DEFAULT_NODES,
    LEVELS,
    Pairing,
    Winners,
    exact_shares,
    play_games,
    record,
)
from game import BOARD_SIZES, Board, Mark, reachable_positions
from game.ai import (
    CASUAL_SKILL,
    DIFFICULTIES,
    STRATEGIES,
    CasualStrategy,
    SmartStrategy,
    describe,
    get_strategy,
    play_game,
)

LIVE_POSITIONS = sorted((board for board in reachable_positions() if not board.is_over), key=str)
# A sample small enough for CI (under a second), large enough that every target holds with a
# margin of several standard errors; fixed seeds, so it gives the same games every run.
GAMES = 200
SEED = 1


def completing_cells(board: Board, side: Mark) -> set[int]:
    """The free cells where a mark of ``side`` would complete a line."""
    x_mask, o_mask = board.masks
    marks = x_mask if side is Mark.X else o_mask
    return {cell for cell in board.legal_moves if board.geometry.has_line(marks | 1 << cell)}


def check_takes_wins_and_blocks(board: Board, casual: CasualStrategy, tries: int) -> str:
    """Which rule ``board`` called for ("win", "block" or "none"), after checking that every one
    of ``tries`` choices followed it."""
    wins = completing_cells(board, board.turn)
    blocks = completing_cells(board, board.turn.other)
    required, rule = (wins, "win") if wins else (blocks, "block") if blocks else (set(), "none")
    for _ in range(tries):
        cell = casual.choose(board)
        assert cell in board.legal_moves, str(board)
        if required:
            assert cell in required, (str(board), rule, cell)
    return rule


@pytest.mark.parametrize("skill", [0.0, CASUAL_SKILL])
def test_casual_takes_every_win_and_blocks_every_loss_in_one_on_3x3(skill: float) -> None:
    # At skill 0 every other move is random: only the rules themselves can pass this.
    casual = CasualStrategy(random.Random(4), skill=skill)
    rules = Counter(check_takes_wins_and_blocks(board, casual, tries=4) for board in LIVE_POSITIONS)
    assert rules["win"] > 1000
    assert rules["block"] > 500


@pytest.mark.parametrize("size", [4, 5])
def test_casual_takes_wins_and_blocks_on_the_larger_boards(size: int) -> None:
    rng = random.Random(size)
    casual = CasualStrategy(rng, skill=0.0)
    rules: Counter[str] = Counter()
    for _ in range(60):
        board = Board(size)
        while not board.is_over:
            rules[check_takes_wins_and_blocks(board, casual, tries=2)] += 1
            board = board.play(rng.choice(board.legal_moves))
    assert rules["win"] > 20
    assert rules["block"] > 20


def test_casual_at_full_skill_plays_as_smart_and_at_none_anywhere() -> None:
    perfect = CasualStrategy(random.Random(1), skill=1.0)
    smart = SmartStrategy()
    for board in LIVE_POSITIONS:
        assert perfect.choose(board) in smart.candidates(board), str(board)
    careless = CasualStrategy(random.Random(1), skill=0.0)
    assert {careless.choose(Board()) for _ in range(300)} == set(range(9))
    # smart always opens in the centre; casual at its own skill does not.
    assert smart.candidates(Board()) == (4,)
    casual = CasualStrategy(random.Random(1))
    openings = Counter(casual.choose(Board()) for _ in range(1000))
    assert set(openings) == set(range(9))
    assert 300 < openings[4] < 450  # skill 0.3 of smart's centre, plus 0.7 of one in nine


@pytest.mark.parametrize("skill", [-0.1, 1.5])
def test_casual_refuses_a_skill_that_is_not_a_probability(skill: float) -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        CasualStrategy(skill=skill)


@pytest.mark.parametrize("size", BOARD_SIZES)
def test_casual_plays_whole_games_at_every_size(size: int) -> None:
    rng = random.Random(size)
    final = play_game(
        Board(size), {Mark.X: get_strategy("casual", rng), Mark.O: get_strategy("random", rng)}
    )
    assert final.is_over


def test_the_levels_are_offered_weakest_first_each_with_one_line() -> None:
    assert list(STRATEGIES) == ["random", "casual", "smart", "minimax"]
    assert [level.name for level in DIFFICULTIES] == list(STRATEGIES)
    for level in DIFFICULTIES:
        assert describe(level.name) == level.description
        # One line that fits a Discord choice's name (100 characters) with the level's name.
        assert "\n" not in level.description
        assert len(f"{level.name}: {level.description}") <= 100
        assert level.description.endswith(".")
    assert isinstance(get_strategy("Casual"), CasualStrategy)
    with pytest.raises(ValueError, match="random, casual, smart, minimax"):
        describe("expert")


# -- the ladder's targets on 3x3 -------------------------------------------------------------


@pytest.fixture(scope="module")
def ladder_3x3() -> dict[Pairing, Winners]:
    return {
        pairing: play_games(pairing, range(GAMES), SEED, DEFAULT_NODES)
        for pairing in (Pairing(3, x, o) for x in LEVELS for o in LEVELS)
    }


def both_sides(results: dict[Pairing, Winners], level: str, opponent: str) -> tuple[int, ...]:
    """``level``'s wins, draws and losses against ``opponent``, as X and as O together."""
    as_x = record(results[Pairing(3, level, opponent)], Mark.X)
    as_o = record(results[Pairing(3, opponent, level)], Mark.O)
    return tuple(x + o for x, o in zip(as_x, as_o, strict=True))


def test_casual_loses_at_least_a_quarter_of_its_games_against_minimax(
    ladder_3x3: dict[Pairing, Winners],
) -> None:
    wins, _, losses = both_sides(ladder_3x3, "casual", "minimax")
    assert wins == 0
    assert losses >= 0.25 * 2 * GAMES


def test_casual_wins_at_least_60_percent_against_random_on_either_side(
    ladder_3x3: dict[Pairing, Winners],
) -> None:
    assert record(ladder_3x3[Pairing(3, "casual", "random")], Mark.X)[0] >= 0.6 * GAMES
    assert record(ladder_3x3[Pairing(3, "random", "casual")], Mark.O)[0] >= 0.6 * GAMES


@pytest.mark.parametrize("level", ["smart", "minimax"])
def test_smart_and_minimax_never_lose(ladder_3x3: dict[Pairing, Winners], level: str) -> None:
    for opponent in LEVELS:
        assert both_sides(ladder_3x3, level, opponent)[2] == 0, opponent


def test_each_level_scores_better_than_the_one_below_it(
    ladder_3x3: dict[Pairing, Winners],
) -> None:
    """Points (a win 1, a draw a half) against every opponent: random < casual < smart."""

    def points(level: str, opponent: str) -> float:
        wins, draws, _ = both_sides(ladder_3x3, level, opponent)
        return wins + draws / 2

    for opponent in LEVELS:
        assert points("random", opponent) < points("casual", opponent) < points("smart", opponent)


def test_the_sampled_games_agree_with_the_exact_expectation(
    ladder_3x3: dict[Pairing, Winners],
) -> None:
    """The benchmark's exact figures model each strategy's choices: a model that drifted from
    the strategies would be off by far more than four standard deviations somewhere."""
    for pairing, winners in ladder_3x3.items():
        shares = exact_shares(pairing.x_level, pairing.o_level)
        for count, share in zip(record(winners, Mark.X), shares, strict=True):
            spread = 4 * (GAMES * share * (1 - share)) ** 0.5 + 1
            assert abs(count - GAMES * share) <= spread, (pairing, count, GAMES * share)


def test_as_x_casual_could_not_lose_a_quarter_against_minimax_at_any_skill() -> None:
    """Why the target counts both sides: the fewer of smart's moves casual plays, the more it
    loses, and even at skill 0 (random but for wins and blocks) it loses 16.5% as X."""
    as_x = [exact_shares("casual", "minimax", skill)[2] for skill in (0.0, 0.3, 0.6, 1.0)]
    assert as_x == sorted(as_x, reverse=True)
    assert as_x[0] == pytest.approx(0.165, abs=0.001)
    assert as_x[-1] == 0.0
    assert exact_shares("minimax", "casual", CASUAL_SKILL)[0] > 0.5  # as O it loses most games
