"""Databases at an earlier schema, as the bot's own migrations left them then: the migrations
up to that one applied by hand and noted, on a raw connection (the storage would apply them all),
for the tests of what opening such a database does (``test_storage.py``,
``test_storage_upgrades.py``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import asyncpg

from bot.storage.sqlite import split_statements

# schema_migrations as the first versions made it.
OLD_MIGRATIONS_TABLE = (
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL NOT NULL)"
)


def migrate_sqlite(lite: sqlite3.Connection, migrations: Sequence[tuple[int, str]]) -> None:
    """Apply ``migrations`` (number, SQL) to an empty SQLite database, each noted."""
    lite.execute(OLD_MIGRATIONS_TABLE)
    for number, sql in migrations:
        for statement in split_statements(sql):
            lite.execute(statement)
        lite.execute("INSERT INTO schema_migrations VALUES (?, 0)", (number,))


async def migrate_postgres(db: asyncpg.Connection, migrations: Sequence[tuple[int, str]]) -> None:
    """Apply ``migrations`` (number, SQL) to an empty PostgreSQL database, each noted."""
    await db.execute(OLD_MIGRATIONS_TABLE)
    for number, sql in migrations:
        await db.execute(sql)
        await db.execute("INSERT INTO schema_migrations VALUES ($1, 0)", number)
