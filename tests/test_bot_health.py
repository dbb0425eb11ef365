"""The bot's HTTP port (``TTT_HTTP_PORT``) and its logs, as an operator meets them:
``python -m bot`` as a real process against the local Discord server, asked over HTTP by a
real client. ``/livez``, ``/readyz`` before and after the gateway's READY and while the
database is down or hung, ``/metrics`` moving by the expected amount as each event happens,
the health check through the port, what an attacker's requests get, ``LOG_FORMAT=json``
lines, text logs without colours, a routine gateway reconnection, and no token anywhere."""

from __future__ import annotations

import asyncio
import copy
import datetime as dt
import io
import json
import logging
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager, suppress
from pathlib import Path

import aiohttp
import discord
import pytest
from aiohttp import web_protocol, web_server
from prometheus_client.parser import text_string_to_metric_families

from bot import client, logs
from bot.client import LIVE_GAMES_INTERVAL, TTTBot
from bot.config import DEFAULT_HTTP_IDLE_TIMEOUT, ConfigError, Settings
from bot.errors import APOLOGY, DATABASE_DOWN
from bot.health import REQUEST_PATIENCE, REQUESTS_A_CONNECTION, HealthServer
from bot.metrics import OPERATIONS, InteractionKind, Metrics
from bot.stalls import IDLE_TICK
from tests.bot_harness import (
    CALLBACK,
    HTTP,
    BotHarness,
    both_front_doors,
    cell_id,
    final_answer,
    first_answers_lost,
    start_member_game,
    text_of,
)
from tests.bot_processes import ROOT, bot_env, bot_process, serving_process, started
from tests.discord_sim import DiscordSim, SimTimeout
from tests.postgres_cluster import PostgresServer, free_port, postgres_server

# Labels, sorted, as a key: ("kind", "command"), ("outcome", "answered")...
Labels = tuple[tuple[str, str], ...]
Samples = dict[tuple[str, Labels], float]

OPERATIONS_DONE = "tttbot_database_operation_seconds_count"
# The bot's own window for a lost first answer (bot.answers.LAST_TRY_AFTER), and a margin.
PAST_THE_BOTS_WINDOW = 3.5
# How long the tests hold the SQLite file: past the bot's deferral deadline (1.5 s), within
# Discord's 3 s for the deferral itself.
LOCKED_FOR = 2.2


def parse(text: str) -> Samples:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


class Port:
    """The bot's HTTP port, asked by a real client."""

    def __init__(self, http: aiohttp.ClientSession, port: int) -> None:
        self.http = http
        self.base = f"http://127.0.0.1:{port}"

    async def get(self, path: str) -> tuple[int, str]:
        async with self.http.get(self.base + path) as response:
            return response.status, await response.text()

    async def metrics(self) -> Samples:
        status, text = await self.get("/metrics")
        assert status == 200, text
        return parse(text)

    async def until(
        self, predicate: Callable[[Samples], bool], what: str, patience: float = 10.0
    ) -> Samples:
        """Scrape until ``predicate`` holds: counts are taken as the handler ends, a moment
        after the answer the sim saw."""
        deadline = time.monotonic() + patience
        while True:
            samples = await self.metrics()
            if predicate(samples):
                return samples
            assert time.monotonic() < deadline, f"never {what}"
            await asyncio.sleep(0.05)

    async def status_until(self, path: str, status: int, patience: float = 20.0) -> str:
        deadline = time.monotonic() + patience
        while True:
            try:
                got, text = await self.get(path)
            except aiohttp.ClientConnectionError:
                got, text = 0, "not listening"
            if got == status:
                return text
            assert time.monotonic() < deadline, f"{path} never answered {status}: {text}"
            await asyncio.sleep(0.05)


@asynccontextmanager
async def http_port(port: int) -> AsyncIterator[Port]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=5)) as http:
        yield Port(http, port)


@contextmanager
def sqlite_locked(path: Path) -> Iterator[None]:
    """Another process holds the SQLite file's write lock for :data:`LOCKED_FOR` seconds from
    when the block starts."""
    locked = threading.Event()

    def hold() -> None:
        with closing(sqlite3.connect(path, isolation_level=None)) as db:
            db.execute("BEGIN IMMEDIATE")
            locked.set()
            time.sleep(LOCKED_FOR)
            db.execute("ROLLBACK")

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(5)
        yield
    finally:
        holder.join()


