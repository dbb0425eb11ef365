"""The PostgreSQL implementation of :class:`bot.storage.base.Storage`, on asyncpg.

Several bot processes may share one database, so nothing here relies on being alone:

- Writers are not serialised as SQLite's ``BEGIN IMMEDIATE`` serialises them. Transactions run
  at READ COMMITTED, and each race is decided by the row or key it is about: a move is an
  ``UPDATE ... WHERE version = $n`` (a compare-and-set: a second writer waits for the first's
  row lock, re-reads the row, and matches nothing), a channel's one occupant is the primary key
  of ``channel_occupants`` (migration 0002), and a rematch is a unique key.
- Where a transaction reads a value to compute what it writes (the Elo ratings of a finished
  game), it locks those rows first (``SELECT ... FOR UPDATE``), so that two games finishing at
  once for one player both count from the rating the other left.
- Migrations are applied under a transaction-scoped advisory lock, so that processes starting
  together apply each one once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from bot import results
from bot.clock import Clock
from bot.config import DEFAULT_POOL_SIZE
from bot.storage import codec
from bot.storage.base import (
    EVERY_GUILD,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    GameRecord,
    GameStatus,
    NewChallenge,
    NewGame,
    PlayerStats,
    Rating,
    Record,
    ReplyRoute,
    SchemaTooNewError,
    ShardSlice,
    Storage,
)
from bot.storage.migrations import migration_files
from game import DEFAULT_SIZE

log = logging.getLogger(__name__)

DIALECT = "postgresql"
# How long to wait for the server to answer a new connection: an unreachable host is reported
# within this, rather than after the driver's default minute.
CONNECT_TIMEOUT_SECONDS = 10.0
# pg_advisory_xact_lock's key for "applying migrations": any constant that no other
# application sharing the database is likely to pick (b"tttbot:m" as a number).
MIGRATION_LOCK = 0x7474_7462_6F74_3A6D

# The constraints whose violation means "the channel is taken" and "that game was rematched".
OCCUPIED = "channel_occupants_one_per_channel"
REMATCHED = "games_rematched_once"


Connection = asyncpg.Connection | PoolConnectionProxy

# That a row's guild is on the shards whose count and ids are the parameters after the first.
_IN_SHARDS = "((guild_id >> 22) % $2) = ANY($3::bigint[])"


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
        cls, url: str, clock: Clock, pool_size: int = DEFAULT_POOL_SIZE
    ) -> PostgresStorage:
        """Connect to the database ``url`` names with a pool of up to ``pool_size``
        connections and bring its schema up to date; ``clock`` dates the migrations it
        applies. Raises asyncpg's errors (and ``OSError``) when it cannot connect."""
        pool = await asyncpg.create_pool(
            url,
            # One connection up front proves the URL works; more open as handlers need them.
            min_size=1,
            max_size=pool_size,
            timeout=CONNECT_TIMEOUT_SECONDS,
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
    async def _snapshot(self) -> AsyncIterator[Connection]:
        """Reads that must see one moment: at READ COMMITTED each statement would see its own."""
        async with (
            self._pool.acquire() as db,
            db.transaction(isolation="repeatable_read", readonly=True),
        ):
            yield db

    async def _games(self, where: str, *params: Any) -> list[GameRecord]:
        rows = await self._pool.fetch(
            f"SELECT {codec.GAME_COLUMNS} FROM games WHERE {where}", *params
        )
        return [codec.game(row) for row in rows]

    async def _challenges(self, where: str, *params: Any) -> list[ChallengeRecord]:
        sql = f"SELECT {codec.CHALLENGE_COLUMNS} FROM challenges WHERE {where}"
        return [codec.challenge(row) for row in await self._pool.fetch(sql, *params)]

    async def _migrate(self) -> None:
        migrations = migration_files(DIALECT)
        known = max(version for version, _ in migrations)
        async with self.transaction() as db:
            # Held until this transaction ends: a second process starting now waits here, then
            # finds every migration applied. Taken before anything is read or created, since
            # even CREATE TABLE IF NOT EXISTS fails when two sessions run it at once.
            await db.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            if await db.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL"):
                newest = await db.fetchval("SELECT MAX(version) FROM schema_migrations")
                # Before anything is written: a newer bot's database must stay as it was.
                if newest is not None and newest > known:
                    raise SchemaTooNewError(
                        f"its schema is version {newest}, newer than this bot's {known}: a "
                        "newer tttbot wrote it; run that version (the database was left "
                        "unchanged)"
                    )
            else:
                await db.execute(
                    "CREATE TABLE schema_migrations"
                    " (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)"
                )
            applied = {
                row["version"] for row in await db.fetch("SELECT version FROM schema_migrations")
            }
            for version, sql in migrations:
                if version in applied:
                    continue
                # Without arguments, asyncpg sends the whole script in one simple query, so
                # PL/pgSQL bodies with their semicolons need no splitting.
                await db.execute(sql)
                await db.execute(
                    "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                    version,
                    self._clock.now(),
                )
                log.info("Applied PostgreSQL migration %04d", version)

    async def schema_versions(self) -> dict[int, float]:
        """Applied migration versions and when each was applied (for diagnostics and tests)."""
        rows = await self._pool.fetch("SELECT version, applied_at FROM schema_migrations")
        return {row["version"]: row["applied_at"] for row in rows}

    # -- games ---------------------------------------------------------------------------

    async def create_game(self, game: NewGame) -> GameRecord:
        try:
            # One statement, atomic on its own: no BEGIN and COMMIT round trips around it.
            return await _insert_game(self._pool, game)
        except asyncpg.UniqueViolationError as error:
            _raise_refusal(error, game.channel_id, game.rematch_of)
            raise

    async def get_game(self, game_id: int) -> GameRecord | None:
        if not codec.is_row_id(game_id):
            return None
        return codec.first(await self._games("id = $1", game_id))

    async def live_game_in_channel(self, channel_id: int) -> GameRecord | None:
        return codec.first(await self._games("channel_id = $1 AND status = 'active'", channel_id))

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
        # RETURNING reads back the stored row rather than echoing the argument: message_id
        # may have moved on since the caller read the game, and stats must use the stored
        # players.
        row = await db.fetchrow(_SAVE_GAME, *codec.saved_game_values(game))
        return None if row is None else codec.game(row)

    async def _save_unrated_finish(self, game: GameRecord) -> GameRecord | None:
        """The last move of a game that rates nobody (against the bot, say): its stats read
        nothing, so they are added by the save's own statement, one round trip, and only if
        the compare-and-set matched. Tallied from ``game`` rather than the stored row: a
        matching version means the same players, which nothing changes after creation."""
        rows = _record_rows(results.tally(game, {}))
        columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[]] * 7
        row = await self._pool.fetchrow(
            f"WITH saved AS ({_SAVE_GAME}), counted AS ("
            " INSERT INTO player_stats (guild_id, user_id, size, opponent, wins, losses, draws)"
            " SELECT * FROM unnest($10::BIGINT[], $11::BIGINT[], $12::INTEGER[], $13::TEXT[],"
            " $14::INTEGER[], $15::INTEGER[], $16::INTEGER[])"
            " WHERE EXISTS (SELECT FROM saved)"
            f" ON CONFLICT (guild_id, user_id, size, opponent) DO UPDATE SET {_ADD_SCORE}"
            f") SELECT {codec.GAME_COLUMNS} FROM saved",
            *codec.saved_game_values(game),
            *columns,
        )
        return None if row is None else codec.game(row)

    async def set_game_message(self, game_id: int, message_id: int) -> None:
        await self._pool.execute(
            "UPDATE games SET message_id = $1 WHERE id = $2", message_id, game_id
        )

    async def finished_game_in_channel(
        self, channel_id: int, game_id: int | None = None
    ) -> GameRecord | None:
        if game_id is None:
            return codec.first(
                await self._games(
                    "channel_id = $1 AND status = 'finished' ORDER BY id DESC LIMIT 1", channel_id
                )
            )
        if not codec.is_row_id(game_id):
            return None
        return codec.first(
            await self._games(
                "id = $1 AND channel_id = $2 AND status = 'finished'", game_id, channel_id
            )
        )

    async def overdue_games(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[GameRecord]:
        return await self._games(
            f"status = 'active' AND deadline <= $1 AND {_IN_SHARDS} ORDER BY deadline, id",
            now,
            *_shard_params(shards),
        )

    async def unshown_games(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[GameRecord]:
        return await self._games(
            f"status = 'active' AND message_id IS NULL AND updated_at <= $1 AND {_IN_SHARDS}"
            f" AND {codec.WITHOUT_ROUTE} ORDER BY id",
            before,
            *_shard_params(shards),
        )

    # -- challenges ----------------------------------------------------------------------

    async def create_challenge(self, challenge: NewChallenge) -> ChallengeRecord:
        try:
            row = await self._pool.fetchrow(
                "INSERT INTO challenges (guild_id, channel_id, challenger_id,"
                " challenger_name, opponent_id, opponent_name, status, expires_at,"
                " created_at, size, language)"
                " VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10)"
                f" RETURNING {codec.CHALLENGE_COLUMNS}",
                *codec.new_challenge_values(challenge),
            )
        except asyncpg.UniqueViolationError as error:
            _raise_refusal(error, challenge.channel_id, None)
            raise
        assert row is not None
        return codec.challenge(row)

    async def get_challenge(self, challenge_id: int) -> ChallengeRecord | None:
        if not codec.is_row_id(challenge_id):
            return None
        return codec.first(await self._challenges("id = $1", challenge_id))

    async def pending_challenge_in_channel(self, channel_id: int) -> ChallengeRecord | None:
        return codec.first(
            await self._challenges("channel_id = $1 AND status = 'pending'", channel_id)
        )

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> None:
        await self._pool.execute(
            "UPDATE challenges SET message_id = $1 WHERE id = $2", message_id, challenge_id
        )

    async def close_challenge(
        self, challenge_id: int, status: ChallengeStatus, game: NewGame | None = None
    ) -> tuple[ChallengeRecord, GameRecord | None] | None:
        if status is ChallengeStatus.PENDING:
            raise ValueError("a challenge cannot be closed as pending")
        if game is not None and status is not ChallengeStatus.ACCEPTED:
            raise ValueError(f"only an accepted challenge starts a game, not a {status} one")
        if not codec.is_row_id(challenge_id):
            return None
        try:
            async with self.transaction() as db:
                # Racing closes of one challenge: the second waits for the first's row lock,
                # then finds it no longer pending.
                row = await db.fetchrow(
                    "UPDATE challenges SET status = $1 WHERE id = $2 AND status = 'pending'"
                    f" RETURNING {codec.CHALLENGE_COLUMNS}",
                    status.value,
                    challenge_id,
                )
                if row is None:
                    return None
                if game is None:
                    return codec.challenge(row), None
                # Raising here rolls the status change back too: the challenge stays pending.
                created = await _insert_game(db, game)
                row = await db.fetchrow(
                    "UPDATE challenges SET game_id = $1 WHERE id = $2"
                    f" RETURNING {codec.CHALLENGE_COLUMNS}",
                    created.id,
                    challenge_id,
                )
                assert row is not None
                return codec.challenge(row), created
        except asyncpg.UniqueViolationError as error:
            if game is not None:  # only inserting the game can break a unique key
                _raise_refusal(error, game.channel_id, game.rematch_of)
            raise

    async def overdue_challenges(
        self, now: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        return await self._challenges(
            f"status = 'pending' AND expires_at <= $1 AND {_IN_SHARDS} ORDER BY expires_at, id",
            now,
            *_shard_params(shards),
        )

    async def unshown_challenges(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        return await self._challenges(
            f"status = 'pending' AND message_id IS NULL AND created_at <= $1 AND {_IN_SHARDS}"
            f" AND {codec.WITHOUT_ROUTE} ORDER BY id",
            before,
            *_shard_params(shards),
        )

    # -- stats ---------------------------------------------------------------------------

    async def player_stats(
        self, guild_id: int, user_id: int, *, size: int = DEFAULT_SIZE
    ) -> PlayerStats:
        # The records and the rating from the same moment, not either side of a game's end.
        async with self._snapshot() as db:
            rows = await db.fetch(
                "SELECT opponent, wins, losses, draws FROM player_stats"
                " WHERE guild_id = $1 AND user_id = $2 AND size = $3",
                guild_id,
                user_id,
                size,
            )
            rating = await db.fetchrow(
                "SELECT rating, games FROM ratings"
                " WHERE guild_id = $1 AND user_id = $2 AND size = $3",
                guild_id,
                user_id,
                size,
            )
        return PlayerStats(
            guild_id=guild_id,
            user_id=user_id,
            records={
                row["opponent"]: Record(row["wins"], row["losses"], row["draws"]) for row in rows
            },
            rating=None if rating is None else rating["rating"],
            rated_games=0 if rating is None else rating["games"],
            size=size,
        )

    async def leaderboard(
        self, guild_id: int, limit: int = 10, *, size: int = DEFAULT_SIZE
    ) -> list[Rating]:
        rows = await self._pool.fetch(
            "SELECT user_id, rating, games, wins, losses, draws FROM ratings"
            " WHERE guild_id = $1 AND size = $2"
            " ORDER BY rating DESC, games DESC, user_id ASC LIMIT $3",
            guild_id,
            size,
            max(limit, 0),
        )
        return [
            Rating(
                user_id=row["user_id"],
                rating=row["rating"],
                games=row["games"],
                wins=row["wins"],
                losses=row["losses"],
                draws=row["draws"],
            )
            for row in rows
        ]

    # -- channels the bot is not in --------------------------------------------------------

    async def save_reply_route(self, route: ReplyRoute) -> None:
        await self._pool.execute(
            "INSERT INTO reply_routes (channel_id, token, expires_at, message_id)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT (channel_id) DO UPDATE SET"
            " token = excluded.token, expires_at = excluded.expires_at,"
            " message_id = excluded.message_id",
            *codec.reply_route_values(route),
        )

    async def reply_route(self, channel_id: int) -> ReplyRoute | None:
        row = await self._pool.fetchrow(
            "SELECT * FROM reply_routes WHERE channel_id = $1", channel_id
        )
        return None if row is None else codec.reply_route(row)

    async def set_unseen_game(self, channel_id: int, game_id: int | None) -> None:
        await self._pool.execute(
            "UPDATE reply_routes SET unseen_game_id = $1 WHERE channel_id = $2",
            game_id,
            channel_id,
        )

    # -- settings ------------------------------------------------------------------------

    async def get_setting(self, key: str) -> str | None:
        value = await self._pool.fetchval("SELECT value FROM settings WHERE key = $1", key)
        return None if value is None else str(value)

    async def set_setting(self, key: str, value: str) -> None:
        await self._pool.execute(
            "INSERT INTO settings (key, value) VALUES ($1, $2)"
            " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            key,
            value,
        )


if TYPE_CHECKING:
    # mypy proves the class satisfies the contract here, not first at the bot's call site.
    _conforms: type[Storage] = PostgresStorage


def _shard_params(shards: ShardSlice) -> tuple[int, list[int]]:
    return shards.count, sorted(shards.ids)


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


async def _insert_game(db: Connection | asyncpg.Pool, game: NewGame) -> GameRecord:
    row = await db.fetchrow(
        "INSERT INTO games (guild_id, channel_id, x_id, o_id, x_name, o_name, ai_difficulty,"
        " ai_mark, size, moves, status, deadline, version, created_at, updated_at,"
        " rematch_of, language) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'active',"
        f" $11, 1, $12, $12, $13, $14) RETURNING {codec.GAME_COLUMNS}",
        game.guild_id,
        game.channel_id,
        game.x_id,
        game.o_id,
        game.x_name,
        game.o_name,
        game.ai_difficulty,
        codec.mark_text(game.ai_mark),
        game.size,
        codec.moves_text(game.moves),
        game.deadline,
        game.created_at,
        game.rematch_of,
        game.language,
    )
    assert row is not None
    return codec.game(row)


async def _write_tally(db: Connection, game: GameRecord) -> None:
    """Add what the just-finished ``game`` counts for (decided by :mod:`bot.results`)."""
    players = sorted(results.rated_players(game))
    ratings: dict[int, float] = {}
    if players:
        # The new ratings are computed from the current ones, so those rows are locked before
        # they are read: another game finishing for the same player waits here instead of
        # computing from the same old rating (a lost update). A player without a row gets one
        # first (at the initial rating, overwritten below in this same transaction) so that
        # there is a row to lock; ids in ascending order, so that two games locking the same
        # two players cannot each hold one and wait for the other.
        await db.executemany(
            "INSERT INTO ratings (guild_id, user_id, size, rating) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (guild_id, user_id, size) DO NOTHING",
            [(game.guild_id, user_id, game.size, results.INITIAL_RATING) for user_id in players],
        )
        rows = await db.fetch(
            "SELECT user_id, rating, games FROM ratings"
            " WHERE guild_id = $1 AND size = $2 AND user_id = ANY($3::BIGINT[])"
            " ORDER BY user_id FOR UPDATE",
            game.guild_id,
            game.size,
            players,
        )
        # A row with no game yet is the placeholder above: that player has no rating yet.
        # results.tally rates exactly the rated_players, so every placeholder is overwritten
        # by the UPDATE below before anyone can see it.
        ratings = {row["user_id"]: float(row["rating"]) for row in rows if row["games"] > 0}
    counted = results.tally(game, ratings)
    await db.executemany(
        "INSERT INTO player_stats (guild_id, user_id, size, opponent, wins, losses, draws)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (guild_id, user_id, size, opponent)"
        f" DO UPDATE SET {_ADD_SCORE}",
        _record_rows(counted),
    )
    await db.executemany(
        "UPDATE ratings SET rating = $4, games = games + 1, wins = wins + $5,"
        " losses = losses + $6, draws = draws + $7"
        " WHERE guild_id = $1 AND user_id = $2 AND size = $3",
        [
            (r.guild_id, r.user_id, r.size, r.rating, *codec.increments(r.score))
            for r in sorted(counted.ratings, key=lambda r: r.user_id)
        ],
    )


def _record_rows(counted: results.Tally) -> list[tuple[Any, ...]]:
    """The player_stats rows (guild_id, user_id, size, opponent, wins, losses, draws) a
    finished game adds, in key order."""
    return [
        (r.guild_id, r.user_id, r.size, r.opponent, *codec.increments(r.score))
        for r in sorted(counted.records, key=lambda r: (r.user_id, r.opponent))
    ]


# A move's compare-and-set, $1 to $9 in codec.saved_game_values' order.
_SAVE_GAME = (
    "UPDATE games SET moves = $1, status = $2, winner = $3, end_reason = $4,"
    " deadline = $5, version = version + 1, updated_at = $6, assisted = $7"
    " WHERE id = $8 AND version = $9 AND status = 'active'"
    f" RETURNING {codec.GAME_COLUMNS}"
)

# An upsert's update of a player's wins, losses and draws by the row it tried to insert.
_ADD_SCORE = (
    "wins = player_stats.wins + excluded.wins, losses = player_stats.losses + excluded.losses,"
    " draws = player_stats.draws + excluded.draws"
)
