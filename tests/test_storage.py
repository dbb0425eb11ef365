"""The storage contract, run against every backend in ``BACKENDS``.

Tests speak only to :class:`bot.storage.Storage` (plus ``schema_versions`` for migrations), so a
new backend joins by adding one entry to ``BACKENDS``. The PostgreSQL one runs on the session's
throwaway cluster (``tests/postgres_cluster.py``), a new database per test.
"""

from __future__ import annotations

import asyncio
import datetime
import sqlite3
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, closing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import asyncpg
import pytest

from bot import results
from bot.clock import ManualClock
from bot.domain import OUTSIDE_SERVERS
from bot.metrics import Metrics, measure_storage
from bot.storage import (
    EVERY_GUILD,
    FORGOTTEN_NAME,
    VS_MEMBER,
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    CooldownError,
    DrillQueue,
    EndReason,
    GameRecord,
    GameStatus,
    LiveGamesLimitError,
    NewChallenge,
    NewDrill,
    NewGame,
    NewTournament,
    PuzzleAttempt,
    PuzzleResult,
    Rating,
    Record,
    ReplyRoute,
    ShardSlice,
    Storage,
    StoredGames,
    StoredSetting,
    TournamentHereError,
    TournamentStatus,
    is_forgotten,
)
from bot.storage.base import GAMES_PRUNED_THROUGH, ThreadSuspects
from bot.storage.migrations import migration_files
from bot.storage.postgres import PostgresStorage
from bot.storage.sql import NUMBERED, QMARK, numbered
from bot.storage.sqlite import SqliteStorage, split_statements
from game import DEFAULT_SIZE, Mark
from tests.old_schemas import migrate_postgres, migrate_sqlite
from tests.postgres_cluster import PostgresCluster


class MigratedStorage(Storage, Protocol):
    async def schema_versions(self) -> dict[int, float]: ...


Opener = Callable[[], Awaitable[MigratedStorage]]


@dataclass(frozen=True)
class Backend:
    name: str
    dialect: str  # the migrations subpackage it applies
    # True when every open() of one database reaches the same data (a file, a server), so
    # reopening and two-connection races can be tested.
    shared: bool
    # Sets up a fresh, empty database for one test and tears it down afterwards; the test's
    # request gives it what it needs (tmp_path, the PostgreSQL cluster).
    database: Callable[[pytest.FixtureRequest], AbstractAsyncContextManager[Opener]]
    marks: tuple[pytest.MarkDecorator, ...] = ()


@pytest.fixture
def clock() -> ManualClock:
    """The clock of every storage a test opens (at T0 until the test moves it)."""
    return ManualClock(T0)


def _clock(request: pytest.FixtureRequest) -> ManualClock:
    found: ManualClock = request.getfixturevalue("clock")
    return found


@asynccontextmanager
async def _sqlite_memory(request: pytest.FixtureRequest) -> AsyncIterator[Opener]:
    clock = _clock(request)
    yield lambda: SqliteStorage.open(":memory:", clock)


@asynccontextmanager
async def _sqlite_file(request: pytest.FixtureRequest) -> AsyncIterator[Opener]:
    tmp_path: Path = request.getfixturevalue("tmp_path")
    path = str(tmp_path / "tttbot.sqlite3")
    clock = _clock(request)
    yield lambda: SqliteStorage.open(path, clock)


@asynccontextmanager
async def _postgres(request: pytest.FixtureRequest) -> AsyncIterator[Opener]:
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    clock = _clock(request)
    async with cluster.fresh_database() as name:
        url = cluster.url(name)
        yield lambda: PostgresStorage.open(url, clock, pool_size=10)


BACKENDS = [
    Backend("sqlite-memory", "sqlite", shared=False, database=_sqlite_memory),
    Backend("sqlite-file", "sqlite", shared=True, database=_sqlite_file),
    Backend(
        "postgres", "postgresql", shared=True, database=_postgres, marks=(pytest.mark.postgres,)
    ),
]


def _params(backends: list[Backend]) -> list[object]:
    return [pytest.param(backend, id=backend.name, marks=backend.marks) for backend in backends]


