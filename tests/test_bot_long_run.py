"""A server's life over weeks, on the manual clock: one bot through ten simulated weeks, a year
end and a 29 February, on SQLite and PostgreSQL.

Every simulated day members play a few games (between members, and against the bot), one
solves the daily puzzle (with missed days), and the sweeper runs; the operator keeps finished
games for :data:`KEEP_DAYS` days. On the way: the admins choose a language mid-season, a member
forgets herself mid-season, a tournament runs across a season's end and a member forgets
herself in the middle of it, its games are later pruned, and the bot is restarted, once at a
year's end and once after a weekend down. After each day the invariants the docs promise are
checked against the test's own account of every game that finished:

- the all-time ratings and rated records are what the games add up to, pruned ones included
  (docs/operating.md, "Retention": they were counted when the games ended), and so are the
  records against the bot;
- each season's table is its games' as still stored (docs/design.md, "Seasons": pruning thins
  a past season out), each season's end is announced once, with the podium its table had,
  in the server's language, and the next season starts from nothing;
- the puzzle streak counts calendar days in UTC, across month and year ends, missed days and
  a bot down for days;
- the tournament's standings add up, before and after its games are pruned;
- a forgotten member is in no table, standings or document;
- nothing grows without bound: every table's rows are bounded by what the docs say is kept,
  and so are the bot's copies in memory.
"""

from __future__ import annotations

import datetime
import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import asyncpg
import pytest

from bot import i18n
from bot.client import TTTBot
from bot.components import FORGET_ID, GAME_ACTION_ID, TOURNAMENT_ID
from bot.config import POSTGRESQL
from bot.i18n import ENGLISH_LANGUAGE
from bot.ladder import SEASON_SETTLES
from bot.practice import day_of, streak
from bot.results import replay
from bot.seasons import Season, table
from bot.storage.base import VS_MEMBER, GameRecord, Rating, TournamentStatus, is_forgotten
from bot.tournaments.service import Tournament
from tests.bot_harness import BotHarness, both_engines, button_id, start_member_game, text_of
from tests.discord_sim import DiscordSim, SimUser
from tests.test_bot_puzzles import open_puzzle, solve_in, todays
from tests.test_bot_tournaments import X_WINS, members, play, round_games

pytestmark = [both_engines, pytest.mark.slow]

DAY = 86_400.0
KEEP_DAYS = 20
NEWS = "news"
MEDALS = ("🥇", "🥈", "🥉")
FRENCH = i18n.language("fr")
# Every table the bot keeps, as the migrations make it.
TABLES = (
    "games",
    "challenges",
    "player_stats",
    "ratings",
    "settings",
    "puzzle_results",
    "drills",
    "reply_routes",
    "season_announcements",
    "leases",
    "guild_settings",
    "tournaments",
    "tournament_games",
    "channel_occupants",
    "thread_suspects",
    "thread_claims",
    "interactions_seen",
)


def at(year: int, month: int, day: int, hour: int = 10, minute: int = 0) -> float:
    return datetime.datetime(year, month, day, hour, minute, tzinfo=datetime.UTC).timestamp()


FIRST_DAY = at(2027, 12, 27)
LAST_DAY = at(2028, 3, 2)
# alice misses the puzzle on these days (a month's end, and the first of a year).
PUZZLE_MISSED = {datetime.date(2027, 12, 31), datetime.date(2028, 1, 15)}
# alice's streak and best as each of these mornings finds them (today's puzzle not solved yet).
STREAKS = {
    datetime.date(2027, 12, 31): (4, 4),
    datetime.date(2028, 1, 1): (0, 4),  # 31 December missed, across the year's end
    datetime.date(2028, 1, 15): (14, 14),
    datetime.date(2028, 2, 4): (19, 19),  # across January's end
    datetime.date(2028, 2, 7): (0, 19),  # the bot was down for three days: none solved
    datetime.date(2028, 3, 2): (24, 24),  # across 29 February
}
FRENCH_FROM = at(2028, 1, 10)
CAROL_FORGOTTEN = at(2028, 1, 20)
TOURNAMENT_DAY = at(2028, 1, 31)
# The bot is down from this day's evening for three days (a weekend, and a day more).
DOWN_FROM = at(2028, 2, 4)
DOWN_DAYS = 3


