"""Round robin by Berger tables (tournament/round_robin.py): everyone meets everyone once, each
player's X and O differ by at most one, one bye a round (and one a player) for odd counts, the
published Berger tables for 4 and 6, and bad input refused with a sentence."""

from __future__ import annotations

from collections import Counter

import pytest

from tournament import ROUND_ROBIN_MOST, Entrant, Pairing, pair_round_robin, round_robin_rounds


def entrants_of(players: int) -> list[Entrant]:
    # Ids unrelated to the seeding order: the order given is the table's.
    return [Entrant(900 - 7 * seat, 1500.0) for seat in range(players)]


def whole_event(players: int) -> list[list[Pairing]]:
    entrants = entrants_of(players)
    return [pair_round_robin(entrants, number) for number in range(1, players + players % 2)]


@pytest.mark.parametrize("players", range(2, ROUND_ROBIN_MOST + 1))
def test_everyone_meets_everyone_once_with_sides_balanced(players: int) -> None:
    everyone = {entrant.player for entrant in entrants_of(players)}
    rounds = whole_event(players)
    assert len(rounds) == round_robin_rounds(players) == players - 1 + players % 2
    meetings: Counter[frozenset[int]] = Counter()
    balance: Counter[int] = Counter()
    byes: Counter[int] = Counter()
    for pairings in rounds:
        seated = [p.x for p in pairings] + [p.o for p in pairings if p.o is not None]
        assert sorted(seated) == sorted(everyone)  # each player once a round
        assert [p.board for p in pairings] == list(range(1, len(pairings) + 1))
        assert [p.o is None for p in pairings].count(True) == players % 2
        for pairing in pairings:
            if pairing.o is None:
                byes[pairing.x] += 1
                continue
            meetings[frozenset((pairing.x, pairing.o))] += 1
            balance[pairing.x] += 1
            balance[pairing.o] -= 1
    assert len(meetings) == players * (players - 1) // 2
    assert set(meetings.values()) == {1}
    assert max(abs(balance[player]) for player in everyone) <= 1
    assert byes == (Counter(everyone) if players % 2 else Counter())


def seats(pairings: list[Pairing], entrants: list[Entrant]) -> list[tuple[int, int | None]]:
    """The pairings as 1-based seat numbers (the bye as None)."""
    seat = {entrant.player: number for number, entrant in enumerate(entrants, start=1)}
    return [(seat[p.x], None if p.o is None else seat[p.o]) for p in pairings]


def test_four_players_follow_bergers_table() -> None:
    entrants = entrants_of(4)
    table = [seats(pair_round_robin(entrants, number), entrants) for number in (1, 2, 3)]
    assert table == [[(1, 4), (2, 3)], [(4, 3), (1, 2)], [(2, 4), (3, 1)]]


def test_six_players_follow_bergers_table() -> None:
    entrants = entrants_of(6)
    table = [seats(pair_round_robin(entrants, number), entrants) for number in range(1, 6)]
    assert table == [
        [(1, 6), (2, 5), (3, 4)],
        [(6, 4), (5, 3), (1, 2)],
        [(2, 6), (3, 1), (4, 5)],
        [(6, 5), (1, 4), (2, 3)],
        [(3, 6), (4, 2), (5, 1)],
    ]


def test_five_players_take_the_sixth_seat_as_the_bye() -> None:
    entrants = entrants_of(5)
    assert seats(pair_round_robin(entrants, 1), entrants) == [(2, 5), (3, 4), (1, None)]


def test_the_same_round_is_the_same_pairings() -> None:
    entrants = entrants_of(7)
    assert pair_round_robin(entrants, 3) == pair_round_robin(list(entrants), 3)


@pytest.mark.parametrize(
    ("players", "number", "sentence"),
    [
        (4, 0, "round 0 is out of range: a round robin of 4 players has rounds 1 to 3"),
        (4, 4, "round 4 is out of range: a round robin of 4 players has rounds 1 to 3"),
        (5, 6, "round 6 is out of range: a round robin of 5 players has rounds 1 to 5"),
        (11, 1, "a round robin takes at most 10 players, not 11"),
        (1, 1, "a tournament needs at least 2 players, not 1"),
        (0, 1, "a tournament needs at least 2 players, not 0"),
    ],
)
def test_bad_input_is_a_value_error_naming_it(players: int, number: int, sentence: str) -> None:
    with pytest.raises(ValueError, match=sentence):
        pair_round_robin(entrants_of(players), number)


def test_an_entrant_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="player 3 is entered twice"):
        pair_round_robin([Entrant(3, 1.0), Entrant(4, 1.0), Entrant(3, 2.0)], 1)


@pytest.mark.parametrize(("players", "rounds"), [(2, 1), (3, 3), (4, 3), (9, 9), (10, 9)])
def test_round_robin_rounds(players: int, rounds: int) -> None:
    assert round_robin_rounds(players) == rounds


@pytest.mark.parametrize(("players", "sentence"), [(1, "at least 2"), (11, "at most 10")])
def test_round_robin_rounds_refuses_counts_out_of_range(players: int, sentence: str) -> None:
    with pytest.raises(ValueError, match=sentence):
        round_robin_rounds(players)