@pytest.fixture(params=_params(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    chosen: Backend = request.param
    return chosen


@pytest.fixture(params=_params([backend for backend in BACKENDS if backend.shared]))
def shared_backend(request: pytest.FixtureRequest) -> Backend:
    chosen: Backend = request.param
    return chosen


@asynccontextmanager
async def opened(open_storage: Opener) -> AsyncIterator[MigratedStorage]:
    storage = await open_storage()
    try:
        yield storage
    finally:
        await storage.close()


@pytest.fixture
async def storage(
    backend: Backend, request: pytest.FixtureRequest
) -> AsyncIterator[MigratedStorage]:
    async with backend.database(request) as open_storage, opened(open_storage) as storage:
        yield storage


# -- builders ------------------------------------------------------------------------------

GUILD = 10
OTHER_GUILD = 11
CHANNEL = 20
OTHER_CHANNEL = 21
ALICE, BOB, CAROL, DAVE = 101, 102, 103, 104
BOT = 999
T0 = 1_700_000_000.25
SNOWFLAKE = 1_234_567_890_123_456_789


def new_game(
    channel_id: int = CHANNEL,
    x_id: int = ALICE,
    o_id: int = BOB,
    *,
    guild_id: int = GUILD,
    ai_difficulty: str | None = None,
    ai_mark: Mark | None = None,
    deadline: float = T0 + 60,
    moves: tuple[int, ...] = (),
    rematch_of: int | None = None,
    size: int = DEFAULT_SIZE,
) -> NewGame:
    return NewGame(
        guild_id=guild_id,
        channel_id=channel_id,
        x_id=x_id,
        o_id=o_id,
        x_name=f"user{x_id}",
        o_name=f"user{o_id}",
        deadline=deadline,
        created_at=T0,
        ai_difficulty=ai_difficulty,
        ai_mark=ai_mark,
        moves=moves,
        rematch_of=rematch_of,
        size=size,
    )


def vs_ai(
    human: int,
    difficulty: str,
    ai_mark: Mark,
    channel_id: int = CHANNEL,
    *,
    size: int = DEFAULT_SIZE,
) -> NewGame:
    x_id, o_id = (BOT, human) if ai_mark is Mark.X else (human, BOT)
    return new_game(channel_id, x_id, o_id, ai_difficulty=difficulty, ai_mark=ai_mark, size=size)


def new_challenge(
    channel_id: int = CHANNEL,
    challenger_id: int = ALICE,
    opponent_id: int | None = BOB,
    *,
    expires_at: float = T0 + 300,
    guild_id: int = GUILD,
    size: int = DEFAULT_SIZE,
) -> NewChallenge:
    return NewChallenge(
        guild_id=guild_id,
        channel_id=channel_id,
        challenger_id=challenger_id,
        challenger_name=f"user{challenger_id}",
        opponent_id=opponent_id,
        opponent_name=None if opponent_id is None else f"user{opponent_id}",
        expires_at=expires_at,
        created_at=T0,
        size=size,
    )


def moved(game: GameRecord, *cells: int, at: float = T0 + 5) -> GameRecord:
    return replace(game, moves=game.moves + cells, deadline=at + 60, updated_at=at)


def finished(game: GameRecord, winner: Mark | None, reason: EndReason) -> GameRecord:
    return replace(
        game,
        status=GameStatus.FINISHED,
        winner=winner,
        end_reason=reason,
        deadline=None,
        updated_at=game.updated_at + 10,
    )


async def finish(
    storage: Storage, new: NewGame, winner: Mark | None, reason: EndReason
) -> GameRecord:
    game = await storage.create_game(new)
    saved = await storage.save_game(finished(game, winner, reason))
    assert saved is not None
    return saved


# -- migrations ----------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", sorted({backend.dialect for backend in BACKENDS}))
def test_migration_files_are_numbered_from_one(dialect: str) -> None:
    files = migration_files(dialect)
    versions = [version for version, _ in files]
    assert versions[0] == 1
    assert versions == sorted(set(versions))
    assert all("CREATE TABLE" in sql for version, sql in files if version == 1)


def test_split_statements_keeps_semicolons_in_strings_and_triggers() -> None:
    """SQLite only: asyncpg sends a PostgreSQL migration whole, as one simple query."""
    script = (
        "CREATE TABLE t (a TEXT DEFAULT ';');\n"
        "CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET a = 'x;y'; END;\n"
        "-- a trailing comment; with a semicolon\n"
    )
    statements = [s.strip() for s in split_statements(script)]
    assert statements[0] == "CREATE TABLE t (a TEXT DEFAULT ';');"
    assert statements[1].startswith("CREATE TRIGGER")
    assert statements[1].endswith("END;")
    assert statements[2:] == ["-- a trailing comment; with a semicolon"]


def test_placeholders_are_numbered_in_order_outside_quoted_strings() -> None:
    """asyncpg's spelling of a statement written for SQLite."""
    assert numbered("SELECT ? WHERE a = ? AND b IN (?, ?)") == (
        "SELECT $1 WHERE a = $2 AND b IN ($3, $4)"
    )
    assert numbered("SELECT '?', ? || 'it''s ?', ?::TEXT[]") == (
        "SELECT '?', $1 || 'it''s ?', $2::TEXT[]"
    )
    assert numbered("SELECT 1") == "SELECT 1"
    # Spelled once: the same statement each time, and as many placeholders either way.
    assert NUMBERED.save_game is NUMBERED.save_game
    shards = ShardSlice(4, frozenset({1, 3}))
    assert NUMBERED.overdue_games(shards) is NUMBERED.overdue_games(
        ShardSlice(4, frozenset({0, 2}))
    )
    assert NUMBERED.overdue_games(shards).count("$") == QMARK.overdue_games(shards).count("?") == 4


async def test_fresh_database_has_every_migration(
    storage: MigratedStorage, backend: Backend
) -> None:
    applied = await storage.schema_versions()
    assert sorted(applied) == [version for version, _ in migration_files(backend.dialect)]
    # Dated by the clock the storage was given: the bot's clock is the only source of "now".
    assert set(applied.values()) == {T0}


async def test_reopening_keeps_data_and_does_not_reapply_migrations(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    async with shared_backend.database(request) as open_storage:
        async with opened(open_storage) as first:
            game = await first.create_game(new_game())
            await first.set_setting("prefix", "!")
            applied = await first.schema_versions()
        async with opened(open_storage) as second:
            # Re-running 0001 would fail on CREATE TABLE or wipe rows; neither may happen.
            assert await second.schema_versions() == applied
            assert await second.get_game(game.id) == game
            assert await second.get_setting("prefix") == "!"


# -- games ---------------------------------------------------------------------------------


async def test_times_on_whole_seconds_come_back_as_floats(storage: Storage) -> None:
    """SQLite's RETURNING hands a whole-numbered REAL back as an integer; records hold floats."""
    whole = replace(new_game(deadline=1_700_000_060.0), created_at=1_700_000_000.0)
    game = await storage.create_game(whole)
    saved = await storage.save_game(replace(game, deadline=1_700_000_120.0))
    challenge = await storage.create_challenge(
        replace(
            new_challenge(OTHER_CHANNEL, expires_at=1_700_000_300.0), created_at=1_700_000_000.0
        )
    )
    closed = await storage.close_challenge(challenge.id, ChallengeStatus.EXPIRED)
    assert saved is not None
    assert closed is not None
    times = [
        *(
            time
            for kept in (game, saved)
            for time in (kept.deadline, kept.created_at, kept.updated_at)
        ),
        *(time for kept in (challenge, closed[0]) for time in (kept.expires_at, kept.created_at)),
    ]
    assert [type(time) for time in times] == [float] * 10


async def test_create_and_get_game_round_trip(storage: Storage) -> None:
    new = new_game(moves=(4, 0))
    game = await storage.create_game(new)
    assert game.id > 0
    assert (game.guild_id, game.channel_id, game.x_id, game.o_id) == (GUILD, CHANNEL, ALICE, BOB)
    assert (game.x_name, game.o_name) == ("user101", "user102")
    assert game.moves == (4, 0)
    assert game.size == 3
    assert game.status is GameStatus.ACTIVE
    assert game.winner is None
    assert game.end_reason is None
    assert game.message_id is None
    assert game.version == 1
    assert game.deadline == T0 + 60
    assert game.created_at == game.updated_at == T0
    assert game.ai_difficulty is None
    assert game.ai_mark is None
    assert await storage.get_game(game.id) == game
    assert await storage.get_game(game.id + 1000) is None


async def test_ai_game_keeps_its_difficulty_and_mark(storage: Storage) -> None:
    game = await storage.create_game(vs_ai(ALICE, "smart", Mark.X))
    fetched = await storage.get_game(game.id)
    assert fetched is not None
    assert (fetched.ai_difficulty, fetched.ai_mark) == ("smart", Mark.X)
    assert fetched.mark_of(ALICE) is Mark.O
    assert fetched.against_ai


async def test_live_game_is_the_channels_active_game(storage: Storage) -> None:
    assert await storage.live_game_in_channel(CHANNEL) is None
    game = await storage.create_game(new_game())
    assert await storage.live_game_in_channel(CHANNEL) == game
    assert await storage.live_game_in_channel(OTHER_CHANNEL) is None
    done = await storage.save_game(finished(game, Mark.X, EndReason.LINE))
    assert done is not None
    assert await storage.live_game_in_channel(CHANNEL) is None


async def test_one_active_game_per_channel(storage: Storage) -> None:
    first = await storage.create_game(new_game())
    with pytest.raises(ChannelBusyError):
        await storage.create_game(new_game(x_id=CAROL, o_id=DAVE))
    elsewhere = await storage.create_game(new_game(OTHER_CHANNEL, CAROL, DAVE))
    assert elsewhere.channel_id == OTHER_CHANNEL
    assert await storage.live_game_in_channel(CHANNEL) == first
    assert await storage.save_game(finished(first, None, EndReason.DRAW)) is not None
    again = await storage.create_game(new_game(x_id=CAROL, o_id=DAVE))
    assert await storage.live_game_in_channel(CHANNEL) == again


async def test_concurrent_creates_in_one_channel_start_one_game(storage: Storage) -> None:
    results = await asyncio.gather(
        *(storage.create_game(new_game(x_id=ALICE + i, o_id=BOB + 10 + i)) for i in range(5)),
        return_exceptions=True,
    )
    games = [r for r in results if isinstance(r, GameRecord)]
    assert len(games) == 1
    assert all(isinstance(r, ChannelBusyError) for r in results if r not in games)
    assert await storage.live_game_in_channel(CHANNEL) == games[0]


async def test_two_connections_race_for_one_channel(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        results = await asyncio.gather(
            one.create_game(new_game()),
            two.create_game(new_game(x_id=CAROL, o_id=DAVE)),
            return_exceptions=True,
        )
        assert sorted(type(r).__name__ for r in results) == ["ChannelBusyError", "GameRecord"]
        winner = next(r for r in results if isinstance(r, GameRecord))
        assert (
            await one.live_game_in_channel(CHANNEL)
            == await two.live_game_in_channel(CHANNEL)
            == winner
        )


async def test_two_connections_race_for_one_turn(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes (or handlers) applying a move to the same turn: one is applied."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        game = await one.create_game(new_game())
        for turn in range(4):
            results = await asyncio.gather(
                one.save_game(moved(game, turn)), two.save_game(moved(game, turn + 4))
            )
            winners = [r for r in results if r is not None]
            assert len(winners) == 1
            (game,) = winners
            assert game.version == turn + 2
            assert await two.get_game(game.id) == await one.get_game(game.id) == game
        assert len(game.moves) == 4


async def test_save_game_writes_and_bumps_version(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    saved = await storage.save_game(moved(game, 4, at=T0 + 7))
    assert saved is not None
    assert saved.version == 2
    assert saved.moves == (4,)
    assert saved.updated_at == T0 + 7
    assert saved.deadline == T0 + 67
    assert await storage.get_game(game.id) == saved
    again = await storage.save_game(moved(saved, 0, at=T0 + 8))
    assert again is not None
    assert (again.version, again.moves) == (3, (4, 0))


async def test_stale_save_is_refused(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    first = await storage.save_game(moved(game, 4))
    second = await storage.save_game(moved(game, 0))
    assert first is not None
    assert second is None
    stored = await storage.get_game(game.id)
    assert stored is not None
    assert (stored.moves, stored.version) == ((4,), 2)


async def test_concurrent_saves_from_one_read_exactly_one_wins(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    results = await asyncio.gather(*(storage.save_game(moved(game, cell)) for cell in range(9)))
    winners = [r for r in results if r is not None]
    assert len(winners) == 1
    stored = await storage.get_game(game.id)
    assert stored == winners[0]
    assert stored is not None
    assert stored.version == 2


async def test_save_is_refused_on_a_finished_game(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    done = await storage.save_game(finished(game, Mark.X, EndReason.RESIGN))
    assert done is not None
    assert done.status is GameStatus.FINISHED
    assert (done.winner, done.end_reason, done.deadline) == (Mark.X, EndReason.RESIGN, None)
    # Even with the current version, a finished game is never written again.
    assert await storage.save_game(replace(done, status=GameStatus.ACTIVE, moves=(1,))) is None
    assert await storage.get_game(game.id) == done


async def test_set_game_message_keeps_the_version(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    assert await storage.set_game_message(game.id, 555) is None  # it had none
    stored = await storage.get_game(game.id)
    assert stored is not None
    assert (stored.message_id, stored.version) == (555, 1)
    # A save from a read taken before the message was set still wins, and keeps the message.
    saved = await storage.save_game(moved(game, 4))
    assert saved is not None
    assert saved.message_id == 555


async def test_a_board_recorded_after_a_newer_one_leaves_it(storage: Storage) -> None:
    """A board recorded as of a moment (``as_of``: a post's own id, a click's interaction
    id) never displaces one newer than that, recorded before it; one newer it does."""
    game = await storage.create_game(new_game())
    assert await storage.set_game_message(game.id, 556, as_of=556) is None
    assert await storage.set_game_message(game.id, 555, as_of=555) == 556
    assert (await storage.get_game(game.id) or game).message_id == 556
    assert await storage.set_game_message(game.id, 557, as_of=557) == 556
    assert (await storage.get_game(game.id) or game).message_id == 557
    # A click on an older board after the newer was posted adopts the older.
    assert await storage.set_game_message(game.id, 555, as_of=558) == 557
    assert (await storage.get_game(game.id) or game).message_id == 555
    assert await storage.set_game_message(game.id, 556) == 555  # unconditional
    assert await storage.set_game_message(12345, 559, as_of=559) is None  # no such game


async def test_overdue_games_boundary_and_order(storage: Storage) -> None:
    # Created out of deadline order, so that id order would give the wrong answer.
    due = await storage.create_game(new_game(2, deadline=T0))
    late = await storage.create_game(new_game(1, deadline=T0 - 10))
    await storage.create_game(new_game(3, deadline=T0 + 0.001))
    gone = await storage.create_game(new_game(4, deadline=T0 - 100))
    assert await storage.save_game(replace(gone, status=GameStatus.FINISHED)) is not None
    assert [g.id for g in await storage.overdue_games(T0)] == [late.id, due.id]
    assert await storage.overdue_games(T0 - 11) == []


async def test_a_game_saved_as_assisted_stays_so_and_counts_for_nobody(
    storage: Storage,
) -> None:
    game = await storage.create_game(vs_ai(ALICE, "minimax", Mark.O))
    assert not game.assisted
    # A hint is a compare-and-set like a move: the flag with the version it was asked on.
    helped = await storage.save_game(replace(game, assisted=True, updated_at=T0 + 3))
    assert helped is not None
    assert (helped.assisted, helped.version, helped.moves) == (True, 2, ())
    assert await storage.save_game(replace(game, assisted=True)) is None  # a stale version
    assert await storage.get_game(game.id) == helped
    assert await storage.live_game_in_channel(CHANNEL) == helped
    played = await storage.save_game(moved(helped, 4, 0))
    assert played is not None
    assert played.assisted  # later moves keep it
    done = await storage.save_game(finished(played, Mark.X, EndReason.LINE))
    assert done is not None
    assert done.assisted
    # Neither the win nor anything else of it counts; an unassisted game beside it does.
    await finish(storage, vs_ai(ALICE, "minimax", Mark.O, OTHER_CHANNEL), None, EndReason.DRAW)
    stats = await storage.player_stats(GUILD, ALICE)
    assert stats.records == {"minimax": Record(draws=1)}


async def test_a_channels_finished_games_by_number_and_the_last_one(storage: Storage) -> None:
    assert await storage.finished_game_in_channel(CHANNEL) is None
    first = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    second = await finish(storage, new_game(x_id=BOB, o_id=ALICE), None, EndReason.DRAW)
    elsewhere = await finish(storage, new_game(OTHER_CHANNEL), Mark.O, EndReason.RESIGN)
    live = await storage.create_game(new_game())
    # The last one to finish here, not a live one, nor the last one anywhere.
    assert await storage.finished_game_in_channel(CHANNEL) == second
    assert await storage.finished_game_in_channel(OTHER_CHANNEL) == elsewhere
    assert await storage.finished_game_in_channel(CHANNEL, first.id) == first
    assert await storage.finished_game_in_channel(CHANNEL, second.id) == second
    # Another channel's game, a live one, and numbers no game has: none.
    assert await storage.finished_game_in_channel(CHANNEL, elsewhere.id) is None
    assert await storage.finished_game_in_channel(CHANNEL, live.id) is None
    for number in (live.id + 1000, 0, -1, 2**63, 10**20):
        assert await storage.finished_game_in_channel(CHANNEL, number) is None
    done = await storage.save_game(finished(live, Mark.X, EndReason.RESIGN))
    assert done is not None
    assert await storage.finished_game_in_channel(CHANNEL) == done


# -- stats and ratings ---------------------------------------------------------------------


@pytest.mark.parametrize("reason", [EndReason.LINE, EndReason.RESIGN, EndReason.TIMEOUT])
@pytest.mark.parametrize("winner", [Mark.X, Mark.O])
async def test_member_win_counts_for_both_sides(
    storage: Storage, winner: Mark, reason: EndReason
) -> None:
    await finish(storage, new_game(), winner, reason)
    winner_id, loser_id = (ALICE, BOB) if winner is Mark.X else (BOB, ALICE)
    won = await storage.player_stats(GUILD, winner_id)
    lost = await storage.player_stats(GUILD, loser_id)
    assert won.records == {VS_MEMBER: Record(wins=1)}
    assert lost.records == {VS_MEMBER: Record(losses=1)}
    assert (won.rated_games, lost.rated_games) == (1, 1)


async def test_member_draw_counts_for_both_sides(storage: Storage) -> None:
    await finish(storage, new_game(), None, EndReason.DRAW)
    for user in (ALICE, BOB):
        stats = await storage.player_stats(GUILD, user)
        assert stats.against(VS_MEMBER) == Record(draws=1)
        assert stats.rating == results.INITIAL_RATING
        assert stats.rated_games == 1


async def test_ai_games_count_per_difficulty_for_the_human_only(storage: Storage) -> None:
    await finish(storage, vs_ai(ALICE, "random", Mark.O), Mark.X, EndReason.LINE)
    await finish(storage, vs_ai(ALICE, "random", Mark.X), Mark.O, EndReason.TIMEOUT)
    await finish(storage, vs_ai(ALICE, "smart", Mark.X), Mark.X, EndReason.LINE)
    await finish(storage, vs_ai(ALICE, "minimax", Mark.O), None, EndReason.DRAW)
    stats = await storage.player_stats(GUILD, ALICE)
    assert stats.records == {
        "random": Record(wins=2),
        "smart": Record(losses=1),
        "minimax": Record(draws=1),
    }
    assert stats.against(VS_MEMBER) == Record()
    # Games against the bot are never rated, and the bot has no record of its own.
    assert (stats.rating, stats.rated_games) == (None, 0)
    assert (await storage.player_stats(GUILD, BOT)).records == {}
    assert await storage.leaderboard(GUILD) == []


async def test_ended_games_count_for_nobody(storage: Storage) -> None:
    await finish(storage, new_game(), None, EndReason.ENDED)
    await finish(storage, vs_ai(CAROL, "smart", Mark.O, OTHER_CHANNEL), None, EndReason.ENDED)
    for user in (ALICE, BOB, CAROL):
        stats = await storage.player_stats(GUILD, user)
        assert (stats.records, stats.rating, stats.rated_games) == ({}, None, 0)
    assert await storage.leaderboard(GUILD) == []


async def test_player_stats_of_a_stranger_are_empty(storage: Storage) -> None:
    stats = await storage.player_stats(GUILD, DAVE)
    assert (stats.guild_id, stats.user_id) == (GUILD, DAVE)
    assert (stats.records, stats.rating, stats.rated_games) == ({}, None, 0)


async def test_ratings_move_with_results(storage: Storage) -> None:
    first = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    new = results.Standing()
    alice, bob = results.play(new, new, 1.0, at=first.updated_at)
    alice_stats = await storage.player_stats(GUILD, ALICE)
    assert (alice_stats.rating, alice_stats.deviation) == (alice.rating, alice.deviation)
    assert (await storage.player_stats(GUILD, BOB)).rating == bob.rating
    assert alice.rating > results.INITIAL_RATING > bob.rating

    # Bob plays X this time and wins: the update uses each side's current rating.
    second = await finish(storage, new_game(x_id=BOB, o_id=ALICE), Mark.X, EndReason.RESIGN)
    bob, alice = results.play(bob, alice, 1.0, at=second.updated_at)
    board = await storage.leaderboard(GUILD)
    assert [(r.user_id, r.games, r.wins, r.losses, r.draws) for r in board] == [
        (BOB, 2, 1, 1, 0),
        (ALICE, 2, 1, 1, 0),
    ]
    assert [(r.rating, r.deviation, r.last_played) for r in board] == [
        (bob.rating, bob.deviation, second.updated_at),
        (alice.rating, alice.deviation, second.updated_at),
    ]


async def test_deviations_grow_while_members_do_not_play(
    storage: Storage, clock: ManualClock
) -> None:
    played = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    (first, _) = await storage.leaderboard(GUILD)
    kept = results.Standing(first.rating, first.deviation, first.last_played)
    assert (first.user_id, kept.last_played) == (ALICE, played.updated_at)
    clock.advance(played.updated_at + results.RATING_PERIOD_SECONDS - clock.now())
    grown = kept.deviation_at(clock.now())
    assert kept.deviation < grown < results.INITIAL_DEVIATION
    assert (await storage.player_stats(GUILD, ALICE)).deviation == grown
    assert (await storage.leaderboard(GUILD))[0].deviation == grown
    # The next game rates from the grown deviation: from its end, when it was rated.
    game = await storage.create_game(replace(new_game(x_id=ALICE, o_id=CAROL), created_at=T0))
    saved = await storage.save_game(
        replace(finished(game, None, EndReason.DRAW), updated_at=clock.now())
    )
    assert saved is not None
    alice, _carol = results.play(kept, results.Standing(), 0.5, at=clock.now())
    stats = await storage.player_stats(GUILD, ALICE)
    assert (stats.rating, stats.deviation) == (alice.rating, alice.deviation)
    assert alice.deviation < grown


async def test_leaderboard_order_limit_and_guild(storage: Storage) -> None:
    # Draws between equals keep everyone at exactly the initial rating, so the tie-breaks
    # decide: more games first, then the lower user id.
    for _ in range(2):
        await finish(storage, new_game(x_id=DAVE, o_id=CAROL), None, EndReason.DRAW)
    await finish(storage, new_game(x_id=BOB, o_id=ALICE), None, EndReason.DRAW)
    await finish(storage, new_game(x_id=5, o_id=6), Mark.X, EndReason.LINE)
    await finish(storage, new_game(guild_id=OTHER_GUILD, x_id=7, o_id=8), Mark.X, EndReason.LINE)
    board = await storage.leaderboard(GUILD)
    assert [r.user_id for r in board] == [5, CAROL, DAVE, ALICE, BOB, 6]
    assert [r.games for r in board] == [1, 2, 2, 1, 1, 1]
    assert [r.user_id for r in await storage.leaderboard(GUILD, limit=2)] == [5, CAROL]
    assert await storage.leaderboard(GUILD, limit=0) == []
    assert [r.user_id for r in await storage.leaderboard(OTHER_GUILD)] == [7, 8]


async def test_stats_and_ratings_are_per_board_size(storage: Storage) -> None:
    first = await finish(storage, new_game(size=4), Mark.X, EndReason.LINE)
    await finish(storage, new_game(x_id=BOB, o_id=ALICE, size=5), None, EndReason.DRAW)
    await finish(storage, vs_ai(ALICE, "minimax", Mark.X, size=5), Mark.X, EndReason.LINE)
    # Nothing of it is 3x3's, the size asked for when none is named.
    alice = await storage.player_stats(GUILD, ALICE)
    assert (alice.size, alice.records, alice.rating, alice.rated_games) == (3, {}, None, 0)
    assert await storage.leaderboard(GUILD) == []
    on_4 = await storage.player_stats(GUILD, ALICE, size=4)
    assert (on_4.size, on_4.records, on_4.rated_games) == (4, {VS_MEMBER: Record(wins=1)}, 1)
    on_5 = await storage.player_stats(GUILD, ALICE, size=5)
    assert on_5.records == {VS_MEMBER: Record(draws=1), "minimax": Record(losses=1)}
    # Each size's rating starts afresh: a draw between two new players leaves them where they
    # began.
    assert on_5.rating == results.INITIAL_RATING
    new = results.Standing()
    win, loss = results.play(new, new, 1.0, at=first.updated_at)
    assert on_4.rating == win.rating
    ranked = await storage.leaderboard(GUILD, size=4)
    assert [r.user_id for r in ranked] == [ALICE, BOB]
    assert [r.rating for r in ranked] == [win.rating, loss.rating]
    assert [r.user_id for r in await storage.leaderboard(GUILD, 1, size=5)] == [ALICE]
    # A second 4x4 game rates from the 4x4 ratings, not the 5x5 ones.
    second = await finish(storage, new_game(x_id=BOB, o_id=ALICE, size=4), Mark.X, EndReason.RESIGN)
    bob, alice_4 = results.play(loss, win, 1.0, at=second.updated_at)
    assert (await storage.player_stats(GUILD, BOB, size=4)).rating == bob.rating
    assert (await storage.player_stats(GUILD, ALICE, size=4)).rating == alice_4.rating
    assert (await storage.player_stats(GUILD, BOB, size=5)).rating == results.INITIAL_RATING


async def test_stats_are_per_guild(storage: Storage) -> None:
    await finish(storage, new_game(guild_id=OTHER_GUILD), Mark.X, EndReason.LINE)
    assert (await storage.player_stats(GUILD, ALICE)).records == {}
    assert (await storage.player_stats(OTHER_GUILD, ALICE)).records == {VS_MEMBER: Record(1)}


async def test_games_finishing_at_once_for_one_player_count_from_each_other(
    storage: Storage,
) -> None:
    """Each rating update starts from the rating the other games left: none is lost."""
    opponents = [BOB, CAROL, DAVE, 105, 106]
    games = [
        await storage.create_game(new_game(CHANNEL + i, ALICE, opponent))
        for i, opponent in enumerate(opponents)
    ]
    results_ = await asyncio.gather(
        *(storage.save_game(finished(game, Mark.X, EndReason.LINE)) for game in games)
    )
    assert all(r is not None for r in results_)
    # Alice's rating does not depend on the order the games counted in: each opponent
    # starts afresh, and every game ended at the same moment.
    (ended_at,) = {saved.updated_at for saved in results_ if saved is not None}
    expected, losers = results.Standing(), []
    for _ in opponents:
        expected, lost = results.play(expected, results.Standing(), 1.0, at=ended_at)
        losers.append(lost.rating)
    alice = await storage.player_stats(GUILD, ALICE)
    assert (alice.rating, alice.deviation) == (expected.rating, expected.deviation)
    assert alice.rated_games == len(opponents)
    assert alice.against(VS_MEMBER) == Record(wins=len(opponents))
    board = await storage.leaderboard(GUILD)
    # Each opponent lost to Alice as one of the games had left her: none was rated from a
    # rating another game had already moved on from.
    assert sorted(r.rating for r in board if r.user_id != ALICE) == sorted(losers)
    assert [r.games for r in board] == [len(opponents), 1, 1, 1, 1, 1]


async def test_a_game_counts_once_even_if_finished_twice(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    ending = finished(game, Mark.X, EndReason.LINE)
    assert await storage.save_game(ending) is not None
    assert await storage.save_game(ending) is None
    # Two racing finishes (say a winning click and the timeout sweeper) also count once.
    other = await storage.create_game(new_game(OTHER_CHANNEL))
    results = await asyncio.gather(
        storage.save_game(finished(other, Mark.X, EndReason.LINE)),
        storage.save_game(finished(other, Mark.O, EndReason.TIMEOUT)),
    )
    assert sum(r is not None for r in results) == 1
    alice = await storage.player_stats(GUILD, ALICE)
    bob = await storage.player_stats(GUILD, BOB)
    assert alice.against(VS_MEMBER).games == bob.against(VS_MEMBER).games == 2
    assert alice.rated_games == bob.rated_games == 2


async def test_a_game_against_the_bot_counts_once_even_if_finished_twice(
    storage: Storage,
) -> None:
    # Unrated, so its stats may be written by another path than a rated game's: the same rule.
    game = await storage.create_game(vs_ai(ALICE, "smart", Mark.O))
    ending = finished(game, Mark.X, EndReason.LINE)
    assert await storage.save_game(ending) is not None
    assert await storage.save_game(ending) is None
    other = await storage.create_game(vs_ai(ALICE, "smart", Mark.O, OTHER_CHANNEL))
    results = await asyncio.gather(
        storage.save_game(finished(other, Mark.X, EndReason.LINE)),
        storage.save_game(finished(other, Mark.O, EndReason.TIMEOUT)),
    )
    assert sum(r is not None for r in results) == 1
    stats = await storage.player_stats(GUILD, ALICE)
    assert stats.against("smart") in (Record(wins=2), Record(wins=1, losses=1))


# -- rematches -----------------------------------------------------------------------------


async def test_a_game_is_rematched_at_most_once(storage: Storage) -> None:
    original = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    rematch = await storage.create_game(new_game(x_id=BOB, o_id=ALICE, rematch_of=original.id))
    assert rematch.rematch_of == original.id
    # A second click while the rematch runs is told why, not just that the channel is busy.
    with pytest.raises(AlreadyRematchedError):
        await storage.create_game(new_game(x_id=BOB, o_id=ALICE, rematch_of=original.id))
    assert await storage.save_game(finished(rematch, None, EndReason.DRAW)) is not None
    with pytest.raises(AlreadyRematchedError):
        await storage.create_game(new_game(OTHER_CHANNEL, rematch_of=original.id))
    assert await storage.live_game_in_channel(OTHER_CHANNEL) is None
    # The rematch itself can be rematched.
    third = await storage.create_game(new_game(rematch_of=rematch.id))
    assert third.rematch_of == rematch.id


async def test_racing_rematches_start_one_and_tell_the_others_why(storage: Storage) -> None:
    original = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    results = await asyncio.gather(
        *(
            storage.create_game(new_game(x_id=BOB, o_id=ALICE, rematch_of=original.id))
            for _ in range(4)
        ),
        return_exceptions=True,
    )
    assert sorted(type(r).__name__ for r in results) == [
        "AlreadyRematchedError",
        "AlreadyRematchedError",
        "AlreadyRematchedError",
        "GameRecord",
    ]


# -- challenges ----------------------------------------------------------------------------


async def test_create_and_get_challenge(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge())
    assert challenge.id > 0
    assert challenge.status is ChallengeStatus.PENDING
    assert (challenge.challenger_id, challenge.opponent_id) == (ALICE, BOB)
    assert (challenge.challenger_name, challenge.opponent_name) == ("user101", "user102")
    assert (challenge.expires_at, challenge.created_at) == (T0 + 300, T0)
    assert challenge.message_id is None
    assert challenge.game_id is None
    assert await storage.get_challenge(challenge.id) == challenge
    assert await storage.get_challenge(challenge.id + 1000) is None
    assert await storage.pending_challenge_in_channel(CHANNEL) == challenge
    assert await storage.pending_challenge_in_channel(OTHER_CHANNEL) is None


async def test_a_challenge_keeps_its_board_size(storage: Storage) -> None:
    assert (await storage.create_challenge(new_challenge())).size == 3
    challenge = await storage.create_challenge(new_challenge(OTHER_CHANNEL, size=5))
    assert challenge.size == 5
    assert await storage.get_challenge(challenge.id) == challenge
    assert await storage.pending_challenge_in_channel(OTHER_CHANNEL) == challenge
    result = await storage.close_challenge(
        challenge.id, ChallengeStatus.ACCEPTED, new_game(OTHER_CHANNEL, size=challenge.size)
    )
    assert result is not None
    closed, game = result
    assert (closed.size, game and game.size) == (5, 5)


async def test_open_challenge_has_no_opponent(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge(opponent_id=None))
    assert (challenge.opponent_id, challenge.opponent_name) == (None, None)
    assert await storage.get_challenge(challenge.id) == challenge


async def test_one_pending_challenge_per_channel(storage: Storage) -> None:
    first = await storage.create_challenge(new_challenge())
    with pytest.raises(ChannelBusyError):
        await storage.create_challenge(new_challenge(challenger_id=CAROL, opponent_id=DAVE))
    elsewhere = await storage.create_challenge(new_challenge(OTHER_CHANNEL))
    assert elsewhere.channel_id == OTHER_CHANNEL
    assert await storage.pending_challenge_in_channel(CHANNEL) == first


async def test_no_challenge_while_a_game_is_live(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    with pytest.raises(ChannelBusyError):
        await storage.create_challenge(new_challenge(challenger_id=CAROL, opponent_id=DAVE))
    assert await storage.pending_challenge_in_channel(CHANNEL) is None
    assert await storage.save_game(finished(game, Mark.O, EndReason.LINE)) is not None
    challenge = await storage.create_challenge(new_challenge())
    assert await storage.pending_challenge_in_channel(CHANNEL) == challenge


@pytest.mark.parametrize(
    "status", [ChallengeStatus.DECLINED, ChallengeStatus.WITHDRAWN, ChallengeStatus.EXPIRED]
)
async def test_closing_without_a_game(storage: Storage, status: ChallengeStatus) -> None:
    challenge = await storage.create_challenge(new_challenge())
    result = await storage.close_challenge(challenge.id, status)
    assert result is not None
    closed, game = result
    assert game is None
    assert (closed.id, closed.status, closed.game_id) == (challenge.id, status, None)
    assert await storage.get_challenge(challenge.id) == closed
    assert await storage.pending_challenge_in_channel(CHANNEL) is None
    assert await storage.live_game_in_channel(CHANNEL) is None
    assert await storage.close_challenge(challenge.id, ChallengeStatus.EXPIRED) is None
    # The channel is free for the next challenge.
    assert (await storage.create_challenge(new_challenge())).id != challenge.id


async def test_accepting_starts_the_game_atomically(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge())
    result = await storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game())
    assert result is not None
    closed, game = result
    assert game is not None
    assert closed.status is ChallengeStatus.ACCEPTED
    assert closed.game_id == game.id
    assert game.is_active
    assert game.version == 1
    assert await storage.live_game_in_channel(CHANNEL) == game
    assert await storage.pending_challenge_in_channel(CHANNEL) is None
    assert await storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game()) is None
    assert await storage.close_challenge(challenge.id, ChallengeStatus.WITHDRAWN) is None


async def test_racing_accepts_start_one_game(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge(opponent_id=None))
    results = await asyncio.gather(
        storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game(x_id=BOB)),
        storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game(x_id=CAROL)),
        storage.close_challenge(challenge.id, ChallengeStatus.WITHDRAWN),
    )
    done = [r for r in results if r is not None]
    assert len(done) == 1
    closed, game = done[0]
    assert await storage.get_challenge(challenge.id) == closed
    assert await storage.live_game_in_channel(CHANNEL) == game


async def test_no_game_while_a_challenge_is_pending(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge())
    with pytest.raises(ChannelBusyError):
        await storage.create_game(vs_ai(CAROL, "smart", Mark.O))
    assert await storage.live_game_in_channel(CHANNEL) is None
    assert await storage.pending_challenge_in_channel(CHANNEL) == challenge
    assert await storage.close_challenge(challenge.id, ChallengeStatus.WITHDRAWN) is not None
    game = await storage.create_game(vs_ai(CAROL, "smart", Mark.O))
    assert await storage.live_game_in_channel(CHANNEL) == game


async def test_a_challenge_and_a_game_racing_for_one_channel_leave_one(storage: Storage) -> None:
    for attempt in range(10):
        channel = CHANNEL + 100 + attempt
        results = await asyncio.gather(
            storage.create_challenge(new_challenge(channel)),
            storage.create_game(vs_ai(CAROL, "smart", Mark.O, channel)),
            return_exceptions=True,
        )
        assert sum(isinstance(r, ChannelBusyError) for r in results) == 1, results
        challenge = await storage.pending_challenge_in_channel(channel)
        game = await storage.live_game_in_channel(channel)
        assert (challenge is None) != (game is None)


async def test_a_database_with_both_from_before_the_rule_keeps_the_game(tmp_path: Path) -> None:
    """Migration 0002 on a database where the old race left a live game and a pending challenge
    in one channel: the game keeps the channel; the challenge can only be closed.

    SQLite only: no PostgreSQL database predates its 0002 (the two came together); a copy of
    such a SQLite database into PostgreSQL is tested in ``test_migrate_to_postgres.py``."""
    path = tmp_path / "old.sqlite3"
    ((_, initial),) = [m for m in migration_files("sqlite") if m[0] == 1]
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
        for statement in split_statements(initial):
            db.execute(statement)
        db.execute("INSERT INTO schema_migrations VALUES (1, 0)")
        db.execute(
            "INSERT INTO games (guild_id, channel_id, x_id, o_id, x_name, o_name, size, status,"
            " version, created_at, updated_at) VALUES (?, ?, ?, ?, 'a', 'b', 3, 'active', 1, 0, 0)",
            (GUILD, CHANNEL, ALICE, BOB),
        )
        db.execute(
            "INSERT INTO challenges (guild_id, channel_id, challenger_id, challenger_name, status,"
            " expires_at, created_at) VALUES (?, ?, ?, 'carol', 'pending', 0, 0)",
            (GUILD, CHANNEL, CAROL),
        )
    storage = await SqliteStorage.open(str(path), ManualClock(T0))
    try:
        game = await storage.live_game_in_channel(CHANNEL)
        challenge = await storage.pending_challenge_in_channel(CHANNEL)
        assert game is not None
        assert challenge is not None
        with pytest.raises(ChannelBusyError):
            await storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game())
        assert await storage.get_challenge(challenge.id) == challenge
        assert await storage.close_challenge(challenge.id, ChallengeStatus.EXPIRED) is not None
        assert await storage.live_game_in_channel(CHANNEL) == game
    finally:
        await storage.close()


# What a database from before migration 0003 (board sizes) holds: all of it played on 3x3.
BEFORE_SIZES = (
    "INSERT INTO challenges (guild_id, channel_id, challenger_id, challenger_name, status,"
    " expires_at, created_at) VALUES (10, 20, 101, 'alice', 'pending', 0, 0)",
    "INSERT INTO player_stats (guild_id, user_id, opponent, wins, losses, draws) VALUES"
    " (10, 101, 'member', 2, 1, 0), (10, 101, 'smart', 0, 3, 1), (10, 102, 'member', 1, 2, 0)",
    "INSERT INTO ratings (guild_id, user_id, rating, games, wins, losses, draws)"
    " VALUES (10, 101, 1234.5, 3, 2, 1, 0), (10, 102, 1165.5, 3, 1, 2, 0)",
)


@asynccontextmanager
async def _database_before(
    version: int, rows: tuple[str, ...], dialect: str, request: pytest.FixtureRequest
) -> AsyncIterator[Opener]:
    """A database at the schema before migration ``version``, holding ``rows``; opening it
    migrates it."""
    older = [(number, sql) for number, sql in migration_files(dialect) if number < version]
    if dialect == "sqlite":
        path = str(request.getfixturevalue("tmp_path") / "old.sqlite3")
        with closing(sqlite3.connect(path)) as lite, lite:
            migrate_sqlite(lite, older)
            for statement in rows:
                lite.execute(statement)
        yield lambda: SqliteStorage.open(path, ManualClock(T0))
        return
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    async with cluster.fresh_database() as name:
        url = cluster.url(name)
        db = await asyncpg.connect(url)
        try:
            await migrate_postgres(db, older)
            for statement in rows:
                await db.execute(statement)
        finally:
            await db.close()
        yield lambda: PostgresStorage.open(url, ManualClock(T0), pool_size=2)


@asynccontextmanager
async def _migrated_from(
    version: int, rows: tuple[str, ...], dialect: str, request: pytest.FixtureRequest
) -> AsyncIterator[MigratedStorage]:
    """The storage opened on :func:`_database_before`'s database: migrated from there."""
    async with (
        _database_before(version, rows, dialect, request) as open_storage,
        opened(open_storage) as storage,
    ):
        yield storage


every_dialect = pytest.mark.parametrize(
    "dialect", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)


@every_dialect
async def test_a_database_from_before_board_sizes_keeps_everything_as_3x3(
    dialect: str, request: pytest.FixtureRequest
) -> None:
    async with _migrated_from(3, BEFORE_SIZES, dialect, request) as storage:
        assert 3 in await storage.schema_versions()
        challenge = await storage.pending_challenge_in_channel(CHANNEL)
        assert challenge is not None
        assert challenge.size == 3
        alice = await storage.player_stats(GUILD, ALICE)
        assert alice.records == {VS_MEMBER: Record(2, 1, 0), "smart": Record(0, 3, 1)}
        assert (alice.rating, alice.rated_games) == (1234.5, 3)
        assert [(r.user_id, r.rating) for r in await storage.leaderboard(GUILD)] == [
            (ALICE, 1234.5),
            (BOB, 1165.5),
        ]
        assert (await storage.player_stats(GUILD, ALICE, size=4)).records == {}
        assert await storage.leaderboard(GUILD, size=4) == []
        # The same players start afresh on a larger board, beside their 3x3 rows.
        assert await storage.close_challenge(challenge.id, ChallengeStatus.WITHDRAWN)
        await finish(storage, new_game(size=4), Mark.O, EndReason.LINE)
        assert (await storage.player_stats(GUILD, ALICE, size=4)).records == {
            VS_MEMBER: Record(losses=1)
        }
        assert (await storage.player_stats(GUILD, ALICE)).rating == 1234.5
        await finish(storage, new_game(), Mark.X, EndReason.LINE)
        assert (await storage.player_stats(GUILD, ALICE)).against(VS_MEMBER) == Record(3, 1, 0)


# What a database from before migration 0006 (hints) holds: a finished game, which had none.
BEFORE_HINTS = (
    "INSERT INTO games (guild_id, channel_id, x_id, o_id, x_name, o_name, size, moves, status,"
    " winner, end_reason, version, created_at, updated_at)"
    " VALUES (10, 20, 101, 102, 'alice', 'bob', 3, '0,3,1,4,2', 'finished', 'X', 'line', 6, 0, 0)",
)


@every_dialect
async def test_a_database_from_before_hints_keeps_its_games_unassisted(
    dialect: str, request: pytest.FixtureRequest
) -> None:
    async with _migrated_from(6, BEFORE_HINTS, dialect, request) as storage:
        assert 6 in await storage.schema_versions()
        old = await storage.finished_game_in_channel(CHANNEL)
        assert old is not None
        assert (old.moves, old.winner, old.assisted) == ((0, 3, 1, 4, 2), Mark.X, False)
        # A game started now begins unassisted too, and takes the flag when saved with it.
        game = await storage.create_game(vs_ai(ALICE, "smart", Mark.O))
        assert not game.assisted
        helped = await storage.save_game(replace(game, assisted=True))
        assert helped is not None
        assert helped.assisted


# What a database from before migration 0011 (ratings with deviations) holds: rated games and
# the Elo ratings they gave, ids in the order inserted (from 1). The games finished in another
# order than they started; two ended at the same moment (then the lower id counts first).
FORGOTTEN = -7
PRUNED_ONLY = 105  # every rated game of theirs was pruned: only their ratings row is left


def _old_game(
    x_id: int,
    o_id: int,
    winner: Mark | None,
    reason: EndReason,
    ended_at: float,
    *,
    guild_id: int = GUILD,
    size: int = DEFAULT_SIZE,
    ai_mark: Mark | None = None,
    assisted: bool = False,
) -> GameRecord:
    return GameRecord(
        guild_id=guild_id,
        channel_id=CHANNEL,
        x_id=x_id,
        o_id=o_id,
        x_name="x",
        o_name="o",
        ai_difficulty=None if ai_mark is None else "smart",
        ai_mark=ai_mark,
        size=size,
        id=0,  # numbered below
        moves=(),
        status=GameStatus.FINISHED,
        winner=winner,
        end_reason=reason,
        message_id=None,
        deadline=None,
        version=2,
        created_at=ended_at - 60,
        updated_at=ended_at,
        assisted=assisted,
    )


A_DAY = 24 * 3600.0
X, O, LINE, DRAW = Mark.X, Mark.O, EndReason.LINE, EndReason.DRAW  # noqa: E741
OLD_GAMES = tuple(
    replace(game, id=number)
    for number, game in enumerate(
        (
            _old_game(ALICE, BOB, X, LINE, T0 - 90 * A_DAY),
            _old_game(CAROL, ALICE, None, DRAW, T0 - 95 * A_DAY),  # ended before the first
            _old_game(BOB, CAROL, O, EndReason.RESIGN, T0 - 60 * A_DAY),
            _old_game(DAVE, ALICE, X, EndReason.TIMEOUT, T0 - 60 * A_DAY),  # same moment as 3
            _old_game(ALICE, FORGOTTEN, X, LINE, T0 - 40 * A_DAY),
            _old_game(FORGOTTEN, BOB, None, DRAW, T0 - 30 * A_DAY),
            _old_game(ALICE, BOB, O, LINE, T0 - 20 * A_DAY, size=4),
            _old_game(ALICE, BOB, X, LINE, T0 - 20 * A_DAY, guild_id=OTHER_GUILD),
            # Counted for nobody's rating: against the bot, assisted, ended, the same member.
            _old_game(ALICE, BOT, X, LINE, T0 - 10 * A_DAY, ai_mark=O),
            _old_game(BOT, BOB, O, LINE, T0 - 9 * A_DAY, ai_mark=X, assisted=True),
            _old_game(ALICE, BOB, None, EndReason.ENDED, T0 - 8 * A_DAY),
            _old_game(CAROL, CAROL, X, LINE, T0 - 7 * A_DAY),
            _old_game(BOB, ALICE, None, DRAW, T0 - 2 * A_DAY),
            _old_game(CAROL, DAVE, O, LINE, T0 - 1 * A_DAY),
        ),
        start=1,
    )
)
# The stored rated records: as the games count them, but Dave's also counts three games since
# pruned, and PRUNED_ONLY has nothing else left.
OLD_RECORDS = {
    (GUILD, 3, ALICE): (5, 2, 1, 2),
    (GUILD, 3, BOB): (4, 0, 2, 2),
    (GUILD, 3, CAROL): (3, 1, 1, 1),
    (GUILD, 3, DAVE): (2 + 3, 2 + 2, 0 + 1, 0),
    (GUILD, 3, PRUNED_ONLY): (4, 3, 1, 0),
    (GUILD, 4, ALICE): (1, 0, 1, 0),
    (GUILD, 4, BOB): (1, 1, 0, 0),
    (OTHER_GUILD, 3, ALICE): (1, 1, 0, 0),
    (OTHER_GUILD, 3, BOB): (1, 0, 1, 0),
}


def _sql_value(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, Mark | EndReason | GameStatus):
        return f"'{value.value}'"
    return repr(value) if not isinstance(value, str) else f"'{value}'"


BEFORE_DEVIATIONS = tuple(
    "INSERT INTO games (guild_id, channel_id, x_id, o_id, x_name, o_name, ai_difficulty,"
    " ai_mark, size, status, winner, end_reason, version, created_at, updated_at, assisted)"
    " VALUES ("
    + ", ".join(
        _sql_value(getattr(game, name))
        for name in (
            "guild_id",
            "channel_id",
            "x_id",
            "o_id",
            "x_name",
            "o_name",
            "ai_difficulty",
            "ai_mark",
            "size",
            "status",
            "winner",
            "end_reason",
            "version",
            "created_at",
            "updated_at",
            "assisted",
        )
    )
    + ")"
    for game in OLD_GAMES
) + tuple(
    "INSERT INTO ratings (guild_id, user_id, size, rating, games, wins, losses, draws)"
    f" VALUES ({guild_id}, {user_id}, {size}, {1200.0 + user_id + size}, {games}, {wins},"
    f" {losses}, {draws})"
    for (guild_id, size, user_id), (games, wins, losses, draws) in OLD_RECORDS.items()
)


@every_dialect
async def test_migrating_ratings_replays_every_rated_game_in_the_order_they_finished(
    dialect: str, request: pytest.FixtureRequest
) -> None:
    by_end = sorted(OLD_GAMES, key=lambda game: (game.updated_at, game.id))
    replayed = results.replay(by_end)
    assert replayed != results.replay(OLD_GAMES)  # the order matters, and is the finish's
    assert (GUILD, 3, FORGOTTEN) in replayed  # rated their opponents, but has no row
    async with _migrated_from(11, BEFORE_DEVIATIONS, dialect, request) as storage:
        assert 11 in await storage.schema_versions()
        for guild_id, size in ((GUILD, 3), (GUILD, 4), (OTHER_GUILD, 3)):
            expected = [
                replace(row, games=games, wins=wins, losses=losses, draws=draws)
                for (g, s, user_id), row in replayed.items()
                if (g, s) == (guild_id, size) and user_id > 0
                for games, wins, losses, draws in [OLD_RECORDS[g, s, user_id]]
            ]
            if (guild_id, size) == (GUILD, 3):
                # Nothing of theirs to replay: the rating stays, as unsure as a newcomer's.
                games, wins, losses, draws = OLD_RECORDS[GUILD, 3, PRUNED_ONLY]
                rating = 1200.0 + PRUNED_ONLY + 3
                expected.append(
                    Rating(PRUNED_ONLY, rating, 350.0, games, wins, losses, draws, None)
                )
            board = await storage.leaderboard(guild_id, 100, size=size)
            assert board == results.ranked(expected, T0)
            for row in expected:
                stats = await storage.player_stats(guild_id, row.user_id, size=size)
                assert (stats.rating, stats.rated_games) == (row.rating, row.games)
        # The replayed ratings go on from where the replay left them.
        game = await storage.create_game(new_game(x_id=CAROL, o_id=DAVE))
        saved = await storage.save_game(finished(game, None, DRAW))
        assert saved is not None
        carol, _ = results.play(
            results.Standing(
                replayed[GUILD, 3, CAROL].rating,
                replayed[GUILD, 3, CAROL].deviation,
                replayed[GUILD, 3, CAROL].last_played,
            ),
            results.Standing(
                replayed[GUILD, 3, DAVE].rating,
                replayed[GUILD, 3, DAVE].deviation,
                replayed[GUILD, 3, DAVE].last_played,
            ),
            0.5,
            at=saved.updated_at,
        )
        assert (await storage.player_stats(GUILD, CAROL)).rating == carol.rating


async def test_close_challenge_rejects_nonsense(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge())
    with pytest.raises(ValueError, match="pending"):
        await storage.close_challenge(challenge.id, ChallengeStatus.PENDING)
    with pytest.raises(ValueError, match="accepted"):
        await storage.close_challenge(challenge.id, ChallengeStatus.DECLINED, new_game())
    assert await storage.get_challenge(challenge.id) == challenge
    assert await storage.live_game_in_channel(CHANNEL) is None


async def test_a_first_message_is_recorded_only_where_there_is_none(storage: Storage) -> None:
    """Two sweeps posting one unshown game or challenge: the first message recorded stays."""
    game = await storage.create_game(new_game())
    challenge = await storage.create_challenge(new_challenge(2))
    assert await storage.first_game_message(game.id, 555)
    assert not await storage.first_game_message(game.id, 556)
    assert await storage.first_challenge_message(challenge.id, 777)
    assert not await storage.first_challenge_message(challenge.id, 778)
    stored_game = await storage.get_game(game.id)
    stored_challenge = await storage.get_challenge(challenge.id)
    assert stored_game is not None
    assert stored_challenge is not None
    assert (stored_game.message_id, stored_game.version) == (555, 1)
    assert stored_challenge.message_id == 777
    assert not await storage.first_game_message(12345, 1)


async def test_closing_an_unknown_challenge(storage: Storage) -> None:
    assert await storage.close_challenge(12345, ChallengeStatus.EXPIRED) is None


async def test_set_challenge_message(storage: Storage) -> None:
    challenge = await storage.create_challenge(new_challenge())
    assert await storage.set_challenge_message(challenge.id, 777) is None
    assert await storage.set_challenge_message(challenge.id, 778) == 777
    stored = await storage.get_challenge(challenge.id)
    assert stored == replace(challenge, message_id=778)
    assert await storage.set_challenge_message(12345, 779) is None  # no such challenge
    # An older message recorded late (a post held on its way) leaves the newer in place.
    assert await storage.set_challenge_message(challenge.id, 776) == 778
    assert await storage.get_challenge(challenge.id) == replace(challenge, message_id=778)


async def test_overdue_challenges_boundary(storage: Storage) -> None:
    late = await storage.create_challenge(new_challenge(1, expires_at=T0 - 5))
    due = await storage.create_challenge(new_challenge(2, expires_at=T0))
    await storage.create_challenge(new_challenge(3, expires_at=T0 + 0.001))
    gone = await storage.create_challenge(new_challenge(4, expires_at=T0 - 50))
    assert await storage.close_challenge(gone.id, ChallengeStatus.DECLINED) is not None
    assert {c.id for c in await storage.overdue_challenges(T0)} == {late.id, due.id}
    assert await storage.overdue_challenges(T0 - 6) == []


# -- settings and ids ----------------------------------------------------------------------


async def test_settings_get_set_overwrite(storage: Storage) -> None:
    assert await storage.get_setting("status") is None
    await storage.set_setting("status", "playing")
    await storage.set_setting("other", "x")
    assert await storage.get_setting("status") == "playing"
    await storage.set_setting("status", "")
    assert await storage.get_setting("status") == ""
    assert await storage.get_setting("other") == "x"


async def test_live_games_counts_the_games_being_played_everywhere(storage: Storage) -> None:
    await storage.ping()  # a database that answers: no error
    assert await storage.live_games() == 0
    await storage.create_game(new_game())
    await storage.create_game(vs_ai(ALICE, "minimax", Mark.O, OTHER_CHANNEL))
    await storage.create_game(new_game(channel_id=CHANNEL + 100, guild_id=GUILD + 1))
    await finish(storage, new_game(channel_id=CHANNEL + 200), Mark.X, EndReason.LINE)
    assert await storage.live_games() == 3


async def test_measured_storage_times_each_operation_and_counts_games_begun_and_ended(
    storage: Storage,
) -> None:
    metrics = Metrics()
    measure_storage(storage, metrics)

    def sample(name: str, **labels: str) -> float:
        return metrics.registry.get_sample_value(name, labels) or 0.0

    def begun(level: str, size: str = "3x3") -> float:
        return sample("tttbot_games_started_total", size=size, level=level)

    def ended(level: str, size: str = "3x3") -> float:
        return sample("tttbot_games_finished_total", size=size, level=level)

    members = await storage.create_game(new_game())
    against_bot = await storage.create_game(vs_ai(ALICE, "minimax", Mark.O, OTHER_CHANNEL))
    challenge = await storage.create_challenge(new_challenge(CHANNEL + 10, size=4))
    accepted = await storage.close_challenge(
        challenge.id, ChallengeStatus.ACCEPTED, new_game(CHANNEL + 10, CAROL, DAVE, size=4)
    )
    assert accepted is not None
    assert (begun("members"), begun("minimax"), begun("members", "4x4")) == (1, 1, 1)
    # A move is no end; a finishing save is, and so are a member forgotten and a server erased.
    assert await storage.save_game(moved(against_bot, 0)) is not None
    assert ended("minimax") == 0
    assert await storage.save_game(finished(members, Mark.X, EndReason.LINE)) is not None
    assert ended("members") == 1
    await storage.forget_member(ALICE, T0 + 100)  # her game against the bot ends with it
    assert ended("minimax") == 1
    await storage.create_game(new_game(CHANNEL + 20, guild_id=OTHER_GUILD))
    await storage.erase_guild(OTHER_GUILD)
    assert ended("members") == 2
    assert ended("members", "4x4") == 0  # still being played
    count = "tttbot_database_operation_seconds_count"
    assert sample(count, operation="create_game") == 3
    assert sample(count, operation="save_game") == 2
    assert sample(count, operation="close_challenge") == 1
    assert sample(count, operation="live_games") == 0
    assert await storage.live_games() == 1
    assert sample(count, operation="live_games") == 1


async def test_measured_storage_counts_a_tournaments_game_as_begun(storage: Storage) -> None:
    """A round's game starts by its own operation: counted as begun, so that started and
    finished games add up on the dashboard."""
    metrics = Metrics()
    measure_storage(storage, metrics)

    def sample(name: str) -> float:
        labels = {"size": "3x3", "level": "members"}
        return metrics.registry.get_sample_value(name, labels) or 0.0

    tournament = await storage.create_tournament(new_tournament())
    game = await storage.start_tournament_game(tournament.id, 1, 1, new_game(CHANNEL + 5))
    assert game is not None
    # The table's game stored already: nothing begins.
    assert await storage.start_tournament_game(tournament.id, 1, 1, new_game(CHANNEL + 6)) is None
    assert sample("tttbot_games_started_total") == 1
    assert await storage.save_game(finished(game, Mark.X, EndReason.LINE)) is not None
    assert sample("tttbot_games_finished_total") == 1


async def test_a_servers_settings_keep_their_last_change_and_who_made_it(
    storage: Storage,
) -> None:
    assert await storage.guild_settings(GUILD) == []
    first = StoredSetting("turn_timeout", "60", changed_by=ALICE, changed_at=T0)
    await storage.change_guild_setting(GUILD, first)
    await storage.change_guild_setting(GUILD, StoredSetting("size", "4", BOB, T0 + 1))
    await storage.change_guild_setting(OTHER_GUILD, StoredSetting("size", "5", CAROL, T0 + 2))
    reset = StoredSetting("turn_timeout", None, changed_by=BOB, changed_at=T0 + 3)
    await storage.change_guild_setting(GUILD, reset)
    assert await storage.guild_settings(GUILD) == [
        StoredSetting("size", "4", BOB, T0 + 1),
        reset,
    ]
    assert await storage.guild_settings(OTHER_GUILD) == [StoredSetting("size", "5", CAROL, T0 + 2)]
    big = StoredSetting("channels", "[]", changed_by=SNOWFLAKE, changed_at=T0)
    await storage.change_guild_setting(SNOWFLAKE, big)
    assert await storage.guild_settings(SNOWFLAKE) == [big]


async def test_a_game_is_read_with_its_servers_settings_in_one_operation(
    storage: Storage,
) -> None:
    """What a rematch reads: the game as stored and its guild's settings, those alone, as
    ``get_game`` and ``guild_settings`` would read them."""
    game = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    elsewhere = await storage.create_game(new_game(OTHER_CHANNEL, guild_id=OTHER_GUILD))
    assert await storage.game_with_guild_settings(game.id) == (game, [])
    await storage.change_guild_setting(GUILD, StoredSetting("turn_timeout", "60", ALICE, T0))
    await storage.change_guild_setting(GUILD, StoredSetting("size", None, BOB, T0 + 1))
    await storage.change_guild_setting(OTHER_GUILD, StoredSetting("size", "5", CAROL, T0 + 2))
    settings = await storage.guild_settings(GUILD)
    assert len(settings) == 2
    assert await storage.game_with_guild_settings(game.id) == (game, settings)
    assert await storage.game_with_guild_settings(elsewhere.id) == (
        elsewhere,
        [StoredSetting("size", "5", CAROL, T0 + 2)],
    )
    # Read again as stored after changes: the player forgotten (in the game and as who made
    # a change), the other guild erased.
    forgotten = await storage.forget_member(BOB, T0 + 3)
    await storage.erase_guild(OTHER_GUILD)
    changed = await storage.get_game(game.id)
    assert changed is not None
    assert changed.o_id == forgotten.placeholder_id
    now = await storage.guild_settings(GUILD)
    assert [setting.changed_by for setting in now] == [forgotten.placeholder_id, ALICE]
    assert await storage.game_with_guild_settings(game.id) == (changed, now)
    assert await storage.game_with_guild_settings(elsewhere.id) is None
    assert await storage.game_with_guild_settings(game.id + 1000) is None


async def test_a_members_live_games_are_counted_per_server(storage: Storage) -> None:
    assert await storage.live_games_of(GUILD, ALICE) == 0
    await storage.create_game(new_game(CHANNEL, ALICE, BOB))
    await storage.create_game(new_game(OTHER_CHANNEL, CAROL, ALICE))
    await storage.create_game(new_game(22, ALICE, BOB, guild_id=OTHER_GUILD))
    over = await storage.create_game(new_game(23, BOB, ALICE))
    assert await storage.live_games_of(GUILD, ALICE) == 3
    await storage.save_game(replace(over, status=GameStatus.FINISHED, deadline=None))
    assert await storage.live_games_of(GUILD, ALICE) == 2
    assert await storage.live_games_of(GUILD, BOB) == 1
    assert await storage.live_games_of(OTHER_GUILD, ALICE) == 1
    assert await storage.live_games_of(GUILD, DAVE) == 0


async def test_a_game_past_the_live_games_limit_is_refused_naming_who_is_over_it(
    storage: Storage,
) -> None:
    await storage.create_game(new_game(CHANNEL, ALICE, BOB))
    await storage.create_game(vs_ai(CAROL, "smart", Mark.O, OTHER_CHANNEL))
    # Its members' games in its guild count, the bot's side never does.
    for game, over in (
        (vs_ai(ALICE, "smart", Mark.X, 30), (ALICE,)),
        (new_game(31, DAVE, ALICE), (ALICE,)),
        (new_game(32, BOB, ALICE), (ALICE, BOB)),
        (new_game(36, DAVE, CAROL), (CAROL,)),
    ):
        with pytest.raises(LiveGamesLimitError) as refused:
            await storage.create_game(game, live_limit=1)
        assert refused.value.user_ids == over
        assert refused.value.limit == 1
        assert await storage.live_game_in_channel(game.channel_id) is None
    assert await storage.live_games_of(GUILD, ALICE) == 1
    started = [
        await storage.create_game(vs_ai(DAVE, "smart", Mark.O, 33), live_limit=1),
        await storage.create_game(new_game(34, ALICE, DAVE, guild_id=OTHER_GUILD), live_limit=1),
        await storage.create_game(new_game(35, CAROL, ALICE), live_limit=2),
    ]
    assert [await storage.live_game_in_channel(game.channel_id) for game in started] == started
    assert await storage.live_games_of(GUILD, BOT) == 2


async def test_an_accepted_challenge_past_the_limit_starts_nothing_and_stays_pending(
    storage: Storage,
) -> None:
    await storage.create_game(vs_ai(BOB, "smart", Mark.O, OTHER_CHANNEL))
    challenge = await storage.create_challenge(new_challenge(opponent_id=None))
    with pytest.raises(LiveGamesLimitError) as refused:
        await storage.close_challenge(
            challenge.id, ChallengeStatus.ACCEPTED, new_game(x_id=ALICE, o_id=BOB), live_limit=1
        )
    assert refused.value.user_ids == (BOB,)
    assert await storage.pending_challenge_in_channel(CHANNEL) == challenge
    assert await storage.live_game_in_channel(CHANNEL) is None
    closed = await storage.close_challenge(
        challenge.id, ChallengeStatus.ACCEPTED, new_game(x_id=ALICE, o_id=CAROL), live_limit=1
    )
    assert closed is not None
    assert closed[1] == await storage.live_game_in_channel(CHANNEL)
    # Closing without a game counts nothing.
    other = await storage.create_challenge(new_challenge(40, challenger_id=BOB))
    assert await storage.close_challenge(other.id, ChallengeStatus.WITHDRAWN, live_limit=1)


async def test_simultaneous_starts_for_one_member_stay_within_the_limit(storage: Storage) -> None:
    """Games against the bot in eight channels and challenges accepted in four, all at once
    for one member: exactly as many start as the limit allows."""
    challenges = [
        await storage.create_challenge(new_challenge(50 + number, challenger_id=BOB + number))
        for number in range(4)
    ]
    starts: list[Awaitable[object]] = [
        storage.create_game(vs_ai(ALICE, "smart", Mark.O, 60 + number), live_limit=3)
        for number in range(8)
    ]
    starts += [
        storage.close_challenge(
            challenge.id,
            ChallengeStatus.ACCEPTED,
            new_game(challenge.channel_id, challenge.challenger_id, ALICE),
            live_limit=3,
        )
        for challenge in challenges
    ]
    results = await asyncio.gather(*starts, return_exceptions=True)
    refusals = [result for result in results if isinstance(result, LiveGamesLimitError)]
    assert len(refusals) == len(starts) - 3, results
    assert all(refusal.user_ids == (ALICE,) for refusal in refusals)
    assert await storage.live_games_of(GUILD, ALICE) == 3
    assert len(await storage.active_games_of(ALICE)) == 3


async def test_connections_racing_for_one_members_last_game_start_one(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes on one database (two SQLite connections to one file, two PostgreSQL
    pools), each starting games for alice and bob at once, over and over: the limit holds."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        channels = iter(range(1000, 2000))
        for limit in (1, 2, 3):
            starts = [
                storage.create_game(new_game(next(channels), ALICE, BOB), live_limit=limit)
                for _ in range(4)
                for storage in (one, two)
            ] + [
                storage.create_game(
                    vs_ai(member, "smart", Mark.O, next(channels)), live_limit=limit
                )
                for member in (ALICE, BOB)
                for storage in (one, two)
            ]
            results = await asyncio.gather(*starts, return_exceptions=True)
            assert all(
                isinstance(result, GameRecord | LiveGamesLimitError) for result in results
            ), results
            assert await one.live_games_of(GUILD, ALICE) == limit
            assert await two.live_games_of(GUILD, BOB) == limit


async def test_messages_recorded_at_once_each_learn_the_one_before(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes recording a game's new board at once, over and over (two /ttt board at
    the same moment), and a challenge's: each learns the message it replaced, and no message
    is replaced twice, so every message but the one stored last is retired by one of them. A
    challenge keeps its newest message, whatever order they come in: each recording retires
    the older of its own and the one it learns."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        game = await one.create_game(new_game())
        challenge = await one.create_challenge(new_challenge(OTHER_CHANNEL))
        recorded = range(1000, 1012)
        games = (one.set_game_message, two.set_game_message)
        challenges = (one.set_challenge_message, two.set_challenge_message)
        replaced = (
            await asyncio.gather(
                *(games[n % 2](game.id, message) for n, message in enumerate(recorded))
            ),
            await asyncio.gather(
                *(challenges[n % 2](challenge.id, message) for n, message in enumerate(recorded))
            ),
        )
        stored_game = await two.get_game(game.id)
        stored_challenge = await two.get_challenge(challenge.id)
    assert stored_game is not None
    assert stored_challenge is not None
    game_chain, challenge_chain = replaced
    assert len(set(game_chain)) == len(game_chain), game_chain
    assert set(game_chain) | {stored_game.message_id} == {None, *recorded}
    assert stored_challenge.message_id == max(recorded)
    retired = [
        min(before, message)
        for before, message in zip(challenge_chain, recorded, strict=True)
        if before is not None
    ]
    assert sorted(retired) == sorted(set(recorded) - {max(recorded)}), challenge_chain


async def test_a_challenge_within_the_cooldown_of_the_members_last_one_there_is_refused(
    storage: Storage,
) -> None:
    await storage.create_challenge(replace(new_challenge(CHANNEL, ALICE), created_at=T0 + 5))
    await storage.create_challenge(replace(new_challenge(OTHER_CHANNEL, ALICE), created_at=T0))
    soon = replace(new_challenge(CHANNEL + 7, ALICE), created_at=T0 + 64)
    with pytest.raises(CooldownError) as refused:
        await storage.create_challenge(soon, cooldown=60)
    assert refused.value.until == T0 + 65  # from the latest, not the first
    assert await storage.pending_challenge_in_channel(CHANNEL + 7) is None
    # Past it; in another server; another member; no cooldown: each is taken.
    assert await storage.create_challenge(replace(soon, created_at=T0 + 65), cooldown=60)
    elsewhere = replace(new_challenge(22, ALICE, guild_id=OTHER_GUILD), created_at=T0 + 66)
    assert await storage.create_challenge(elsewhere, cooldown=60)
    bob = replace(new_challenge(CHANNEL + 8, BOB, ALICE), created_at=T0 + 66)
    assert await storage.create_challenge(bob, cooldown=60)
    assert await storage.create_challenge(replace(soon, channel_id=CHANNEL + 9))


async def test_connections_racing_for_one_members_challenges_keep_the_cooldown(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes on one database, each opening challenges for alice in several channels
    at once, round after round a cooldown apart: one a round is taken. Decided with the
    insert: each create waits for the other's (SQLite's write lock, the member's advisory
    lock on PostgreSQL)."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        channels = iter(range(3000, 4000))
        for round_number in range(4):
            at = T0 + 100 * round_number
            made = await asyncio.gather(
                *(
                    storage.create_challenge(
                        replace(new_challenge(next(channels), ALICE), created_at=at), cooldown=60
                    )
                    for _ in range(4)
                    for storage in (one, two)
                ),
                return_exceptions=True,
            )
            taken = [result for result in made if isinstance(result, ChallengeRecord)]
            assert len(taken) == 1, made
            assert all(isinstance(result, CooldownError) for result in made if result not in taken)


async def test_a_games_turn_timeout_is_kept(storage: Storage) -> None:
    default = await storage.create_game(new_game(CHANNEL))
    assert default.turn_timeout is None
    timed = await storage.create_game(replace(new_game(OTHER_CHANNEL), turn_timeout=45.5))
    assert timed.turn_timeout == 45.5
    assert (await storage.get_game(timed.id)) == timed


async def test_a_games_marks_are_kept(storage: Storage) -> None:
    default = await storage.create_game(new_game(CHANNEL))
    assert (default.mark_x, default.mark_o) == (None, None)
    custom = "<:cross:123456789012345678>"
    marked = await storage.create_game(replace(new_game(OTHER_CHANNEL), mark_x=custom, mark_o="🍩"))
    assert (marked.mark_x, marked.mark_o) == (custom, "🍩")
    assert (await storage.get_game(marked.id)) == marked


async def test_a_game_gives_up_its_marks_for_the_bots_own(storage: Storage) -> None:
    """Once Discord refused a server's emoji: the game shows the bot's own marks for good,
    without bumping its version (a move saved meanwhile still lands) or touching another."""
    custom = "<:cross:123456789012345678>"
    marked = await storage.create_game(replace(new_game(CHANNEL), mark_x=custom, mark_o="🍩"))
    other = await storage.create_game(replace(new_game(OTHER_CHANNEL), mark_x=custom))
    await storage.use_default_marks(marked.id)
    plain = await storage.get_game(marked.id)
    assert plain == replace(marked, mark_x=None, mark_o=None)
    moved = await storage.save_game(replace(marked, moves=(4,)))
    assert moved is not None
    assert (moved.moves, moved.mark_x, moved.mark_o) == ((4,), None, None)
    assert await storage.get_game(other.id) == other


async def test_64_bit_snowflakes_round_trip(storage: Storage) -> None:
    big = SNOWFLAKE
    biggest = 2**63 - 1
    game = await storage.create_game(new_game(big + 1, big + 2, biggest, guild_id=big))
    await storage.set_game_message(game.id, big + 3)
    stored = await storage.get_game(game.id)
    assert stored is not None
    assert (stored.guild_id, stored.channel_id, stored.x_id, stored.o_id) == (
        big,
        big + 1,
        big + 2,
        biggest,
    )
    assert stored.message_id == big + 3
    assert await storage.live_game_in_channel(big + 1) == stored
    assert await storage.save_game(finished(stored, Mark.O, EndReason.LINE)) is not None
    assert (await storage.player_stats(big, biggest)).against(VS_MEMBER) == Record(wins=1)
    assert [r.user_id for r in await storage.leaderboard(big)] == [biggest, big + 2]

    challenge = await storage.create_challenge(
        new_challenge(big + 4, big + 5, biggest, guild_id=big)
    )
    await storage.set_challenge_message(challenge.id, biggest)
    fetched = await storage.pending_challenge_in_channel(big + 4)
    assert fetched is not None
    assert (fetched.guild_id, fetched.challenger_id, fetched.opponent_id) == (big, big + 5, biggest)
    assert fetched.message_id == biggest


@pytest.mark.parametrize("row_id", [0, -1, 2**63, 10**20])
async def test_ids_no_row_can_have_find_nothing(storage: Storage, row_id: int) -> None:
    """Ids come from buttons, which a hand-made request can fill with any number."""
    assert await storage.get_game(row_id) is None
    assert await storage.game_with_guild_settings(row_id) is None
    assert await storage.get_challenge(row_id) is None


async def test_unshown_games_and_challenges_are_those_saved_without_a_message(
    storage: Storage,
) -> None:
    game = await storage.create_game(new_game())
    challenge = await storage.create_challenge(new_challenge(OTHER_CHANNEL))
    assert await storage.unshown_games(T0 - 1) == []  # saved after that moment
    assert await storage.unshown_challenges(T0 - 1) == []
    assert await storage.unshown_games(T0) == [game]
    assert await storage.unshown_challenges(T0) == [challenge]
    await storage.set_game_message(game.id, SNOWFLAKE)
    await storage.set_challenge_message(challenge.id, SNOWFLAKE + 1)
    assert await storage.unshown_games(T0) == []
    assert await storage.unshown_challenges(T0) == []


async def test_a_reply_route_is_kept_per_channel_and_hides_its_channel_from_the_sweeper(
    storage: Storage,
) -> None:
    """A channel the bot is not in: the latest token and the message it edits, replaced as
    new interactions come; a game settled unseen is noted and cleared; the sweeper, which
    could only post there through the channel, leaves its unshown game and challenge alone;
    and a route forgotten once the bot reaches its channel again."""
    assert await storage.reply_route(CHANNEL) is None
    game = await storage.create_game(new_game())
    challenge = await storage.create_challenge(new_challenge(OTHER_CHANNEL))
    first = ReplyRoute(channel_id=CHANNEL, token="t1", expires_at=T0 + 900, message_id=SNOWFLAKE)
    await storage.save_reply_route(first)
    assert await storage.reply_route(CHANNEL) == first
    await storage.set_unseen_game(CHANNEL, game.id)
    second = ReplyRoute(
        channel_id=CHANNEL, token="t2", expires_at=T0 + 1000, message_id=SNOWFLAKE + 1
    )
    await storage.save_reply_route(second)
    # A new token keeps the unseen game: only showing it clears it, once.
    assert await storage.reply_route(CHANNEL) == replace(second, unseen_game_id=game.id)
    assert not await storage.take_unseen_game(CHANNEL, game.id + 1)
    assert await storage.take_unseen_game(CHANNEL, game.id)
    assert not await storage.take_unseen_game(CHANNEL, game.id)
    assert await storage.reply_route(CHANNEL) == second
    await storage.set_unseen_game(CHANNEL, game.id)
    await storage.set_unseen_game(CHANNEL, None)
    assert await storage.reply_route(CHANNEL) == second
    assert await storage.unshown_games(T0) == []
    assert await storage.unshown_challenges(T0) == [challenge]
    await storage.save_reply_route(replace(second, channel_id=OTHER_CHANNEL))
    assert await storage.unshown_challenges(T0) == []
    assert await storage.reply_route(OTHER_CHANNEL + 1) is None
    # The bot reaches a channel again (a permission given back): its route goes, and the
    # sweeper sees its unshown items again; another channel's route stays.
    await storage.forget_reply_route(OTHER_CHANNEL)
    assert await storage.reply_route(OTHER_CHANNEL) is None
    assert await storage.unshown_challenges(T0) == [challenge]
    assert await storage.reply_route(CHANNEL) == second
    await storage.forget_reply_route(OTHER_CHANNEL)  # none to forget: nothing happens


async def test_background_work_is_split_by_the_shards_discord_routes_guilds_to(
    storage: Storage,
) -> None:
    # Real-sized guild ids, one per shard of four: (id >> 22) % 4 is the shard, whatever the
    # low 22 bits (worker, process, increment) hold.
    guilds = {shard: ((SNOWFLAKE >> 22) * 4 + shard) << 22 | 0x3FFFFF for shard in range(4)}
    assert {(guild >> 22) % 4 for guild in guilds.values()} == {0, 1, 2, 3}
    games, challenges = {}, {}
    for shard, guild in guilds.items():
        games[shard] = (await storage.create_game(new_game(100 + shard, guild_id=guild))).id
        made = new_challenge(200 + shard, guild_id=guild, expires_at=T0)
        challenges[shard] = (await storage.create_challenge(made)).id
    later = T0 + 3600

    async def split(shards: ShardSlice) -> list[set[int]]:
        return [
            {game.id for game in await storage.overdue_games(later, shards)},
            {game.id for game in await storage.unshown_games(later, shards)},
            {challenge.id for challenge in await storage.overdue_challenges(later, shards)},
            {challenge.id for challenge in await storage.unshown_challenges(later, shards)},
        ]

    def expected(*shards: int) -> list[set[int]]:
        own_games = {games[shard] for shard in shards}
        own_challenges = {challenges[shard] for shard in shards}
        return [own_games, own_games, own_challenges, own_challenges]

    assert await split(ShardSlice(4, frozenset({1, 3}))) == expected(1, 3)
    assert await split(ShardSlice(4, frozenset({0}))) == expected(0)
    assert await split(ShardSlice(4, frozenset({0, 1, 2, 3}))) == expected(0, 1, 2, 3)
    assert await split(EVERY_GUILD) == expected(0, 1, 2, 3)
    # Two shards of two: the same guilds, grouped by their id's parity above the low 22 bits.
    assert await split(ShardSlice(2, frozenset({1}))) == expected(1, 3)
    # Every guild is some process's, and no guild is two processes'.
    halves = [await split(ShardSlice(2, frozenset({shard}))) for shard in (0, 1)]
    for first, second, whole in zip(*halves, expected(0, 1, 2, 3), strict=True):
        assert first | second == whole
        assert not first & second


async def test_games_and_challenges_outside_servers_are_the_first_shard_s(
    storage: Storage,
) -> None:
    """Discord sends DMs' interactions to shard 0: their background work (a DM's timed-out
    turn, an expired challenge in a group DM) is the process's that runs it, and no other's."""
    game = await storage.create_game(new_game(guild_id=OUTSIDE_SERVERS))
    made = new_challenge(OTHER_CHANNEL, guild_id=OUTSIDE_SERVERS, expires_at=T0)
    challenge = await storage.create_challenge(made)
    later = T0 + 3600
    for shard, owned in ((0, True), (1, False), (2, False)):
        shards = ShardSlice(3, frozenset({shard}))
        assert [g.id for g in await storage.overdue_games(later, shards)] == [game.id] * owned
        assert [g.id for g in await storage.unshown_games(later, shards)] == [game.id] * owned
        overdue = await storage.overdue_challenges(later, shards)
        assert [c.id for c in overdue] == [challenge.id] * owned
        unshown = await storage.unshown_challenges(later, shards)
        assert [c.id for c in unshown] == [challenge.id] * owned


def test_a_shard_slice_names_shards_of_its_count() -> None:
    assert ShardSlice(2, frozenset({1})).owns(1 << 22)
    assert not ShardSlice(2, frozenset({1})).owns(2 << 22)
    for count, ids in ((2, frozenset({2})), (0, frozenset({0})), (3, frozenset[int]())):
        with pytest.raises(ValueError, match="are not shards of"):
            ShardSlice(count, ids)


async def test_finished_games_and_closed_challenges_are_never_unshown(storage: Storage) -> None:
    game = await storage.create_game(new_game())
    challenge = await storage.create_challenge(new_challenge(OTHER_CHANNEL))
    assert await storage.save_game(finished(game, None, EndReason.ENDED)) is not None
    assert await storage.close_challenge(challenge.id, ChallengeStatus.WITHDRAWN) is not None
    assert await storage.unshown_games(T0 + 60) == []
    assert await storage.unshown_challenges(T0 + 60) == []


async def test_processes_starting_together_on_a_new_database_apply_each_migration_once(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    async with shared_backend.database(request) as open_storage:
        storages = await asyncio.gather(*(open_storage() for _ in range(4)))
        try:
            applied = [await storage.schema_versions() for storage in storages]
            assert all(versions == applied[0] for versions in applied)
            assert sorted(applied[0]) == [v for v, _ in migration_files(shared_backend.dialect)]
            game = await storages[0].create_game(new_game())
            assert await storages[3].get_game(game.id) == game
        finally:
            for storage in storages:
                await storage.close()


# -- members' data -------------------------------------------------------------------------

THIRD_CHANNEL, FOURTH_CHANNEL = 22, 23


async def test_a_stranger_has_no_data(storage: Storage) -> None:
    data = await storage.member_data(DAVE)
    assert data.is_empty
    assert (data.user_id, data.stats, data.games, data.challenges, data.names) == (
        DAVE,
        (),
        (),
        0,
        (),
    )


async def test_a_members_data_is_every_guild_size_game_challenge_and_name(
    storage: Storage,
) -> None:
    await finish(storage, new_game(), Mark.X, EndReason.LINE)
    await finish(storage, vs_ai(ALICE, "random", Mark.O, OTHER_CHANNEL), None, EndReason.DRAW)
    await finish(storage, new_game(size=4), None, EndReason.ENDED)  # stored, counts nowhere
    renamed = replace(new_game(THIRD_CHANNEL, BOB, ALICE, guild_id=OTHER_GUILD), o_name="Alicia")
    await storage.create_game(renamed)  # live, in another guild, under another name
    await storage.create_challenge(new_challenge(FOURTH_CHANNEL, CAROL, ALICE))
    data = await storage.member_data(ALICE)
    assert not data.is_empty
    assert data.guild_ids == (GUILD, OTHER_GUILD)
    assert [(s.guild_id, s.size) for s in data.stats] == [(GUILD, 3)]
    (stats,) = data.stats
    assert stats.records == {VS_MEMBER: Record(wins=1), "random": Record(draws=1)}
    assert stats.rated_games == 1
    won, _ = results.play(results.Standing(), results.Standing(), 1.0, at=T0 + 10)
    assert (stats.rating, stats.deviation) == (won.rating, won.deviation)
    assert data.games == (
        StoredGames(GUILD, 3, 2),
        StoredGames(GUILD, 4, 1),
        StoredGames(OTHER_GUILD, 3, 1),
    )
    assert data.challenges == 1
    assert data.names == ("Alicia", f"user{ALICE}")
    # Nothing of the bot's side or of the other players is hers.
    assert (await storage.member_data(CAROL)).names == (f"user{CAROL}",)


async def test_forgetting_a_member_replaces_them_everywhere_and_keeps_the_others_counts(
    storage: Storage,
) -> None:
    won = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    await finish(storage, new_game(x_id=CAROL, o_id=BOB), Mark.O, EndReason.RESIGN)
    await finish(storage, vs_ai(ALICE, "smart", Mark.X), Mark.X, EndReason.LINE)
    outside = await finish(
        storage, new_game(x_id=BOB, o_id=ALICE, guild_id=0), None, EndReason.DRAW
    )
    live = await storage.create_game(new_game(OTHER_CHANNEL, CAROL, ALICE))
    mine = await storage.create_challenge(new_challenge(THIRD_CHANNEL, ALICE, DAVE))
    theirs = await storage.create_challenge(new_challenge(FOURTH_CHANNEL, BOB, ALICE))
    before = {
        (guild, user): await storage.player_stats(guild, user)
        for guild in (GUILD, 0)
        for user in (BOB, CAROL)
    }

    forgotten = await storage.forget_member(ALICE, T0 + 100)

    placeholder = forgotten.placeholder_id
    assert is_forgotten(placeholder)
    assert (forgotten.games, forgotten.challenges) == (4, 2)
    assert forgotten.stats_rows == 5  # member and smart records here, one outside; 2 ratings
    (ended,) = forgotten.ended
    assert (ended.id, ended.status, ended.end_reason, ended.winner) == (
        live.id,
        GameStatus.FINISHED,
        EndReason.ENDED,
        None,
    )
    assert (ended.o_id, ended.o_name, ended.x_id) == (placeholder, FORGOTTEN_NAME, CAROL)
    assert (ended.version, ended.updated_at, ended.deadline) == (live.version + 1, T0 + 100, None)
    assert [(c.id, c.status) for c in forgotten.closed] == [
        (mine.id, ChallengeStatus.WITHDRAWN),
        (theirs.id, ChallengeStatus.DECLINED),
    ]
    assert forgotten.closed[0].challenger_id == placeholder
    assert forgotten.closed[0].challenger_name == FORGOTTEN_NAME
    assert (forgotten.closed[1].opponent_id, forgotten.closed[1].opponent_name) == (
        placeholder,
        FORGOTTEN_NAME,
    )
    # Nothing of hers is left; everyone else's counts are as they were.
    assert (await storage.member_data(ALICE)).is_empty
    for (guild, user), stats in before.items():
        assert await storage.player_stats(guild, user) == stats
    assert [r.user_id for r in await storage.leaderboard(GUILD)] == [BOB, CAROL]
    stored = await storage.get_game(won.id)
    assert stored is not None
    assert (stored.x_id, stored.x_name, stored.o_id, stored.winner) == (
        placeholder,
        FORGOTTEN_NAME,
        BOB,
        Mark.X,
    )
    stored = await storage.get_game(outside.id)
    assert stored is not None
    assert stored.o_id == placeholder
    # The placeholder has games but no stats, and the channels are free again.
    anonymous = await storage.member_data(placeholder)
    assert (anonymous.stats, anonymous.challenges, anonymous.names) == ((), 2, (FORGOTTEN_NAME,))
    for channel in (OTHER_CHANNEL, THIRD_CHANNEL, FOURTH_CHANNEL):
        await storage.create_game(new_game(channel, BOB, CAROL))
    # An ended game takes no more saves.
    assert await storage.save_game(moved(live, 4)) is None


async def test_each_forgotten_member_gets_a_placeholder_of_their_own(storage: Storage) -> None:
    game = await finish(storage, new_game(), Mark.O, EndReason.LINE)
    alice = await storage.forget_member(ALICE, T0 + 1)
    bob = await storage.forget_member(BOB, T0 + 2)
    nobody = await storage.forget_member(DAVE, T0 + 3)
    placeholders = [alice.placeholder_id, bob.placeholder_id, nobody.placeholder_id]
    assert len(set(placeholders)) == 3
    assert all(is_forgotten(placeholder) for placeholder in placeholders)
    assert (nobody.games, nobody.challenges, nobody.stats_rows) == (0, 0, 0)
    stored = await storage.get_game(game.id)
    assert stored is not None
    assert (stored.x_id, stored.o_id) == (alice.placeholder_id, bob.placeholder_id)
    assert (stored.x_name, stored.o_name) == (FORGOTTEN_NAME, FORGOTTEN_NAME)
    assert await storage.leaderboard(GUILD) == []
    # Forgetting again finds nothing more.
    again = await storage.forget_member(ALICE, T0 + 4)
    assert (again.games, again.challenges, again.stats_rows, again.ended) == (0, 0, 0, ())


async def test_active_games_of_a_member_are_theirs_everywhere(storage: Storage) -> None:
    here = await storage.create_game(new_game())
    there = await storage.create_game(new_game(OTHER_CHANNEL, CAROL, ALICE, guild_id=0))
    await storage.create_game(new_game(THIRD_CHANNEL, BOB, CAROL))
    await finish(storage, new_game(FOURTH_CHANNEL), None, EndReason.DRAW)
    assert await storage.active_games_of(ALICE) == [here, there]
    assert await storage.active_games_of(DAVE) == []


async def test_erasing_a_guild_deletes_its_games_challenges_and_stats_only(
    storage: Storage,
) -> None:
    first = await finish(storage, new_game(), Mark.X, EndReason.LINE)
    await finish(
        storage, replace(new_game(x_id=BOB, o_id=ALICE), rematch_of=first.id), None, EndReason.DRAW
    )
    await finish(storage, vs_ai(CAROL, "random", Mark.O, OTHER_CHANNEL), Mark.X, EndReason.LINE)
    live = await storage.create_game(new_game(OTHER_CHANNEL, CAROL, DAVE))
    await storage.save_reply_route(
        ReplyRoute(channel_id=OTHER_CHANNEL, token="t", expires_at=T0 + 900, message_id=1)
    )
    await storage.set_unseen_game(OTHER_CHANNEL, first.id)
    pending = await storage.create_challenge(new_challenge(THIRD_CHANNEL))
    accepted = await storage.close_challenge(
        (await storage.create_challenge(new_challenge(FOURTH_CHANNEL))).id,
        ChallengeStatus.ACCEPTED,
        new_game(FOURTH_CHANNEL),
    )
    assert accepted is not None
    assert accepted[1] is not None
    elsewhere = await finish(
        storage, new_game(SNOWFLAKE, guild_id=OTHER_GUILD), Mark.O, EndReason.LINE
    )
    kept_stats = await storage.player_stats(OTHER_GUILD, ALICE)

    erased = await storage.erase_guild(GUILD)

    assert not erased.is_empty
    assert erased.live_games == (live, accepted[1])
    assert erased.pending_challenges == (pending,)
    assert (erased.games, erased.challenges) == (5, 2)
    assert erased.stats_rows == 3 + 2  # alice, bob (member), carol (random); alice, bob rated
    assert await storage.get_game(first.id) is None
    assert await storage.get_game(live.id) is None
    assert await storage.get_challenge(pending.id) is None
    assert await storage.reply_route(OTHER_CHANNEL) is None
    for user in (ALICE, BOB, CAROL):
        stats = await storage.player_stats(GUILD, user)
        assert (stats.records, stats.rating) == ({}, None)
    assert await storage.leaderboard(GUILD) == []
    # The other guild keeps everything, and the guild's channels are free.
    assert await storage.get_game(elsewhere.id) == elsewhere
    assert await storage.player_stats(OTHER_GUILD, ALICE) == kept_stats
    for channel in (CHANNEL, OTHER_CHANNEL, THIRD_CHANNEL, FOURTH_CHANNEL):
        await storage.create_game(new_game(channel))
    assert (await storage.erase_guild(GUILD)).live_games != ()
    assert (await storage.erase_guild(GUILD)).is_empty


def test_a_members_data_is_found_by_index_not_by_reading_whole_tables() -> None:
    """Migration 0008: on SQLite a whole-table read would hold up every move queued behind
    it in the storage thread."""
    with closing(sqlite3.connect(":memory:")) as db:
        for _, script in migration_files("sqlite"):
            for statement in split_statements(script):
                db.execute(statement)
        lookups = [
            QMARK.member_records,
            QMARK.member_ratings,
            QMARK.member_games,
            QMARK.member_challenges,
            QMARK.member_names,
            QMARK.active_games_of,
            QMARK.member_practice,
            *QMARK.delete_member_practice,
            QMARK.puzzle_results,
            QMARK.puzzle_solvers,
            QMARK.next_drill,
            QMARK.drill_counts,
            QMARK.delete_guild_drills,
            *QMARK.anonymise_games,
            *QMARK.anonymise_challenges,
            *QMARK.delete_member_stats,
        ]
        for statement in lookups:
            plan = db.execute(f"EXPLAIN QUERY PLAN {statement}", (1,) * statement.count("?"))
            details = [row[3] for row in plan]
            # A SELECT of counts alone reads one constant row, not a table.
            scans = [s for s in details if s.startswith("SCAN") and s != "SCAN CONSTANT ROW"]
            assert not scans, (statement, details)


async def test_forgetting_a_member_keeps_their_setting_changes_but_not_their_id(
    storage: Storage,
) -> None:
    await storage.change_guild_setting(GUILD, StoredSetting("size", "4", ALICE, T0))
    await storage.change_guild_setting(GUILD, StoredSetting("language", '"de"', BOB, T0))
    forgotten = await storage.forget_member(ALICE, T0 + 1)
    assert await storage.guild_settings(GUILD) == [
        StoredSetting("language", '"de"', BOB, T0),
        StoredSetting("size", "4", forgotten.placeholder_id, T0),
    ]


async def test_erasing_a_server_deletes_its_settings_and_no_other_servers(
    storage: Storage,
) -> None:
    await storage.change_guild_setting(GUILD, StoredSetting("size", "4", ALICE, T0))
    kept = StoredSetting("size", "5", ALICE, T0)
    await storage.change_guild_setting(OTHER_GUILD, kept)
    erased = await storage.erase_guild(GUILD)
    assert erased.stats_rows == 1
    assert await storage.guild_settings(GUILD) == []
    assert await storage.guild_settings(OTHER_GUILD) == [kept]


# -- puzzles and drills ----------------------------------------------------------------------

DAY = datetime.date(2026, 11, 26)


def attempt(
    solved: bool,
    at: float,
    user: int = ALICE,
    day: datetime.date = DAY,
    guild: int = GUILD,
    tries_before: int = 0,
) -> PuzzleAttempt:
    return PuzzleAttempt(user, day, "5h-93c44310", guild, solved, at, tries_before)


async def test_a_puzzle_solved_at_once_is_a_first_try_and_stays_solved(storage: Storage) -> None:
    assert await storage.puzzle_result(ALICE, DAY) is None
    solved, counted = await storage.record_puzzle(attempt(True, T0))
    assert solved == PuzzleResult(ALICE, DAY, "5h-93c44310", GUILD, 1, T0, True)
    assert counted
    # Later attempts (another click, another server, the same moment) change nothing once it
    # is solved, and say so.
    for later in (
        attempt(False, T0 + 5, guild=OTHER_GUILD, tries_before=1),
        attempt(True, T0, tries_before=1),
    ):
        assert await storage.record_puzzle(later) == (solved, False)
    assert await storage.puzzle_results(ALICE) == [solved]
    assert await storage.puzzle_result(ALICE, DAY) == solved
    assert await storage.puzzle_result(ALICE, DAY + datetime.timedelta(days=1)) is None


async def test_a_puzzle_solved_after_a_wrong_try_counts_both_and_no_first_try(
    storage: Storage,
) -> None:
    failed, counted = await storage.record_puzzle(attempt(False, T0))
    assert (failed.tries, failed.solved, failed.first_try, counted) == (1, False, False, True)
    failed, counted = await storage.record_puzzle(attempt(False, T0 + 1, tries_before=1))
    assert (failed.tries, counted) == (2, True)
    solved = await storage.record_puzzle(attempt(True, T0 + 2, guild=OTHER_GUILD, tries_before=2))
    assert solved == (PuzzleResult(ALICE, DAY, "5h-93c44310", OTHER_GUILD, 3, T0 + 2, False), True)


async def test_an_attempt_counts_once_however_many_clicks_end_it_at_once(
    storage: Storage,
) -> None:
    """Two wrong clicks on one message, drawn after one try: the first counts, the second
    finds the tries moved on and changes nothing; then a solve from the same message too."""
    await storage.record_puzzle(attempt(False, T0))
    both = await asyncio.gather(
        *(storage.record_puzzle(attempt(False, T0 + 1, tries_before=1)) for _ in range(2))
    )
    assert sorted(counted for _, counted in both) == [False, True]
    assert {result.tries for result, _ in both} == {2}
    late_solve = await storage.record_puzzle(attempt(True, T0 + 2, tries_before=1))
    assert late_solve == ((await storage.puzzle_result(ALICE, DAY)), False)
    assert late_solve[0].tries == 2
    assert not late_solve[0].solved


async def test_a_servers_solvers_of_the_day_are_those_who_solved_it_there(
    storage: Storage,
) -> None:
    await storage.record_puzzle(attempt(True, T0 + 3, user=BOB))
    await storage.record_puzzle(attempt(False, T0 + 1, user=ALICE))
    await storage.record_puzzle(attempt(True, T0 + 2, user=ALICE, tries_before=1))
    await storage.record_puzzle(attempt(False, T0, user=CAROL))  # not solved
    await storage.record_puzzle(attempt(True, T0, user=DAVE, guild=OTHER_GUILD))
    await storage.record_puzzle(attempt(True, T0, day=DAY - datetime.timedelta(days=1)))
    solvers = await storage.puzzle_solvers(GUILD, DAY)
    assert [(r.user_id, r.first_try) for r in solvers] == [(ALICE, False), (BOB, True)]
    assert [r.user_id for r in await storage.puzzle_solvers(OTHER_GUILD, DAY)] == [DAVE]
    days = [r.day for r in await storage.puzzle_results(ALICE)]
    assert days == [DAY - datetime.timedelta(days=1), DAY]


def drill_at(position: str, user: int = ALICE, game: int = 1, guild: int = GUILD) -> NewDrill:
    return NewDrill(user, guild, game, position, T0)


DRILL_A = "XO./.X./... k3 draw B3"
DRILL_B = "X../.O./... k3 draw A2"


async def test_drills_are_kept_once_per_member_and_position(storage: Storage) -> None:
    first, second = await storage.add_drills([drill_at(DRILL_A), drill_at(DRILL_B)])
    assert (first.position, first.right_in_row, first.answers) == (DRILL_A, 0, 0)
    assert (first.due_at, first.learned_at, first.created_at) == (T0, None, T0)
    assert second.id != first.id
    # The same position again, from another game, is the drill already kept, unchanged.
    (again,) = await storage.add_drills([NewDrill(ALICE, GUILD, 2, DRILL_A, T0 + 50)])
    assert again == first
    # Another member's drill of the same position is theirs.
    (bobs,) = await storage.add_drills([drill_at(DRILL_A, user=BOB)])
    assert bobs.id not in (first.id, second.id)
    assert await storage.get_drill(first.id) == first
    assert await storage.get_drill(bobs.id + 100) is None


async def test_the_drill_queue_asks_the_earliest_due_and_counts_the_rest(
    storage: Storage,
) -> None:
    assert await storage.drill_queue(ALICE, T0) == DrillQueue(None, 0, 0, 0)
    first, second = await storage.add_drills([drill_at(DRILL_A), drill_at(DRILL_B)])
    queue = await storage.drill_queue(ALICE, T0)
    assert (queue.next, queue.due, queue.waiting, queue.learned) == (first, 2, 0, 0)
    # Answered right: due in a day. The other is now first.
    moved = await storage.answer_drill(first.id, 1, 1, T0 + 86_400, None)
    assert moved is not None
    assert (moved.answers, moved.right_in_row, moved.due_at) == (1, 1, T0 + 86_400)
    queue = await storage.drill_queue(ALICE, T0 + 10)
    assert (queue.next, queue.due, queue.waiting) == (second, 1, 1)
    # Learned: out of the queue for good.
    learned = await storage.answer_drill(second.id, 1, 4, T0 + 10, T0 + 10)
    assert learned is not None
    assert learned.learned_at == T0 + 10
    queue = await storage.drill_queue(ALICE, T0 + 10)
    assert (queue.next, queue.due, queue.waiting, queue.learned) == (moved, 0, 1, 1)
    assert (await storage.drill_queue(BOB, T0 + 10)).next is None


async def test_a_drill_answer_counts_once(storage: Storage) -> None:
    (drill,) = await storage.add_drills([drill_at(DRILL_A)])
    assert await storage.answer_drill(drill.id, 1, 0, T0 + 60, None) is not None
    # A second answer asked at the same count (a double click) writes nothing.
    assert await storage.answer_drill(drill.id, 1, 1, T0 + 86_400, None) is None
    stored = await storage.get_drill(drill.id)
    assert stored is not None
    assert (stored.answers, stored.right_in_row, stored.due_at) == (1, 0, T0 + 60)


async def test_puzzles_and_drills_are_a_members_data_and_go_with_them(storage: Storage) -> None:
    await storage.record_puzzle(attempt(True, T0))
    await storage.record_puzzle(attempt(False, T0, day=DAY - datetime.timedelta(days=1)))
    await storage.add_drills([drill_at(DRILL_A), drill_at(DRILL_B)])
    await storage.add_drills([drill_at(DRILL_A, user=BOB)])
    await storage.record_puzzle(attempt(True, T0, user=BOB))
    data = await storage.member_data(ALICE)
    assert (data.puzzle_days, data.drills, data.is_empty) == (2, 2, False)

    forgotten = await storage.forget_member(ALICE, T0 + 1)

    assert forgotten.practice_rows == 4
    assert (await storage.member_data(ALICE)).is_empty
    assert await storage.puzzle_results(ALICE) == []
    assert (await storage.drill_queue(ALICE, T0)).next is None
    bob = await storage.member_data(BOB)
    assert (bob.puzzle_days, bob.drills) == (1, 1)


async def test_erasing_a_server_deletes_its_drills_and_unlinks_its_puzzle_results(
    storage: Storage,
) -> None:
    await storage.add_drills([drill_at(DRILL_A), drill_at(DRILL_B, guild=OTHER_GUILD)])
    await storage.record_puzzle(attempt(True, T0))
    await storage.record_puzzle(attempt(True, T0, user=BOB, guild=OTHER_GUILD))

    erased = await storage.erase_guild(GUILD)

    assert (erased.drills, erased.is_empty) == (1, False)
    queue = await storage.drill_queue(ALICE, T0)
    assert queue.next is not None
    assert (queue.next.position, queue.due) == (DRILL_B, 1)
    # Alice keeps her solved day (her streak), no longer tied to the erased server.
    (kept,) = await storage.puzzle_results(ALICE)
    assert (kept.solved, kept.guild_id) == (True, None)
    assert await storage.puzzle_solvers(GUILD, DAY) == []
    assert [r.user_id for r in await storage.puzzle_solvers(OTHER_GUILD, DAY)] == [BOB]


# -- old data removed (TTT_KEEP_FINISHED_GAMES_DAYS) -----------------------------------------


async def finish_at(storage: Storage, new: NewGame, at: float) -> GameRecord:
    """A game between members, won by X, whose last save (its end) was at ``at``."""
    game = await storage.create_game(new)
    saved = await storage.save_game(replace(finished(game, Mark.X, EndReason.LINE), updated_at=at))
    assert saved is not None
    return saved


async def test_old_finished_games_are_removed_a_batch_at_a_time_and_nothing_else(
    storage: Storage,
) -> None:
    cutoff = T0 + 500
    # Accepted from a challenge, then rematched: the oldest two.
    challenge = await storage.create_challenge(new_challenge())
    accepted = await storage.close_challenge(challenge.id, ChallengeStatus.ACCEPTED, new_game())
    assert accepted is not None
    assert accepted[1] is not None
    first = await storage.save_game(
        replace(finished(accepted[1], Mark.X, EndReason.LINE), updated_at=T0 + 100)
    )
    assert first is not None
    rematch = await finish_at(storage, new_game(rematch_of=first.id), T0 + 200)
    third = await finish_at(storage, new_game(OTHER_CHANNEL, CAROL, BOB), T0 + 300)
    # Kept: one finished after the cutoff (a rematch of one removed), one still live however
    # old, and what was made from the removed ones.
    recent = await finish_at(
        storage, new_game(OTHER_CHANNEL, BOB, CAROL, rematch_of=third.id), T0 + 501
    )
    live = await storage.create_game(new_game(THIRD_CHANNEL, ALICE, DAVE))
    (drill,) = await storage.add_drills([drill_at(DRILL_A, game=first.id)])
    route = ReplyRoute(channel_id=FOURTH_CHANNEL, token="t", expires_at=T0, message_id=5)
    await storage.save_reply_route(route)
    await storage.set_unseen_game(FOURTH_CHANNEL, rematch.id)
    # Challenges closed without a game go by their age; a pending one stays however old.
    declined = await storage.create_challenge(new_challenge(FOURTH_CHANNEL, DAVE, CAROL))
    await storage.close_challenge(declined.id, ChallengeStatus.DECLINED)
    fresh = await storage.create_challenge(
        replace(new_challenge(FOURTH_CHANNEL, DAVE, CAROL), created_at=cutoff + 1)
    )
    await storage.close_challenge(fresh.id, ChallengeStatus.EXPIRED)
    pending = await storage.create_challenge(new_challenge(THIRD_CHANNEL + 10, CAROL, DAVE))
    stats = {user: await storage.player_stats(GUILD, user) for user in (ALICE, BOB, CAROL)}
    leaderboard = await storage.leaderboard(GUILD)

    batches = [await storage.prune_finished(cutoff, 2) for _ in range(3)]

    assert [(batch.games, batch.challenges) for batch in batches] == [
        ((first.id, rematch.id), 1 + 1),  # the challenge that started the first, the declined
        ((third.id,), 0),
        ((), 0),
    ]
    for gone in (first, rematch, third):
        assert await storage.get_game(gone.id) is None
    assert await storage.get_challenge(challenge.id) is None
    assert await storage.get_challenge(declined.id) is None
    assert await storage.get_challenge(fresh.id) is not None
    assert await storage.get_challenge(pending.id) == pending
    assert await storage.get_game(live.id) == live
    kept = await storage.get_game(recent.id)
    assert kept is not None
    assert kept.rematch_of is None  # the game it followed is gone
    assert kept == replace(recent, rematch_of=None)
    assert await storage.get_drill(drill.id) == drill
    assert await storage.reply_route(FOURTH_CHANNEL) == route  # nothing left to show
    # Counted when the games ended: nobody's stats or rating moves.
    for user, before in stats.items():
        assert await storage.player_stats(GUILD, user) == before
    assert await storage.leaderboard(GUILD) == leaderboard
    assert await storage.get_setting(GAMES_PRUNED_THROUGH) == str(third.id)
    # Ids are never handed out again: a new game's is past every removed one.
    assert (await storage.create_game(new_game(FOURTH_CHANNEL + 10))).id > recent.id


async def test_old_games_are_removed_by_each_process_for_its_own_shards(storage: Storage) -> None:
    on_shard = {shard: (shard << 22) | 7 for shard in (0, 1)}
    games = {
        shard: await finish_at(storage, new_game(CHANNEL + shard, guild_id=guild), T0 + 10)
        for shard, guild in on_shard.items()
    }
    # The later game first: the highest id removed is kept, not the last.
    second = await storage.prune_finished(T0 + 10, 10, ShardSlice(2, frozenset({1})))
    first = await storage.prune_finished(T0 + 10, 10, ShardSlice(2, frozenset({0})))

    assert (first.games, second.games) == ((games[0].id,), (games[1].id,))
    assert await storage.get_setting(GAMES_PRUNED_THROUGH) == str(games[1].id)
    # At the cutoff is old enough; a moment after it is not.
    late = await finish_at(storage, new_game(OTHER_CHANNEL), T0 + 11)
    assert (await storage.prune_finished(T0 + 10.5, 10)).games == ()
    assert (await storage.prune_finished(T0 + 11, 10)).games == (late.id,)


# -- tournaments -------------------------------------------------------------------------------


def new_tournament(channel_id: int = CHANNEL, *, guild_id: int = GUILD) -> NewTournament:
    return NewTournament(
        guild_id=guild_id,
        channel_id=channel_id,
        status=TournamentStatus.REGISTERING,
        due_at=T0 + 600,
        state='{"doc": 1}',
        created_at=T0,
    )


async def test_a_tournament_is_changed_only_at_the_version_it_was_read_at(
    storage: Storage,
) -> None:
    created = await storage.create_tournament(new_tournament())
    assert (created.status, created.due_at, created.version) == (
        TournamentStatus.REGISTERING,
        T0 + 600,
        1,
    )
    assert await storage.get_tournament(created.id) == created
    saved = await storage.save_tournament(
        created, status=TournamentStatus.RUNNING, due_at=None, state='{"doc": 2}', now=T0 + 1
    )
    assert saved is not None
    assert (saved.status, saved.due_at, saved.state, saved.version, saved.updated_at) == (
        TournamentStatus.RUNNING,
        None,
        '{"doc": 2}',
        2,
        T0 + 1,
    )
    # A change made on what was read before the save above writes nothing.
    stale = await storage.save_tournament(
        created, status=TournamentStatus.CANCELLED, due_at=None, state="{}", now=T0 + 2
    )
    assert stale is None
    assert await storage.get_tournament(created.id) == saved
    assert await storage.get_tournament(999_999) is None


async def test_one_live_tournament_a_channel(storage: Storage) -> None:
    first = await storage.create_tournament(new_tournament())
    with pytest.raises(TournamentHereError):
        await storage.create_tournament(new_tournament())
    elsewhere = await storage.create_tournament(new_tournament(CHANNEL + 1))
    assert [t.id for t in await storage.live_tournaments(GUILD)] == [first.id, elsewhere.id]
    await storage.save_tournament(
        first, status=TournamentStatus.FINISHED, due_at=None, state="{}", now=T0 + 1
    )
    again = await storage.create_tournament(new_tournament())
    assert [t.id for t in await storage.live_tournaments(GUILD)] == [elsewhere.id, again.id]


async def test_a_tables_game_is_stored_once(storage: Storage) -> None:
    tournament = await storage.create_tournament(new_tournament())
    game = await storage.start_tournament_game(tournament.id, 1, 2, new_game(CHANNEL + 5))
    assert game is not None
    assert await storage.start_tournament_game(tournament.id, 1, 2, new_game(CHANNEL + 6)) is None
    assert await storage.live_game_in_channel(CHANNEL + 6) is None
    assert await storage.tournament_of_thread(CHANNEL + 5) == tournament.id
    assert await storage.tournament_of_thread(CHANNEL + 6) is None
    read = await storage.get_tournament(tournament.id)
    assert read is not None
    assert read.games == {(1, 2): game.id}


async def test_the_due_tournaments_are_the_running_and_those_whose_start_came(
    storage: Storage,
) -> None:
    waiting = await storage.create_tournament(new_tournament())
    running = await storage.create_tournament(new_tournament(CHANNEL + 1))
    await storage.save_tournament(
        running, status=TournamentStatus.RUNNING, due_at=None, state="{}", now=T0
    )
    other_shard = await storage.create_tournament(new_tournament(CHANNEL + 2, guild_id=1 << 22))
    assert await storage.due_tournaments(T0) == [running.id]
    assert await storage.due_tournaments(T0 + 600) == [waiting.id, running.id, other_shard.id]
    assert await storage.due_tournaments(T0 + 600, ShardSlice(2, frozenset({0}))) == [
        waiting.id,
        running.id,
    ]
    assert await storage.due_tournaments(T0 + 600, ShardSlice(2, frozenset({1}))) == [
        other_shard.id
    ]


async def test_a_finished_tournament_is_due_until_its_podium_is_marked(storage: Storage) -> None:
    created = await storage.create_tournament(new_tournament())
    finishing = await storage.save_tournament(
        created, status=TournamentStatus.FINISHED, due_at=T0, state="{}", now=T0
    )
    assert finishing is not None
    ended = await storage.create_tournament(new_tournament(CHANNEL + 1))
    await storage.save_tournament(
        ended, status=TournamentStatus.FINISHED, due_at=None, state="{}", now=T0
    )
    cancelled = await storage.create_tournament(new_tournament(CHANNEL + 2))
    await storage.save_tournament(
        cancelled, status=TournamentStatus.CANCELLED, due_at=T0, state="{}", now=T0
    )
    assert await storage.due_tournaments(T0) == [finishing.id]
    await storage.save_tournament(
        finishing, status=TournamentStatus.FINISHED, due_at=None, state="{}", now=T0 + 1
    )
    assert await storage.due_tournaments(T0 + 1) == []


async def test_erasing_a_guild_takes_its_tournaments(storage: Storage) -> None:
    tournament = await storage.create_tournament(new_tournament())
    game = await storage.start_tournament_game(tournament.id, 1, 1, new_game(CHANNEL + 5))
    assert game is not None
    kept = await storage.create_tournament(new_tournament(CHANNEL + 9, guild_id=OTHER_GUILD))
    over = await storage.create_tournament(new_tournament(CHANNEL + 7))
    await storage.save_tournament(
        over, status=TournamentStatus.FINISHED, due_at=None, state=over.state, now=T0 + 1
    )
    erased = await storage.erase_guild(GUILD)
    # Counted (a server with tournaments alone is not "no data"), and those still going
    # handed back as they were, for their announcements.
    assert erased.tournaments == 2
    assert not erased.is_empty
    assert [going.id for going in erased.live_tournaments] == [tournament.id]
    assert erased.live_tournaments[0].state == tournament.state
    assert await storage.get_tournament(tournament.id) is None
    assert await storage.tournament_of_thread(CHANNEL + 5) is None
    assert await storage.get_tournament(kept.id) is not None


async def test_the_settings_a_member_changed_last_are_their_data(storage: Storage) -> None:
    """A setting keeps who changed it last, by id: that member's data, counted by
    member_data (a member with nothing else is not "nothing stored") and by forget_member,
    which puts the placeholder there; a later change by another takes it out of their data."""
    await storage.change_guild_setting(GUILD, StoredSetting("turn_timeout", "60", ALICE, T0))
    await storage.change_guild_setting(GUILD, StoredSetting("size", "4", ALICE, T0 + 1))
    await storage.change_guild_setting(OTHER_GUILD, StoredSetting("size", "5", ALICE, T0 + 2))
    await storage.change_guild_setting(OTHER_GUILD, StoredSetting("size", None, BOB, T0 + 3))
    alice = await storage.member_data(ALICE)
    assert alice.settings == 2
    assert not alice.is_empty
    assert (await storage.member_data(BOB)).settings == 1
    assert (await storage.member_data(CAROL)).is_empty
    forgotten = await storage.forget_member(ALICE, T0 + 4)
    assert forgotten.settings == 2
    assert (await storage.member_data(ALICE)).is_empty
    assert [s.changed_by for s in await storage.guild_settings(GUILD)] == [
        forgotten.placeholder_id
    ] * 2
    assert (await storage.forget_member(ALICE, T0 + 5)).settings == 0


async def test_the_latest_tournament_a_channel_hosted_is_found_in_any_state(
    storage: Storage,
) -> None:
    assert await storage.latest_tournament_in_channel(CHANNEL) is None
    first = await storage.create_tournament(new_tournament())
    await storage.save_tournament(
        first, status=TournamentStatus.FINISHED, due_at=None, state="{}", now=T0 + 1
    )
    second = await storage.create_tournament(new_tournament())
    elsewhere = await storage.create_tournament(new_tournament(CHANNEL + 1))
    assert await storage.latest_tournament_in_channel(CHANNEL) == second.id
    await storage.save_tournament(
        second, status=TournamentStatus.CANCELLED, due_at=None, state="{}", now=T0 + 2
    )
    assert await storage.latest_tournament_in_channel(CHANNEL) == second.id
    assert await storage.latest_tournament_in_channel(CHANNEL + 1) == elsewhere.id


async def test_the_tournaments_naming_a_member_are_their_data(storage: Storage) -> None:
    """A document names a member where a field holds their id (bot.tournaments.state writes
    ids as JSON numbers): as organiser, entrant or actor; a longer number with their digits,
    or their digits in a name, is not them."""
    documents = (
        f'{{"organiser_id":{ALICE},"entries":[]}}',
        f'{{"organiser_id":{BOB},"entries":[{{"user_id":{CAROL},"name":"x"}}],"by":{ALICE}}}',
        f'{{"organiser_id":{BOB},"entries":[{{"user_id":{ALICE}0,"name":"{ALICE}"}}]}}',
    )
    ids = []
    for number, document in enumerate(documents):
        created = await storage.create_tournament(new_tournament(CHANNEL + number))
        ids.append(created.id)
        await storage.save_tournament(
            created, status=created.status, due_at=created.due_at, state=document, now=T0 + 1
        )
    assert await storage.tournaments_of_member(ALICE) == ids[:2]
    assert (await storage.member_data(ALICE)).tournaments == 2
    assert not (await storage.member_data(ALICE)).is_empty
    assert (await storage.member_data(CAROL)).tournaments == 1
    assert (await storage.member_data(DAVE)).is_empty


# -- seasons (bot.seasons, bot.ladder) -------------------------------------------------------


async def test_a_seasons_games_are_its_guilds_and_sizes_between_members_in_order(
    storage: Storage,
) -> None:
    inside = [
        await finish_at(storage, new_game(), T0 + 20),
        await finish_at(storage, new_game(x_id=CAROL, o_id=DAVE), T0 + 10),
    ]
    await finish_at(storage, new_game(), T0 + 30)  # at the end: the next season's
    await finish_at(storage, new_game(), T0 - 1)  # before the start
    await finish_at(storage, new_game(guild_id=OTHER_GUILD), T0 + 15)
    await finish_at(storage, new_game(size=4), T0 + 15)
    await finish(storage, vs_ai(ALICE, "random", Mark.O), Mark.X, EndReason.LINE)
    found = await storage.season_games(GUILD, DEFAULT_SIZE, T0, T0 + 30)
    assert [game.id for game in found] == [inside[1].id, inside[0].id]
    assert found[0].updated_at == T0 + 10
    assert (found[0].x_id, found[0].o_id, found[0].winner) == (CAROL, DAVE, Mark.X)
    # The last game that counts before a moment: not the moderator's, nor the bot's.
    await storage.save_game(
        replace(
            finished(await storage.create_game(new_game()), None, EndReason.ENDED),
            updated_at=T0 + 40,
        )
    )
    assert await storage.last_rated_game_before(GUILD, DEFAULT_SIZE, T0 + 50) == T0 + 30
    assert await storage.last_rated_game_before(GUILD, DEFAULT_SIZE, T0 + 10) == T0 - 1
    assert await storage.last_rated_game_before(GUILD, DEFAULT_SIZE, T0 - 1) is None
    assert await storage.last_rated_game_before(GUILD, 5, T0 + 50) is None


async def test_a_seasons_announcement_is_claimed_once_by_two_connections(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes sweeping at once: one claims the season's end; the guilds left to see to
    are those whose channel was set before the season ended, with no claim."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        await one.change_guild_setting(GUILD, StoredSetting("announcements", "7", ALICE, T0))
        await one.change_guild_setting(
            OTHER_GUILD, StoredSetting("announcements", "8", ALICE, T0 + 200)
        )
        await one.change_guild_setting(DAVE, StoredSetting("announcements", None, ALICE, T0))
        assert await two.unannounced_guilds("2026-11", T0 + 100, "announcements") == [GUILD]
        claims = await asyncio.gather(
            *(storage.claim_season(GUILD, "2026-11", T0 + 101) for storage in (one, two) * 3)
        )
        assert sorted(claims) == [False] * 5 + [True]
        assert await two.unannounced_guilds("2026-11", T0 + 100, "announcements") == []
        assert await one.unannounced_guilds("2026-12", T0 + 300, "announcements") == [
            GUILD,
            OTHER_GUILD,
        ]
        # A claim given up (the post failed) is there to take again.
        await two.release_season(GUILD, "2026-11")
        assert await one.claim_season(GUILD, "2026-11", T0 + 102)
        # A server's erase takes its claims with it.
        await one.erase_guild(GUILD)
        assert await two.claim_season(GUILD, "2026-11", T0 + 103)


async def test_the_sweeper_lease_is_held_by_one_connection_at_a_time(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two workers sweeping over one database: one takes the lease, the other is refused
    while it is held, renewed or not, and takes it once it ran out or was given up."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        taken = await asyncio.gather(
            *(
                storage.take_lease("sweeper", holder, T0, T0 + 30)
                for storage, holder in ((one, "a"), (two, "b")) * 3
            )
        )
        assert sorted(taken) == [False] * 3 + [True] * 3
        holder, other, holding, waiting = ("a", "b", one, two) if taken[0] else ("b", "a", two, one)
        # Refused while held; the holder renews it, which keeps it past its first end.
        assert not await waiting.take_lease("sweeper", other, T0 + 29, T0 + 59)
        assert await holding.take_lease("sweeper", holder, T0 + 20, T0 + 50)
        assert not await waiting.take_lease("sweeper", other, T0 + 40, T0 + 70)
        # Run out (the holder was killed): the other takes it over, and the old holder is refused.
        assert await waiting.take_lease("sweeper", other, T0 + 50, T0 + 80)
        assert not await holding.take_lease("sweeper", holder, T0 + 51, T0 + 81)
        # A lease of another name is its own.
        assert await holding.take_lease("other", holder, T0 + 51, T0 + 81)
        # Given up by someone who does not hold it: still held. By its holder: free at once.
        await holding.release_lease("sweeper", holder)
        assert not await holding.take_lease("sweeper", holder, T0 + 52, T0 + 82)
        await waiting.release_lease("sweeper", other)
        assert await holding.take_lease("sweeper", holder, T0 + 52, T0 + 82)


async def test_an_interaction_is_noted_once_across_two_connections_until_pruned(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two workers given the same interactions at once (a replay sent to each): every id is
    noted by exactly one of them; pruning forgets those signed before its bound, and only
    those, after which an id is new again."""
    ids = [1_400_000_000_000_000_000 + number for number in range(4)]
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        notes = [(interaction_id, T0 + index) for index, interaction_id in enumerate(ids)]
        noted = await asyncio.gather(
            *(storage.note_interactions([note]) for note in notes for storage in (one, two, one)),
            one.note_interactions(notes),
            two.note_interactions(notes[::-1]),
        )
        assert all(len(each) <= 1 for each in noted[:-2])
        assert sorted(i for each in noted for i in each) == ids
        assert await two.note_interactions([(ids[0], T0 + 50)]) == frozenset()
        # Those signed before T0 + 2 go; the two signed later stay noted.
        assert await one.prune_interactions(T0 + 2) == 2
        assert await two.prune_interactions(T0 + 2) == 0
        again = await two.note_interactions([(i, T0 + 60) for i in ids] + [(ids[0], T0 + 61)])
        assert again == frozenset(ids[:2])
        assert await one.note_interactions([]) == frozenset()


async def test_sqlite_notes_an_interaction_without_waiting_for_its_busy_thread(
    tmp_path: Path, clock: ManualClock
) -> None:
    """The endpoint notes every interaction before acting on it: on a file, the note is made
    on the event loop's thread, not queued behind the storage thread's work."""
    storage = await SqliteStorage.open(str(tmp_path / "tttbot.sqlite3"), clock)
    release = threading.Event()
    try:
        # White-box: the storage thread held by an operation of the test's own.
        held = storage._thread.run(lambda: release.wait(5))
        noted = await asyncio.wait_for(
            storage.note_interactions([(1_400_000_000_000_000_001, T0)]), 1
        )
        assert noted == {1_400_000_000_000_000_001}
        assert not held.done()
        release.set()
        assert await held
        assert not await storage.note_interactions([(1_400_000_000_000_000_001, T0 + 1)])
    finally:
        release.set()
        await storage.close()


async def test_sqlite_a_note_that_fails_midway_keeps_no_write_lock(
    tmp_path: Path, clock: ManualClock
) -> None:
    """A note that fails with something other than SQLite's errors (an id SQLite cannot
    store) rolls its transaction back: the write lock is free for every other writer at once,
    and the next note is made."""
    path = tmp_path / "tttbot.sqlite3"
    storage = await SqliteStorage.open(str(path), clock)
    try:
        with pytest.raises(OverflowError):
            await storage.note_interactions([(1_400_000_000_000_000_003, T0), (2**64, T0)])
        with closing(sqlite3.connect(path, timeout=0, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            other.execute("ROLLBACK")
        assert await storage.note_interactions([(1_400_000_000_000_000_003, T0)]) == {
            1_400_000_000_000_000_003
        }
    finally:
        await storage.close()


async def test_sqlite_notes_an_interaction_once_the_write_lock_another_process_held_is_free(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Another worker (or a backup) holding the write lock: the note cannot be made at once,
    so it waits in the storage thread, as every write does, and is made once the lock is
    free; still once only."""
    path = tmp_path / "tttbot.sqlite3"
    storage = await SqliteStorage.open(str(path), clock)
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            note = asyncio.ensure_future(
                storage.note_interactions([(1_400_000_000_000_000_002, T0)])
            )
            await asyncio.sleep(0.2)
            assert not note.done()
            other.execute("COMMIT")
            assert await asyncio.wait_for(note, 5) == {1_400_000_000_000_000_002}
        assert not await storage.note_interactions([(1_400_000_000_000_000_002, T0 + 1)])
        assert await storage.prune_interactions(T0 + 1) == 1
    finally:
        await storage.close()


async def test_thread_suspects_and_claims_are_shared_by_two_connections(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """bot.threads' memory on two workers: suspects noted by one are seen and taken by the
    other, each by one of two takers at once, per channel; a claim made by one is seen by the
    other and spares its thread from a second claim until it runs out or is given up; pruning
    forgets old suspects and old claims only."""
    channel, other_channel = 1_500_000_000_000_000_001, 1_500_000_000_000_000_002
    thread, other_thread = 1_500_000_000_000_000_101, 1_500_000_000_000_000_102
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        assert not await two.has_thread_suspects(channel)
        assert await two.take_thread_suspects(channel) == ThreadSuspects()
        await one.suspect_thread(channel, T0, name="alice vs bob")
        await one.suspect_thread(channel, T0 + 1, name="alice vs bob")
        await one.suspect_thread(channel, T0 + 2, thread_id=thread)
        await one.suspect_thread(other_channel, T0 + 3, name="carol vs dave")
        assert await two.has_thread_suspects(channel)
        taken = await asyncio.gather(
            two.take_thread_suspects(channel), one.take_thread_suspects(channel)
        )
        assert sorted(taken, key=lambda found: len(found.names)) == [
            ThreadSuspects(),
            ThreadSuspects(frozenset({"alice vs bob"}), frozenset({thread})),
        ]
        assert not await one.has_thread_suspects(channel)
        assert await one.has_thread_suspects(other_channel)

        # Claims: one holder at a time, seen from the other connection.
        claims = await asyncio.gather(
            one.claim_thread(channel, thread, T0 + 10, T0 + 10 - 60),
            two.claim_thread(channel, thread, T0 + 10, T0 + 10 - 60),
        )
        assert sorted(claims) == [False, True]
        assert await two.claimed_threads(channel, T0 + 10 - 60) == frozenset({thread})
        assert await two.claimed_threads(other_channel, T0 + 10 - 60) == frozenset()
        assert not await two.claim_thread(channel, thread, T0 + 69, T0 + 69 - 60)
        # Run out: no longer claimed, and claimed again by whoever asks.
        assert await one.claimed_threads(channel, T0 + 71 - 60) == frozenset()
        assert await two.claim_thread(channel, thread, T0 + 71, T0 + 71 - 60)
        await one.release_thread(thread)
        assert await two.claimed_threads(channel, T0 + 72 - 60) == frozenset()
        assert await one.claim_thread(channel, thread, T0 + 72, T0 + 72 - 60)
        assert await one.claim_thread(channel, other_thread, T0 + 80, T0 + 80 - 60)

        # Pruning: the suspect of T0 + 3 and the claim of T0 + 72 go, the claim of T0 + 80
        # stays.
        assert await two.prune_threads(T0 + 4, T0 + 75) == 2
        assert await one.prune_threads(T0 + 4, T0 + 75) == 0
        assert not await one.has_thread_suspects(other_channel)
        assert await one.claimed_threads(channel, T0) == frozenset({other_thread})


async def test_two_connections_race_to_start_a_tables_game_in_its_thread(
    shared_backend: Backend, request: pytest.FixtureRequest
) -> None:
    """Two processes starting the same table's game in its thread at the same moment: one is
    stored, and the other hears that the table has its game (not that the thread is busy)."""
    async with (
        shared_backend.database(request) as open_storage,
        opened(open_storage) as one,
        opened(open_storage) as two,
    ):
        tournament = await one.create_tournament(new_tournament())
        for round_number in (1, 2, 3):
            thread = CHANNEL + 100 + round_number
            results = await asyncio.gather(
                one.start_tournament_game(tournament.id, round_number, 1, new_game(thread)),
                two.start_tournament_game(tournament.id, round_number, 1, new_game(thread)),
            )
            stored = [r for r in results if r is not None]
            assert len(stored) == 1, results
            read = await two.get_tournament(tournament.id)
            assert read is not None
            assert read.games[(round_number, 1)] == stored[0].id
