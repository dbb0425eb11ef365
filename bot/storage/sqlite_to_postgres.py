"""Copy a SQLite database into an empty PostgreSQL one: ``python -m bot
migrate-sqlite-to-postgres SQLITE_PATH``, for a server that outgrew SQLite and keeps its games,
challenges, stats, ratings and settings.

The SQLite file is opened read-only and must be at this bot's schema version (run the bot on
it once if it is older); the PostgreSQL database gets its migrations first, and the copy is one
transaction there (:func:`copy_in`), with the tables locked. Every failure is one
:class:`ConfigError` line naming the file or the database, never the password.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import asyncpg

from bot.clock import Clock
from bot.config import ConfigError, DatabaseUrl
from bot.storage import codec
from bot.storage.base import (
    ChallengeRecord,
    DrillRecord,
    PuzzleResult,
    ReplyRoute,
    StorageError,
)
from bot.storage.connect import open_postgres
from bot.storage.migrations import migration_files
from bot.storage.postgres import PostgresStorage

# What a copy from another database brings, table by table in an order that satisfies the
# foreign keys, with the columns both engines' schemas share (schema_migrations is each
# database's own).
COPIED_COLUMNS: dict[str, tuple[str, ...]] = {
    "games": codec.GAME_FIELDS,
    "challenges": tuple(field.name for field in fields(ChallengeRecord)),
    "channel_occupants": ("channel_id", "game_id", "challenge_id"),
    "player_stats": ("guild_id", "user_id", "size", "opponent", "wins", "losses", "draws"),
    "ratings": (
        "guild_id",
        "user_id",
        "size",
        "rating",
        "deviation",
        "last_played",
        "games",
        "wins",
        "losses",
        "draws",
    ),
    "settings": ("key", "value"),
    "guild_settings": ("guild_id", "key", "value", "changed_by", "changed_at"),
    "reply_routes": tuple(field.name for field in fields(ReplyRoute)),
    "puzzle_results": tuple(field.name for field in fields(PuzzleResult)),
    "drills": tuple(field.name for field in fields(DrillRecord)),
    "tournaments": codec.TOURNAMENT_FIELDS,
    "tournament_games": ("tournament_id", "round", "board", "game_id"),
    "season_announcements": ("guild_id", "season", "announced_at"),
}
# The tables whose ids come from a sequence.
ID_TABLES = ("games", "challenges", "drills", "tournaments")


class NotEmptyError(StorageError):
    """A copy was asked into a database that already holds data; nothing was written."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything a database holds, for :func:`copy_in`: rows per table of
    :data:`COPIED_COLUMNS` (in its column order), and per table of :data:`ID_TABLES` the
    highest id the source ever handed out (which may exceed the highest id it still has)."""

    rows: Mapping[str, Sequence[tuple[Any, ...]]]
    highest_ids: Mapping[str, int]


# The columns that hold a flag: SQLite keeps it as 0 or 1, PostgreSQL as a boolean, which a
# copy from SQLite must be given.
FLAG_COLUMNS = frozenset({"assisted", "own_thread", "first_try"})


def read_sqlite(path: Path) -> Snapshot:
    """Every row :func:`copy_in` takes, read from the SQLite file at ``path`` without changing
    it."""
    where = f"sqlite file {path}"
    if not path.is_file():
        raise ConfigError(f"{where} does not exist")
    try:
        # mode=ro: a copy must not touch its source, not even to bring its schema up to date.
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            _check_schema(db, where)
            rows = {
                table: [
                    _typed(columns, row)
                    for row in db.execute(
                        f"SELECT {', '.join(columns)} FROM {table} ORDER BY rowid"
                    )
                ]
                for table, columns in COPIED_COLUMNS.items()
            }
            # AUTOINCREMENT's high-water marks: ids handed out by rows deleted since.
            highest_ids = {
                name: int(seq)
                for name, seq in db.execute("SELECT name, seq FROM sqlite_sequence").fetchall()
                if name in ID_TABLES
            }
    except sqlite3.Error as error:
        raise ConfigError(f"cannot read {where}: {error}") from None
    return Snapshot(rows=rows, highest_ids=highest_ids)


def _typed(columns: tuple[str, ...], row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A SQLite row as PostgreSQL's columns take it: flags (0 or 1 in SQLite) as booleans."""
    return tuple(
        bool(value) if column in FLAG_COLUMNS else value
        for column, value in zip(columns, row, strict=True)
    )


