"""Swiss pairing (tournament/swiss.py), stated as facts: over whole simulated events, every
active player is paired once a round, nobody meets anyone twice or has two byes while that can
be avoided, the bye goes to the lowest-ranked player without one, scores are paired as closely
as any pairing could, sides stay balanced; round 1 is the fold by rating; the same inputs give
the same pairings in any process; bad input is a ValueError naming it."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

import networkx  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tournament.swiss
from tournament import MOST_ROUNDS, Entrant, Game, Pairing, pair_swiss, swiss_rounds


@dataclass
class Event:
    """A Swiss played out with seeded random results: some draws, some forfeits, and now and
    then a player who withdraws between rounds."""

    entrants: list[Entrant]
    rng: random.Random
    games: list[Game] = field(default_factory=list)
    withdrawn: set[int] = field(default_factory=set)
    rounds: list[tuple[frozenset[int], list[Pairing]]] = field(default_factory=list)

    def play_round(self, number: int, withdraw_chance: float) -> list[Pairing]:
        pairings = pair_swiss(self.entrants, self.games, number, self.withdrawn)
        self.rounds.append((frozenset(self.withdrawn), pairings))
        for pairing in pairings:
            if pairing.o is None:
                self.games.append(Game(number, pairing.x, None, 1.0))
                continue
            result = self.rng.choice((1.0, 1.0, 0.5, 0.0, 0.0))
            forfeit = self.rng.random() < 0.05
            self.games.append(Game(number, pairing.x, pairing.o, result, forfeit))
        active = [e.player for e in self.entrants if e.player not in self.withdrawn]
        if len(active) > 3 and self.rng.random() < withdraw_chance:
            self.withdrawn.add(self.rng.choice(active))
        return pairings


def entrants_of(players: int, rng: random.Random) -> list[Entrant]:
    return [Entrant(1000 + number, float(rng.randrange(1000, 2000))) for number in range(players)]


def play_event(
    players: int, seed: int, withdraw_chance: float = 0.1, rounds: int | None = None
) -> Event:
    rng = random.Random(seed)
    event = Event(entrants_of(players, rng), rng)
    for number in range(1, (rounds or swiss_rounds(players)) + 1):
        event.play_round(number, withdraw_chance)
    return event


def points_before(games: list[Game], number: int) -> defaultdict[int, float]:
    points: defaultdict[int, float] = defaultdict(float)
    for game in games:
        if game.round < number:
            points[game.x] += 1.0 if game.o is None else (game.x_points or 0.0)
            if game.o is not None:
                points[game.o] += 1.0 - (game.x_points or 0.0)
    return points


@dataclass(frozen=True)
class Before:
    """What was known when a round was paired."""

    met: set[frozenset[int]]
    had_bye: set[int]
    points: defaultdict[int, float]
    rating: dict[int, float]

    @classmethod
    def of(cls, event: Event, number: int) -> Before:
        earlier = [game for game in event.games if game.round < number]
        return cls(
            met={frozenset((g.x, g.o)) for g in earlier if g.o is not None},
            had_bye={g.x for g in earlier if g.o is None},
            points=points_before(event.games, number),
            rating={e.player: e.rating for e in event.entrants},
        )

    def ranked(self, players: set[int]) -> list[int]:
        """Best first: points, then rating, then id (the pairing order the docs state)."""
        return sorted(players, key=lambda p: (-self.points[p], -self.rating[p], p))


BYE = -1


def clean_pairing_exists(players: set[int], before: Before, bye_to: int | None = None) -> bool:
    """Whether ``players`` can all be paired with no rematch and no second bye (the bye, when
    the count is odd, to ``bye_to`` if given), by a maximum-cardinality matching."""
    graph = networkx.Graph()
    nodes = sorted(players)
    graph.add_nodes_from(nodes)
    for a, b in itertools.combinations(nodes, 2):
        if frozenset((a, b)) not in before.met:
            graph.add_edge(a, b)
    if len(nodes) % 2:
        graph.add_node(BYE)
        for player in nodes if bye_to is None else [bye_to]:
            if player not in before.had_bye:
                graph.add_edge(player, BYE)
    matching = networkx.max_weight_matching(graph, maxcardinality=True)
    return bool(2 * len(matching) == graph.number_of_nodes())


def rounds_of(event: Event) -> Iterator[tuple[int, set[int], list[Pairing], Before]]:
    for number, (withdrawn, pairings) in enumerate(event.rounds, start=1):
        active = {e.player for e in event.entrants} - withdrawn
        yield number, active, pairings, Before.of(event, number)


EVENTS = [
    (players, seed) for players in (4, 5, 6, 7, 8, 9, 12, 17, 25, 32, 47, 64) for seed in (1, 2)
]


@pytest.mark.parametrize(("players", "seed"), EVENTS)
def test_whole_events_keep_the_hard_rules_whenever_they_can_hold(players: int, seed: int) -> None:
    check_hard_rules(play_event(players, seed))


def check_hard_rules(event: Event) -> None:
    for number, active, pairings, before in rounds_of(event):
        seated = [p.x for p in pairings] + [p.o for p in pairings if p.o is not None]
        assert sorted(seated) == sorted(active), f"round {number}: each active player once"
        assert [p.board for p in pairings] == list(range(1, len(pairings) + 1))
        byes = [p.x for p in pairings if p.o is None]
        assert len(byes) == len(active) % 2
        assert byes == [p.x for p in pairings[-1:] if p.o is None], "the bye is the last board"
        rematches = [p for p in pairings if p.o is not None and {p.x, p.o} in before.met]
        second_byes = [player for player in byes if player in before.had_bye]
        if rematches or second_byes:
            assert not clean_pairing_exists(active, before), f"round {number}: avoidable"
        eligible = [p for p in before.ranked(active) if p not in before.had_bye]
        if byes and number > 1 and eligible and byes[0] != eligible[-1]:
            # (Everyone has had a bye: a second one is unavoidable, checked above.)
            assert not clean_pairing_exists(active, before, bye_to=eligible[-1]), (
                f"round {number}: the bye went to {byes[0]}, not the lowest {eligible[-1]}"
            )


@pytest.mark.parametrize(("players", "seed"), [(11, 1), (24, 2), (40, 3), (63, 4)])
def test_long_events_keep_the_hard_rules_whenever_they_can_hold(players: int, seed: int) -> None:
    """Twenty rounds (the most an organiser may set): late on, players near each other in the
    ranking have mostly met, and rematches become unavoidable in the smaller events."""
    event = play_event(players, seed, withdraw_chance=0.05, rounds=MOST_ROUNDS)
    check_hard_rules(event)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(players=st.integers(4, 16), seed=st.integers(0, 2**32))
def test_small_events_keep_the_hard_rules_whenever_they_can_hold(players: int, seed: int) -> None:
    test_whole_events_keep_the_hard_rules_whenever_they_can_hold(players, seed)


def test_rematches_are_allowed_as_a_last_resort() -> None:
    """Three players over three rounds: after the first two rounds each has met both others
    (or had the bye), so round 4 must repeat a pairing, and does rather than fail."""
    entrants = [Entrant(1, 1500.0), Entrant(2, 1400.0), Entrant(3, 1300.0)]
    games = [
        Game(1, 1, 2, 1.0),
        Game(1, 3, None, 1.0),
        Game(2, 3, 1, 0.0),
        Game(2, 2, None, 1.0),
        Game(3, 2, 3, 0.5),
        Game(3, 1, None, 1.0),
    ]
    pairings = pair_swiss(entrants, games, 4)
    assert len(pairings) == 2
    assert pairings[-1].o is None
    played = {pairings[0].x, pairings[0].o}
    assert played in ({1, 2}, {1, 3}, {2, 3})  # a rematch, and a second bye: nothing else exists


def score_gap(pairings: list[Pairing], points: defaultdict[int, float]) -> int:
    """The sum of squared score differences, in half points, over the pairs."""
    return sum(round(2 * (points[p.x] - points[p.o])) ** 2 for p in pairings if p.o is not None)


def every_pairing(players: list[int]) -> Iterator[list[tuple[int, int]]]:
    if not players:
        yield []
        return
    first, rest = players[0], players[1:]
    for index, partner in enumerate(rest):
        for others in every_pairing(rest[:index] + rest[index + 1 :]):
            yield [(first, partner), *others]


def best_by_brute_force(active: set[int], before: Before) -> tuple[int, int, int]:
    """Over every possible pairing: the least (rematches and second byes, the bye's place above
    the bottom among those without one, score gap), in that order of importance."""
    ranked = before.ranked(active)
    nodes = ranked + ([BYE] if len(ranked) % 2 else [])
    best = None
    for pairs in every_pairing(nodes):
        hard = place = gap = 0
        for a, b in pairs:
            if BYE in (a, b):
                player = a if b == BYE else b
                hard += player in before.had_bye
                place = len(ranked) - 1 - ranked.index(player)
            else:
                hard += frozenset((a, b)) in before.met
                gap += round(2 * (before.points[a] - before.points[b])) ** 2
        cost = (hard, place, gap)
        best = cost if best is None else min(best, cost)
    assert best is not None
    return best


def cost_of(pairings: list[Pairing], active: set[int], before: Before) -> tuple[int, int, int]:
    ranked = before.ranked(active)
    hard = place = 0
    for pairing in pairings:
        if pairing.o is None:
            hard += pairing.x in before.had_bye
            place = len(ranked) - 1 - ranked.index(pairing.x)
        else:
            hard += frozenset((pairing.x, pairing.o)) in before.met
    return hard, place, score_gap(pairings, before.points)


@pytest.mark.parametrize("players", [5, 6, 7, 8, 9, 10])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_small_rounds_are_as_good_as_the_best_of_every_possible_pairing(
    players: int, seed: int
) -> None:
    """The order of the rules, checked against brute force: no pairing of the round has fewer
    rematches and second byes; none with as few puts the bye lower; none with both as good
    pairs scores more closely."""
    event = play_event(players, seed, withdraw_chance=0.0)
    for number, active, pairings, before in rounds_of(event):
        if number > 1:
            assert cost_of(pairings, active, before) == best_by_brute_force(active, before)


@pytest.mark.parametrize("seed", [1, 2])
def test_large_rounds_pair_scores_as_closely_as_the_complete_graph(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pruned graph (each player offered only near neighbours first) loses nothing: at 64
    players its rounds have the same rematches, bye and score gap as the matching over every
    possible pair."""
    event = play_event(64, seed, withdraw_chance=0.0)
    for number, active, pairings, before in rounds_of(event):
        if number in (2, 4, 6):
            withdrawn = {e.player for e in event.entrants} - active
            earlier = [game for game in event.games if game.round < number]
            with monkeypatch.context() as patched:
                patched.setattr(tournament.swiss, "FIRST_WINDOW", 64)
                complete = pair_swiss(event.entrants, earlier, number, withdrawn)
            assert cost_of(pairings, active, before) == cost_of(complete, active, before)


