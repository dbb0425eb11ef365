"""The SQLite implementation of :class:`bot.storage.base.Storage`.

The database lives in one thread of its own: :class:`_Database` runs each storage operation
(a read, or a whole transaction) there synchronously, and :class:`SqliteStorage` hands the
operations over through :class:`bot.storage.thread.StorageThread`, which runs them one after
another, so no coroutine's statement can land inside another's transaction. A thread hop per
operation at most, rather than one per statement; under load, one per batch. The event loop
never waits on SQLite: a write lock held by another process (a second bot, a backup) is
waited for in that thread, up to the busy timeout. The one exception is noting an interaction
(:class:`_NotesAtOnce`), tried first on the event loop's thread on a connection that never
waits, and handed to the thread only when the lock is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import enum
import functools
import itertools
import logging
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from bot import results
from bot.clock import Clock
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
    StorageError,
    StoredSetting,
    ThreadSuspects,
    TournamentHereError,
    TournamentRecord,
    TournamentStatus,
    check_closing,
    over_the_limit,
)
from bot.storage.migrations import DATA_STEPS, DataStep, migration_files
from bot.storage.thread import StorageThread
from game import DEFAULT_SIZE

log = logging.getLogger(__name__)

# Another process (a second bot instance, a backup) may hold the write lock briefly.
BUSY_TIMEOUT_SECONDS = 10.0
# The oldest SQLite library the shared statements run on: RETURNING came in 3.35.
OLDEST_SQLITE = (3, 35, 0)
OPEN_RETRY = 0.05
DIALECT = "sqlite"
SQL = sql.QMARK
# The failures that are the database's, not the bot's: locked past the busy timeout, the
# file gone, the disk failing or full (primary result codes: an extended one's low byte).
OUTAGES = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        sqlite3.SQLITE_IOERR,
        sqlite3.SQLITE_FULL,
        sqlite3.SQLITE_CANTOPEN,
        sqlite3.SQLITE_PROTOCOL,
    }
)

P = ParamSpec("P")
T = TypeVar("T")


class _Database:
    """The synchronous engine: every method runs in the storage thread, and each is a whole
    operation (a read, or one transaction)."""

    def __init__(self, path: str, clock: Clock) -> None:
        # isolation_level=None: the sqlite3 module must not open transactions behind our
        # back; every write goes through _write's BEGIN IMMEDIATE.
        self.db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA foreign_keys = ON")
        # Deleted content is overwritten with zeros, in the pages and in the pages freed: what
        # a member or a server had deleted is not left readable in the file. (Debian's SQLite
        # is built with it on; other builds are not.)
        self.db.execute("PRAGMA secure_delete = ON")
        self.clock = clock
        # Something was deleted that the write-ahead log may still hold (wipe_deleted), and
        # how many times in a row a reader kept it there.
        self.deleted_in_log = False
        self.wipes_blocked = 0

    def close(self) -> None:
        self.db.close()

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work`` in one transaction, committed before this returns. The database's own
        failures raise :class:`DatabaseUnavailableError`, saying whether they came before
        anything was written (the lock not had, ``work`` rolled back) or at the commit."""
        db = self.db
        # IMMEDIATE takes the write lock up front, so a check-then-write inside the
        # transaction cannot be raced by another process either.
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as error:
            raise_outage(error, nothing_written=True)
            raise
        committing = False
        try:
            result = work(db)
            committing = True
            db.execute("COMMIT")
        except BaseException as error:
            # Some errors (a full disk, say) end the transaction inside SQLite already; a
            # second ROLLBACK would then hide the real error. A COMMIT that failed leaves it
            # open: rolled back here, or every later BEGIN would fail.
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise_outage(error, nothing_written=not committing)
            raise
        return result

    def _rows(self, statement: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.db.execute(statement, params).fetchall()

    def _games(self, statement: str, *params: Any) -> list[GameRecord]:
        return [codec.game(row) for row in self._rows(statement, params)]

    def _challenges(self, statement: str, *params: Any) -> list[ChallengeRecord]:
        return [codec.challenge(row) for row in self._rows(statement, params)]

    # -- opening -------------------------------------------------------------------------

    def prepare(self) -> None:
        """Refuse a newer schema before writing anything, switch to WAL, migrate, and check
        the file can be written."""
        if self._rows(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
        ):
            (row,) = self._rows(SQL.newest_migration)
            sql.refuse_newer_schema(row["newest"], DIALECT)
        # WAL lets readers proceed during a write; an in-memory database ignores it.
        (mode,) = self.db.execute("PRAGMA journal_mode = WAL").fetchone()
        # In WAL mode, NORMAL syncs the log at checkpoints rather than at every commit: a
        # committed move survives the bot's crash or kill (the OS has it), and the file is
        # never corrupted; only a power cut or an OS crash can lose the last commits. FULL
        # would fsync each move, stalling every operation queued behind it. Outside WAL (a
        # file system that refuses it), only FULL keeps the file safe.
        synchronous = "NORMAL" if mode == "wal" else "FULL"
        self.db.execute(f"PRAGMA synchronous = {synchronous}")
        for version, script in migration_files(DIALECT):
            if self._write(functools.partial(self._apply, version, script)):
                log.info("Applied SQLite migration %04d", version)
        # A read-only file opens, migrates (when up to date) and reads fine; find out now
        # rather than at the first move. An empty DELETE still takes the write lock.
        self._write(lambda db: db.execute("DELETE FROM settings WHERE 0"))

    def _apply(self, version: int, script: str, db: sqlite3.Connection) -> bool:
        # Inside the write lock, like everything below: two processes may start together.
        db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations"
            " (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
        )
        # Checked inside the write lock: another process may have just applied it.
        if version in {row["version"] for row in db.execute(SQL.migrations)}:
            return False
        for statement in split_statements(script):
            db.execute(statement)
        step = DATA_STEPS.get(version)
        if step is DataStep.REPLAY_RATINGS:
            _replay_ratings(db)
        db.execute(SQL.add_migration, (version, self.clock.now()))
        return True

    def schema_versions(self) -> dict[int, float]:
        return {row["version"]: row["applied_at"] for row in self._rows(SQL.migrations)}

    # -- games ---------------------------------------------------------------------------

    def create_game(self, game: NewGame, live_limit: int | None) -> GameRecord:
        return self._write(lambda db: _insert_game(db, game, live_limit))

    def get_game(self, game_id: int) -> GameRecord | None:
        return codec.first(self._games(SQL.game, game_id))

    def game_with_guild_settings(
        self, game_id: int
    ) -> tuple[GameRecord, list[StoredSetting]] | None:
        return codec.game_with_settings(self._rows(SQL.game_with_guild_settings, (game_id,)))

    def live_game_in_channel(self, channel_id: int) -> GameRecord | None:
        return codec.first(self._games(SQL.live_game, channel_id))

    def save_game(self, game: GameRecord) -> GameRecord | None:
        return self._write(lambda db: _save_game(db, game))

    def set_game_message(self, game_id: int, message_id: int, as_of: int | None) -> int | None:
        return self._write(
            functools.partial(_replace_message, "games", game_id, message_id, as_of=as_of)
        )

    def first_game_message(self, game_id: int, message_id: int) -> bool:
        statement = SQL.first_game_message
        return bool(self._write(lambda db: db.execute(statement, (message_id, game_id)).fetchall()))

    def use_default_marks(self, game_id: int) -> None:
        self._write(lambda db: db.execute(SQL.use_default_marks, (game_id,)))

    def finished_game_in_channel(self, channel_id: int, game_id: int | None) -> GameRecord | None:
        if game_id is None:
            return codec.first(self._games(SQL.last_finished_game, channel_id))
        return codec.first(self._games(SQL.finished_game, game_id, channel_id))

    def overdue_games(self, now: float, shards: ShardSlice) -> list[GameRecord]:
        return self._games(SQL.overdue_games(shards), now, *sql.shard_params(shards))

    def unshown_games(self, before: float, shards: ShardSlice) -> list[GameRecord]:
        return self._games(SQL.unshown_games(shards), before, *sql.shard_params(shards))

    # -- challenges ----------------------------------------------------------------------

    def create_challenge(self, challenge: NewChallenge, cooldown: float | None) -> ChallengeRecord:
        return self._write(lambda db: _insert_challenge(db, challenge, cooldown))

    def get_challenge(self, challenge_id: int) -> ChallengeRecord | None:
        return codec.first(self._challenges(SQL.challenge, challenge_id))

    def pending_challenge_in_channel(self, channel_id: int) -> ChallengeRecord | None:
        return codec.first(self._challenges(SQL.pending_challenge, channel_id))

    def set_challenge_message(self, challenge_id: int, message_id: int) -> int | None:
        return self._write(
            functools.partial(
                _replace_message, "challenges", challenge_id, message_id, as_of=message_id
            )
        )

    def first_challenge_message(self, challenge_id: int, message_id: int) -> bool:
        statement = SQL.first_challenge_message
        values = (message_id, challenge_id)
        return bool(self._write(lambda db: db.execute(statement, values).fetchall()))

    def close_challenge(
        self,
        challenge_id: int,
        status: ChallengeStatus,
        game: NewGame | None,
        live_limit: int | None,
    ) -> tuple[ChallengeRecord, GameRecord | None] | None:
        return self._write(lambda db: _close_challenge(db, challenge_id, status, game, live_limit))

    def overdue_challenges(self, now: float, shards: ShardSlice) -> list[ChallengeRecord]:
        return self._challenges(SQL.overdue_challenges(shards), now, *sql.shard_params(shards))

    def unshown_challenges(self, before: float, shards: ShardSlice) -> list[ChallengeRecord]:
        statement = SQL.unshown_challenges(shards)
        return self._challenges(statement, before, *sql.shard_params(shards))

    # -- stats ---------------------------------------------------------------------------

    def player_stats(self, guild_id: int, user_id: int, size: int) -> PlayerStats:
        player = (guild_id, user_id, size)
        # One read transaction: the records and the rating from the same moment.
        self.db.execute("BEGIN")
        try:
            records = self._rows(SQL.records, player)
            rating = self.db.execute(SQL.rating, player).fetchone()
        finally:
            self.db.execute("COMMIT")
        return codec.player_stats(*player, records, rating, self.clock.now())

    def leaderboard(self, guild_id: int, limit: int, size: int) -> list[Rating]:
        now = self.clock.now()
        rows = self._rows(SQL.leaderboard, (guild_id, size))
        return results.ranked(map(codec.rating, rows), now)[: max(limit, 0)]

    def season_games(self, guild_id: int, size: int, start: float, end: float) -> list[GameRecord]:
        rows = self._rows(SQL.season_games, (guild_id, size, start, end))
        return [codec.rated_game(row) for row in rows]

    def last_rated_game_before(self, guild_id: int, size: int, before: float) -> float | None:
        row = self.db.execute(SQL.last_rated_game_before, (guild_id, size, before)).fetchone()
        return None if row is None else float(row["updated_at"])

    def unannounced_guilds(
        self, season: str, ended_at: float, channel_key: str, shards: ShardSlice
    ) -> list[int]:
        params = (channel_key, ended_at, season, *sql.shard_params(shards))
        return [row["guild_id"] for row in self._rows(SQL.unannounced_guilds(shards), params)]

    def claim_season(self, guild_id: int, season: str, now: float) -> bool:
        claimed = self._write(
            lambda db: db.execute(SQL.claim_season, (guild_id, season, now)).fetchall()
        )
        return bool(claimed)

    def release_season(self, guild_id: int, season: str) -> None:
        self._write(lambda db: db.execute(SQL.release_season, (guild_id, season)))

    def take_lease(self, name: str, holder: str, now: float, until: float) -> bool:
        taken = self._write(
            lambda db: db.execute(SQL.take_lease, (name, holder, until, now)).fetchall()
        )
        return bool(taken)

    def release_lease(self, name: str, holder: str) -> None:
        self._write(lambda db: db.execute(SQL.release_lease, (name, holder)))

    def note_interactions(self, notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        return self._write(functools.partial(_note_interactions, notes))

    def prune_interactions(self, signed_before: float) -> int:
        return self._write(lambda db: db.execute(SQL.prune_interactions, (signed_before,)).rowcount)

    def suspect_thread(
        self, channel_id: int, now: float, name: str | None, thread_id: int | None
    ) -> None:
        self._write(lambda db: db.execute(SQL.suspect_thread, (channel_id, name, thread_id, now)))

    def has_thread_suspects(self, channel_id: int) -> bool:
        row = self.db.execute(SQL.has_thread_suspects, (channel_id,)).fetchone()
        return bool(row["suspected"])

    def take_thread_suspects(self, channel_id: int) -> ThreadSuspects:
        rows = self._write(
            lambda db: db.execute(SQL.take_thread_suspects, (channel_id,)).fetchall()
        )
        return codec.thread_suspects(rows)

    def claim_thread(
        self, channel_id: int, thread_id: int, now: float, claimed_before: float
    ) -> bool:
        claimed = self._write(
            lambda db: db.execute(
                SQL.claim_thread, (thread_id, channel_id, now, claimed_before)
            ).fetchall()
        )
        return bool(claimed)

    def release_thread(self, thread_id: int) -> None:
        self._write(lambda db: db.execute(SQL.release_thread, (thread_id,)))

    def claimed_threads(self, channel_id: int, claimed_since: float) -> frozenset[int]:
        rows = self.db.execute(SQL.claimed_threads, (channel_id, claimed_since)).fetchall()
        return frozenset(row["thread_id"] for row in rows)

    def prune_threads(self, suspected_before: float, claimed_before: float) -> int:
        def prune(db: sqlite3.Connection) -> int:
            suspects = db.execute(SQL.prune_thread_suspects, (suspected_before,)).rowcount
            return suspects + db.execute(SQL.prune_thread_claims, (claimed_before,)).rowcount

        return self._write(prune)

    def live_games_of(self, guild_id: int, user_id: int) -> int:
        return int(self.db.execute(SQL.live_games_of, (guild_id, user_id)).fetchone()["live"])

    # -- servers' settings -----------------------------------------------------------------

    def guild_settings(self, guild_id: int) -> list[StoredSetting]:
        return [codec.guild_setting(row) for row in self._rows(SQL.guild_settings, (guild_id,))]

    def change_guild_setting(self, guild_id: int, setting: StoredSetting) -> None:
        values = codec.guild_setting_values(guild_id, setting)
        self._write(lambda db: db.execute(SQL.change_guild_setting, values))

    # -- channels the bot is not in --------------------------------------------------------

    def save_reply_route(self, route: ReplyRoute) -> None:
        self._write(lambda db: db.execute(SQL.save_reply_route, codec.reply_route_values(route)))

    def reply_route(self, channel_id: int) -> ReplyRoute | None:
        row = self.db.execute(SQL.reply_route, (channel_id,)).fetchone()
        return None if row is None else codec.reply_route(row)

    def forget_reply_route(self, channel_id: int) -> None:
        self._write(lambda db: db.execute(SQL.forget_reply_route, (channel_id,)))

    def set_unseen_game(self, channel_id: int, game_id: int | None) -> None:
        self._write(lambda db: db.execute(SQL.set_unseen_game, (game_id, channel_id)))

    def take_unseen_game(self, channel_id: int, game_id: int) -> bool:
        statement = SQL.take_unseen_game
        return bool(self._write(lambda db: db.execute(statement, (channel_id, game_id)).fetchall()))

    # -- members' data -------------------------------------------------------------------

    def member_data(self, user_id: int) -> MemberData:
        # One read transaction: every table as of the same moment.
        self.db.execute("BEGIN")
        try:
            records = self._rows(SQL.member_records, (user_id,))
            ratings = self._rows(SQL.member_ratings, (user_id,))
            games = self._rows(SQL.member_games, (user_id, user_id))
            (challenges,) = self.db.execute(SQL.member_challenges, (user_id, user_id)).fetchone()
            names = self._rows(SQL.member_names, (user_id,) * 4)
            (practice,) = self._rows(SQL.member_practice, (user_id, user_id))
            patterns = codec.naming_patterns(user_id)
            (tournaments,) = self.db.execute(SQL.member_tournaments, patterns).fetchone()
            (settings,) = self.db.execute(SQL.member_settings, (user_id,)).fetchone()
        finally:
            self.db.execute("COMMIT")
        counts = codec.MemberCounts(challenges, practice, tournaments, settings)
        return codec.member_data(user_id, records, ratings, games, names, counts, self.clock.now())

    def active_games_of(self, user_id: int) -> list[GameRecord]:
        return self._games(SQL.active_games_of, user_id, user_id)

    def forget_member(self, user_id: int, now: float) -> Forgotten:
        forgotten = self._write(lambda db: _forget_member(db, user_id, now))
        self.deleted_in_log = True
        self.wipe_deleted()
        return forgotten

    def erase_guild(self, guild_id: int) -> GuildErased:
        erased = self._write(lambda db: _erase_guild(db, guild_id))
        self.deleted_in_log = True
        self.wipe_deleted()
        return erased

    def wipe_deleted(self, rewritten: bool = False) -> bool:
        """Checkpoint the write-ahead log into the file and truncate it, if it may still hold
        something deleted (or ``rewritten``, see :meth:`Storage.wipe_deleted`): the log keeps
        every page version written since the last checkpoint, rows deleted since included,
        until the last connection closes; and the file keeps the versions written at the last
        checkpoint until the next. Never raises: the deletion it follows was committed,
        whatever happens here.

        A connection of another process reading an older snapshot (a backup, the sqlite3
        shell) keeps the log: the checkpoint does not wait for it (it would hold up every
        operation queued behind it), and the sweeper tries again (:meth:`Storage.wipe_deleted`)."""
        self.deleted_in_log = self.deleted_in_log or rewritten
        if not self.deleted_in_log:
            return True
        db = self.db
        try:
            db.execute("PRAGMA busy_timeout = 0")
            try:
                blocked, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                db.execute(f"PRAGMA busy_timeout = {round(BUSY_TIMEOUT_SECONDS * 1000)}")
        except sqlite3.Error as error:
            blocked, reason = True, f"{error}"
        else:
            reason = "another connection is reading the database (a backup?)"
        if blocked:
            self.wipes_blocked += 1
            if self.wipes_blocked == 1:
                log.warning(
                    "deleted data is still in the SQLite write-ahead log (the -wal file): %s;"
                    " trying again at every sweep",
                    reason,
                )
            return False
        if self.wipes_blocked:
            log.info(
                "deleted data wiped from the SQLite write-ahead log after %d tries",
                self.wipes_blocked + 1,
            )
        self.deleted_in_log, self.wipes_blocked = False, 0
        return True

    def prune_finished(self, finished_before: float, limit: int, shards: ShardSlice) -> Pruned:
        return self._write(lambda db: _prune_finished(db, finished_before, limit, shards))

    # -- puzzles and drills ----------------------------------------------------------------

    def record_puzzle(self, attempt: PuzzleAttempt) -> tuple[PuzzleResult, bool]:
        def record(db: sqlite3.Connection) -> tuple[PuzzleResult, bool]:
            row: sqlite3.Row | None = db.execute(
                SQL.record_puzzle, codec.puzzle_attempt_values(attempt)
            ).fetchone()
            counted = row is not None
            if row is None:  # solved already, or counted since: the row stays as it was
                row = db.execute(
                    SQL.puzzle_result, (attempt.user_id, attempt.day.isoformat())
                ).fetchone()
            assert row is not None  # inserted, updated, or there already
            return codec.puzzle_result(row), counted

        return self._write(record)

    def puzzle_result(self, user_id: int, day: datetime.date) -> PuzzleResult | None:
        row = self.db.execute(SQL.puzzle_result, (user_id, day.isoformat())).fetchone()
        return None if row is None else codec.puzzle_result(row)

    def puzzle_results(self, user_id: int) -> list[PuzzleResult]:
        return [codec.puzzle_result(row) for row in self._rows(SQL.puzzle_results, (user_id,))]

    def puzzle_solvers(self, guild_id: int, day: datetime.date) -> list[PuzzleResult]:
        rows = self._rows(SQL.puzzle_solvers, (guild_id, day.isoformat()))
        return [codec.puzzle_result(row) for row in rows]

    def add_drills(self, drills: Sequence[NewDrill]) -> list[DrillRecord]:
        def add(db: sqlite3.Connection) -> list[DrillRecord]:
            stored = []
            for new in drills:
                db.execute(SQL.add_drill, codec.new_drill_values(new))
                row = db.execute(SQL.drill_at, (new.user_id, new.position)).fetchone()
                stored.append(codec.drill(row))
            return stored

        return self._write(add)

    def get_drill(self, drill_id: int) -> DrillRecord | None:
        row = self.db.execute(SQL.drill, (drill_id,)).fetchone()
        return None if row is None else codec.drill(row)

    def drill_queue(self, user_id: int, now: float) -> DrillQueue:
        self.db.execute("BEGIN")
        try:
            next_row = self.db.execute(SQL.next_drill, (user_id,)).fetchone()
            counts = self.db.execute(SQL.drill_counts, (now, now, user_id)).fetchone()
        finally:
            self.db.execute("COMMIT")
        return codec.drill_queue(next_row, counts)

    def answer_drill(
        self,
        drill_id: int,
        answers: int,
        right_in_row: int,
        due_at: float,
        learned_at: float | None,
    ) -> DrillRecord | None:
        values = (right_in_row, due_at, learned_at, drill_id, answers - 1)
        row = self._write(lambda db: db.execute(SQL.answer_drill, values).fetchone())
        return None if row is None else codec.drill(row)

    # -- tournaments ---------------------------------------------------------------------

    def create_tournament(self, tournament: NewTournament) -> TournamentRecord:
        def insert(db: sqlite3.Connection) -> TournamentRecord:
            try:
                row = db.execute(
                    SQL.insert_tournament, codec.new_tournament_values(tournament)
                ).fetchone()
            except sqlite3.IntegrityError as error:
                here = f"channel {tournament.channel_id} hosts a live tournament"
                raise TournamentHereError(here) from error
            return codec.tournament(row)

        return self._write(insert)

    def get_tournament(self, tournament_id: int) -> TournamentRecord | None:
        self.db.execute("BEGIN")
        try:
            row = self.db.execute(SQL.tournament, (tournament_id,)).fetchone()
            games = self._rows(SQL.tournament_games, (tournament_id,))
        finally:
            self.db.execute("COMMIT")
        return None if row is None else codec.tournament(row, games)

    def live_tournaments(self, guild_id: int) -> list[TournamentRecord]:
        return [
            codec.tournament(row, self._rows(SQL.tournament_games, (row["id"],)))
            for row in self._rows(SQL.live_tournaments, (guild_id,))
        ]

    def save_tournament(
        self,
        tournament: TournamentRecord,
        status: TournamentStatus,
        due_at: float | None,
        state: str,
        now: float,
    ) -> TournamentRecord | None:
        values = (status.value, due_at, state, now, tournament.id, tournament.version)

        def save(db: sqlite3.Connection) -> TournamentRecord | None:
            row = db.execute(SQL.save_tournament, values).fetchone()
            if row is None:
                return None
            games = db.execute(SQL.tournament_games, (tournament.id,)).fetchall()
            return codec.tournament(row, games)

        return self._write(save)

    def start_tournament_game(
        self, tournament_id: int, round_number: int, board: int, game: NewGame
    ) -> GameRecord | None:
        table = (tournament_id, round_number, board)

        def start(db: sqlite3.Connection) -> GameRecord | None:
            # Asked inside the write lock: a table's game is never stored twice.
            if db.execute(SQL.tournament_table_game, table).fetchone() is not None:
                return None
            stored = _insert_game(db, game, None)
            db.execute(SQL.link_tournament_game, (*table, stored.id))
            return stored

        return self._write(start)

    def tournament_of_thread(self, channel_id: int) -> int | None:
        row = self.db.execute(SQL.tournament_of_thread, (channel_id,)).fetchone()
        return None if row is None else int(row["tournament_id"])

    def latest_tournament_in_channel(self, channel_id: int) -> int | None:
        row = self.db.execute(SQL.latest_tournament_in_channel, (channel_id,)).fetchone()
        return None if row is None else int(row["id"])

    def tournaments_of_member(self, user_id: int) -> list[int]:
        rows = self._rows(SQL.tournaments_naming, codec.naming_patterns(user_id))
        return [row["id"] for row in rows]

    def due_tournaments(self, now: float, shards: ShardSlice) -> list[int]:
        statement = SQL.due_tournaments(shards)
        return [row["id"] for row in self._rows(statement, (now, *sql.shard_params(shards)))]

    # -- settings ------------------------------------------------------------------------

    def get_setting(self, key: str) -> str | None:
        row = self.db.execute(SQL.setting, (key,)).fetchone()
        return None if row is None else str(row["value"])

    def set_setting(self, key: str, value: str) -> None:
        self._write(lambda db: db.execute(SQL.set_setting, (key, value)))

    # -- health and metrics --------------------------------------------------------------

    def ping(self) -> None:
        self.db.execute(SQL.ping).fetchone()

    def live_games(self) -> int:
        return int(self.db.execute(SQL.live_games).fetchone()["live"])


class _NotesAtOnce:
    """Interactions noted on the event loop's own thread, on a connection of its own that
    never waits for the write lock. The HTTP endpoint notes every interaction before anything
    acts on it (:mod:`bot.endpoint`), a batch at a time: alone, one insert takes 12 µs of CPU
    here, 64 µs through the storage thread, whose hop costs more than the insert; in place,
    two HTTP workers at saturation spent 0.64-0.72 ms a click with the batches made here,
    0.68-0.86 ms with them made in the storage thread (2026-11-29). Opened at the first
    note, so that a bot that notes none (the gateway's) has no second connection. When the
    lock is taken (by this process's storage thread, or by another worker) or the insert
    fails for any other reason, the batch is left to the storage thread, which waits for the
    lock and reports the database's failures as every operation does.

    Only on a file in WAL mode: a commit there appends to the log without an fsync
    (``synchronous = NORMAL``, as the storage thread's connection), and this connection
    leaves the log's checkpoints to that one (``wal_autocheckpoint = 0``), so that no commit
    here waits on the disk."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    @classmethod
    def open(cls, path: str) -> _NotesAtOnce | None:
        """A connection to the database at ``path``, or None where notes must go through
        the storage thread (a database in memory, which a second connection would not
        share, or a file not in WAL mode)."""
        try:
            db = sqlite3.connect(path, timeout=0, isolation_level=None)
        except sqlite3.Error:
            return None
        try:
            (mode,) = db.execute("PRAGMA journal_mode").fetchone()
            if mode == "wal":
                db.execute("PRAGMA synchronous = NORMAL")
                db.execute("PRAGMA wal_autocheckpoint = 0")
                return cls(db)
        except sqlite3.Error:
            pass
        db.close()
        return None

    def note(self, notes: Sequence[tuple[int, float]]) -> frozenset[int] | None:
        """The ids of ``notes`` noted now, in one transaction (those noted before are not);
        None if that could not be said without waiting."""
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            noted = _note_interactions(notes, db)
            db.execute("COMMIT")
        except BaseException as error:
            # Whatever failed (a value SQLite cannot store raises OverflowError), the write
            # lock is not kept: it would hold every other writer up until the next note.
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                return None
            raise
        return noted

    def close(self) -> None:
        self._db.close()


class _Unopened(enum.Enum):
    UNOPENED = enum.auto()


_UNOPENED = _Unopened.UNOPENED


class SqliteStorage:
    """Games, challenges, stats and settings in one SQLite database.

    Open it with ``await SqliteStorage.open(path, clock)`` (``":memory:"`` for a throwaway one).
    """

    def __init__(self, thread: StorageThread, database: _Database, path: str) -> None:
        self._thread = thread
        self._database = database
        self._closed = False
        self._path = path
        # Made at the first note (on the event loop's thread, where it is used); None once
        # notes must go through the storage thread.
        self._notes_at_once: _NotesAtOnce | _Unopened | None = _UNOPENED

    @classmethod
    async def open(cls, path: str, clock: Clock) -> SqliteStorage:
        """Connect to (or create) the database at ``path`` and bring its schema up to date;
        ``clock`` dates the migrations it applies."""
        thread = StorageThread()
        try:
            database = await thread.run(functools.partial(_Database, path, clock))
        except BaseException:
            thread.shutdown()
            raise
        storage = cls(thread, database, path)
        try:
            await storage._prepare()
        except BaseException:
            await storage.close()
            raise
        return storage

    async def close(self) -> None:
        if self._closed:
            return
        # Operations asked for from now on are refused; those already handed over finish
        # first, queued ahead of the close.
        self._closed = True
        if isinstance(self._notes_at_once, _NotesAtOnce):
            self._notes_at_once.close()
        await self._thread.run(self._database.close)
        self._thread.shutdown()

    async def _run(self, operation: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        if self._closed:
            raise StorageError("the database is closed: the bot is shutting down")
        try:
            return await self._thread.run(functools.partial(operation, *args, **kwargs))
        except sqlite3.Error as error:
            # A write's failures were told apart by _write; this is a read's.
            raise_outage(error, nothing_written=True)
            raise

    async def _prepare(self) -> None:
        """Processes opening one new file at the same moment can be told "database is
        locked" without SQLite's busy timeout helping (switching to WAL takes an exclusive
        lock without waiting; a connection that saw the switch mid-way gets busy at once):
        each step is safe to repeat, so the whole is retried for as long as the busy timeout
        would wait."""
        for attempt in itertools.count():
            try:
                await self._run(self._database.prepare)
                return
            except (sqlite3.OperationalError, DatabaseUnavailableError) as error:
                if "locked" not in str(error) or attempt * OPEN_RETRY >= BUSY_TIMEOUT_SECONDS:
                    raise
                await asyncio.sleep(OPEN_RETRY)

    async def schema_versions(self) -> dict[int, float]:
        """Applied migration versions and when each was applied (for diagnostics and tests)."""
        return await self._run(self._database.schema_versions)

    # -- games ---------------------------------------------------------------------------

    async def create_game(self, game: NewGame, *, live_limit: int | None = None) -> GameRecord:
        return await self._run(self._database.create_game, game, live_limit)

    async def get_game(self, game_id: int) -> GameRecord | None:
        if not codec.is_row_id(game_id):
            return None
        return await self._run(self._database.get_game, game_id)

    async def game_with_guild_settings(
        self, game_id: int
    ) -> tuple[GameRecord, list[StoredSetting]] | None:
        if not codec.is_row_id(game_id):
            return None
        return await self._run(self._database.game_with_guild_settings, game_id)

    async def live_game_in_channel(self, channel_id: int) -> GameRecord | None:
        return await self._run(self._database.live_game_in_channel, channel_id)

    async def save_game(self, game: GameRecord) -> GameRecord | None:
        return await self._run(self._database.save_game, game)

    async def set_game_message(
        self, game_id: int, message_id: int, *, as_of: int | None = None
    ) -> int | None:
        return await self._run(self._database.set_game_message, game_id, message_id, as_of)

    async def first_game_message(self, game_id: int, message_id: int) -> bool:
        return await self._run(self._database.first_game_message, game_id, message_id)

    async def use_default_marks(self, game_id: int) -> None:
        await self._run(self._database.use_default_marks, game_id)

    async def finished_game_in_channel(
        self, channel_id: int, game_id: int | None = None
    ) -> GameRecord | None:
        if game_id is not None and not codec.is_row_id(game_id):
            return None
        return await self._run(self._database.finished_game_in_channel, channel_id, game_id)

    async def overdue_games(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[GameRecord]:
        return await self._run(self._database.overdue_games, now, shards)

    async def unshown_games(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[GameRecord]:
        return await self._run(self._database.unshown_games, before, shards)

    # -- challenges ----------------------------------------------------------------------

    async def create_challenge(
        self, challenge: NewChallenge, *, cooldown: float | None = None
    ) -> ChallengeRecord:
        return await self._run(self._database.create_challenge, challenge, cooldown)

    async def get_challenge(self, challenge_id: int) -> ChallengeRecord | None:
        if not codec.is_row_id(challenge_id):
            return None
        return await self._run(self._database.get_challenge, challenge_id)

    async def pending_challenge_in_channel(self, channel_id: int) -> ChallengeRecord | None:
        return await self._run(self._database.pending_challenge_in_channel, channel_id)

    async def set_challenge_message(self, challenge_id: int, message_id: int) -> int | None:
        return await self._run(self._database.set_challenge_message, challenge_id, message_id)

    async def first_challenge_message(self, challenge_id: int, message_id: int) -> bool:
        return await self._run(self._database.first_challenge_message, challenge_id, message_id)

    async def close_challenge(
        self,
        challenge_id: int,
        status: ChallengeStatus,
        game: NewGame | None = None,
        *,
        live_limit: int | None = None,
    ) -> tuple[ChallengeRecord, GameRecord | None] | None:
        check_closing(status, game)
        return await self._run(
            self._database.close_challenge, challenge_id, status, game, live_limit
        )

    async def overdue_challenges(
        self, now: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        return await self._run(self._database.overdue_challenges, now, shards)

    async def unshown_challenges(
        self, before: float, shards: ShardSlice = EVERY_GUILD
    ) -> list[ChallengeRecord]:
        return await self._run(self._database.unshown_challenges, before, shards)

    # -- stats ---------------------------------------------------------------------------

    async def player_stats(
        self, guild_id: int, user_id: int, *, size: int = DEFAULT_SIZE
    ) -> PlayerStats:
        return await self._run(self._database.player_stats, guild_id, user_id, size)

    async def leaderboard(
        self, guild_id: int, limit: int = 10, *, size: int = DEFAULT_SIZE
    ) -> list[Rating]:
        return await self._run(self._database.leaderboard, guild_id, limit, size)

    async def season_games(
        self, guild_id: int, size: int, start: float, end: float
    ) -> list[GameRecord]:
        return await self._run(self._database.season_games, guild_id, size, start, end)

    async def last_rated_game_before(self, guild_id: int, size: int, before: float) -> float | None:
        return await self._run(self._database.last_rated_game_before, guild_id, size, before)

    async def unannounced_guilds(
        self, season: str, ended_at: float, channel_key: str, shards: ShardSlice = EVERY_GUILD
    ) -> list[int]:
        return await self._run(
            self._database.unannounced_guilds, season, ended_at, channel_key, shards
        )

    async def claim_season(self, guild_id: int, season: str, now: float) -> bool:
        return await self._run(self._database.claim_season, guild_id, season, now)

    async def release_season(self, guild_id: int, season: str) -> None:
        await self._run(self._database.release_season, guild_id, season)

    async def take_lease(self, name: str, holder: str, now: float, until: float) -> bool:
        return await self._run(self._database.take_lease, name, holder, now, until)

    async def release_lease(self, name: str, holder: str) -> None:
        await self._run(self._database.release_lease, name, holder)

    async def note_interactions(self, notes: Sequence[tuple[int, float]]) -> frozenset[int]:
        if self._notes_at_once is _UNOPENED and not self._closed:
            # After open()'s _prepare: the file exists, in WAL mode if it can be.
            self._notes_at_once = _NotesAtOnce.open(self._path)
        if isinstance(self._notes_at_once, _NotesAtOnce) and not self._closed:
            noted = self._notes_at_once.note(notes)
            if noted is not None:
                return noted
        return await self._run(self._database.note_interactions, notes)

    async def prune_interactions(self, signed_before: float) -> int:
        return await self._run(self._database.prune_interactions, signed_before)

    async def suspect_thread(
        self, channel_id: int, now: float, *, name: str | None = None, thread_id: int | None = None
    ) -> None:
        await self._run(self._database.suspect_thread, channel_id, now, name, thread_id)

    async def has_thread_suspects(self, channel_id: int) -> bool:
        return await self._run(self._database.has_thread_suspects, channel_id)

    async def take_thread_suspects(self, channel_id: int) -> ThreadSuspects:
        return await self._run(self._database.take_thread_suspects, channel_id)

    async def claim_thread(
        self, channel_id: int, thread_id: int, now: float, claimed_before: float
    ) -> bool:
        return await self._run(
            self._database.claim_thread, channel_id, thread_id, now, claimed_before
        )

    async def release_thread(self, thread_id: int) -> None:
        await self._run(self._database.release_thread, thread_id)

    async def claimed_threads(self, channel_id: int, claimed_since: float) -> frozenset[int]:
        return await self._run(self._database.claimed_threads, channel_id, claimed_since)

    async def prune_threads(self, suspected_before: float, claimed_before: float) -> int:
        return await self._run(self._database.prune_threads, suspected_before, claimed_before)

    async def live_games_of(self, guild_id: int, user_id: int) -> int:
        return await self._run(self._database.live_games_of, guild_id, user_id)

    # -- servers' settings -----------------------------------------------------------------

    async def guild_settings(self, guild_id: int) -> list[StoredSetting]:
        return await self._run(self._database.guild_settings, guild_id)

    async def change_guild_setting(self, guild_id: int, setting: StoredSetting) -> None:
        await self._run(self._database.change_guild_setting, guild_id, setting)

    # -- channels the bot is not in --------------------------------------------------------

    async def save_reply_route(self, route: ReplyRoute) -> None:
        await self._run(self._database.save_reply_route, route)

    async def reply_route(self, channel_id: int) -> ReplyRoute | None:
        return await self._run(self._database.reply_route, channel_id)

    async def forget_reply_route(self, channel_id: int) -> None:
        await self._run(self._database.forget_reply_route, channel_id)

    async def set_unseen_game(self, channel_id: int, game_id: int | None) -> None:
        await self._run(self._database.set_unseen_game, channel_id, game_id)

    async def take_unseen_game(self, channel_id: int, game_id: int) -> bool:
        return await self._run(self._database.take_unseen_game, channel_id, game_id)

    # -- members' data -------------------------------------------------------------------

    async def member_data(self, user_id: int) -> MemberData:
        return await self._run(self._database.member_data, user_id)

    async def active_games_of(self, user_id: int) -> list[GameRecord]:
        return await self._run(self._database.active_games_of, user_id)

    async def forget_member(self, user_id: int, now: float) -> Forgotten:
        return await self._run(self._database.forget_member, user_id, now)

    async def erase_guild(self, guild_id: int) -> GuildErased:
        return await self._run(self._database.erase_guild, guild_id)

    async def wipe_deleted(self, *, rewritten: bool = False) -> bool:
        if not (rewritten or self._database.deleted_in_log):  # nothing to hand over to the thread
            return True
        return await self._run(self._database.wipe_deleted, rewritten)

    async def prune_finished(
        self, finished_before: float, limit: int, shards: ShardSlice = EVERY_GUILD
    ) -> Pruned:
        return await self._run(self._database.prune_finished, finished_before, limit, shards)

    # -- puzzles and drills ----------------------------------------------------------------

    async def record_puzzle(self, attempt: PuzzleAttempt) -> tuple[PuzzleResult, bool]:
        return await self._run(self._database.record_puzzle, attempt)

    async def puzzle_result(self, user_id: int, day: datetime.date) -> PuzzleResult | None:
        return await self._run(self._database.puzzle_result, user_id, day)

    async def puzzle_results(self, user_id: int) -> list[PuzzleResult]:
        return await self._run(self._database.puzzle_results, user_id)

    async def puzzle_solvers(self, guild_id: int, day: datetime.date) -> list[PuzzleResult]:
        return await self._run(self._database.puzzle_solvers, guild_id, day)

    async def add_drills(self, drills: Sequence[NewDrill]) -> list[DrillRecord]:
        return await self._run(self._database.add_drills, drills)

    async def get_drill(self, drill_id: int) -> DrillRecord | None:
        return await self._run(self._database.get_drill, drill_id)

    async def drill_queue(self, user_id: int, now: float) -> DrillQueue:
        return await self._run(self._database.drill_queue, user_id, now)

    async def answer_drill(
        self,
        drill_id: int,
        answers: int,
        right_in_row: int,
        due_at: float,
        learned_at: float | None,
    ) -> DrillRecord | None:
        return await self._run(
            self._database.answer_drill, drill_id, answers, right_in_row, due_at, learned_at
        )

    # -- tournaments ---------------------------------------------------------------------

    async def create_tournament(self, tournament: NewTournament) -> TournamentRecord:
        return await self._run(self._database.create_tournament, tournament)

    async def get_tournament(self, tournament_id: int) -> TournamentRecord | None:
        if not codec.is_row_id(tournament_id):
            return None
        return await self._run(self._database.get_tournament, tournament_id)

    async def live_tournaments(self, guild_id: int) -> list[TournamentRecord]:
        return await self._run(self._database.live_tournaments, guild_id)

    async def save_tournament(
        self,
        tournament: TournamentRecord,
        *,
        status: TournamentStatus,
        due_at: float | None,
        state: str,
        now: float,
    ) -> TournamentRecord | None:
        return await self._run(
            self._database.save_tournament, tournament, status, due_at, state, now
        )

    async def start_tournament_game(
        self, tournament_id: int, round_number: int, board: int, game: NewGame
    ) -> GameRecord | None:
        return await self._run(
            self._database.start_tournament_game, tournament_id, round_number, board, game
        )

    async def tournament_of_thread(self, channel_id: int) -> int | None:
        return await self._run(self._database.tournament_of_thread, channel_id)

    async def latest_tournament_in_channel(self, channel_id: int) -> int | None:
        return await self._run(self._database.latest_tournament_in_channel, channel_id)

    async def tournaments_of_member(self, user_id: int) -> list[int]:
        return await self._run(self._database.tournaments_of_member, user_id)

    async def due_tournaments(self, now: float, shards: ShardSlice = EVERY_GUILD) -> list[int]:
        return await self._run(self._database.due_tournaments, now, shards)

    # -- settings ------------------------------------------------------------------------

    async def get_setting(self, key: str) -> str | None:
        return await self._run(self._database.get_setting, key)

    async def set_setting(self, key: str, value: str) -> None:
        await self._run(self._database.set_setting, key, value)

    # -- health and metrics --------------------------------------------------------------

    async def ping(self) -> None:
        await self._run(self._database.ping)

    async def live_games(self) -> int:
        return await self._run(self._database.live_games)


if TYPE_CHECKING:
    # mypy proves the class satisfies the contract here, not first at the bot's call site.
    _conforms: type[Storage] = SqliteStorage


def split_statements(script: str) -> Iterable[str]:
    """The statements of an SQL script, one at a time.

    ``executescript`` would commit first, breaking the migration's transaction; splitting with
    ``sqlite3.complete_statement`` keeps semicolons inside strings and triggers intact.
    """
    start = 0
    for index, char in enumerate(script):
        if char == ";" and sqlite3.complete_statement(script[start : index + 1]):
            yield script[start : index + 1]
            start = index + 1
    rest = script[start:]
    if rest.strip():
        yield rest  # trailing comments, or a last statement without its semicolon


def _save_game(db: sqlite3.Connection, game: GameRecord) -> GameRecord | None:
    row = db.execute(SQL.save_game, codec.saved_game_values(game)).fetchone()
    if row is None:
        return None
    saved = codec.game(row)
    if saved.status is GameStatus.FINISHED:
        _write_tally(db, saved)
    return saved


def _replace_message(
    table: str,
    row_id: int,
    message_id: int,
    db: sqlite3.Connection,
    *,
    as_of: int | None = None,
) -> int | None:
    """Inside the write lock: the message row ``row_id`` of ``table`` had, then ``message_id``
    in its place (PostgreSQL's is one statement, as RETURNING there can read the row before);
    with ``as_of``, unless the one it had is newer than that (a greater id)."""
    before = db.execute(f"SELECT message_id FROM {table} WHERE id = ?", (row_id,)).fetchone()
    if before is None:
        return None
    previous: int | None = before[0]
    if as_of is None or previous is None or previous <= as_of:
        db.execute(f"UPDATE {table} SET message_id = ? WHERE id = ?", (message_id, row_id))
    return previous


# An interaction noted once: the insert of an id already noted inserts nothing, so of two
# workers given the same interaction, one gets a row back. (PostgreSQL notes a batch in one
# statement, bot.storage.postgres._NOTE_INTERACTIONS.)
_NOTE_INTERACTION = (
    "INSERT INTO interactions_seen (id, signed_at) VALUES (?, ?)"
    " ON CONFLICT (id) DO NOTHING RETURNING id"
)


def _note_interactions(
    notes: Sequence[tuple[int, float]], db: sqlite3.Connection
) -> frozenset[int]:
    # A statement each, in the caller's one transaction: its commit is the cost, not these.
    return frozenset(
        row[0] for note in notes for row in db.execute(_NOTE_INTERACTION, note).fetchall()
    )


def _write_tally(db: sqlite3.Connection, game: GameRecord) -> None:
    """Add what the just-finished ``game`` counts for (decided by :mod:`bot.results`)."""
    players = results.rated_players(game)
    rows = db.execute(SQL.ratings_of, (game.guild_id, game.size, *players)) if players else ()
    counted = results.tally(game, codec.current_ratings(rows))
    db.executemany(SQL.add_record, codec.record_rows(counted))
    db.executemany(SQL.rate, codec.rating_rows(counted))


def _replay_ratings(db: sqlite3.Connection) -> None:
    """Migration 0011's step: every rating as replaying the stored rated games gives it."""
    games = (codec.rated_game(row) for row in db.execute(SQL.rated_games_in_order))
    db.executemany(SQL.replayed_rating, codec.replayed_rows(results.replay(games)))


def _insert_game(db: sqlite3.Connection, game: NewGame, live_limit: int | None) -> GameRecord:
    if live_limit is not None:
        # Counted inside the write transaction (BEGIN IMMEDIATE): every other writer, in any
        # process, waits for it to end, so no game can slip in between the count and the insert.
        live = {
            user_id: db.execute(SQL.live_games_of, (game.guild_id, user_id)).fetchone()["live"]
            for user_id in game.human_ids
        }
        over = over_the_limit(live, live_limit)
        if over:
            raise LiveGamesLimitError(game.guild_id, over, live_limit)
    try:
        row = db.execute(SQL.insert_game, codec.new_game_values(game)).fetchone()
    except sqlite3.IntegrityError as error:
        # Ask which rule was broken instead of parsing SQLite's message. The rematch check
        # comes first: two players clicking "rematch" at once should hear that, not "busy".
        if game.rematch_of is not None and _exists(
            db, "SELECT 1 FROM games WHERE rematch_of = ?", game.rematch_of
        ):
            raise AlreadyRematchedError(f"game {game.rematch_of} was already rematched") from error
        _raise_if_occupied(db, game.channel_id, error)
        raise
    return codec.game(row)


def _insert_challenge(
    db: sqlite3.Connection, challenge: NewChallenge, cooldown: float | None
) -> ChallengeRecord:
    if cooldown is not None:
        # Inside the write lock: another challenge of this member waits for this one's end.
        keys = (challenge.guild_id, challenge.challenger_id)
        latest = db.execute(SQL.last_challenge_by, keys).fetchone()["latest"]
        codec.refuse_within_cooldown(challenge, latest, cooldown)
    try:
        row = db.execute(SQL.insert_challenge, codec.new_challenge_values(challenge)).fetchone()
    except sqlite3.IntegrityError as error:
        _raise_if_occupied(db, challenge.channel_id, error)
        raise
    return codec.challenge(row)


def _close_challenge(
    db: sqlite3.Connection,
    challenge_id: int,
    status: ChallengeStatus,
    game: NewGame | None,
    live_limit: int | None,
) -> tuple[ChallengeRecord, GameRecord | None] | None:
    row = db.execute(SQL.close_challenge, (status.value, challenge_id)).fetchone()
    if row is None:
        return None
    if game is None:
        return codec.challenge(row), None
    # Raising here rolls the status change back too: the challenge stays pending.
    created = _insert_game(db, game, live_limit)
    row = db.execute(SQL.start_challenge_game, (created.id, challenge_id)).fetchone()
    return codec.challenge(row), created


def _forget_member(db: sqlite3.Connection, user_id: int, now: float) -> Forgotten:
    """:meth:`Storage.forget_member`'s steps, inside its transaction."""
    (counted,) = db.execute(SQL.next_placeholder).fetchone()
    placeholder = -int(counted)
    anonymised = (placeholder, FORGOTTEN_NAME, user_id)
    games = sum(len(db.execute(step, anonymised).fetchall()) for step in SQL.anonymise_games)
    challenges = sum(
        len(db.execute(step, anonymised).fetchall()) for step in SQL.anonymise_challenges
    )
    settings = len(db.execute(SQL.anonymise_settings, (placeholder, user_id)).fetchall())
    ended = db.execute(SQL.end_games_of, (now, placeholder, placeholder)).fetchall()
    closed = db.execute(SQL.close_challenges_of, (placeholder,) * 3).fetchall()
    stats_rows = sum(
        len(db.execute(step, (user_id,)).fetchall()) for step in SQL.delete_member_stats
    )
    practice_rows = sum(
        len(db.execute(step, (user_id,)).fetchall()) for step in SQL.delete_member_practice
    )
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


def _erase_guild(db: sqlite3.Connection, guild_id: int) -> GuildErased:
    """:meth:`Storage.erase_guild`'s steps, inside its transaction."""
    live = [codec.game(row) for row in db.execute(SQL.guild_live_games, (guild_id,))]
    pending = [
        codec.challenge(row) for row in db.execute(SQL.guild_pending_challenges, (guild_id,))
    ]
    going = [codec.tournament(row) for row in db.execute(SQL.live_tournaments, (guild_id,))]
    links, whole = SQL.delete_guild_tournaments
    db.execute(links, (guild_id,)).fetchall()
    tournaments = len(db.execute(whole, (guild_id,)).fetchall())
    db.execute(SQL.free_guild_channels, (guild_id, guild_id))
    db.execute(SQL.drop_guild_routes, (guild_id, guild_id))
    challenges = len(db.execute(SQL.delete_guild_challenges, (guild_id,)).fetchall())
    games = len(db.execute(SQL.delete_guild_games, (guild_id,)).fetchall())
    stats_rows = sum(
        len(db.execute(step, (guild_id,)).fetchall()) for step in SQL.delete_guild_stats
    )
    drills = len(db.execute(SQL.delete_guild_drills, (guild_id,)).fetchall())
    db.execute(SQL.unlink_guild_puzzles, (guild_id,))
    db.execute(SQL.delete_guild_seasons, (guild_id,))
    return GuildErased(
        tuple(live),
        tuple(pending),
        games,
        challenges,
        stats_rows,
        drills,
        tournaments=tournaments,
        live_tournaments=tuple(going),
    )


def _prune_finished(
    db: sqlite3.Connection, finished_before: float, limit: int, shards: ShardSlice
) -> Pruned:
    """:meth:`Storage.prune_finished`'s steps, inside its transaction."""
    in_shards = sql.shard_params(shards)
    batch = db.execute(SQL.prunable_games(shards), (finished_before, *in_shards, limit)).fetchall()
    games: list[int] = []
    challenges = 0
    if batch:
        last = (batch[-1]["updated_at"], batch[-1]["id"], *in_shards)
        rematches, unseen, started_by, deleted = SQL.prune_batch(shards)
        db.execute(rematches, last)
        db.execute(unseen, last)
        challenges = len(db.execute(started_by, last).fetchall())
        games = [row["id"] for row in db.execute(deleted, last)]
        db.execute(SQL.note_pruned, (str(max(games)),))
    old = db.execute(SQL.old_challenges(shards), (finished_before, *in_shards, limit))
    return Pruned(tuple(sorted(games)), challenges + len(old.fetchall()))


def raise_outage(error: sqlite3.Error, *, nothing_written: bool) -> None:
    """Raise ``error`` as :class:`DatabaseUnavailableError` if it is the database's own
    failure (:data:`OUTAGES`); return if it is any other."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in OUTAGES:
        raise DatabaseUnavailableError(str(error), nothing_written=nothing_written) from error


def _raise_if_occupied(
    db: sqlite3.Connection, channel_id: int, error: sqlite3.IntegrityError
) -> None:
    """Raise :class:`ChannelBusyError` if ``error`` came from the channel's one occupant (a
    live game or a pending challenge, see migration 0002)."""
    if _exists(db, "SELECT 1 FROM channel_occupants WHERE channel_id = ?", channel_id):
        busy = f"channel {channel_id} has a live game or a pending challenge"
        raise ChannelBusyError(busy) from error


def _exists(db: sqlite3.Connection, statement: str, *params: Any) -> bool:
    return db.execute(statement, params).fetchone() is not None
