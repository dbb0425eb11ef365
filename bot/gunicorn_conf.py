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

- ``/metrics`` reports every worker, whichever is scraped: prometheus_client's multiprocess
  mode, its directory (``PROMETHEUS_MULTIPROC_DIR``) made fresh here for each start, before
  any worker forks, and removed when gunicorn exits (``on_exit``); the operator's own, if the
  variable is set, emptied of prometheus_client's files instead, and kept. A worker that exits
  is marked dead (``child_exit``): its gauges go, its counts stay, folded into one file with
  those of the workers gone before (:mod:`bot.metrics_files`).

gunicorn reads only the names of its settings here; the others are this module's own.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

# Before the imports below: prometheus_client chooses how it keeps values when first imported
# (the bot imports it), in files of this directory only if the variable is set by then.
METRICS_DIRECTORY_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
OPERATORS_METRICS_DIRECTORY = os.environ.get(METRICS_DIRECTORY_VARIABLE)
if OPERATORS_METRICS_DIRECTORY:
    # Files of an earlier start would be read as workers of this one (prometheus_client's
    # documentation: wiped between runs). Only its own files go: the directory may hold more.
    Path(OPERATORS_METRICS_DIRECTORY).mkdir(parents=True, exist_ok=True)
    for _stale in Path(OPERATORS_METRICS_DIRECTORY).glob("*.db*"):
        _stale.unlink()
    METRICS_DIRECTORY = OPERATORS_METRICS_DIRECTORY
else:
    METRICS_DIRECTORY = os.environ[METRICS_DIRECTORY_VARIABLE] = tempfile.mkdtemp(
        prefix="tttbot-metrics-"
    )

from prometheus_client import multiprocess

from bot import logs
from bot.__main__ import fail
from bot.config import ConfigError
from bot.gunicorn_app import BOOT_FAILURES, read_settings
from bot.metrics import multiprocess_mode
from bot.metrics_files import fold_exited_worker

log = logging.getLogger(__name__)


def remove_metrics_directory() -> None:
    """The directory made for this start goes with it; the operator's stays."""
    if not OPERATORS_METRICS_DIRECTORY:
        shutil.rmtree(METRICS_DIRECTORY, ignore_errors=True)


try:
    _settings = read_settings()
except ConfigError as _error:
    remove_metrics_directory()
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
            remove_metrics_directory()
            raise SystemExit(
                fail(f"--bind {host}:{port}: the port must be a number from 0 to {MAX_PORT}", 2)
            )
    if not multiprocess_mode():
        # prometheus_client was imported before this module set the variable (gunicorn run
        # from a program that imports it): each worker would report only itself.
        remove_metrics_directory()
        raise SystemExit(
            fail(f"{METRICS_DIRECTORY_VARIABLE} was not set before prometheus_client loaded", 2)
        )
    BOOT_FAILURES.share()


def child_exit(server: Any, worker: Any) -> None:
    """In the master, a worker gone (stopped, or killed): its live gauges go from /metrics,
    its counts stay, so that no counter goes back when gunicorn replaces it, folded into the
    files of the workers gone before (:mod:`bot.metrics_files`)."""
    multiprocess.mark_process_dead(worker.pid, METRICS_DIRECTORY)  # type: ignore[no-untyped-call]
    try:
        fold_exited_worker(Path(METRICS_DIRECTORY), worker.pid)
    except OSError as error:
        # Its files stay where they are, counted as before: only one more file a scrape.
        log.warning("could not fold the counts of worker %s: %s", worker.pid, error)


def on_exit(server: Any) -> None:
    """In the master, as gunicorn stops."""
    remove_metrics_directory()
