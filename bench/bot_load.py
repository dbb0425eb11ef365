"""The bot's hot path under load, against a bare discord.py bot measured in the same run.

    python -m bench.bot_load                        # tttbot on SQLite on disk, and the yardstick
    python -m bench.bot_load --database-url URL     # tttbot on that (empty) database too
    python -m bench.bot_load --raw-board            # and the board answered around discord.py
    python -m bench.bot_load --http-workers 2       # and tttbot as two HTTP workers (gunicorn)

The local Discord-compatible server (``tests/discord_sim``, its OpenAPI checks off) runs in
this process with the load driver, a fresh one for each bot; each bot is a real process of its
own: ``python -m bot``, and ``python -m bench.bare_bot``, whose button only edits its message
(measured twice: a message of one button, the yardstick the ratio is taken against, and a
board of an embed and ten buttons, as tttbot's, which tells discord.py's cost for the message
apart from the bot's own; with ``--raw-board``, a third time: that board with its clicks
answered from the raw gateway payload, beside discord.py). For each it measures:

* a steady ``--rate`` interactions a second (an open loop): latency p50/p95/p99;
* then saturation: a closed loop, ``--in-flight`` channels each clicking again as soon as the
  last click was answered (against the bot at ``minimax`` for tttbot; a new game, or a
  rematch, when one ends): interactions a second, latency, and the bot's CPU per interaction;
* errors: an interaction unanswered within 3 s, or answered with anything but an edit;
* tttbot only: saturation again while ``/metrics`` is scraped ``--scrape-rate`` times a
  second (an open loop of its own): the clicks' latency beside saturation's, and the scrapes';
* the longest event-loop stall (every bot logs stalls from 10 ms: ``bot/stalls.py``), and
  the longest less the time the loop's thread waited for a CPU (the machine is shared);
* each bot's CPU a second while idle, over ``--idle-seconds`` from ``--idle-settle``
  seconds after its idle memory is read (a second after it is ready) (each process's, for
  HTTP workers: what a process that answers nothing spends on its timers, the stall
  watcher's and the sweeper's);
* tttbot's memory, idle (each process's, for HTTP workers) and with ``--live-games`` games
  under way;
* what the local Discord server saw break its rules: an answer after 3 s or a second one.

With ``--http-workers N`` tttbot is measured a second way: N workers on one port under
gunicorn (``bot.gunicorn_app``), the server POSTing each interaction to the endpoint and
reading the answer in the response, as Discord does with an Interactions Endpoint URL; its
CPU and memory are the master's and the workers' together.

Latency runs from the moment the server sends INTERACTION_CREATE to the moment the bot's
callback arrives. The driver shares the machine's cores with the bot: its CPU is printed too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import os
import random
import re
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import aiohttp

from bench.samples import percentile
from bot.components import CELL_ID, GAME_ACTION_ID
from tests.discord_sim import (
    DiscordSim,
    InteractionRecord,
    SimChannel,
    SimError,
    SimGuild,
    SimMessage,
    SimUser,
)

ROOT = Path(__file__).resolve().parent.parent
DEADLINE = 3.0
# How long a channel waits after a click that went wrong before it clicks again.
ERROR_PAUSE = 1.0
STALL_LINE = re.compile(
    rb"the event loop stalled for ([0-9.]+) ms(?:, ([0-9.]+) ms of it waiting for a CPU)?"
)


@dataclass
class Phase:
    """What one phase of load measured."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    overruns: int = 0  # open loop: a tick found every channel still waiting
    bot_cpu: float = 0.0
    driver_cpu: float = 0.0
    longest_stall_ms: float = 0.0
    # The longest stall less the time its thread waited for a CPU: what the bot itself held
    # the loop for (the machine is shared; on one without schedstat, the stall itself).
    longest_own_stall_ms: float = 0.0
    # Scrapes of /metrics during the phase, if any: how long each took, and those that failed.
    scrapes: list[float] = field(default_factory=list)
    scrape_errors: int = 0

    @property
    def answered(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0

    def latency_ms(self, fraction: float) -> float:
        if not self.latencies:
            return float("nan")
        return percentile(self.latencies, fraction) * 1e3

    def cpu_ms_per_interaction(self) -> float:
        return self.bot_cpu / self.answered * 1e3 if self.answered else float("nan")

    def driver_cpu_ms_per_interaction(self) -> float:
        return self.driver_cpu / max(1, self.answered) * 1e3

    def scrape_ms(self, fraction: float) -> float:
        if not self.scrapes:
            return float("nan")
        return percentile(self.scrapes, fraction) * 1e3


@dataclass
class Result:
    name: str
    saturation: Phase
    steady: Phase
    idle_rss_mb: float = float("nan")
    idle_rss_each: list[float] = field(default_factory=list)  # the bot's processes, its own first
    idle_cpu_each: list[float] = field(default_factory=list)  # ms a second, the same processes
    loaded_rss_mb: float = float("nan")
    broken_rules: int = 0  # what the local Discord server saw break its rules (a second answer...)
    live_games: int = 0
    scraped: Phase | None = None  # saturation while /metrics is scraped (tttbot)


class Target:
    """A bot under test: how to start it, start a game, and find the next click."""

    name = ""
    module = ""
    command = ""  # the slash command that opens a game (or posts a button)
    options: ClassVar[Mapping[str, object]] = {}
    # Both register their commands at start, so that the server this run started knows
    # them (tttbot would skip it on a database that has seen these definitions before).
    arguments: tuple[str, ...] = ()

    def env(self, sim: DiscordSim, guild: SimGuild, folder: Path) -> dict[str, str]:
        return {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "TTT_"))},
            "PYTHONPATH": str(ROOT),
            "DISCORD_TOKEN": sim.token,
            "DISCORD_API_BASE_URL": sim.api_base_url,
            "DISCORD_GATEWAY_URL": sim.gateway_url,
        }

    def argv(self) -> list[str]:
        """The bot's command line."""
        return [sys.executable, "-m", self.module, *self.arguments]

    def until_ready(self, sim: DiscordSim, log_path: Path) -> Callable[[], Awaitable[object]]:
        """A wait, made before the bot starts, until it answers interactions: it connected to
        the gateway and registered its commands (tttbot would skip that on a database that
        has seen these definitions before, hence ``--sync``)."""
        syncs_before = sum(1 for r in sim.requests if r.method == "PUT")
        identifies = sim.identifies
        return lambda: sim.wait_for(
            lambda: (
                sim.identifies > identifies
                and sum(1 for r in sim.requests if r.method == "PUT") > syncs_before
            ),
            timeout=60,
        )

    async def start_game(self, sim: DiscordSim, user: SimUser, channel: SimChannel) -> SimMessage:
        ix = await sim.slash(user, channel, self.command, options=self.options, timeout=30)
        assert ix.message is not None, ix.content
        return ix.message

    def next_click(self, message: SimMessage, rng: random.Random) -> str:
        raise NotImplementedError