def postgres_processes(server: PostgresServer) -> list[int]:
    """The server's postmaster and its children (backends, background workers)."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):  # a process that just ended
            continue
        if parent == postmaster:
            children.append(int(stat.parent.name))
    return [postmaster, *children]


@contextmanager
def postgres_hung(server: PostgresServer) -> Iterator[None]:
    """The server stopped dead (SIGSTOP to the postmaster and every backend) for the block: its
    connections stay open, the kernel still accepts new ones, and nothing answers."""
    processes = postgres_processes(server)
    for pid in processes:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in processes:
            os.kill(pid, signal.SIGCONT)


async def timed_get(http: Port, path: str) -> tuple[int, str, float]:
    started = time.monotonic()
    status, text = await http.get(path)
    return status, text, time.monotonic() - started


def healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.healthcheck"],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=ROOT,
    )


@pytest.mark.slow  # a real python -m bot process
@both_front_doors
async def test_sigterm_while_discord_is_slow_to_log_the_bot_in_stops_it_at_once(
    sim: DiscordSim, tmp_path: Path, front_door: str
) -> None:
    """Discord slow to say who the bot is (an outage: discord.py retries for half a minute):
    a SIGTERM waited for the login to end, past the 10 s a container platform gives before its
    SIGKILL. Nothing is open yet (no database, no gateway): it now stops at once."""
    port = free_port()
    sim.faults.add("GET /users/@me", delay=20)
    env = {"TTT_HTTP_PORT": str(port)}
    if front_door == HTTP:
        env["DISCORD_PUBLIC_KEY"] = sim.public_key
    args = ("serve",) if front_door == HTTP else ()
    async with started(sim, tmp_path, *args, **env) as bot, http_port(port) as http:
        await http.status_until("/livez", 200)
        await asyncio.sleep(0.5)  # inside the login, Discord holding its answer
        asked = time.monotonic()
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 15) == 0, bot.log
        took = time.monotonic() - asked
    assert took < 3, took
    assert "stopping before the bot logged in" in bot.log
    assert "Traceback" not in bot.log
    assert " ERROR " not in bot.log
    assert not (tmp_path / "bot.sqlite3").exists()  # no database opened, none made


@pytest.mark.slow  # a real python -m bot process
async def test_readyz_is_false_until_the_gateway_is_ready_then_true(
    sim: DiscordSim, tmp_path: Path
) -> None:
    port = free_port()
    # Login waits on Discord: the port answers meanwhile, and says why the bot is not ready.
    sim.faults.add("GET /users/@me", delay=1.5)
    async with started(sim, tmp_path, TTT_HTTP_PORT=str(port)) as bot, http_port(port) as http:
        await http.status_until("/livez", 200)
        status, text = await http.get("/readyz")
        assert (status, text) == (503, "not ready: not connected to Discord yet\n")
        assert sim.identifies == 0
        env = bot_env(sim, tmp_path, TTT_HTTP_PORT=str(port))
        unready = await asyncio.to_thread(healthcheck, env)
        assert (unready.returncode, unready.stdout) == (
            1,
            "tttbot: not ready: not connected to Discord yet\n",
        )
        assert await http.status_until("/readyz", 200) == "ready\n"
        assert sim.identifies == 1
        ready = await asyncio.to_thread(healthcheck, env)
        assert (ready.returncode, ready.stdout) == (0, "tttbot: ready\n")
        bot.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(bot.process.wait(), 20) == 0, bot.log


async def until(predicate: Callable[[], bool], patience: float, what: str) -> None:
    """Wait, polling, until ``predicate()`` holds (the bot's state: the sim is not told)."""
    deadline = time.monotonic() + patience
    while not predicate():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.01)


@pytest.mark.slow  # about 6 s waiting: discord.py's pause before a fresh IDENTIFY
async def test_readyz_is_false_while_a_shard_is_reconnecting_and_true_again_after(
    sim: DiscordSim, harness: BotHarness
) -> None:
    """Ready once is not ready now: a shard whose connection dropped, and whose reconnection
    Discord refuses for a while, makes the process not ready (and counts as not connected)
    until it is connected again."""

    def connected(samples: bytes) -> float:
        return value(parse(samples.decode()), "tttbot_shards_connected")

    async with harness.running() as bot:
        bot.metrics.reuse = 0  # a scrape's text is otherwise kept for a second
        assert await bot.readiness() is None
        assert connected(await bot.scrape()) == 1
        sim.refuse_gateway(2)
        await sim.drop_connection(wait=False)
        await until(lambda: not bot.is_connected(), 5, "the dropped connection noticed")
        assert await bot.readiness() == "a gateway shard of this process is not connected"
        assert connected(await bot.scrape()) == 0
        await until(bot.is_connected, 30, "the shard connected again")
        assert await bot.readiness() is None
        assert connected(await bot.scrape()) == 1


