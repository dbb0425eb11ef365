"""The soak's driver: the bot as processes on one database, SIGKILLed and started again,
behind either front door: ``python -m bot`` over the gateway (:class:`BotRunner`), or gunicorn
running two ``python -m bot serve`` workers on one port (:class:`WorkersRunner`); and the
players (:class:`Soak`): members playing in several channels at once, one driver task each, and
a chaos task injecting REST faults, closing the gateway (over HTTP: killing one worker, which
gunicorn replaces) and killing the bot. ``TTT_SOAK_SEED``, ``TTT_SOAK_SECONDS``,
``TTT_SOAK_MAX_INTERACTIONS`` and ``TTT_SOAK_DATABASE_URL`` are read here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import secrets
import signal
import sys
import textwrap
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import aiohttp
import asyncpg

from bot.components import CELL_ID, CHALLENGE_ID, GAME_ACTION_ID
from bot.service import DIFFICULTIES
from game import Board, cell_name
from tests.bot_harness import GATEWAY, HTTP
from tests.bot_processes import (
    BotProcess,
    answering_workers,
    bot_env,
    is_running,
    spawn_gunicorn,
    worker_pids,
)
from tests.discord_sim import (
    DiscordSim,
    InteractionRecord,
    SimChannel,
    SimInteractionLost,
    SimMessage,
    SimTimeout,
    SimUser,
)
from tests.discord_sim.faults import Fault
from tests.discord_sim.models import JSON
from tests.postgres_cluster import free_port
from tests.soak.accounting import Accounting, GatewayClose, Kill
from tests.soak.oracle import (
    CHALLENGE_TIMEOUT,
    LEASED_SWEEP_SLACK,
    SWEEP_SLACK,
    TURN_TIMEOUT,
    ChannelView,
    Database,
    Row,
    Tables,
    database_problems,
    human_marks,
    moves_of,
    read_channel,
    side_id,
    sim_message,
)

T = TypeVar("T")
# discord.py colours its log lines whenever it believes the stream is a terminal.
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A log line's level, in either of the bot's text formats (bot/logs.py), colours taken out:
# "[2026-11-29 12:00:00] [ERROR   ] name: ..." in a file, "2026-11-29 12:00:00 ERROR    name
# ..." on a terminal.
LEVEL = re.compile(r"\[?\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\]? \[?([A-Z]+)\b")

# Of play, by front door: over HTTP each restart starts three processes (gunicorn and two
# workers), and both soaks together must keep the suite within its budget.
DEFAULT_SECONDS = {GATEWAY: 50.0, HTTP: 35.0}
# Longer than Discord's 3 s and the bot's deferral at 1.5 s: a verb still waiting this long
# got no answer at all.
VERB_TIMEOUT = 6.0
KILL_EVERY = (10.0, 20.0)
# Counts bound the soak as well as time: a long TTT_SOAK_SECONDS or a fast machine must not
# turn it into hours of kills or of discord.py's 5 s waits after an invalidated session.
DEFAULT_MAX_INTERACTIONS = 3000
MAX_KILLS = 8
# Over HTTP, the chaos task's share of gateway closes kills one worker instead.
MAX_WORKER_KILLS = 8
# gunicorn's workers, as docs/operating.md runs them on one port and one database.
WORKERS = 2
# A member whose interaction failed (every worker down) clicks again after a moment, not at
# once: nor does the soak send a burst of them to a port nobody listens on.
AFTER_A_FAILURE = 0.5
MAX_INVALIDATIONS = 2
MAX_PENDING_FAULTS = 3
# A fault on a route the bot seldom uses (the sweeper's posts) would wait there for minutes and
# keep the others out: unfired, it is withdrawn after this long.
FAULT_PATIENCE = 4.0

ROUTES = {
    "callback": "POST /interactions/{id}/{token}/callback",
    "edit": "PATCH /channels/{id}/messages/{id}",
    "post": "POST /channels/{id}/messages",
    "original": "PATCH /webhooks/{id}/{token}/messages/@original",
    "followup": "POST /webhooks/{id}/{token}",
}
ROUTE_WEIGHTS = {"callback": 6.0, "edit": 3.0, "original": 1.0, "followup": 1.0, "post": 0.5}
# Over HTTP no first answer takes the callback route (it is the response to Discord's
# request), so a fault there would never fire. What serve alone asks for takes its place: the
# id of a public message its response made, read back with GET @original.
HTTP_ROUTES = {
    **{name: route for name, route in ROUTES.items() if name != "callback"},
    "read original": "GET /webhooks/{id}/{token}/messages/@original",
}
HTTP_ROUTE_WEIGHTS = {
    **{name: weight for name, weight in ROUTE_WEIGHTS.items() if name != "callback"},
    "read original": 3.0,
}
FAULT_WEIGHTS = {"rate_limit": 3.0, "status": 3.0, "reset": 2.0, "delay": 3.0}


def soak_seed() -> int:
    configured = os.environ.get("TTT_SOAK_SEED", "").strip()
    return int(configured) if configured else random.SystemRandom().randrange(2**32)


def soak_seconds(default: float) -> float:
    configured = os.environ.get("TTT_SOAK_SECONDS", "").strip()
    return float(configured) if configured else default


def soak_max_interactions() -> int:
    configured = os.environ.get("TTT_SOAK_MAX_INTERACTIONS", "").strip()
    return int(configured) if configured else DEFAULT_MAX_INTERACTIONS


def soak_database_server() -> str | None:
    """``TTT_SOAK_DATABASE_URL``: a PostgreSQL server (the URL of a database there its user
    may create databases from) to soak on instead of a SQLite file, or None."""
    return os.environ.get("TTT_SOAK_DATABASE_URL", "").strip() or None


@contextlib.asynccontextmanager
async def fresh_database(server_url: str | None) -> AsyncIterator[str | None]:
    """The URL of a new, empty database on the server ``server_url`` logs in to, dropped
    afterwards; None without a server. A database of its own: the oracle counts every game in
    it, and a run must not count another's."""
    if server_url is None:
        yield None
        return
    name = f"tttbot_soak_{os.getpid()}_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(server_url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
        finally:
            # FORCE: a bot SIGKILLed at the end may leave its connections for the server to
            # notice.
            await admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def pick(rng: random.Random, weights: Mapping[str, float]) -> str:
    names = [name for name, weight in weights.items() if weight > 0]
    return rng.choices(names, [weights[name] for name in names])[0]