class TTTBot(Target):
    module = "bot"
    command = "ttt vs-ai"
    options: ClassVar[Mapping[str, object]] = {"difficulty": "minimax"}
    arguments = ("--sync",)

    def __init__(self, database_url: str, label: str, http_port: int) -> None:
        self.database_url = database_url
        self.name = f"tttbot ({label})"
        self.metrics_url = f"http://127.0.0.1:{http_port}/metrics"
        self.http_port = http_port

    def env(self, sim: DiscordSim, guild: SimGuild, folder: Path) -> dict[str, str]:
        return {
            **super().env(sim, guild, folder),
            "DATABASE_URL": self.database_url,
            "TTT_HTTP_PORT": str(self.http_port),
            "TTT_GUILD_ID": str(guild.id),
            "TTT_TURN_TIMEOUT": "3600",
            "LOG_LEVEL": "DEBUG",  # the stall lines; the bot logs nothing per interaction
            "DISCORD_LOG_LEVEL": "INFO",
        }

    def next_click(self, message: SimMessage, rng: random.Random) -> str:
        free = [
            button["custom_id"]
            for button in message.buttons()
            if CELL_ID.parse(button["custom_id"]) and not button.get("disabled")
        ]
        if free:
            return str(rng.choice(free))
        for button in message.buttons():
            fields = GAME_ACTION_ID.parse(button["custom_id"])
            if fields is not None and fields["action"] == "rematch":
                return str(button["custom_id"])
        raise AssertionError(f"neither a free cell nor a rematch: {message.buttons()}")