async def test_the_heartbeat_stops_while_a_shard_is_reconnecting_and_beats_again_after(
    sim: DiscordSim, harness: BotHarness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The image's HEALTHCHECK without TTT_HTTP_PORT (issue 9: it says whether the bot is
    connected) reads the heartbeat file's age: a bot whose connection dropped must leave it
    alone until it is connected again, as /readyz says not ready (above)."""
    monkeypatch.setattr(client, "HEARTBEAT_INTERVAL", 0.05)
    heartbeat = tmp_path / "heartbeat"
    async with harness.running(heartbeat_file=str(heartbeat)) as bot:
        await until(heartbeat.exists, 5, "the first heartbeat")
        sim.refuse_gateway(2)
        await sim.drop_connection(wait=False)
        await until(lambda: not bot.is_connected(), 5, "the dropped connection noticed")
        await asyncio.sleep(0.1)  # a touch already under way lands
        last = heartbeat.stat().st_mtime_ns
        # Ten intervals; the connection's refusals and discord.py's 5 s pause before a fresh
        # IDENTIFY keep it down for longer.
        await asyncio.sleep(0.5)
        assert not bot.is_connected()
        assert heartbeat.stat().st_mtime_ns == last
        await until(bot.is_connected, 30, "the shard connected again")
        await until(lambda: heartbeat.stat().st_mtime_ns > last, 5, "a heartbeat again")


@pytest.mark.slow  # a real python -m bot process
@pytest.mark.postgres
@both_front_doors
async def test_readyz_is_false_while_the_database_is_down_and_true_again_after(
    sim: DiscordSim, tmp_path: Path, front_door: str
) -> None:
    s = sim.seed
    port = free_port()
    # A cluster of the test's own, to stop and start: the whole cluster is thrown away after.
    with postgres_server() as (cluster, server):
        admin = await cluster.admin()
        try:
            await admin.execute('CREATE DATABASE "tttbot"')
        finally:
            await admin.close()
        env = {"TTT_HTTP_PORT": str(port), "DATABASE_URL": cluster.url("tttbot")}
        async with (
            serving_process(sim, tmp_path, front_door, **env) as bot,
            http_port(port) as http,
        ):
            assert await http.status_until("/readyz", 200) == "ready\n"
            board = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="smart")
            assert board.message is not None
            await asyncio.to_thread(server.shut_down)
            try:
                text = await http.status_until("/readyz", 503)
                assert text.startswith("not ready: the database did not answer"), text
                assert (await http.get("/livez"))[0] == 200  # alive all the same
                # A click meanwhile: known to have changed nothing, said to its member alone; the
                # board as it was.
                shown = (text_of(board.message), copy.deepcopy(board.message.components))
                clicked = await sim.click(s.alice, board.message, cell_id(board.message, "B2"))
                apology = await final_answer(clicked)
                assert apology.ephemeral
                assert apology.content == DATABASE_DOWN
                assert (text_of(board.message), board.message.components) == shown
            finally:
                await asyncio.to_thread(server.restart, cluster)
            assert await http.status_until("/readyz", 200) == "ready\n"
            # The same click once the database is back: played, as if nothing had happened.
            clicked = await sim.click(s.alice, board.message, cell_id(board.message, "B2"))
            assert "B2" in text_of(await final_answer(clicked))
            assert " ERROR " not in bot.log


@pytest.mark.slow  # a real python -m bot process
@pytest.mark.postgres
@both_front_doors
async def test_a_hung_database_gets_503_within_a_second_and_interactions_an_apology(
    sim: DiscordSim, tmp_path: Path, front_door: str
) -> None:
    """PostgreSQL stopped dead, not down: asyncio.wait_for on the ping waited for the cancelled
    query, so /readyz answered when the server did (after 30 s in the issue's run), and an
    interaction waited as long."""
    s = sim.seed
    port = free_port()
    with postgres_server() as (cluster, server):
        admin = await cluster.admin()
        try:
            await admin.execute('CREATE DATABASE "tttbot"')
        finally:
            await admin.close()
        env = {"TTT_HTTP_PORT": str(port), "DATABASE_URL": cluster.url("tttbot")}
        async with serving_process(sim, tmp_path, front_door, **env), http_port(port) as http:
            assert await http.status_until("/readyz", 200) == "ready\n"
            pinged = value(await http.metrics(), OPERATIONS_DONE, operation="ping")

            # A short hang: each check answers within about its second, on one ping.
            with postgres_hung(server):
                for _ in range(2):
                    status, text, took = await timed_get(http, "/readyz")
                    assert (status, text) == (
                        503,
                        "not ready: the database did not answer within 1 s\n",
                    )
                    assert took < 2.5, took
                status, _, took = await timed_get(http, "/metrics")  # waits on no database
                assert (status, took < 1.5) == (200, True), took
            # The one ping outstanding is answered now, and was the only one.
            await http.until(
                lambda now: value(now, OPERATIONS_DONE, operation="ping") == pinged + 1,
                "the ping answered",
            )
            await asyncio.sleep(1.5)
            assert value(await http.metrics(), OPERATIONS_DONE, operation="ping") == pinged + 1
            assert await http.status_until("/readyz", 200) == "ready\n"

            # A long hang: a command is deferred, then apologised for once its statement gives
            # up (asyncpg's command_timeout), rather than when the server answers again.
            with postgres_hung(server):
                ix = await sim.slash(s.alice, s.channel, "ttt stats", timeout=10)
                assert ix.response_type == 5
                (sentence,) = await ix.wait_followups(timeout=30)
            assert sentence.ephemeral
            assert sentence.content == APOLOGY
            # Back to normal once the server is.
            assert await http.status_until("/readyz", 200) == "ready\n"
            stats = await sim.slash(s.alice, s.channel, "ttt stats", timeout=10)
            assert stats.response_type == 4


@pytest.mark.slow  # a real python -m bot process
async def test_every_metric_moves_when_its_event_happens(sim: DiscordSim, tmp_path: Path) -> None:
    s = sim.seed
    sim.heartbeat_interval_ms = 200  # gateway latency known at once
    port = free_port()
    async with bot_process(sim, tmp_path, TTT_HTTP_PORT=str(port)) as bot, http_port(port) as http:
        await http.status_until("/readyz", 200)
        samples = before_scrapes = await http.until(
            lambda now: value(now, "tttbot_gateway_latency_seconds", shard="0") > 0,
            "a gateway latency",
        )
        assert value(samples, "tttbot_shards") == 1
        assert value(samples, "tttbot_shards_connected") == 1
        assert value(samples, "tttbot_gateway_latency_seconds", shard="0") < 1
        assert value(samples, "tttbot_live_games") == 0
        assert value(samples, "process_resident_memory_bytes") > 0
        assert value(samples, "process_cpu_seconds_total") > 0

        # The live games are counted in the background, not at each scrape.
        def counted(now: Samples) -> float:
            return value(now, OPERATIONS_DONE, operation="live_games")

        started = time.monotonic()
        for _ in range(20):
            await http.metrics()
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.1)  # past the reuse of the last scrape's text
        samples = await http.metrics()
        intervals = (time.monotonic() - started) / LIVE_GAMES_INTERVAL
        assert counted(samples) - counted(before_scrapes) <= intervals + 1
        before = samples

        def moved(now: Samples, name: str, **labels: str) -> float:
            return value(now, name, **labels) - value(before, name, **labels)

        def handled(now: Samples, kind: str, outcome: str) -> float:
            return moved(now, "tttbot_interactions_total", kind=kind, outcome=outcome)

        # A command answered and a game started: /ttt start, then Accept (a button).
        board = await start_member_game(sim)
        # The live games are counted every LIVE_GAMES_INTERVAL seconds.
        now = await http.until(
            lambda now: (
                handled(now, "component", "answered") == 1 and value(now, "tttbot_live_games") == 1
            ),
            "the Accept and the live game counted",
        )
        assert handled(now, "command", "answered") == 1
        assert moved(now, "tttbot_answer_latency_seconds_count", kind="command") == 1
        assert moved(now, "tttbot_answer_latency_seconds_count", kind="component") == 1
        assert moved(now, "tttbot_games_started_total", size="3x3", level="members") == 1
        assert value(now, "tttbot_live_games") == 1
        assert (
            moved(now, "tttbot_database_operation_seconds_count", operation="close_challenge") == 1
        )
        assert (
            moved(now, "tttbot_database_operation_seconds_count", operation="create_challenge") == 1
        )

        # A click answered from the gateway payload, and one out of turn refused.
        await sim.click(s.alice, board, cell_id(board, "A1"))
        board = sim.message(board.id)
        refused = await sim.click(s.alice, board, cell_id(board, "C3"))
        assert refused.ephemeral
        now = await http.until(
            lambda now: handled(now, "component", "refused") == 1,
            "the click out of turn counted",
        )
        assert handled(now, "component", "answered") == 2
        assert moved(now, "tttbot_database_operation_seconds_count", operation="save_game") == 1

        # A command refused (a cell no board has), and an autocomplete answered.
        await sim.slash(s.bob, s.channel, "ttt move", cell="Z9")
        choices = await sim.autocomplete(s.bob, s.channel, "ttt move", focused="cell", cell="")
        assert choices
        now = await http.until(
            lambda now: handled(now, "autocomplete", "answered") == 1,
            "the autocomplete counted",
        )
        assert handled(now, "command", "refused") == 1

        # A click while another process holds the database: deferred, then shown by an edit
        # through discord.py, which Discord asks to wait once (a 429 discord.py's session sees).
        sim.faults.add("PATCH /webhooks/{id}/{token}/messages/@original", rate_limit=0.1)
        with sqlite_locked(tmp_path / "bot.sqlite3"):
            deferred = await sim.click(s.bob, board, cell_id(board, "B1"), timeout=10)
            assert deferred.response_type == 6
            await deferred.wait_done(timeout=10)
        board = sim.message(board.id)
        now = await http.until(
            lambda now: handled(now, "component", "deferred") == 1,
            "the deferred click counted",
        )
        assert moved(now, "tttbot_discord_rate_limits_total") == 1

        # Discord asks the bot to wait (429), then fails (500): each answer goes again.
        sim.faults.add(CALLBACK, rate_limit=0.2)
        await sim.click(s.alice, board, cell_id(board, "A2"))
        board = sim.message(board.id)
        sim.faults.add(CALLBACK, status=500)
        await sim.click(s.bob, board, cell_id(board, "B2"))
        board = sim.message(board.id)
        now = await http.until(
            lambda now: (
                moved(now, "tttbot_discord_server_errors_total") == 1
                and handled(now, "component", "answered") == 4
            ),
            "the 429 and the 500 counted",
        )
        assert moved(now, "tttbot_discord_rate_limits_total") == 2

        # The winning move: the game ends, and nothing is live.
        await sim.click(s.alice, board, cell_id(board, "A3"))
        now = await http.until(
            lambda now: (
                moved(now, "tttbot_games_finished_total", size="3x3", level="members") == 1
                and value(now, "tttbot_live_games") == 0
            ),
            "the finished game counted",
        )
        assert value(now, "tttbot_live_games") == 0

        # An answer that never gets through: failed.
        with first_answers_lost(sim), pytest.raises(SimTimeout):
            await sim.slash(s.alice, s.channel, "ttt board", timeout=PAST_THE_BOTS_WINDOW)
        now = await http.until(
            lambda now: handled(now, "command", "failed") == 1,
            "the lost answer counted",
        )

        # The event loop held up (the process stopped for a moment): a stall. An idle bot's
        # watcher looks every IDLE_TICK, so it sees 0.3 s of it at least.
        bot.process.send_signal(signal.SIGSTOP)
        await asyncio.sleep(0.3 + IDLE_TICK)
        bot.process.send_signal(signal.SIGCONT)
        # Waited for by its length: on a busy machine a shorter stall may be counted first.
        now = await http.until(
            lambda now: moved(now, "tttbot_event_loop_stall_seconds_sum") >= 0.25,
            "the stall counted",
        )
        assert moved(now, "tttbot_event_loop_stall_seconds_count") >= 1

        text = (await http.get("/metrics"))[1]
    assert sim.token not in text
    for snowflake in (s.alice.id, s.bob.id, s.guild.id, s.channel.id):  # no id in a label
        assert str(snowflake) not in text
    # Every storage operation that ran has its own series, and none other: one that never ran
    # in this process (a member forgotten, a server erased) has none.
    operations = {
        dict(labels)["operation"]
        for (name, labels) in parse(text)
        if name == "tttbot_database_operation_seconds_count"
    }
    assert operations <= set(OPERATIONS)
    assert {"create_challenge", "close_challenge", "save_game", "ping", "live_games"} <= operations
    assert not {"forget_member", "erase_guild"} & operations


@pytest.mark.slow  # a real python -m bot process
async def test_json_logs_are_one_object_a_line_with_the_interactions_fields(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    async with bot_process(sim, tmp_path, LOG_FORMAT="json", LOG_LEVEL="INFO") as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert ix.message is not None
        click = await sim.click(s.alice, ix.message, cell_id(ix.message, "B2"))
        await sim.slash(s.bob, s.channel, "ttt move", cell="Z9")
        choices = await sim.autocomplete(s.alice, s.channel, "ttt move", focused="cell", cell="")
        assert choices
        await asyncio.sleep(0.5)  # the last interaction's line follows its answer
    lines = bot.log.splitlines()
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= entry.keys(), entry
    handled = [entry for entry in entries if entry["logger"] == "bot.interactions"]
    # One line for each interaction, autocompletes included.
    assert sorted(entry["interaction_id"] for entry in handled) == sorted(
        str(record.id) for record in sim.interactions
    )
    by_id = {entry["interaction_id"]: entry for entry in handled}
    command = by_id[str(ix.id)]
    assert command["kind"] == "command"
    assert command["command"] == "/ttt vs-ai"
    assert command["guild_id"] == str(s.guild.id)
    assert command["channel_id"] == str(s.channel.id)
    assert command["shard"] == 0
    assert command["outcome"] == "answered"
    assert 0 <= command["latency_ms"] < 3000
    button = by_id[str(click.id)]
    assert (button["kind"], button["button"], button["outcome"]) == (
        "component",
        "cell",
        "answered",
    )
    moves = [e for e in by_id.values() if e.get("command") == "/ttt move"]
    assert sorted((e["kind"], e["outcome"]) for e in moves) == [
        ("autocomplete", "answered"),
        ("command", "refused"),
    ]
    assert all(0 <= e["latency_ms"] < 3000 for e in moves if e["outcome"] == "answered")
    assert sim.token not in bot.log
    assert ix.token not in bot.log
    assert click.token not in bot.log


@pytest.mark.slow  # a real python -m bot process
async def test_a_port_already_taken_is_one_line_and_a_failure(
    sim: DiscordSim, tmp_path: Path
) -> None:
    with closing(socket.socket()) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "bot"],
            env=bot_env(sim, tmp_path, TTT_HTTP_PORT=str(port), LOG_LEVEL="WARNING"),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            cwd=tmp_path,
        )
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(f"tttbot: TTT_HTTP_PORT {port}: cannot listen on 127.0.0.1:{port}: ")
    )
    assert "Traceback" not in result.stderr
    assert sim.identifies == 0  # stopped before logging in


async def always_ready() -> None:
    return None


async def nothing_to_scrape() -> bytes:
    return b""


def health_server(
    port: int,
    idle_timeout: float = DEFAULT_HTTP_IDLE_TIMEOUT,
    request_patience: float = REQUEST_PATIENCE,
    requests_a_connection: int = REQUESTS_A_CONNECTION,
) -> HealthServer:
    """The port's server on 127.0.0.1, always ready, with nothing to scrape."""
    return HealthServer(
        "127.0.0.1",
        port,
        readiness=always_ready,
        scrape=nothing_to_scrape,
        idle_timeout=idle_timeout,
        request_patience=request_patience,
        requests_a_connection=requests_a_connection,
    )


@pytest.mark.parametrize("host", ["192.0.2.1", "[::1]", "no.such.host.invalid"])
async def test_an_address_the_port_cannot_listen_on_names_ttt_http_host(host: str) -> None:
    """An address no interface of this host has (TEST-NET-1), one in brackets, a name that
    does not resolve: the host is what to fix, and the line named TTT_HTTP_PORT."""

    port = free_port()
    server = HealthServer(host, port, readiness=always_ready, scrape=nothing_to_scrape)
    with pytest.raises(ConfigError) as refused:
        await server.start()
    assert str(refused.value).startswith(f"TTT_HTTP_HOST {host}: cannot listen on {host}:{port}: ")


def test_the_port_s_urls_put_an_ipv6_address_in_brackets() -> None:
    def url(host: str) -> str:
        return HealthServer(host, 8080, readiness=always_ready, scrape=nothing_to_scrape).url(
            "/interactions"
        )

    assert url("::") == "http://[::]:8080/interactions"
    assert url("fe80::1") == "http://[fe80::1]:8080/interactions"
    assert url("0.0.0.0") == "http://0.0.0.0:8080/interactions"
    assert url("bot.example") == "http://bot.example:8080/interactions"


# -- what anyone who can reach the port may send ----------------------------------------------

# Requests aiohttp cannot parse, as a scanner or a fuzzer sends them: each gets a 400.
MALFORMED = (
    b"GET * HTTP/1.1\r\nHost: tttbot\r\n\r\n",
    b"GET / HTTP/9.9\r\nHost: tttbot\r\n\r\n",
    b"GET /livez HTTP/1.1\r\nHost: tttbot\r\nno colon here\r\n\r\n",
    b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: tttbot\r\n\r\n",
    b"POST /livez HTTP/1.1\r\nHost: tttbot\r\nContent-Length: many\r\n\r\n",
    b"GET /livez HTTP/1.1\r\nHost: tttbot\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET /livez HTTP/1.1\r\nHost: tttbot\r\nHost: another\r\n\r\n",
    b"GET /livez HTTP/1.1\r\n\r\n",  # no Host
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",  # TLS, to a plain HTTP port
)
# A request left unfinished, as a slow client ("slowloris") leaves it.
PARTIAL = b"GET /livez HTTP/1.1\r\nHost: tttbot\r\n"


async def send_raw(port: int, data: bytes, patience: float = 10.0) -> tuple[bytes, float]:
    """Send ``data`` on a connection of its own; what came back until the server closed it,
    and after how long."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    started = time.monotonic()
    try:
        writer.write(data)
        await writer.drain()
        answer = await asyncio.wait_for(reader.read(), patience)
        return answer, time.monotonic() - started
    finally:
        writer.close()


async def test_malformed_and_slow_requests_get_a_400_or_are_closed_and_log_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiohttp logged each malformed request at ERROR with a traceback, and kept a request
    left unfinished open for an hour."""
    port = free_port()
    server = health_server(port, idle_timeout=0.5, request_patience=0.5)
    caplog.set_level(logging.DEBUG, logger="bot.health")
    await server.start()
    try:
        for data in MALFORMED:
            answer, _ = await send_raw(port, data)
            assert answer.startswith(b"HTTP/1.0 400 Bad Request\r\n"), (data[:30], answer)
        # A good request still gets its answer, and so does one on a connection kept alive.
        answer, _ = await send_raw(
            port, b"GET /livez HTTP/1.1\r\nHost: tttbot\r\nConnection: close\r\n\r\n"
        )
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer.endswith(b"live\n")
        answer, took = await send_raw(port, b"GET /livez HTTP/1.1\r\nHost: tttbot\r\n\r\n")
        assert answer.endswith(b"live\n")
        assert took < 3, took  # the idle connection closed after the patience too
        # Unfinished, or trickled in a header at a time: closed after the patience.
        for trickled in (False, True):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            started = time.monotonic()
            writer.write(PARTIAL)
            closed = False
            while not closed and time.monotonic() - started < 10:
                if trickled:
                    writer.write(b"X-Slow: 1\r\n")
                try:
                    assert await asyncio.wait_for(reader.read(), 0.1) == b""
                except TimeoutError:
                    continue
                except ConnectionResetError:
                    pass  # closed while a header was on its way: the kernel answers a reset
                closed = True
            writer.close()
            took = time.monotonic() - started
            assert closed, trickled
            assert took < 3, (trickled, took)
    finally:
        await server.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in caplog.records if r.exc_info]
    refused = [r.getMessage() for r in caplog.records if "malformed request" in r.getMessage()]
    assert len(refused) == len(MALFORMED)
    assert all("\n" not in line for line in refused)


