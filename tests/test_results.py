"""What a finished game counts for (``bot.results``), on its own: no storage, no Discord."""

from __future__ import annotations

import logging

import pytest

from bot.results import (
    INITIAL_RATING,
    RatingRow,
    RecordRow,
    Score,
    Tally,
    expected_score,
    rated_players,
    tally,
    update,
)
from bot.storage.base import VS_MEMBER, EndReason, GameRecord, GameStatus
from game import Mark

GUILD, ALICE, BOB, BOT = 10, 101, 102, 999
WIN, LOSS, DRAW = Score(1, 0, 0), Score(0, 1, 0), Score(0, 0, 1)


def game(
    winner: Mark | None,
    reason: EndReason,
    *,
    x_id: int = ALICE,
    o_id: int = BOB,
    ai_mark: Mark | None = None,
    ai_difficulty: str | None = None,
    status: GameStatus = GameStatus.FINISHED,
    size: int = 3,
    assisted: bool = False,
) -> GameRecord:
    return GameRecord(
        id=7,
        guild_id=GUILD,
        channel_id=20,
        x_id=x_id,
        o_id=o_id,
        x_name="x",
        o_name="o",
        ai_difficulty=ai_difficulty,
        ai_mark=ai_mark,
        size=size,
        moves=(),
        status=status,
        winner=winner,
        end_reason=reason,
        message_id=None,
        deadline=None,
        version=3,
        created_at=0.0,
        updated_at=0.0,
        rematch_of=None,
        assisted=assisted,
    )


# -- Elo -------------------------------------------------------------------------------------


def test_equal_ratings_expect_half_a_point_each() -> None:
    assert expected_score(1500.0, 1500.0) == 0.5


def test_four_hundred_points_ahead_expects_ten_to_one() -> None:
    assert expected_score(1600.0, 1200.0) == pytest.approx(10 / 11)


def test_a_win_between_equals_moves_both_by_half_the_k_factor() -> None:
    assert update(1200.0, 1200.0, 1.0) == (1216.0, 1184.0)
    assert update(1200.0, 1200.0, 0.5) == (1200.0, 1200.0)


def test_an_update_moves_as_many_points_as_it_takes() -> None:
    new_a, new_b = update(1350.0, 1100.0, 0.0)
    assert new_a + new_b == pytest.approx(1350.0 + 1100.0)
    assert new_a < 1350.0
    assert new_b > 1100.0


# -- scores ----------------------------------------------------------------------------------


def test_a_score_is_a_win_a_loss_or_a_draw() -> None:
    assert Score.of(Mark.X, Mark.X) == WIN
    assert Score.of(Mark.X, Mark.O) == LOSS
    assert Score.of(None, Mark.O) == DRAW


# -- what a game counts for --------------------------------------------------------------------


def test_a_win_between_members_counts_for_both_and_moves_their_ratings() -> None:
    won = game(Mark.X, EndReason.LINE)
    assert rated_players(won) == (ALICE, BOB)
    assert tally(won, {}) == Tally(
        records=(
            RecordRow(GUILD, ALICE, VS_MEMBER, WIN),
            RecordRow(GUILD, BOB, VS_MEMBER, LOSS),
        ),
        ratings=(
            RatingRow(GUILD, ALICE, INITIAL_RATING + 16, WIN),
            RatingRow(GUILD, BOB, INITIAL_RATING - 16, LOSS),
        ),
    )


def test_ratings_start_from_the_current_ones() -> None:
    counted = tally(game(Mark.O, EndReason.RESIGN), {ALICE: 1300.0, BOB: 1100.0})
    alice, bob = update(1300.0, 1100.0, 0.0)
    assert counted.ratings == (
        RatingRow(GUILD, ALICE, alice, LOSS),
        RatingRow(GUILD, BOB, bob, WIN),
    )


def test_a_draw_between_members_is_half_a_point_each() -> None:
    counted = tally(game(None, EndReason.DRAW), {ALICE: 1300.0})
    alice, bob = update(1300.0, INITIAL_RATING, 0.5)
    assert alice < 1300.0  # the favourite drew: it loses points to the newcomer
    assert [row.score for row in counted.records] == [DRAW, DRAW]
    assert [row.rating for row in counted.ratings] == [alice, bob]


def test_a_timeout_counts_like_any_other_win() -> None:
    timed_out = tally(game(Mark.O, EndReason.TIMEOUT), {})
    lined = tally(game(Mark.O, EndReason.LINE), {})
    assert timed_out == lined


def test_a_game_against_the_bot_counts_per_difficulty_and_never_for_elo() -> None:
    lost = game(Mark.X, EndReason.LINE, x_id=BOT, ai_mark=Mark.X, ai_difficulty="smart")
    assert rated_players(lost) == ()
    assert tally(lost, {}) == Tally(records=(RecordRow(GUILD, BOB, "smart", LOSS),))
    drawn = game(None, EndReason.DRAW, o_id=BOT, ai_mark=Mark.O, ai_difficulty="minimax")
    assert tally(drawn, {}) == Tally(records=(RecordRow(GUILD, ALICE, "minimax", DRAW),))


@pytest.mark.parametrize("ai_mark", [None, Mark.O])
def test_a_game_a_moderator_ended_counts_for_nobody(ai_mark: Mark | None) -> None:
    ended = game(
        None, EndReason.ENDED, ai_mark=ai_mark, ai_difficulty="random" if ai_mark else None
    )
    assert rated_players(ended) == ()
    assert tally(ended, {ALICE: 1300.0, BOB: 1100.0}) == Tally()


@pytest.mark.parametrize("winner", [Mark.X, Mark.O, None])
def test_an_assisted_game_counts_for_nobody(winner: Mark | None) -> None:
    """A hint from the bot makes the game count in no record: not even the loss."""
    reason = EndReason.DRAW if winner is None else EndReason.LINE
    helped = game(winner, reason, o_id=BOT, ai_mark=Mark.O, ai_difficulty="minimax", assisted=True)
    assert rated_players(helped) == ()
    assert tally(helped, {}) == Tally()


def test_the_same_member_on_both_sides_counts_for_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    alone = game(Mark.X, EndReason.LINE, o_id=ALICE)
    assert rated_players(alone) == ()
    with caplog.at_level(logging.WARNING, logger="bot.results"):
        assert tally(alone, {}) == Tally()
    assert "same player on both sides" in caplog.text


def test_a_game_still_going_counts_for_nothing_yet() -> None:
    with pytest.raises(ValueError, match="still going"):
        tally(game(None, EndReason.LINE, status=GameStatus.ACTIVE), {})


def test_an_ai_side_without_a_difficulty_is_refused() -> None:
    with pytest.raises(ValueError, match="no difficulty"):
        tally(game(Mark.X, EndReason.LINE, ai_mark=Mark.X), {})


def test_a_game_counts_on_its_own_board_size() -> None:
    member = tally(game(Mark.O, EndReason.LINE, size=4), {ALICE: 1300.0})
    assert {row.size for row in member.records} == {row.size for row in member.ratings} == {4}
    against_bot = tally(
        game(None, EndReason.DRAW, o_id=BOT, ai_mark=Mark.O, ai_difficulty="minimax", size=5), {}
    )
    assert against_bot == Tally(records=(RecordRow(GUILD, ALICE, "minimax", DRAW, 5),))