class TTTBotOverHttp(TTTBot):
    """tttbot as ``--http-workers`` processes answering on one port, as docs/operating.md runs
    them (gunicorn with aiohttp's worker class), the local Discord server POSTing each
    interaction to it: no gateway at all."""

    def __init__(self, database_url: str, label: str, http_port: int, workers: int) -> None:
        super().__init__(database_url, label, http_port)
        self.workers = workers
        self.name = f"tttbot over HTTP, {workers} workers ({label})"

    def argv(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "python:bot.gunicorn_conf",
            "bot.gunicorn_app:make_app",
            "--worker-class",
            "aiohttp.GunicornWebWorker",
            "--workers",
            str(self.workers),
            "--bind",
            f"127.0.0.1:{self.http_port}",
            # Its default socket is one per user and host: another gunicorn would clash.
            "--no-control-socket",
        ]

    def env(self, sim: DiscordSim, guild: SimGuild, folder: Path) -> dict[str, str]:
        sim.interactions_url = f"http://127.0.0.1:{self.http_port}/interactions"
        return {**super().env(sim, guild, folder), "DISCORD_PUBLIC_KEY": sim.public_key}

    def until_ready(self, sim: DiscordSim, log_path: Path) -> Callable[[], Awaitable[object]]:
        """Until every worker has said that it answers interactions (its log, every 50 ms)."""

        async def every_worker_answering() -> None:
            for _ in range(1200):
                log = await asyncio.to_thread(log_path.read_bytes)
                if log.count(b") answering interactions") >= self.workers:
                    return
                await asyncio.sleep(0.05)
            raise TimeoutError(f"fewer than {self.workers} workers answering after 60 s")

        return every_worker_answering


class BareBot(Target):
    name = "bare discord.py"
    module = "bench.bare_bot"
    command = "start"

    def next_click(self, message: SimMessage, rng: random.Random) -> str:
        return str(message.buttons()[0]["custom_id"])


class BareBoardBot(BareBot):
    """The bare bot's ``/board``: an embed and ten buttons, as a tttbot board has, edited
    with the same shape on every click (no rules, no storage)."""

    name = "bare discord.py, a board"
    command = "board"

    def next_click(self, message: SimMessage, rng: random.Random) -> str:
        return str(rng.choice(message.buttons()[:9])["custom_id"])


class RawBoardBot(BareBoardBot):
    """The bare bot's ``/rawboard`` (``--raw-board``): the same board, its clicks answered
    from the raw gateway payload, beside discord.py rather than through it."""

    name = "bare, a board answered raw"
    command = "rawboard"


