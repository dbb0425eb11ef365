"""gunicorn's configuration for the bot's workers (:mod:`bot.gunicorn_app`), read by gunicorn's
master before it binds the port or starts a worker:

    gunicorn -c python:bot.gunicorn_conf bot.gunicorn_app:make_app \\
        --worker-class aiohttp.GunicornWebWorker --workers 2 --bind 0.0.0.0:8080

- The settings are checked here first, as each worker checks them: one missing or wrong stops
  gunicorn with the one line naming it (exit code 2), before gunicorn writes anything; so
  does a port out of range in ``--bind`` (``on_starting``), after gunicorn's first line.
- gunicorn's own lines, its master's and its workers' ("Booting worker", a worker's exit), are
  written as the bot's are (``logconfig_dict``, :func:`bot.logs.gunicorn_logging`): with
  ``LOG_FORMAT=json``, one JSON object a line.
- The workers share :data:`bot.gunicorn_app.BOOT_FAILURES` (``on_starting``): when they cannot
  boot (a token Discord rejects, Discord out of reach) the first says why and gunicorn stops
  with its own two lines, without the traceback it writes when two fail together.

gunicorn reads only the names of its settings here; the others are this module's own.
"""

from __future__ import annotations

from typing import Any

from bot import logs
from bot.__main__ import fail
from bot.config import ConfigError
from bot.gunicorn_app import BOOT_FAILURES, read_settings

try:
    _settings = read_settings()
except ConfigError as _error:
    # gunicorn lets SystemExit through its reading of this module: the process ends here,
    # with this line only.
    raise SystemExit(fail(str(_error), 2)) from None

logconfig_dict = logs.gunicorn_logging(_settings)


# What a TCP port may be: gunicorn's bind raises OverflowError past it, a traceback from its
# master for a typo in --bind.
MAX_PORT = 65535


def on_starting(server: Any) -> None:
    """In the master, before it binds the port or forks a worker."""
    for address in server.cfg.address:
        if isinstance(address, tuple) and not 0 <= address[1] <= MAX_PORT:
            host, port = address
            raise SystemExit(
                fail(f"--bind {host}:{port}: the port must be a number from 0 to {MAX_PORT}", 2)
            )
    BOOT_FAILURES.share()