@dataclass
class Account:
    """The test's own record of the server's life: every game that finished, as last seen."""

    games: dict[int, GameRecord] = field(default_factory=dict)
    live: set[int] = field(default_factory=set)
    next_id: int = 1
    forgotten: set[int] = field(default_factory=set)
    solved: set[datetime.date] = field(default_factory=set)
    tournament: int | None = None
    newcomers: list[SimUser] = field(default_factory=list)
    streaks_seen: set[datetime.date] = field(default_factory=set)
    # Each ended season's podium, as its table had it when it ended.
    podiums: dict[str, list[int]] = field(default_factory=dict)

    def in_end_order(self, games: Iterable[GameRecord]) -> list[GameRecord]:
        return sorted(games, key=lambda game: (game.updated_at, game.id))


async def note_new_games(bot: TTTBot, account: Account) -> None:
    """Take every game stored since the last look, and the latest of those still going."""
    while (game := await bot.storage.get_game(account.next_id)) is not None:
        account.live.add(game.id)
        account.next_id += 1
    for game_id in sorted(account.live):
        game = await bot.storage.get_game(game_id)
        assert game is not None, f"game {game_id} went while still going"
        if not game.is_active:
            account.games[game_id] = game
            account.live.discard(game_id)


async def beats(sim: DiscordSim, winner: SimUser, loser: SimUser) -> None:
    """``winner`` challenges ``loser``, who accepts and resigns: a rated game, won."""
    board = await start_member_game(sim, x=winner, o=loser)
    resigned = await sim.click(loser, board, button_id(board, GAME_ACTION_ID, action="resign"))
    assert resigned.response_type == 7, resigned.content


async def loses_to_the_bot(sim: DiscordSim, user: SimUser) -> None:
    started = await sim.slash(user, sim.seed.channel, "ttt vs-ai", difficulty="random")
    assert started.message is not None, started.content
    resigned = await sim.slash(user, sim.seed.channel, "ttt resign")
    assert not resigned.ephemeral, resigned.content


async def forget(sim: DiscordSim, bot: TTTBot, user: SimUser) -> None:
    asked = await sim.slash(user, sim.seed.channel, "ttt forget-me")
    assert asked.message is not None, asked.content
    confirmed = await sim.click(
        user, asked.message, button_id(asked.message, FORGET_ID, action="confirm")
    )
    assert confirmed.response_type == 7, confirmed.content
    assert await bot.in_flight.wait_idle(patience=5)


async def row_counts(harness: BotHarness) -> dict[str, int]:
    """How many rows each table holds."""
    if harness.engine == POSTGRESQL:
        connection = await asyncpg.connect(harness.database.url)
        try:
            return {
                name: int(await connection.fetchval(f"SELECT count(*) FROM {name}"))
                for name in TABLES
            }
        finally:
            await connection.close()
    db = sqlite3.connect(harness.db_path)
    try:
        return {name: db.execute(f"SELECT count(*) FROM {name}").fetchone()[0] for name in TABLES}
    finally:
        db.close()


def listed(rows: Iterable[Rating]) -> list[tuple[int, int, int, int, int, float]]:
    return [
        (row.user_id, row.games, row.wins, row.losses, row.draws, round(row.rating, 6))
        for row in rows
    ]


