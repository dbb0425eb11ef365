"""The tournament's records: who entered, who plays whom, how games ended, and the standings'
rows; and the checks every entry point makes of what it is given."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

ROUND_ROBIN_MOST = 10  # most players a round robin takes
MOST_ROUNDS = 20  # most rounds a Swiss may be given by hand

Side = Literal["x", "o"]

# What a finished game may give X: a win, a draw, a loss.
_RESULTS = (1.0, 0.5, 0.0)
BYE_POINTS = 1.0


class Format(StrEnum):
    SWISS = "swiss"
    ROUND_ROBIN = "round-robin"


@dataclass(frozen=True, slots=True)
class Entrant:
    player: int  # the member's id
    rating: float  # their rating before the event (the last tie-break, and seeding)


@dataclass(frozen=True, slots=True)
class Pairing:
    board: int  # 1-based table number within the round, top boards first
    x: int  # moves first
    o: int | None  # None: x has the bye this round


@dataclass(frozen=True, slots=True)
class Game:
    round: int  # 1-based
    x: int
    o: int | None  # None: a bye (x_points is then 1.0)
    x_points: float | None  # 1.0 x won, 0.5 draw, 0.0 o won; None while unfinished
    forfeit: bool = False  # decided without play (timeout, removal, a player who left)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One player's round. A bye: no opponent, no side, 1 point. No game at all (withdrawn
    before the round was paired): no opponent, no side, 0 points."""

    round: int
    opponent: int | None  # None: bye (or no game: withdrawn before it)
    side: Side | None
    points: float | None  # None: not finished
    forfeit: bool


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int  # 1-based; equal on every tie-break -> equal rank
    player: int
    points: float
    buchholz_cut1: float
    sonneborn_berger: float
    head_to_head: float  # points against those level with them on the above
    rating: float
    withdrawn: bool
    results: tuple[RoundResult, ...]  # one per round played so far, in round order
    # Added to the agreed API: games played as O (moving second), the tie-break between
    # head-to-head and rating (docs/playing.md says why).
    games_as_o: int = 0


@dataclass(slots=True)
class Record:
    """What the games say about one player so far, in round order."""

    results: list[RoundResult]
    points: float = 0.0
    x_games: int = 0  # games played as X (forfeits included: the side was given)
    o_games: int = 0
    byes: int = 0

    @property
    def sides(self) -> list[Side]:
        """The sides this player was given, oldest first (byes have none)."""
        return [result.side for result in self.results if result.side is not None]

    @property
    def opponents(self) -> set[int]:
        return {result.opponent for result in self.results if result.opponent is not None}


def check_entrants(entrants: Sequence[Entrant]) -> dict[int, Entrant]:
    """The entrants by id; a player entered twice is a ``ValueError``."""
    by_player: dict[int, Entrant] = {}
    for entrant in entrants:
        if entrant.player in by_player:
            raise ValueError(f"player {entrant.player} is entered twice")
        by_player[entrant.player] = entrant
    return by_player


def check_withdrawn(by_player: dict[int, Entrant], withdrawn: Collection[int]) -> frozenset[int]:
    for player in sorted(withdrawn):
        if player not in by_player:
            raise ValueError(f"withdrawn player {player} is not an entrant")
    return frozenset(withdrawn)


def check_player_count(players: int, most: int | None = None) -> None:
    if players < 2:
        raise ValueError(f"a tournament needs at least 2 players, not {players}")
    if most is not None and players > most:
        raise ValueError(f"a round robin takes at most {most} players, not {players}")


def read_games(by_player: dict[int, Entrant], games: Sequence[Game]) -> dict[int, Record]:
    """Every entrant's record from ``games`` (in any order), after checking each game: its
    round, its players (entrants, two different ones, one game a round each) and its result."""
    per_round: dict[tuple[int, int], Game] = {}
    for game in games:
        if game.round < 1:
            raise ValueError(f"a game of round {game.round}: rounds are numbered from 1")
        for player in (game.x, game.o):
            if player is None:
                continue
            if player not in by_player:
                raise ValueError(f"a game of round {game.round} names {player}, not an entrant")
            earlier = per_round.setdefault((game.round, player), game)
            if earlier is not game:
                raise ValueError(f"player {player} has two games in round {game.round}")
        if game.x == game.o:
            raise ValueError(f"player {game.x} is paired with themself in round {game.round}")
        if game.x_points is not None and game.x_points not in _RESULTS:
            raise ValueError(
                f"round {game.round}'s game of {game.x} has x_points {game.x_points}: "
                "1.0, 0.5, 0.0 or None"
            )
        if game.o is None and game.x_points not in (None, BYE_POINTS):
            raise ValueError(
                f"round {game.round}'s bye of {game.x} has x_points {game.x_points}: a bye is "
                "worth 1.0"
            )
    records = {player: Record(results=[]) for player in by_player}
    for game in sorted(games, key=lambda game: (game.round, game.x)):
        if game.o is None:
            record = records[game.x]
            record.results.append(RoundResult(game.round, None, None, BYE_POINTS, False))
            record.points += BYE_POINTS
            record.byes += 1
            continue
        x_points = game.x_points
        o_points = None if x_points is None else 1.0 - x_points
        for player, opponent, side, points in (
            (game.x, game.o, "x", x_points),
            (game.o, game.x, "o", o_points),
        ):
            record = records[player]
            record.results.append(
                RoundResult(game.round, opponent, "x" if side == "x" else "o", points, game.forfeit)
            )
            record.points += points or 0.0
            if side == "x":
                record.x_games += 1
            else:
                record.o_games += 1
    return records
