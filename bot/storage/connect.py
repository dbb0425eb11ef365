"""Open the storage that ``DATABASE_URL`` names, turning failures into one-line errors."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from bot.clock import Clock
from bot.config import ConfigError, DatabaseUrl
from bot.storage.base import SchemaTooNewError, Storage
from bot.storage.sqlite import SqliteStorage

log = logging.getLogger(__name__)


async def open_storage(database: DatabaseUrl, clock: Clock) -> Storage:
    """Connect and apply pending migrations. Raises :class:`ConfigError` if it can't."""
    path = database.path
    if path != ":memory:" and not Path(path).parent.is_dir():
        raise ConfigError(f"DATABASE_URL: the folder of {path} does not exist")
    try:
        storage = await SqliteStorage.open(path, clock)
    except SchemaTooNewError as error:
        raise ConfigError(f"DATABASE_URL: refusing {database.describe()}: {error}") from None
    except sqlite3.Error as error:
        raise ConfigError(f"DATABASE_URL: cannot open {database.describe()}: {error}") from None
    log.info("using %s", database.describe())
    return storage