class Running:
    """A bot process, its log, and its CPU and memory as /proc shows them."""

    def __init__(self, process: asyncio.subprocess.Process, log_path: Path) -> None:
        self.process = process
        self.log_path = log_path

    def pids(self) -> list[int]:
        """The bot's process and its children (a gunicorn master's workers), as now."""
        found, unseen = [], [self.process.pid]
        while unseen:
            pid = unseen.pop()
            found.append(pid)
            with contextlib.suppress(FileNotFoundError):
                children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
                unseen.extend(int(child) for child in children)
        return found

    def cpu_seconds(self) -> float:
        """The CPU time of the bot's processes, as now (a worker that ended is not counted:
        none does while the bot is measured)."""
        return sum(self.cpu_seconds_each().values())

    def cpu_seconds_each(self) -> dict[int, float]:
        """The CPU time of each of the bot's processes, by pid, as now."""
        each = {}
        for pid in self.pids():
            with contextlib.suppress(FileNotFoundError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                each[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return each

    async def idle_cpu_ms_each(self, seconds: float) -> list[float]:
        """Each process's CPU over ``seconds`` in which nothing is asked of it, in ms a
        second, the first its own."""
        before, start = self.cpu_seconds_each(), time.perf_counter()
        await asyncio.sleep(seconds)
        after, took = self.cpu_seconds_each(), time.perf_counter() - start
        return [(after[pid] - before[pid]) / took * 1e3 for pid in before if pid in after]

    def rss_mb_each(self) -> list[float]:
        """The resident memory of each of the bot's processes, the first its own."""
        sizes = []
        for pid in self.pids():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes.append(int(line.split()[1]) / 1024)
        return sizes

    def rss_mb(self) -> float:
        return sum(self.rss_mb_each())

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def longest_stalls_ms(self, since: int) -> tuple[float, float]:
        """The longest stall logged since byte ``since``, and the longest less its wait for
        a CPU."""
        with self.log_path.open("rb") as log:
            log.seek(since)
            stalls = [
                (float(ms), float(waited or 0)) for ms, waited in STALL_LINE.findall(log.read())
            ]
        return (
            max((ms for ms, _ in stalls), default=0.0),
            max((max(0.0, ms - waited) for ms, waited in stalls), default=0.0),
        )


class Load:
    def __init__(self, sim: DiscordSim, target: Target, seed: int) -> None:
        self.sim = sim
        self.target = target
        self.rng = random.Random(seed)
        self.boards: dict[SimChannel, SimMessage] = {}
        self.players: dict[SimChannel, SimUser] = {}

    async def open_games(self, guild: SimGuild, count: int, prefix: str) -> list[SimChannel]:
        channels = []
        for n in range(count):
            user = self.sim.add_user(f"{prefix}{n}")
            self.sim.add_member(guild, user)
            channel = self.sim.add_channel(guild, f"{prefix}{n}")
            self.players[channel] = user
            channels.append(channel)
        for batch in range(0, count, 50):
            chunk = channels[batch : batch + 50]
            boards = await asyncio.gather(
                *(self.target.start_game(self.sim, self.players[c], c) for c in chunk)
            )
            self.boards.update(zip(chunk, boards, strict=True))
        return channels

    def new_phase(self) -> Phase:
        """What a loop of this load fills in (a subclass's clicks may measure more)."""
        return Phase()

    async def click(self, channel: SimChannel, phase: Phase) -> None:
        board = self.boards[channel]
        custom_id = self.target.next_click(board, self.rng)
        try:
            ix = await self.sim.click(self.players[channel], board, custom_id, timeout=DEADLINE)
        except SimError:
            await self.after_error(channel, phase)
            return
        if not answered_well(ix) or ix.latency is None or ix.ephemeral:
            await self.after_error(channel, phase)
            return
        phase.latencies.append(ix.latency)
        assert ix.message is not None
        self.boards[channel] = ix.message

    async def after_error(self, channel: SimChannel, phase: Phase) -> None:
        """A click unanswered, answered late or refused: counted, and the channel's next
        click is on its newest board, after a pause. (A rematch answered too late shows no
        board, and the bot's sweeper posts the new game's later; until then the old board's
        clicks are refused at once, and a loop of them would measure nothing but refusals.)"""
        phase.errors += 1
        await asyncio.sleep(ERROR_PAUSE)
        boards = [
            message
            for message in self.sim.messages(channel)
            if not message.deleted and not message.ephemeral and message.buttons()
        ]
        if boards:
            self.boards[channel] = boards[-1]

    async def closed_loop(self, channels: list[SimChannel], seconds: float) -> Phase:
        phase = self.new_phase()
        deadline = time.perf_counter() + seconds

        async def keep_clicking(channel: SimChannel) -> None:
            while time.perf_counter() < deadline:
                await self.click(channel, phase)

        start = time.perf_counter()
        await asyncio.gather(*(keep_clicking(channel) for channel in channels))
        phase.seconds = time.perf_counter() - start
        return phase

    async def open_loop(self, channels: list[SimChannel], rate: float, seconds: float) -> Phase:
        phase = self.new_phase()
        idle = list(channels)
        running: set[asyncio.Task[None]] = set()

        async def one(channel: SimChannel) -> None:
            try:
                await self.click(channel, phase)
            finally:
                idle.append(channel)

        start = time.perf_counter()
        for tick in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, start + tick / rate - time.perf_counter()))
            if not idle:
                phase.overruns += 1
                continue
            task = asyncio.create_task(one(idle.pop(0)))
            running.add(task)
            task.add_done_callback(running.discard)
        await asyncio.gather(*running)
        phase.seconds = time.perf_counter() - start
        return phase


