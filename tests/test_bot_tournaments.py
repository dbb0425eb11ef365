"""Tournaments end to end: created, joined and started through the local Discord server, their
rounds paired, opened in threads and played by clicks, timed out on the manual clock, carried
across a restart, and finished with the podium posted once."""

from __future__ import annotations

import pytest

from bot.client import TTTBot
from bot.components import TOURNAMENT_ID
from bot.storage.base import GameRecord, TournamentStatus
from bot.tournaments.service import Tournament
from game import Board, parse_cell
from tests.bot_harness import BotHarness, both_engines, button_id, cell_id, refused, text_of
from tests.discord_sim import DiscordSim, SimMessage, SimUser

# X takes column A: a win for X in five moves.
X_WINS = ("A1", "B1", "A2", "B2", "A3")
# A full board with no line.
DRAWN = ("B2", "A1", "A3", "C1", "B1", "B3", "C2", "A2", "C3")


def test_the_lines_played_end_as_said() -> None:
    won = Board.from_moves([parse_cell(c, 3) for c in X_WINS], 3)
    drawn = Board.from_moves([parse_cell(c, 3) for c in DRAWN], 3)
    assert won.winner is not None and won.winner.value == "X"
    assert drawn.is_over and drawn.winner is None


def members(sim: DiscordSim, *names: str) -> list[SimUser]:
    added = []
    for name in names:
        user = sim.add_user(name)
        sim.add_member(sim.seed.guild, user)
        added.append(user)
    return added


async def current(bot: TTTBot, sim: DiscordSim) -> Tournament:
    return await bot.tournaments.here(sim.seed.guild.id, sim.seed.channel.id)


async def round_games(bot: TTTBot, tournament: Tournament) -> list[GameRecord]:
    """The games of the current round, by table."""
    found = []
    for (round_number, _), game_id in sorted(tournament.record.games.items()):
        if round_number == tournament.state.current_round:
            game = await bot.storage.get_game(game_id)
            assert game is not None
            found.append(game)
    return found


def board_message(sim: DiscordSim, game: GameRecord) -> SimMessage:
    (board,) = [m for m in sim.messages(game.channel_id) if m.id == game.message_id]
    return board


async def play(sim: DiscordSim, bot: TTTBot, game_id: int, cells: tuple[str, ...]) -> GameRecord:
    """Play ``cells`` in turn by clicks, X first, each by the player to move."""
    users = {user.id: user for user in sim.users.values()}
    for index, cell in enumerate(cells):
        game = await bot.storage.get_game(game_id)
        assert game is not None and game.is_active, (game, cell)
        player = game.x_id if index % 2 == 0 else game.o_id
        board = board_message(sim, game)
        await sim.click(users[player], board, cell_id(board, cell))
        assert await bot.in_flight.wait_idle(patience=5)
    game = await bot.storage.get_game(game_id)
    assert game is not None
    return game


@both_engines
async def test_a_swiss_of_five_over_three_rounds_with_a_bye_a_draw_a_timeout_and_a_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    players = [s.alice, s.bob, s.carol, *members(sim, "dave", "erin")]
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Friday Cup")
        announcement = created.message
        assert announcement is not None and not created.ephemeral
        assert "Friday Cup" in text_of(announcement)
        for player in players:
            joined = await sim.click(
                player, announcement, button_id(announcement, TOURNAMENT_ID, action="join")
            )
            assert not joined.ephemeral, joined.content
        refused(
            await sim.click(
                s.alice, announcement, button_id(announcement, TOURNAMENT_ID, action="join")
            ),
            "You are in this tournament already.",
        )
        assert "Players (5 of 32)" in text_of(sim.message(announcement.id))
        refused(await sim.slash(s.alice, s.channel, "ttt tournament start"), "Only the organiser")
        started = await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert started.ephemeral and "started" in (started.content or "")
        assert await bot.in_flight.wait_idle(patience=5)

        # Round 1: two games, each in its own thread with its players pinged once; a bye.
        tournament = await current(bot, sim)
        assert (tournament.status, tournament.state.rounds) == (TournamentStatus.RUNNING, 3)
        tables = tournament.state.round_tables(1)
        assert [t.o is None for t in tables].count(True) == 1
        games = await round_games(bot, tournament)
        assert len(games) == 2
        for game in games:
            thread = sim.channels[game.channel_id]
            assert thread.is_thread and thread.parent is s.channel
            ping, board = sim.messages(thread)[:2]
            assert sorted(ping.pinged) == sorted((game.x_id, game.o_id))
            assert board.id == game.message_id
        drawn = await play(sim, bot, games[0].id, DRAWN)
        won = await play(sim, bot, games[1].id, X_WINS)
        assert drawn.winner is None and won.winner is not None
        await bot.sweep()
        tournament = await current(bot, sim)
        assert tournament.state.current_round == 2
        assert [t.x_points for t in tournament.state.round_tables(1) if t.o is not None] == [
            0.5,
            1.0,
        ]

    # A restart between rounds: round 2's games were opened before it, and go on after it.
    async with harness.running() as bot:
        await bot.sweep()
        tournament = await current(bot, sim)
        games = await round_games(bot, tournament)
        assert len(games) == 2
        await play(sim, bot, games[0].id, X_WINS)
        # The other game's X never moves: the turn clock forfeits it.
        harness.clock.advance(301)
        await bot.sweep()
        await bot.sweep()
        tournament = await current(bot, sim)
        timed_out = [t for t in tournament.state.round_tables(2) if t.forfeit]
        assert len(timed_out) == 1 and timed_out[0].x_points == 0.0
        assert tournament.state.current_round == 3

        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        await bot.sweep()  # a second sweep posts nothing more
        finished = await bot.tournaments.get(tournament.id)
        assert finished is not None and finished.status is TournamentStatus.FINISHED

    state = finished.state
    # Nobody met anybody twice; each had at most one bye, and 5 players over 3 rounds had 3.
    pairs = [frozenset((t.x, t.o)) for t in state.tables if t.o is not None]
    assert len(pairs) == len(set(pairs)) == 6
    byes = [t.x for t in state.tables if t.o is None]
    assert len(byes) == len(set(byes)) == 3
    # Every game counted: 6 games and 3 byes make 9 points.
    table = state.standings()
    assert sum(row.points for row in table) == 9.0
    finals = [m for m in sim.messages(s.channel) if "is over" in text_of(m)]
    assert len(finals) == 1
    assert "🥇" in text_of(finals[0])
    # The tournament's message shows the final standings.
    shown = text_of(sim.message(announcement.id))
    assert "Finished after 3 rounds." in shown