async def check_the_day(bot: TTTBot, harness: BotHarness, account: Account) -> None:
    """Every invariant, against the account."""
    s = harness.sim.seed
    now = harness.clock.now()
    await note_new_games(bot, account)
    games = account.in_end_order(account.games.values())
    guild = s.guild.id
    # All time: the stored ratings are what every game ever finished adds up to.
    expected = {
        key[2]: row
        for key, row in replay(games).items()
        if key[0] == guild
        and key[1] == 3
        and key[2] not in account.forgotten
        and not is_forgotten(key[2])
    }
    stored = await bot.storage.leaderboard(guild, 100, size=3)
    assert sorted(listed(stored)) == sorted(listed(expected.values()))
    for user in (s.alice, s.bob, s.carol):
        if user.id in account.forgotten:
            continue
        stats = await bot.storage.player_stats(guild, user.id, size=3)
        against_bot = [
            game
            for game in games
            if game.ai_mark is not None and game.player_id(game.ai_mark.other) == user.id
        ]
        record = stats.against("random")
        assert (record.wins, record.losses, record.draws) == (
            sum(game.winner is game.ai_mark.other for game in against_bot if game.ai_mark),
            sum(game.winner is game.ai_mark for game in against_bot if game.ai_mark),
            sum(game.winner is None for game in against_bot),
        )
        member = expected.get(user.id)
        vs_members = stats.against(VS_MEMBER)
        assert (vs_members.wins, vs_members.losses) == (
            (member.wins, member.losses) if member else (0, 0)
        )
    # Each season's table is its games' as still stored.
    kept_from = now - KEEP_DAYS * DAY
    for season in {Season.at(game.updated_at) for game in games} | {Season.at(now)}:
        if season.start > now:
            continue
        of_season = [
            game
            for game in games
            if season.start <= game.updated_at < season.end and game.updated_at > kept_from
        ]
        shown = await bot.ladder.table(guild, 3, season.name, limit=100)
        want = [
            row
            for row in table(of_season, min(now, season.end))
            if row.user_id not in account.forgotten
        ]
        assert listed(shown.rows) == listed(want), season.name
    # The puzzle streak.
    today = day_of(now)
    puzzles = await bot.practice.puzzle_stats(s.alice.id, guild)
    assert puzzles.streak == streak(account.solved, today)
    if today in STREAKS:
        assert (puzzles.streak.current, puzzles.streak.best) == STREAKS[today], today
        account.streaks_seen.add(today)
    assert puzzles.solved == len(account.solved)
    check_the_announcements(harness.sim, account, now)
    # Nothing grows without bound: the games kept are the live ones and those finished within
    # KEEP_DAYS (a day more: the sweep that prunes them runs at the turn of the day), with their
    # challenges; the rest is bounded by the channels, the months or the tournaments.
    counts = await row_counts(harness)
    kept = sum(1 for game in games if game.updated_at > kept_from - DAY) + len(account.live)
    assert counts["games"] <= kept, counts
    assert counts["challenges"] <= kept, counts
    assert counts["channel_occupants"] <= len(account.live), counts
    assert counts["tournament_games"] <= counts["games"], counts
    assert counts["tournaments"] <= 1, counts
    assert counts["thread_claims"] <= 4, counts
    assert counts["thread_suspects"] == 0, counts
    assert counts["interactions_seen"] == 0, counts  # noted under serve only
    assert counts["leases"] == 0, counts  # the same
    assert counts["season_announcements"] <= 3, counts
    assert counts["reply_routes"] <= len(harness.sim.channels), counts
    assert counts["ratings"] <= 5, counts
    assert counts["puzzle_results"] == len(account.solved), counts
    # And in memory: no copy of a game that is gone, and no channel held as refused.
    assert len(bot.service._kept) <= counts["games"]
    assert bot.boards._refused_channels == {}


def announced(sim: DiscordSim) -> dict[str, list[str]]:
    """What was posted in the announcements channel, by the season it names."""
    posted: dict[str, list[str]] = {}
    for channel in sim.channels.values():
        for message in sim.messages(channel):
            text = text_of(message)
            if channel.name == NEWS:
                found = re.search(r"[0-9]{4}-[0-9]{2}", text)
                assert found is not None, text
                posted.setdefault(found[0], []).append(text)
            else:
                assert not any(medal in text for medal in MEDALS[:1]) or "Month" in text, text
    return posted