async def test_an_idle_connection_is_kept_for_the_idle_timeout_and_then_closed() -> None:
    """TTT_HTTP_IDLE_TIMEOUT: behind a load balancer that keeps its connections to the bot
    longer than the bot's 5 s and cannot be told otherwise, the bot keeps them as long (one
    sent a request on a connection the bot was closing: a 502, for Discord a failed
    interaction)."""
    port = free_port()
    server = health_server(port, idle_timeout=2.0, request_patience=0.5)
    await server.start()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(2):
            writer.write(b"GET /livez HTTP/1.1\r\nHost: tttbot\r\n\r\n")
            answer = await asyncio.wait_for(reader.readuntil(b"live\n"), 5)
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
            answered = time.monotonic()
            await asyncio.sleep(0.8)  # idle past the request patience, within the timeout
        assert await asyncio.wait_for(reader.read(), 5) == b""  # closed by the bot
        idle = time.monotonic() - answered
        writer.close()
    finally:
        await server.close()
    assert 1.5 < idle < 4, idle


async def test_a_connection_is_closed_after_so_many_answers_and_says_so() -> None:
    """Under gunicorn a kept-alive connection stays with the worker that accepted it, and
    connections opened at once are often all accepted by one: each is closed after so many
    answers (the last saying ``Connection: close``), so that the client opens it again towards
    whichever worker accepts it then."""
    port = free_port()
    server = health_server(port, requests_a_connection=3)
    await server.start()
    try:
        for _ in range(2):  # a connection's count starts again with the next one
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answers = []
            for _ in range(3):
                writer.write(b"GET /livez HTTP/1.1\r\nHost: tttbot\r\n\r\n")
                answers.append(await asyncio.wait_for(reader.readuntil(b"live\n"), 5))
            closed = await asyncio.wait_for(reader.read(), 5) == b""
            writer.close()
            assert [b"Connection: close\r\n" in answer for answer in answers] == [
                False,
                False,
                True,
            ]
            assert closed
    finally:
        await server.close()