def side_balance(games: list[Game]) -> Counter[int]:
    """Each player's games as X less games as O."""
    balance: Counter[int] = Counter()
    for game in games:
        if game.o is not None:
            balance[game.x] += 1
            balance[game.o] -= 1
    return balance


@pytest.mark.parametrize(("players", "seed"), EVENTS)
def test_sides_stay_balanced_within_two(players: int, seed: int) -> None:
    event = play_event(players, seed)
    for number in range(1, len(event.rounds) + 1):
        balance = side_balance([game for game in event.games if game.round <= number])
        assert max(map(abs, balance.values())) <= 2, f"after round {number}"


def test_the_one_with_fewer_x_gets_x_even_against_alternation() -> None:
    """Two players (every round a rematch, the last resort): 1 had X, X, O (one X more, O
    last), 2 had O, O, X: balance goes first, so 2 gets X though 1 had O last."""
    entrants = [Entrant(1, 1600.0), Entrant(2, 1500.0)]
    games = [Game(1, 1, 2, 0.5), Game(2, 1, 2, 0.5), Game(3, 2, 1, 0.5)]
    assert pair_swiss(entrants, games, 4) == [Pairing(1, 2, 1)]


def test_level_players_alternate_from_the_last_game_in_which_their_sides_differed() -> None:
    """1 had O, X, O and 2 had X, O, O (both one O ahead, both O last): in round 2 they
    differed, 1 had X and 2 had O, so now 2 gets X. The others' games only make 1 and 2 the
    only players on 3 points."""
    entrants = [Entrant(player, 1600.0 - player) for player in range(1, 7)]
    games = [
        Game(1, 3, 1, 0.0),
        Game(1, 2, 6, 1.0),
        Game(1, 4, 5, 0.5),
        Game(2, 1, 4, 1.0),
        Game(2, 3, 2, 0.0),
        Game(2, 5, 6, 0.5),
        Game(3, 5, 1, 0.0),
        Game(3, 4, 2, 0.0),
        Game(3, 6, 3, 0.5),
    ]
    assert pair_swiss(entrants, games, 4)[0] == Pairing(1, 2, 1)


