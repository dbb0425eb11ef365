"""Tournaments end to end: created, joined and started through the local Discord server, their
rounds paired, opened in threads and played by clicks, timed out on the manual clock, carried
across a restart, and finished with the podium posted once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import signal
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from bot.boards import UNSHOWN_GRACE
from bot.client import TTTBot
from bot.components import ERASE_ID, FORGET_ID, GAME_ACTION_ID, TOURNAMENT_ID
from bot.config import POSTGRESQL
from bot.domain import Actor
from bot.server_settings import SettingsService
from bot.service import GameService
from bot.storage.base import (
    EVERY_GUILD,
    DatabaseUnavailableError,
    EndReason,
    GameRecord,
    GameStatus,
    NewGame,
    TournamentRecord,
    TournamentStatus,
    is_forgotten,
)
from bot.storage.connect import open_storage
from bot.tournaments.rounds import TournamentRounds
from bot.tournaments.service import Tournament, TournamentService
from bot.tournaments.state import SCHEMA
from game import Board, Mark, parse_cell
from tests.bot_harness import (
    BotHarness,
    both_engines,
    both_front_doors,
    button_id,
    cell_id,
    refused,
    start_member_game,
    text_of,
)
from tests.bot_processes import ROOT
from tests.discord_sim import DiscordSim, SimChannel, SimMessage, SimUser
from tests.discord_sim.models import (
    DEFAULT_BOT_PERMISSIONS,
    PERM_CREATE_PUBLIC_THREADS,
    PERM_SEND_MESSAGES_IN_THREADS,
)

# X takes column A: a win for X in five moves.
X_WINS = ("A1", "B1", "A2", "B2", "A3")
# A full board with no line.
DRAWN = ("B2", "A1", "A3", "C1", "B1", "B3", "C2", "A2", "C3")


def test_the_lines_played_end_as_said() -> None:
    won = Board.from_moves([parse_cell(c, 3) for c in X_WINS], 3)
    drawn = Board.from_moves([parse_cell(c, 3) for c in DRAWN], 3)
    assert won.winner is not None
    assert won.winner.value == "X"
    assert drawn.is_over
    assert drawn.winner is None


def members(sim: DiscordSim, *names: str) -> list[SimUser]:
    added = []
    for name in names:
        user = sim.add_user(name)
        sim.add_member(sim.seed.guild, user)
        added.append(user)
    return added


async def current(bot: TTTBot, sim: DiscordSim) -> Tournament:
    return await bot.tournaments.here(sim.seed.guild.id, sim.seed.channel.id)


async def joined_by_alice(sim: DiscordSim) -> SimMessage:
    """The owner's tournament in the seed's channel, taking entries, with alice entered: its
    announcement."""
    s = sim.seed
    created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Duel night")
    announcement = created.message
    assert announcement is not None
    await sim.click(s.alice, announcement, button_id(announcement, TOURNAMENT_ID, action="join"))
    return announcement


async def round_games(bot: TTTBot, tournament: Tournament) -> list[GameRecord]:
    """The games of the current round, by table."""
    found = []
    for (round_number, _), game_id in sorted(tournament.record.games.items()):
        if round_number == tournament.state.current_round:
            game = await bot.storage.get_game(game_id)
            assert game is not None
            found.append(game)
    return found


def join_id(tournament: Tournament) -> str:
    return TOURNAMENT_ID.build(tournament=tournament.id, action="join")


def board_message(sim: DiscordSim, game: GameRecord) -> SimMessage:
    (board,) = [m for m in sim.messages(game.channel_id) if m.id == game.message_id]
    return board


async def play(sim: DiscordSim, bot: TTTBot, game_id: int, cells: tuple[str, ...]) -> GameRecord:
    """Play ``cells`` in turn by clicks, X first, each by the player to move."""
    users = {user.id: user for user in sim.users.values()}
    for index, cell in enumerate(cells):
        game = await bot.storage.get_game(game_id)
        assert game is not None, cell
        assert game.is_active, (game, cell)
        player = game.x_id if index % 2 == 0 else game.o_id
        board = board_message(sim, game)
        await sim.click(users[player], board, cell_id(board, cell))
        assert await bot.in_flight.wait_idle(patience=5)
    game = await bot.storage.get_game(game_id)
    assert game is not None
    return game


@both_front_doors
@both_engines
async def test_a_swiss_of_five_over_three_rounds_with_a_bye_a_draw_a_timeout_and_a_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    players = [s.alice, s.bob, s.carol, *members(sim, "dave", "erin")]
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Friday Cup")
        announcement = created.message
        assert announcement is not None
        assert not created.ephemeral
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
        assert started.ephemeral
        assert "started" in (started.content or "")
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
            assert thread.is_thread
            assert thread.parent is s.channel
            ping, board = sim.messages(thread)[:2]
            assert sorted(ping.pinged) == sorted((game.x_id, game.o_id))
            assert board.id == game.message_id
        drawn = await play(sim, bot, games[0].id, DRAWN)
        won = await play(sim, bot, games[1].id, X_WINS)
        assert drawn.winner is None
        assert won.winner is not None
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
        assert len(timed_out) == 1
        assert timed_out[0].x_points == 0.0
        assert tournament.state.current_round == 3

        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        await bot.sweep()  # a second sweep posts nothing more
        finished = await bot.tournaments.get(tournament.id)
        assert finished is not None
        assert finished.status is TournamentStatus.FINISHED

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


@both_front_doors
async def test_a_round_robin_of_four_with_a_player_removed(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    dave = members(sim, "dave")[0]
    players = [s.alice, s.bob, s.carol, dave]
    async with harness.running() as bot:
        created = await sim.slash(
            s.owner, s.channel, "ttt tournament create", name="Round table", format="round-robin"
        )
        announcement = created.message
        assert announcement is not None, created.content
        assert not created.ephemeral, created.content
        for player in players:
            await sim.click(
                player, announcement, button_id(announcement, TOURNAMENT_ID, action="join")
            )
        await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await current(bot, sim)
        assert tournament.state.rounds == 3
        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        # Dave is removed in round 2: his game there, and his round 3 game, are forfeits.
        removed = await sim.slash(s.owner, s.channel, "ttt tournament remove", player=dave)
        assert removed.ephemeral, removed.content
        assert "Done" in (removed.content or ""), removed.content
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await current(bot, sim)
        assert tournament.state.entry(dave.id).withdrawn  # type: ignore[union-attr]
        for game in await round_games(bot, tournament):
            if dave.id not in (game.x_id, game.o_id):
                await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        tournament = await current(bot, sim)
        assert tournament.state.current_round == 3
        for game in await round_games(bot, tournament):
            assert dave.id not in (game.x_id, game.o_id)  # no game opened for a forfeit
            await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        finished = await bot.tournaments.get(tournament.id)
    assert finished is not None
    assert finished.status is TournamentStatus.FINISHED
    state = finished.state
    pairs = {frozenset((t.x, t.o)) for t in state.tables}
    assert len(pairs) == 6  # everyone met everyone once
    forfeits = [t for t in state.tables if t.forfeit]
    assert len(forfeits) == 2
    assert all(dave.id in (t.x, t.o) for t in forfeits)
    assert all((t.x_points == 0.0) == (t.x == dave.id) for t in forfeits)
    assert "removed" in [action.action for action in state.log]


@both_front_doors
async def test_bad_input_is_a_sentence_and_changes_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    elsewhere = sim.add_guild("Elsewhere", owner=s.carol)
    hall = sim.add_channel(elsewhere, "hall")
    async with harness.running() as bot:
        create = "ttt tournament create"
        cases: list[tuple[dict[str, object], str]] = [
            ({"name": "<@123> cup"}, "plain text"),
            ({"name": "**Big** cup"}, "plain text"),
            # Nothing to see, or text shown other than as typed: zero-width spaces, a letter
            # drawn as a blank, a right-to-left override turning what follows it around, a
            # line separator, a control character.
            ({"name": "\u200b\u200b"}, "plain text"),
            ({"name": "\u3164"}, "plain text"),
            ({"name": "Cup \u202egnik"}, "plain text"),
            ({"name": "Cup\u2028Night"}, "plain text"),
            # Tag letters outside a flag: text that does not show.
            ({"name": "Cup \U000e0068\U000e0069"}, "plain text"),
            ({"name": "\x00Cup"}, "plain text"),
            ({"name": "Cup", "rounds": 0}, "from 1 to 20 rounds"),
            ({"name": "Cup", "rounds": 10_000}, "from 1 to 20 rounds"),
            ({"name": "Cup", "starts-in": -5}, "between 1 minute and 30 days"),
            ({"name": "Cup", "starts-in": 10 * 365 * 24 * 60}, "between 1 minute and 30 days"),
            ({"name": "Cup", "format": "round-robin", "players": 11}, "at most 10 players"),
            ({"name": "Cup", "players": 1}, "from 2 to 256 players"),
            ({"name": "Cup", "turn-minutes": 0}, "from 1 minute to 7 days"),
            ({"name": "Cup", "turn-minutes": 7 * 24 * 60 + 1}, "from 1 minute to 7 days"),
        ]
        for options, sentence in cases:
            refused(await sim.slash(s.owner, s.channel, create, options=options), sentence)
        refused(
            await sim.slash(s.alice, s.channel, create, name="Cup"),
            "Only members who can manage the server",
        )
        # Managing messages is not enough; the server's moderator role is.
        refused(
            await sim.slash(s.moderator, s.channel, create, name="Cup"),
            "Only members who can manage the server",
        )
        assert await bot.storage.live_tournaments(s.guild.id) == []

        # An emoji joined by zero-width joiners, Scotland's flag (tags after a black flag) and
        # an ideographic space are plain text.
        scotland = "\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in "gbsct") + "\U000e007f"
        name = f"Tiny \U0001f469\u200d\U0001f4bb{scotland}\u3000cup"
        created = await sim.slash(s.owner, s.channel, create, name=name, players=2)
        announcement = created.message
        assert announcement is not None
        assert name in text_of(announcement)
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        refused(await sim.slash(s.owner, s.channel, create, name="Second"), "hosts a tournament")
        refused(await sim.slash(s.owner, s.channel, "ttt tournament start"), "at least 2")
        await sim.click(s.alice, announcement, join)
        await sim.click(s.bob, announcement, join)
        refused(await sim.click(s.carol, announcement, join), "This tournament is full.")
        # Removed before the start, a player just leaves the list: there is room again.
        await sim.slash(s.owner, s.channel, "ttt tournament remove", player=s.bob)
        assert await bot.in_flight.wait_idle(patience=5)
        rejoined = await sim.click(s.carol, announcement, join)
        assert not rejoined.ephemeral, rejoined.content
        refused(
            await sim.click(
                s.carol,
                announcement,
                TOURNAMENT_ID.build(tournament=99, action="join"),
                forged=True,
            ),
            "doesn't belong to this message",
        )
        # A Join button of this tournament, hand-made in another server.
        helped = await sim.slash(s.carol, hall, "ttt help")
        assert helped.message is not None
        refused(await sim.click(s.carol, helped.message, join, forged=True), "doesn't belong")
        cancelled = await sim.slash(s.owner, s.channel, "ttt tournament cancel")
        assert cancelled.ephemeral
        assert "cancelled" in (cancelled.content or "")
        refused(await sim.click(s.carol, announcement, join, stale=True), "was cancelled")
        tournament = await bot.tournaments.get(int(TOURNAMENT_ID.parse(join)["tournament"]))  # type: ignore[index]
        assert tournament is not None
        assert [e.user_id for e in tournament.state.entries] == [s.alice.id, s.carol.id]


async def joined_and_started(sim: DiscordSim, bot: TTTBot, players: list[SimUser]) -> Tournament:
    s = sim.seed
    created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Duel night")
    announcement = created.message
    assert announcement is not None
    join = button_id(announcement, TOURNAMENT_ID, action="join")
    for player in players:
        await sim.click(player, announcement, join)
    await sim.slash(s.owner, s.channel, "ttt tournament start")
    assert await bot.in_flight.wait_idle(patience=5)
    return await current(bot, sim)


@both_front_doors
@pytest.mark.parametrize("action", ["join", "leave"])
async def test_a_join_or_leave_racing_the_start_is_made_on_the_started_tournament(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    """carol's Join (or alice's Leave) is read before the start and saved after it: its save
    loses to the start's, and it is made again on the tournament as started. A join is then
    refused, joining being closed; a leave is a withdrawal, its game of round 1 forfeited."""
    s = sim.seed
    mover = s.carol if action == "join" else s.alice
    read, release = asyncio.Event(), asyncio.Event()
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Race")
        announcement = created.message
        assert announcement is not None
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob, s.carol)[: 3 if action == "leave" else 2]:
            await sim.click(player, announcement, join)
        assert await bot.in_flight.wait_idle(patience=5)
        save = bot.storage.save_tournament

        def moved(state: str) -> bool:
            """Whether ``state`` is the click's change: carol in, or alice out."""
            if action == "join":
                return str(s.carol.id) in state
            return str(s.alice.id) not in state

        async def held(record: TournamentRecord, **changes: Any) -> TournamentRecord | None:
            if not release.is_set() and moved(changes["state"]):
                read.set()
                await release.wait()
            return await save(record, **changes)

        monkeypatch.setattr(bot.storage, "save_tournament", held)
        button = button_id(announcement, TOURNAMENT_ID, action=action)
        clicked = asyncio.create_task(sim.click(mover, announcement, button))
        await asyncio.wait_for(read.wait(), 5)
        started = await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert "Done" in (started.content or ""), started.content
        release.set()
        answered = await clicked
        assert await bot.in_flight.wait_idle(patience=5)
        after = await current(bot, sim)
        assert after.status is TournamentStatus.RUNNING
        if action == "join":
            refused(answered, "This tournament has started: joining is closed.")
            assert [e.user_id for e in after.state.entries] == [s.alice.id, s.bob.id]
            return
        entry = after.state.entry(s.alice.id)
        assert entry is not None
        assert entry.withdrawn
        assert not answered.ephemeral, answered.content  # the announcement, as it now stands
        (table,) = [t for t in after.state.round_tables(1) if t.has(s.alice.id)]
        assert (table.forfeit, table.x_points) == (True, 0.0 if table.x == s.alice.id else 1.0)
        # Its game was not opened, or was opened by the start and ended by the withdrawal.
        game_id = after.record.games.get((1, table.board))
        game = None if game_id is None else await bot.storage.get_game(game_id)
        assert game is None or not game.is_active


