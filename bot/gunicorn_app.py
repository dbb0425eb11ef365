"""``python -m bot serve`` as several worker processes on one port, under gunicorn with
aiohttp's own worker class:

    gunicorn -c python:bot.gunicorn_conf bot.gunicorn_app:make_app \\
        --worker-class aiohttp.GunicornWebWorker --workers 2 --bind 0.0.0.0:8080

(:mod:`bot.gunicorn_conf` checks the settings in gunicorn's master and writes gunicorn's own
lines as the bot's.)

Each worker is one ``TTTBot(over_http=True)`` with the same start-up as ``python -m bot
serve`` (:meth:`bot.client.TTTBot.http_front`, :meth:`~bot.client.TTTBot.start_answering`,
:meth:`~bot.client.TTTBot.stop_answering`): the settings read as :mod:`bot.__main__` reads
them, REST login and setup_hook (storage, cogs, commands, the sweeper, which takes the
sweeper lease when free), ``POST /interactions`` beside ``/livez``, ``/readyz`` and
``/metrics``. gunicorn binds the port (``TTT_HTTP_PORT`` is not read) and hands its socket to
every worker; the kernel spreads the connections among them (and the port closes each after a
hundred answers, so that a burst of connections one worker accepted spreads again:
:mod:`bot.health`). The database decides everything
a worker's memory could get wrong (docs/design.md, "Two front doors").

A worker stops as ``python -m bot serve`` does on SIGTERM: the listening socket goes, the
endpoint takes no new interaction (``on_shutdown``), the requests in flight are answered,
then the bot closes in order (the app's cleanup: in-flight work finished, the sweeper lease
given up, the storage closed).

A worker that cannot start for a reason the operator must fix (a missing or bad setting, a
rejected token, Discord out of reach) prints one line naming it and exits with gunicorn's
"worker failed to boot" code, so that gunicorn stops instead of respawning workers that
would fail the same way. Under :mod:`bot.gunicorn_conf` only the first worker to fail does:
the others failing with it exit quietly (:class:`BootFailures`).
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.synchronize
import os
import signal
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
from dotenv import load_dotenv

from bot import logs
from bot.__main__ import fail, freeze_after_start, open_files_as_allowed, why_it_stopped
from bot.client import TTTBot
from bot.config import ConfigError, Settings, require_public_key

log = logging.getLogger(__name__)

# gunicorn's exit code for a worker that could not boot: its arbiter then shuts down with
# "Worker failed to boot." rather than starting another worker.
WORKER_BOOT_ERROR = 3


class BootFailures:
    """Which worker says why the workers cannot boot. gunicorn stops on the first worker that
    exits with :data:`WORKER_BOOT_ERROR`; a second one reaped while it stops raises its
    ``HaltServer`` again out of its shutdown, a traceback on the operator's screen after the
    line that matters (gunicorn 27, whenever workers fail together, as they all do on a rejected
    token). So the workers share a lock: the first that fails takes it, says why and exits
    with that code; those failing after it say nothing and exit 0, which gunicorn takes for a
    worker's ordinary exit while it stops (and, in the moment before it stops, starts another
    worker that fails alike, quietly)."""

    def __init__(self) -> None:
        self._first: multiprocessing.synchronize.Lock | None = None

    def share(self) -> None:
        """Called in gunicorn's master before it forks the workers (bot.gunicorn_conf), so
        that they share one lock: a worker's own, made after the fork, would always be free."""
        self._first = multiprocessing.Lock()

    def stop(self, message: str) -> int:
        """The exit code of a worker that cannot boot for ``message``, which it prints when it
        is the first (or when nothing is shared: each worker then says why)."""
        if self._first is not None and not self._first.acquire(block=False):
            return 0
        return fail(message, WORKER_BOOT_ERROR)


BOOT_FAILURES = BootFailures()


def read_settings() -> Settings:
    """The settings as ``python -m bot serve`` reads them (``.env`` in the working directory,
    then the environment), but for the port, gunicorn's: :class:`ConfigError` names the
    first one missing or wrong."""
    load_dotenv(Path.cwd() / ".env")
    settings = Settings.from_env(os.environ)
    require_public_key(settings)
    return settings


async def make_app() -> web.AppRunner:
    """One worker's application, with the bot started in it and stopped on its cleanup.

    Returned with its runner, which aiohttp's worker class accepts in place of the
    application: the runner carries the HTTP port's protections (:mod:`bot.health`: how long
    a client has to send a request, malformed requests logged at DEBUG, no access log),
    which a runner made by the worker class would not."""
    try:
        settings = read_settings()
    except ConfigError as error:
        signal.set_wakeup_fd(-1)  # as below, where the bot cannot log in
        raise SystemExit(BOOT_FAILURES.stop(str(error))) from None
    logs.configure(settings)
    open_files_as_allowed()
    bot = TTTBot(settings, over_http=True)
    front = bot.http_front()

    async def answering(app: web.Application) -> AsyncIterator[None]:
        async with bot:  # its exit runs close()
            try:
                await bot.start_answering(settings.token)
            except Exception as error:
                message = why_it_stopped(error, settings)
                if message is None:
                    raise
                stopped: int | None = BOOT_FAILURES.stop(message)
            else:
                stopped = None
                log.info(
                    "worker pid %d (sweeper id %s) answering interactions",
                    os.getpid(),
                    bot.sweeper_id,
                )
                await freeze_after_start(bot)
                yield
        if stopped is not None:
            # The worker closes its loop on the way out, and asyncio's close() closes the
            # loop's self-pipe before it resets the signal wakeup fd: the master's SIGTERM,
            # stopping for this failure, could come in between and print a traceback.
            # Nothing is left for a signal to do here.
            signal.set_wakeup_fd(-1)
            raise SystemExit(stopped)
        log.info("worker pid %d stopped", os.getpid())

    async def no_new_interactions(app: web.Application) -> None:
        await bot.stop_answering()

    front.app.cleanup_ctx.append(answering)
    front.app.on_shutdown.append(no_new_interactions)
    return front.runner
