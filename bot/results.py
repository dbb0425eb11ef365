"""What a finished game counts for: the stats rows and ratings to add, decided in one place.

Pure: it reads a finished :class:`GameRecord` and the players' current ratings and returns the
rows to add; each storage engine only writes them, in the transaction that finishes the game.

- A game a moderator ended counts for nobody.
- An assisted game (its player asked the bot for a hint) counts for nobody: the bot's own
  advice does not win a record against it.
- A game against the bot counts for the human, per difficulty, and is never rated (so the bot
  cannot be farmed for rating).
- A game with the same member on both sides counts for nothing.
- A game between two members counts for both against ``VS_MEMBER``, and moves their ratings.
- Each board size keeps its own records and ratings: a game counts on its own size only.

A rating is a Weng-Lin (OpenSkill) Plackett-Luce estimate from the ``openskill`` library: a
rating and a deviation (how sure it is; docs/design.md, "Ratings"). The deviation grows with
inactivity, by ``INACTIVITY_GROWTH`` a week in quadrature (Glicko's rating periods, prorated to
the second), up to ``INITIAL_DEVIATION``: applied when a rating is read and before each game.
The leaderboard ranks by the conservative figure the library recommends (its ordinal: the
rating less three deviations), so one lucky win does not top it.

>>> winner, loser = play(Standing(), Standing(), 1.0, at=0.0)
>>> (round(winner.rating), round(winner.deviation), round(loser.rating))
(1311, 339, 1089)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from openskill.models import PlackettLuce

from bot.storage.base import VS_MEMBER, EndReason, GameRecord, Rating
from game import DEFAULT_SIZE, Mark

log = logging.getLogger(__name__)

# On the scale of the Elo ratings this replaced (a new member started at 1200), so that the
# figures players know keep their meaning.
INITIAL_RATING = 1200.0
# As unsure as Glicko's newcomer: two deviations either side span most of the scale in use.
INITIAL_DEVIATION = 350.0
# The library's defaults scaled to that deviation (beta = sigma / 2, tau = sigma / 100): only
# their ratios to each other matter, the rating's origin does not.
MODEL = PlackettLuce(
    mu=INITIAL_RATING,
    sigma=INITIAL_DEVIATION,
    beta=INITIAL_DEVIATION / 2,
    tau=INITIAL_DEVIATION / 100,
)
RATING_PERIOD_SECONDS = 7 * 24 * 3600.0  # a week
# A deviation of 200 (some 30 games) is back at INITIAL_DEVIATION after a year away:
# sqrt(200^2 + 52 * 40^2) is about 350.
INACTIVITY_GROWTH = 40.0
# Provisional: too few games to say much, or away so long the rating is mostly a guess again.
PROVISIONAL_GAMES = 10
PROVISIONAL_DEVIATION = 300.0


@dataclass(frozen=True, slots=True)
class Standing:
    """A member's rating on one board size: the estimate, how unsure it is, and when it last
    moved (None: never, or not known)."""

    rating: float = INITIAL_RATING
    deviation: float = INITIAL_DEVIATION
    last_played: float | None = None

    def deviation_at(self, now: float) -> float:
        """The deviation at ``now``: grown by the rating periods since the last game."""
        if self.last_played is None or now <= self.last_played:
            return self.deviation
        periods = (now - self.last_played) / RATING_PERIOD_SECONDS
        grown = math.sqrt(self.deviation**2 + periods * INACTIVITY_GROWTH**2)
        return min(grown, max(self.deviation, INITIAL_DEVIATION))


def play(x: Standing, o: Standing, x_score: float, at: float) -> tuple[Standing, Standing]:
    """Both players' standings after a game at ``at`` where X scored ``x_score`` (1 win, 0.5
    draw, 0 loss), each first grown for their time away."""
    x_now = MODEL.rating(mu=x.rating, sigma=x.deviation_at(at))
    o_now = MODEL.rating(mu=o.rating, sigma=o.deviation_at(at))
    # Lower ranks finish ahead; equal ranks draw.
    ranks = [0.0, 0.0] if x_score == 0.5 else ([0.0, 1.0] if x_score == 1.0 else [1.0, 0.0])
    [[new_x], [new_o]] = MODEL.rate([[x_now], [o_now]], ranks=ranks)
    return Standing(new_x.mu, new_x.sigma, at), Standing(new_o.mu, new_o.sigma, at)


def conservative(rating: float, deviation: float) -> float:
    """The figure the leaderboard ranks by: the library's ordinal (rating less three
    deviations), a rating the member is very likely at least as good as."""
    return float(MODEL.rating(mu=rating, sigma=deviation).ordinal())


def is_provisional(games: int, deviation: float) -> bool:
    """Whether a rating is still (or again) too unsure to mean much."""
    return games < PROVISIONAL_GAMES or deviation > PROVISIONAL_DEVIATION


def as_of(row: Rating, now: float) -> Rating:
    """``row`` with its deviation grown to ``now``."""
    grown = Standing(row.rating, row.deviation, row.last_played).deviation_at(now)
    return replace(row, deviation=grown)


def ranked(rows: Iterable[Rating], now: float) -> list[Rating]:
    """``rows`` as of ``now``, best first: by the conservative figure, then most games, then
    the lowest user id."""
    current = [as_of(row, now) for row in rows]
    return sorted(
        current, key=lambda r: (-conservative(r.rating, r.deviation), -r.games, r.user_id)
    )


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
    """Set the member's standing on ``size``x``size`` boards to ``standing`` and add one game
    with ``score`` to their rated record there."""

    guild_id: int
    user_id: int
    standing: Standing
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


def tally(game: GameRecord, standings: Mapping[int, Standing]) -> Tally:
    """The rows a finished ``game`` adds. ``standings`` holds the current standing on the
    game's board size of each of :func:`rated_players` who has one; a member without one
    starts afresh (:class:`Standing`'s defaults). The game is rated at its end (its last save,
    ``updated_at``), so that replaying the stored games gives the same ratings."""
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
    new_x, new_o = play(
        standings.get(game.x_id, Standing()),
        standings.get(game.o_id, Standing()),
        x_score.wins + 0.5 * x_score.draws,
        game.updated_at,
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


def replay(games: Iterable[GameRecord]) -> dict[tuple[int, int, int], Rating]:
    """Every rated member's rating and rated record, keyed by (guild, size, member), after
    rating ``games`` one after the other through :func:`tally`, as they were rated when they
    ended (the caller gives them in the order they finished)."""
    kept: dict[tuple[int, int, int], Rating] = {}
    for game in games:
        players = rated_players(game)
        if not players:
            continue
        keys = {user_id: (game.guild_id, game.size, user_id) for user_id in players}
        standings = {
            user_id: Standing(row.rating, row.deviation, row.last_played)
            for user_id, key in keys.items()
            if (row := kept.get(key)) is not None
        }
        for counted in tally(game, standings).ratings:
            key = keys[counted.user_id]
            before = kept.get(key) or _UNRATED
            kept[key] = Rating(
                user_id=counted.user_id,
                rating=counted.standing.rating,
                deviation=counted.standing.deviation,
                games=before.games + 1,
                wins=before.wins + counted.score.wins,
                losses=before.losses + counted.score.losses,
                draws=before.draws + counted.score.draws,
                last_played=counted.standing.last_played,
            )
    return kept


_UNRATED = Rating(0, INITIAL_RATING, INITIAL_DEVIATION, 0, 0, 0, 0, None)
