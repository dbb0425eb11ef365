"""The PostgreSQL implementation of :class:`bot.storage.base.Storage`, on asyncpg.

Several bot processes may share one database, so nothing here relies on being alone:

- Writers are not serialised as SQLite's ``BEGIN IMMEDIATE`` serialises them. Transactions run
  at READ COMMITTED, and each race is decided by the row or key it is about: a move is an
  ``UPDATE ... WHERE version = $n`` (a compare-and-set: a second writer waits for the first's
  row lock, re-reads the row, and matches nothing), a channel's one occupant is the primary key
  of ``channel_occupants`` (migration 0002), and a rematch is a unique key.
- Where a transaction reads a value to compute what it writes (the ratings of a finished
  game), it locks those rows first (``SELECT ... FOR UPDATE``), so that two games finishing at
  once for one player both count from the rating the other left.
- A server's limit on live games is decided where the game is inserted, in its transaction:
  it first takes a transaction-scoped advisory lock per (guild, member) of the new game's
  members, in ascending order of key (so that two creates never hold one each and wait for the
  other), and only then counts their live games, in a statement whose snapshot starts after
  the lock was granted: it sees every game the lock's previous holder committed.
- Migrations are applied under a transaction-scoped advisory lock, so that processes starting
  together apply each one once.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import inspect
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from bot import results
from bot.clock import Clock
from bot.config import DEFAULT_POOL_SIZE
from bot.storage import codec, sql
from bot.storage.base import (
    EVERY_GUILD,
    FORGOTTEN_NAME,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    DatabaseUnavailableError,
    DrillQueue,
    DrillRecord,
    Forgotten,
    GameRecord,
    GameStatus,
    GuildErased,
    LiveGamesLimitError,
    MemberData,
    NewChallenge,
    NewDrill,
    NewGame,
    NewTournament,
    PlayerStats,
    Pruned,
    PuzzleAttempt,
    PuzzleResult,
    Rating,
    ReplyRoute,
    ShardSlice,
    Storage,
    StoredSetting,
    ThreadSuspects,
    TournamentHereError,
    TournamentRecord,
    TournamentStatus,
    check_closing,
    over_the_limit,
)
from bot.storage.migrations import DATA_STEPS, DataStep, migration_files
from game import DEFAULT_SIZE

log = logging.getLogger(__name__)

DIALECT = "postgresql"
SQL = sql.NUMBERED
# How long to wait for the server to answer a new connection: an unreachable host is reported
# within this, rather than after the driver's default minute.
CONNECT_TIMEOUT_SECONDS = 10.0
# How long a statement may take before it is given up (asyncpg's command_timeout), so that
# on a hung server an interaction ends with an apology rather than waiting until the server
# answers again. asyncpg then cancels the statement through a connection of its own, which a
# hung server keeps waiting as long again before asyncpg drops the connection: an operation
# ends within about twice this. Every statement of the bot takes milliseconds.
STATEMENT_TIMEOUT_SECONDS = 5.0
# Migrations, and a second process's wait for the first's, may take long on a large database.
MIGRATION_TIMEOUT_SECONDS = 3600.0
# pg_advisory_xact_lock's key for "applying migrations": any constant that no other
# application sharing the database is likely to pick (b"tttbot:m" as a number).
MIGRATION_LOCK = 0x7474_7462_6F74_3A6D

# The constraints whose violation means "the channel is taken" and "that game was rematched".
OCCUPIED = "channel_occupants_one_per_channel"
REMATCHED = "games_rematched_once"
# The constraint that a tournament's table of a round has one game (migration 0012's key).
TOURNAMENT_TABLE_KEY = "tournament_games_pkey"

Connection = asyncpg.Connection | PoolConnectionProxy

P = ParamSpec("P")
T = TypeVar("T")

# The failures that are the database's, not the bot's: a server that is down, shutting down or
# unreachable, a connection lost, a server out of connections or disk.
OUTAGES: tuple[type[BaseException], ...] = (
    OSError,  # refused, reset, unreachable, timed out
    asyncpg.PostgresConnectionError,  # the connection lost mid-operation among them
    asyncpg.OperatorInterventionError,  # shutting down, starting up, a query cancelled
    asyncpg.InsufficientResourcesError,  # too many connections, a full disk
    # A session the server ended mid-operation (shutting down) leaves asyncpg's protocol in
    # a state it cannot go on from: "cannot switch to state 12; another operation (2) is in
    # progress" (asyncpg issue 1069, sqlalchemy issue 13241).
    asyncpg.InternalClientError,
)
# Those of them that happen only while connecting, before anything is sent.
NEVER_CONNECTED: tuple[type[BaseException], ...] = (
    ConnectionRefusedError,
    socket.gaierror,
    asyncpg.CannotConnectNowError,
    asyncpg.TooManyConnectionsError,
)


async def _keep_session(connection: asyncpg.Connection) -> None:
    """What the pool does to a connection given back, besides rolling back a transaction
    left open: nothing. asyncpg's default sends one more query on every release (unlock
    advisory locks, close cursors, UNLISTEN, RESET ALL), a second round trip for each
    one-statement operation; this engine leaves none of those behind (its only advisory lock
    is transaction-scoped, and it sets, listens and declares nothing)."""


class PostgresStorage:
    """Games, challenges, stats and settings in one PostgreSQL database.

    Open it with ``await PostgresStorage.open(url, clock, pool_size)``.
    """

    def __init__(self, pool: asyncpg.Pool, clock: Clock) -> None:
        self._pool = pool
        self._clock = clock

    @classmethod
    async def open(
        cls,
        url: str,
        clock: Clock,
        pool_size: int = DEFAULT_POOL_SIZE,
        statement_timeout: float | None = STATEMENT_TIMEOUT_SECONDS,
    ) -> PostgresStorage:
        """Connect to the database ``url`` names with a pool of up to ``pool_size``
        connections and bring its schema up to date; ``clock`` dates the migrations it
        applies. A statement that takes longer than ``statement_timeout`` seconds (None: no
        limit) raises ``TimeoutError``. Raises asyncpg's errors (and ``OSError``) when it
        cannot connect."""
        pool = await asyncpg.create_pool(
            url,
            # One connection up front proves the URL works; more open as handlers need them.
            min_size=1,
            max_size=pool_size,
            timeout=CONNECT_TIMEOUT_SECONDS,
            command_timeout=statement_timeout,
            reset=_keep_session,
        )
        try:
            storage = cls(pool, clock)
            await storage._migrate()
        except BaseException:
            await pool.close()
            raise
        return storage

    async def close(self) -> None:
        await self._pool.close()

    # -- plumbing ------------------------------------------------------------------------

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """A connection of the pool in a transaction, committed when the block ends (rolled
        back if it raises)."""
        async with self._pool.acquire() as db, db.transaction():
            yield db

    @asynccontextmanager
    async def _deleting(self) -> AsyncIterator[Connection]:
        """:meth:`transaction` for a deletion, whose failures tell whether anything was
        written: an outage before the commit was sent (the connection never made or lost
        mid-way, the server rolls back what it had) wrote nothing, as does a transaction the
        server rolled back; an outage while committing or after may have committed."""
        committing = False
        try:
            async with self.transaction() as db:
                yield db
                committing = True
        except asyncpg.TransactionRollbackError as error:
            # A deadlock with another transaction (the sweeper removing old games), or a
            # serialization failure: the server rolled this one back, whenever it happened.
            raise DatabaseUnavailableError(_one_line(error), nothing_written=True) from error
        except OUTAGES as error:
            raise DatabaseUnavailableError(
                _one_line(error), nothing_written=not committing
            ) from error

    @asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[Connection]:
        """Reads that must see one moment: at READ COMMITTED each statement would see its own."""
        async with (
            self._pool.acquire() as db,
            db.transaction(isolation="repeatable_read", readonly=True),
        ):
            yield db

    async def _games(self, statement: str, *params: Any) -> list[GameRecord]:
        return [codec.game(row) for row in await self._pool.fetch(statement, *params)]

    async def _challenges(self, statement: str, *params: Any) -> list[ChallengeRecord]:
        return [codec.challenge(row) for row in await self._pool.fetch(statement, *params)]

    async def _migrate(self) -> None:
        async with self.transaction() as db:
            # Held until this transaction ends: a second process starting now waits here, then
            # finds every migration applied. Taken before anything is read or created, since
            # even CREATE TABLE IF NOT EXISTS fails when two sessions run it at once.
            lock = "SELECT pg_advisory_xact_lock($1)"
            await db.execute(lock, MIGRATION_LOCK, timeout=MIGRATION_TIMEOUT_SECONDS)
            if await db.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
                sql.refuse_newer_schema(await db.fetchval(SQL.newest_migration), DIALECT)
            else:
                await db.execute(
                    "CREATE TABLE schema_migrations"
                    " (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
                )
            applied = {row["version"] for row in await db.fetch(SQL.migrations)}
            for version, script in migration_files(DIALECT):
                if version in applied:
                    continue
                # Without arguments, asyncpg sends the whole script in one simple query, so
                # PL/pgSQL bodies with their semicolons need no splitting.
                await db.execute(script, timeout=MIGRATION_TIMEOUT_SECONDS)
                step = DATA_STEPS.get(version)
                if step is DataStep.REPLAY_RATINGS:
                    await _replay_ratings(db)
                await db.execute(SQL.add_migration, version, self._clock.now())
                log.info("Applied PostgreSQL migration %04d", version)

    async def schema_versions(self) -> dict[int, float]:
        """Applied migration versions and when each was applied (for diagnostics and tests)."""
        rows = await self._pool.fetch(SQL.migrations)
        return {row["version"]: row["applied_at"] for row in rows}

    # -- games ---------------------------------------------------------------------------

    async def create_game(self, game: NewGame, *, live_limit: int | None = None) -> GameRecord:
        try:
            if live_limit is None:
                # One statement, atomic on its own: no BEGIN and COMMIT round trips around it.
                return await _insert_game(self._pool, game)
            async with self.transaction() as db:
                await _check_live_games(db, game, live_limit)
                return await _insert_game(db, game)
        except asyncpg.UniqueViolationError as error:
            _raise_refusal(error, game.channel_id, game.rematch_of)
            raise

    async def get_game(self, game_id: int) -> GameRecord | None:
        if not codec.is_row_id(game_id):
            return None
        return codec.first(await self._games(SQL.game, game_id))

    async def game_with_guild_settings(
        self, game_id: int
    ) -> tuple[GameRecord, list[StoredSetting]] | None:
        if not codec.is_row_id(game_id):
            return None
        return codec.game_with_settings(
            await self._pool.fetch(SQL.game_with_guild_settings, game_id)
        )

    async def live_game_in_channel(self, channel_id: int) -> GameRecord | None:
        return codec.first(await self._games(SQL.live_game, channel_id))

    async def save_game(self, game: GameRecord) -> GameRecord | None:
        if game.status is not GameStatus.FINISHED:
            # A move that does not end the game is the one statement: its own transaction,
            # one round trip.
            return await self._save_game(self._pool, game)
        if not results.rated_players(game):
            return await self._save_unrated_finish(game)
        async with self.transaction() as db:
            saved = await self._save_game(db, game)
            if saved is not None:
                await _write_tally(db, saved)
            return saved

    @staticmethod
    async def _save_game(db: Connection | asyncpg.Pool, game: GameRecord) -> GameRecord | None:
        # The compare-and-set of a move: a concurrent save of the same version waits for this
        # row's lock, then re-checks the WHERE against the committed row and matches nothing.
        row = await db.fetchrow(SQL.save_game, *codec.saved_game_values(game))
        return None if row is None else codec.game(row)

    async def _save_unrated_finish(self, game: GameRecord) -> GameRecord | None:
        """The last move of a game that rates nobody (against the bot, say): its stats read
        nothing, so they are added by the save's own statement, one round trip, and only if
        the compare-and-set matched. Tallied from ``game`` rather than the stored row: a
        matching version means the same players, which nothing changes after creation."""
        rows = codec.record_rows(results.tally(game, {}))
        columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * 7
        row = await self._pool.fetchrow(
            _SAVE_UNRATED_FINISH, *codec.saved_game_values(game), *columns
        )
        return None if row is None else codec.game(row)

    async def set_game_message(
        self, game_id: int, message_id: int, *, as_of: int | None = None
    ) -> int | None:
        previous: int | None
        if as_of is None:
            previous = await self._pool.fetchval(_REPLACE_GAME_MESSAGE, message_id, game_id)
        else:
            statement = _REPLACE_GAME_MESSAGE_AS_OF
            previous = await self._pool.fetchval(statement, message_id, game_id, as_of)
        return previous

    async def first_game_message(self, game_id: int, message_id: int) -> bool:
        return await self._pool.fetchval(SQL.first_game_message, message_id, game_id) is not None

    async def use_default_marks(self, game_id: int) -> None:
        await self._pool.execute(SQL.use_default_marks, game_id)

    async def finished_game_in_channel(
        self, channel_id: int, game_id: int | None = None
    ) -> GameRecord | None:
        if game_id is None:
            return codec.first(await self._games(SQL.last_finished_game, channel_id))
        if not codec.is_row_id(game_id):
            return None
        return codec.first(await self._games(SQL.finished_game, game_id, channel_id))

    async def overdue_games(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[GameRecord]:
        return await self._games(SQL.overdue_games(shards), now, *sql.shard_params(shards))

    async def unshown_games(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[GameRecord]:
        return await self._games(SQL.unshown_games(shards), before, *sql.shard_params(shards))

    # -- challenges ----------------------------------------------------------------------

    async def create_challenge(
        self, challenge: NewChallenge, *, cooldown: float | None = None
    ) -> ChallengeRecord:
        values = codec.new_challenge_values(challenge)
        try:
            if cooldown is None:
                row = await self._pool.fetchrow(SQL.insert_challenge, *values)
            else:
                async with self.transaction() as db:
                    # Another challenge, or game, of this member waits here for this one's end.
                    key = member_lock_key(challenge.guild_id, challenge.challenger_id)
                    await db.execute("SELECT pg_advisory_xact_lock($1)", key)
                    keys = (challenge.guild_id, challenge.challenger_id)
                    latest = await db.fetchval(SQL.last_challenge_by, *keys)
                    codec.refuse_within_cooldown(challenge, latest, cooldown)
                    row = await db.fetchrow(SQL.insert_challenge, *values)
        except asyncpg.UniqueViolationError as error:
            _raise_refusal(error, challenge.channel_id, None)
            raise
        assert row is not None
        return codec.challenge(row)

    async def get_challenge(self, challenge_id: int) -> ChallengeRecord | None:
        if not codec.is_row_id(challenge_id):
            return None
        return codec.first(await self._challenges(SQL.challenge, challenge_id))

    async def pending_challenge_in_channel(self, channel_id: int) -> ChallengeRecord | None:
        return codec.first(await self._challenges(SQL.pending_challenge, channel_id))

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> int | None:
        previous: int | None = await self._pool.fetchval(
            _REPLACE_CHALLENGE_MESSAGE, message_id, challenge_id, message_id
        )
        return previous

    async def first_challenge_message(self, challenge_id: int, message_id: int) -> bool:
        statement = SQL.first_challenge_message
        return await self._pool.fetchval(statement, message_id, challenge_id) is not None

    async def close_challenge(
        self,
        challenge_id: int,
        status: ChallengeStatus,
        game: NewGame | None = None,
        *,
        live_limit: int | None = None,
    ) -> tuple[ChallengeRecord, GameRecord | None] | None:
        check_closing(status, game)
        if not codec.is_row_id(challenge_id):
            return None
        try:
            async with self.transaction() as db:
                if game is not None and live_limit is not None:
                    # The members' locks before any row's: every create takes them first.
                    await _lock_members(db, game)
                # Racing closes of one challenge: the second waits for the first's row lock,
                # then finds it no longer pending.
                row = await db.fetchrow(SQL.close_challenge, status.value, challenge_id)
                if row is None:
                    return None
                if game is None:
                    return codec.challenge(row), None
                if live_limit is not None:
                    await _count_live_games(db, game, live_limit)
                # Raising here rolls the status change back too: the challenge stays pending.
                created = await _insert_game(db, game)
                row = await db.fetchrow(SQL.start_challenge_game, created.id, challenge_id)
                assert row is not None
                return codec.challenge(row), created
        except asyncpg.UniqueViolationError as error:
            if game is not None:  # only inserting the game can break a unique key
                _raise_refusal(error, game.channel_id, game.rematch_of)
            raise

    async def overdue_challenges(
        self, now: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        statement = SQL.overdue_challenges(shards)
        return await self._challenges(statement, now, *sql.shard_params(shards))

    async def unshown_challenges(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        statement = SQL.unshown_challenges(shards)
        return await self._challenges(statement, before, *sql.shard_params(shards))

    # -- stats ---------------------------------------------------------------------------

    async def player_stats(
        self, guild_id: int, user_id: int, *, size: int = DEFAULT_SIZE
    ) -> PlayerStats:
        player = (guild_id, user_id, size)
        # The records and the rating from the same moment, not either side of a game's end.
        async with self._snapshot() as db:
            records = await db.fetch(SQL.records, *player)
            rating = await db.fetchrow(SQL.rating, *player)
        return codec.player_stats(*player, records, rating, self._clock.now())

    async def leaderboard(
        self, guild_id: int, limit: int = 10, *, size: int = DEFAULT_SIZE
    ) -> list[Rating]:
        now = self._clock.now()
        rows = await self._pool.fetch(SQL.leaderboard, guild_id, size)
        return results.ranked(map(codec.rating, rows), now)[: max(limit, 0)]

    async def season_games(
        self, guild_id: int, size: int, start: float, end: float
    ) -> list[GameRecord]:
        rows = await self._pool.fetch(SQL.season_games, guild_id, size, start, end)
        return [codec.rated_game(row) for row in rows]

    async def last_rated_game_before(self, guild_id: int, size: int, before: float) -> float | None:
        found = await self._pool.fetchval(SQL.last_rated_game_before, guild_id, size, before)
        return None if found is None else float(found)

    async def unannounced_guilds(
        self, season: str, ended_at: float, channel_key: str, shards: ShardSlice = EVERY_GUILD
    ) -> list[int]:
        statement = SQL.unannounced_guilds(shards)
        params = (channel_key, ended_at, season, *sql.shard_params(shards))
        return [row["guild_id"] for row in await self._pool.fetch(statement, *params)]

    async def claim_season(self, guild_id: int, season: str, now: float) -> bool:
        claimed = await self._pool.fetchval(SQL.claim_season, guild_id, season, now)
        return claimed is not None

    async def release_season(self, guild_id: int, season: str) -> None:
        await self._pool.execute(SQL.release_season, guild_id, season)

    async def take_lease(self, name: str, holder: str, now: float, until: float) -> bool:
        taken = await self._pool.fetchval(SQL.take_lease, name, holder, until, now)
        return taken is not None

    async def release_lease(self, name: str, holder: str) -> None:
        await self._pool.execute(SQL.release_lease, name, holder)

    async def note_interactions(self, notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        ids, signed_at = zip(*notes, strict=True) if notes else ((), ())
        rows = await self._pool.fetch(_NOTE_INTERACTIONS, ids, signed_at)
        return frozenset(row["id"] for row in rows)

    async def prune_interactions(self, signed_before: float) -> int:
        status = await self._pool.execute(SQL.prune_interactions, signed_before)
        return int(status.split()[-1])  # asyncpg's command tag: "DELETE <rows>"

    async def suspect_thread(
        self, channel_id: int, now: float, *, name: str | None = None, thread_id: int | None = None
    ) -> None:
        await self._pool.execute(SQL.suspect_thread, channel_id, name, thread_id, now)

    async def has_thread_suspects(self, channel_id: int) -> bool:
        return bool(await self._pool.fetchval(SQL.has_thread_suspects, channel_id))

    async def take_thread_suspects(self, channel_id: int) -> ThreadSuspects:
        return codec.thread_suspects(await self._pool.fetch(SQL.take_thread_suspects, channel_id))

    async def claim_thread(
        self, channel_id: int, thread_id: int, now: float, claimed_before: float
    ) -> bool:
        claimed = await self._pool.fetchval(
            SQL.claim_thread, thread_id, channel_id, now, claimed_before
        )
        return claimed is not None

    async def release_thread(self, thread_id: int) -> None:
        await self._pool.execute(SQL.release_thread, thread_id)

    async def claimed_threads(self, channel_id: int, claimed_since: float) -> frozenset[int]:
        rows = await self._pool.fetch(SQL.claimed_threads, channel_id, claimed_since)
        return frozenset(row["thread_id"] for row in rows)

    async def prune_threads(self, suspected_before: float, claimed_before: float) -> int:
        async with self._pool.acquire() as db, db.transaction():
            suspects = await db.execute(SQL.prune_thread_suspects, suspected_before)
            claims = await db.execute(SQL.prune_thread_claims, claimed_before)
        # asyncpg's command tags: "DELETE <rows>"
        return int(suspects.split()[-1]) + int(claims.split()[-1])

    async def live_games_of(self, guild_id: int, user_id: int) -> int:
        return int(await self._pool.fetchval(SQL.live_games_of, guild_id, user_id))

    # -- servers' settings -----------------------------------------------------------------

    async def guild_settings(self, guild_id: int) -> list[StoredSetting]:
        rows = await self._pool.fetch(SQL.guild_settings, guild_id)
        return [codec.guild_setting(row) for row in rows]

    async def change_guild_setting(self, guild_id: int, setting: StoredSetting) -> None:
        await self._pool.execute(
            SQL.change_guild_setting, *codec.guild_setting_values(guild_id, setting)
        )

    # -- channels the bot is not in --------------------------------------------------------

    async def save_reply_route(self, route: ReplyRoute) -> None:
        await self._pool.execute(SQL.save_reply_route, *codec.reply_route_values(route))

    async def reply_route(self, channel_id: int) -> ReplyRoute | None:
        row = await self._pool.fetchrow(SQL.reply_route, channel_id)
        return None if row is None else codec.reply_route(row)

    async def forget_reply_route(self, channel_id: int) -> None:
        await self._pool.execute(SQL.forget_reply_route, channel_id)

    async def set_unseen_game(self, channel_id: int, game_id: int | None) -> None:
        await self._pool.execute(SQL.set_unseen_game, game_id, channel_id)

    async def take_unseen_game(self, channel_id: int, game_id: int) -> bool:
        return await self._pool.fetchval(SQL.take_unseen_game, channel_id, game_id) is not None

    # -- members' data -------------------------------------------------------------------

    async def member_data(self, user_id: int) -> MemberData:
        async with self._snapshot() as db:
            records = await db.fetch(SQL.member_records, user_id)
            ratings = await db.fetch(SQL.member_ratings, user_id)
            games = await db.fetch(SQL.member_games, user_id, user_id)
            challenges = await db.fetchval(SQL.member_challenges, user_id, user_id)
            names = await db.fetch(SQL.member_names, *(user_id,) * 4)
            practice = await db.fetchrow(SQL.member_practice, user_id, user_id)
            assert practice is not None  # a SELECT of two counts is one row
            patterns = codec.naming_patterns(user_id)
            tournaments = await db.fetchval(SQL.member_tournaments, *patterns)
            settings = await db.fetchval(SQL.member_settings, user_id)
        counts = codec.MemberCounts(int(challenges), practice, int(tournaments), int(settings))
        return codec.member_data(user_id, records, ratings, games, names, counts, self._clock.now())

    async def active_games_of(self, user_id: int) -> list[GameRecord]:
        return await self._games(SQL.active_games_of, user_id, user_id)

    async def forget_member(self, user_id: int, now: float) -> Forgotten:
        async with self._deleting() as db:
            # The counter's row stays locked until the commit: a second forgetting waits
            # here, before it touches any game, so two never lock the same games in turn.
            placeholder = -int(await db.fetchval(SQL.next_placeholder))
            anonymised = (placeholder, FORGOTTEN_NAME, user_id)
            games = challenges = stats_rows = 0
            for step in SQL.anonymise_games:
                games += len(await db.fetch(step, *anonymised))
            for step in SQL.anonymise_challenges:
                challenges += len(await db.fetch(step, *anonymised))
            settings = len(await db.fetch(SQL.anonymise_settings, placeholder, user_id))
            ended = await db.fetch(SQL.end_games_of, now, placeholder, placeholder)
            closed = await db.fetch(SQL.close_challenges_of, *(placeholder,) * 3)
            for step in SQL.delete_member_stats:
                stats_rows += len(await db.fetch(step, user_id))
            practice_rows = 0
            for step in SQL.delete_member_practice:
                practice_rows += len(await db.fetch(step, user_id))
        return codec.forgotten(
            placeholder,
            ended,
            closed,
            games=games,
            challenges=challenges,
            stats_rows=stats_rows,
            practice_rows=practice_rows,
            settings=settings,
        )

    async def erase_guild(self, guild_id: int) -> GuildErased:
        async with self._deleting() as db:
            live = [codec.game(row) for row in await db.fetch(SQL.guild_live_games, guild_id)]
            pending = await db.fetch(SQL.guild_pending_challenges, guild_id)
            going = [
                codec.tournament(row) for row in await db.fetch(SQL.live_tournaments, guild_id)
            ]
            links, whole = SQL.delete_guild_tournaments
            await db.fetch(links, guild_id)
            tournaments = len(await db.fetch(whole, guild_id))
            await db.execute(SQL.free_guild_channels, guild_id, guild_id)
            await db.execute(SQL.drop_guild_routes, guild_id, guild_id)
            challenges = len(await db.fetch(SQL.delete_guild_challenges, guild_id))
            games = len(await db.fetch(SQL.delete_guild_games, guild_id))
            stats_rows = 0
            for step in SQL.delete_guild_stats:
                stats_rows += len(await db.fetch(step, guild_id))
            drills = len(await db.fetch(SQL.delete_guild_drills, guild_id))
            await db.execute(SQL.unlink_guild_puzzles, guild_id)
            await db.execute(SQL.delete_guild_seasons, guild_id)
        return GuildErased(
            tuple(live),
            tuple(codec.challenge(row) for row in pending),
            games,
            challenges,
            stats_rows,
            drills,
            tournaments=tournaments,
            live_tournaments=tuple(going),
        )

    async def wipe_deleted(self, *, rewritten: bool = False) -> bool:
        # Nothing the bot can do: dead row versions stay in the table files until VACUUM
        # lets their space be reused, and in pg_wal until it is recycled (docs/operating.md's
        # "What deletion means on disk" says what an operator can do).
        return True

    async def prune_finished(
        self, finished_before: float, limit: int, shards: ShardSlice = EVERY_GUILD
    ) -> Pruned:
        in_shards = sql.shard_params(shards)
        games: list[int] = []
        challenges = 0
        async with self.transaction() as db:
            batch = await db.fetch(SQL.prunable_games(shards), finished_before, *in_shards, limit)
            if batch:
                last = (batch[-1]["updated_at"], batch[-1]["id"], *in_shards)
                rematches, unseen, started_by, deleted = SQL.prune_batch(shards)
                await db.execute(rematches, *last)
                await db.execute(unseen, *last)
                challenges = len(await db.fetch(started_by, *last))
                games = [row["id"] for row in await db.fetch(deleted, *last)]
                await db.execute(SQL.note_pruned, str(max(games)))
            old = await db.fetch(SQL.old_challenges(shards), finished_before, *in_shards, limit)
        return Pruned(tuple(sorted(games)), challenges + len(old))

    # -- puzzles and drills ----------------------------------------------------------------

    async def record_puzzle(self, attempt: PuzzleAttempt) -> tuple[PuzzleResult, bool]:
        async with self.transaction() as db:
            row = await db.fetchrow(SQL.record_puzzle, *codec.puzzle_attempt_values(attempt))
            counted = row is not None
            if row is None:  # solved already, or counted since: the row stays as it was
                row = await db.fetchrow(SQL.puzzle_result, attempt.user_id, attempt.day.isoformat())
            assert row is not None  # inserted, updated, or there already
        return codec.puzzle_result(row), counted

    async def puzzle_result(self, user_id: int, day: datetime.date) -> PuzzleResult | None:
        row = await self._pool.fetchrow(SQL.puzzle_result, user_id, day.isoformat())
        return None if row is None else codec.puzzle_result(row)

    async def puzzle_results(self, user_id: int) -> list[PuzzleResult]:
        rows = await self._pool.fetch(SQL.puzzle_results, user_id)
        return [codec.puzzle_result(row) for row in rows]

    async def puzzle_solvers(self, guild_id: int, day: datetime.date) -> list[PuzzleResult]:
        rows = await self._pool.fetch(SQL.puzzle_solvers, guild_id, day.isoformat())
        return [codec.puzzle_result(row) for row in rows]

    async def add_drills(self, drills: Sequence[NewDrill]) -> list[DrillRecord]:
        stored = []
        async with self.transaction() as db:
            for new in drills:
                await db.execute(SQL.add_drill, *codec.new_drill_values(new))
                row = await db.fetchrow(SQL.drill_at, new.user_id, new.position)
                assert row is not None  # inserted, or there already
                stored.append(codec.drill(row))
        return stored

    async def get_drill(self, drill_id: int) -> DrillRecord | None:
        row = await self._pool.fetchrow(SQL.drill, drill_id)
        return None if row is None else codec.drill(row)

    async def drill_queue(self, user_id: int, now: float) -> DrillQueue:
        async with self._snapshot() as db:
            next_row = await db.fetchrow(SQL.next_drill, user_id)
            counts = await db.fetchrow(SQL.drill_counts, now, now, user_id)
            assert counts is not None  # an aggregate is one row
        return codec.drill_queue(next_row, counts)

    async def answer_drill(
        self,
        drill_id: int,
        answers: int,
        right_in_row: int,
        due_at: float,
        learned_at: float | None,
    ) -> DrillRecord | None:
        row = await self._pool.fetchrow(
            SQL.answer_drill, right_in_row, due_at, learned_at, drill_id, answers - 1
        )
        return None if row is None else codec.drill(row)

    # -- tournaments ---------------------------------------------------------------------

    async def create_tournament(self, tournament: NewTournament) -> TournamentRecord:
        try:
            row = await self._pool.fetchrow(
                SQL.insert_tournament, *codec.new_tournament_values(tournament)
            )
        except asyncpg.UniqueViolationError as error:
            here = f"channel {tournament.channel_id} hosts a live tournament"
            raise TournamentHereError(here) from error
        assert row is not None  # RETURNING an inserted row
        return codec.tournament(row)

    async def get_tournament(self, tournament_id: int) -> TournamentRecord | None:
        if not codec.is_row_id(tournament_id):
            return None
        async with self._snapshot() as db:
            row = await db.fetchrow(SQL.tournament, tournament_id)
            games = await db.fetch(SQL.tournament_games, tournament_id)
        return None if row is None else codec.tournament(row, games)

    async def live_tournaments(self, guild_id: int) -> list[TournamentRecord]:
        async with self._snapshot() as db:
            rows = await db.fetch(SQL.live_tournaments, guild_id)
            return [
                codec.tournament(row, await db.fetch(SQL.tournament_games, row["id"]))
                for row in rows
            ]

    async def save_tournament(
        self,
        tournament: TournamentRecord,
        *,
        status: TournamentStatus,
        due_at: float | None,
        state: str,
        now: float,
    ) -> TournamentRecord | None:
        async with self.transaction() as db:
            row = await db.fetchrow(
                SQL.save_tournament,
                status.value,
                due_at,
                state,
                now,
                tournament.id,
                tournament.version,
            )
            if row is None:
                return None
            games = await db.fetch(SQL.tournament_games, tournament.id)
        return codec.tournament(row, games)

    async def start_tournament_game(
        self, tournament_id: int, round_number: int, board: int, game: NewGame
    ) -> GameRecord | None:
        try:
            async with self.transaction() as db:
                if await db.fetchrow(SQL.tournament_table_game, tournament_id, round_number, board):
                    return None
                stored = await _insert_game(db, game)
                await db.execute(
                    SQL.link_tournament_game, tournament_id, round_number, board, stored.id
                )
        except asyncpg.UniqueViolationError as error:
            # Another process stored this table's game in the meantime: the table's key
            # refused this one, or, first, the thread (the table's own) being taken.
            if error.constraint_name == TOURNAMENT_TABLE_KEY:
                return None
            table = (tournament_id, round_number, board)
            if error.constraint_name == OCCUPIED and await self._pool.fetchrow(
                SQL.tournament_table_game, *table
            ):
                return None
            _raise_refusal(error, game.channel_id, game.rematch_of)
            raise
        return stored

    async def tournament_of_thread(self, channel_id: int) -> int | None:
        row = await self._pool.fetchrow(SQL.tournament_of_thread, channel_id)
        return None if row is None else int(row["tournament_id"])

    async def latest_tournament_in_channel(self, channel_id: int) -> int | None:
        found: int | None = await self._pool.fetchval(SQL.latest_tournament_in_channel, channel_id)
        return found

    async def tournaments_of_member(self, user_id: int) -> list[int]:
        rows = await self._pool.fetch(SQL.tournaments_naming, *codec.naming_patterns(user_id))
        return [row["id"] for row in rows]

    async def due_tournaments(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[int]:
        rows = await self._pool.fetch(SQL.due_tournaments(shards), now, *sql.shard_params(shards))
        return [row["id"] for row in rows]

    # -- settings ------------------------------------------------------------------------

    async def get_setting(self, key: str) -> str | None:
        value = await self._pool.fetchval(SQL.setting, key)
        return None if value is None else str(value)

    async def set_setting(self, key: str, value: str) -> None:
        await self._pool.execute(SQL.set_setting, key, value)

    # -- health and metrics --------------------------------------------------------------

    async def ping(self) -> None:
        await self._pool.fetchval(SQL.ping)

    async def live_games(self) -> int:
        return int(await self._pool.fetchval(SQL.live_games))


if TYPE_CHECKING:
    # mypy proves the class satisfies the contract here, not first at the bot's call site.
    _conforms: type[Storage] = PostgresStorage


def _outages_told(operation: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """``operation``, its outages (:data:`OUTAGES`) raised as
    :class:`DatabaseUnavailableError`: with nothing written when the connection was never
    made, else (a statement sent, its answer lost) not known."""

    @functools.wraps(operation)
    async def told(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await operation(*args, **kwargs)
        except OUTAGES as error:
            never_connected = isinstance(error, NEVER_CONNECTED)
            raise DatabaseUnavailableError(
                _one_line(error), nothing_written=never_connected
            ) from error

    return told


# Every operation of the contract, so that the bot sees one kind of outage from either engine
# (the SQLite engine tells its own in SqliteStorage._run).
for _name, _member in vars(Storage).items():
    if inspect.iscoroutinefunction(_member) and _name != "close":
        setattr(PostgresStorage, _name, _outages_told(getattr(PostgresStorage, _name)))


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def _raise_refusal(
    error: asyncpg.UniqueViolationError, channel_id: int, rematch_of: int | None
) -> None:
    """Raise the storage's own error for a failed insert, told by the constraint that
    failed (for any other, the caller re-raises it as it is).

    A second rematch of a game hears "already rematched", not "busy", even in the channel
    the first one occupies: the game's row (and its rematch key) goes in before the
    trigger claims the channel, so its key is the one that fails.
    """
    if error.constraint_name == REMATCHED:
        raise AlreadyRematchedError(f"game {rematch_of} was already rematched") from error
    if error.constraint_name == OCCUPIED:
        busy = f"channel {channel_id} has a live game or a pending challenge"
        raise ChannelBusyError(busy) from error


def member_lock_key(guild_id: int, user_id: int) -> int:
    """The advisory lock key of a member in a guild: 64 bits of a hash of both ids (two
    members sharing a key would only wait for each other)."""
    digest = hashlib.blake2b(f"tttbot:{guild_id}:{user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def _lock_members(db: Connection, game: NewGame) -> None:
    """Take the transaction's advisory locks on ``game``'s members in its guild, in ascending
    order of key: a create for any of them, in any process, waits here until this one ends."""
    for key in sorted({member_lock_key(game.guild_id, user_id) for user_id in game.human_ids}):
        await db.execute("SELECT pg_advisory_xact_lock($1)", key)


async def _count_live_games(db: Connection, game: NewGame, live_limit: int) -> None:
    """Raise :class:`LiveGamesLimitError` if one of ``game``'s members, whose locks this
    transaction holds, is already in ``live_limit`` live games in its guild. Each statement
    here reads what was committed before it began, at READ COMMITTED: after the locks."""
    live = {
        user_id: int(await db.fetchval(SQL.live_games_of, game.guild_id, user_id))
        for user_id in game.human_ids
    }
    over = over_the_limit(live, live_limit)
    if over:
        raise LiveGamesLimitError(game.guild_id, over, live_limit)


async def _check_live_games(db: Connection, game: NewGame, live_limit: int) -> None:
    """Lock ``game``'s members, then count their live games (see :func:`_count_live_games`)."""
    await _lock_members(db, game)
    await _count_live_games(db, game, live_limit)