async def while_scraping(url: str, rate: float, work: Callable[[], Awaitable[Phase]]) -> Phase:
    """``work``'s phase, with ``url`` scraped ``rate`` times a second meanwhile (each scrape
    on its own, as several Prometheus servers or a short interval would ask): how long each
    took, and how many failed or took more than :data:`DEADLINE`."""
    scrapes: list[float] = []
    failed = 0
    running: set[asyncio.Task[None]] = set()

    async def scrape(http: aiohttp.ClientSession) -> None:
        nonlocal failed
        start = time.perf_counter()
        try:
            async with http.get(url) as response:
                await response.read()
                ok = response.status == 200
        except (aiohttp.ClientError, TimeoutError):
            ok = False
        if ok:
            scrapes.append(time.perf_counter() - start)
        else:
            failed += 1

    async def keep_scraping(http: aiohttp.ClientSession) -> None:
        start = time.perf_counter()
        for tick in itertools.count():
            await asyncio.sleep(max(0.0, start + tick / rate - time.perf_counter()))
            task = asyncio.create_task(scrape(http))
            running.add(task)
            task.add_done_callback(running.discard)

    timeout = aiohttp.ClientTimeout(total=DEADLINE)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        scraper = asyncio.create_task(keep_scraping(http))
        try:
            phase = await work()
        finally:
            scraper.cancel()
            await asyncio.gather(scraper, *running, return_exceptions=True)
    phase.scrapes, phase.scrape_errors = scrapes, failed
    return phase


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on, for tttbot's /metrics."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def answered_well(ix: InteractionRecord) -> bool:
    return ix.rejected is None and ix.response_type in (4, 7) and ix.message is not None


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """The driver's garbage collector off (after a collection, when it was on), and back on
    after. The local server keeps every request and interaction it saw, and a collection
    over them paused the driver while the bot's answers waited: a quarter of a second at a
    time at saturation, every bot's p99 there (2026-11-29: 250-300 ms with it, 51-54 without,
    for the same bot) and a third of the driver's CPU; and 3.7 s once, over the two million
    objects the last bot's server left, which made the next bot's answers late."""
    if not gc.isenabled():
        yield
        return
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def measured(running: Running, work: Callable[[], Awaitable[Phase]]) -> Phase:
    """``work``'s phase, with the bot's CPU and the driver's over it, and the bot's stalls,
    the driver's collector off (:func:`collector_off`)."""
    with collector_off():
        log_start, cpu_start = running.log_size(), running.cpu_seconds()
        driver_start = time.process_time()
        phase = await work()
        phase.bot_cpu = running.cpu_seconds() - cpu_start
        phase.driver_cpu = time.process_time() - driver_start
    phase.longest_stall_ms, phase.longest_own_stall_ms = running.longest_stalls_ms(log_start)
    return phase


async def start_process(sim: DiscordSim, target: Target, guild: SimGuild, folder: Path) -> Running:
    log_path = folder / f"{target.module}.log"
    env = target.env(sim, guild, folder)
    until_ready = target.until_ready(sim, log_path)
    with log_path.open("wb") as log_file:
        process = await asyncio.create_subprocess_exec(
            *target.argv(), env=env, cwd=folder, stdout=log_file, stderr=log_file
        )
    ready = asyncio.ensure_future(until_ready())
    exited = asyncio.ensure_future(process.wait())
    # A bot that cannot start (a database URL that names no database, say) says why at once.
    await asyncio.wait({ready, exited}, return_when=asyncio.FIRST_COMPLETED)
    if exited.done():
        ready.cancel()
        raise SystemExit(_exit_report(exited.result(), log_path, "before it was ready"))
    exited.cancel()
    ready.result()
    return Running(process, log_path)