async def test_a_body_that_would_not_inflate_is_dropped_unread_and_logs_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """aiohttp inflated the body of any request sent with ``Content-Encoding``, even one no
    endpoint reads (it is read and dropped after the answer): one that would not inflate was
    a traceback at ERROR, for anyone. Bodies are read as sent (``POST /interactions`` too:
    ``tests/test_bot_endpoint.py``)."""

    port = free_port()
    server = health_server(port)
    caplog.set_level(logging.DEBUG, logger="bot.health")
    await server.start()
    try:
        for encoding in (b"gzip", b"deflate"):
            body = b"not " + encoding
            answer, _ = await send_raw(
                port,
                b"GET /livez HTTP/1.1\r\nHost: tttbot\r\nConnection: close\r\nContent-Encoding: "
                + encoding
                + b"\r\nContent-Length: %d\r\n\r\n" % len(body)
                + body,
            )
            assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer
    finally:
        await server.close()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


async def test_a_client_that_reads_none_of_its_answers_is_closed_after_the_patience(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A client that sends requests (pipelined, one packet) and never reads the answers: once
    the buffers between them are full, aiohttp waits to write the next answer with no limit,
    and the connection stayed open for good. The kernel now closes a connection whose
    answers nobody takes for the port's patience (TCP_USER_TIMEOUT)."""

    async def scrape() -> bytes:
        return b"# a large scrape\n" * 2000

    port = free_port()
    server = HealthServer(
        "127.0.0.1", port, readiness=always_ready, scrape=scrape, request_patience=0.5
    )
    caplog.set_level(logging.DEBUG, logger="bot.health")
    await server.start()
    serving = server.runner.server
    assert serving is not None
    loop = asyncio.get_running_loop()
    try:
        with socket.socket() as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            client.setblocking(False)
            await loop.sock_connect(client, ("127.0.0.1", port))
            scrapes = b"GET /metrics HTTP/1.1\r\nHost: tttbot\r\n\r\n" * 1000
            await loop.sock_sendall(client, scrapes)
            for _ in range(500):  # accepted, within 5 s
                if serving.connections:
                    break
                await asyncio.sleep(0.01)
            assert serving.connections
            stalled = time.monotonic()
            for _ in range(100):  # closed, within 10 s
                if not serving.connections:
                    break
                await asyncio.sleep(0.1)
            open_after = time.monotonic() - stalled if serving.connections else None
    finally:
        await server.close()
    assert open_after is None, "still open, writing to a client that reads nothing"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]


