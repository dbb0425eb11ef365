"""``python -m bot serve`` as several worker processes on one port, under gunicorn with
aiohttp's own worker class:

    gunicorn bot.gunicorn_app:make_app --worker-class aiohttp.GunicornUVLoopWebWorker \\
        --workers 2 --bind 0.0.0.0:8080

Each worker is one ``TTTBot(over_http=True)`` with the same start-up as ``python -m bot
serve`` (:meth:`bot.client.TTTBot.http_front`, :meth:`~bot.client.TTTBot.start_answering`,
:meth:`~bot.client.TTTBot.stop_answering`): the settings read as :mod:`bot.__main__` reads
them, REST login and setup_hook (storage, cogs, commands, the sweeper, which takes the
sweeper lease when free), ``POST /interactions`` beside ``/livez``, ``/readyz`` and
``/metrics``. gunicorn binds the port (``TTT_HTTP_PORT`` is not read) and hands its socket to
every worker; the kernel spreads the connections among them. The database decides everything
a worker's memory could get wrong (docs/design.md, "Two front doors").

A worker stops as ``python -m bot serve`` does on SIGTERM: the listening socket goes, the
endpoint takes no new interaction (``on_shutdown``), the requests in flight are answered,
then the bot closes in order (the app's cleanup: in-flight work finished, the sweeper lease
given up, the storage closed).

A worker that cannot start for a reason the operator must fix (a missing or bad setting, a
rejected token, Discord out of reach) prints one line naming it and exits with gunicorn's
"worker failed to boot" code, so that gunicorn stops instead of respawning workers that
would fail the same way.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
from dotenv import load_dotenv

from bot import logs
from bot.__main__ import fail, freeze_after_start, log_event_loop, why_it_stopped
from bot.client import TTTBot
from bot.config import ConfigError, Settings, require_public_key

log = logging.getLogger(__name__)

# gunicorn's exit code for a worker that could not boot: its arbiter then shuts down with
# "Worker failed to boot." rather than starting another worker.
WORKER_BOOT_ERROR = 3


async def make_app() -> web.AppRunner:
    """One worker's application, with the bot started in it and stopped on its cleanup.

    Returned with its runner, which aiohttp's worker class accepts in place of the
    application: the runner carries the HTTP port's protections (:mod:`bot.health`: how long
    a client has to send a request, malformed requests logged at DEBUG, no access log),
    which a runner made by the worker class would not."""
    load_dotenv(Path.cwd() / ".env")
    try:
        settings = Settings.from_env(os.environ)
        require_public_key(settings)
    except ConfigError as error:
        fail(str(error), WORKER_BOOT_ERROR)
        raise SystemExit(WORKER_BOOT_ERROR) from None
    logs.configure(settings)
    bot = TTTBot(settings, over_http=True)
    front = bot.http_front()

    async def answering(app: web.Application) -> AsyncIterator[None]:
        log_event_loop()
        async with bot:  # its exit runs close()
            try:
                await bot.start_answering(settings.token)
            except Exception as error:
                message = why_it_stopped(error, settings)
                if message is None:
                    raise
                fail(message, WORKER_BOOT_ERROR)
                stopped = True
            else:
                stopped = False
                log.info(
                    "worker pid %d (sweeper id %s) answering interactions",
                    os.getpid(),
                    bot.sweeper_id,
                )
                await freeze_after_start(bot)
                yield
        if stopped:
            raise SystemExit(WORKER_BOOT_ERROR)
        log.info("worker pid %d stopped", os.getpid())

    async def no_new_interactions(app: web.Application) -> None:
        await bot.stop_answering()

    front.app.cleanup_ctx.append(answering)
    front.app.on_shutdown.append(no_new_interactions)
    return front.runner
