"""``python -m bot`` as a real process against the simulator, configured only by its
environment, as an operator runs it: started, waited for, stopped with SIGTERM, or run to its
end for its one line of output. Shared by every test (and the soak's driver) that runs one."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.bot_harness import GATEWAY, HTTP
from tests.discord_sim import DiscordSim

ROOT = Path(__file__).resolve().parent.parent
_log_numbers = itertools.count()


def bot_env(sim: DiscordSim, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a bot process pointed at ``sim``, its SQLite file in ``tmp_path``;
    ``extra`` settings win. Nothing of the bot's settings is inherited from the tests'."""
    inherited = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DISCORD_", "TTT_", "DATABASE_URL", "LOG_LEVEL", "LOG_FORMAT"))
    }
    return {
        **inherited,
        "PYTHONPATH": str(ROOT),
        "DISCORD_TOKEN": sim.token,
        "DISCORD_API_BASE_URL": sim.api_base_url,
        "DISCORD_GATEWAY_URL": sim.gateway_url,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'bot.sqlite3'}",
        "TTT_GUILD_ID": str(sim.seed.guild.id),
        "LOG_LEVEL": "DEBUG",
        **extra,
    }


async def spawn(
    sim: DiscordSim, tmp_path: Path, args: tuple[str, ...], env: dict[str, str], output: Any
) -> asyncio.subprocess.Process:
    """``python -m bot ARGS`` in ``tmp_path``, its stdout and stderr to ``output``: one file
    for both, or ``PIPE``, a pipe each."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        env=bot_env(sim, tmp_path, **env),
        cwd=tmp_path,
        stdout=output,
        stderr=output,
    )


class BotProcess:
    def __init__(self, process: asyncio.subprocess.Process, log_path: Path) -> None:
        self.process = process
        self.log_path = log_path

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


async def terminate(
    process: asyncio.subprocess.Process,
    patience: float,
    children: Callable[[], Iterable[int]] = tuple,
) -> None:
    """SIGTERM to ``process`` if it still runs. One that ignores it for ``patience`` seconds
    is killed, with its ``children()``, and fails its test (TimeoutError): no process a test
    started may outlive it."""
    if process.returncode is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), patience)
    except TimeoutError:
        for pid in children():
            os.kill(pid, signal.SIGKILL)
        process.kill()
        await process.wait()
        raise


@asynccontextmanager
async def started(
    sim: DiscordSim, tmp_path: Path, *args: str, **env: str
) -> AsyncIterator[BotProcess]:
    """``python -m bot ARGS`` started, not waited for; SIGTERM at the end (a bot that ignores
    it fails its test, and is killed: it must not outlive it)."""
    log_path = tmp_path / f"bot-{next(_log_numbers)}.log"
    with log_path.open("wb") as log_file:  # a file, not a pipe: DEBUG logs would fill a pipe
        process = await spawn(sim, tmp_path, args, env, log_file)
    try:
        yield BotProcess(process, log_path)
    finally:
        await terminate(process, 20)
    # As the harness asks of a bot in the test's own process: Discord's answer on a route the
    # sim does not serve is unknown, so a test that met one proved nothing about it.
    assert sim.unknown_routes == [], (
        f"the bot asked routes the sim does not serve: {sim.unknown_routes}"
    )


@asynccontextmanager
async def bot_process(
    sim: DiscordSim, tmp_path: Path, *args: str, **env: str
) -> AsyncIterator[BotProcess]:
    """``python -m bot ARGS`` started and connected (it identified with the sim); SIGTERM at
    the end."""
    async with started(sim, tmp_path, *args, **env) as running:
        before = sim.identifies
        await sim.wait_for(
            lambda: sim.identifies > before or running.process.returncode is not None,
            timeout=30,
        )
        assert running.process.returncode is None, running.log
        yield running


@asynccontextmanager
async def serving_process(
    sim: DiscordSim, tmp_path: Path, front_door: str, **env: str
) -> AsyncIterator[BotProcess]:
    """The bot as a real process behind ``front_door``: ``python -m bot`` over the gateway
    (:func:`bot_process`), or ``python -m bot serve`` with ``sim`` POSTing its interactions to
    the endpoint on ``TTT_HTTP_PORT`` (which ``env`` must set), started, not waited for: a
    test waits for its ``/readyz``. SIGTERM at the end."""
    if front_door == GATEWAY:
        async with bot_process(sim, tmp_path, **env) as running:
            yield running
        return
    assert front_door == HTTP, front_door
    async with started(sim, tmp_path, "serve", DISCORD_PUBLIC_KEY=sim.public_key, **env) as running:
        sim.interactions_url = f"http://127.0.0.1:{env['TTT_HTTP_PORT']}/interactions"
        yield running


# The command that runs several workers on one port (docs/operating.md), but for the port
# and gunicorn's control socket, which would be shared by every test's gunicorn.
GUNICORN = (
    "-m",
    "gunicorn",
    "-c",
    "python:bot.gunicorn_conf",
    "bot.gunicorn_app:make_app",
    "--worker-class",
    "aiohttp.GunicornWebWorker",
    "--no-control-socket",
)


async def spawn_gunicorn(
    env: Mapping[str, str],
    cwd: Path,
    port: int,
    workers: int,
    log_path: Path,
    *,
    own_group: bool = False,
) -> asyncio.subprocess.Process:
    """gunicorn running ``workers`` bot workers on ``port``, with ``env`` as its whole
    environment but for its temporary folder, ``cwd``; its output to ``log_path``; in a
    process group of its own with ``own_group`` (one signal to the group then reaches master
    and workers at once)."""
    with log_path.open("wb") as log_file:  # a file, not a pipe nobody reads
        return await asyncio.create_subprocess_exec(
            sys.executable,
            *GUNICORN,
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            # The metrics directory its master makes (bot.gunicorn_conf) goes with the test's
            # folder, also when the test kills the master before it could remove it.
            env={**env, "TMPDIR": str(cwd)},
            cwd=cwd,
            stdout=log_file,
            stderr=log_file,
            start_new_session=own_group,
        )


@asynccontextmanager
async def gunicorn_workers(
    sim: DiscordSim,
    tmp_path: Path,
    port: int,
    workers: int = 2,
    env: Mapping[str, str] | None = None,
) -> AsyncIterator[BotProcess]:
    """gunicorn running ``workers`` bot workers on ``port`` (``env`` over :func:`bot_env`),
    ``sim`` POSTing its interactions there, started, not waited for (:func:`answering_workers`
    waits); SIGTERM at the end (a gunicorn that ignores it fails its test, and is killed with
    its workers)."""
    log_path = tmp_path / f"gunicorn-{next(_log_numbers)}.log"
    settings = bot_env(sim, tmp_path, **{"DISCORD_PUBLIC_KEY": sim.public_key, **(env or {})})
    process = await spawn_gunicorn(settings, tmp_path, port, workers, log_path)
    running = BotProcess(process, log_path)
    sim.interactions_url = f"http://127.0.0.1:{port}/interactions"
    try:
        yield running
    finally:
        sim.interactions_url = None
        await terminate(process, 20, children=lambda: worker_pids(process.pid))


def worker_pids(master: int) -> list[int]:
    """The live processes gunicorn's master ``master`` runs: its workers (one killed and not
    yet reaped is left out)."""
    try:
        children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    except FileNotFoundError:  # the master is gone
        return []
    return [int(pid) for pid in children if is_running(int(pid))]


def is_running(pid: int) -> bool:
    try:
        # The state follows the command's closing parenthesis: Z for a zombie.
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# What a gunicorn worker logs once it answers interactions (bot.gunicorn_app).
ANSWERING = re.compile(r"worker pid (\d+) \(sweeper id ([0-9a-f]+)\) answering interactions")


async def answering_workers(
    running: BotProcess, count: int, patience: float = 30
) -> dict[int, str]:
    """Wait until ``count`` live workers of ``running`` answer interactions (a killed one's
    line stays in the log); their pids and sweeper ids."""
    deadline = time.monotonic() + patience
    while True:
        if running.process.returncode is not None:
            raise AssertionError(f"gunicorn stopped:\n{running.log}")
        alive = set(worker_pids(running.process.pid))
        found = {
            int(pid): sweeper
            for pid, sweeper in ANSWERING.findall(running.log)
            if int(pid) in alive
        }
        if len(found) >= count:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{count} workers did not answer in {patience} s:\n{running.log}")
        await asyncio.sleep(0.1)


async def run_bot(sim: DiscordSim, tmp_path: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """``python -m bot ARGS`` to its end (a command, or a start that fails): exit code, stdout,
    stderr. One still running after a minute fails its test, and does not outlive it."""
    process = await spawn(sim, tmp_path, args, env, asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(process.communicate(), 60)
    finally:
        await terminate(process, 5)
    assert process.returncode is not None
    return process.returncode, out.decode(), err.decode()