def test_with_the_same_sides_the_higher_ranked_gets_what_they_are_due() -> None:
    """1 and 2 both won with X, 3 and 4 both lost with O; the higher-rated of each pair gets
    what they are due: 1 gets O, 3 gets X."""
    entrants = [Entrant(1, 1900.0), Entrant(2, 1800.0), Entrant(3, 1700.0), Entrant(4, 1600.0)]
    games = [Game(1, 1, 3, 1.0), Game(1, 2, 4, 1.0)]
    assert pair_swiss(entrants, games, 2) == [Pairing(1, 2, 1), Pairing(2, 3, 4)]


def test_the_first_round_is_the_fold_by_rating() -> None:
    """Top half against bottom half, best first; the top player moves first on odd boards."""
    ratings = {11: 1500.0, 12: 1900.0, 13: 1700.0, 14: 1600.0, 15: 1800.0, 16: 1400.0}
    entrants = [Entrant(player, rating) for player, rating in ratings.items()]
    # By rating: 12, 15, 13, 14, 11, 16.
    assert pair_swiss(entrants, [], 1) == [
        Pairing(1, 12, 14),
        Pairing(2, 11, 15),
        Pairing(3, 13, 16),
    ]
    with_seventh = [*entrants, Entrant(17, 1000.0)]
    assert pair_swiss(with_seventh, [], 1)[-1] == Pairing(4, 17, None)