@both_front_doors
@pytest.mark.parametrize(
    "harness", [pytest.param(POSTGRESQL, marks=pytest.mark.postgres)], indirect=True
)
async def test_two_processes_pair_a_round_once_though_one_was_killed_while_pairing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Two processes on one PostgreSQL run the same tournament: one is killed after pairing
    the next round but before saving it (nothing is lost: nothing was written), then both
    run it at the same moment. The round is paired once, each table's game started once,
    each pinged once, and no thread is left over."""
    s = sim.seed
    players = [s.alice, s.bob, s.carol, *members(sim, "dave")]
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, players)
        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)

        # The other process: its own connections, services and rounds; the same Discord.
        storage = await open_storage(harness.database, harness.clock)
        assert bot.user is not None
        games = GameService(
            storage,
            harness.clock,
            bot_user=Actor(bot.user.id, bot.user.name, is_bot=True),
            turn_timeout=300,
            challenge_timeout=300,
        )
        service = TournamentService(storage, harness.clock, SettingsService(storage, harness.clock))
        other = TournamentRounds(
            bot, storage, service, games, bot.boards, harness.clock, EVERY_GUILD
        )
        try:
            # Killed mid-pairing: the next round is worked out, and the process dies at its save.
            pairing = asyncio.Event()
            saving = bot.storage.save_tournament

            async def dies_at_the_save(*args: Any, **kwargs: Any) -> Any:
                pairing.set()
                await asyncio.Event().wait()  # never returns: the process is gone
                return await saving(*args, **kwargs)

            before = await bot.tournaments.get(tournament.id)
            bot.storage.save_tournament = dies_at_the_save  # type: ignore[method-assign]
            killed = asyncio.create_task(bot.tournament_rounds.run(tournament.id))
            await pairing.wait()
            killed.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await killed
            bot.storage.save_tournament = saving  # type: ignore[method-assign]
            assert await bot.tournaments.get(tournament.id) == before
            assert before is not None
            assert before.state.current_round == 1

            threads_before = len(game_threads(sim))
            ran = await asyncio.gather(
                bot.tournament_rounds.run(tournament.id),
                other.run(tournament.id),
                return_exceptions=True,
            )
            assert list(ran) == [None, None], ran
            assert await bot.in_flight.wait_idle(patience=5)
        finally:
            await storage.close()

        paired = await current(bot, sim)
        assert paired.state.current_round == 2
        assert len(paired.state.round_tables(2)) == 2
        games_of_round = await round_games(bot, paired)
        assert len(games_of_round) == 2
        # One thread per game of round 2, each with one ping and one board.
        threads = game_threads(sim)
        assert len(threads) == threads_before + 2, threads
        for game in games_of_round:
            shown = sim.messages(game.channel_id)
            assert len(shown) == 2, shown
            ping, board = shown
            assert sorted(ping.pinged) == sorted((game.x_id, game.o_id))
            assert board.id == game.message_id


def game_threads(sim: DiscordSim) -> list[object]:
    return [c for c in sim.channels.values() if c.is_thread and c is not sim.seed.thread]


@both_front_doors
@both_engines
async def test_forget_me_withdraws_the_member_and_leaves_no_trace_of_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol])
        table = tournament.state.current_table_of(s.alice.id)
        assert table is not None
        asked = await sim.slash(s.alice, s.channel, "ttt forget-me")
        assert asked.message is not None
        confirmed = await sim.click(
            s.alice, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
        )
        assert confirmed.response_type == 7, confirmed.content
        assert await bot.in_flight.wait_idle(patience=5)
        after = await bot.tournaments.get(tournament.id)
        assert after is not None
    document = after.record.state
    assert str(s.alice.id) not in document
    assert '"name":"alice"' not in document
    (gone,) = [e for e in after.state.entries if is_forgotten(e.user_id)]
    assert gone.withdrawn
    assert gone.name == ""
    # Her game of the round is her opponent's by forfeit (a bye stays a win for whoever had it).
    mine = after.state.table(table.round, table.board)
    assert mine is not None
    assert mine.decided
    if mine.o is not None:
        assert mine.forfeit
        assert mine.x_points == (0.0 if mine.x == gone.user_id else 1.0)
    assert "alice" not in text_of(sim.message(after.state.announcement_id or 0))


async def duel(sim: DiscordSim, bot: TTTBot, channel: SimChannel, name: str) -> Tournament:
    """A one-round Swiss of alice and bob hosted in ``channel``, started: its one game is on."""
    s = sim.seed
    created = await sim.slash(s.owner, channel, "ttt tournament create", name=name, rounds=1)
    assert created.message is not None, created.content
    join = button_id(created.message, TOURNAMENT_ID, action="join")
    for player in (s.alice, s.bob):
        await sim.click(player, created.message, join)
    await sim.slash(s.owner, channel, "ttt tournament start")
    assert await bot.in_flight.wait_idle(patience=5)
    return await bot.tournaments.here(s.guild.id, channel.id)


@both_front_doors
async def test_a_tournament_is_hosted_where_its_organiser_creates_it_whatever_the_list(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The server's list of channels is where members start games; a tournament's channel is
    chosen by its organiser (an admin or the moderator role, who set the list), so it is
    hosted there, its games in threads off it, listed or not (docs/server-settings.md)."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings channels add", channel=s.channel)
        refused(
            await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="random"),
            "Games aren't played in this channel",
        )
        tournament = await duel(sim, bot, s.other_channel, "Off the list")
        (game,) = await round_games(bot, tournament)
        assert game.is_active
        thread = sim.channels[game.channel_id]
        assert thread.parent is s.other_channel


async def test_standings_are_shown_after_the_end_and_both_commands_work_from_a_games_thread(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """/ttt tournament standings shows a tournament's at any time (issue 38), its final ones
    too; in a game's thread, with two tournaments going in the server, both commands answer
    for the tournament of that game."""
    s = sim.seed
    async with harness.running() as bot:
        first = await duel(sim, bot, s.channel, "First")
        second = await duel(sim, bot, s.other_channel, "Second")
        (game,) = await round_games(bot, first)
        mine = await sim.slash(s.alice, game.channel_id, "ttt tournament my-game")
        assert f"/{game.channel_id}" in (mine.content or ""), mine.content
        shown = await sim.slash(s.alice, game.channel_id, "ttt tournament standings")
        assert "First" in text_of(shown), text_of(shown)
        (other,) = await round_games(bot, second)
        theirs = await sim.slash(s.bob, other.channel_id, "ttt tournament standings")
        assert "Second" in text_of(theirs), text_of(theirs)
        await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        ended = await bot.tournaments.get(first.id)
        assert ended is not None
        assert not ended.live
        final = await sim.slash(s.carol, s.channel, "ttt tournament standings")
        assert final.ephemeral
        assert "First" in text_of(final), text_of(final)
        assert "1. " in text_of(final)
        # One round, said as one (it said "1 rounds").
        assert "· 1 round\n" in text_of(final), text_of(final)
        announced = text_of(sim.message(ended.state.announcement_id or 0))
        assert "Finished after 1 round." in announced, announced
        # Where a game is to be found is for a tournament still going: here, the server's
        # only one.
        still = await sim.slash(s.alice, s.channel, "ttt tournament my-game")
        assert f"/{other.channel_id}" in (still.content or ""), still.content


@both_engines
async def test_standings_in_a_games_thread_are_its_tournaments_after_a_rematch_there(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A Rematch played to its end in a tournament game's thread: the thread is still that
    tournament's (it answered that no tournament was going, or, with another one going in the
    server, the other one's standings)."""
    s = sim.seed
    async with harness.running() as bot:
        first = await duel(sim, bot, s.channel, "First")
        await duel(sim, bot, s.other_channel, "Second")
        (game,) = await round_games(bot, first)
        ended = await play(sim, bot, game.id, X_WINS)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        board = board_message(sim, ended)
        again = await sim.click(s.alice, board, button_id(board, GAME_ACTION_ID, action="rematch"))
        assert again.message is not None, again.content
        during = await sim.slash(s.carol, game.channel_id, "ttt tournament standings")
        await sim.slash(s.bob, game.channel_id, "ttt resign")
        after = await sim.slash(s.carol, game.channel_id, "ttt tournament standings")
    for shown in (during, after):
        assert "First" in text_of(shown), text_of(shown)


