"""Copy a SQLite database into an empty PostgreSQL one: ``python -m bot
migrate-sqlite-to-postgres SQLITE_PATH``, for a server that outgrew SQLite and keeps its games,
challenges, stats, ratings and settings.

The SQLite file is opened read-only and must be at this bot's schema version (run the bot on
it once if it is older); the PostgreSQL database gets its migrations first, and the copy is one
transaction there (:meth:`PostgresStorage.copy_in`). Every failure is one :class:`ConfigError`
line naming the file or the database, never the password.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import asyncpg

from bot.clock import Clock
from bot.config import ConfigError, DatabaseUrl
from bot.storage import codec
from bot.storage.connect import open_postgres
from bot.storage.migrations import migration_files
from bot.storage.postgres import COPIED_COLUMNS, ID_TABLES, NotEmptyError, Snapshot


def read_sqlite(path: Path) -> Snapshot:
    """Every row :meth:`PostgresStorage.copy_in` takes, read from the SQLite file at ``path``
    without changing it."""
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
        bool(value) if column in codec.FLAG_COLUMNS else value
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


async def copy_sqlite_to_postgres(source: Path, target: DatabaseUrl, clock: Clock) -> str:
    """Copy the SQLite file ``source`` into the empty PostgreSQL database ``target``; the
    sentence saying what was copied."""
    snapshot = read_sqlite(source)
    storage = await open_postgres(target, clock)
    where = target.describe()
    try:
        counts = await storage.copy_in(snapshot)
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