def check_the_announcements(sim: DiscordSim, account: Account, now: float) -> None:
    """Each ended season announced once, in the server's language, with the podium its table
    had when it ended; none still going."""
    posted = announced(sim)
    ended = Season.at(now - SEASON_SETTLES).previous
    seasons = []
    season = Season.at(FIRST_DAY)
    while season <= ended:
        seasons.append(season)
        season = season.next
    assert sorted(posted) == [season.name for season in seasons]
    for season in seasons:
        (text,) = posted[season.name]
        language = ENGLISH_LANGUAGE if season.end <= FRENCH_FROM else FRENCH
        assert language._("Tic-tac-toe season {season} is over", season=season.name) in text
        if season.name not in account.podiums:
            of_season = [
                game
                for game in account.in_end_order(account.games.values())
                if season.start <= game.updated_at < season.end
            ]
            rows = table(of_season, season.end)
            account.podiums[season.name] = [row.user_id for row in rows[:3]]
        podium = [int(user) for user in re.findall(r"[🥇🥈🥉] <@([0-9]+)>", text)]
        assert podium == account.podiums[season.name], (season.name, text)


async def tournament_of_four(sim: DiscordSim, bot: TTTBot, players: list[SimUser]) -> Tournament:
    s = sim.seed
    created = await sim.slash(
        s.owner, s.channel, "ttt tournament create", name="Month's end", rounds=2
    )
    assert created.message is not None, created.content
    join = button_id(created.message, TOURNAMENT_ID, action="join")
    for player in players:
        await sim.click(player, created.message, join)
    await sim.slash(s.owner, s.channel, "ttt tournament start")
    assert await bot.in_flight.wait_idle(patience=5)
    return await bot.tournaments.here(s.guild.id, s.channel.id)


async def a_day(
    sim: DiscordSim, bot: TTTBot, harness: BotHarness, account: Account, number: int
) -> None:
    """One day's play, from 10:00 UTC."""
    s = sim.seed
    now = harness.clock.now()
    players = [user for user in (s.alice, s.bob, s.carol) if user.id not in account.forgotten]
    winner, loser = players[number % len(players)], players[(number + 1) % len(players)]
    await beats(sim, winner, loser)
    if number % 3 == 0:
        await loses_to_the_bot(sim, s.bob)
    today = day_of(now)
    if today not in PUZZLE_MISSED:
        await solve_in(sim, s.alice, await open_puzzle(sim, s.alice), todays(today))
        account.solved.add(today)
    assert await bot.in_flight.wait_idle(patience=5)


async def live_days(
    sim: DiscordSim, bot: TTTBot, harness: BotHarness, account: Account, until: float
) -> None:
    """Day after day until ``until``: each day's play and events, the sweeper run a minute
    after midnight (UTC) and again in the next morning, then the day checked."""
    s = sim.seed
    while (now := harness.clock.now()) < until:
        number = round((now - FIRST_DAY) / DAY)
        if FRENCH_FROM <= now < FRENCH_FROM + DAY:
            chosen = await sim.slash(s.owner, s.channel, "ttt-settings language", language="fr")
            assert chosen.ephemeral
        await a_day(sim, bot, harness, account, number)
        if CAROL_FORGOTTEN <= now < CAROL_FORGOTTEN + DAY:
            await forget(sim, bot, s.carol)
            account.forgotten.add(s.carol.id)
            await take_again(bot, account)
        if TOURNAMENT_DAY <= now < TOURNAMENT_DAY + DAY:
            account.tournament = await across_the_seasons_end(sim, bot, harness, account)
        await check_the_tournament(bot, account)
        midnight = now + DAY - 10 * 3600
        harness.clock.advance(max(0.0, midnight + SEASON_SETTLES + 5 - harness.clock.now()))
        await bot.sweep()
        harness.clock.advance(now + DAY - harness.clock.now())
        await bot.sweep()
        await check_the_day(bot, harness, account)