def test_withdrawn_players_are_not_paired() -> None:
    entrants = [Entrant(player, 1500.0 + player) for player in range(1, 6)]
    pairings = pair_swiss(entrants, [], 1, withdrawn={5})
    assert 5 not in {p.x for p in pairings} | {p.o for p in pairings}
    assert len(pairings) == 2
    assert all(p.o is not None for p in pairings)


def test_the_same_inputs_give_the_same_pairings_whatever_the_order_of_entrants() -> None:
    event = play_event(40, 9)
    number = len(event.rounds)
    earlier = [game for game in event.games if game.round < number]
    expected = event.rounds[-1][1]
    shuffled = random.Random(1)
    for _ in range(3):
        entrants = list(event.entrants)
        games = list(earlier)
        shuffled.shuffle(entrants)
        shuffled.shuffle(games)
        withdrawn = list(event.rounds[-1][0])
        assert pair_swiss(entrants, games, number, withdrawn) == expected


PAIR_IN_A_PROCESS = """
import json, random, sys
from tournament import Entrant, Game, pair_swiss
rng = random.Random(5)
entrants = [Entrant(10**17 + 7919 * n, float(rng.randrange(1000, 1100))) for n in range(30)]
games = []
for number in (1, 2, 3):
    for p in pair_swiss(entrants, games, number):
        games.append(Game(number, p.x, p.o, 1.0 if p.o is None else rng.choice((1.0, 0.5, 0.0))))
print(json.dumps([[p.board, p.x, p.o] for p in pair_swiss(entrants, games, 4)]))
"""


