"""Several ``python -m bot serve`` workers sharing the interactions of one application, as a
load balancer or gunicorn spreads them: two bots in one test with the sim spreading over
them (in turn and at random), then real gunicorn processes (``bot.gunicorn_app``) with two
workers on one port, a game through them, a worker SIGKILLed under load, and the sweeper
lease's holder SIGKILLed. Whatever worker gets a click, the database decides."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import re
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import orjson
import pytest
from prometheus_client.mmap_dict import MmapedDict, mmap_key
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from bot.client import TTTBot
from bot.clock import SystemClock
from bot.components import CELL_ID
from bot.config import DEFAULT_HTTP_IDLE_TIMEOUT, DatabaseUrl
from bot.health import REQUEST_PATIENCE
from bot.metrics import EXPOSITION_REUSE
from bot.metrics_files import FOLDED_KINDS, folded_file
from bot.storage.base import GameRecord
from bot.storage.connect import open_storage
from game import Mark, cell_name
from tests.bot_harness import (
    BotHarness,
    board_of,
    both_engines,
    cell_id,
    edits_by_rest,
    free_cells,
    http_only,
    is_live,
    shown_board,
    start_member_game,
    text_of,
)
from tests.bot_processes import (
    ANSWERING,
    GUNICORN,
    BotProcess,
    answering_workers,
    bot_env,
    gunicorn_workers,
    terminate,
    worker_pids,
)
from tests.discord_sim import DiscordSim, SimMessage, SimTimeout, SimUser
from tests.postgres_cluster import free_port
from tests.test_bot_health import MALFORMED, PARTIAL, send_raw
from tests.test_deployment import dashboard_queries

ORDERS = pytest.mark.parametrize("order", ["round robin", "random"])


def endpoint_of(bot: TTTBot) -> str:
    return f"http://127.0.0.1:{bot.http_port}/interactions"


@contextlib.asynccontextmanager
async def two_workers(harness: BotHarness) -> AsyncIterator[tuple[TTTBot, TTTBot]]:
    """Two ``serve`` bots on the test's one database."""
    async with harness.running() as first, harness.running() as second:
        yield first, second


async def play_against_bot(
    sim: DiscordSim, user: SimUser, message: SimMessage, rng: random.Random
) -> tuple[SimMessage, int]:
    """Random free cells clicked until the game ends: the final board, and how many clicks."""
    clicks = 0
    while is_live(message):
        ix = await sim.click(user, message, cell_id(message, rng.choice(free_cells(message))))
        clicks += 1
        assert ix.response_type == 7, ix.content
        assert ix.message is not None
        message = ix.message
    return message, clicks


async def play_member_game(sim: DiscordSim) -> SimMessage:
    """A challenge accepted, and a whole game between alice and bob (with a click out of
    turn, refused): the final board."""
    s = sim.seed
    board = await start_member_game(sim)
    for user, cell in [(s.alice, "A1"), (s.bob, "B1"), (s.alice, "A2"), (s.bob, "B2")]:
        ix = await sim.click(user, board, cell_id(board, cell))
        assert ix.response_type == 7, ix.content
        assert ix.message is not None
        board = ix.message
    out_of_turn = await sim.click(s.bob, board, cell_id(board, "A3"))
    assert out_of_turn.response_type == 4, out_of_turn.content
    assert out_of_turn.ephemeral
    final = (await sim.click(s.alice, board, cell_id(board, "A3"))).message
    assert final is not None
    assert shown_board(final) == "XO./XO./X.."
    assert "🏆 ❌ **alice** wins with A1 A2 A3!" in text_of(final)
    return final


