"""``python -m bot migrate-sqlite-to-postgres SQLITE_PATH``: a SQLite database made by the bot's
own storage, with games and challenges of every kind, copied into an empty PostgreSQL database
by the command as a real process, then read back through the PostgreSQL engine."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from bot.clock import ManualClock
from bot.storage import (
    AlreadyRematchedError,
    ChallengeRecord,
    ChallengeStatus,
    ChannelBusyError,
    DrillRecord,
    EndReason,
    GameRecord,
    Record,
    Storage,
    TournamentRecord,
    TournamentStatus,
)
from bot.storage.postgres import PostgresStorage
from bot.storage.sqlite import SqliteStorage
from bot.storage.sqlite_to_postgres import COPIED_COLUMNS
from game import BOARD_SIZES, Mark
from tests.postgres_cluster import PostgresCluster
from tests.test_storage import (
    ALICE,
    BOB,
    BOT,
    CAROL,
    DAVE,
    DAY,
    DRILL_A,
    DRILL_B,
    GUILD,
    OTHER_GUILD,
    SNOWFLAKE,
    T0,
    attempt,
    drill_at,
    finished,
    moved,
    new_challenge,
    new_game,
    new_tournament,
    vs_ai,
)

# Each test copies a database through python -m bot, a process of its own.
pytestmark = [pytest.mark.postgres, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "migrate-sqlite-to-postgres"


@dataclass
class Made:
    """What the SQLite database was given, to compare the copy against."""

    games: list[GameRecord] = field(default_factory=list)
    challenges: list[ChallengeRecord] = field(default_factory=list)
    players: set[tuple[int, int]] = field(default_factory=set)  # (guild, user)
    channels: set[int] = field(default_factory=set)
    settings: dict[str, str] = field(default_factory=dict)
    drills: list[DrillRecord] = field(default_factory=list)
    puzzle_players: set[int] = field(default_factory=set)
    tournaments: list[TournamentRecord] = field(default_factory=list)

    def game(self, record: GameRecord) -> GameRecord:
        self.games.append(record)
        self.channels.add(record.channel_id)
        self.players.update({(record.guild_id, record.x_id), (record.guild_id, record.o_id)})
        return record

    def challenge(self, record: ChallengeRecord) -> ChallengeRecord:
        self.challenges.append(record)
        self.channels.add(record.channel_id)
        return record


async def fill(storage: Storage) -> Made:
    """Games and challenges of every kind, in every state, with 64-bit snowflakes."""
    made = Made()
    channel = iter(range(1000, 2000))

    async def finish(game: GameRecord, winner: Mark | None, reason: EndReason) -> None:
        done = await storage.save_game(finished(game, winner, reason))
        assert done is not None

    # Member games ended every way, some with moves and a board message.
    for winner, reason in [
        (Mark.X, EndReason.LINE),
        (Mark.O, EndReason.RESIGN),
        (Mark.X, EndReason.TIMEOUT),
        (None, EndReason.DRAW),
        (None, EndReason.ENDED),
    ]:
        game = await storage.create_game(new_game(next(channel), ALICE, BOB))
        await storage.set_game_message(game.id, SNOWFLAKE + game.id)
        played = await storage.save_game(moved(game, 4, 0))
        assert played is not None
        await finish(played, winner, reason)
    # Ratings moved by several opponents, in two guilds.
    for x, o in [(CAROL, DAVE), (DAVE, ALICE), (BOB, CAROL)]:
        await finish(
            await storage.create_game(new_game(next(channel), x, o)), Mark.X, EndReason.LINE
        )
    big = await storage.create_game(
        new_game(SNOWFLAKE + 1, SNOWFLAKE + 2, 2**63 - 1, guild_id=SNOWFLAKE)
    )
    await finish(big, Mark.O, EndReason.LINE)
    await finish(
        await storage.create_game(new_game(next(channel), ALICE, CAROL, guild_id=OTHER_GUILD)),
        None,
        EndReason.DRAW,
    )
    # Against the bot, at every difficulty, from both sides.
    for difficulty, ai_mark, winner in [
        ("random", Mark.O, Mark.X),
        ("smart", Mark.X, Mark.X),
        ("minimax", Mark.O, None),
    ]:
        game = await storage.create_game(vs_ai(ALICE, difficulty, ai_mark, next(channel)))
        await finish(game, winner, EndReason.DRAW if winner is None else EndReason.LINE)
    # A rematch, itself live; a live game against the bot with moves and no message yet.
    original = await storage.create_game(new_game(next(channel), ALICE, BOB))
    await finish(original, Mark.X, EndReason.LINE)
    rematch = await storage.create_game(
        new_game(original.channel_id, BOB, ALICE, rematch_of=original.id)
    )
    await storage.set_game_message(rematch.id, SNOWFLAKE)
    live_ai = await storage.create_game(vs_ai(CAROL, "smart", Mark.O, next(channel)))
    saved = await storage.save_game(moved(live_ai, 4, 8, at=T0 + 30))
    assert saved is not None
    # The larger boards: their stats and ratings are kept apart from 3x3's.
    await finish(
        await storage.create_game(new_game(next(channel), ALICE, BOB, size=4)),
        Mark.O,
        EndReason.LINE,
    )
    await finish(
        await storage.create_game(vs_ai(BOB, "minimax", Mark.X, next(channel), size=5)),
        None,
        EndReason.DRAW,
    )
    # Assisted games (a hint was asked for): one finished, which counts for nobody, one live.
    for winner in (Mark.O, None):
        game = await storage.create_game(vs_ai(DAVE, "casual", Mark.X, next(channel)))
        helped = await storage.save_game(replace(game, assisted=True))
        assert helped is not None
        if winner is not None:
            await finish(helped, winner, EndReason.LINE)
    await storage.create_challenge(new_challenge(next(channel), BOB, CAROL, size=5))
    # Challenges: pending (named and open), and closed every way.
    pending = await storage.create_challenge(new_challenge(next(channel), DAVE, CAROL))
    await storage.set_challenge_message(pending.id, SNOWFLAKE + 7)
    await storage.create_challenge(new_challenge(next(channel), CAROL, None))
    for status in (ChallengeStatus.DECLINED, ChallengeStatus.WITHDRAWN, ChallengeStatus.EXPIRED):
        closing_ = await storage.create_challenge(new_challenge(next(channel)))
        assert await storage.close_challenge(closing_.id, status) is not None
    accepted = await storage.create_challenge(new_challenge(next(channel), BOB, ALICE))
    result = await storage.close_challenge(
        accepted.id, ChallengeStatus.ACCEPTED, new_game(accepted.channel_id, BOB, ALICE)
    )
    assert result is not None
    await storage.set_setting("commands_hash", "abc123")
    await storage.set_setting("empty", "")
    made.settings = {"commands_hash": "abc123", "empty": ""}
    # Puzzle results (solved at once, after a wrong try, not yet) and drills, one answered.
    for user, solved in ((ALICE, True), (BOB, False), (SNOWFLAKE + 3, True)):
        await storage.record_puzzle(attempt(solved, T0, user=user))
    await storage.record_puzzle(attempt(True, T0 + 1, user=BOB))
    await storage.record_puzzle(attempt(False, T0, user=CAROL, guild=OTHER_GUILD))
    made.puzzle_players = {ALICE, BOB, CAROL, SNOWFLAKE + 3}
    made.drills = await storage.add_drills(
        [drill_at(DRILL_A), drill_at(DRILL_B), drill_at(DRILL_A, user=SNOWFLAKE + 3)]
    )
    answered = await storage.answer_drill(made.drills[0].id, 1, 1, T0 + 86_400, None)
    assert answered is not None
    made.drills[0] = answered

    # Tournaments: one running with a table's game started, one still registering.
    running = await storage.create_tournament(new_tournament(next(channel)))
    table_game = await storage.start_tournament_game(
        running.id, 1, 1, new_game(SNOWFLAKE + 9, ALICE, BOB)
    )
    assert table_game is not None
    saved_tournament = await storage.save_tournament(
        running, status=TournamentStatus.RUNNING, due_at=None, state='{"round": 1}', now=T0 + 5
    )
    assert saved_tournament is not None
    await storage.create_tournament(new_tournament(next(channel), guild_id=SNOWFLAKE))

    # Read everything back as the SQLite engine keeps it.
    for tournament_id in range(1, 10):
        tournament = await storage.get_tournament(tournament_id)
        if tournament is not None:
            made.tournaments.append(tournament)
    assert len(made.tournaments) == 2
    for game_id in range(1, 100):
        record = await storage.get_game(game_id)
        if record is not None:
            made.game(record)
    for challenge_id in range(1, 100):
        challenge = await storage.get_challenge(challenge_id)
        if challenge is not None:
            made.challenge(challenge)
    made.players.add((GUILD, BOT))
    return made


async def assert_same(copy: Storage, made: Made, source: Storage) -> None:
    """``copy`` answers every question as ``source`` (the SQLite original) does."""
    for game in made.games:
        assert await copy.get_game(game.id) == game
    for challenge in made.challenges:
        assert await copy.get_challenge(challenge.id) == challenge
    for size in BOARD_SIZES:
        for guild, user in made.players:
            assert await copy.player_stats(guild, user, size=size) == await source.player_stats(
                guild, user, size=size
            )
        for guild in {guild for guild, _ in made.players}:
            assert await copy.leaderboard(guild, 100, size=size) == await source.leaderboard(
                guild, 100, size=size
            )
    for channel in made.channels:
        assert await copy.live_game_in_channel(channel) == await source.live_game_in_channel(
            channel
        )
        assert await copy.pending_challenge_in_channel(
            channel
        ) == await source.pending_challenge_in_channel(channel)
    for now in (T0, T0 + 60, T0 + 1000):
        assert await copy.overdue_games(now) == await source.overdue_games(now)
        assert await copy.unshown_games(now) == await source.unshown_games(now)
        assert await copy.overdue_challenges(now) == await source.overdue_challenges(now)
        assert await copy.unshown_challenges(now) == await source.unshown_challenges(now)
    for key, value in made.settings.items():
        assert await copy.get_setting(key) == value
    for drill in made.drills:
        assert await copy.get_drill(drill.id) == drill
    for user in made.puzzle_players:
        assert await copy.puzzle_results(user) == await source.puzzle_results(user)
        assert await copy.drill_queue(user, T0) == await source.drill_queue(user, T0)
    assert await copy.puzzle_solvers(GUILD, DAY) == await source.puzzle_solvers(GUILD, DAY)
    for tournament in made.tournaments:
        assert await copy.get_tournament(tournament.id) == tournament
        assert await copy.live_tournaments(tournament.guild_id) == await source.live_tournaments(
            tournament.guild_id
        )
    for now in (T0, T0 + 600):
        assert await copy.due_tournaments(now) == await source.due_tournaments(now)


@dataclass
class Result:
    code: int
    out: str
    err: str


async def migrate(path: Path | str, url: str, cwd: Path) -> Result:
    env = {key: value for key, value in os.environ.items() if not key.startswith("DATABASE_")}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        COMMAND,
        str(path),
        env={**env, "PYTHONPATH": str(ROOT), "DATABASE_URL": url},
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode is not None
    return Result(process.returncode, out.decode(), err.decode())


@asynccontextmanager
async def sqlite_source(path: Path) -> AsyncIterator[SqliteStorage]:
    storage = await SqliteStorage.open(str(path), ManualClock(T0))
    try:
        yield storage
    finally:
        await storage.close()


@asynccontextmanager
async def postgres(url: str) -> AsyncIterator[PostgresStorage]:
    storage = await PostgresStorage.open(url, ManualClock(T0))
    try:
        yield storage
    finally:
        await storage.close()


def row_counts(path: Path) -> str:
    with closing(sqlite3.connect(path)) as db:
        return ", ".join(
            f"{table} {db.execute(f'SELECT count(*) FROM {table}').fetchone()[0]}"
            for table in COPIED_COLUMNS
        )


async def test_a_sqlite_database_is_copied_whole(
    tmp_path: Path, fresh_postgres_database: str, postgres_cluster: PostgresCluster
) -> None:
    path = tmp_path / "tttbot.sqlite3"
    async with sqlite_source(path) as source:
        made = await fill(source)
    original = path.read_bytes()

    result = await migrate(path, fresh_postgres_database, tmp_path)
    assert (result.code, result.err) == (0, "")
    name = fresh_postgres_database.rsplit("/", 1)[1]
    counts = row_counts(path)
    assert f"games {len(made.games)}, challenges {len(made.challenges)}, " in counts
    assert result.out.splitlines() == [
        f"tttbot: copied rows: {counts} from sqlite file {path} into postgresql database "
        f"{name} on 127.0.0.1:{postgres_cluster.port}"
    ]
    assert postgres_cluster.password not in result.out
    assert path.read_bytes() == original  # the source is only read

    async with sqlite_source(path) as source, postgres(fresh_postgres_database) as copy:
        await assert_same(copy, made, source)
        # Sizes came along: the 4x4 and 5x5 results are theirs, not 3x3's.
        assert (await copy.player_stats(GUILD, BOB, size=5)).against("minimax") == Record(draws=1)
        assert [r.user_id for r in await copy.leaderboard(GUILD, size=4)] == [BOB, ALICE]
        assert {c.size for c in made.challenges} == {3, 5}
        # Ids go on past the copied ones: no button of an old game can reach a new one.
        newest = max(game.id for game in made.games)
        fresh = await copy.create_game(new_game(5000))
        assert fresh.id > newest
        challenge = await copy.create_challenge(new_challenge(5001))
        assert challenge.id > max(c.id for c in made.challenges)
        # The channels' occupants came along: taken channels stay taken.
        rematch = next(g for g in made.games if g.rematch_of is not None)
        with pytest.raises(AlreadyRematchedError):
            await copy.create_game(new_game(5002, rematch_of=rematch.rematch_of))
        for game in made.games:
            if game.is_active:
                with pytest.raises(ChannelBusyError):
                    await copy.create_challenge(new_challenge(game.channel_id))
        for pending_challenge in made.challenges:
            if pending_challenge.status is ChallengeStatus.PENDING:
                with pytest.raises(ChannelBusyError):
                    await copy.create_game(new_game(pending_challenge.channel_id))
        # And the copy plays on: finishing a copied game frees its channel and counts.
        live = next(g for g in made.games if g.is_active and not g.against_ai)
        done = await copy.save_game(finished(live, Mark.X, EndReason.LINE))
        assert done is not None
        assert await copy.live_game_in_channel(live.channel_id) is None
        assert (await copy.player_stats(GUILD, live.x_id)).rated_games == (
            await source.player_stats(GUILD, live.x_id)
        ).rated_games + 1


async def test_a_target_that_holds_data_is_refused_and_left_alone(
    tmp_path: Path, fresh_postgres_database: str, postgres_cluster: PostgresCluster
) -> None:
    path = tmp_path / "tttbot.sqlite3"
    async with sqlite_source(path) as source:
        await source.create_game(new_game())
    async with postgres(fresh_postgres_database) as target:
        await target.set_setting("commands_hash", "from-a-bot-that-already-ran")
        game = await target.create_game(new_game(x_id=CAROL, o_id=DAVE))
    result = await migrate(path, fresh_postgres_database, tmp_path)
    name = fresh_postgres_database.rsplit("/", 1)[1]
    assert result.code == 1
    assert result.err.splitlines() == [
        f"tttbot: DATABASE_URL: refusing to copy into postgresql database {name} on "
        f"127.0.0.1:{postgres_cluster.port}: it already holds rows (games 1, channel_occupants 1,"
        " settings 1); the copy goes into an empty database only"
    ]
    async with postgres(fresh_postgres_database) as target:
        assert await target.get_game(game.id) == game
        assert await target.get_game(game.id + 1) is None
        assert await target.get_setting("commands_hash") == "from-a-bot-that-already-ran"


async def test_a_challenge_left_beside_a_live_game_before_the_one_occupant_rule_is_kept(
    tmp_path: Path, fresh_postgres_database: str
) -> None:
    """A SQLite database from before its migration 0002 may hold a pending challenge beside a
    live game in one channel, the game keeping the claim: the copy keeps both, as they were."""
    path = tmp_path / "old.sqlite3"
    async with sqlite_source(path) as source:
        game = await source.create_game(new_game())
        stray = await source.create_challenge(new_challenge(OTHER_CHANNEL_OF_OLD))
    with closing(sqlite3.connect(path)) as db, db:
        # What the old race left (0002's triggers would refuse to make it now).
        db.execute("UPDATE challenges SET channel_id = ? WHERE id = ?", (game.channel_id, stray.id))
        db.execute("DELETE FROM channel_occupants WHERE challenge_id = ?", (stray.id,))
    stray = replace(stray, channel_id=game.channel_id)
    result = await migrate(path, fresh_postgres_database, tmp_path)
    assert result.code == 0, result.err
    async with postgres(fresh_postgres_database) as copy:
        assert await copy.live_game_in_channel(game.channel_id) == game
        assert await copy.pending_challenge_in_channel(game.channel_id) == stray
        with pytest.raises(ChannelBusyError):
            await copy.close_challenge(stray.id, ChallengeStatus.ACCEPTED, new_game())
        assert await copy.close_challenge(stray.id, ChallengeStatus.EXPIRED) is not None
        assert await copy.live_game_in_channel(game.channel_id) == game


OTHER_CHANNEL_OF_OLD = 77


async def test_a_source_that_cannot_be_copied_is_one_line(
    tmp_path: Path, fresh_postgres_database: str
) -> None:
    missing = await migrate(tmp_path / "nowhere.sqlite3", fresh_postgres_database, tmp_path)
    assert (missing.code, missing.err) == (
        1,
        f"tttbot: sqlite file {tmp_path / 'nowhere.sqlite3'} does not exist\n",
    )
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database\n" * 100)
    broken = await migrate(junk, fresh_postgres_database, tmp_path)
    assert (broken.code, broken.err) == (
        1,
        f"tttbot: cannot read sqlite file {junk}: file is not a database\n",
    )
    old = tmp_path / "old.sqlite3"
    with closing(sqlite3.connect(old)) as db, db:
        db.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at REAL)")
        db.execute("INSERT INTO schema_migrations VALUES (1, 0)")
    older = await migrate(old, fresh_postgres_database, tmp_path)
    assert older.code == 1
    assert older.err.startswith(f"tttbot: sqlite file {old} has schema version 1, older than")
    not_postgres = await migrate(old, f"sqlite:///{old}", tmp_path)
    assert (not_postgres.code, not_postgres.err) == (
        2,
        "tttbot: DATABASE_URL must name the PostgreSQL database to copy into, like "
        "postgresql://user:password@host:port/database\n",
    )


# Each database's own bookkeeping, and what is only worth keeping for minutes: the sweeper's
# lease, interactions already answered, threads being opened (migration 0016 says why).
LEFT_BEHIND = {
    "schema_migrations",
    "leases",
    "interactions_seen",
    "thread_suspects",
    "thread_claims",
}


async def test_every_table_and_column_that_is_data_is_copied(tmp_path: Path) -> None:
    """A table or a column a later migration adds must be copied too (or be named above as
    not data): else a server moving to PostgreSQL loses it without a word."""
    path = tmp_path / "tttbot.sqlite3"
    await (await SqliteStorage.open(str(path), ManualClock(T0))).close()
    with closing(sqlite3.connect(path)) as db:
        tables = [
            name
            for (name,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        columns = {
            table: {row[1] for row in db.execute(f"PRAGMA table_info({table})")} for table in tables
        }
    assert set(tables) == set(COPIED_COLUMNS) | LEFT_BEHIND
    for table, copied in COPIED_COLUMNS.items():
        assert set(copied) == columns[table], table
