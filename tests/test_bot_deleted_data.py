"""Deletions as the disk and a failing database see them, through the real discord.py client
and the simulator.

What ``/ttt forget-me`` and a server's erase delete is gone from every file of the SQLite
database (the file, its ``-wal`` and ``-shm``) while the bot is still running, read byte for
byte: the member's name, their id as decimal text, and their id as the 8-byte integer SQLite
stores (either byte order); a backup or the sqlite3 shell reading meanwhile keeps the log
until a later sweep. A deletion the database fails (SQLite locked by another process past the
busy timeout, PostgreSQL stopped) tells the member what became of their data and that asking
again is safe, logs one WARNING line, and deletes nothing; asked again, it deletes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest

from bot.client import SWEEPER_LEASE
from bot.components import ERASE_ID, TOURNAMENT_ID
from bot.config import parse_database_url
from bot.privacy import MAYBE_FORGOTTEN, NOT_ERASED, NOT_FORGOTTEN, Forgetting
from bot.storage.base import DatabaseUnavailableError, Forgotten, ReplyRoute
from tests.bot_harness import (
    BotHarness,
    both_engines,
    button_id,
    cell_id,
    http_only,
    is_live,
    refused,
    start_member_game,
    text_of,
)
from tests.discord_sim import DiscordSim, InteractionRecord
from tests.postgres_cluster import postgres_server
from tests.test_bot_members_data import ask_to_forget, confirm, x_wins
from tests.test_bot_reliability import database_locked_by_another_process

# Longer than the bot waits for SQLite's write lock in these tests.
BUSY_TIMEOUT = 0.3
LOCKED_FOR = 1.5
DONE = "Done: your stats and ratings are deleted"


def traces(database: Path, *values: str | int) -> dict[str, int]:
    """How often each of ``values`` (names, or ids) is found in the database's files, by
    file: a name as UTF-8, an id as decimal text and as an 8-byte integer either way round."""
    patterns: list[bytes] = []
    for value in values:
        if isinstance(value, int):
            patterns += [str(value).encode(), value.to_bytes(8, "big"), value.to_bytes(8, "little")]
        else:
            patterns.append(value.encode())
    found = {}
    for suffix in ("", "-wal", "-shm"):
        path = database.with_name(database.name + suffix)
        content = path.read_bytes() if path.exists() else b""
        count = sum(content.count(pattern) for pattern in patterns)
        if count:
            found[path.name] = count
    return found


@contextmanager
def reading(database: Path) -> Iterator[None]:
    """Another connection (a backup, the sqlite3 shell) in a read transaction on the database:
    it reads the snapshot it started with until the block ends."""
    with closing(sqlite3.connect(database, isolation_level=None, check_same_thread=False)) as db:
        db.execute("BEGIN")
        db.execute("SELECT count(*) FROM games").fetchall()
        try:
            yield
        finally:
            db.execute("COMMIT")


def wal_warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "write-ahead log" in r.getMessage()]


# -- what a deletion leaves on disk (SQLite) ---------------------------------------------------


async def test_a_forgotten_member_is_in_no_file_of_the_database_while_the_bot_runs(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        await x_wins(sim, harness, s.other_channel, s.bob, s.alice, size=4)
        await start_member_game(sim, s.thread, s.carol, s.alice)
        await sim.slash(s.bob, sim.add_channel(s.guild, "pending"), "ttt start", opponent=s.alice)
        # A tournament names her too, as an entrant (its document is rewritten, not deleted).
        created = await sim.slash(s.owner, s.channel, "ttt tournament create", name="Duel night")
        assert created.message is not None
        join = button_id(created.message, TOURNAMENT_ID, action="join")
        for member in (s.alice, s.bob):
            await sim.click(member, created.message, join)
        assert traces(
            harness.db_path, s.alice.name, s.alice.id
        )  # the test looks in the right place
        done = await confirm(sim, s.alice, await ask_to_forget(sim, s.alice))
        assert await bot.in_flight.wait_idle(patience=5)
        assert done.message is not None
        assert DONE in text_of(done.message)
        assert traces(harness.db_path, s.alice.name, s.alice.id) == {}
        # The others' data is all there.
        assert traces(harness.db_path, s.bob.name, s.bob.id, s.carol.name)


async def test_an_admin_forgotten_for_their_settings_is_in_no_file_of_the_database(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Who changed a server's settings is kept by id: forgotten, that id is in no file."""
    s = sim.seed
    async with harness.running() as bot:
        await sim.slash(s.owner, s.channel, "ttt-settings timeouts", turn="1m")
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        assert traces(harness.db_path, s.owner.id)  # the test looks in the right place
        done = await confirm(sim, s.owner, await ask_to_forget(sim, s.owner))
        assert await bot.in_flight.wait_idle(patience=5)
        assert done.message is not None, done.content
        assert traces(harness.db_path, s.owner.id) == {}
        assert traces(harness.db_path, s.alice.name, s.alice.id, s.guild.id)


