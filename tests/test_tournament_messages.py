"""A tournament's messages stay within Discord's limits (4,000 characters of text and 40
components in a components-v2 message) however many play, in every language."""

from __future__ import annotations

import dataclasses
import functools
import random
from typing import Any

import pytest

from bot import i18n
from bot.render.tournaments import standings_lines, standings_message, tournament_message
from bot.storage.base import TournamentStatus
from bot.tournaments.state import Entry, Rules, Table, TournamentState
from tournament import Format, Pairing, swiss_rounds

# One process draws them all (conftest.ONE_PROCESS_FILES): the 256 players' event, played
# once, is shown in every language.

# Discord's limits for a components-v2 message.
MOST_COMPONENTS = 40
MOST_TEXT = 4000


@functools.cache  # one event per size, shown in every language
def played(players: int, rounds: int, seed: int) -> TournamentState:
    """A Swiss of ``players`` with long names, ``rounds`` played with seeded results."""
    rng = random.Random(seed)
    rules = Rules("Grand Prix", Format.SWISS, 3, 300.0, 256, rounds, "en")
    entries = tuple(
        Entry(10_000 + n, f"player-with-a-long-name-{n:03}", float(n), rating=1000.0 + n)
        for n in range(players)
    )
    state = TournamentState(rules=rules, organiser_id=1, starts_at=None, entries=entries)
    state = state.but(rounds=rounds)
    for number in range(1, rounds + 1):
        # Any pairing makes standings to draw: players side by side, rotated each round
        # (pairing 256 players properly is the engine's tests' business, and slower).
        order = [entry.user_id for entry in entries]
        order = order[number:] + order[:number]
        pairings = [
            Pairing(board, order[2 * board - 2], order[2 * board - 1])
            for board in range(1, len(order) // 2 + 1)
        ]
        state = state.paired(number, pairings)
        for table in state.round_tables(number):
            if not table.decided:
                points = rng.choice((0.0, 0.5, 1.0))
                state = state.with_table(
                    Table(table.round, table.board, table.x, table.o, x_points=points)
                )
    return state


def components(tree: list[dict[str, Any]]) -> int:
    count = 0
    for component in tree:
        count += 1
        count += components(component.get("components", []))
    return count


def text(tree: list[dict[str, Any]]) -> int:
    total = 0
    for component in tree:
        total += len(component.get("content", ""))
        total += text(component.get("components", []))
    return total


@pytest.mark.parametrize("players", [2, 64, 256])
@pytest.mark.parametrize("code", i18n.ALL_LANGUAGES)
def test_the_standings_fit_in_one_message(players: int, code: str) -> None:
    state = played(players, swiss_rounds(players), seed=players)
    lang = i18n.language(code)
    table = state.standings()
    assert len(table) == players
    for status in (TournamentStatus.RUNNING, TournamentStatus.FINISHED):
        message = tournament_message(7, status, state, table, lang)
        assert components(message.components) <= MOST_COMPONENTS
        assert text(message.components) <= MOST_TEXT
    for reader in (state.entries[0].user_id, state.entries[-1].user_id):
        private = standings_message(state, table, reader, lang)
        assert text(private.components) <= MOST_TEXT
        shown = private.components[0]["components"][0]["content"]
        assert state.entry(reader).name in shown  # type: ignore[union-attr]


@pytest.mark.parametrize("code", i18n.ALL_LANGUAGES)
def test_every_reader_sees_their_own_row_however_long_the_rows(code: str) -> None:
    """Twenty rounds and names of 32 characters that markdown escaping doubles make rows of
    some 140 characters: 30 of them pass the message's room, and a reader ranked near the 30th
    lost their own row off its end."""
    state = played(40, 20, seed=3)
    longest = tuple(
        dataclasses.replace(entry, name=f"_*{n:02}" + "_*" * 15)
        for n, entry in enumerate(state.entries)
    )
    state = dataclasses.replace(state, entries=longest)
    lang = i18n.language(code)
    table = state.standings()
    for row in table:
        private = standings_message(state, table, row.player, lang)
        assert text(private.components) <= MOST_TEXT
        shown = private.components[0]["components"][0]["content"]
        own = standings_lines(state, [row], lang)[0]
        assert f"\n{own}\n" in f"{shown}\n", (row.rank, shown)


@pytest.mark.parametrize("code", i18n.ALL_LANGUAGES)
def test_the_public_standings_give_way_to_the_count_and_the_organisers_actions(
    code: str,
) -> None:
    """At their longest (names of 32 characters that markdown escaping doubles, each player
    withdrawn, twenty rounds), the leaders' rows give way: the count of the rest and the last
    things the organiser did always show."""
    state = played(64, 20, seed=3)
    longest = tuple(
        dataclasses.replace(entry, name=f"_*{n:02}" + "_*" * 15, withdrawn_at=1.0)
        for n, entry in enumerate(state.entries)
    )
    state = dataclasses.replace(state, entries=longest)
    for second, action in enumerate(("paused", "resumed", "paused", "resumed", "paused")):
        state = state.logged(1_800_000_000 + second, 10_000 + second, action)
    lang = i18n.language(code)
    table = state.standings()
    message = tournament_message(7, TournamentStatus.RUNNING, state, table, lang)
    assert text(message.components) <= MOST_TEXT
    shown = message.components[0]["components"][0]["content"].splitlines()
    rows = [line for line in shown if line in standings_lines(state, table, lang)]
    assert len(rows) >= 20
    count = lang._(
        "…and {count} more: `/ttt tournament standings` shows yours.", count=64 - len(rows)
    )
    assert shown[len(shown) - 6] == count
    assert all(f"<t:{1_800_000_000 + second}:R>" in shown[-5 + second] for second in range(5))


def test_a_registration_of_256_fits_and_says_how_many() -> None:
    state = played(256, 0, seed=1)
    message = tournament_message(7, TournamentStatus.REGISTERING, state, [], i18n.language("en"))
    assert text(message.components) <= MOST_TEXT
    assert "Players (256 of 256)" in message.components[0]["components"][0]["content"]


def test_each_rounds_result_reads_as_one_character() -> None:
    """1, ½ or 0 for a game, B for a bye, - for a round without a game (withdrawn), · for a
    game not finished."""
    rules = Rules("Cup", Format.SWISS, 3, 300.0, 8, 2, "en")
    entries = (
        Entry(1, "ann", 0.0, rating=1300.0),
        Entry(2, "bo", 1.0, rating=1200.0, withdrawn_at=5.0),
        Entry(3, "cy", 2.0, rating=1100.0),
    )
    state = TournamentState(rules=rules, organiser_id=1, starts_at=None, entries=entries)
    state = state.but(rounds=2).paired(1, [Pairing(1, 1, 2), Pairing(2, 3, None)])
    state = state.with_table(Table(1, 1, 1, 2, x_points=1.0))
    state = state.paired(2, [Pairing(1, 3, 1)])
    lines = standings_lines(state, state.standings(), i18n.language("en"))
    marks = {line.split("**")[1]: line.rsplit("`", 2)[1] for line in lines}
    assert marks == {"ann": "1·", "bo": "0-", "cy": "B·"}


def docs_swiss_of_five() -> TournamentState:
    """docs/playing.md's worked Swiss of five, played."""
    ann, bob, cy, dee, eve = 1, 2, 3, 4, 5
    rules = Rules("Cup", Format.SWISS, 3, 300.0, 8, 3, "en")
    names = {ann: "Ann", bob: "Bob", cy: "Cy", dee: "Dee", eve: "Eve"}
    ratings = {ann: 1600.0, bob: 1500.0, cy: 1400.0, dee: 1300.0, eve: 1200.0}
    entries = tuple(
        Entry(player, names[player], float(player), rating=ratings[player]) for player in names
    )
    state = TournamentState(rules=rules, organiser_id=ann, starts_at=None, entries=entries)
    state = state.but(rounds=3)
    rounds = [
        [(ann, cy, 1.0, False), (dee, bob, 0.5, False), (eve, None, None, False)],
        [(bob, ann, 0.0, False), (eve, dee, 1.0, True), (cy, None, None, False)],
        [(ann, eve, 0.5, False), (cy, bob, 0.0, False), (dee, None, None, False)],
    ]
    for number, games in enumerate(rounds, start=1):
        state = state.paired(
            number, [Pairing(board, x, o) for board, (x, o, _, _) in enumerate(games, start=1)]
        )
        for board, (x, o, points, forfeit) in enumerate(games, start=1):
            if o is not None:
                state = state.with_table(Table(number, board, x, o, None, points, forfeit))
    return state


def test_each_line_shows_rank_points_tie_breaks_and_rounds_of_the_docs_swiss_of_five() -> None:
    """The standings message's lines carry what issue 38 names (rank, points, the tie-breaks,
    each round's result), with the numbers of docs/playing.md's worked Swiss of five."""
    state = docs_swiss_of_five()
    lines = standings_lines(state, state.standings(), i18n.language("en"))
    assert lines == [
        "1. **Eve**: 2½ · Buchholz 5 · SB 6.25 · `B1½`",
        "2. **Ann**: 2½ · Buchholz 4 · SB 3.75 · `11½`",
        "3. **Bob**: 1½ · Buchholz 4 · SB 1.75 · `½01`",
        "4. **Dee**: 1½ · Buchholz 3 · SB 2.25 · `½0B`",
        "5. **Cy**: 1 · Buchholz 4 · SB 1 · `0B0`",
    ]


@pytest.mark.parametrize(
    ("code", "first_line"),
    [
        ("de", "1. **Eve**: 2½ · Buchholz 5 · SB 6,25 · `B1½`"),
        ("es", "1. **Eve**: 2½ · Buchholz 5 · SB 6,25 · `B1½`"),
        ("fr", "1. **Eve**\N{NO-BREAK SPACE}: 2½ · Buchholz 5 · SB 6,25 · `B1½`"),
        ("ja", "1. **Eve**\N{FULLWIDTH COLON}2½ · Buchholz 5 · SB 6.25 · `B1½`"),
        ("pt_BR", "1. **Eve**: 2½ · Buchholz 5 · SB 6,25 · `B1½`"),
    ],
)
def test_the_tie_breaks_decimals_are_written_as_each_language_writes_them(
    code: str, first_line: str
) -> None:
    """A German reader read "SB 6.25" as six thousand two hundred and fifty: the decimal
    comma of the languages that use one."""
    state = docs_swiss_of_five()
    assert standings_lines(state, state.standings(), i18n.language(code))[0] == first_line