def _exit_report(code: int, log_path: Path, when: str) -> str:
    tail = log_path.read_text(errors="replace").splitlines()[-20:]
    return f"the bot exited with {code} {when}; its log ended with:\n" + "\n".join(tail)


async def stop_process(running: Running) -> None:
    if running.process.returncode is None:
        running.process.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(running.process.wait(), 30)
    if code != 0:
        raise SystemExit(_exit_report(code, running.log_path, "when stopped"))


async def bench_target(
    sim: DiscordSim, guild: SimGuild, target: Target, args: argparse.Namespace, folder: Path
) -> Result:
    running = await start_process(sim, target, guild, folder)
    try:
        await asyncio.sleep(1)  # let start-up settle before the idle memory is read
        idle_rss_each = running.rss_mb_each()
        # Start-up's last work (discord.py's READY, the first sweep) is not idleness.
        await asyncio.sleep(args.idle_settle)
        idle_cpu_each = await running.idle_cpu_ms_each(args.idle_seconds)
        load = Load(sim, target, args.seed)
        prefix = re.sub(r"[^a-z]", "", target.name)[:8]
        channels = await load.open_games(guild, args.in_flight, prefix)
        await load.closed_loop(channels, args.warmup)
        # The steady rate first: after saturation, the disk is still writing back what it
        # wrote, and that would be measured as the steady rate's latency.
        steady = await measured(running, lambda: load.open_loop(channels, args.rate, args.seconds))
        saturation = await measured(running, lambda: load.closed_loop(channels, args.seconds))
        result = Result(
            target.name, saturation, steady, sum(idle_rss_each), idle_rss_each, idle_cpu_each
        )
        if isinstance(target, TTTBot) and args.scrape_rate:
            url, rate = target.metrics_url, args.scrape_rate
            result.scraped = await measured(
                running,
                lambda: while_scraping(url, rate, lambda: load.closed_loop(channels, args.seconds)),
            )
        if isinstance(target, TTTBot) and args.live_games:
            await load.open_games(guild, args.live_games, prefix + "live")
            result.loaded_rss_mb = running.rss_mb()
            result.live_games = args.live_games
        result.broken_rules = len(sim.violations)
        return result
    finally:
        await stop_process(running)


