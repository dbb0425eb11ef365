"""``python -m bot backup BACKUP_PATH``: a consistent copy of the SQLite database, taken while
the bot runs.

A copy of the database file with ``cp`` is not one: the bot runs SQLite in WAL mode, so the
latest commits are in the ``-wal`` file beside it until a checkpoint, and a file copied while a
checkpoint writes is torn. ``VACUUM INTO`` reads one snapshot of the database, log included,
inside a read transaction, which in WAL mode holds up no move (writers go on beside it), and
writes it to a new file: compact, with no free pages, and no log of its own. The database is
opened read-only, so a backup never migrates it, nor creates it where there is none.

PostgreSQL's own tools do this there (``pg_dump``): docs/operating.md says how, and how to
restore either engine's backups. Every failure is one :class:`ConfigError` line naming the
files.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from bot.config import ConfigError, DatabaseUrl

# How long the backup waits for a lock it needs (a read lock, which only a checkpoint's
# truncation or another process's schema change holds, briefly): as long as the bot waits.
BUSY_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class BackupReport:
    """What the backup file holds."""

    target: Path
    schema_version: int
    games: int
    live_games: int

    def __str__(self) -> str:
        return (
            f"backed up to {self.target}: schema version {self.schema_version},"
            f" {self.games} games ({self.live_games} live)"
        )


def backup_sqlite(database: DatabaseUrl, target: Path) -> BackupReport:
    """Write a consistent copy of the SQLite database ``database`` names to ``target``, a
    file that must not exist yet. Raises :class:`ConfigError` with one line if it cannot."""
    source = Path(database.path)
    where = database.describe()
    if database.path == ":memory:" or not source.is_file():
        raise ConfigError(f"DATABASE_URL: there is no database to back up at {where}")
    if target.exists():
        raise ConfigError(f"{target} already exists: a backup never overwrites a file")
    if not target.parent.is_dir():
        raise ConfigError(f"the folder of {target} does not exist")
    uri = f"{source.resolve().as_uri()}?mode=ro"
    try:
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_SECONDS)) as db:
            (is_ours,) = db.execute(
                "SELECT count(*) FROM sqlite_master"
                " WHERE type = 'table' AND name = 'schema_migrations'"
            ).fetchone()
            if not is_ours:
                raise ConfigError(f"{where} is not a tttbot database: nothing was backed up")
            db.execute("VACUUM INTO ?", (str(target),))
    except sqlite3.Error as error:
        # A half-written file is no backup. The check above means it is the backup's own.
        target.unlink(missing_ok=True)
        raise ConfigError(f"cannot back up {where} to {target}: {error}") from None
    return _report(target)


def _report(target: Path) -> BackupReport:
    uri = f"{target.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as copy:
        (version,) = copy.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
        games, live = copy.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'active') FROM games"
        ).fetchone()
    return BackupReport(target, version, games, live)