@http_only
@both_engines
@ORDERS
async def test_games_over_two_workers_whichever_gets_each_click(
    sim: DiscordSim, harness: BotHarness, order: str
) -> None:
    s = sim.seed
    async with two_workers(harness) as workers:
        urls = [endpoint_of(bot) for bot in workers]
        sim.spread_over(urls, order="random" if order == "random" else "round robin", seed=40)
        await play_member_game(sim)
        # A game against the bot, each click applied once: as many of alice's marks as clicks.
        started = await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None
        ai_final, clicks = await play_against_bot(sim, s.alice, started.message, random.Random(7))
        ai_board = board_of(ai_final)
        assert ai_board.is_over
        assert ai_board.winner is not Mark.X
        assert sum(1 for cell in shown_board(ai_final) if cell == "X") == clicks
        for bot in workers:
            assert await bot.in_flight.wait_idle(patience=5)
        # Both workers counted the same games: the database's, not their memory's.
        stats = [await sim.slash(s.alice, s.channel, "ttt stats") for _ in workers]
        assert len({ix.endpoint for ix in stats}) == 2 or order == "random"
        for ix in stats:
            assert "Against members: 1 W · 0 L · 0 D" in text_of(ix)
    clicks_by = {url: 0 for url in urls}
    for ix in sim.interactions:
        assert ix.answered, ix.describe()
        if ix.type == 3:
            assert ix.endpoint is not None
            clicks_by[ix.endpoint] += 1
    # Any worker may get any click: both got some of each game's.
    assert all(count >= 3 for count in clicks_by.values()), clicks_by


def game_id_of(message: SimMessage) -> int:
    for button in message.buttons():
        fields = CELL_ID.parse(button["custom_id"])
        if fields is not None:
            return int(fields["game"])
    raise AssertionError(f"not a board: {message.buttons()}")


async def stored_games(path: Path, ids: list[int]) -> dict[int, GameRecord]:
    """The games as the SQLite file holds them, read by a storage of the test's own."""
    storage = await open_storage(DatabaseUrl(str(path)), SystemClock())
    try:
        found = {game_id: await storage.get_game(game_id) for game_id in ids}
    finally:
        await storage.close()
    games = {game_id: game for game_id, game in found.items() if game is not None}
    assert len(games) == len(ids), found
    return games


