"""The bot's HTTP port (``TTT_HTTP_PORT``) and its JSON logs, as an operator meets them:
``python -m bot`` as a real process against the local Discord server, asked over HTTP by a
real client. ``/livez``, ``/readyz`` before and after the gateway's READY and while the
database is down, ``/metrics`` moving by the expected amount as each event happens, the
health check through the port, ``LOG_FORMAT=json`` lines, and no token anywhere."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.metrics import OPERATIONS
from tests.bot_harness import (
    CALLBACK,
    cell_id,
    first_answers_lost,
    start_member_game,
)
from tests.bot_processes import ROOT, bot_env, bot_process, started
from tests.discord_sim import DiscordSim, SimTimeout
from tests.postgres_cluster import free_port, postgres_server

# Labels, sorted, as a key: ("kind", "command"), ("outcome", "answered")...
Labels = tuple[tuple[str, str], ...]
Samples = dict[tuple[str, Labels], float]

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


@pytest.mark.postgres
async def test_readyz_is_false_while_the_database_is_down_and_true_again_after(
    sim: DiscordSim, tmp_path: Path
) -> None:
    port = free_port()
    # A cluster of the test's own, to stop and start: the whole cluster is thrown away after.
    with postgres_server() as (cluster, server):
        admin = await cluster.admin()
        try:
            await admin.execute('CREATE DATABASE "tttbot"')
        finally:
            await admin.close()
        env = {"TTT_HTTP_PORT": str(port), "DATABASE_URL": cluster.url("tttbot")}
        async with bot_process(sim, tmp_path, **env), http_port(port) as http:
            assert await http.status_until("/readyz", 200) == "ready\n"
            await asyncio.to_thread(server.stop)
            try:
                text = await http.status_until("/readyz", 503)
                assert text.startswith("not ready: the database did not answer"), text
                assert (await http.get("/livez"))[0] == 200  # alive all the same
            finally:
                await asyncio.to_thread(server.restart, cluster)
            assert await http.status_until("/readyz", 200) == "ready\n"


async def test_every_metric_moves_when_its_event_happens(sim: DiscordSim, tmp_path: Path) -> None:
    s = sim.seed
    sim.heartbeat_interval_ms = 200  # gateway latency known at once
    port = free_port()
    async with bot_process(sim, tmp_path, TTT_HTTP_PORT=str(port)) as bot, http_port(port) as http:
        await http.status_until("/readyz", 200)
        samples = await http.until(
            lambda now: value(now, "tttbot_gateway_latency_seconds", shard="0") > 0,
            "a gateway latency",
        )
        assert value(samples, "tttbot_shards") == 1
        assert value(samples, "tttbot_shards_connected") == 1
        assert value(samples, "tttbot_gateway_latency_seconds", shard="0") < 1
        assert value(samples, "tttbot_live_games") == 0
        assert value(samples, "process_resident_memory_bytes") > 0
        before = samples

        def moved(now: Samples, name: str, **labels: str) -> float:
            return value(now, name, **labels) - value(before, name, **labels)

        def handled(now: Samples, kind: str, outcome: str) -> float:
            return moved(now, "tttbot_interactions_total", kind=kind, outcome=outcome)

        # A command answered and a game started: /ttt start, then Accept (a button).
        board = await start_member_game(sim)
        now = await http.until(
            lambda now: handled(now, "component", "answered") == 1,
            "the Accept counted",
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
            lambda now: moved(now, "tttbot_games_finished_total", size="3x3", level="members") == 1,
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

        # The event loop held up (the process stopped for a moment): a stall.
        bot.process.send_signal(signal.SIGSTOP)
        await asyncio.sleep(0.3)
        bot.process.send_signal(signal.SIGCONT)
        now = await http.until(
            lambda now: moved(now, "tttbot_event_loop_stall_seconds_count") >= 1,
            "the stall counted",
        )
        assert moved(now, "tttbot_event_loop_stall_seconds_sum") >= 0.25

        text = (await http.get("/metrics"))[1]
    assert sim.token not in text
    for snowflake in (s.alice.id, s.bob.id, s.guild.id, s.channel.id):  # no id in a label
        assert str(snowflake) not in text
    # Every storage operation has its own series, and none other.
    operations = {
        dict(labels)["operation"]
        for (name, labels) in parse(text)
        if name == "tttbot_database_operation_seconds_count"
    }
    assert operations <= set(OPERATIONS)
    assert {"create_game", "save_game", "ping", "live_games"} <= operations


async def test_json_logs_are_one_object_a_line_with_the_interactions_fields(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    async with bot_process(sim, tmp_path, LOG_FORMAT="json", LOG_LEVEL="INFO") as bot:
        ix = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="minimax")
        assert ix.message is not None
        click = await sim.click(s.alice, ix.message, cell_id(ix.message, "B2"))
        await sim.slash(s.bob, s.channel, "ttt move", cell="Z9")
        await asyncio.sleep(0.5)  # the last interaction's line follows its answer
    lines = bot.log.splitlines()
    entries = [json.loads(line) for line in lines]  # every line is one JSON object
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= entry.keys(), entry
    by_id = {
        entry["interaction_id"]: entry for entry in entries if entry["logger"] == "bot.interactions"
    }
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
    refusals = [e for e in by_id.values() if e.get("command") == "/ttt move"]
    assert [e["outcome"] for e in refusals] == ["refused"]
    assert sim.token not in bot.log
    assert ix.token not in bot.log
    assert click.token not in bot.log


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