# -- the bot process ------------------------------------------------------------------------------


class BotRunner:
    """``python -m bot`` on one database file, started again after each SIGKILL."""

    front_door = GATEWAY
    # How late past its due time the sweeper may settle something (soak.oracle).
    sweep_slack = SWEEP_SLACK

    def __init__(self, sim: DiscordSim, tmp_path: Path, database_url: str | None = None) -> None:
        self.sim = sim
        self.tmp_path = tmp_path
        self.env = bot_env(
            sim,
            tmp_path,
            LOG_LEVEL="INFO",  # DEBUG would cost a 2-core machine more than the soak is worth
            TTT_TURN_TIMEOUT=str(TURN_TIMEOUT),
            TTT_CHALLENGE_TIMEOUT=str(CHALLENGE_TIMEOUT),
        )
        # The SQLite file bot_env names, or the PostgreSQL database given.
        self.database: Database = tmp_path / "bot.sqlite3"
        if database_url is not None:
            self.env["DATABASE_URL"] = self.database = database_url
        self.process: asyncio.subprocess.Process | None = None
        self.logs: list[Path] = []

    async def start(self) -> None:
        log_path = self.tmp_path / f"bot-{len(self.logs)}.log"
        self.logs.append(log_path)
        before = self.sim.identifies
        with log_path.open("wb") as log_file:  # a file: a pipe nobody reads would fill up
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                env=self.env,
                cwd=self.tmp_path,
                stdout=log_file,
                stderr=log_file,
            )
        self.process = process
        # Ready once it IDENTIFYs: setup_hook (storage, commands, sweeper) runs before that.
        deadline = time.monotonic() + 30
        while self.sim.identifies <= before and process.returncode is None:
            assert time.monotonic() < deadline, f"the bot never connected:\n{self.log_tail()}"
            with contextlib.suppress(SimTimeout):
                await self.sim.wait_for(lambda: self.sim.identifies > before, timeout=0.5)
        assert process.returncode is None, (
            f"the bot exited at start-up ({process.returncode}):\n{self.log_tail()}"
        )

    def running(self) -> asyncio.subprocess.Process:
        process = self.process
        assert process is not None
        assert process.returncode is None, (
            f"the bot died on its own (exit {process.returncode}):\n{self.log_tail()}"
        )
        return process

    async def kill(self) -> None:
        process = self.running()
        process.kill()
        await process.wait()

    async def stop(self) -> int:
        process = self.running()
        process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(process.wait(), 20)

    async def cleanup(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()

    def log_text(self) -> str:
        return "".join(path.read_text(errors="replace") for path in self.logs if path.exists())

    def errors_logged(self) -> list[str]:
        """The bot's log lines at ERROR or above and its tracebacks, each with the exception
        that ends its traceback (colours taken out)."""
        found: list[str] = []
        previous, tracing = "", False
        for line in (ANSI.sub("", raw) for raw in self.log_text().splitlines()):
            level = LEVEL.match(line)
            if level is not None and level.group(1) in ("ERROR", "CRITICAL"):
                if not self.expected(line):
                    found.append(line)
            elif line.startswith("Traceback"):
                tracing = True
                if not found or found[-1] != previous:
                    found.append(line)  # printed on its own, not by a log call
            elif tracing and line and not line[0].isspace():
                found[-1] += f" -> {line}"
                tracing = False
            previous = line
        return found

    def expected(self, line: str) -> bool:
        """Whether an ERROR line is the soak's own doing rather than the bot's."""
        return False

    def log_tail(self, lines: int = 40) -> str:
        if not self.logs or not self.logs[-1].exists():
            return "(no log)"
        return "\n".join(self.logs[-1].read_text(errors="replace").splitlines()[-lines:])


# What gunicorn's master logs, at ERROR, of a worker that died of SIGKILL.
WORKER_KILLED = re.compile(r"gunicorn\.error: Worker \(pid:(\d+)\) was sent SIGKILL!")


class WorkersRunner(BotRunner):
    """gunicorn running :data:`WORKERS` ``python -m bot serve`` workers on one port and one
    database file (docs/operating.md's command, ``tests.bot_processes.GUNICORN``), the sim
    POSTing every interaction to that port. The interactions go through gunicorn's one port,
    not spread over the workers by the sim: that is how the workers are run, a worker killed
    or replaced needs no one to learn its new address, and the kernel hands each connection
    to whichever worker accepts it first. Each interaction has a connection of its own
    (``sim.interactions_keep_alive``): kept alive, nearly all of them stayed with the worker
    first up after a restart. :meth:`kill` takes the whole set (its process group,
    master and workers, in one SIGKILL), :meth:`kill_one` one worker, which gunicorn replaces.
    """

    front_door = HTTP
    sweep_slack = LEASED_SWEEP_SLACK

    def __init__(self, sim: DiscordSim, tmp_path: Path, database_url: str | None = None) -> None:
        super().__init__(sim, tmp_path, database_url)
        self.env["DISCORD_PUBLIC_KEY"] = sim.public_key
        sim.interactions_keep_alive = False
        self.port = free_port()
        self.workers: dict[int, str] = {}  # the live workers' pids and sweeper ids
        self.killed_workers: set[int] = set()

    async def start(self) -> None:
        log_path = self.tmp_path / f"gunicorn-{len(self.logs)}.log"
        self.logs.append(log_path)
        # Its own process group: one SIGKILL takes master and workers at once, as a machine or
        # container dying would, with no worker left to notice its master gone and shut down
        # gently.
        process = await spawn_gunicorn(
            self.env, self.tmp_path, self.port, WORKERS, log_path, own_group=True
        )
        self.process = process
        self.sim.interactions_url = f"http://127.0.0.1:{self.port}/interactions"
        self.workers = await answering_workers(BotProcess(process, log_path), WORKERS)

    async def kill(self) -> None:
        process = self.running()
        workers = worker_pids(process.pid)
        os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        # Orphaned in the kill, the workers are reaped by init: they are gone once /proc says
        # so, and only then is the database theirs no more.
        deadline = time.monotonic() + 10
        while any(is_running(pid) for pid in workers):
            assert time.monotonic() < deadline, f"workers {workers} outlived their SIGKILL"
            await asyncio.sleep(0.02)

    async def kill_one(self, rng: random.Random) -> int:
        """SIGKILL one worker, chosen by ``rng``; back once gunicorn's replacement answers."""
        process = self.running()
        pid = rng.choice(sorted(self.workers))
        self.killed_workers.add(pid)
        os.kill(pid, signal.SIGKILL)
        while True:
            workers = await answering_workers(BotProcess(process, self.logs[-1]), WORKERS)
            if pid not in workers:
                break
            await asyncio.sleep(0.05)
        self.workers = workers
        return pid

    async def stop(self) -> int:
        code = await super().stop()
        self.sim.interactions_url = None
        return code

    async def cleanup(self) -> None:
        if self.process is not None:
            # The whole group, even with its master gone: no worker may outlive the test.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
        self.sim.interactions_url = None

    def expected(self, line: str) -> bool:
        killed = WORKER_KILLED.search(line)
        return killed is not None and int(killed.group(1)) in self.killed_workers


def buttons_in(components: Iterable[JSON]) -> Iterator[JSON]:
    for component in components:
        if component.get("type") == 2:
            yield {"disabled": False, **component}
        yield from buttons_in(component.get("components") or [])


def enabled(message: SimMessage | None, custom_id: str) -> bool:
    if message is None or message.deleted:
        return False
    return any(
        button["custom_id"] == custom_id and not button["disabled"] for button in message.buttons()
    )


# -- the players ----------------------------------------------------------------------------------


class Soak:
    """Members playing in several channels at once (one driver each), a chaos task injecting
    faults, closing the gateway and killing the bot, and the tallies of what happened."""

    def __init__(
        self,
        sim: DiscordSim,
        runner: BotRunner,
        seed: int,
        channels: list[SimChannel],
        members: list[SimUser],
        other_bot: SimUser,
    ) -> None:
        self.sim = sim
        self.runner = runner
        self.seed = seed
        self.channels = channels
        self.members = members
        self.other_bot = other_bot
        self.by_id = {member.id: member for member in members}
        self.moderator = members[-1]
        self.stop = asyncio.Event()
        self.play_until = 0.0
        self.max_interactions = soak_max_interactions()
        # Member games never overlap for a member: ratings are replayed in the order games
        # finished, which two games of one player finishing at the same instant would blur.
        self.busy: dict[int, int] = {}  # member id -> channel of their member game or challenge
        self.accepter: dict[int, int] = {}  # channel id -> who will accept its open challenge
        self.actions: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()
        self.kills: list[Kill] = []
        self.closes: list[GatewayClose] = []
        self.problems: list[str] = []
        self.armed: list[tuple[Fault, float]] = []

    # -- helpers ---------------------------------------------------------------------------

    async def verb(self, action: str, call: Awaitable[T]) -> T | None:
        """Run one verb; one that gets no answer in time is counted, not fatal."""
        self.actions[action] += 1
        try:
            result = await call
        except SimInteractionLost:
            self.outcomes["lost with its session"] += 1
            return None
        except SimTimeout:
            self.outcomes["timed out"] += 1
            return None
        except aiohttp.ClientError:  # over HTTP: the connection refused, or dropped by a kill
            self.outcomes["connection refused or dropped"] += 1
            await self.pause(AFTER_A_FAILURE)
            return None
        self.outcomes["answered"] += 1
        return result

    async def pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    def slash(self, user: SimUser, channel: SimChannel, command: str, **options: Any) -> Any:
        return self.sim.slash(user, channel, command, timeout=VERB_TIMEOUT, **options)

    def click(self, user: SimUser, message: SimMessage, custom_id: str, **kw: Any) -> Any:
        return self.sim.click(user, message, custom_id, timeout=VERB_TIMEOUT, **kw)

    def free_members(self, channel: SimChannel) -> list[SimUser]:
        return [m for m in self.members if self.busy.get(m.id, channel.id) == channel.id]

    def hold(self, channel: SimChannel, view: ChannelView) -> None:
        """Keep busy exactly the members of the channel's member game or challenge."""
        held: set[int] = set()
        if view.game is not None and view.game["ai_mark"] is None:
            held = {view.game["x_id"], view.game["o_id"]}
        elif view.challenge is not None:
            held = {view.challenge["challenger_id"], view.challenge["opponent_id"]} - {None}
            if channel.id in self.accepter:
                held.add(self.accepter[channel.id])
        else:
            self.accepter.pop(channel.id, None)
        for member, where in list(self.busy.items()):
            if where == channel.id and member not in held:
                del self.busy[member]
        for member in held:
            self.busy[member] = channel.id

    def time_left(self) -> float:
        return self.play_until - time.monotonic()

    # -- the drivers ------------------------------------------------------------------------

    async def drive(self, channel: SimChannel) -> None:
        rng = random.Random(f"{self.seed}:{channel.name}")
        while not self.stop.is_set():
            if len(self.sim.interactions) >= self.max_interactions:
                self.stop.set()  # the chaos task and the other drivers stop with it
                return
            view = await read_channel(self.runner.database, channel.id)
            self.hold(channel, view)
            if view.game is not None:
                await self.play(channel, view.game, rng)
            elif view.challenge is not None:
                await self.answer(channel, view.challenge, rng)
            else:
                await self.begin(channel, view, rng)
            await self.pause(rng.uniform(0.02, 0.3))

    async def play(self, channel: SimChannel, game: Row, rng: random.Random) -> None:
        moves = moves_of(game)
        board = Board.from_moves(moves)
        turn = board.turn.value
        if turn == game["ai_mark"] or board.is_over:  # never expected: the checks report it
            await self.verb("/ttt board", self.slash(self.members[0], channel, "ttt board"))
            return
        players = [self.by_id[side_id(game, mark)] for mark in human_marks(game)]
        mover = self.by_id[side_id(game, turn)]
        waiting = [p for p in players if p is not mover]
        onlookers = [m for m in self.members if m not in players]
        message = sim_message(self.sim, game["message_id"])
        free = list(board.legal_moves)
        taken = [cell for cell in range(9) if board[cell] is not None]
        cell = rng.choice(free)
        here = CELL_ID.build(game=game["id"], ply=len(moves), cell=cell)
        resign = GAME_ACTION_ID.build(action="resign", game=game["id"])
        # Cells of the positions this board showed before: what a client that has not caught
        # up still offers.
        stale = [
            button["custom_id"]
            for version in (message.edits if message is not None else [])
            for button in buttons_in(version.components)
            if CELL_ID.parse(button["custom_id"]) and not button["disabled"]
        ]
        action = pick(
            rng,
            {
                "move": 78,
                "burst": 3 if enabled(message, here) and len(free) > 1 else 0,
                "stale click": 2 if stale else 0,
                "wrong turn": 3 if waiting else 0,
                "taken cell": 2 if taken else 0,
                "onlooker": 3,
                "bad cell": 1,
                "board": 3,
                "autocomplete": 2,
                "resign": 3,
                "end": 1,
                "walk away": 0.25 if self.time_left() > TURN_TIMEOUT + 8 else 0,
            },
        )
        if action == "move":
            if enabled(message, here) and rng.random() < 0.7:
                assert message is not None
                await self.verb("click cell", self.click(mover, message, here))
            else:
                text = rng.choice([cell_name(cell), cell_name(cell).lower(), str(cell + 1)])
                await self.verb("/ttt move", self.slash(mover, channel, "ttt move", cell=text))
        elif action == "burst":
            assert message is not None
            other = CELL_ID.build(
                game=game["id"], ply=len(moves), cell=rng.choice([c for c in free if c != cell])
            )
            await asyncio.gather(
                self.verb("click cell (burst)", self.click(mover, message, here)),
                self.verb("click cell (burst)", self.click(mover, message, other)),
            )
        elif action == "stale click":
            assert message is not None
            await self.verb(
                "stale click", self.click(mover, message, rng.choice(stale), stale=True)
            )
        elif action == "wrong turn":
            someone = rng.choice(waiting)
            if enabled(message, here) and rng.random() < 0.5:
                assert message is not None
                await self.verb("click out of turn", self.click(someone, message, here))
            else:
                await self.verb(
                    "/ttt move out of turn",
                    self.slash(someone, channel, "ttt move", cell=cell_name(cell)),
                )
        elif action == "taken cell":
            await self.verb(
                "/ttt move taken cell",
                self.slash(mover, channel, "ttt move", cell=cell_name(rng.choice(taken))),
            )
        elif action == "onlooker":
            someone = rng.choice(onlookers)
            button = rng.choice([here, resign])
            if enabled(message, button) and rng.random() < 0.6:
                assert message is not None
                await self.verb("onlooker click", self.click(someone, message, button))
            else:
                await self.verb(
                    "/ttt move by onlooker",
                    self.slash(someone, channel, "ttt move", cell=cell_name(cell)),
                )
        elif action == "bad cell":
            await self.verb("/ttt move bad cell", self.slash(mover, channel, "ttt move", cell="D4"))
        elif action == "board":
            await self.verb(
                "/ttt board", self.slash(rng.choice(self.members), channel, "ttt board")
            )
        elif action == "autocomplete":
            await self.verb(
                "autocomplete",
                self.sim.autocomplete(
                    mover,
                    channel,
                    "ttt move",
                    focused="cell",
                    cell=rng.choice(["", "b", "2", "c3"]),
                    timeout=VERB_TIMEOUT,
                ),
            )
        elif action == "resign":
            who = rng.choice(players)
            if enabled(message, resign) and rng.random() < 0.6:
                assert message is not None
                await self.verb("click resign", self.click(who, message, resign))
            else:
                await self.verb("/ttt resign", self.slash(who, channel, "ttt resign"))
        elif action == "end":
            who = self.moderator if rng.random() < 0.8 else rng.choice(self.members[:-1])
            await self.verb("/ttt end", self.slash(who, channel, "ttt end"))
        else:  # leave the game to the turn clock and the sweeper
            self.actions["walk away"] += 1
            await self.pause(TURN_TIMEOUT + 3)

    async def answer(self, channel: SimChannel, challenge: Row, rng: random.Random) -> None:
        challenger = self.by_id[challenge["challenger_id"]]
        opponent = self.by_id.get(challenge["opponent_id"] or 0)
        message = sim_message(self.sim, challenge["message_id"])

        def button(action: str) -> str:
            return CHALLENGE_ID.build(challenge=challenge["id"], action=action)

        if not enabled(message, button("accept")):
            # Saved without its message, or shown on a newer one: show it again.
            if rng.random() < 0.5:
                again = {"opponent": opponent} if opponent else {}
                await self.verb(
                    "/ttt start again", self.slash(challenger, channel, "ttt start", **again)
                )
            else:
                await self.verb(
                    "/ttt board", self.slash(rng.choice(self.members), channel, "ttt board")
                )
            return
        assert message is not None
        accepter = opponent
        if accepter is None:
            chosen = self.accepter.get(channel.id)
            candidates = [m for m in self.free_members(channel) if m is not challenger]
            accepter = (
                self.by_id[chosen] if chosen else rng.choice(candidates) if candidates else None
            )
            if accepter is not None:
                self.accepter[channel.id] = accepter.id
                self.busy[accepter.id] = channel.id
        outsiders = [m for m in self.members if m not in (challenger, opponent)]
        action = pick(
            rng,
            {
                "accept": 70 if accepter is not None else 0,
                "decline": 6 if opponent is not None else 0,
                "withdraw": 6 if accepter is not None else 30,
                "accept own": 3,
                "outsider": 3,
                "board": 5,
                "start again": 3,
                "walk away": 0.25 if self.time_left() > CHALLENGE_TIMEOUT + 8 else 0,
            },
        )
        if action == "accept":
            assert accepter is not None
            await self.verb("click accept", self.click(accepter, message, button("accept")))
        elif action == "decline":
            assert opponent is not None
            await self.verb("click decline", self.click(opponent, message, button("decline")))
        elif action == "withdraw":
            await self.verb("click withdraw", self.click(challenger, message, button("withdraw")))
        elif action == "accept own":
            await self.verb("click accept own", self.click(challenger, message, button("accept")))
        elif action == "outsider":
            someone = rng.choice(outsiders)
            what = "accept" if opponent is not None else "withdraw"
            await self.verb(f"outsider click {what}", self.click(someone, message, button(what)))
        elif action == "board":
            await self.verb(
                "/ttt board", self.slash(rng.choice(self.members), channel, "ttt board")
            )
        elif action == "start again":
            await self.verb(
                "/ttt start busy", self.slash(rng.choice(self.members), channel, "ttt start")
            )
        else:
            self.actions["walk away"] += 1
            await self.pause(CHALLENGE_TIMEOUT + 3)

    async def begin(self, channel: SimChannel, view: ChannelView, rng: random.Random) -> None:
        free = self.free_members(channel)
        last = view.last
        message = sim_message(self.sim, last["message_id"]) if last is not None else None
        rematch = GAME_ACTION_ID.build(action="rematch", game=last["id"]) if last else ""
        rematchers = [self.by_id[side_id(last, mark)] for mark in human_marks(last)] if last else []
        can_rematch = enabled(message, rematch) and (
            last is not None and (last["ai_mark"] is not None or all(p in free for p in rematchers))
        )
        action = pick(
            rng,
            {
                "rematch": 20 if can_rematch else 0,
                "vs-ai": 35,
                "challenge": 30 if len(free) >= 2 else 0,
                "mistake": 4,
                "stats": 6,
            },
        )
        if action == "rematch":
            assert message is not None
            assert last is not None
            if last["ai_mark"] is None:
                for player in rematchers:
                    self.busy[player.id] = channel.id
            who = rng.choice(rematchers) if rng.random() < 0.9 else rng.choice(self.members)
            await self.verb("click rematch", self.click(who, message, rematch))
        elif action == "vs-ai":
            first = rng.choice([None, "me", "bot", "random"])
            options: dict[str, Any] = {"first": first} if first else {}
            await self.verb(
                "/ttt vs-ai",
                self.slash(
                    rng.choice(self.members),
                    channel,
                    "ttt vs-ai",
                    difficulty=rng.choice(DIFFICULTIES),
                    **options,
                ),
            )
        elif action == "challenge":
            challenger, opponent = rng.sample(free, 2)
            self.busy[challenger.id] = self.busy[opponent.id] = channel.id
            if rng.random() < 0.25:  # an open challenge; `opponent` will be the one to accept
                self.accepter[channel.id] = opponent.id
                await self.verb("/ttt start open", self.slash(challenger, channel, "ttt start"))
            else:
                await self.verb(
                    "/ttt start", self.slash(challenger, channel, "ttt start", opponent=opponent)
                )
        elif action == "mistake":
            who = rng.choice(self.members)
            mistakes: list[tuple[str, dict[str, Any]]] = [
                ("ttt start", {"opponent": who}),
                ("ttt start", {"opponent": self.other_bot}),
                ("ttt move", {"cell": "B2"}),
                ("ttt resign", {}),
                ("ttt board", {}),
                ("ttt end", {}),
            ]
            command, options = rng.choice(mistakes)
            await self.verb(f"/{command} mistake", self.slash(who, channel, command, **options))
        else:
            who = rng.choice(self.members)
            asks: list[tuple[str, dict[str, Any]]] = [
                ("ttt stats", {}),
                ("ttt stats", {"member": rng.choice(self.members)}),
                ("ttt leaderboard", {}),
                ("ttt help", {}),
            ]
            command, options = rng.choice(asks)
            await self.verb(f"/{command}", self.slash(who, channel, command, **options))

    # -- chaos -------------------------------------------------------------------------------

    async def chaos(self) -> None:
        rng = random.Random(f"{self.seed}:chaos")
        next_kill = time.monotonic() + rng.uniform(*KILL_EVERY)
        while not self.stop.is_set():
            await self.pause(rng.uniform(0.3, 1.0))
            if self.stop.is_set():
                return
            if time.monotonic() >= next_kill and self.whole_kills() < MAX_KILLS:
                await self.kill_and_restart()
                next_kill = time.monotonic() + rng.uniform(*KILL_EVERY)
            elif rng.random() < 0.05:
                # No gateway over HTTP: what comes and goes under the bot there is a worker.
                if isinstance(self.runner, WorkersRunner):
                    await self.kill_worker(self.runner, rng)
                else:
                    await self.close_gateway(rng)
            else:
                now = time.monotonic()
                for fault, armed_at in self.armed:
                    if now - armed_at > FAULT_PATIENCE:
                        self.sim.faults.remove(fault)
                pending = self.sim.faults.pending
                self.armed = [(f, at) for f, at in self.armed if f in pending]
                if len(pending) < MAX_PENDING_FAULTS:
                    self.armed.append((self.add_fault(rng), now))

    def add_fault(self, rng: random.Random) -> Fault:
        http = self.runner.front_door == HTTP
        where = pick(rng, HTTP_ROUTE_WEIGHTS if http else ROUTE_WEIGHTS)
        route = (HTTP_ROUTES if http else ROUTES)[where]
        kind = pick(rng, FAULT_WEIGHTS)
        faults = self.sim.faults
        if kind == "rate_limit":
            global_ = where in ("edit", "post") and rng.random() < 0.2
            return faults.add(route, rate_limit=round(rng.uniform(0.1, 0.8), 2), global_=global_)
        if kind == "status":
            return faults.add(route, status=rng.choice([500, 502, 503]))
        if kind == "reset":
            return faults.add(route, reset=rng.choice(["before", "after"]))
        if rng.random() < 0.3:
            return faults.add(route, reply_delay=round(rng.uniform(0.2, 1.5), 2))
        if where == "callback" and rng.random() < 0.15:  # past Discord's 3 s
            return faults.add(route, delay=round(rng.uniform(3.2, 3.8), 2))
        return faults.add(route, delay=round(rng.uniform(0.1, 1.2), 2))

    async def close_gateway(self, rng: random.Random) -> None:
        if not any(session.conn is not None for session in self.sim.live_sessions()):
            return
        invalidated = sum(not close.resumable for close in self.closes)
        resumable = rng.random() < 0.7 or invalidated >= MAX_INVALIDATIONS
        code = None if resumable or rng.random() < 0.5 else 4009
        at = time.monotonic()
        try:
            # Past discord.py's 5 s wait before a fresh IDENTIFY.
            await self.sim.close_gateway(resumable=resumable, code=code, timeout=15)
        except SimTimeout as error:
            self.problems.append(f"the bot did not reconnect after a gateway close: {error}")
        self.closes.append(GatewayClose(at, time.monotonic(), resumable))

    def whole_kills(self) -> int:
        return sum(1 for kill in self.kills if kill.worker is None)

    async def kill_and_restart(self) -> None:
        at = time.monotonic()
        await self.runner.kill()
        # Whatever the kill interrupted, the database must be consistent right now.
        self.check(f"after SIGKILL {self.whole_kills() + 1}")
        await self.runner.start()
        self.kills.append(Kill(at, time.monotonic()))

    async def kill_worker(self, runner: WorkersRunner, rng: random.Random) -> None:
        if len(self.kills) - self.whole_kills() >= MAX_WORKER_KILLS:
            return
        at = time.monotonic()
        pid = await runner.kill_one(rng)
        self.kills.append(Kill(at, time.monotonic(), worker=pid))
        # The other worker plays on meanwhile: what the killed one interrupted must still
        # leave the database consistent, as of one read transaction.
        self.check(f"after the SIGKILL of worker {pid}")

    def check(self, when: str) -> None:
        members = set(self.by_id)
        self.problems += [
            f"{when}: {problem}"
            for problem in database_problems(
                self.sim, self.runner.database, members, self.runner.sweep_slack, after_a_kill=True
            )
        ]

    async def run(self, seconds: float) -> None:
        self.play_until = time.monotonic() + seconds
        tasks = [asyncio.create_task(self.drive(channel)) for channel in self.channels]
        tasks.append(asyncio.create_task(self.chaos()))
        try:
            done, _ = await asyncio.wait(
                tasks, timeout=seconds, return_when=asyncio.FIRST_EXCEPTION
            )
            for task in done:
                task.result()  # a driver's own mistake (SimUsageError...) ends the soak
        finally:
            self.stop.set()
            results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    # -- the end ---------------------------------------------------------------------------

    async def must(self, what: str, call: Awaitable[InteractionRecord]) -> InteractionRecord:
        """A verb that has to be answered (no faults, no kills any more)."""
        self.actions[what] += 1
        try:
            record = await call
            await record.wait_done(timeout=VERB_TIMEOUT)
        except SimTimeout as error:
            raise AssertionError(f"{what}: no answer after the soak: {error}") from None
        self.outcomes["answered"] += 1
        return record

    async def clear(self, channel: SimChannel) -> None:
        """Click a board drawn before the final restart, show what holds the channel, end it
        through the buttons shown, then play there: no channel may be blocked. (A challenge or
        turn may run out meanwhile: the sweeper settling it frees the channel just as well.)"""
        where = f"#{channel.name}"
        alice = self.members[0]
        last: InteractionRecord | None = None  # the click that should have freed the channel
        view = await read_channel(self.runner.database, channel.id)
        if view.game is not None:
            game = view.game
            board = Board.from_moves(moves_of(game))
            old = sim_message(self.sim, game["message_id"])
            mover = self.by_id[side_id(game, board.turn.value)]
            cell = CELL_ID.build(game=game["id"], ply=board.move_count, cell=board.legal_moves[0])
            if enabled(old, cell):
                assert old is not None
                await self.must(
                    f"{where}: a board from before the restart", self.click(mover, old, cell)
                )
        if view.game is not None or view.challenge is not None:
            shown = await self.must(f"{where}: /ttt board", self.slash(alice, channel, "ttt board"))
            view = await read_channel(self.runner.database, channel.id)
            if view.game is not None:
                game = view.game
                player = self.by_id[side_id(game, human_marks(game)[0])]
                resign = GAME_ACTION_ID.build(action="resign", game=game["id"])
                assert shown.message is not None, f"{where}: /ttt board showed nothing"
                assert enabled(shown.message, resign), (
                    f"{where}: /ttt board did not show game {game['id']}: {shown.content}"
                )
                last = await self.must(
                    f"{where}: resign", self.click(player, shown.message, resign)
                )
            elif view.challenge is not None:
                challenge = view.challenge
                challenger = self.by_id[challenge["challenger_id"]]
                withdraw = CHALLENGE_ID.build(challenge=challenge["id"], action="withdraw")
                assert shown.message is not None, f"{where}: /ttt board showed nothing"
                assert enabled(shown.message, withdraw), (
                    f"{where}: /ttt board did not show challenge {challenge['id']}: {shown.content}"
                )
                last = await self.must(
                    f"{where}: withdraw", self.click(challenger, shown.message, withdraw)
                )
        view = await read_channel(self.runner.database, channel.id)
        said = None if last is None else last.content
        held = f"{where} is still held (the last click answered {said!r}): {view}"
        assert view.game is None, held
        assert view.challenge is None, held
        started = await self.must(
            f"{where}: /ttt vs-ai", self.slash(alice, channel, "ttt vs-ai", difficulty="random")
        )
        live = (await read_channel(self.runner.database, channel.id)).game
        assert live is not None, f"{where}: /ttt vs-ai started no game: {started.content}"
        assert started.message is not None
        resign = GAME_ACTION_ID.build(action="resign", game=live["id"])
        await self.must(f"{where}: resign", self.click(alice, started.message, resign))

    def summary(self, accounting: Accounting, excused: list[str], seconds: float) -> str:
        tables = Tables.read(self.runner.database)
        finished = Counter(g["end_reason"] for g in tables.games if g["status"] == "finished")
        against = Counter(g["ai_difficulty"] or "member" for g in tables.games)
        challenges = Counter(c["status"] for c in tables.challenges)
        faults = Counter(fault.kind for fault in self.sim.faults.injected if not fault.window)
        windows = sum(1 for fault in self.sim.faults.injected if fault.window)
        lines = [
            f"soak seed {self.seed} (TTT_SOAK_SEED={self.seed}): {seconds:.1f} s in all",
            f"  {'interactions':<40} {len(self.sim.interactions):>5}",
            *(f"    {name:<38} {count:>5}" for name, count in sorted(accounting.counts.items())),
            f"  {'verbs':<40} {sum(self.outcomes.values()):>5}",
            *(f"    {name:<38} {count:>5}" for name, count in sorted(self.outcomes.items())),
            f"  {'games':<40} {len(tables.games):>5}",
            f"    {'by opponent':<38} {dict(sorted(against.items()))}",
            f"    {'finished by':<38} {dict(sorted(finished.items()))}",
            f"  {'challenges':<40} {len(tables.challenges):>5}",
            f"    {'by status':<38} {dict(sorted(challenges.items()))}",
            f"  {'SIGKILLs (last one after play)':<40} {self.whole_kills():>5}",
            f"  {'SIGKILLs of one worker':<40} {len(self.kills) - self.whole_kills():>5}",
            f"  {'gateway closes (resumable)':<40} {len(self.closes):>5}"
            f"   ({sum(c.resumable for c in self.closes)})",
            f"  {'REST faults injected':<40} {sum(faults.values()) - faults['gateway']:>5}"
            f"   {dict(sorted(faults.items()))}, +{windows} 429s inside a window",
            f"  {'actions':<40} {sum(self.actions.values()):>5}",
            *textwrap.wrap(
                ", ".join(f"{name} {count}" for name, count in self.actions.most_common()),
                width=96,
                initial_indent="    ",
                subsequent_indent="    ",
            ),
            f"  {'violations caused by a fault':<40} {len(excused):>5}",
            *(f"    {violation[:150]}" for violation in excused),
        ]
        return "\n".join(lines)
