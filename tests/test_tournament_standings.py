"""Standings (tournament/standings.py): points, the tie-breaks in order, each shown on the
worked examples of docs/playing.md ("How tournaments are paired and scored") with the numbers
written out; byes and forfeits as the docs define them; each round's result; equal ranks;
bad input refused with a sentence."""

from __future__ import annotations

import random

import pytest

from tournament import (
    Entrant,
    Game,
    RoundResult,
    Standing,
    pair_round_robin,
    pair_swiss,
    standings,
)

ANN, BOB, CY, DEE, EVE = 1, 2, 3, 4, 5
NAMES = {ANN: "Ann", BOB: "Bob", CY: "Cy", DEE: "Dee", EVE: "Eve"}
FIVE = [
    Entrant(ANN, 1600.0),
    Entrant(BOB, 1500.0),
    Entrant(CY, 1400.0),
    Entrant(DEE, 1300.0),
    Entrant(EVE, 1200.0),
]
FOUR = FIVE[:4]

# The docs' Swiss of five over three rounds: Eve has the bye in round 1, Cy in round 2, Dee in
# round 3; Dee does not turn up in round 2 and loses to Eve by forfeit.
SWISS_OF_FIVE = [
    Game(1, ANN, CY, 1.0),
    Game(1, DEE, BOB, 0.5),
    Game(1, EVE, None, 1.0),
    Game(2, BOB, ANN, 0.0),
    Game(2, EVE, DEE, 1.0, forfeit=True),
    Game(2, CY, None, 1.0),
    Game(3, ANN, EVE, 0.5),
    Game(3, CY, BOB, 0.0),
    Game(3, DEE, None, 1.0),
]


def table(rows: list[Standing]) -> list[tuple[int, str, float, float, float, float, int]]:
    return [
        (
            row.rank,
            NAMES[row.player],
            row.points,
            row.buchholz_cut1,
            row.sonneborn_berger,
            row.head_to_head,
            row.games_as_o,
        )
        for row in rows
    ]


def test_the_swiss_of_five_is_what_the_pairing_makes_of_those_results() -> None:
    """The docs' example is a real event: pair_swiss pairs exactly these games."""
    for number in (1, 2, 3):
        earlier = [game for game in SWISS_OF_FIVE if game.round < number]
        pairs = [(p.x, p.o) for p in pair_swiss(FIVE, earlier, number)]
        assert pairs == [(g.x, g.o) for g in SWISS_OF_FIVE if g.round == number]


def test_points_byes_forfeits_and_buchholz_cut1_in_the_swiss_of_five() -> None:
    """Points: a win 1, a draw 1/2, a bye 1, a forfeit 1 to the winner and 0 to the loser.

    Buchholz cut-1, each round's opponent's points, a round without a real game counting the
    player's own points, less one value (such a round first, else the lowest):
    - Eve 2.5: bye 2.5 + forfeit 2.5 + Ann 2.5 = 7.5, less a round without a game 2.5: 5.0
    - Ann 2.5: Cy 1 + Bob 1.5 + Eve 2.5 = 5.0, less the lowest, Cy's 1: 4.0 (Eve above Ann)
    - Bob 1.5: Dee 1.5 + Ann 2.5 + Cy 1 = 5.0, less 1: 4.0
    - Dee 1.5: Bob 1.5 + forfeit 1.5 + bye 1.5 = 4.5, less 1.5: 3.0 (Bob above Dee)
    - Cy 1: Ann 2.5 + bye 1 + Bob 1.5 = 5.0, less the bye's 1: 4.0
    Sonneborn-Berger, each value times the points scored against it:
    - Eve: 2.5 x 1 (bye) + 2.5 x 1 (forfeit) + 2.5 x 1/2 (drew Ann) = 6.25
    - Ann: 1 x 1 (beat Cy) + 1.5 x 1 (beat Bob) + 2.5 x 1/2 (drew Eve) = 3.75
    """
    assert table(standings(FIVE, SWISS_OF_FIVE)) == [
        (1, "Eve", 2.5, 5.0, 6.25, 0.0, 1),
        (2, "Ann", 2.5, 4.0, 3.75, 0.0, 1),
        (3, "Bob", 1.5, 4.0, 1.75, 0.0, 2),
        (4, "Dee", 1.5, 3.0, 2.25, 0.0, 0),
        (5, "Cy", 1.0, 4.0, 1.0, 0.0, 1),
    ]