LIVEZ = b"GET /livez HTTP/1.1\r\nHost: tttbot\r\n\r\n"


@asynccontextmanager
async def a_connection_to(
    server: HealthServer,
) -> AsyncIterator[tuple[asyncio.StreamReader, asyncio.StreamWriter]]:
    """``server`` started, and a connection to it; both closed at the end."""
    await server.start()
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        yield reader, writer
    finally:
        writer.close()
        with suppress(ConnectionError):
            await writer.wait_closed()
        await server.close()


async def stopped_listening(server: HealthServer) -> asyncio.Future[None]:
    """``server``'s stop, begun and past the point where it stopped listening."""
    stopping = asyncio.ensure_future(server.close())
    for _ in range(500):  # within 5 s
        if not server.runner.sites:
            return stopping
        await asyncio.sleep(0)
    raise AssertionError("the port did not stop listening")


async def read_an_answer(reader: asyncio.StreamReader) -> bytes:
    """One HTTP answer off ``reader``: its head and its body (by its Content-Length)."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await asyncio.wait_for(reader.readexactly(length), 5)


async def test_a_request_sent_on_a_connection_accepted_before_the_port_stopped_is_answered() -> (
    None
):
    """A client that connected just before the port stopped listening, and sends its request a
    moment later (as a gunicorn worker is replaced: Discord's next connection was accepted by
    the worker that was stopping): aiohttp closed the connection under it, the request
    unanswered, as it closes idle ones. The port now waits a moment for such a connection's
    first request, and answers it before it stops."""
    server = health_server(free_port())
    async with a_connection_to(server) as (reader, writer):
        serving = server.runner.server
        assert serving is not None
        for _ in range(500):  # accepted, within 5 s
            if serving.connections:
                break
            await asyncio.sleep(0.01)
        assert serving.connections
        stopping = await stopped_listening(server)
        writer.write(LIVEZ)
        answer = await asyncio.wait_for(reader.read(), 5)
        stopped, _ = await asyncio.wait({stopping}, timeout=5)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer
    assert answer.endswith(b"live\n")
    assert stopped


async def test_a_request_sent_on_a_kept_alive_connection_as_the_port_stops_is_answered() -> None:
    """A client (a proxy's pool) whose kept-alive connection is between two requests as the
    port stops, its next request on its way: aiohttp closed the idle connection under it, the
    request unanswered (over many worker replacements under load, about two clicks each). The
    port now answers it, as its connection's last (Connection: close), before it stops."""
    server = health_server(free_port())
    async with a_connection_to(server) as (reader, writer):
        writer.write(LIVEZ)
        first = await read_an_answer(reader)
        stopping = await stopped_listening(server)
        writer.write(LIVEZ)
        last = await read_an_answer(reader)
        after = await asyncio.wait_for(reader.read(), 5)
        stopped, _ = await asyncio.wait({stopping}, timeout=5)
    assert first.startswith(b"HTTP/1.1 200 OK\r\n"), first
    assert b"Connection: close" not in first
    assert last.startswith(b"HTTP/1.1 200 OK\r\n"), last
    assert b"Connection: close\r\n" in last
    assert last.endswith(b"live\n")
    assert after == b""  # then closed
    assert stopped


async def test_a_connection_accepted_as_the_port_stops_is_closed_rather_than_held(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection accepted just before the port stopped listening, whose handler had not
    begun to wait for a request when aiohttp marked the idle connections closed: aiohttp
    ignored the request that came then, its client waited for an answer that never came, and
    the stop waited for that client to give up (the runner's minute here; 28.5 s under
    gunicorn, which replaces a worker only once it has exited: CI saw a click go unanswered
    for 5 s while workers were replaced). Such a connection is now closed as the port stops:
    its client is told at once, and the stop goes on."""
    accepted, marked = asyncio.Event(), asyncio.Event()
    start = web_protocol.RequestHandler.start
    pre_shutdown = web_server.Server.pre_shutdown

    async def begun_after_the_marks(handler: web_protocol.RequestHandler) -> None:
        accepted.set()
        await marked.wait()
        await start(handler)

    def marking(server: web_server.Server) -> None:
        pre_shutdown(server)
        marked.set()

    monkeypatch.setattr(web_protocol.RequestHandler, "start", begun_after_the_marks)
    monkeypatch.setattr(web_server.Server, "pre_shutdown", marking)
    server = health_server(free_port())
    async with a_connection_to(server) as (reader, writer):
        await asyncio.wait_for(accepted.wait(), 5)
        stopping = asyncio.ensure_future(server.close())
        await asyncio.wait_for(marked.wait(), 5)
        writer.write(LIVEZ)
        with suppress(ConnectionError):
            await writer.drain()
        stopped, _ = await asyncio.wait({stopping}, timeout=5)
        told = await asyncio.wait_for(reader.read(), 5)
    assert stopped, "the stop waited for a client whose request was ignored"
    assert told == b""  # closed: no answer was coming


@pytest.mark.slow  # a real python -m bot process
async def test_the_bots_port_logs_no_error_for_malformed_requests_and_closes_slow_ones(
    sim: DiscordSim, tmp_path: Path
) -> None:
    port = free_port()
    async with bot_process(sim, tmp_path, TTT_HTTP_PORT=str(port)) as bot, http_port(port) as http:
        await http.status_until("/readyz", 200)
        for data in MALFORMED:
            answer, _ = await send_raw(port, data)
            assert answer.startswith(b"HTTP/1.0 400 Bad Request\r\n"), (data[:30], answer)
        answer, took = await send_raw(port, PARTIAL, patience=REQUEST_PATIENCE + 10)
        assert answer == b""
        assert took < REQUEST_PATIENCE + 2, took
        assert (await http.get("/livez"))[0] == 200
    assert " ERROR " not in bot.log
    assert "Traceback" not in bot.log
    # LOG_LEVEL=DEBUG here: one line each.
    assert bot.log.count("a malformed request (") == len(MALFORMED)


# -- gateway reconnections ------------------------------------------------------------------------


@pytest.mark.slow  # a real python -m bot process
async def test_a_reconnection_through_refused_connections_logs_warnings_and_no_made_up_latency(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Discord's gateway refusing connections for a moment: discord.py logged each failed try
    at ERROR with a traceback, and after the fresh IDENTIFY that follows, the gateway latency
    read 5 s (discord.py's pause before identifying) until the next heartbeat, 41 s later."""
    port = free_port()
    env = {"TTT_HTTP_PORT": str(port), "LOG_LEVEL": "INFO"}
    async with bot_process(sim, tmp_path, **env) as bot, http_port(port) as http:
        await http.status_until("/readyz", 200)
        identifies = sim.identifies
        sim.refuse_gateway(2)
        await sim.drop_connection(wait=False)
        # The connection for its RESUME is refused, then the one for an IDENTIFY; the next
        # gets through, and it identifies afresh after discord.py's 5 s pause.
        await sim.wait_for(lambda: sim.identifies > identifies, timeout=30)
        await http.status_until("/readyz", 200)
        await asyncio.sleep(1.1)  # past the reuse of the last scrape's text
        samples = await http.metrics()
        # No heartbeat of the bot's own was acknowledged yet (Discord's interval is 41 s).
        assert ("tttbot_gateway_latency_seconds", (("shard", "0"),)) not in samples
        assert value(samples, "tttbot_shards_connected") == 1
    assert [i.detail for i in sim.faults.fired("gateway")] == ["refused 502"] * 2
    retries = [line for line in bot.log.splitlines() if "Attempting a reconnect" in line]
    assert len(retries) == 2, bot.log
    for line in retries:
        assert "[WARNING ] discord.shard: Attempting a reconnect for shard ID 0 in " in line
        assert ": 502, message='Invalid response status'" in line
    assert " ERROR " not in bot.log
    assert "Traceback" not in bot.log


def test_a_reconnection_failing_for_another_reason_stays_an_error_with_its_traceback(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Only the failures discord.py's shard retries (the network, Discord) become warnings."""
    TTTBot(Settings.from_env({"DISCORD_TOKEN": sim.token}))  # installs its filters
    shard_log = logging.getLogger("discord.shard")
    caught = _Caught()
    shard_log.addHandler(caught)
    try:
        for error in (ConnectionResetError(104, "reset by peer"), RuntimeError("a bug")):
            try:
                raise error
            except Exception as raised:
                shard_log.error(
                    "Attempting a reconnect for shard ID %s in %.2fs", 0, 1.5, exc_info=raised
                )
    finally:
        shard_log.removeHandler(caught)
    network, bug = caught.records
    assert (network.levelname, network.exc_info) == ("WARNING", None)
    assert network.getMessage() == (
        "Attempting a reconnect for shard ID 0 in 1.50s: [Errno 104] reset by peer"
    )
    assert bug.levelname == "ERROR"
    assert bug.exc_info is not None
    assert isinstance(bug.exc_info[1], RuntimeError)


class _Caught(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_an_answers_latency_counts_from_the_interactions_creation() -> None:
    """From the time in the interaction's snowflake, so that Discord's delivery counts: an
    interaction made 2 s before its answer was taken is 2 s late, however soon the bot saw it."""
    metrics = Metrics()
    made = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=2)
    latency = metrics.answered(InteractionKind.COMMAND, discord.utils.time_snowflake(made))
    assert 2.0 <= latency < 2.5
    labels = {"kind": "command"}
    registry = metrics.registry
    assert registry.get_sample_value("tttbot_answer_latency_seconds_sum", labels) == latency
    assert registry.get_sample_value("tttbot_answer_latency_seconds_count", labels) == 1
    within = {**labels, "le": "1.0"}
    assert registry.get_sample_value("tttbot_answer_latency_seconds_bucket", within) == 0


# -- JSON lines -----------------------------------------------------------------------------------

SECRET = "MTAx.not-a-real-token"


def json_line(message: str, **extra: object) -> dict[str, object]:
    """A WARNING of logger ``bot.service`` made at the epoch, as ``LOG_FORMAT=json`` writes it
    (the token ``SECRET``)."""
    record = logging.LogRecord("bot.service", logging.WARNING, __file__, 1, message, (), None)
    record.created = 0.0
    record.__dict__.update(extra)
    entry: dict[str, object] = json.loads(logs.JsonFormatter([SECRET]).format(record))
    return entry


def test_a_json_line_about_an_interaction_carries_its_fields_and_never_the_token() -> None:
    """Any line logged while an interaction is handled carries its fields, whatever the logger,
    and not after; the token is replaced wherever it would show, a traceback included."""
    plain = {"time": "1970-01-01T00:00:00.000+00:00", "level": "WARNING", "logger": "bot.service"}
    assert json_line("nothing to do with one") == {**plain, "message": "nothing to do with one"}
    click = logs.InteractionFields(11, InteractionKind.COMPONENT, "cell", 22, 33, 1)
    with logs.about(click):
        about = json_line(f"sent with {SECRET} in it", outcome="answered", latency_ms=12.5)
    assert about == {
        **plain,
        "message": "sent with <redacted> in it",
        "interaction_id": "11",
        "kind": "component",
        "button": "cell",
        "guild_id": "22",
        "channel_id": "33",
        "shard": 1,
        "outcome": "answered",
        "latency_ms": 12.5,
    }
    assert "interaction_id" not in json_line("after it")
    try:
        raise RuntimeError(f"the token {SECRET}")
    except RuntimeError:
        record = logging.LogRecord(
            "discord.client", logging.ERROR, __file__, 1, "failed", (), sys.exc_info()
        )
    line = logs.JsonFormatter([SECRET]).format(record)
    assert SECRET not in line
    assert "RuntimeError: the token <redacted>" in json.loads(line)["exception"]


async def test_only_the_task_handling_an_interaction_carries_its_fields() -> None:
    """Each task has its own copy of the context: a line of another task logged meanwhile is
    about no interaction."""
    command = logs.InteractionFields(44, InteractionKind.COMMAND, "/ttt move", None, 55, 0)
    inside = asyncio.Event()
    lines: dict[str, dict[str, object]] = {}

    async def handling() -> None:
        with logs.about(command):
            inside.set()
            await asyncio.sleep(0.01)
            lines["handling"] = json_line("handling")

    async def elsewhere() -> None:
        await inside.wait()
        lines["elsewhere"] = json_line("elsewhere")

    await asyncio.gather(handling(), elsewhere())
    assert lines["handling"]["command"] == "/ttt move"
    assert lines["handling"]["guild_id"] is None
    assert "interaction_id" not in lines["elsewhere"]


# -- text logs ------------------------------------------------------------------------------------


@pytest.fixture
def logging_restored() -> Iterator[None]:
    """Whatever logs.configure changes of the logging setup, put back after the test."""
    root = logging.getLogger()
    watched = [root, logging.getLogger("discord"), logging.getLogger(logs.INTERACTIONS)]
    levels = [logger.level for logger in watched]
    handlers = list(root.handlers)
    try:
        yield
    finally:
        for logger, level in zip(watched, levels, strict=True):
            logger.setLevel(level)
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        for handler in handlers:
            if handler not in root.handlers:
                root.addHandler(handler)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.usefixtures("logging_restored")
@pytest.mark.parametrize("terminal", [False, True], ids=["a file or pipe", "a terminal"])
def test_text_logs_are_in_colour_only_on_a_terminal(
    terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """discord.py colours its lines wherever it finds /.dockerenv, terminal or not: a log
    collector reading a container's output got the escape codes."""
    stream = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(discord.utils, "is_docker", lambda: True)  # as in a Docker container
    logs.configure(Settings.from_env({"DISCORD_TOKEN": "x", "LOG_FORMAT": "text"}))
    logging.getLogger("bot.test").warning("a line")
    text = stream.getvalue()
    if terminal:
        assert "\x1b[" in text
        assert text.endswith("bot.test\x1b[0m a line\n")
    else:
        assert "\x1b[" not in text
        assert text.endswith("] [WARNING ] bot.test: a line\n")


# -- /metrics' text ------------------------------------------------------------------------------


async def test_scrapes_within_the_reuse_share_one_text_made_off_the_event_loop() -> None:
    metrics = Metrics(reuse=0.5)
    metrics.rate_limited.inc()
    first = await metrics.scraped()
    metrics.rate_limited.inc()  # within the reuse: not seen yet
    assert await metrics.scraped() is first
    assert value(parse(first.decode()), "tttbot_discord_rate_limits_total") == 1
    await asyncio.sleep(0.6)
    later = parse((await metrics.scraped()).decode())
    assert value(later, "tttbot_discord_rate_limits_total") == 2
    assert not [name for name, _ in later if name.endswith("_created")]