async def _insert_game(db: Connection | asyncpg.Pool, game: NewGame) -> GameRecord:
    row = await db.fetchrow(SQL.insert_game, *codec.new_game_values(game))
    assert row is not None
    return codec.game(row)


async def _replay_ratings(db: Connection) -> None:
    """Migration 0011's step: every rating as replaying the stored rated games gives it."""
    found = await db.fetch(SQL.rated_games_in_order, timeout=MIGRATION_TIMEOUT_SECONDS)
    rows = codec.replayed_rows(results.replay(codec.rated_game(row) for row in found))
    await db.executemany(SQL.replayed_rating, rows, timeout=MIGRATION_TIMEOUT_SECONDS)


async def _write_tally(db: Connection, game: GameRecord) -> None:
    """Add what the just-finished ``game`` counts for (decided by :mod:`bot.results`)."""
    players = sorted(results.rated_players(game))
    standings: dict[int, results.Standing] = {}
    if players:
        # The new ratings are computed from the current ones, so those rows are locked before
        # they are read: another game finishing for the same player waits here instead of
        # computing from the same old rating (a lost update). A player without a row gets one
        # first (at the initial rating, with no game: codec.current_ratings reads it as no
        # rating, and the upsert below overwrites it in this same transaction) so that there
        # is a row to lock; ids in ascending order, so that two games locking the same two
        # players cannot each hold one and wait for the other.
        await db.executemany(
            _RATING_PLACEHOLDER,
            [(game.guild_id, user_id, game.size, results.INITIAL_RATING) for user_id in players],
        )
        rows = await db.fetch(_LOCK_RATINGS, game.guild_id, game.size, *players)
        standings = codec.current_ratings(rows)
    counted = results.tally(game, standings)
    await db.executemany(SQL.add_record, codec.record_rows(counted))
    await db.executemany(SQL.rate, codec.rating_rows(counted))