def report(results: list[Result], args: argparse.Namespace) -> None:
    def row(label: str, cell: Callable[[Result], str]) -> None:
        print(f"| {label} | " + " | ".join(cell(r) for r in results) + " |")

    print(f"\n| figure | {' | '.join(r.name for r in results)} |")
    print("|---|" + "---|" * len(results))
    row(
        f"saturation ({args.in_flight} in flight): interactions/s",
        lambda r: f"{r.saturation.rate:,.0f}",
    )
    row("saturation: latency p50 / p95 / p99 ms", lambda r: latencies(r.saturation))
    row("saturation: bot CPU ms per interaction", lambda r: cpu(r.saturation))
    row(f"steady {args.rate:.0f}/s: latency p50 / p95 / p99 ms", lambda r: latencies(r.steady))
    row(f"steady {args.rate:.0f}/s: bot CPU ms per interaction", lambda r: cpu(r.steady))
    row(
        "errors (unanswered in 3 s, or not an edit) / overruns",
        lambda r: f"{r.saturation.errors + r.steady.errors} / {r.steady.overruns}",
    )
    row(
        "longest event-loop stall ms (saturation / steady)",
        lambda r: f"{r.saturation.longest_stall_ms:.0f} / {r.steady.longest_stall_ms:.0f}",
    )
    row(
        "  the same, less the loop's wait for a CPU",
        lambda r: f"{r.saturation.longest_own_stall_ms:.0f} / {r.steady.longest_own_stall_ms:.0f}",
    )
    row(
        "driver CPU ms per interaction (saturation)",
        lambda r: f"{r.saturation.driver_cpu_ms_per_interaction():.2f}",
    )
    if args.scrape_rate:
        rate = f"{args.scrape_rate:.0f}/s"
        row(
            f"saturation, /metrics scraped {rate}: interactions/s",
            lambda r: "" if r.scraped is None else f"{r.scraped.rate:,.0f}",
        )
        row(
            f"saturation, /metrics scraped {rate}: latency p50 / p95 / p99 ms",
            lambda r: "" if r.scraped is None else latencies(r.scraped),
        )
        row(
            f"saturation, /metrics scraped {rate}: bot CPU ms per interaction",
            lambda r: "" if r.scraped is None else cpu(r.scraped),
        )
        row(
            "a /metrics scrape meanwhile: p50 / p99 ms (failed or over 3 s)",
            lambda r: "" if r.scraped is None else scrape_times(r.scraped),
        )
    row(
        "Discord's rules broken (an answer late or twice, a bad request...)",
        lambda r: str(r.broken_rules),
    )
    row("RSS idle MB", lambda r: f"{r.idle_rss_mb:.1f}{each_process(r.idle_rss_each)}")
    row(
        "CPU idle ms a second",
        lambda r: f"{sum(r.idle_cpu_each):.1f}{each_process(r.idle_cpu_each)}",
    )
    row(
        "RSS with live games MB",
        lambda r: f"{r.loaded_rss_mb:.1f} ({r.live_games:,} games)" if r.live_games else "",
    )
    board, bare = results[-2:]
    for result in results[:-2]:
        print(
            f"\n{result.name}: {result.saturation.rate / bare.saturation.rate:.2f}x the bare "
            f"bot's throughput; CPU per interaction "
            f"{result.saturation.cpu_ms_per_interaction():.2f} ms against "
            f"{bare.saturation.cpu_ms_per_interaction():.2f} ms"
            f"\n  against the bare bot's board: "
            f"{result.saturation.rate / board.saturation.rate:.2f}x its throughput; CPU "
            f"{board.saturation.cpu_ms_per_interaction():.2f} ms"
        )


def each_process(figures: list[float]) -> str:
    """Each process's share of an idle figure, where the bot is several."""
    if len(figures) < 2:
        return ""
    first, *workers = figures
    return f" (master {first:.1f}; workers {', '.join(f'{x:.1f}' for x in workers)})"


def latencies(phase: Phase) -> str:
    return " / ".join(f"{phase.latency_ms(f):.1f}" for f in (0.5, 0.95, 0.99))


def cpu(phase: Phase) -> str:
    return f"{phase.cpu_ms_per_interaction():.2f}"


def scrape_times(phase: Phase) -> str:
    return f"{phase.scrape_ms(0.5):.1f} / {phase.scrape_ms(0.99):.1f} ({phase.scrape_errors})"


async def run(args: argparse.Namespace) -> None:
    rounds = []
    for number in range(args.rounds):
        if args.rounds > 1:
            print(f"\nround {number + 1} of {args.rounds}", flush=True)
        with tempfile.TemporaryDirectory() as name:
            results = await run_round(args, Path(name))
        report(results, args)
        rounds.append(results)
    if args.rounds > 1:
        summarize(rounds)


