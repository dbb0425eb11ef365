"""The table: points, then the tie-breaks in order (Buchholz cut-1, Sonneborn-Berger,
head-to-head, games played as O, the rating before the event), and each round's result.

Byes and forfeits are games not played: for Buchholz and Sonneborn-Berger such a round counts
a virtual opponent whose points are the player's own (the "dummy opponent" of FIDE's tie-break
regulations), so that neither an absent opponent nor a bye pulls a player's tie-breaks far down
or up; and Buchholz cut-1 cuts such a round first. docs/playing.md has worked examples."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import groupby

from tournament.model import (
    Entrant,
    Game,
    Record,
    RoundResult,
    Standing,
    check_entrants,
    check_withdrawn,
    read_games,
)


def standings(
    entrants: Sequence[Entrant], games: Sequence[Game], withdrawn: Collection[int] = ()
) -> list[Standing]:
    """Every entrant's row, best first; players equal on every tie-break share a rank (and are
    listed by id). Unfinished games count nothing yet."""
    by_player = check_entrants(entrants)
    records = read_games(by_player, games)
    out = check_withdrawn(by_player, withdrawn)
    rounds = max((game.round for game in games), default=0)
    rows = []
    for entrant in entrants:
        record = records[entrant.player]
        buchholz, sonneborn_berger = _opposition(record, records)
        rows.append(
            _Row(
                entrant,
                record,
                buchholz,
                sonneborn_berger,
                sum(
                    result.side == "o" and not result.forfeit and result.points is not None
                    for result in record.results
                ),
            )
        )
    head_to_head = _head_to_head(rows)
    ordered = sorted(
        rows,
        key=lambda row: (*_key(row, head_to_head[row.entrant.player]), row.entrant.player),
    )
    table = []
    rank = 0
    previous = None
    for place, row in enumerate(ordered, start=1):
        key = _key(row, head_to_head[row.entrant.player])
        if key != previous:
            rank, previous = place, key
        table.append(
            Standing(
                rank=rank,
                player=row.entrant.player,
                points=row.record.points,
                buchholz_cut1=row.buchholz,
                sonneborn_berger=row.sonneborn_berger,
                head_to_head=head_to_head[row.entrant.player],
                rating=row.entrant.rating,
                withdrawn=row.entrant.player in out,
                results=_round_results(row.record, rounds),
                games_as_o=row.games_as_o,
            )
        )
    return table


class _Row:
    __slots__ = ("buchholz", "entrant", "games_as_o", "record", "sonneborn_berger")

    def __init__(
        self,
        entrant: Entrant,
        record: Record,
        buchholz: float,
        sonneborn_berger: float,
        games_as_o: int,
    ) -> None:
        self.entrant = entrant
        self.record = record
        self.buchholz = buchholz
        self.sonneborn_berger = sonneborn_berger
        self.games_as_o = games_as_o

    @property
    def level(self) -> tuple[float, float, float]:
        """What head-to-head separates: points, Buchholz cut-1, Sonneborn-Berger."""
        return self.record.points, self.buchholz, self.sonneborn_berger


def _key(row: _Row, head_to_head: float) -> tuple[float, ...]:
    points, buchholz, sonneborn_berger = row.level
    return (
        -points,
        -buchholz,
        -sonneborn_berger,
        -head_to_head,
        -row.games_as_o,
        -row.entrant.rating,
    )


def _opposition(record: Record, records: dict[int, Record]) -> tuple[float, float]:
    """Buchholz cut-1 and Sonneborn-Berger over the finished rounds. Each round's value is the
    opponent's points, or for a round without a real game (a bye, a forfeit) the player's own
    points (the virtual opponent). Buchholz cut-1 is their sum less one value: a round without
    a real game if there is one (it says nothing of the opposition), else the lowest.
    Sonneborn-Berger is the sum of each value times the points scored in that round."""
    played: list[float] = []
    unplayed: list[float] = []
    sonneborn_berger = 0.0
    for result in record.results:
        if result.points is None:
            continue
        if result.opponent is None or result.forfeit:
            value = record.points
            unplayed.append(value)
        else:
            value = records[result.opponent].points
            played.append(value)
        sonneborn_berger += value * result.points
    cut = min(unplayed or played or [0.0])
    return sum(played) + sum(unplayed) - cut, sonneborn_berger


def _head_to_head(rows: list[_Row]) -> dict[int, float]:
    """Each player's points in finished games against the others level with them on points,
    Buchholz cut-1 and Sonneborn-Berger (0 for a player level with nobody)."""
    scores = dict.fromkeys((row.entrant.player for row in rows), 0.0)
    for _, group in groupby(sorted(rows, key=lambda row: row.level), key=lambda row: row.level):
        members = list(group)
        if len(members) < 2:
            continue
        level = {row.entrant.player for row in members}
        for row in members:
            scores[row.entrant.player] = sum(
                result.points
                for result in row.record.results
                if result.opponent in level and result.points is not None
            )
    return scores


def _round_results(record: Record, rounds: int) -> tuple[RoundResult, ...]:
    """One result a round 1..``rounds``: a round without a game (withdrawn before it was
    paired) has no opponent, no side and 0 points."""
    by_round = {result.round: result for result in record.results}
    return tuple(
        by_round.get(number, RoundResult(number, None, None, 0.0, False))
        for number in range(1, rounds + 1)
    )