def test_each_round_s_result_in_the_swiss_of_five() -> None:
    rows = {row.player: row for row in standings(FIVE, SWISS_OF_FIVE)}
    assert rows[DEE].results == (
        RoundResult(1, BOB, "x", 0.5, False),
        RoundResult(2, EVE, "o", 0.0, True),
        RoundResult(3, None, None, 1.0, False),
    )
    assert rows[EVE].results[0] == RoundResult(1, None, None, 1.0, False)
    assert rows[EVE].results[1] == RoundResult(2, DEE, "x", 1.0, True)


def round_robin_of_four(results: list[float]) -> list[Game]:
    """The docs' round robins of Ann, Bob, Cy and Dee (Berger's table: Ann-Dee and Bob-Cy,
    Dee-Cy and Ann-Bob, Bob-Dee and Cy-Ann), X's points in that order."""
    pairings = [p for number in (1, 2, 3) for p in pair_round_robin(FOUR, number)]
    assert [(p.x, p.o) for p in pairings] == [
        (ANN, DEE), (BOB, CY), (DEE, CY), (ANN, BOB), (BOB, DEE), (CY, ANN),
    ]  # fmt: skip
    return [
        Game(number // 2 + 1, p.x, p.o, points)
        for number, (p, points) in enumerate(zip(pairings, results, strict=True))
    ]


def test_sonneborn_berger_separates_equal_buchholz() -> None:
    """Every game decisive: Ann beat Dee and Bob, Bob beat Cy and Dee, Cy beat Ann, Dee beat Cy.
    Ann and Bob 2 points, Buchholz cut-1 3 each (2 + 1 + 1 less 1). Sonneborn-Berger: Ann
    beat Dee (1) and Bob (2): 3; Bob beat Cy (1) and Dee (1): 2. Cy and Dee: 1 point,
    Buchholz 4 each; Cy beat Ann (2): 2, Dee beat Cy (1): 1."""
    games = round_robin_of_four([1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert table(standings(FOUR, games)) == [
        (1, "Ann", 2.0, 3.0, 3.0, 0.0, 1),
        (2, "Bob", 2.0, 3.0, 2.0, 0.0, 1),
        (3, "Cy", 1.0, 4.0, 2.0, 0.0, 2),
        (4, "Dee", 1.0, 4.0, 1.0, 0.0, 2),
    ]


def test_head_to_head_separates_equal_sonneborn_berger() -> None:
    """Ann beat Dee, lost to Bob, drew Cy; Dee beat Cy, drew Bob. Both 1.5 points, Buchholz
    cut-1 4 (1.5 + 2.5 + 0.5 less 0.5), Sonneborn-Berger 1.75 (Ann: Dee 1.5 + half of Cy's
    0.5; Dee: Cy 0.5 + half of Bob's 2.5). Between them Ann won: head-to-head 1 against 0."""
    games = round_robin_of_four([1.0, 1.0, 1.0, 0.0, 0.5, 0.5])
    assert table(standings(FOUR, games)) == [
        (1, "Bob", 2.5, 3.0, 2.75, 0.0, 1),
        (2, "Ann", 1.5, 4.0, 1.75, 1.0, 1),
        (3, "Dee", 1.5, 4.0, 1.75, 0.0, 2),
        (4, "Cy", 0.5, 4.0, 0.75, 0.0, 2),
    ]


def test_games_as_o_separate_equal_head_to_head() -> None:
    """Bob and Dee 1.5 points each, Buchholz cut-1 3.5, Sonneborn-Berger 1.75, and they drew
    each other (head-to-head 1/2 each); Dee had O twice, Bob once: Dee goes above, though
    rated lower."""
    games = round_robin_of_four([1.0, 1.0, 1.0, 1.0, 0.5, 1.0])
    assert table(standings(FOUR, games)) == [
        (1, "Ann", 2.0, 3.0, 3.0, 0.0, 1),
        (2, "Dee", 1.5, 3.5, 1.75, 0.5, 2),
        (3, "Bob", 1.5, 3.5, 1.75, 0.5, 1),
        (4, "Cy", 1.0, 3.5, 2.0, 0.0, 2),
    ]


def test_the_rating_before_the_event_comes_last() -> None:
    """Ann and Bob drew each other and beat the rest: level on everything, O once each; Ann,
    rated 1600, goes above Bob, rated 1500."""
    games = round_robin_of_four([1.0, 1.0, 1.0, 0.5, 1.0, 0.0])
    rows = standings(FOUR, games)
    assert table(rows)[:2] == [
        (1, "Ann", 2.5, 3.5, 2.25, 0.5, 1),
        (2, "Bob", 2.5, 3.5, 2.25, 0.5, 1),
    ]
    assert [row.rating for row in rows[:2]] == [1600.0, 1500.0]


def test_players_equal_on_everything_share_a_rank() -> None:
    """7 and 3 (both rated 1500) each drew with X against 5 and 9 (both rated 1400): all four
    have 1/2 point, Buchholz cut-1 0 and Sonneborn-Berger 1/4, and 1/2 point against the other
    three; 5 and 9 had O, so they share rank 1 (listed by id), and 3 and 7 share rank 3."""
    entrants = [Entrant(7, 1500.0), Entrant(3, 1500.0), Entrant(5, 1400.0), Entrant(9, 1400.0)]
    games = [Game(1, 7, 5, 0.5), Game(1, 3, 9, 0.5)]
    rows = standings(entrants, games)
    assert [(row.rank, row.player) for row in rows] == [(1, 5), (1, 9), (3, 3), (3, 7)]


def test_a_bye_counts_a_virtual_opponent_on_the_player_s_own_points() -> None:
    """3 had the bye (1 point: Buchholz 1 less the cut 1, Sonneborn-Berger 1 x 1 = 1); 7 beat
    5 (Buchholz 0 less 0, Sonneborn-Berger 0 x 1): 3 goes first on Sonneborn-Berger."""
    entrants = [Entrant(7, 1500.0), Entrant(3, 1500.0), Entrant(5, 1400.0)]
    games = [Game(1, 7, 5, 1.0), Game(1, 3, None, 1.0)]
    rows = standings(entrants, games)
    assert [(row.rank, row.player, row.sonneborn_berger) for row in rows] == [
        (1, 3, 1.0),
        (2, 7, 0.0),
        (3, 5, 0.0),
    ]


def test_unfinished_games_count_nothing_yet() -> None:
    games = [*SWISS_OF_FIVE[:6], Game(3, ANN, EVE, None), Game(3, CY, BOB, None)]
    rows = {row.player: row for row in standings(FIVE, games)}
    assert rows[ANN].points == 2.0
    assert rows[ANN].results[2] == RoundResult(3, EVE, "x", None, False)
    # The round has no game for Dee yet (no bye given): no opponent, no points.
    assert rows[DEE].results[2] == RoundResult(3, None, None, 0.0, False)


def test_withdrawn_players_stay_in_the_table_marked() -> None:
    rows = standings(FIVE, SWISS_OF_FIVE, withdrawn={DEE})
    assert [row.player for row in rows if row.withdrawn] == [DEE]
    assert len(rows) == 5


def test_no_games_yet_ranks_by_rating() -> None:
    rows = standings(FIVE, [])
    assert [row.player for row in rows] == [ANN, BOB, CY, DEE, EVE]
    assert [row.rank for row in rows] == [1, 2, 3, 4, 5]
    assert all(row.results == () for row in rows)


def test_the_order_of_entrants_and_games_does_not_matter() -> None:
    expected = standings(FIVE, SWISS_OF_FIVE)
    rng = random.Random(4)
    for _ in range(5):
        entrants, games = list(FIVE), list(SWISS_OF_FIVE)
        rng.shuffle(entrants)
        rng.shuffle(games)
        assert standings(entrants, games) == expected


@pytest.mark.parametrize(
    ("entrants", "games", "withdrawn", "sentence"),
    [
        ([*FOUR, Entrant(ANN, 1.0)], [], (), "player 1 is entered twice"),
        (FOUR, [Game(1, ANN, EVE, 1.0)], (), "a game of round 1 names 5, not an entrant"),
        (FOUR, [Game(1, ANN, 1, 0.5)], (), "player 1 is paired with themself in round 1"),
        (FOUR, [Game(1, ANN, BOB, 0.25)], (), "x_points 0.25: 1.0, 0.5, 0.0 or None"),
        (FOUR, [Game(1, ANN, None, 0.0)], (), "a bye is worth 1.0"),
        (FOUR, [Game(-1, ANN, BOB, 1.0)], (), "a game of round -1: rounds are numbered from 1"),
        (
            FOUR,
            [Game(2, ANN, BOB, 1.0), Game(2, CY, ANN, 1.0)],
            (),
            "player 1 has two games in round 2",
        ),
        (FOUR, [], (EVE,), "withdrawn player 5 is not an entrant"),
    ],
)
def test_bad_input_is_a_value_error_naming_it(
    entrants: list[Entrant], games: list[Game], withdrawn: tuple[int, ...], sentence: str
) -> None:
    with pytest.raises(ValueError, match=sentence):
        standings(entrants, games, withdrawn)