def summarize(rounds: list[list[Result]]) -> None:
    """Each bot's figures over the rounds: the median, and the lowest and highest. A ratio
    is taken within its round, against the bare bot measured minutes from it."""

    def spread(values: list[float], digits: int) -> str:
        return (
            f"{statistics.median(values):,.{digits}f} "
            f"[{min(values):,.{digits}f}-{max(values):,.{digits}f}]"
        )

    def row(label: str, value: Callable[[Result, Result], float], digits: int) -> None:
        cells = [
            spread([value(results[at], results[-1]) for results in rounds], digits)
            for at in range(len(rounds[0]))
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")

    names = [result.name for result in rounds[0]]
    print(f"\nover {len(rounds)} rounds, the median [lowest-highest]:")
    print(f"\n| figure | {' | '.join(names)} |")
    print("|---|" + "---|" * len(names))
    row("saturation: interactions/s", lambda r, _: r.saturation.rate, 0)
    row(
        "ratio to the bare bot of its round",
        lambda r, bare: r.saturation.rate / bare.saturation.rate,
        2,
    )
    row(
        "saturation: bot CPU ms per interaction",
        lambda r, _: r.saturation.cpu_ms_per_interaction(),
        2,
    )
    row(
        "saturation: driver CPU ms per interaction",
        lambda r, _: r.saturation.driver_cpu_ms_per_interaction(),
        2,
    )
    row("steady: latency p99 ms", lambda r, _: r.steady.latency_ms(0.99), 1)
    row("steady: bot CPU ms per interaction", lambda r, _: r.steady.cpu_ms_per_interaction(), 2)
    row("idle: bot CPU ms a second", lambda r, _: sum(r.idle_cpu_each), 1)
    totals = [
        sum(
            results[at].saturation.errors + results[at].steady.errors + results[at].broken_rules
            for results in rounds
        )
        for at in range(len(names))
    ]
    print(
        "| errors and Discord's rules broken, all rounds | "
        + " | ".join(str(total) for total in totals)
        + " |"
    )


async def run_round(args: argparse.Namespace, folder: Path) -> list[Result]:
    """Every bot measured once, in turn, each against a local Discord server of its own."""
    sqlite = TTTBot(f"sqlite:///{folder / 'tttbot.sqlite3'}", "SQLite on disk", free_port())
    targets: list[Target] = [sqlite]
    if args.database_url:
        label = args.database_url.split(":", 1)[0]
        targets.append(TTTBot(args.database_url, label, free_port()))
    if args.http_workers:
        # Workers share one database: SQLite for one machine's workers, else the URL given.
        url = args.database_url or f"sqlite:///{folder / 'tttbot-http.sqlite3'}"
        label = "SQLite on disk" if not args.database_url else url.split(":", 1)[0]
        targets.append(TTTBotOverHttp(url, label, free_port(), args.http_workers))
    if args.raw_board:
        targets.append(RawBoardBot())
    targets += [BareBoardBot(), BareBot()]
    results = []
    for target in targets:
        print(f"measuring {target.name}...", flush=True)
        # A server of its own for each bot: the one measured last would otherwise pay for
        # every message and record the earlier runs left in the server's memory.
        sim = DiscordSim(response_deadline=DEADLINE, interaction_timeout=DEADLINE)
        sim.spec_checks = False
        await sim.start()
        try:
            guild = sim.add_guild("load")
            # Off for the bot's whole run, the last bot's garbage collected first.
            with collector_off():
                results.append(await bench_target(sim, guild, target, args, folder))
        finally:
            await sim.stop()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bot_load", description=__doc__)
    parser.add_argument("--database-url", default="", help="also run tttbot on this database")
    parser.add_argument("--in-flight", type=int, default=50, help="channels at saturation")
    parser.add_argument("--rate", type=float, default=100.0, help="the steady rate, per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="per measured phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="before measuring")
    parser.add_argument(
        "--idle-settle", type=float, default=4.0, help="after start-up, before the idle CPU"
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=10.0,
        help="the idle CPU's measure (two of the sweeper's rounds, 5 s apart)",
    )
    parser.add_argument("--live-games", type=int, default=10_000, help="for the memory figure")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure every bot this many times, in turn, and sum the rounds up: on a shared "
        "machine one round's ratio can be off by a fifth",
    )
    parser.add_argument(
        "--scrape-rate",
        type=float,
        default=20.0,
        help="tttbot's /metrics scrapes a second in a saturation phase of their own (0: none)",
    )
    parser.add_argument(
        "--http-workers",
        type=int,
        default=0,
        help="also tttbot as this many HTTP workers (python -m bot serve's endpoint, under "
        "gunicorn), Discord POSTing each interaction to them",
    )
    parser.add_argument(
        "--raw-board",
        action="store_true",
        help="also the bare board with its clicks answered from the raw gateway payload",
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