_RATING_PLACEHOLDER = (
    "INSERT INTO ratings (guild_id, user_id, size, rating) VALUES ($1, $2, $3, $4)"
    " ON CONFLICT (guild_id, user_id, size) DO NOTHING"
)
_LOCK_RATINGS = sql.numbered(f"{sql.QMARK.ratings_of} ORDER BY user_id FOR UPDATE")
# The endpoint's notes of a pass of the event loop, one round trip: the ids inserted now.
_NOTE_INTERACTIONS = sql.numbered(
    "INSERT INTO interactions_seen (id, signed_at)"
    " SELECT * FROM unnest(?::BIGINT[], ?::DOUBLE PRECISION[])"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)
# A finish that rates nobody, its records added by the same statement if the save matched:
# the save's values, then the records' seven columns as arrays (codec.record_rows, unzipped).
_SAVE_UNRATED_FINISH = sql.numbered(
    f"WITH saved AS ({sql.SAVE_GAME}), counted AS ("
    + sql.add_records(
        "SELECT * FROM unnest(?::BIGINT[], ?::BIGINT[], ?::INTEGER[], ?::TEXT[],"
        " ?::INTEGER[], ?::INTEGER[], ?::INTEGER[]) WHERE EXISTS (SELECT FROM saved)"
    )
    + f") SELECT {codec.GAME_COLUMNS} FROM saved"
)


