"""What a finished game counts for: the stats rows and Elo ratings to add, decided in one place.

Pure: it reads a finished :class:`GameRecord` and the players' current ratings and returns the
rows to add; each storage engine only writes them, in the transaction that finishes the game.

- A game a moderator ended counts for nobody.
- An assisted game (its player asked the bot for a hint) counts for nobody: the bot's own
  advice does not win a record against it.
- A game against the bot counts for the human, per difficulty, and never for Elo (so the bot
  cannot be farmed for rating).
- A game with the same member on both sides counts for nothing.
- A game between two members counts for both against ``VS_MEMBER``, and moves their ratings.
- Each board size keeps its own records and ratings: a game counts on its own size only.

>>> update(1200.0, 1200.0, 1.0)
(1216.0, 1184.0)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from bot.storage.base import VS_MEMBER, EndReason, GameRecord
from game import DEFAULT_SIZE, Mark

log = logging.getLogger(__name__)

INITIAL_RATING = 1200.0
K_FACTOR = 32.0


def expected_score(rating: float, opponent: float) -> float:
    """The share of points ``rating`` is expected to take from ``opponent`` (0 to 1)."""
    return 1.0 / (1.0 + float(10.0 ** ((opponent - rating) / 400.0)))


def update(rating_a: float, rating_b: float, score_a: float) -> tuple[float, float]:
    """Both new ratings after a game where A scored ``score_a`` (1 win, 0.5 draw, 0 loss)."""
    change = K_FACTOR * (score_a - expected_score(rating_a, rating_b))
    return rating_a + change, rating_b - change


@dataclass(frozen=True, slots=True)
class Score:
    """One player's result in one game, as increments."""

    wins: int
    losses: int
    draws: int

    @classmethod
    def of(cls, winner: Mark | None, mark: Mark) -> Score:
        """The result for the player of ``mark`` when ``winner`` won (None: a draw)."""
        if winner is None:
            return cls(0, 0, 1)
        return cls(1, 0, 0) if winner is mark else cls(0, 1, 0)


@dataclass(frozen=True, slots=True)
class RecordRow:
    """Add ``score`` to the member's record against ``opponent`` (``VS_MEMBER`` or a
    difficulty) on ``size``x``size`` boards."""

    guild_id: int
    user_id: int
    opponent: str
    score: Score
    size: int = DEFAULT_SIZE


@dataclass(frozen=True, slots=True)
class RatingRow:
    """Set the member's rating on ``size``x``size`` boards to ``rating`` and add one game with
    ``score`` to their rated record there."""

    guild_id: int
    user_id: int
    rating: float
    score: Score
    size: int = DEFAULT_SIZE


@dataclass(frozen=True, slots=True)
class Tally:
    """Everything one finished game adds to the stats."""

    records: tuple[RecordRow, ...] = ()
    ratings: tuple[RatingRow, ...] = ()


def rated_players(game: GameRecord) -> tuple[int, ...]:
    """The members whose current rating :func:`tally` needs for ``game`` (none, or both)."""
    if _counts_for_members(game):
        return game.x_id, game.o_id
    return ()


def tally(game: GameRecord, ratings: Mapping[int, float]) -> Tally:
    """The rows a finished ``game`` adds. ``ratings`` holds the current rating on the game's
    board size of each of :func:`rated_players` who has one; a member without one starts at
    ``INITIAL_RATING``."""
    if game.is_active:
        raise ValueError(f"game {game.id} is still going: only a finished game counts")
    if game.end_reason is EndReason.ENDED or game.assisted:
        return Tally()
    if game.ai_mark is not None:
        if game.ai_difficulty is None:  # the schema pairs the two; a record without is corrupt
            raise ValueError(f"game {game.id} has an AI side but no difficulty")
        human = game.ai_mark.other
        row = RecordRow(
            game.guild_id,
            game.player_id(human),
            game.ai_difficulty,
            Score.of(game.winner, human),
            game.size,
        )
        return Tally(records=(row,))
    if not _counts_for_members(game):
        # Nobody should be able to start such a game; if one slips through it must not hand
        # its player a win, a loss and a free rating swing.
        log.warning("game %d has the same player on both sides; not counted", game.id)
        return Tally()
    x_score, o_score = Score.of(game.winner, Mark.X), Score.of(game.winner, Mark.O)
    new_x, new_o = update(
        ratings.get(game.x_id, INITIAL_RATING),
        ratings.get(game.o_id, INITIAL_RATING),
        x_score.wins + 0.5 * x_score.draws,
    )
    return Tally(
        records=(
            RecordRow(game.guild_id, game.x_id, VS_MEMBER, x_score, game.size),
            RecordRow(game.guild_id, game.o_id, VS_MEMBER, o_score, game.size),
        ),
        ratings=(
            RatingRow(game.guild_id, game.x_id, new_x, x_score, game.size),
            RatingRow(game.guild_id, game.o_id, new_o, o_score, game.size),
        ),
    )


def _counts_for_members(game: GameRecord) -> bool:
    return (
        game.ai_mark is None
        and game.end_reason is not EndReason.ENDED
        and not game.assisted
        and game.x_id != game.o_id
    )