def _check_schema(db: sqlite3.Connection, where: str) -> None:
    known = [version for version, _ in migration_files("sqlite")]
    has_table = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not has_table:
        raise ConfigError(f"{where} is not a tttbot database (it has no schema_migrations)")
    applied = sorted(row[0] for row in db.execute("SELECT version FROM schema_migrations"))
    if applied and applied[-1] > known[-1]:
        raise ConfigError(
            f"{where} has schema version {applied[-1]}, newer than this bot's {known[-1]}: "
            "copy it with the tttbot that wrote it"
        )
    if applied != known:
        newest = applied[-1] if applied else 0
        raise ConfigError(
            f"{where} has schema version {newest}, older than this bot's {known[-1]}: run "
            "this bot on it once (DATABASE_URL=sqlite:///...) to bring it up to date, then copy"
        )


async def copy_in(storage: PostgresStorage, snapshot: Snapshot) -> dict[str, int]:
    """Write ``snapshot`` into ``storage``'s database, which must hold no games, challenges,
    stats, ratings or settings (else :class:`NotEmptyError`, and nothing is written). Ids are
    kept, and the id sequences continue past the source's. Returns the rows per table.

    The copy is one transaction with the tables locked, so a bot started against the
    database meanwhile waits for it, then finds everything in place.
    """
    counts: dict[str, int] = {}
    async with storage.transaction() as db:
        await db.execute(f"LOCK TABLE {', '.join(COPIED_COLUMNS)} IN EXCLUSIVE MODE")
        present = {
            table: await db.fetchval(f"SELECT count(*) FROM {table}") for table in COPIED_COLUMNS
        }
        if any(present.values()):
            held = ", ".join(f"{table} {count}" for table, count in present.items() if count)
            raise NotEmptyError(f"it already holds rows ({held})")
        # The channel_occupants rows are copied as the source kept them: the triggers
        # that would derive them on insert stay off until the copy is in. (A source may
        # hold a pending challenge that keeps no claim beside a live game, from before
        # SQLite's migration 0002; a trigger would refuse it.) Undone by the commit, or
        # by the rollback if anything fails.
        for table in ("games", "challenges"):
            await db.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        for table, columns in COPIED_COLUMNS.items():
            rows = list(snapshot.rows.get(table, ()))
            if rows:
                await db.copy_records_to_table(table, records=rows, columns=list(columns))
            counts[table] = len(rows)
        for table in ("games", "challenges"):
            await db.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")
        for table in ID_TABLES:
            highest = max(
                snapshot.highest_ids.get(table, 0),
                await db.fetchval(f"SELECT COALESCE(MAX(id), 0) FROM {table}"),
            )
            if highest > 0:
                # The next id is highest + 1: none the source handed out is handed again.
                await db.execute(
                    "SELECT setval(pg_get_serial_sequence($1, 'id'), $2)", table, highest
                )
    return counts


async def copy_sqlite_to_postgres(source: Path, target: DatabaseUrl, clock: Clock) -> str:
    """Copy the SQLite file ``source`` into the empty PostgreSQL database ``target``; the
    sentence saying what was copied."""
    snapshot = read_sqlite(source)
    # No time limit on a statement: the copy of a large database is one transaction.
    storage = await open_postgres(target, clock, statement_timeout=None)
    where = target.describe()
    try:
        counts = await copy_in(storage, snapshot)
    except NotEmptyError as error:
        raise ConfigError(
            f"DATABASE_URL: refusing to copy into {where}: {error}; the copy goes into an "
            "empty database only"
        ) from None
    except asyncpg.PostgresError as error:
        raise ConfigError(
            f"DATABASE_URL: copying into {where} failed, nothing was written: "
            f"{' '.join(str(error).split())}"
        ) from None
    finally:
        await storage.close()
    copied = ", ".join(f"{table} {count}" for table, count in counts.items())
    return f"copied rows: {copied} from sqlite file {source} into {where}"
