"""Upgrading from every earlier schema: a database at each migration from 0001 to the one before
the newest, holding what that version stored (live and finished games of every size it had,
ultimate once there was one, challenges, stats, ratings, settings, reply routes, server
settings, puzzle results, drills, a tournament, a season's announcement), migrated to the
newest on SQLite and PostgreSQL. Every row keeps every value it had (ratings too, but where
migration 0011 replays them from the games), and every live game takes its next move.
``test_storage.py`` holds the migrations' own tests (0002's occupants, 0003's sizes, 0006's
hints, 0011's replay); this file checks the whole path from each starting point."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from dataclasses import replace
from typing import Any

import asyncpg
import pytest

from bot.clock import ManualClock
from bot.storage.base import GameStatus, Storage
from bot.storage.migrations import migration_files
from bot.storage.postgres import PostgresStorage
from bot.storage.sqlite import SqliteStorage
from bot.tournaments.state import loads
from tests.old_schemas import migrate_postgres, migrate_sqlite
from tests.postgres_cluster import PostgresCluster

NEWEST = max(version for version, _ in migration_files("sqlite"))
T0 = 1_700_000_000.25
FAR = 4_000_000_000.0

# A tournament's document as migration 0012's version wrote it: its tables had no claimed_at.
TOURNAMENT_STATE = json.dumps(
    {
        "rules": {
            "name": "Autumn cup",
            "format": "swiss",
            "size": 3,
            "turn_timeout": 300.0,
            "most_players": 16,
            "rounds": None,
            "language": "en",
        },
        "organiser_id": 101,
        "starts_at": FAR,
        "entries": [
            {"user_id": 101, "name": "alice", "joined_at": T0, "rating": None, "withdrawn_at": None}
        ],
        "tables": [],
        "rounds": [],
        "current_round": 0,
        "log": [],
        "announcement_id": 900,
        "final_posted": False,
    },
    separators=(",", ":"),
    sort_keys=True,
)

_GAME = (
    *("id", "guild_id", "channel_id", "x_id", "o_id", "x_name", "o_name", "ai_difficulty"),
    *("ai_mark", "size", "moves", "status", "winner", "end_reason", "message_id"),
    *("deadline", "version", "created_at", "updated_at"),
)


def _game(*values: Any) -> dict[str, Any]:
    return dict(zip(_GAME, values, strict=True))


# Each row with the first schema version that could hold it, by table; a row's columns that its
# version's schema lacks are left out (the migration adding them gives their defaults).
ROWS: dict[str, list[tuple[int, dict[str, Any]]]] = {
    "games": [
        # 3x3: finished between members, live between members, live against the bot.
        (
            1,
            _game(
                1,
                10,
                20,
                101,
                102,
                "alice",
                "bob",
                None,
                None,
                3,
                "0,3,1,4,2",
                "finished",
                "X",
                "line",
                501,
                None,
                6,
                T0,
                T0 + 60,
            ),
        ),
        (
            1,
            _game(
                2,
                10,
                21,
                101,
                102,
                "alice",
                "bob",
                None,
                None,
                3,
                "4",
                "active",
                None,
                None,
                502,
                FAR,
                2,
                T0,
                T0 + 10,
            ),
        ),
        (
            1,
            _game(
                3,
                10,
                22,
                103,
                0,
                "carol",
                "tttbot",
                "smart",
                "O",
                3,
                "0,4",
                "active",
                None,
                None,
                503,
                FAR,
                3,
                T0,
                T0 + 10,
            ),
        ),
        # 4x4 and 5x5 (0003).
        (
            3,
            _game(
                4,
                10,
                23,
                101,
                102,
                "alice",
                "bob",
                None,
                None,
                4,
                "5",
                "active",
                None,
                None,
                504,
                FAR,
                2,
                T0,
                T0 + 10,
            ),
        ),
        (
            3,
            _game(
                5,
                10,
                24,
                102,
                101,
                "bob",
                "alice",
                None,
                None,
                5,
                "0,1",
                "finished",
                "O",
                "resign",
                505,
                None,
                3,
                T0,
                T0 + 90,
            ),
        ),
        # Ultimate, stored as size 9 (the bot since 0013's time): a live and a resigned game.
        (
            13,
            _game(
                6,
                10,
                25,
                101,
                103,
                "alice",
                "carol",
                None,
                None,
                9,
                "40",
                "active",
                None,
                None,
                506,
                FAR,
                2,
                T0,
                T0 + 10,
            ),
        ),
        (
            13,
            _game(
                7,
                10,
                26,
                103,
                101,
                "carol",
                "alice",
                None,
                None,
                9,
                "40,36",
                "finished",
                "O",
                "resign",
                507,
                None,
                3,
                T0,
                T0 + 120,
            ),
        ),
    ],
    "challenges": [
        (
            1,
            {
                "id": 1,
                "guild_id": 10,
                "channel_id": 20,
                "size": 3,
                "challenger_id": 101,
                "challenger_name": "alice",
                "opponent_id": 102,
                "opponent_name": "bob",
                "status": "accepted",
                "message_id": 601,
                "expires_at": T0 + 120,
                "game_id": 1,
                "created_at": T0,
            },
        ),
        (
            1,
            {
                "id": 2,
                "guild_id": 10,
                "channel_id": 27,
                "size": 3,
                "challenger_id": 102,
                "challenger_name": "bob",
                "opponent_id": None,
                "opponent_name": None,
                "status": "pending",
                "message_id": 602,
                "expires_at": FAR,
                "game_id": None,
                "created_at": T0,
            },
        ),
        (
            1,
            {
                "id": 3,
                "guild_id": 10,
                "channel_id": 28,
                "size": 3,
                "challenger_id": 103,
                "challenger_name": "carol",
                "opponent_id": 101,
                "opponent_name": "alice",
                "status": "declined",
                "message_id": 603,
                "expires_at": T0 + 120,
                "game_id": None,
                "created_at": T0,
            },
        ),
    ],
    "player_stats": [
        (
            1,
            {
                "guild_id": 10,
                "user_id": 101,
                "size": 3,
                "opponent": "member",
                "wins": 1,
                "losses": 0,
                "draws": 0,
            },
        ),
        (
            1,
            {
                "guild_id": 10,
                "user_id": 102,
                "size": 3,
                "opponent": "member",
                "wins": 0,
                "losses": 1,
                "draws": 0,
            },
        ),
        (
            1,
            {
                "guild_id": 10,
                "user_id": 103,
                "size": 3,
                "opponent": "smart",
                "wins": 0,
                "losses": 2,
                "draws": 1,
            },
        ),
        (
            3,
            {
                "guild_id": 10,
                "user_id": 102,
                "size": 5,
                "opponent": "member",
                "wins": 1,
                "losses": 0,
                "draws": 0,
            },
        ),
        (
            3,
            {
                "guild_id": 10,
                "user_id": 101,
                "size": 5,
                "opponent": "member",
                "wins": 0,
                "losses": 1,
                "draws": 0,
            },
        ),
        (
            13,
            {
                "guild_id": 10,
                "user_id": 103,
                "size": 9,
                "opponent": "member",
                "wins": 0,
                "losses": 0,
                "draws": 0,
            },
        ),
    ],
    "ratings": [
        (
            1,
            {
                "guild_id": 10,
                "user_id": 101,
                "size": 3,
                "rating": 1016.0,
                "games": 1,
                "wins": 1,
                "losses": 0,
                "draws": 0,
            },
        ),
        (
            1,
            {
                "guild_id": 10,
                "user_id": 102,
                "size": 3,
                "rating": 984.0,
                "games": 1,
                "wins": 0,
                "losses": 1,
                "draws": 0,
            },
        ),
        (
            3,
            {
                "guild_id": 10,
                "user_id": 102,
                "size": 5,
                "rating": 1016.0,
                "games": 1,
                "wins": 1,
                "losses": 0,
                "draws": 0,
            },
        ),
        (
            3,
            {
                "guild_id": 10,
                "user_id": 101,
                "size": 5,
                "rating": 984.0,
                "games": 1,
                "wins": 0,
                "losses": 1,
                "draws": 0,
            },
        ),
    ],
    "settings": [(1, {"key": "commands_hash", "value": "0123abcd"})],
    "reply_routes": [
        (
            4,
            {
                "channel_id": 40,
                "token": "token-of-a-dm",
                "expires_at": T0 + 900,
                "message_id": 701,
                "unseen_game_id": None,
            },
        ),
    ],
    "guild_settings": [
        (
            7,
            {"guild_id": 10, "key": "language", "value": "de", "changed_by": 101, "changed_at": T0},
        ),
        (
            7,
            {
                "guild_id": 10,
                "key": "turn_timeout",
                "value": None,
                "changed_by": 102,
                "changed_at": T0 + 1,
            },
        ),
    ],
    "puzzle_results": [
        (
            9,
            {
                "user_id": 101,
                "day": "2026-11-26",
                "puzzle_id": "w3-0042",
                "guild_id": 10,
                "tries": 2,
                "solved_at": T0 + 30,
                "first_try": False,
            },
        ),
    ],
    "drills": [
        (
            9,
            {
                "id": 1,
                "user_id": 102,
                "guild_id": 10,
                "game_id": 1,
                "position": "X.O.X.... 3 X 8",
                "right_in_row": 1,
                "answers": 2,
                "due_at": FAR,
                "learned_at": None,
                "created_at": T0,
            },
        ),
    ],
    "tournaments": [
        (
            12,
            {
                "id": 1,
                "guild_id": 10,
                "channel_id": 29,
                "status": "registering",
                "due_at": FAR,
                "version": 3,
                "state": TOURNAMENT_STATE,
                "created_at": T0,
                "updated_at": T0 + 5,
            },
        ),
    ],
    "season_announcements": [
        (13, {"guild_id": 10, "season": "2026-10", "announced_at": T0}),
    ],
}
LIVE_GAMES = {2, 3, 4, 6}

every_dialect = pytest.mark.parametrize(
    "dialect", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
every_earlier_schema = pytest.mark.parametrize("at", range(1, NEWEST))


def _rows_at(at: int, columns: dict[str, list[str]]) -> list[tuple[str, dict[str, Any]]]:
    """The rows a database at migration ``at`` holds, each with the columns it has there."""
    return [
        (table, {name: value for name, value in row.items() if name in columns[table]})
        for table, rows in ROWS.items()
        if table in columns
        for since, row in rows
        if since <= at
    ]


@asynccontextmanager
async def _database_at(
    at: int, dialect: str, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Storage, dict[str, list[tuple[Any, ...]]]]]:
    """The storage opened on a database at migration ``at`` holding its version's rows (so
    migrated to the newest), and those rows as written: by table, each row's values in the
    order of the columns it had, sorted."""
    older = [(number, sql) for number, sql in migration_files(dialect) if number <= at]
    written: dict[str, list[tuple[Any, ...]]] = {}
    if dialect == "sqlite":
        path = str(request.getfixturevalue("tmp_path") / "old.sqlite3")
        with closing(sqlite3.connect(path)) as lite, lite:
            migrate_sqlite(lite, older)
            columns = {
                table: [row[1] for row in lite.execute(f"PRAGMA table_info({table})")]
                for (table,) in lite.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
            for table, row in _rows_at(at, columns):
                names = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                lite.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(row.values()))
                written.setdefault(table, []).append(tuple(row.items()))
        storage: Storage = await SqliteStorage.open(path, ManualClock(T0 + 1000))
        try:
            yield storage, written
        finally:
            await storage.close()
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    async with cluster.fresh_database() as name:
        url = cluster.url(name)
        db = await asyncpg.connect(url)
        try:
            await migrate_postgres(db, older)
            columns = {}
            for record in await db.fetch(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE table_schema = 'public'"
            ):
                columns.setdefault(record["table_name"], []).append(record["column_name"])
            for table, row in _rows_at(at, columns):
                names = ", ".join(row)
                marks = ", ".join(f"${i}" for i in range(1, len(row) + 1))
                await db.execute(f"INSERT INTO {table} ({names}) VALUES ({marks})", *row.values())
                written.setdefault(table, []).append(tuple(row.items()))
            # Ids given by hand leave the sequences behind: the bot's own inserts took them.
            for table in ("games", "challenges", "drills", "tournaments"):
                if table in columns:
                    await db.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                        f" (SELECT max(id) FROM {table}))"
                    )
        finally:
            await db.close()
        storage = await PostgresStorage.open(url, ManualClock(T0 + 1000), pool_size=2)
        try:
            yield storage, written
        finally:
            await storage.close()


async def _read_back(
    storage: Storage, dialect: str, table: str, rows: list[tuple[tuple[str, Any], ...]]
) -> list[tuple[tuple[str, Any], ...]]:
    """``rows``' columns of every row of ``table`` after the migration, as written."""
    names = [name for name, _ in rows[0]]
    statement = f"SELECT {', '.join(names)} FROM {table}"
    found: list[tuple[Any, ...]]
    if dialect == "sqlite":
        assert isinstance(storage, SqliteStorage)
        lite = storage._database
        found = [tuple(row) for row in await storage._run(lambda: lite._rows(statement))]
    else:
        assert isinstance(storage, PostgresStorage)
        found = [tuple(row) for row in await storage._pool.fetch(statement)]
    return [tuple(zip(names, row, strict=True)) for row in found]


@every_dialect
@every_earlier_schema
async def test_every_earlier_schema_migrates_with_every_row_and_live_games_play_on(
    at: int, dialect: str, request: pytest.FixtureRequest
) -> None:
    async with _database_at(at, dialect, request) as (storage, written):
        assert max(await storage.schema_versions()) == NEWEST  # type: ignore[attr-defined]
        for table, rows in written.items():
            if table == "ratings" and at < 11:
                continue  # 0011 replays every rating from the rated games (test_storage.py)
            after = await _read_back(storage, dialect, table, rows)
            assert sorted(after, key=repr) == sorted(rows, key=repr), table
        for game_id in sorted(LIVE_GAMES):
            game = await storage.get_game(game_id)
            if game is None:
                assert game_id in {4, 6}
                assert at < (3 if game_id == 4 else 13)
                continue
            assert game.status is GameStatus.ACTIVE
            move = game.board.legal_moves[0]
            moved = await storage.save_game(
                replace(game, moves=(*game.moves, move), updated_at=T0 + 2000)
            )
            assert moved is not None, game_id
            assert moved.moves[-1] == move
        if at >= 12:
            (tournament,) = await storage.live_tournaments(10)
            assert loads(tournament.state).entries[0].name == "alice"