async def take_again(bot: TTTBot, account: Account) -> None:
    """A member was forgotten: take their games as now stored, anonymised."""
    await note_new_games(bot, account)
    placeholders: dict[int, int] = {}
    gone = []
    for game_id, game in account.games.items():
        stored = await bot.storage.get_game(game_id)
        if stored is None:
            gone.append(game_id)
            continue
        for before, after in ((game.x_id, stored.x_id), (game.o_id, stored.o_id)):
            if before != after:
                placeholders[before] = after
        account.games[game_id] = stored
    # The games pruned before: as they would be stored had they been kept.
    for game_id in gone:
        game = account.games[game_id]
        account.games[game_id] = replace(
            game,
            x_id=placeholders.get(game.x_id, game.x_id),
            o_id=placeholders.get(game.o_id, game.o_id),
        )


async def across_the_seasons_end(
    sim: DiscordSim, bot: TTTBot, harness: BotHarness, account: Account
) -> int:
    """A Swiss of four over two rounds, late on January's last day: round 1 in January,
    round 2 in February, erin forgetting herself before playing it."""
    s = sim.seed
    dave, erin = account.newcomers
    harness.clock.advance(at(2028, 1, 31, 23, 0) - harness.clock.now())
    tournament = await tournament_of_four(sim, bot, [s.alice, s.bob, dave, erin])
    for game in await round_games(bot, tournament):
        await play(sim, bot, game.id, X_WINS)
    harness.clock.advance(at(2028, 2, 1, 0, 30) - harness.clock.now())
    await bot.sweep()
    tournament = await bot.tournaments.here(s.guild.id, s.channel.id)
    assert tournament.state.current_round == 2
    # That sweep announced January, erin on its podium: as it stood then.
    await note_new_games(bot, account)
    check_the_announcements(sim, account, harness.clock.now())
    await forget(sim, bot, erin)
    account.forgotten.add(erin.id)
    for game in await round_games(bot, tournament):
        if game.is_active:
            await play(sim, bot, game.id, X_WINS)
    await bot.sweep()
    await take_again(bot, account)
    return tournament.id


async def check_the_tournament(bot: TTTBot, account: Account) -> None:
    if account.tournament is None:
        return
    done = await bot.tournaments.get(account.tournament)
    assert done is not None
    assert done.status is TournamentStatus.FINISHED
    # Two rounds of two games: four points, whatever was pruned since.
    assert sum(row.points for row in done.state.standings()) == 4.0, done.state.standings()
    for forgotten in account.forgotten:
        assert str(forgotten) not in done.record.state


async def test_ten_weeks_of_a_server(sim: DiscordSim, harness: BotHarness) -> None:
    s = sim.seed
    news = sim.add_channel(s.guild, NEWS)
    account = Account(newcomers=members(sim, "dave", "erin"))
    harness.clock.advance(FIRST_DAY - harness.clock.now())
    keep: dict[str, Any] = {"keep_finished_games_days": KEEP_DAYS}
    async with harness.running(**keep) as bot:
        saved = await sim.slash(s.owner, s.channel, "ttt-settings announcements", channel=news)
        assert saved.ephemeral
        await live_days(sim, bot, harness, account, at(2027, 12, 31))
    # Restarted on the year's last day.
    async with harness.running(**keep) as bot:
        await live_days(sim, bot, harness, account, DOWN_FROM)
    # Down for a long weekend: what ran out meanwhile is settled at the start.
    harness.clock.advance(DOWN_DAYS * DAY)
    async with harness.running(**keep) as bot:
        await check_the_day(bot, harness, account)
        await live_days(sim, bot, harness, account, LAST_DAY)
    assert sorted(announced(sim)) == ["2027-12", "2028-01", "2028-02"]
    assert account.streaks_seen == set(STREAKS)
