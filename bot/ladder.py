"""The leaderboard's seasons as the bot runs them: the table a member asks for, the seasons
offered by name, and each season's end seen to once (its top three, for the sweeper to post).

Pure domain, as :mod:`bot.service` is: ids and times, no Discord. The rules of a season are in
:mod:`bot.seasons`; a server's choice of seasons and of a channel to announce in, in
:mod:`bot.server_settings`.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass

from bot.clock import Clock
from bot.domain import UserError, check_size
from bot.i18n import N_
from bot.seasons import ALL_TIME, Season, SeasonLength, table
from bot.server_settings import Setting, SettingsService
from bot.storage.base import EVERY_GUILD, GameRecord, Rating, ShardSlice, Storage
from game.variants import GAME_SIZES

log = logging.getLogger(__name__)

# The most seasons the leaderboard's option offers at once (Discord shows 25 choices; the
# first is "all time").
MAX_OFFERED = 24
# How many seasons back the offer looks for those that match what was typed: one database
# read each, for the seasons that had rated games only.
MAX_LOOKED_AT = 240
PODIUM = 3
# How long after a season's end the sweeper announces it: a game finished in its last moments
# is stamped with the time its move was made, and its save may still be under way at the end
# (behind a SQLite file's write lock, 10 s at most; a statement's 5 s on PostgreSQL), or it
# was stamped by a worker whose clock is a few seconds behind. By then it is in the season's
# table, and in the podium.
SEASON_SETTLES = 60.0
# What a member may type for all time, besides picking it from the list.
ALL_TIME_NAMES = frozenset({ALL_TIME, "all time", "all"})

SEASONS_OFF = N_("Seasons are off in this server: its leaderboard is all time.")


@dataclass(frozen=True, slots=True)
class SeasonTable:
    """A leaderboard: ``season``'s (None: all time) on ``size``x``size`` boards, best first,
    and whether the season is still going (its figures may change)."""

    season: Season | None
    size: int
    rows: list[Rating]
    current: bool = False


@dataclass(frozen=True, slots=True)
class SeasonEnd:
    """A season that ended in a server that announces them: its top three on each board size
    that had rated games in it, to post in ``channel_id``."""

    guild_id: int
    season: Season
    channel_id: int
    language: str | None
    podiums: dict[int, list[Rating]]


class Ladder:
    """Season tables for a server's members, and its seasons' ends for the sweeper."""

    def __init__(
        self,
        storage: Storage,
        clock: Clock,
        server_settings: SettingsService,
        shards: ShardSlice = EVERY_GUILD,
    ) -> None:
        self._storage = storage
        self._clock = clock
        self._settings = server_settings
        self._shards = shards

    async def table(
        self, guild_id: int, size: int, season: str | None = None, limit: int = 10
    ) -> SeasonTable:
        """The leaderboard ``season`` names: a season ("2026-11"), :data:`ALL_TIME`, or (None)
        the current season, or all time where the server turned seasons off."""
        check_size(size)
        settings = await self._settings.of(guild_id)
        now = self._clock.now()
        seasons_on = settings.seasons is not SeasonLength.OFF
        if season is None:
            season = Season.at(now).name if seasons_on else ALL_TIME
        if season.strip().lower() in ALL_TIME_NAMES:
            rows = await self._storage.leaderboard(guild_id, limit, size=size)
            return SeasonTable(None, size, rows)
        if not seasons_on:
            raise UserError(SEASONS_OFF)
        try:
            picked = Season.named(season)
        except ValueError:
            raise UserError(
                "{} is not a season: pick one from the list, or write it like {}.",
                season.strip()[:20],
                Season.at(now).name,
            ) from None
        if picked.start > now:
            raise UserError("Season {} has not started yet.", picked.name)
        rows = await self._season_rows(guild_id, size, picked)
        return SeasonTable(picked, size, rows[: max(limit, 0)], current=picked.end > now)

    async def seasons_played(self, guild_id: int, size: int, typed: str = "") -> list[str]:
        """The names of the seasons with rated games on ``size`` boards that begin with
        ``typed``, the latest first; none where the server turned seasons off."""
        settings = await self._settings.of(guild_id)
        if settings.seasons is SeasonLength.OFF or size not in GAME_SIZES:
            return []
        found: list[str] = []
        before = Season.at(self._clock.now()).end  # the current season's games included
        for _ in range(MAX_LOOKED_AT):
            last = await self._storage.last_rated_game_before(guild_id, size, before)
            if last is None:
                break
            season = Season.at(last)
            if season.name.startswith(typed.strip()):
                found.append(season.name)
                if len(found) == MAX_OFFERED:
                    break
            before = season.start
        return found

    async def ended_seasons(self) -> AsyncIterator[SeasonEnd]:
        """The last season's end in each server of this process's shards that announces
        seasons and has not seen to it yet: claimed here, so that no other process (nor this
        one, after a restart) announces it again. A server whose channel was set after the
        season ended, or that turned seasons off, has nothing announced.

        Each is read, then claimed, then handed over to be posted before the next server's
        is read: a database failing while a podium is read leaves that season unclaimed, and
        the ones claimed before it posted, rather than claimed and never posted."""
        now = self._clock.now()
        season = Season.at(now - SEASON_SETTLES).previous
        guilds = await self._storage.unannounced_guilds(
            season.name, season.end, Setting.ANNOUNCEMENTS.value, self._shards
        )
        for guild_id in guilds:
            settings = await self._settings.of(guild_id)
            podiums = {}
            # Without a language chosen by its admins, the server's is the one its boards were
            # shown in (its Discord language, which only an interaction tells): its last game's.
            language, last_finished = settings.language, -math.inf
            if settings.seasons is not SeasonLength.OFF and settings.announcements is not None:
                for size in GAME_SIZES:
                    games = await self._storage.season_games(
                        guild_id, size, season.start, season.end
                    )
                    rows = await self._table(games, season)
                    if rows:
                        podiums[size] = rows[:PODIUM]
                    if games and games[-1].updated_at > last_finished:
                        last_finished = games[-1].updated_at
                        language = settings.language or games[-1].language
            if not await self._storage.claim_season(guild_id, season.name, now):
                continue  # another process has it
            if podiums and settings.announcements is not None:
                yield SeasonEnd(guild_id, season, settings.announcements, language, podiums)

    async def release(self, end: SeasonEnd) -> None:
        """Give up a season's claim whose announcement could not be posted: the next sweep
        (of any process) tries again."""
        await self._storage.release_season(end.guild_id, end.season.name)

    async def _season_rows(self, guild_id: int, size: int, season: Season) -> list[Rating]:
        """``season``'s table, replayed from its games, as of its end or now if sooner."""
        games = await self._storage.season_games(guild_id, size, season.start, season.end)
        return await self._table(games, season)

    async def _table(self, games: list[GameRecord], season: Season) -> list[Rating]:
        """``season``'s table from its ``games``, as of its end or now if sooner."""
        # A worker thread: the replay costs some 0.13 ms of CPU a game (bench.seasons), and the
        # event loop goes on answering meanwhile.
        return await asyncio.to_thread(table, games, min(self._clock.now(), season.end))