@both_engines
async def test_a_rounds_game_starts_whatever_the_live_games_limit_and_counts_in_it(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A server's limit on live games does not keep a player out of their game of the round
    (nobody may choose when a round starts), and that game counts toward it."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings limits", games=1)
        assert (await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="random")).message
        tournament = await duel(sim, bot, s.channel, "Busy night")
        (game,) = await round_games(bot, tournament)
        assert game.is_active
        assert {game.x_id, game.o_id} == {s.alice.id, s.bob.id}
        refused(
            await sim.slash(s.bob, s.thread, "ttt start"),
            "You are already in as many live games as this server allows (1)",
        )


@both_front_doors
@both_engines
async def test_a_table_awarded_while_its_game_is_played_ends_that_game_for_nobody(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The award decides the table: its game in the thread would otherwise go on with nothing
    at stake, its clock running, and be rated beside the award."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Awarded")
        (game,) = await round_games(bot, tournament)
        await play(sim, bot, game.id, X_WINS[:2])
        awarded = await sim.slash(
            s.owner, s.channel, "ttt tournament award", table=1, result="draw"
        )
        assert "Done" in (awarded.content or ""), awarded.content
        assert await bot.in_flight.wait_idle(patience=5)
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert ended.status is GameStatus.FINISHED, ended
        assert (ended.winner, ended.end_reason) == (None, EndReason.ENDED)
        board = board_message(sim, ended)
        assert not [b for b in board.buttons() if not b["disabled"] and "cell" in b["custom_id"]]
        after = await bot.tournaments.get(tournament.id)
        assert after is not None
        table = after.state.table(1, 1)
        assert table is not None
        assert (table.x_points, table.awarded_by) == (0.5, s.owner.id)
        assert not after.live  # its one round decided, by the award
        # The game counted for nobody: the award is the table's result.
        stats = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        assert "Against members: 0 W · 0 L · 0 D" in stats, stats


