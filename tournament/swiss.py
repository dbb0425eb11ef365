"""Swiss pairing: round 1 by rating (the top half against the bottom half), every later round
by a maximum-weight matching whose weights put the rules in order (docs/playing.md, "How
tournaments are paired and scored", states them for players).

Each candidate pair's cost is a number with one "digit" a rule, the first rule the most
significant, so that no amount of a later rule can outweigh one unit of an earlier one:

1. a rematch (a pair who met before), or a second bye for the same player;
2. the bye given to anyone but the lowest-ranked player who has had none (the further up, the
   dearer);
3. the gap between the two players' scores, in half points, squared (two pairs a half point
   apart cost less than one a whole point apart);
4. a side neither player of the pair can do without: both due X, or both due O (the one
   who yields is the one who needs it least; balance first, then alternation);
5. within a score group, the distance from the usual fold (the first of the group against
   the first of its lower half).

The matching has the greatest number of pairs first (everyone active is paired, the odd one
with the bye) and then the least total cost.

For speed, each player is first offered only opponents near them in the ranking whom they
have not met, and those near their fold partner; the bye only the lowest-ranked players who
have had none. When that smaller graph cannot avoid a rematch or a second bye, or cannot give
the bye to the lowest-ranked player without one, it is widened, up to every possible pair,
where the result is the exact optimum.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

from tournament.matching import max_weight_matching
from tournament.model import (
    MOST_ROUNDS,
    Entrant,
    Game,
    Pairing,
    Record,
    Side,
    check_entrants,
    check_player_count,
    check_withdrawn,
    read_games,
)

# Each player is first offered this many neighbours in the ranking each way (of those they have
# not met), and as many either side of their fold partner; doubled on each widening.
FIRST_WINDOW = 3

# How much each kind of side preference weighs when a pairing cannot meet it: one due by
# alternation only (X and O played equally often), by balance (one more of one side), or by
# a balance already two off.
_ALTERNATION, _BALANCE, _IMBALANCE = 1, 4, 16


def swiss_rounds(players: int) -> int:
    """The usual number of rounds: ``ceil(log2(players))``, at least 3."""
    check_player_count(players)
    return max(3, (players - 1).bit_length())


@dataclass(frozen=True, slots=True)
class _Player:
    index: int  # place in the pairing order: score, then rating, then id
    entrant: Entrant
    record: Record
    half_points: int
    group_size: int  # players on the same score
    group_index: int  # place among them

    @property
    def balance(self) -> int:
        """Games as X less games as O."""
        return self.record.x_games - self.record.o_games

    @property
    def due(self) -> tuple[Side | None, int]:
        """The side this player should have next and how much it matters."""
        if self.balance:
            strength = _BALANCE if abs(self.balance) == 1 else _IMBALANCE
            return ("o" if self.balance > 0 else "x"), strength
        sides = self.record.sides
        if sides:
            return ("o" if sides[-1] == "x" else "x"), _ALTERNATION
        return None, 0


def pair_swiss(
    entrants: Sequence[Entrant],
    games: Sequence[Game],
    round: int,
    withdrawn: Collection[int] = (),
) -> list[Pairing]:
    """Round ``round``'s pairings, top boards first, the bye (if any) last.

    ``games`` are every game of the earlier rounds, all finished; ``withdrawn`` players are
    not paired. The same inputs give the same pairings, in any process."""
    by_player = check_entrants(entrants)
    check_player_count(len(by_player))
    if not 1 <= round <= MOST_ROUNDS:
        raise ValueError(f"round {round} is out of range: a Swiss has rounds 1 to {MOST_ROUNDS}")
    records = read_games(by_player, games)
    for game in games:
        if game.round >= round:
            raise ValueError(
                f"a game of round {game.round} was given to pair round {round}: "
                "only earlier rounds' games count"
            )
        if game.o is not None and game.x_points is None:
            raise ValueError(
                f"round {game.round}'s game of {game.x} against {game.o} is unfinished: a "
                "round is paired once every earlier game has ended"
            )
    out = check_withdrawn(by_player, withdrawn)
    active = [entrant for entrant in entrants if entrant.player not in out]
    if len(active) < 2:
        raise ValueError(f"{len(active)} player(s) left to pair: a round needs at least 2")
    if round == 1:
        return _first_round(active)
    return _matched_round(active, records)


def _first_round(active: list[Entrant]) -> list[Pairing]:
    """The fold by rating: 1 against n/2+1, 2 against n/2+2...; the top player of board 1
    moves first, then sides alternate board by board. The lowest-rated has the bye."""
    order = sorted(active, key=lambda entrant: (-entrant.rating, entrant.player))
    half = len(order) // 2
    pairings = []
    for board in range(half):
        top, bottom = order[board].player, order[board + half].player
        x, o = (top, bottom) if board % 2 == 0 else (bottom, top)
        pairings.append(Pairing(board + 1, x, o))
    if len(order) % 2:
        pairings.append(Pairing(half + 1, order[-1].player, None))
    return pairings


def _ranked(active: list[Entrant], records: dict[int, Record]) -> list[_Player]:
    """The active players in pairing order: points, then rating, then id."""
    order = sorted(
        active,
        key=lambda entrant: (-records[entrant.player].points, -entrant.rating, entrant.player),
    )
    players: list[_Player] = []
    for half_points, group in groupby(
        order, key=lambda entrant: round(records[entrant.player].points * 2)
    ):
        members = list(group)
        for group_index, entrant in enumerate(members):
            players.append(
                _Player(
                    index=len(players),
                    entrant=entrant,
                    record=records[entrant.player],
                    half_points=half_points,
                    group_size=len(members),
                    group_index=group_index,
                )
            )
    return players


@dataclass(frozen=True, slots=True)
class _Costs:
    """The multipliers of the rules' "digits" for an event of this size."""

    rematch: int
    bye_rank: int
    score: int
    sides: int
    fold: int
    top: int  # more than any pair's cost: weight = top - cost stays positive

    @classmethod
    def for_event(cls, players: int, most_half_points: int) -> _Costs:
        pairs = players // 2 + 1
        fold = 1
        sides = fold * (players * players * pairs + 1)
        score = sides * (_IMBALANCE * pairs + 1)
        bye_rank = score * ((most_half_points + 1) ** 2 * pairs + 1)
        rematch = bye_rank * (players + 1)
        top = rematch * (MOST_ROUNDS + 1) * (pairs + 1)
        return cls(rematch, bye_rank, score, sides, fold, top)


