"""Open the storage that ``DATABASE_URL`` names, turning failures into one-line errors.

The messages name the database with :meth:`DatabaseUrl.describe` (host and database, never the
password) and carry no traceback: a wrong setting is the operator's to fix, not a bug.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import asyncpg

from bot.clock import Clock
from bot.config import POSTGRESQL, ConfigError, DatabaseUrl
from bot.storage.base import DatabaseUnavailableError, SchemaTooNewError, Storage
from bot.storage.postgres import (
    CONNECT_TIMEOUT_SECONDS,
    STATEMENT_TIMEOUT_SECONDS,
    PostgresStorage,
)
from bot.storage.sqlite import OLDEST_SQLITE, SqliteStorage

log = logging.getLogger(__name__)


async def open_storage(database: DatabaseUrl, clock: Clock) -> Storage:
    """Connect and apply pending migrations. Raises :class:`ConfigError` if it can't."""
    storage: Storage
    if database.scheme == POSTGRESQL:
        storage = await open_postgres(database, clock)
    else:
        storage = await _open_sqlite(database, clock)
    log.info("using %s", database.describe())
    return storage


async def _open_sqlite(database: DatabaseUrl, clock: Clock) -> SqliteStorage:
    path = database.path
    if sqlite3.sqlite_version_info < OLDEST_SQLITE:
        oldest = ".".join(map(str, OLDEST_SQLITE))
        raise ConfigError(
            f"DATABASE_URL: this Python's SQLite library is {sqlite3.sqlite_version}; tttbot"
            f" needs {oldest} or newer (or PostgreSQL)"
        )
    if path != ":memory:" and not Path(path).parent.is_dir():
        raise ConfigError(f"DATABASE_URL: the folder of {path} does not exist")
    try:
        return await SqliteStorage.open(path, clock)
    except SchemaTooNewError as error:
        raise ConfigError(f"DATABASE_URL: refusing {database.describe()}: {error}") from None
    except (sqlite3.Error, DatabaseUnavailableError) as error:
        raise ConfigError(f"DATABASE_URL: cannot open {database.describe()}: {error}") from None


async def open_postgres(
    database: DatabaseUrl,
    clock: Clock,
    *,
    statement_timeout: float | None = STATEMENT_TIMEOUT_SECONDS,
) -> PostgresStorage:
    """:meth:`PostgresStorage.open` with its failures as one-line :class:`ConfigError`\\ s."""
    where = database.describe()
    try:
        return await PostgresStorage.open(
            database.url, clock, database.pool_size, statement_timeout
        )
    except SchemaTooNewError as error:
        raise ConfigError(f"DATABASE_URL: refusing {where}: {error}") from None
    except asyncpg.InvalidPasswordError:
        # The server says no more than this, whether the user or the password is wrong.
        raise ConfigError(
            f"DATABASE_URL: {where} refused the user name or password"
            f" (user {database.user or '(default)'})"
        ) from None
    except asyncpg.InvalidCatalogNameError:
        raise ConfigError(
            f"DATABASE_URL: {where}: the server has no database named {database.database}"
            " (create it first)"
        ) from None
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as error:
        # Refused logins of other kinds (no pg_hba.conf entry, no such role), a server
        # shutting down, too many connections...: the server's words, on one line.
        raise ConfigError(f"DATABASE_URL: cannot open {where}: {_one_line(error)}") from None
    except TimeoutError:  # before OSError, of which it is one, for a message of its own
        raise ConfigError(
            f"DATABASE_URL: cannot reach {where}: no answer within"
            f" {CONNECT_TIMEOUT_SECONDS:.0f} seconds"
        ) from None
    except OSError as error:  # refused, unreachable, no such host, TLS failures
        raise ConfigError(f"DATABASE_URL: cannot reach {where}: {_one_line(error)}") from None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())