def _replace_message(table: str, *, as_of: bool = False) -> str:
    """A row's new message ($1, of row $2), returning the one it replaces, one round trip:
    the row is locked as it is read, so of two replacing it at once, the second reads the
    first's. (Read in the update's FROM, before it: a subquery of RETURNING would run after
    the update, and FOR UPDATE skips a row its own statement changed.) ``as_of``: unless
    the one it had is newer than $3 (a greater id); the one it had is returned either way."""
    if not as_of:
        return (
            f"WITH before AS (SELECT message_id FROM {table} WHERE id = $2 FOR UPDATE)"
            f" UPDATE {table} SET message_id = $1 FROM before WHERE {table}.id = $2"
            " RETURNING before.message_id"
        )
    # The update is a statement of its own in the WITH, run whether or not it changes the
    # row, so that the one it had is returned even when it stays.
    return (
        f"WITH before AS (SELECT message_id FROM {table} WHERE id = $2 FOR UPDATE),"
        f" replaced AS (UPDATE {table} SET message_id = $1 FROM before WHERE {table}.id = $2"
        " AND (before.message_id IS NULL OR before.message_id <= $3))"
        " SELECT message_id FROM before"
    )


_REPLACE_GAME_MESSAGE = _replace_message("games")
_REPLACE_GAME_MESSAGE_AS_OF = _replace_message("games", as_of=True)
# A challenge's messages are all posted: of two recorded out of order, the newer stays.
_REPLACE_CHALLENGE_MESSAGE = _replace_message("challenges", as_of=True)
