"""A quiet channel's answers while twelve ultimate games search, in one run against one bot.

    python -m bench.ultimate_load
    python -m bench.ultimate_load --games 12 --seconds 40 --rate 5

Issue 39 asks that a server with twelve ultimate tic-tac-toe games against the strongest level
keep answering a quiet channel within its usual latency: ultimate's computer player searches
for about 0.3 s a move, in worker processes (``bot/thinking.py``), so that the event loop is
free meanwhile. One ``python -m bot`` process (SQLite on disk) runs against the local
Discord-compatible server in this process, as in :mod:`bench.bot_load` (whose pieces this
reuses), and:

1. opens ``--quiet-channels`` 3x3 games against ``minimax`` and ``--games`` ultimate games
   against ``minimax`` (``/ttt vs-ai difficulty:minimax size:9``), then warms both up (the
   first ultimate moves start the worker processes);
2. **alone**: clicks the quiet 3x3 boards ``--rate`` times a second (an open loop, round the
   quiet channels, so that a slow answer does not hold the next click back) for ``--seconds``;
3. **beside the ultimate games**: the same, while every ultimate channel plays as fast as the
   bot answers (a closed loop; each click the next legal cell by the board's two steps: the
   first open small board when the player may pick one, then its first empty cell; Rematch
   when a game ends), started ``--ramp`` seconds before and going on until the quiet loop ends.

It reports the quiet clicks' latency both ways (p50/p95/p99, the slowest) and their ratio; the
ultimate moves' latency to the board's final edit (the bot's answer in it: a move that waits
past the deferral deadline is deferred, then edited), the first answers', and how many were
deferred; the errors (an interaction unanswered within 3 s, refused, or not finished within
:data:`FINISH_DEADLINE`; a quiet click is answered in 3 s or it is an error); the longest
event-loop stall of each phase (and the same less the loop's wait for a CPU); and the CPU of the
bot's process, of its worker processes (every process under it) and of this driver, each as a
share of one core over the phase. The machine's load average is printed too: on a shared
machine the ratio within the run is the figure to read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from bench.bot_load import (
    DEADLINE,
    Load,
    Phase,
    Running,
    TTTBot,
    free_port,
    measured,
    start_process,
    stop_process,
)
from bench.samples import percentile
from bot.components import CELL_ID, GAME_ACTION_ID, PICK_ID
from game.variants import ULTIMATE_SIZE
from tests.discord_sim import (
    DiscordSim,
    InteractionRecord,
    SimChannel,
    SimError,
    SimGuild,
    SimMessage,
)

# A deferred answer may come up to 15 minutes later on Discord; a move whose board is not edited
# within this long is counted as an error here (twelve searches of 0.3 s on two cores take a few
# seconds in turn, not this).
FINISH_DEADLINE = 60.0
# After a failed click a channel waits this long before its next, rather than spinning.
AFTER_ERROR = 1.0
# Callback types: a message, a click deferred, the clicked message edited.
_MESSAGE, _DEFERRED, _UPDATE = 4, 6, 7


@dataclass
class UltimatePhase(Phase):
    """The ultimate channels' phase: ``latencies`` holds every click's first answer; these the
    time each kind of click took to its final answer (the board it shows)."""

    moves: list[float] = field(default_factory=list)  # a cell, to the edit with the bot's reply
    picks: list[float] = field(default_factory=list)  # a small board picked: its cells shown
    rematches: list[float] = field(default_factory=list)  # to the new game's board
    deferred: int = 0


@dataclass
class Usage:
    """CPU seconds so far: the bot's process, every process under it (the engine's workers and
    the fork server that starts them), by pid, and this driver."""

    wall: float
    bot: float
    workers: dict[int, float]
    driver: float

    @classmethod
    def now(cls, running: Running) -> Usage:
        return cls(
            time.perf_counter(),
            running.cpu_seconds(),
            descendants_cpu(running.process.pid),
            time.process_time(),
        )


@dataclass
class Shares:
    """The CPU each part used over a phase, as a share of one core."""

    bot: float
    workers: float
    driver: float

    @classmethod
    def between(cls, start: Usage, end: Usage) -> Shares:
        wall = end.wall - start.wall
        # A worker started during the phase counts from nothing; one that ended is lost (a
        # pool replaces a worker only when it died, which the errors would show).
        workers = sum(cpu - start.workers.get(pid, 0.0) for pid, cpu in end.workers.items())
        return cls((end.bot - start.bot) / wall, workers / wall, (end.driver - start.driver) / wall)


def descendants_cpu(root: int) -> dict[int, float]:
    """The user and system CPU seconds of every live process under ``root``, by pid, from
    ``/proc`` (the bot's forkserver workers are its grandchildren)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        pid = int(entry.name)
        parents[pid] = int(fields[1])
        cpu[pid] = (int(fields[11]) + int(fields[12])) / tick
    under: dict[int, float] = {}
    for pid in parents:
        ancestor = parents[pid]
        while ancestor > 1 and ancestor != root:
            ancestor = parents.get(ancestor, 0)
        if ancestor == root:
            under[pid] = cpu[pid]
    return under


class UltimateBot(TTTBot):
    """The ultimate games' side of the same bot: ``/ttt vs-ai difficulty:minimax size:9``,
    played by the first legal cell through the board's two steps."""

    options: ClassVar[Mapping[str, object]] = {"difficulty": "minimax", "size": ULTIMATE_SIZE}

    def next_click(self, message: SimMessage, rng: random.Random) -> str:
        enabled = [str(b["custom_id"]) for b in message.buttons() if not b.get("disabled")]
        for custom_id in enabled:
            if CELL_ID.parse(custom_id):
                return custom_id
        for custom_id in enabled:
            picked = PICK_ID.parse(custom_id)
            if picked is not None and picked["board"] != "all":
                return custom_id
        for custom_id in enabled:
            action = GAME_ACTION_ID.parse(custom_id)
            if action is not None and action["action"] == "rematch":
                return custom_id
        raise AssertionError(f"neither a cell, a small board nor a rematch: {message.buttons()}")


def shown_board(ix: InteractionRecord) -> SimMessage | None:
    """The board a finished click left to play on, or None if its answer was no board (a
    refusal, a private sentence, nothing)."""
    if ix.rejected is not None or ix.ephemeral:
        return None
    if ix.response_type in (_MESSAGE, _UPDATE):
        return ix.message
    if ix.response_type == _DEFERRED:
        posted = [message for message in ix.followups if not message.ephemeral]
        if posted:  # a rematch deferred: its board comes as a follow-up
            return posted[-1]
        if ix.original_edits and not ix.followups:  # a move deferred: the board edited
            return ix.message
    return None


class UltimateLoad(Load):
    """Clicks on ultimate boards, each followed to its final answer."""

    def new_phase(self) -> Phase:
        return UltimatePhase()

    async def click(self, channel: SimChannel, phase: Phase) -> None:
        assert isinstance(phase, UltimatePhase)
        custom_id = self.target.next_click(self.boards[channel], self.rng)
        try:
            ix = await self.sim.click(
                self.players[channel], self.boards[channel], custom_id, timeout=DEADLINE
            )
            await ix.wait_done(timeout=FINISH_DEADLINE)
        except SimError:
            phase.errors += 1
            await asyncio.sleep(AFTER_ERROR)
            return
        finished = time.monotonic()
        board = shown_board(ix)
        if board is None or ix.latency is None or ix.sent_at is None:
            phase.errors += 1
            await asyncio.sleep(AFTER_ERROR)
            return
        phase.latencies.append(ix.latency)
        phase.deferred += ix.response_type == _DEFERRED
        if CELL_ID.parse(custom_id):
            phase.moves.append(finished - ix.sent_at)
        elif PICK_ID.parse(custom_id):
            phase.picks.append(finished - ix.sent_at)
        else:
            phase.rematches.append(finished - ix.sent_at)
        self.boards[channel] = board


@dataclass
class Measured:
    """One phase of the quiet channels, and what ran beside it."""

    quiet: Phase
    shares: Shares
    ultimate: UltimatePhase | None = None


async def with_shares(
    running: Running, work: Callable[[], Awaitable[Phase]]
) -> tuple[Phase, Shares]:
    """``work``'s phase (its bot CPU, driver CPU and stalls as :func:`measured` reads them),
    and the CPU shares of the bot, its workers and the driver meanwhile."""
    start = Usage.now(running)
    phase = await measured(running, work)
    return phase, Shares.between(start, Usage.now(running))


async def run(args: argparse.Namespace) -> tuple[Measured, Measured]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        database, port = f"sqlite:///{folder / 'tttbot.sqlite3'}", free_port()
        quiet_bot = TTTBot(database, "SQLite on disk", port)
        ultimate_bot = UltimateBot(database, "SQLite on disk", port)
        sim = DiscordSim(response_deadline=DEADLINE, interaction_timeout=DEADLINE)
        sim.spec_checks = False  # as in bench.bot_load: they would cost the server more
        await sim.start()
        try:
            guild = sim.add_guild("load")
            running = await start_process(sim, quiet_bot, guild, folder)
            try:
                return await phases(sim, guild, running, quiet_bot, ultimate_bot, args)
            finally:
                await stop_process(running)
        finally:
            await sim.stop()


async def phases(
    sim: DiscordSim,
    guild: SimGuild,
    running: Running,
    quiet_bot: TTTBot,
    ultimate_bot: UltimateBot,
    args: argparse.Namespace,
) -> tuple[Measured, Measured]:
    quiet = Load(sim, quiet_bot, args.seed)
    ultimate = UltimateLoad(sim, ultimate_bot, args.seed)
    quiet_channels = await quiet.open_games(guild, args.quiet_channels, "quiet")
    ultimate_channels = await ultimate.open_games(guild, args.games, "ultimate")
    print(f"warming up ({args.warmup:g} s each)...", flush=True)
    await quiet.closed_loop(quiet_channels, args.warmup)
    await ultimate.closed_loop(ultimate_channels, args.warmup)  # starts the engine's workers
    print(f"the quiet channels alone ({args.seconds:g} s)...", flush=True)
    alone = Measured(
        *await with_shares(
            running, lambda: quiet.open_loop(quiet_channels, args.rate, args.seconds)
        )
    )
    print(
        f"the quiet channels beside {args.games} ultimate games ({args.seconds:g} s)...", flush=True
    )
    playing = asyncio.create_task(ultimate.closed_loop(ultimate_channels, args.ramp + args.seconds))
    await asyncio.sleep(args.ramp)
    beside = Measured(
        *await with_shares(
            running, lambda: quiet.open_loop(quiet_channels, args.rate, args.seconds)
        )
    )
    games = await playing
    assert isinstance(games, UltimatePhase)
    beside.ultimate = games
    return alone, beside


def ms(samples: list[float], fraction: float) -> float:
    return percentile(samples, fraction) * 1e3 if samples else float("nan")


def spread(samples: list[float]) -> str:
    """p50 / p95 / p99 / the slowest, in ms."""
    return " / ".join(f"{ms(samples, f):.1f}" for f in (0.5, 0.95, 0.99, 1.0))


def report(alone: Measured, beside: Measured, args: argparse.Namespace, load: str) -> None:
    games = beside.ultimate
    assert games is not None

    def row(label: str, cell: Callable[[Measured], str]) -> None:
        print(f"| {label} | {cell(alone)} | {cell(beside)} |")

    print(f"\nmachine load average (1, 5, 15 min) at the start and the end: {load}")
    print(f"\n| figure | quiet channels alone | beside {args.games} ultimate games |")
    print("|---|---|---|")
    row(
        f"quiet 3x3 clicks answered ({args.rate:g}/s over {args.quiet_channels} channels)",
        lambda m: f"{m.quiet.answered:,}",
    )
    row("quiet: latency p50 / p95 / p99 / slowest ms", lambda m: spread(m.quiet.latencies))
    row(
        "quiet: errors (unanswered in 3 s, or not an edit) / overruns",
        lambda m: f"{m.quiet.errors} / {m.quiet.overruns}",
    )
    row(
        "longest event-loop stall ms / the same less the loop's wait for a CPU",
        lambda m: f"{m.quiet.longest_stall_ms:.0f} / {m.quiet.longest_own_stall_ms:.0f}",
    )
    row("CPU, share of a core: bot process", lambda m: f"{m.shares.bot:.0%}")
    row("CPU, share of a core: engine workers", lambda m: f"{m.shares.workers:.0%}")
    row("CPU, share of a core: this driver (and the server)", lambda m: f"{m.shares.driver:.0%}")
    ratios = " / ".join(
        f"{ms(beside.quiet.latencies, f) / ms(alone.quiet.latencies, f):.2f}x"
        for f in (0.5, 0.95, 0.99)
    )
    print(f"\nquiet latency beside the games, against alone (p50 / p95 / p99): {ratios}")
    seconds = args.ramp + args.seconds
    table = [
        ("moves (a cell and the bot's answer)", f"{len(games.moves):,}"),
        ("a move to its final edit: p50 / p95 / p99 / slowest ms", spread(games.moves)),
        ("a click's first answer: p50 / p95 / p99 / slowest ms", spread(games.latencies)),
        (
            "clicks deferred (first answered, then edited)",
            f"{games.deferred:,} of {games.answered:,}",
        ),
        ("a small board picked: p50 / p95 / p99 / slowest ms", spread(games.picks)),
        (
            "rematches (games finished): to the new board p50 / slowest ms",
            f"{len(games.rematches):,}: "
            f"{ms(games.rematches, 0.5):.1f} / {ms(games.rematches, 1.0):.1f}",
        ),
        (
            f"ultimate errors (unanswered in 3 s, refused, or unfinished in {FINISH_DEADLINE:g} s)",
            f"{games.errors}",
        ),
    ]
    print(f"\n| ultimate games ({args.games} channels, {seconds:g} s, a closed loop) | |")
    print("|---|---|")
    for label, value in table:
        print(f"| {label} | {value} |")


def load_average() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.ultimate_load", description=__doc__)
    parser.add_argument("--games", type=int, default=12, help="ultimate channels against minimax")
    parser.add_argument("--quiet-channels", type=int, default=5, help="3x3 channels clicked")
    parser.add_argument("--rate", type=float, default=5.0, help="quiet clicks a second in all")
    parser.add_argument("--seconds", type=float, default=40.0, help="per measured phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="before measuring, each load")
    parser.add_argument(
        "--ramp", type=float, default=3.0, help="the ultimate games' head start on the quiet loop"
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    before = load_average()
    alone, beside = asyncio.run(run(args))
    report(alone, beside, args, f"{before}; {load_average()}")


if __name__ == "__main__":
    main()