@both_front_doors
async def test_an_award_for_a_table_or_round_that_does_not_exist_is_refused(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """``round:0`` was read as no round given, and decided the table of the round being
    played: an organiser who counts rounds from 0, or a typo, awarded a live game. Every table
    and round that holds no game is refused with a sentence, and nothing changes."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol])
        bye = next(table for table in tournament.state.round_tables(1) if table.o is None)
        award = "ttt tournament award"
        cases: list[tuple[dict[str, object], str]] = [
            ({"table": 1, "round": 0}, "Round 0 has no game at table 1."),
            ({"table": 1, "round": -3}, "Round \\-3 has no game at table 1."),
            ({"table": 1, "round": 2}, "Round 2 has no game at table 1."),
            ({"table": 0}, "Round 1 has no game at table 0."),
            ({"table": -1}, "Round 1 has no game at table \\-1."),
            ({"table": 2**53}, f"Round 1 has no game at table {2**53}."),
            ({"table": bye.board}, f"Round 1 has no game at table {bye.board}."),
        ]
        for options, sentence in cases:
            answered = await sim.slash(
                s.owner, s.channel, award, options={"result": "x", **options}
            )
            refused(answered, sentence)
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.tournaments.get(tournament.id) == tournament
        (game,) = await round_games(bot, tournament)
        assert game.is_active


async def test_an_award_whose_game_could_not_be_ended_still_says_it_was_done(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The award is saved before its game is ended: a database failing at that second step
    must not make the reply say nothing was done. The game goes on; a WARNING says so."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Awarded")
        (game,) = await round_games(bot, tournament)
        reading = bot.service.storage.get_game

        async def down(game_id: int) -> GameRecord | None:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        bot.service.storage.get_game = down  # type: ignore[method-assign]
        try:
            awarded = await sim.slash(
                s.owner, s.channel, "ttt tournament award", table=1, result="draw"
            )
        finally:
            bot.service.storage.get_game = reading  # type: ignore[method-assign]
        assert "Done" in (awarded.content or ""), awarded.content
        assert await bot.in_flight.wait_idle(patience=5)
        after = await bot.tournaments.get(tournament.id)
        assert after is not None
        table = after.state.table(1, 1)
        assert table is not None
        assert table.awarded_by == s.owner.id
        still = await bot.storage.get_game(game.id)
        assert still is not None
        assert still.is_active
    assert f"could not end game {game.id}" in caplog.text


async def test_a_forget_whose_tournament_step_failed_says_it_may_have_gone_and_asking_again_ends_it(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The member's games and stats are forgotten first, their tournaments after: a database
    failing at the second step must not answer that nothing was deleted."""
    s = sim.seed
    async with harness.running() as bot:
        await duel(sim, bot, s.channel, "Forgotten")
        tournament = await current(bot, sim)
        naming = bot.storage.tournaments_of_member

        async def down(user_id: int) -> list[int]:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        asked = await sim.slash(s.alice, s.channel, "ttt forget-me")
        assert asked.message is not None
        bot.storage.tournaments_of_member = down  # type: ignore[method-assign]
        try:
            failed = await sim.click(
                s.alice, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
            )
        finally:
            bot.storage.tournaments_of_member = naming  # type: ignore[method-assign]
        assert "I can't tell whether it went through" in text_of(failed), text_of(failed)
        assert (
            str(s.alice.id) in (await bot.tournaments.get(tournament.id) or tournament).record.state
        )
        again = await sim.slash(s.alice, s.channel, "ttt forget-me")
        assert again.message is not None, again.content
        await sim.click(
            s.alice, again.message, button_id(again.message, FORGET_ID, action="confirm")
        )
        assert await bot.in_flight.wait_idle(patience=5)
        after = await bot.tournaments.get(tournament.id)
        assert after is not None
        assert str(s.alice.id) not in after.record.state


async def written_by_a_newer_version(bot: TTTBot, tournament: Tournament) -> Tournament:
    """``tournament`` as a newer version of the bot saves it in a rolling upgrade: its
    document of the next schema, with a field this version does not know."""
    document = json.loads(tournament.record.state)
    document["schema"] = SCHEMA + 1
    document["tables"] = [{**table, "pinged_at": 1.0} for table in document["tables"]]
    saved = await bot.storage.save_tournament(
        tournament.record,
        status=tournament.status,
        due_at=bot.clock.now(),
        # Written as every version writes it: the member searches read it so.
        state=json.dumps(document, separators=(",", ":"), sort_keys=True),
        now=bot.clock.now(),
    )
    assert saved is not None
    return Tournament(saved, tournament.state)


@both_engines
async def test_a_tournament_a_newer_version_wrote_is_refused_with_a_sentence_and_left_alone(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """In a rolling upgrade an older process meets a tournament's document that a newer
    version wrote (the next schema, a field it does not know): it neither shows nor changes
    it. A member asking (about it, or for their data) is told to try again in a minute; the
    sweeper leaves it to the newer processes with an INFO line, no ERROR (the harness fails a
    test on any); a forget-me says what it did delete and that asking again finishes it.
    Nothing of the document changes, and once the newer version's document is back in this
    version's schema (here, by hand), everything works again."""
    s = sim.seed
    async with harness.running() as bot:
        original = await duel(sim, bot, s.channel, "Rolling")
        newer = await written_by_a_newer_version(bot, original)
        refused(
            await sim.slash(s.bob, s.channel, "ttt tournament standings"),
            "This tournament was changed by a newer version of the bot",
        )
        await bot.sweep()
        refused(
            await sim.slash(s.alice, s.channel, "ttt my-data"),
            "A tournament you entered was just changed by a newer version of the bot",
        )
        asked = await sim.slash(s.alice, s.channel, "ttt forget-me")
        assert asked.message is not None, asked.content
        told = await sim.click(
            s.alice, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
        )
        assert "Your games and stats are deleted, but a tournament" in text_of(told)
        stored = await bot.tournaments.storage.get_tournament(original.id)
        assert stored is not None
        assert stored.state == newer.record.state
        back = await bot.storage.save_tournament(
            stored,
            status=stored.status,
            due_at=stored.due_at,
            state=original.record.state,
            now=bot.clock.now(),
        )
        assert back is not None
        shown = await sim.slash(s.bob, s.channel, "ttt tournament standings")
        assert shown.ephemeral
        assert "Rolling" in text_of(shown)


@both_engines
async def test_a_member_only_in_tournaments_sees_them_and_can_forget_them(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The organiser of a tournament, and a member who joined one and played no game yet, are
    named in it and nowhere else: /ttt my-data says so, and /ttt forget-me asks and forgets
    (both were told nothing was stored, and could not be forgotten)."""
    s = sim.seed
    async with harness.running() as bot:
        await joined_by_alice(sim)
        tournament = await current(bot, sim)
        for member in (s.alice, s.owner):
            shown = await sim.slash(member, s.channel, "ttt my-data")
            assert "1 tournament stored." in text_of(shown), text_of(shown)
            asked = await sim.slash(member, s.channel, "ttt forget-me")
            assert asked.message is not None, asked.content
            assert "1 tournament" in text_of(asked), text_of(asked)
            confirmed = await sim.click(
                member, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
            )
            assert confirmed.response_type == 7, confirmed.content
            # Told what became of it (not "nothing left to delete").
            assert confirmed.message is not None
            told = text_of(confirmed.message)
            assert "*a deleted member* now takes your place in 1 tournament." in told, told
            assert "nothing left" not in told
            assert await bot.in_flight.wait_idle(patience=5)
            after = await bot.tournaments.get(tournament.id)
            assert after is not None
            assert str(member.id) not in after.record.state
            assert f'"name":"{member.name}"' not in after.record.state
            nothing = await sim.slash(member, s.channel, "ttt my-data")
            assert "I keep no data about you" in text_of(nothing), text_of(nothing)
        # She had not played: her entry went; the organiser's place is the placeholder's.
        last = await bot.tournaments.get(tournament.id)
    assert last is not None
    assert last.state.entries == ()
    assert is_forgotten(last.state.organiser_id)


@both_engines
async def test_my_data_shows_the_name_a_tournament_keeps(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An entry keeps the name the member had when they joined: /ttt my-data lists it among
    the names stored (it listed only those of games and challenges), and forget-me takes it."""
    s = sim.seed
    async with harness.running() as bot:
        await start_member_game(sim, s.other_channel, s.alice, s.bob)
        s.alice.global_name = "Alice the Bold"  # a display name of her own since that game
        await joined_by_alice(sim)
        shown = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
        asked = await sim.slash(s.alice, s.channel, "ttt forget-me")
        assert asked.message is not None, asked.content
        await sim.click(
            s.alice, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
        )
        assert await bot.in_flight.wait_idle(patience=5)
        after = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
    assert (
        "Names stored with your games, challenges and tournaments: **Alice the Bold**, **alice**"
        in shown
    ), shown
    assert "Nothing: I keep no data about you." in after, after


@both_engines
async def test_a_servers_erase_says_its_tournaments_went_and_takes_their_buttons_off(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A server whose only data is a tournament taking entries: the erase asks about it, says
    it went (it said there was no data of this server to delete), and the announcement loses
    its Join and Leave buttons, saying why."""
    s = sim.seed
    async with harness.running() as bot:
        announcement = await joined_by_alice(sim)
        asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
        assert asked.message is not None, asked.content
        question = text_of(asked.message)  # before the answer replaces it
        done = await sim.click(
            s.owner, asked.message, button_id(asked.message, ERASE_ID, action="confirm")
        )
        assert await bot.in_flight.wait_idle(patience=5)
    assert "tournaments still going" in question, question
    assert done.message is not None, done.content
    told = text_of(done.message)
    assert "no data of this server" not in told, told
    assert "1 tournament" in told, told
    shown = sim.message(announcement.id)
    assert shown.buttons() == []
    assert "This tournament was deleted with the server's data." in text_of(shown)


@both_engines
async def test_a_tournament_keeps_its_language_and_takes_the_marks_chosen_since(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Settings changed while a tournament takes entries: its games are in the language it
    was created in (its announcement's, which every round's ping and board read like), and
    in the server's marks as they are when each round starts, as any new game is."""
    s = sim.seed
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Mixed")
        assert created.message is not None, created.content
        join = button_id(created.message, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob):
            await sim.click(player, created.message, join)
        await sim.slash(s.owner, s.channel, "ttt-settings language", language="de")
        await sim.slash(s.owner, s.channel, "ttt-settings marks", x="🐱", o="🐶")
        await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert await bot.in_flight.wait_idle(patience=5)
        (game,) = await round_games(bot, await current(bot, sim))
        board = text_of(board_message(sim, game))
    assert "to move" in board, board
    assert "🐱" in board, board


@both_engines
async def test_a_servers_erase_mid_round_ends_the_rounds_game_on_its_board(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Erased while a round is played: the game's board in its thread says why it ended and
    takes no more moves, and the sweeper, past the turn's time, finds nothing left to do."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Erased")
        (game,) = await round_games(bot, tournament)
        board = board_message(sim, game)
        asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
        assert asked.message is not None, asked.content
        await sim.click(
            s.owner, asked.message, button_id(asked.message, ERASE_ID, action="confirm")
        )
        assert await bot.in_flight.wait_idle(patience=5)
        shown = sim.message(board.id)
        assert shown.buttons() == []
        assert "This game was deleted with the server's data." in text_of(shown)
        refused(
            await sim.slash(s.alice, game.channel_id, "ttt move", cell="A1"),
            "There is no game in this channel.",
        )
        harness.clock.advance(400)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        assert await bot.tournaments.get(tournament.id) is None
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@both_engines
@pytest.mark.parametrize("after", ["end", "leave", "remove"])
async def test_a_turn_run_out_before_an_end_or_a_withdrawal_is_the_timeout_it_was(
    sim: DiscordSim, harness: BotHarness, after: str
) -> None:
    """O's time ran out, and before the sweeper saw it a moderator ends the game, or X
    leaves or is removed: the game was over already, X's win by timeout, and the table is
    X's (the end made it wait for an award, the withdrawal a forfeit loss for X)."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Late")
        (game,) = await round_games(bot, tournament)
        await play(sim, bot, game.id, X_WINS[:1])
        harness.clock.advance(301)
        x = sim.users[game.x_id]
        if after == "end":
            told = await sim.slash(s.moderator, game.channel_id, "ttt end")
            assert "time ran out" in (told.content or ""), told.content
        elif after == "leave":
            await sim.slash(x, s.channel, "ttt tournament leave")
        else:
            await sim.slash(s.owner, s.channel, "ttt tournament remove", player=x)
        assert await bot.in_flight.wait_idle(patience=5)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert (ended.winner, ended.end_reason) == (Mark.X, EndReason.TIMEOUT), ended
        assert "ran out of time" in text_of(board_message(sim, ended))
        after_ = await bot.tournaments.get(tournament.id)
        assert after_ is not None
        table = after_.state.table(1, 1)
        assert table is not None
        assert (table.x_points, table.forfeit) == (1.0, True), table


async def lost_round_board(sim: DiscordSim, bot: TTTBot, name: str) -> GameRecord:
    """A tournament of alice and bob started with its round's ping and board both lost (a
    503 each): its game, saved without its message, past the sweeper's grace."""
    s = sim.seed
    created = await sim.slash(s.owner, s.channel, "ttt tournament create", name=name, rounds=1)
    assert created.message is not None, created.content
    join = button_id(created.message, TOURNAMENT_ID, action="join")
    for player in (s.alice, s.bob):
        await sim.click(player, created.message, join)
    sim.faults.add("POST /channels/{id}/messages", status=503, count=2)
    await sim.slash(s.owner, s.channel, "ttt tournament start")
    assert await bot.in_flight.wait_idle(patience=5)
    (game,) = await round_games(bot, await current(bot, sim))
    assert game.message_id is None
    return game


@both_front_doors
@both_engines
async def test_a_rounds_game_whose_ping_and_board_were_lost_is_pinged_when_its_board_is_shown(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Discord refuses the round's ping and its game's board (a 503 each; as when the process
    is killed right after starting the game): the sweeper, which posts a board saved without
    its message, pings the players first, so that they learn their game began before the
    clock forfeits one of them."""
    s = sim.seed
    async with harness.running() as bot:
        game = await lost_round_board(sim, bot, "Lost")
        assert [m for m in sim.messages(game.channel_id) if not m.deleted] == []
        harness.clock.advance(UNSHOWN_GRACE + 1)
        await bot.sweep()
        ping, board = sim.messages(game.channel_id)
        assert f"<@{s.alice.id}>" in (ping.content or "")
        assert f"<@{s.bob.id}>" in (ping.content or "")
        assert "round 1 of Lost" in (ping.content or ""), ping.content
        shown = await bot.storage.get_game(game.id)
        assert shown is not None
        assert shown.message_id == board.id


@both_front_doors
async def test_a_late_board_discord_refuses_again_is_not_pinged_again_at_every_sweep(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The sweeper posts the lost ping, then Discord refuses the board once more (a 503): the
    next sweep posts the board alone. It pinged the players again before each try of the
    board, a notification every 5 s for as long as Discord kept refusing boards."""
    async with harness.running() as bot:
        game = await lost_round_board(sim, bot, "Again")
        harness.clock.advance(UNSHOWN_GRACE + 1)
        sim.faults.add("POST /channels/{id}/messages", status=503, skip=1, count=1)
        await bot.sweep()
        (ping,) = [m for m in sim.messages(game.channel_id) if not m.deleted]
        assert f"<@{sim.seed.alice.id}>" in (ping.content or "")
        harness.clock.advance(5)
        await bot.sweep()
        shown = [m for m in sim.messages(game.channel_id) if not m.deleted]
        assert [m.id for m in shown][:1] == [ping.id]
        assert len(shown) == 2, [m.content for m in shown]
        stored = await bot.storage.get_game(game.id)
        assert stored is not None
        assert stored.message_id == shown[1].id


@both_front_doors
async def test_a_late_boards_ping_discord_refuses_is_one_refused_request(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The game's thread closed to the bot (Send Messages in Threads denied) when the sweeper
    shows its late board: the ping is refused, and the board is left for a minute with it.
    The board was tried at once all the same: a second refused request, each counting
    against the bot's invalid requests (10,000 in 10 minutes get it banned)."""
    s = sim.seed
    async with harness.running() as bot:
        game = await lost_round_board(sim, bot, "Closed")
        sim.deny(s.channel, sim.bot_user, PERM_SEND_MESSAGES_IN_THREADS)
        harness.clock.advance(UNSHOWN_GRACE + 1)
        await bot.sweep()
        harness.clock.advance(5)
        await bot.sweep()
        posts = [
            r.status
            for r in sim.requests
            if r.method == "POST" and r.path == f"/channels/{game.channel_id}/messages"
        ]
        assert posts == [503, 503, 403], posts


@both_front_doors
@both_engines
async def test_a_game_whose_thread_was_deleted_waits_for_the_organisers_award_and_says_so(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """An admin deletes the thread of a tournament's game mid-game: when its turn runs out,
    the game ends for nobody (its player to move could not move there), as a moderator's end
    does, so the table waits for the organiser's award, and the tournament's message says so
    (once, whatever the sweeps) rather than standing still unexplained. The award then moves
    the tournament on."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Lost thread")
        (game,) = await round_games(bot, tournament)
        await play(sim, bot, game.id, X_WINS[:1])
        sim.delete_channel(sim.channels[game.channel_id])
        harness.clock.advance(301)
        for _ in range(2):
            await bot.sweep()
        ended = await bot.storage.get_game(game.id)
        assert ended is not None
        assert (ended.winner, ended.end_reason) == (None, EndReason.ENDED), ended
        waiting = await current(bot, sim)
        assert waiting.status is TournamentStatus.RUNNING
        table = waiting.state.table(1, 1)
        assert table is not None
        assert not table.decided
        told = text_of(sim.message(waiting.state.announcement_id or 0))
        assert told.count("with no result") == 1, told
        assert f"round 1 table 1 ended <t:{int(game.deadline or 0)}:R> with no result" in told
        await sim.slash(s.owner, s.channel, "ttt tournament award", table=1, result="draw")
        assert await bot.in_flight.wait_idle(patience=5)
        finished = await bot.tournaments.get(tournament.id)
        assert finished is not None
        assert finished.status is TournamentStatus.FINISHED


@both_front_doors
@both_engines
async def test_the_organiser_pauses_resumes_and_awards_and_players_find_their_game(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    referees = sim.add_role(s.guild, "referees")
    s.guild.member(s.carol).roles.append(referees)  # type: ignore[union-attr]
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings moderators", role=referees)
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol, s.moderator])
        games = await round_games(bot, tournament)
        mine = await sim.slash(s.alice, s.channel, "ttt tournament my-game")
        assert mine.ephemeral
        (alices,) = [g for g in games if s.alice.id in (g.x_id, g.o_id)]
        assert f"/{alices.channel_id}" in (mine.content or "")
        announcement = sim.message(tournament.state.announcement_id or 0)
        # A client still showing the Join button: the message has none since the start.
        refused(
            await sim.click(s.owner, announcement, join_id(tournament), stale=True),
            "This tournament takes no more players",
        )
        # The server's moderator role may run it too, though carol plays in it.
        paused = await sim.slash(s.carol, s.channel, "ttt tournament pause")
        assert paused.ephemeral
        assert "Done" in (paused.content or "")
        refused(await sim.slash(s.owner, s.channel, "ttt tournament pause"), "Only a running")
        # A game a moderator ends is no result: its table waits for the organiser.
        ended, played = games
        await sim.slash(s.moderator, ended.channel_id, "ttt end")
        await play(sim, bot, played.id, X_WINS)
        await bot.sweep()
        assert (await current(bot, sim)).state.current_round == 1
        await sim.slash(s.owner, s.channel, "ttt tournament resume")
        await bot.sweep()
        waiting = await current(bot, sim)
        assert waiting.state.current_round == 1
        (table,) = [t for t in waiting.state.round_tables(1) if not t.decided]
        # The tournament's message says why the round stands still, and who may move it on.
        told = text_of(sim.message(waiting.state.announcement_id or 0))
        unresolved = rf"round 1 table {table.board} ended <t:\d+:R> with no result: <@{s.owner.id}>"
        assert re.search(
            unresolved + r" \(or a moderator\) awards one with `/ttt tournament award`", told
        ), told
        refused(
            await sim.slash(
                s.bob, s.channel, "ttt tournament award", table=table.board, result="draw"
            ),
            "Only the organiser",
        )
        awarded = await sim.slash(
            s.owner, s.channel, "ttt tournament award", table=table.board, result="draw"
        )
        assert "Done" in (awarded.content or ""), awarded.content
        assert await bot.in_flight.wait_idle(patience=5)
        moved = await current(bot, sim)
        assert moved.state.current_round == 2
        decided = moved.state.table(1, table.board)
        assert decided is not None
        assert (decided.x_points, decided.awarded_by) == (0.5, s.owner.id)
        shown = await sim.slash(s.carol, s.channel, "ttt tournament standings")
        assert shown.ephemeral
        assert "1. " in text_of(shown)
        log = text_of(sim.message(moved.state.announcement_id or 0))
        # Who and when, as settings show them (issue 38).
        assert re.search(rf"paused by <@{s.carol.id}> <t:\d+:R>", log), log
        assert re.search(rf"table {table.board} awarded by <@{s.owner.id}> <t:\d+:R>", log), log
        # Leaving once it started forfeits the game of the round.
        left = await sim.slash(s.carol, s.channel, "ttt tournament leave")
        assert left.ephemeral
        assert "left" in (left.content or "")
        after = await current(bot, sim)
        entry = after.state.entry(s.carol.id)
        assert entry is not None
        assert entry.withdrawn
        carols = after.state.current_table_of(s.carol.id)
        assert carols is not None
        assert carols.decided


@both_front_doors
@pytest.mark.slow  # a second process, started and killed
@pytest.mark.parametrize(
    "harness", [pytest.param(POSTGRESQL, marks=pytest.mark.postgres)], indirect=True
)
async def test_a_process_killed_while_pairing_a_round_loses_nothing(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Another ``python`` process pairs the next round on the same PostgreSQL and is killed
    (SIGKILL) with the new round written but not committed: the tournament is as it was, the
    bot is not held up by the row it had, and the bot pairs the round once."""
    s = sim.seed
    players = [s.alice, s.bob, s.carol, *members(sim, "dave")]
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, players)
        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)
        before = await bot.tournaments.get(tournament.id)
        pairing = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.tournament_pairing_process",
            harness.database.url,
            str(tournament.id),
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        assert pairing.stdout is not None
        line = await asyncio.wait_for(pairing.stdout.readline(), timeout=60)
        assert line.decode().strip() == "paired round 2"
        pairing.kill()
        assert await pairing.wait() == -signal.SIGKILL
        assert await bot.tournaments.get(tournament.id) == before
        await asyncio.wait_for(bot.tournament_rounds.run(tournament.id), timeout=30)
        assert await bot.in_flight.wait_idle(patience=5)
        paired = await current(bot, sim)
    assert paired.state.current_round == 2
    assert len(paired.state.round_tables(2)) == 2
    assert len([key for key in paired.record.games if key[0] == 2]) == 2


@both_front_doors
async def test_a_refused_thread_is_one_warning_and_tried_again_a_minute_later(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord refusing the round's threads (a permission taken away after the start) is one
    WARNING, not one a sweep; the games open once a try a minute later succeeds."""
    s = sim.seed
    threads = "POST /channels/{channel_id}/threads"
    async with harness.running() as bot:
        refusal = sim.faults.add(threads, status=403, count=None)
        with caplog.at_level(logging.INFO, logger="bot.tournaments.rounds"):
            tournament = await joined_and_started(sim, bot, [s.alice, s.bob])
            for _ in range(3):
                await bot.sweep()
            harness.clock.advance(30)
            await bot.sweep()
            assert len([r for r in sim.requests if r.route == threads]) == 1
            harness.clock.advance(31)  # a minute on: tried again, refused again
            await bot.sweep()
        assert len([r for r in sim.requests if r.route == threads]) == 2
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, [r.getMessage() for r in caplog.records]
        assert await round_games(bot, tournament) == []
        sim.faults.remove(refusal)
        harness.clock.advance(61)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        (game,) = await round_games(bot, await current(bot, sim))
        assert {game.x_id, game.o_id} == {s.alice.id, s.bob.id}


@both_front_doors
@both_engines
async def test_a_tournament_starts_at_its_time_on_its_turn_clock_and_its_games_are_rated(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 38: a start time (``starts-in``) starts the tournament by itself, or cancels it
    with fewer than 2 players; its turn timeout (``turn-minutes``) is each game's; and its
    games are rated games between members, like any other."""
    s = sim.seed
    lonely = sim.add_channel(s.guild, "lonely")
    async with harness.running() as bot:
        created = await sim.slash(
            s.owner,
            s.channel,
            "ttt tournament create",
            options={"name": "Timed cup", "starts-in": 10, "turn-minutes": 2},
        )
        announcement = created.message
        assert announcement is not None, created.content
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob):
            await sim.click(player, announcement, join)
        empty = await sim.slash(
            s.owner, lonely, "ttt tournament create", options={"name": "Nobody", "starts-in": 10}
        )
        assert empty.message is not None, empty.content
        empty_join = button_id(empty.message, TOURNAMENT_ID, action="join")
        await sim.click(s.carol, empty.message, empty_join)

        harness.clock.advance(9 * 60)
        await bot.sweep()
        assert (await current(bot, sim)).status is TournamentStatus.REGISTERING
        harness.clock.advance(61)
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await current(bot, sim)
        assert tournament.status is TournamentStatus.RUNNING
        alone = await bot.tournaments.get(int(TOURNAMENT_ID.parse(empty_join)["tournament"]))  # type: ignore[index]
        assert alone is not None
        assert alone.status is TournamentStatus.CANCELLED

        (first,) = await round_games(bot, tournament)
        first = await play(sim, bot, first.id, X_WINS)
        winner, loser = first.x_id, first.o_id
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await current(bot, sim)
        assert tournament.state.current_round == 2
        # Round 2's X does not move: two minutes, not the server's five, forfeit them.
        (second,) = await round_games(bot, tournament)
        harness.clock.advance(119)
        await bot.sweep()
        assert (await bot.storage.get_game(second.id)).is_active  # type: ignore[union-attr]
        harness.clock.advance(2)
        await bot.sweep()
        await bot.sweep()
        timed_out = (await current(bot, sim)).state.table(2, 1)
        assert timed_out is not None
        assert (timed_out.forfeit, timed_out.x_points) == (True, 0.0)

        users = {user.id: user for user in sim.users.values()}
        stats = text_of(await sim.slash(users[winner], s.channel, "ttt stats"))
        ladder = text_of(await sim.slash(s.carol, s.channel, "ttt leaderboard"))
    # Round 1 won, round 2 won or lost on the clock: both rated.
    wins = 1 + (second.o_id == winner)
    assert f"Against members: {wins} W · {2 - wins} L · 0 D (rating" in stats
    assert f"<@{winner}>" in ladder
    assert f"<@{loser}>" in ladder


NO_THREADS = (
    "A tournament plays each game in a thread off its channel: create it in a server's text "
    "channel where I can Create Public Threads and Send Messages in Threads."
)


@both_front_doors
async def test_a_tournament_is_refused_where_the_bot_cannot_open_threads(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 38: threads are required for tournaments; without the permission, creating one is
    refused with a sentence, and so is creating one inside a thread."""
    s = sim.seed
    bare = sim.add_guild(
        "No threads",
        owner=s.owner,
        bot_permissions=DEFAULT_BOT_PERMISSIONS & ~PERM_CREATE_PUBLIC_THREADS,
    )
    bare.everyone.permissions &= ~PERM_CREATE_PUBLIC_THREADS  # the bot has @everyone's too
    locked = sim.add_channel(bare, "no-threads")
    async with harness.running() as bot:
        refused(await sim.slash(s.owner, locked, "ttt tournament create", name="Cup"), NO_THREADS)
        refused(await sim.slash(s.owner, s.thread, "ttt tournament create", name="Cup"), NO_THREADS)
        assert await bot.storage.live_tournaments(bare.id) == []
        assert await bot.storage.live_tournaments(s.guild.id) == []


@both_front_doors
@both_engines
async def test_a_player_who_leaves_or_is_removed_loses_their_live_game_on_its_board(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Leaving after the start, or being removed, forfeits the game of the round: the game in
    its thread ends too, as that player's loss (rated like any other), rather than going on
    with nothing at stake and its clock still running against the opponent."""
    s = sim.seed
    dave = members(sim, "dave")[0]
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol, dave])
        games = {game.x_id: game for game in await round_games(bot, tournament)}
        games |= {game.o_id: game for game in games.values()}
        leaver = s.alice
        removed = next(
            user for user in (s.bob, s.carol, dave) if games[user.id].id != games[leaver.id].id
        )
        left = await sim.slash(leaver, s.channel, "ttt tournament leave")
        assert left.ephemeral, left.content
        gone = await sim.slash(s.owner, s.channel, "ttt tournament remove", player=removed)
        assert "Done" in (gone.content or ""), gone.content
        assert await bot.in_flight.wait_idle(patience=5)
        for user in (leaver, removed):
            game = await bot.storage.get_game(games[user.id].id)
            assert game is not None
            assert game.status is GameStatus.FINISHED, (user.name, game)
            mark = game.mark_of(user.id)
            assert mark is not None
            assert (game.winner, game.end_reason) == (mark.other, EndReason.RESIGN)
            board = board_message(sim, game)
            assert "resigned" in text_of(board), text_of(board)
            assert not [
                b for b in board.buttons() if not b["disabled"] and "cell" in b["custom_id"]
            ]
            opponent = game.o_id if game.x_id == user.id else game.x_id
            users = {u.id: u for u in sim.users.values()}
            stats = text_of(await sim.slash(users[opponent], s.channel, "ttt stats"))
            assert "Against members: 1 W · 0 L · 0 D (rating" in stats, stats
        await bot.sweep()
        moved = await current(bot, sim)
    assert moved.state.current_round == 2


@both_front_doors
async def test_leaving_before_the_start_takes_the_player_off_the_list(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 38: players may leave before the start freely, by the Leave button or the
    command: they are off the list, with nothing forfeited, and may join again."""
    s = sim.seed
    async with harness.running() as bot:
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Maybe cup")
        announcement = created.message
        assert announcement is not None
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        leave = button_id(announcement, TOURNAMENT_ID, action="leave")
        for player in (s.alice, s.bob, s.carol):
            await sim.click(player, announcement, join)
        assert "Players (3 of 32)" in text_of(sim.message(announcement.id))
        left = await sim.click(s.alice, announcement, leave)
        assert not left.ephemeral, left.content
        assert "Players (2 of 32)" in text_of(sim.message(announcement.id))
        refused(await sim.click(s.alice, announcement, leave), "You are not playing")
        by_command = await sim.slash(s.bob, s.channel, "ttt tournament leave")
        assert by_command.ephemeral
        assert "left" in (by_command.content or ""), by_command.content
        assert await bot.in_flight.wait_idle(patience=5)
        assert "Players (1 of 32)" in text_of(sim.message(announcement.id))
        await sim.click(s.alice, announcement, join)
        tournament = await current(bot, sim)
    assert [e.user_id for e in tournament.state.entries] == [s.carol.id, s.alice.id]
    assert not any(e.withdrawn for e in tournament.state.entries)
    assert tournament.state.tables == ()


@both_front_doors
async def test_a_tournament_cancelled_under_way_pairs_no_more_and_posts_no_podium(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 38's organiser can cancel a tournament after its start: the round being played
    ends with its games, and nothing is paired or posted after; the channel may then host
    another."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol, s.moderator])
        cancelled = await sim.slash(s.owner, s.channel, "ttt tournament cancel")
        assert cancelled.ephemeral
        assert "cancelled" in (cancelled.content or ""), cancelled.content
        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)
        for _ in range(2):
            await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        after = await bot.tournaments.get(tournament.id)
        refused(
            await sim.slash(s.owner, s.channel, "ttt tournament pause"),
            "There is no tournament going in this channel",
        )
        again = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Take two")
    assert after is not None
    assert after.status is TournamentStatus.CANCELLED
    assert after.state.current_round == 1
    assert [t for t in after.state.tables if t.round > 1] == []
    assert not after.state.final_posted
    assert [m for m in sim.messages(s.channel) if "is over" in text_of(m)] == []
    shown = text_of(sim.message(after.state.announcement_id or 0))
    assert re.search(rf"cancelled by <@{s.owner.id}> <t:\d+:R>", shown), shown
    assert again.message is not None, again.content


@both_front_doors
async def test_only_the_servers_players_and_no_bot_join_a_tournament(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The server's player roles hold for joining a tournament as for starting a game
    (docs/server-settings.md), and a bot cannot join: each refused with a sentence."""
    s = sim.seed
    players = sim.add_role(s.guild, "players")
    s.guild.member(s.alice).roles.append(players)  # type: ignore[union-attr]
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings players add", role=players)
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Members cup")
        announcement = created.message
        assert announcement is not None, created.content
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        refused(
            await sim.click(s.bob, announcement, join),
            f"Games in this server are for members with <@&{players.id}>: ask a moderator for one.",
        )
        refused(await sim.click(s.other_bot, announcement, join), "Bots don't play")
        joined = await sim.click(s.alice, announcement, join)
        assert not joined.ephemeral, joined.content
        tournament = await current(bot, sim)
    assert [e.user_id for e in tournament.state.entries] == [s.alice.id]


@both_front_doors
async def test_the_servers_moderator_role_may_create_a_tournament(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Issue 38: members who can manage the server, or the server's moderator role, create
    tournaments (Manage Messages alone is refused, in the bad-input test)."""
    s = sim.seed
    referees = sim.add_role(s.guild, "referees")
    s.guild.member(s.carol).roles.append(referees)  # type: ignore[union-attr]
    async with harness.running() as bot:
        create = "ttt tournament create"
        refused(await sim.slash(s.carol, s.channel, create, name="Early"), "Only members who")
        await sim.slash(s.owner, s.channel, "ttt-settings moderators", role=referees)
        created = await sim.slash(s.carol, s.channel, create, name="Referees' cup")
        assert created.message is not None, created.content
        tournament = await current(bot, sim)
    assert tournament.state.organiser_id == s.carol.id


@both_front_doors
async def test_leaving_after_winning_the_round_keeps_the_win(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """A player who won their game of the round and leaves before the sweeper copied the
    result keeps the win: leaving forfeits the games still to play, not one already won."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol, s.moderator])
        game, _ = await round_games(bot, tournament)
        won = await play(sim, bot, game.id, X_WINS)
        assert won.winner is not None
        users = {user.id: user for user in sim.users.values()}
        left = await sim.slash(users[won.x_id], s.channel, "ttt tournament leave")
        assert left.ephemeral, left.content
        assert await bot.in_flight.wait_idle(patience=5)
        after = await current(bot, sim)
    entry = after.state.entry(won.x_id)
    assert entry is not None
    assert entry.withdrawn
    table = after.state.current_table_of(won.o_id)
    assert table is not None
    assert table.round == 1
    assert (table.x, table.x_points, table.forfeit) == (won.x_id, 1.0, False)


@both_engines
@pytest.mark.parametrize("how", ["won", "on time"])
async def test_forgetting_oneself_after_winning_the_round_keeps_the_win(
    sim: DiscordSim, harness: BotHarness, how: str
) -> None:
    """forget-me withdraws a player as leaving does: a game of the round they had already won
    (by its moves, or on their opponent's time before the sweeper saw it) stays their win, now
    their placeholder's, rather than become a forfeit loss."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await joined_and_started(sim, bot, [s.alice, s.bob, s.carol, s.moderator])
        game, _ = await round_games(bot, tournament)
        if how == "won":
            await play(sim, bot, game.id, X_WINS)
        else:
            await play(sim, bot, game.id, X_WINS[:1])
            harness.clock.advance(301)
        x = sim.users[game.x_id]
        asked = await sim.slash(x, s.channel, "ttt forget-me")
        assert asked.message is not None, asked.content
        await sim.click(x, asked.message, button_id(asked.message, FORGET_ID, action="confirm"))
        assert await bot.in_flight.wait_idle(patience=5)
        after = await current(bot, sim)
    table = after.state.current_table_of(game.o_id)
    assert table is not None
    assert table.round == 1
    assert is_forgotten(table.x)
    assert (table.x_points, table.forfeit) == (1.0, how == "on time"), table


async def alice_and_bob_joined(sim: DiscordSim, name: str) -> None:
    """A tournament hosted in the seed's channel, with alice and bob entered, not started."""
    s = sim.seed
    created = await sim.slash(s.owner, s.channel, "ttt tournament create", name=name)
    assert created.message is not None
    join = button_id(created.message, TOURNAMENT_ID, action="join")
    for player in (s.alice, s.bob):
        await sim.click(player, created.message, join)


@contextlib.contextmanager
def games_not_stored(bot: TTTBot) -> Iterator[None]:
    """While held, the database fails every table's game as it is stored."""
    storing = bot.storage.start_tournament_game

    async def down(
        tournament_id: int, round_number: int, board: int, game: NewGame
    ) -> GameRecord | None:
        raise DatabaseUnavailableError("connection refused", nothing_written=True)

    bot.storage.start_tournament_game = down  # type: ignore[method-assign]
    try:
        yield
    finally:
        bot.storage.start_tournament_game = storing  # type: ignore[method-assign]


@both_front_doors
async def test_a_start_whose_games_the_database_failed_to_open_says_it_started(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """The start is saved and answered before the round's games are opened: a database
    failing at that later step must not follow 'started' with 'nothing was done'. The sweeper
    opens the games at its next pass."""
    s = sim.seed
    async with harness.running() as bot:
        await alice_and_bob_joined(sim, "Held")
        with games_not_stored(bot):
            started = await sim.slash(s.owner, s.channel, "ttt tournament start")
            assert await bot.in_flight.wait_idle(patience=5)
        said = [text_of(m) for m in [started.message, *started.followups] if m is not None]
        said.append(started.content or "")
        assert any("started" in text for text in said), said
        assert not any("nothing was done" in text for text in said), said
        tournament = await current(bot, sim)
        assert tournament.status is TournamentStatus.RUNNING
        assert await round_games(bot, tournament) == []
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        (game,) = await round_games(bot, await current(bot, sim))
        assert {game.x_id, game.o_id} == {s.alice.id, s.bob.id}
    assert "Traceback" not in caplog.text


class Killed(Exception):
    """The process dies here: nothing after this step happens."""


@both_engines
async def test_a_process_killed_after_saving_the_end_posts_the_podium_once_after_its_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The end is saved first, then the message shown and the podium posted: a process
    killed between the two leaves a finished tournament that the restarted sweeper still
    shows and announces, once."""
    s = sim.seed
    async with harness.running(expect_errors=True) as bot:  # the kill, logged by the sweeper
        tournament = await duel(sim, bot, s.channel, "Cut short")
        (game,) = await round_games(bot, tournament)
        await play(sim, bot, game.id, X_WINS)

        async def killed(tournament: Tournament) -> None:
            raise Killed

        bot.tournament_rounds.show = killed  # type: ignore[method-assign]
        await bot.sweep()
        ended = await bot.tournaments.get(tournament.id)
        assert ended is not None
        assert ended.status is TournamentStatus.FINISHED
        assert not ended.state.final_posted
    async with harness.running() as bot:
        for _ in range(3):
            await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
    finals = [m for m in sim.messages(s.channel) if "is over" in text_of(m)]
    assert len(finals) == 1
    assert "Finished after 1 round." in text_of(sim.message(tournament.state.announcement_id or 0))


async def test_a_podium_whose_mark_the_database_failed_is_posted_at_the_next_sweep(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The podium is marked posted, then posted: a database failing at the mark leaves it
    for the sweeper's next pass, which posts it once."""
    s = sim.seed
    async with harness.running() as bot:
        tournament = await duel(sim, bot, s.channel, "Marked")
        (game,) = await round_games(bot, tournament)
        await play(sim, bot, game.id, X_WINS)
        marking = bot.tournaments.note_final_posted

        async def down(tournament_id: int) -> bool:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        bot.tournaments.note_final_posted = down  # type: ignore[method-assign]
        try:
            await bot.sweep()
        finally:
            bot.tournaments.note_final_posted = marking  # type: ignore[method-assign]
        assert [m for m in sim.messages(s.channel) if "is over" in text_of(m)] == []
        for _ in range(2):
            await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        after = await bot.tournaments.get(tournament.id)
    assert after is not None
    assert after.state.final_posted
    assert len([m for m in sim.messages(s.channel) if "is over" in text_of(m)]) == 1


async def test_a_sweep_whose_database_fails_on_a_tournament_is_one_warning_and_no_traceback(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """An outage met while running a tournament is not a bug of the bot's: a WARNING, as the
    sweeper logs one elsewhere, and the next sweep does what this one could not."""
    s = sim.seed
    async with harness.running() as bot:
        await alice_and_bob_joined(sim, "Outage")
        with games_not_stored(bot):
            await sim.slash(s.owner, s.channel, "ttt tournament start")
            assert await bot.in_flight.wait_idle(patience=5)  # the start's own try first
            await bot.sweep()
        assert await round_games(bot, await current(bot, sim)) == []
        await bot.sweep()
        (game,) = await round_games(bot, await current(bot, sim))
        assert {game.x_id, game.o_id} == {s.alice.id, s.bob.id}
    swept = [r for r in caplog.records if r.name == "bot.tournaments.rounds"]
    assert any(r.levelno == logging.WARNING and "unavailable" in r.getMessage() for r in swept)
    assert "Traceback" not in caplog.text


async def test_a_process_killed_after_pairing_a_round_shows_it_after_its_restart(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """The next round is saved first, then its games opened and the message edited: a
    process killed in between leaves the message on the round before, which the restarted
    sweeper brings up to date, though its own pass changed nothing stored."""
    s = sim.seed
    players = [s.alice, s.bob, s.carol, *members(sim, "dave")]
    async with harness.running(expect_errors=True) as bot:  # the kill, logged by the sweeper
        tournament = await joined_and_started(sim, bot, players)
        for game in await round_games(bot, tournament):
            await play(sim, bot, game.id, X_WINS)

        async def killed(tournament: Tournament) -> None:
            raise Killed

        bot.tournament_rounds._open_games = killed  # type: ignore[method-assign]
        await bot.sweep()
        assert (await current(bot, sim)).state.current_round == 2
    shown = sim.message(tournament.state.announcement_id or 0)
    assert "Round 1 of 3 is being played." in text_of(shown)
    async with harness.running() as bot:
        await bot.sweep()
        assert await bot.in_flight.wait_idle(patience=5)
        assert len(await round_games(bot, await current(bot, sim))) == 2
    assert "Round 2 of 3 is being played." in text_of(sim.message(shown.id))


@both_front_doors
async def test_a_tournament_whose_message_the_database_failed_to_note_is_still_shown(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tournament is stored, its message posted, then the message noted in it: a
    database failing at that last step must not follow the posted message with 'nothing
    was done' (the channel hosts it now), and the first Join on the message notes it, so
    that it shows the entries from then on."""
    s = sim.seed
    async with harness.running() as bot:

        async def down(tournament_id: int, message_id: int) -> None:
            raise DatabaseUnavailableError("connection refused", nothing_written=True)

        monkeypatch.setattr(bot.tournaments, "note_announcement", down)
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Unnoted")
        assert await bot.in_flight.wait_idle(patience=5)
        monkeypatch.undo()
        announcement = created.message
        assert announcement is not None
        said = [text_of(m) for m in [announcement, *created.followups]]
        assert not any("nothing was done" in text for text in said), said
        join = button_id(announcement, TOURNAMENT_ID, action="join")
        for player in (s.alice, s.bob):
            await sim.click(player, announcement, join)
        assert await bot.in_flight.wait_idle(patience=5)
        tournament = await current(bot, sim)
        await sim.slash(s.owner, s.channel, "ttt tournament start")
        assert await bot.in_flight.wait_idle(patience=5)
    assert tournament.state.announcement_id == announcement.id
    assert "Round 1 of 3 is being played." in text_of(sim.message(announcement.id))