async def test_a_game_through_gunicorn_with_two_workers_on_one_port(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    port = free_port()
    async with gunicorn_workers(sim, tmp_path, port, workers=2) as running:
        workers = await answering_workers(running, 2)
        # The port under gunicorn is the bot's own (its runner): malformed requests get 400
        # and no ERROR, and a request left unfinished is closed after the idle timeout
        # (waited for while the games are played).
        for data in MALFORMED:
            answer, _ = await send_raw(port, data)
            assert answer.startswith(b"HTTP/1.0 400 Bad Request\r\n"), (data[:30], answer)
        unfinished = asyncio.ensure_future(send_raw(port, PARTIAL, patience=REQUEST_PATIENCE + 10))
        final = await play_member_game(sim)
        started = await sim.slash(s.alice, s.other_channel, "ttt vs-ai", difficulty="minimax")
        assert started.message is not None
        ai_final, clicks = await play_against_bot(sim, s.alice, started.message, random.Random(3))
        assert not is_live(ai_final)
        answer, took = await unfinished
        assert (answer, took < DEFAULT_HTTP_IDLE_TIMEOUT + 2) == (b"", True), took
    # Stopped with SIGTERM: each worker in order, the lease given up, nothing logged as an
    # error.
    assert running.process.returncode == 0, running.log
    assert running.log.count("stopped") >= 2, running.log
    assert "gave the sweeper lease up" in running.log
    assert "Traceback" not in running.log, running.log
    assert "[ERROR" not in running.log, running.log
    # gunicorn's own lines in the bot's text format (bot.gunicorn_conf), each written once:
    # a worker's lines go to its own handler only, not the one it inherits from the master.
    for pid in workers:
        booted = f"] [INFO    ] gunicorn.error: Booting worker with pid: {pid}\n"
        assert running.log.count(booted) == 1, running.log
        assert running.log.count(f"bot.gunicorn_app: worker pid {pid} stopped\n") == 1
    games = await stored_games(tmp_path / "bot.sqlite3", [game_id_of(final), game_id_of(ai_final)])
    assert all(not game.is_active for game in games.values())
    assert sum(1 for cell in shown_board(ai_final) if cell == "X") == clicks


async def play_on(
    sim: DiscordSim,
    user: SimUser,
    board: SimMessage,
    rng: random.Random,
    failures: list[str],
    database: Path,
) -> SimMessage:
    """Random free cells clicked until the game ends, as a member would: a click a killed
    worker took with it is tried again; a board left behind by a move that worker saved but
    never showed is redrawn by the next click on it (an update, the member told privately
    that the board changed), and played on; any other refusal is played past with
    ``/ttt move``, which posts the game's board anew. The final board."""
    message = board
    while is_live(message := sim.message(message.id)):
        try:
            ix = await sim.click(user, message, cell_id(message, rng.choice(free_cells(message))))
        except (SimTimeout, aiohttp.ClientError) as error:
            failures.append(f"{type(error).__name__}: {error}")
            await asyncio.sleep(0.2)
            continue
        if ix.response_type == 7:
            continue
        failures.append(f"refused: {ix.content}")
        (game,) = (await stored_games(database, [game_id_of(message)])).values()
        free = [cell for cell in range(9) if cell not in game.moves]
        moved = await sim.slash(
            user, message.channel, "ttt move", cell=cell_name(rng.choice(free), 3)
        )
        if moved.message is not None:
            message = moved.message
    return message


@pytest.mark.slow
async def test_a_worker_killed_under_load_doubles_and_half_saves_nothing(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    channels = [s.channel, s.other_channel]
    async with gunicorn_workers(sim, tmp_path, free_port(), workers=2) as running:
        first = await answering_workers(running, 2)
        boards: list[SimMessage] = []
        for channel in channels:
            started = await sim.slash(s.alice, channel, "ttt vs-ai", difficulty="random")
            assert started.message is not None
            boards.append(started.message)
        failures: list[str] = []
        database = tmp_path / "bot.sqlite3"
        players = [
            asyncio.create_task(
                play_on(sim, s.alice, board, random.Random(board.id), failures, database)
            )
            for board in boards
        ]
        # Mid-load: some clicks answered, the games not over.
        await sim.wait_for(lambda: sum(ix.type == 3 for ix in sim.interactions) >= 3)
        killed = min(first)
        os.kill(killed, signal.SIGKILL)
        answered_before = answered_clicks(sim)
        finals = await asyncio.wait_for(asyncio.gather(*players), 60)
        # The games went on after the kill, on the other worker or the one gunicorn put in
        # the killed one's place.
        assert answered_clicks(sim) > answered_before
        now = await answering_workers(running, 2)
        assert killed not in now
        assert len(set(now) | set(first)) == 3, "gunicorn started no worker in its place"
    games = await stored_games(tmp_path / "bot.sqlite3", [game_id_of(f) for f in finals])
    for final, game in zip(finals, games.values(), strict=True):
        # Nothing doubled, nothing half-saved: the stored game is over, each cell played
        # once, alice and the bot in turn, and the board shows exactly it.
        assert not game.is_active, game
        assert game.board.is_over
        assert len(set(game.moves)) == len(game.moves), game.moves
        assert shown_board(final) == board_from_moves(game.moves), (failures, game.moves)


def answered_clicks(sim: DiscordSim) -> int:
    return sum(1 for ix in sim.interactions if ix.type == 3 and ix.answered)


def board_from_moves(moves: tuple[int, ...], size: int = 3) -> str:
    """A 3 by 3 game's moves, X first, in :func:`shown_board`'s form."""
    cells = ["."] * size * size
    for ply, cell in enumerate(moves):
        cells[cell] = "X" if ply % 2 == 0 else "O"
    return "/".join("".join(cells[row * size : (row + 1) * size]) for row in range(size))


async def lease_holder(path: Path, patience: float = 10) -> str:
    """Who holds the sweeper lease, as the SQLite file says, once someone does."""

    def read() -> str | None:
        with contextlib.closing(sqlite3.connect(path)) as db:
            row = db.execute("SELECT holder FROM leases WHERE name = 'sweeper'").fetchone()
        return None if row is None else str(row[0])

    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while (holder := await asyncio.to_thread(read)) is None:
        assert loop.time() < deadline, "nobody took the sweeper lease"
        await asyncio.sleep(0.1)
    return holder


@pytest.mark.slow
async def test_the_sweeper_lease_holder_killed_another_worker_takes_it_and_sweeps(
    sim: DiscordSim, tmp_path: Path
) -> None:
    s = sim.seed
    async with gunicorn_workers(
        sim, tmp_path, free_port(), env={"TTT_CHALLENGE_TIMEOUT": "10"}
    ) as running:
        workers = await answering_workers(running, 2)
        by_sweeper = {sweeper: pid for pid, sweeper in workers.items()}
        holder = await lease_holder(tmp_path / "bot.sqlite3")
        assert holder in by_sweeper, (holder, workers)
        os.kill(by_sweeper[holder], signal.SIGKILL)
        # A challenge nobody accepts, made once the holder is gone: only a worker that took
        # the lease over can expire it.
        challenge = await sim.slash(s.alice, s.channel, "ttt start", opponent=s.bob)
        message = challenge.message
        assert message is not None
        await sim.wait_for(lambda: "expired" in (sim.message(message.id).content or ""), timeout=40)
        new_holder = await lease_holder(tmp_path / "bot.sqlite3")
        assert new_holder != holder
        assert f"worker {new_holder} took the sweeper lease" in running.log
        # Expired once: one edit, by the new holder's sweep.
        assert edits_by_rest(sim, message) == 1


async def test_gunicorn_with_a_setting_missing_stops_with_its_line_alone(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Checked in gunicorn's master (bot.gunicorn_conf) before it binds the port or starts a
    worker: the operator reads one line, nothing else."""
    env = {"DISCORD_PUBLIC_KEY": ""}
    async with gunicorn_workers(sim, tmp_path, free_port(), env=env) as running:
        await asyncio.wait_for(running.process.wait(), 30)
    assert running.process.returncode == 2
    (line,) = running.log.splitlines()
    assert line.startswith("tttbot: DISCORD_PUBLIC_KEY is not set"), line
    assert not sim.requests
    assert metrics_directories(tmp_path) == []  # the one it had made for /metrics, removed


async def test_gunicorn_bound_to_a_port_out_of_range_stops_with_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """gunicorn's own bind raised OverflowError out of its master: a traceback for a typo in
    --bind."""
    async with gunicorn_workers(sim, tmp_path, 70000) as running:
        await asyncio.wait_for(running.process.wait(), 30)
    assert running.process.returncode == 2
    assert running.log.splitlines()[-1] == (
        "tttbot: --bind 127.0.0.1:70000: the port must be a number from 0 to 65535"
    )
    assert "Traceback" not in running.log, running.log
    assert not sim.requests
    assert metrics_directories(tmp_path) == []


async def test_gunicorn_whose_workers_cannot_boot_stops_with_one_line_and_no_traceback(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """A token Discord rejects: every worker fails at once. gunicorn stops on the first
    ("Worker failed to boot.") rather than start workers anew, and the operator reads the one
    line that says why, not gunicorn's traceback of a second HaltServer raised while it
    stopped (bot.gunicorn_app.BootFailures)."""
    env = {"DISCORD_TOKEN": "not-the-token"}
    async with gunicorn_workers(sim, tmp_path, free_port(), workers=3, env=env) as running:
        await asyncio.wait_for(running.process.wait(), 30)
    assert running.process.returncode == 3
    lines = [text for text in running.log.splitlines() if text.startswith("tttbot:")]
    assert len(lines) == 1, running.log
    assert lines[0].startswith("tttbot: Discord rejected DISCORD_TOKEN"), lines
    assert "Reason: Worker failed to boot." in running.log
    assert "Traceback" not in running.log, running.log
    # Nothing was played, and no worker served.
    assert "answering interactions" not in running.log
    assert not any(r.path.endswith("/callback") for r in sim.requests)


async def test_a_worker_that_cannot_boot_takes_a_sigterm_while_closing_its_loop_quietly(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """gunicorn's master stops once a worker fails to boot, and SIGTERMs the others as they
    fail too. asyncio's loop.close() closes the loop's self-pipe before it resets the signal
    wakeup fd, so a SIGTERM in between was written to a closed file: "Exception ignored ...
    Bad file descriptor" and a traceback on the operator's screen (seen once in a loaded
    run of the test above). Here that SIGTERM comes at exactly that moment."""
    env = bot_env(sim, tmp_path, DISCORD_PUBLIC_KEY=sim.public_key, DISCORD_TOKEN="not-the-token")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.boot_failure_process",
        env=env,
        cwd=tmp_path,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, err.decode()
    assert out.decode().splitlines()[-1] == "exit 3", (out.decode(), err.decode())
    assert "Discord rejected DISCORD_TOKEN" in err.decode()
    assert "Traceback" not in err.decode(), err.decode()
    assert "Exception ignored" not in err.decode(), err.decode()


async def test_gunicorn_with_json_logs_writes_every_line_as_one_json_object(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """LOG_FORMAT=json covers gunicorn's own lines too, its master's and its workers': from
    "Starting gunicorn" to the master's shutting down, through an interaction answered."""
    s = sim.seed
    env = {"LOG_FORMAT": "json"}
    async with gunicorn_workers(sim, tmp_path, free_port(), env=env) as running:
        workers = await answering_workers(running, 2)
        stats = await sim.slash(s.alice, s.channel, "ttt stats")
        assert stats.answered
    assert running.process.returncode == 0, running.log
    entries = [orjson.loads(line) for line in running.log.splitlines()]
    assert all(isinstance(entry, dict) for entry in entries)
    said = {(entry["logger"], entry["message"]) for entry in entries}
    assert any(
        logger == "gunicorn.error" and message.startswith("Starting gunicorn ")
        for logger, message in said
    )
    for pid in workers:
        assert ("gunicorn.error", f"Booting worker with pid: {pid}") in said
        assert ("gunicorn.error", f"Worker exiting (pid: {pid})") in said
    assert ("gunicorn.error", "Shutting down: Master") in said
    assert any(entry.get("command") == "/ttt stats" for entry in entries)
    assert not [entry for entry in entries if entry["level"] in ("ERROR", "CRITICAL")]


# -- /metrics over the workers (prometheus_client's multiprocess mode, bot.gunicorn_conf) -----

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


async def scrape(port: int) -> Samples:
    """One scrape of gunicorn's ``/metrics``, on a connection of its own (so that scrapes
    reach whichever worker accepts them), by sample name and labels."""
    connector = aiohttp.TCPConnector(force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        assert response.status == 200, await response.text()
        text = await response.text()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def total(samples: Samples, name: str) -> float:
    return sum(value for (sample, _), value in samples.items() if sample == name)


def pids_of(samples: Samples, name: str) -> set[int]:
    """The workers a per-worker gauge (``pid`` label) has a series of."""
    return {int(dict(labels)["pid"]) for sample, labels in samples if sample == name}


def counts_by_worker(directory: Path) -> dict[int, float]:
    """Each live worker's own interactions, read from its counter file in the metrics
    directory."""
    return {
        int(path.stem.removeprefix("counter_")): interactions_in(path)
        for path in directory.glob("counter_*.db")
        if path != folded_file(directory, "counter")  # the workers gone
    }


def interactions_in(path: Path) -> float:
    """The interactions one counter file counts (prometheus_client's own reading of it)."""
    merged = MultiProcessCollector.merge([str(path)])  # type: ignore[no-untyped-call]
    return sum(
        float(sample.value)
        for family in merged
        for sample in family.samples
        if sample.name == "tttbot_interactions_total"
    )


async def scraped_with(
    port: int, done: Callable[[Samples], bool], what: str, patience: float = 15
) -> Samples:
    """Scrapes until one satisfies ``done`` (an interaction is counted when its handling ends,
    after Discord took its answer; process figures are written every few seconds)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while not done(samples := await scrape(port)):
        counted = total(samples, "tttbot_interactions_total")
        memory = pids_of(samples, "process_resident_memory_bytes")
        assert loop.time() < deadline, f"{what}: {counted} counted, memory of {memory}"
        await asyncio.sleep(EXPOSITION_REUSE)
    return samples


def never_lower(before: Samples, after: Samples) -> list[str]:
    """Every counter and histogram sample of ``before`` at least as high in ``after``."""
    return [
        f"{name}{dict(labels)}: {value} -> {after.get((name, labels))}"
        for (name, labels), value in before.items()
        if name.endswith(("_total", "_bucket", "_count", "_sum"))
        and not name.startswith("process_")
        and after.get((name, labels), -1.0) < value
    ]


def metrics_directories(folder: Path) -> list[Path]:
    """The directories bot.gunicorn_conf made in ``folder``, gunicorn's temporary folder
    (tests.bot_processes.spawn_gunicorn)."""
    return list(folder.glob("tttbot-metrics-*"))


def gunicorns_metrics_directory(folder: Path) -> Path:
    (directory,) = metrics_directories(folder)
    return directory


async def all_replaced(running: BotProcess, gone: set[int], patience: float = 30) -> set[int]:
    """The two workers answering once none of ``gone`` runs (aiohttp's worker looks at its
    count of requests once a second)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while gone & (now := set(await answering_workers(running, 2, patience))):
        assert loop.time() < deadline, f"workers {gone & now} still run"
        await asyncio.sleep(0.2)
    return now


async def play_a_game_against_the_bot(sim: DiscordSim, seed: int) -> None:
    s = sim.seed
    started = await sim.slash(s.alice, s.channel, "ttt vs-ai", difficulty="random")
    assert started.message is not None
    final, _ = await play_against_bot(sim, s.alice, started.message, random.Random(seed))
    assert not is_live(final)


@pytest.mark.slow
async def test_metrics_through_gunicorn_report_every_worker_whichever_is_scraped(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Each scrape counts every worker's interactions (it read one worker's, and successive
    scrapes looked like counter resets), never fewer than the scrape before, in the
    operator's own metrics directory, emptied of an earlier start's files."""
    directory = tmp_path / "metrics"
    directory.mkdir()
    # An earlier start's file, which must not count: a thousand interactions of a worker
    # long gone.
    stale = MmapedDict(str(directory / "counter_1.db"))  # type: ignore[no-untyped-call]
    stale.write_value(  # type: ignore[no-untyped-call]
        mmap_key(
            "tttbot_interactions",
            "tttbot_interactions_total",
            ["kind", "outcome"],
            ["command", "answered"],
            "Interactions handled, by kind and by how they ended.",
        ),
        1000.0,
        0.0,
    )
    stale.close()  # type: ignore[no-untyped-call]
    sim.interactions_keep_alive = False  # each interaction to whichever worker accepts it
    port = free_port()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory)}
    async with gunicorn_workers(sim, tmp_path, port, env=env) as running:
        workers = await answering_workers(running, 2)
        await play_member_game(sim)
        for seed in range(3):
            await play_a_game_against_the_bot(sim, seed)
        handled = len(sim.interactions)
        first = await scraped_with(
            port,
            lambda samples: total(samples, "tttbot_interactions_total") == handled,
            f"{handled} interactions counted",
        )
        # Both workers answered some, so one worker's count alone is never the total.
        by_worker = counts_by_worker(directory)
        assert set(by_worker) == set(workers), by_worker
        assert all(count > 0 for count in by_worker.values()), by_worker
        assert sum(by_worker.values()) == handled
        scrapes = [first]
        for _ in range(6):
            # Apart by more than the exposition's reuse, so each text is made anew.
            await asyncio.sleep(EXPOSITION_REUSE + 0.1)
            scrapes.append(await scrape(port))
        for before, after in itertools.pairwise(scrapes):
            assert total(after, "tttbot_interactions_total") == handled
            assert never_lower(before, after) == []
        last = await scraped_with(
            port,
            lambda samples: pids_of(samples, "process_resident_memory_bytes") == set(workers),
            "every worker's memory",
        )
        # Each worker's memory and CPU, one series a worker; the live games, one series.
        assert pids_of(last, "process_cpu_seconds_total") == set(workers)
        assert ("tttbot_live_games", ()) in last
        # Every metric the dashboard reads is served (but the gateway's latency: no shard
        # runs under gunicorn).
        served = {name for name, _ in last}
        queried = {
            name
            for expr in dashboard_queries()
            for name in re.findall(r"\b((?:tttbot|process)_[a-z_]+)\b", expr)
        }
        assert queried - served == {"tttbot_gateway_latency_seconds"}
    assert running.process.returncode == 0, running.log
    # The operator's directory is kept, with this start's counts: the workers exited, folded
    # into one file a kind (bot.metrics_files), the earlier start's file gone.
    assert not (directory / "counter_1.db").exists()
    assert files_of_counts(directory) == folded_files(directory)
    assert interactions_in(folded_file(directory, "counter")) == handled


@pytest.mark.slow
async def test_a_worker_killed_its_counts_stay_on_metrics_and_its_gauges_go(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """gunicorn's own metrics directory (made in its temporary folder, the test's, removed
    at its exit); a worker SIGKILLed and replaced: what it counted stays in every later
    scrape, its memory and CPU series go, the replacement's come."""
    sim.interactions_keep_alive = False
    port = free_port()
    async with gunicorn_workers(sim, tmp_path, port) as running:
        workers = await answering_workers(running, 2)
        directory = gunicorns_metrics_directory(tmp_path)
        for seed in range(3):
            await play_a_game_against_the_bot(sim, seed)
        handled = len(sim.interactions)
        before = await scraped_with(
            port,
            lambda samples: (
                total(samples, "tttbot_interactions_total") == handled
                and pids_of(samples, "process_resident_memory_bytes") == set(workers)
            ),
            f"{handled} interactions counted, every worker's memory",
        )
        # The worker that counted most: its counts are what must stay.
        by_worker = counts_by_worker(directory)
        killed = max(by_worker, key=lambda pid: by_worker[pid])
        assert by_worker[killed] > 0, by_worker
        os.kill(killed, signal.SIGKILL)
        now = await all_replaced(running, {killed})
        after = await scraped_with(
            port,
            lambda samples: pids_of(samples, "process_resident_memory_bytes") == now,
            "the killed worker's memory gone, its replacement's there",
        )
        assert total(after, "tttbot_interactions_total") == handled
        assert never_lower(before, after) == []
        assert pids_of(after, "process_cpu_seconds_total") == now
        # Its counts were folded into one file a kind, its own files gone.
        assert files_of_counts(directory) == own_files(directory, now) | folded_files(directory)
        assert ("tttbot_live_games", ()) in after
        # Counting goes on over the replacement, from the total.
        await play_a_game_against_the_bot(sim, 3)
        handled = len(sim.interactions)
        later = await scraped_with(
            port,
            lambda samples: total(samples, "tttbot_interactions_total") == handled,
            f"{handled} interactions counted",
        )
        assert never_lower(after, later) == []
    assert running.process.returncode == 0, running.log
    assert not directory.exists()


# gunicorn's --max-requests in the test of workers replaced again and again: a worker answers
# this many requests, then exits (aiohttp's gunicorn worker) and gunicorn starts another. With
# the jitter docs/operating.md advises, each worker's limit is 2 to 5, so the two rarely exit
# together (gunicorn starts a replacement only after its worker exited: both gone at once
# left nobody to take a click until a new one started, 5 s and more on a loaded CI machine).
RECYCLED_AFTER = 2
RECYCLED_JITTER = 3
# Games played until this many workers were replaced (the kernel gives each connection to
# whichever worker accepts it first: not always in turn).
REPLACED_AT_LEAST = 4
GAMES_AT_MOST = 12


def files_of_counts(directory: Path) -> set[Path]:
    return {path for kind in FOLDED_KINDS for path in directory.glob(f"{kind}_*.db")}


def own_files(directory: Path, workers: set[int]) -> set[Path]:
    return {directory / f"{kind}_{pid}.db" for kind in FOLDED_KINDS for pid in workers}


def folded_files(directory: Path) -> set[Path]:
    return {folded_file(directory, kind) for kind in FOLDED_KINDS}


@pytest.mark.slow
async def test_workers_replaced_again_and_again_leave_one_file_a_kind_and_every_count(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """gunicorn's --max-requests replaces each worker after a few interactions: a scrape
    still counts every interaction, from the live workers' files and one file a kind for
    all the workers gone (their own files would otherwise pile up, one pair a worker)."""
    sim.interactions_keep_alive = False
    port = free_port()
    env = {
        "GUNICORN_CMD_ARGS": (
            f"--max-requests {RECYCLED_AFTER} --max-requests-jitter {RECYCLED_JITTER}"
        )
    }
    async with gunicorn_workers(sim, tmp_path, port, env=env) as running:
        await answering_workers(running, 2)
        directory = gunicorns_metrics_directory(tmp_path)
        for seed in range(GAMES_AT_MOST):
            try:
                await play_a_game_against_the_bot(sim, seed)
            except SimTimeout as unanswered:  # which workers were coming and going, and when
                raise AssertionError(f"{unanswered}\n{running.log}") from None
            # aiohttp's worker looks at its count of requests once a second.
            await asyncio.sleep(1.5)
            workers = set(await answering_workers(running, 2))
            gone = {int(pid) for pid, _ in ANSWERING.findall(running.log)} - workers
            if len(gone) >= REPLACED_AT_LEAST:
                break
        assert len(gone) >= REPLACED_AT_LEAST, running.log
        assert running.log.count("Max requests, shutting down") >= len(gone)
        handled = len(sim.interactions)
        samples = await scraped_with(
            port,
            lambda samples: total(samples, "tttbot_interactions_total") == handled,
            f"{handled} interactions counted",
        )
        assert total(samples, "tttbot_answer_latency_seconds_count") == handled
        # The live workers' files, and one file a kind for all the others.
        assert files_of_counts(directory) <= own_files(directory, workers) | folded_files(directory)
        assert folded_files(directory) <= files_of_counts(directory)
    assert running.process.returncode == 0, running.log


# gunicorn run from a program that had imported prometheus_client before gunicorn read its
# configuration: too late for multiprocess mode.
LOADED_FIRST = (
    "import runpy, sys, prometheus_client; sys.argv[0] = 'gunicorn'; "
    "runpy.run_module('gunicorn', run_name='__main__', alter_sys=True)"
)


async def test_gunicorn_with_prometheus_client_loaded_first_stops_with_one_line(
    sim: DiscordSim, tmp_path: Path
) -> None:
    """Its workers would each report only their own counters, as before multiprocess mode:
    gunicorn stops in its master instead, before any worker starts, naming why."""
    log_path = tmp_path / "gunicorn.log"
    env = bot_env(sim, tmp_path, DISCORD_PUBLIC_KEY=sim.public_key, TMPDIR=str(tmp_path))
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            LOADED_FIRST,
            *GUNICORN[2:],
            "--bind",
            f"127.0.0.1:{free_port()}",
            env=env,
            cwd=tmp_path,
            stdout=log_file,
            stderr=log_file,
        )
    running = BotProcess(process, log_path)
    try:
        await asyncio.wait_for(process.wait(), 30)
    finally:
        await terminate(process, 20, children=lambda: worker_pids(process.pid))
    assert process.returncode == 2, running.log
    assert running.log.splitlines()[-1] == (
        "tttbot: PROMETHEUS_MULTIPROC_DIR was not set before prometheus_client loaded"
    )
    assert "Booting worker" not in running.log, running.log
    assert "Traceback" not in running.log, running.log
    assert metrics_directories(tmp_path) == []