async def test_an_erased_server_is_in_no_file_of_the_database_while_the_bot_runs(
    sim: DiscordSim, harness: BotHarness
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        await start_member_game(sim, s.thread, s.carol, s.bob)
        await sim.slash(s.owner, s.channel, "ttt-settings timeouts", turn="1m")
        await sim.slash(s.owner, s.other_channel, "ttt tournament create", name="Duel night")
        assert traces(harness.db_path, s.guild.id)
        done = await erase(sim)
        assert await bot.in_flight.wait_idle(patience=5)
        assert done.message is not None
        assert "Done: deleted 2 games" in text_of(done.message)
        assert traces(harness.db_path, s.guild.id) == {}


async def test_a_reader_keeps_the_log_until_a_later_sweep_wipes_it(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    caplog.set_level(logging.INFO, logger="bot.storage.sqlite")
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        question = await ask_to_forget(sim, s.alice)
        with reading(harness.db_path):
            done = await confirm(sim, s.alice, question)
            assert await bot.in_flight.wait_idle(patience=5)
            # Forgotten all the same: no row holds her, but the log does while it is read.
            assert done.message is not None
            assert DONE in text_of(done.message)
            assert "alice" not in text_of(await sim.slash(s.bob, s.channel, "ttt leaderboard"))
            assert "-wal" in "".join(traces(harness.db_path, s.alice.name, s.alice.id))
            await bot.sweep()  # still read: still there, and no second warning
            assert traces(harness.db_path, s.alice.name, s.alice.id)
        (warning,) = wal_warnings(caplog)
        assert warning.levelno == logging.WARNING
        assert warning.exc_info is None
        assert "trying again at every sweep" in warning.getMessage()
        await bot.sweep()
        assert traces(harness.db_path, s.alice.name, s.alice.id) == {}
    wiped = wal_warnings(caplog)[-1]
    assert (wiped.levelno, wiped.getMessage()) == (
        logging.INFO,
        "deleted data wiped from the SQLite write-ahead log after 3 tries",
    )


@http_only
async def test_a_worker_without_the_sweeper_lease_still_wipes_what_a_reader_kept(
    sim: DiscordSim, harness: BotHarness, caplog: pytest.LogCaptureFixture
) -> None:
    """Under `serve`, the worker that forgot a member may not be the one sweeping (another
    worker holds the sweeper lease), and the log it could not wipe is its own to wipe: its
    sweeps try again all the same (they returned at once, and the name stayed in the -wal
    file for as long as SQLite left it there)."""
    s = sim.seed
    caplog.set_level(logging.INFO, logger="bot.storage.sqlite")
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        # Another worker sweeps from now on, for longer than this test runs.
        now = harness.clock.now()
        await bot.storage.release_lease(SWEEPER_LEASE, bot.sweeper_id)
        assert await bot.storage.take_lease(SWEEPER_LEASE, "another worker", now, now + 3600)
        question = await ask_to_forget(sim, s.alice)
        with reading(harness.db_path):
            await confirm(sim, s.alice, question)
            assert await bot.in_flight.wait_idle(patience=5)
        # The reader is done, but nothing tried again yet.
        assert traces(harness.db_path, s.alice.name, s.alice.id)
        await bot.sweep()
        assert not bot.holds_sweeper_lease  # the other worker's sweep was left alone
        assert traces(harness.db_path, s.alice.name, s.alice.id) == {}
    assert wal_warnings(caplog)[-1].getMessage().startswith("deleted data wiped")


# -- a deletion the database fails -----------------------------------------------------------


async def erase(sim: DiscordSim) -> InteractionRecord:
    """The owner asks to erase the server's data and confirms."""
    s = sim.seed
    asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
    assert asked.message is not None
    return await sim.click(
        s.owner, asked.message, button_id(asked.message, ERASE_ID, action="confirm")
    )


def told(ix: InteractionRecord, sentence: str) -> None:
    """The member read exactly ``sentence``, privately, and nothing else."""
    refused(ix, sentence)
    assert ix.content == sentence


def one_warning(caplog: pytest.LogCaptureFixture, start: str) -> None:
    """The failure was logged once, as a WARNING of one line without a traceback."""
    (record,) = [r for r in caplog.records if r.getMessage().startswith(start)]
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert "\n" not in record.getMessage()


@both_engines
async def test_a_forget_failed_at_its_commit_may_have_gone_through_and_asking_again_is_safe(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = sim.seed
    async with harness.running() as bot:
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        real = bot.storage.forget_member

        async def lost_at_commit(user_id: int, now: float) -> Forgotten:
            await real(user_id, now)  # it went through, but the answer never came
            raise DatabaseUnavailableError("connection lost", nothing_written=False)

        monkeypatch.setattr(bot.storage, "forget_member", lost_at_commit)
        question = await ask_to_forget(sim, s.alice)
        failed = await confirm(sim, s.alice, question)
        monkeypatch.undo()
        again = await confirm(sim, s.alice, question)
        mine = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
    told(failed, MAYBE_FORGOTTEN)
    one_warning(caplog, f"could not forget user {s.alice.id}: the database failed while")
    assert again.message is not None
    assert text_of(again.message).strip() == (
        "There was nothing left to delete: your data is already gone."
    )
    assert "Nothing: I keep no data about you." in mine


async def test_a_forget_while_another_process_holds_sqlite_deletes_nothing_and_says_so(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = sim.seed
    monkeypatch.setattr("bot.storage.sqlite.BUSY_TIMEOUT_SECONDS", BUSY_TIMEOUT)
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        question = await ask_to_forget(sim, s.alice)
        async with database_locked_by_another_process(harness, LOCKED_FOR):
            failed = await confirm(sim, s.alice, question)
        kept = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
        assert traces(harness.db_path, s.alice.name)
        again = await confirm(sim, s.alice, question)
    told(failed, NOT_FORGOTTEN)
    one_warning(caplog, f"could not forget user {s.alice.id}: the database failed, nothing")
    assert "1 W · 0 L · 0 D (rating 1311 ± 339, provisional)" in kept
    assert again.message is not None
    assert DONE in text_of(again.message)


async def test_an_erase_while_another_process_holds_sqlite_deletes_nothing_and_says_so(
    sim: DiscordSim,
    harness: BotHarness,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = sim.seed
    monkeypatch.setattr("bot.storage.sqlite.BUSY_TIMEOUT_SECONDS", BUSY_TIMEOUT)
    async with harness.running():
        await x_wins(sim, harness, s.channel, s.alice, s.bob)
        asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
        assert asked.message is not None
        erase_id = button_id(asked.message, ERASE_ID, action="confirm")
        async with database_locked_by_another_process(harness, LOCKED_FOR):
            failed = await sim.click(s.owner, asked.message, erase_id)
        kept = text_of(await sim.slash(s.alice, s.channel, "ttt stats"))
        again = await sim.click(s.owner, asked.message, erase_id)
    told(failed, NOT_ERASED)
    one_warning(caplog, f"could not erase guild {s.guild.id}: the database failed, nothing")
    assert "1 W · 0 L · 0 D" in kept
    assert again.message is not None
    assert "Done: deleted 1 game, 1 challenge" in text_of(again.message)


@pytest.mark.postgres
async def test_a_forget_and_an_erase_while_postgresql_is_down_delete_nothing_and_say_so(
    sim: DiscordSim, caplog: pytest.LogCaptureFixture
) -> None:
    s = sim.seed
    # A cluster of the test's own, to stop and start: the whole cluster is thrown away after.
    with postgres_server() as (cluster, server):
        admin = await cluster.admin()
        try:
            await admin.execute('CREATE DATABASE "tttbot"')
        finally:
            await admin.close()
        harness = BotHarness(sim, parse_database_url(cluster.url("tttbot")))
        async with harness.running():
            await x_wins(sim, harness, s.channel, s.alice, s.bob)
            question = await ask_to_forget(sim, s.alice)
            asked = await sim.slash(s.owner, s.channel, "ttt-settings erase-data")
            assert asked.message is not None
            erase_id = button_id(asked.message, ERASE_ID, action="confirm")
            # A clean stop: the test cluster commits without waiting for the disk, which an
            # immediate stop would lose.
            await asyncio.to_thread(
                server.check, "pg_ctl", "--pgdata", server.data, "--mode", "fast", "--wait", "stop"
            )
            try:
                forget_failed = await confirm(sim, s.alice, question)
                erase_failed = await sim.click(s.owner, asked.message, erase_id)
            finally:
                await asyncio.to_thread(server.restart, cluster)
            kept = text_of(await sim.slash(s.alice, s.channel, "ttt my-data"))
            forgotten = await confirm(sim, s.alice, question)
            erased = await sim.click(s.owner, asked.message, erase_id)
    told(forget_failed, NOT_FORGOTTEN)
    told(erase_failed, NOT_ERASED)
    one_warning(caplog, f"could not forget user {s.alice.id}: the database failed, nothing")
    one_warning(caplog, f"could not erase guild {s.guild.id}: the database failed, nothing")
    assert "- 3\N{MULTIPLICATION SIGN}3: 1 game stored" in kept
    assert forgotten.message is not None
    assert DONE in text_of(forgotten.message)
    assert erased.message is not None
    assert "Done: deleted 1 game" in text_of(erased.message)


async def test_a_forget_whose_boards_the_database_failed_to_show_still_says_it_was_done(
    sim: DiscordSim, harness: BotHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The member is told their data is gone, then their ended games are shown on their
    boards: a database failing at that last step must not follow 'Done' with 'nothing was
    done'. The board shows its end at its next click, as any board not edited."""
    s = sim.seed
    async with harness.running() as bot:
        live = await start_member_game(sim, s.thread, s.carol, s.alice)
        real = bot.members_data.forget

        async def then_down(user_id: int, asked_at: int) -> Forgetting:
            forgetting = await real(user_id, asked_at)

            async def down(channel_id: int) -> ReplyRoute | None:
                raise DatabaseUnavailableError("connection refused", nothing_written=True)

            monkeypatch.setattr(bot.storage, "reply_route", down)
            return forgetting

        monkeypatch.setattr(bot.members_data, "forget", then_down)
        question = await ask_to_forget(sim, s.alice)
        done = await confirm(sim, s.alice, question)
        assert await bot.in_flight.wait_idle(patience=5)
        monkeypatch.undo()
        said = [text_of(m) for m in [done.message, *done.followups] if m is not None]
        still_shown = sim.message(live.id)
        assert is_live(still_shown)  # not edited: the database failed first
        clicked = await sim.click(s.carol, still_shown, cell_id(still_shown, "B2"))
    assert any(DONE in text for text in said), said
    assert not any("nothing was" in text.lower() for text in said), said
    assert not is_live(sim.message(live.id)), text_of(clicked)