@pytest.mark.slow  # two Python processes
def test_processes_with_different_hash_seeds_pair_alike() -> None:
    outputs = [
        subprocess.run(
            [sys.executable, "-c", PAIR_IN_A_PROCESS],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": hash_seed, "PATH": ""},
        ).stdout
        for hash_seed in ("1", "2")
    ]
    assert outputs[0] == outputs[1]
    assert len(json.loads(outputs[0])) == 15


def test_swiss_rounds_is_ceil_log2_and_at_least_3() -> None:
    assert [swiss_rounds(n) for n in (2, 3, 8, 9, 16, 17, 64, 65, 256)] == [
        3, 3, 3, 4, 4, 5, 6, 7, 8,
    ]  # fmt: skip


ENTRANTS = [Entrant(1, 1500.0), Entrant(2, 1400.0), Entrant(3, 1300.0)]


@pytest.mark.parametrize(
    ("entrants", "games", "number", "withdrawn", "sentence"),
    [
        (ENTRANTS, [], 0, (), "round 0 is out of range: a Swiss has rounds 1 to 20"),
        (ENTRANTS, [], MOST_ROUNDS + 1, (), "round 21 is out of range"),
        ([*ENTRANTS, Entrant(2, 1200.0)], [], 1, (), "player 2 is entered twice"),
        (ENTRANTS[:1], [], 1, (), "a tournament needs at least 2 players, not 1"),
        (ENTRANTS, [Game(1, 1, 9, 1.0)], 2, (), "a game of round 1 names 9, not an entrant"),
        (ENTRANTS, [Game(1, 1, 1, 1.0)], 2, (), "player 1 is paired with themself in round 1"),
        (
            ENTRANTS,
            [Game(1, 1, 2, 1.0), Game(1, 3, 1, 0.0)],
            2,
            (),
            "player 1 has two games in round 1",
        ),
        (ENTRANTS, [Game(1, 1, 2, 2.0)], 2, (), "has x_points 2.0: 1.0, 0.5, 0.0 or None"),
        (ENTRANTS, [Game(1, 3, None, 0.5)], 2, (), "bye of 3 has x_points 0.5"),
        (ENTRANTS, [Game(0, 1, 2, 1.0)], 2, (), "a game of round 0: rounds are numbered from 1"),
        (ENTRANTS, [Game(2, 1, 2, 1.0)], 2, (), "a game of round 2 was given to pair round 2"),
        (ENTRANTS, [Game(1, 1, 2, None)], 2, (), "game of 1 against 2 is unfinished"),
        (ENTRANTS, [], 1, (7,), "withdrawn player 7 is not an entrant"),
        (ENTRANTS, [], 1, (1, 2), "1 player\\(s\\) left to pair: a round needs at least 2"),
        ([Entrant(1, 0.0)], [], 1, (), "at least 2 players, not 1"),
    ],
)
def test_bad_input_is_a_value_error_naming_it(
    entrants: list[Entrant],
    games: list[Game],
    number: int,
    withdrawn: tuple[int, ...],
    sentence: str,
) -> None:
    with pytest.raises(ValueError, match=sentence):
        pair_swiss(entrants, games, number, withdrawn)


@pytest.mark.parametrize("players", [1, 0, -3])
def test_swiss_rounds_needs_two_players(players: int) -> None:
    with pytest.raises(ValueError, match=f"at least 2 players, not {players}"):
        swiss_rounds(players)
