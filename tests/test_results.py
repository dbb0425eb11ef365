"""What a finished game counts for (``bot.results``), on its own: no storage, no Discord."""

from __future__ import annotations

import logging
import math
from dataclasses import replace

import pytest

from bot.results import (
    INACTIVITY_GROWTH,
    INITIAL_DEVIATION,
    INITIAL_RATING,
    PROVISIONAL_DEVIATION,
    PROVISIONAL_GAMES,
    RATING_PERIOD_SECONDS,
    RatingRow,
    RecordRow,
    Score,
    Standing,
    Tally,
    conservative,
    is_provisional,
    play,
    ranked,
    rated_players,
    replay,
    tally,
)
from bot.storage.base import VS_MEMBER, EndReason, GameRecord, GameStatus, Rating
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
    ended_at: float = 0.0,
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
        updated_at=ended_at,
        rematch_of=None,
        assisted=assisted,
    )


# -- ratings ---------------------------------------------------------------------------------

WEEK = RATING_PERIOD_SECONDS
NEW = Standing()


def test_a_win_between_newcomers_moves_both_alike_and_makes_both_surer() -> None:
    winner, loser = play(NEW, NEW, 1.0, at=5.0)
    assert winner.rating > INITIAL_RATING > loser.rating
    assert winner.rating - INITIAL_RATING == pytest.approx(INITIAL_RATING - loser.rating)
    assert winner.deviation == loser.deviation < INITIAL_DEVIATION
    assert winner.last_played == loser.last_played == 5.0


def test_a_draw_between_equals_moves_no_rating_but_makes_both_surer() -> None:
    x, o = play(NEW, NEW, 0.5, at=0.0)
    assert x.rating == o.rating == INITIAL_RATING
    assert x.deviation == o.deviation < INITIAL_DEVIATION


def test_an_upset_moves_more_than_the_expected_result() -> None:
    favourite, underdog = Standing(1500.0, 100.0, 0.0), Standing(1100.0, 100.0, 0.0)
    expected, _ = play(favourite, underdog, 1.0, at=0.0)
    upset, _ = play(favourite, underdog, 0.0, at=0.0)
    assert 0 < expected.rating - 1500.0 < 1500.0 - upset.rating


def test_a_sure_rating_moves_less_than_an_unsure_one() -> None:
    sure, _ = play(Standing(1200.0, 80.0, 0.0), NEW, 1.0, at=0.0)
    unsure, _ = play(NEW, NEW, 1.0, at=0.0)
    assert 0 < sure.rating - 1200.0 < unsure.rating - 1200.0


def test_the_deviation_grows_with_time_away_up_to_the_initial_one() -> None:
    kept = Standing(1400.0, 100.0, last_played=1_000.0)
    assert kept.deviation_at(1_000.0) == kept.deviation_at(500.0) == 100.0
    assert kept.deviation_at(1_000.0 + WEEK) == pytest.approx(math.hypot(100.0, INACTIVITY_GROWTH))
    # Prorated: half a week adds half a period's variance.
    assert kept.deviation_at(1_000.0 + WEEK / 2) == pytest.approx(
        math.sqrt(100.0**2 + INACTIVITY_GROWTH**2 / 2)
    )
    assert kept.deviation_at(1_000.0 + 1_000 * WEEK) == INITIAL_DEVIATION
    # Never played, or not known when: nothing to grow from.
    assert Standing(1400.0, 100.0).deviation_at(1e12) == 100.0


def test_a_game_after_a_long_absence_rates_from_the_grown_deviation() -> None:
    back = Standing(1400.0, 100.0, last_played=0.0)
    now = 52 * WEEK
    after_a_year, _ = play(back, NEW, 1.0, at=now)
    grown = Standing(1400.0, back.deviation_at(now), last_played=now)
    as_if_grown, _ = play(grown, NEW, 1.0, at=now)
    right_away, _ = play(back, NEW, 1.0, at=0.0)
    assert after_a_year == as_if_grown
    assert after_a_year.rating - 1400.0 > right_away.rating - 1400.0 > 0


def test_the_conservative_figure_is_the_rating_less_three_deviations() -> None:
    assert conservative(1500.0, 100.0) == pytest.approx(1200.0)
    assert conservative(INITIAL_RATING, INITIAL_DEVIATION) == pytest.approx(150.0)


def test_a_rating_is_provisional_with_few_games_or_a_wide_deviation() -> None:
    assert is_provisional(PROVISIONAL_GAMES - 1, 50.0)
    assert is_provisional(100, PROVISIONAL_DEVIATION + 1)
    assert not is_provisional(PROVISIONAL_GAMES, PROVISIONAL_DEVIATION)


def _row(user_id: int, rating: float, deviation: float, games: int, last: float) -> Rating:
    return Rating(user_id, rating, deviation, games, games, 0, 0, last)


def test_one_lucky_win_does_not_top_the_ranking() -> None:
    lucky, _ = play(NEW, NEW, 1.0, at=0.0)
    steady = _row(ALICE, 1290.0, 90.0, 40, 0.0)
    newcomer = _row(BOB, lucky.rating, lucky.deviation, 1, 0.0)
    assert newcomer.rating > steady.rating
    assert [r.user_id for r in ranked([newcomer, steady], now=0.0)] == [ALICE, BOB]