def _pair_cost(a: _Player, b: _Player, costs: _Costs) -> int:
    meetings = sum(result.opponent == b.entrant.player for result in a.record.results)
    cost = meetings * costs.rematch
    cost += (a.half_points - b.half_points) ** 2 * costs.score
    (a_due, a_strength), (b_due, b_strength) = a.due, b.due
    if a_due is not None and a_due == b_due:
        cost += min(a_strength, b_strength) * costs.sides
    if a.half_points == b.half_points:
        distance = abs(a.group_index - b.group_index)
        cost += (distance - a.group_size // 2) ** 2 * costs.fold
    return cost


def _bye_cost(player: _Player, players: int, costs: _Costs) -> int:
    return player.record.byes * costs.rematch + (players - 1 - player.index) * costs.bye_rank


def _neighbourhood(players: list[_Player], window: int) -> list[tuple[int, int]]:
    """The pairs offered to the matching, (higher-ranked, lower-ranked) by index: each
    player's ``window`` nearest players in the ranking each way whom they have not met, and
    the ``window`` either side of their fold partner; every pair once ``window`` covers
    everyone."""
    count = len(players)
    if window >= count:
        return [(a, b) for a in range(count) for b in range(a + 1, count)]
    ids = [player.entrant.player for player in players]
    pairs: set[tuple[int, int]] = set()
    for a in players:
        met = a.record.opponents
        for step in (1, -1):
            found, b = 0, a.index + step
            while 0 <= b < count and found < window:
                if ids[b] not in met:
                    pairs.add((min(a.index, b), max(a.index, b)))
                    found += 1
                b += step
        if a.group_index < a.group_size // 2:
            fold_partner = a.index + a.group_size // 2
            for b in range(max(a.index + 1, fold_partner - window), fold_partner + window):
                if b < count:
                    pairs.add((a.index, b))
    return sorted(pairs)


def _candidate_edges(
    players: list[_Player], window: int, costs: _Costs
) -> Iterator[tuple[int, int, int]]:
    count = len(players)
    for a, b in _neighbourhood(players, window):
        yield a, b, costs.top - _pair_cost(players[a], players[b], costs)
    if count % 2:
        # The bye is node ``count``; offered first to the lowest-ranked without one.
        without = [player for player in reversed(players) if player.record.byes == 0]
        offered = players if window >= count else without[:window]
        for player in offered:
            yield player.index, count, costs.top - _bye_cost(player, count, costs)


def _matched_round(active: list[Entrant], records: dict[int, Record]) -> list[Pairing]:
    players = _ranked(active, records)
    count = len(players)
    costs = _Costs.for_event(count, max(player.half_points for player in players))
    without_bye = [player.index for player in players if player.record.byes == 0]
    window = FIRST_WINDOW
    while True:
        edges = list(_candidate_edges(players, window, costs))
        weights = {(a, b): weight for a, b, weight in edges}
        matched = max_weight_matching(count + count % 2, edges)
        perfect = len(matched) == (count + 1) // 2
        hard_costs = sum((costs.top - weights[pair]) // costs.rematch for pair in matched)
        bye_to = [a for a, b in matched if b == count]
        lowest = not bye_to or not without_bye or bye_to[0] == without_bye[-1]
        if window >= count or (perfect and hard_costs == 0 and lowest):
            break
        window *= 2
    return _boards(players, matched)


def _sides(a: _Player, b: _Player) -> tuple[_Player, _Player]:
    """(X, O) for a pair: the one with fewer X than O gets X; level, alternate from the most
    recent game in which their sides differed; still level, the higher-ranked gets what they
    are due (X if nothing)."""
    if a.balance != b.balance:
        return (a, b) if a.balance < b.balance else (b, a)
    for a_side, b_side in zip(reversed(a.record.sides), reversed(b.record.sides), strict=False):
        if a_side != b_side:
            return (a, b) if a_side == "o" else (b, a)
    higher, lower = (a, b) if a.index < b.index else (b, a)
    due, _ = higher.due
    return (lower, higher) if due == "o" else (higher, lower)


def _boards(players: list[_Player], matched: list[tuple[int, int]]) -> list[Pairing]:
    """Top boards first: the pair with the most points, then the higher-ranked player."""
    count = len(players)
    pairs = []
    bye = None
    for a_index, b_index in matched:
        if b_index == count:
            bye = players[a_index]
            continue
        a, b = players[a_index], players[b_index]
        key = (-(a.half_points + b.half_points), min(a.index, b.index))
        pairs.append((key, _sides(a, b)))
    pairs.sort(key=lambda pair: pair[0])
    pairings = [
        Pairing(board, x.entrant.player, o.entrant.player)
        for board, (_, (x, o)) in enumerate(pairs, start=1)
    ]
    if bye is not None:
        pairings.append(Pairing(len(pairings) + 1, bye.entrant.player, None))
    return pairings