def test_the_ranking_grows_deviations_to_the_moment_it_is_read() -> None:
    away = _row(ALICE, 1400.0, 60.0, 40, 0.0)
    playing = _row(BOB, 1350.0, 60.0, 40, 30 * WEEK)
    assert [r.user_id for r in ranked([playing, away], now=0.0)] == [ALICE, BOB]
    later = ranked([playing, away], now=30 * WEEK)
    assert [r.user_id for r in later] == [BOB, ALICE]
    assert later[1].deviation == Standing(1400.0, 60.0, 0.0).deviation_at(30 * WEEK)
    # Ties: more games first, then the lower id.
    even = [_row(9, 1200.0, 300.0, 2, 0.0), _row(8, 1200.0, 300.0, 2, 0.0)]
    assert [r.user_id for r in ranked([*even, _row(7, 1200.0, 300.0, 1, 0.0)], 0.0)] == [8, 9, 7]


# -- scores ----------------------------------------------------------------------------------


def test_a_score_is_a_win_a_loss_or_a_draw() -> None:
    assert Score.of(Mark.X, Mark.X) == WIN
    assert Score.of(Mark.X, Mark.O) == LOSS
    assert Score.of(None, Mark.O) == DRAW


# -- what a game counts for --------------------------------------------------------------------


def test_a_win_between_members_counts_for_both_and_moves_their_ratings() -> None:
    won = game(Mark.X, EndReason.LINE, ended_at=60.0)
    assert rated_players(won) == (ALICE, BOB)
    alice, bob = play(NEW, NEW, 1.0, at=60.0)
    assert tally(won, {}) == Tally(
        records=(
            RecordRow(GUILD, ALICE, VS_MEMBER, WIN),
            RecordRow(GUILD, BOB, VS_MEMBER, LOSS),
        ),
        ratings=(
            RatingRow(GUILD, ALICE, alice, WIN),
            RatingRow(GUILD, BOB, bob, LOSS),
        ),
    )
    assert alice.rating > INITIAL_RATING > bob.rating


def test_ratings_start_from_the_current_ones_at_the_games_end() -> None:
    current = {ALICE: Standing(1300.0, 90.0, 0.0), BOB: Standing(1100.0, 200.0, 0.0)}
    counted = tally(game(Mark.O, EndReason.RESIGN, ended_at=3 * WEEK), current)
    alice, bob = play(current[ALICE], current[BOB], 0.0, at=3 * WEEK)
    assert counted.ratings == (
        RatingRow(GUILD, ALICE, alice, LOSS),
        RatingRow(GUILD, BOB, bob, WIN),
    )


def test_a_draw_between_members_is_half_a_point_each() -> None:
    favourite = Standing(1300.0, 90.0, 0.0)
    counted = tally(game(None, EndReason.DRAW), {ALICE: favourite})
    alice, bob = play(favourite, NEW, 0.5, at=0.0)
    assert alice.rating < 1300.0  # the favourite drew: it loses points to the newcomer
    assert [row.score for row in counted.records] == [DRAW, DRAW]
    assert [row.standing for row in counted.ratings] == [alice, bob]


def test_a_timeout_counts_like_any_other_win() -> None:
    timed_out = tally(game(Mark.O, EndReason.TIMEOUT), {})
    lined = tally(game(Mark.O, EndReason.LINE), {})
    assert timed_out == lined


def test_a_game_against_the_bot_counts_per_difficulty_and_is_never_rated() -> None:
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
    assert tally(ended, {ALICE: Standing(1300.0), BOB: Standing(1100.0)}) == Tally()


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
    member = tally(game(Mark.O, EndReason.LINE, size=4), {ALICE: Standing(1300.0)})
    assert {row.size for row in member.records} == {row.size for row in member.ratings} == {4}
    against_bot = tally(
        game(None, EndReason.DRAW, o_id=BOT, ai_mark=Mark.O, ai_difficulty="minimax", size=5), {}
    )
    assert against_bot == Tally(records=(RecordRow(GUILD, ALICE, "minimax", DRAW, 5),))


# -- replaying the stored games ----------------------------------------------------------------


def test_a_replay_rates_the_games_in_the_order_given_as_tally_did() -> None:
    games = [
        game(Mark.X, EndReason.LINE, ended_at=10.0),
        replace(game(None, EndReason.DRAW, x_id=BOB, o_id=103, ended_at=WEEK), id=8),
        replace(game(Mark.O, EndReason.TIMEOUT, x_id=103, o_id=ALICE, ended_at=2 * WEEK), id=9),
        # Rated by nobody, or on another size or guild: apart.
        game(Mark.X, EndReason.ENDED, ended_at=3 * WEEK),
        game(Mark.X, EndReason.LINE, x_id=BOT, ai_mark=Mark.X, ai_difficulty="smart"),
        game(Mark.X, EndReason.LINE, size=4, ended_at=4 * WEEK),
    ]
    kept: dict[tuple[int, int], Standing] = {}
    for one in games:
        current = {u: kept[one.size, u] for u in rated_players(one) if (one.size, u) in kept}
        for row in tally(one, current).ratings:
            kept[row.size, row.user_id] = row.standing
    replayed = replay(games)
    assert {key: Standing(r.rating, r.deviation, r.last_played) for key, r in replayed.items()} == {
        (GUILD, size, user_id): standing for (size, user_id), standing in kept.items()
    }
    alice = replayed[GUILD, 3, ALICE]
    assert (alice.games, alice.wins, alice.losses, alice.draws) == (2, 2, 0, 0)
    assert alice.last_played == 2 * WEEK
    assert replayed[GUILD, 3, BOB].draws == 1
    assert replayed[GUILD, 4, ALICE].games == 1
