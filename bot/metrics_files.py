"""The files of prometheus_client's multiprocess mode under gunicorn (:mod:`bot.gunicorn_conf`):
a dead worker's counts folded into one file, and every read of the files made under a lock
the fold waits for.

Each worker keeps its counters and histograms in files named for its pid, and a scrape sums
every file in the directory. A worker that exits must leave its counts (a counter never goes
back), so without folding its files stay: a gunicorn that replaces workers (``--max-requests``,
a worker's timeout, a crash, a reload) would read one more pair of files a scrape for each
worker it ever ran. So the master, as each worker exits, adds that worker's values into one
file a kind (``counter_folded.db``, ``histogram_folded.db``: values of one key add up, in both
kinds, since a histogram's file holds each bucket apart and its sum) and deletes the worker's
own. The directory then holds the live workers' files and two more, however many came before.

A scrape that read the folded file after the fold and the worker's own before its deletion
would count that worker twice, and one that read them the other way round not at all: the
fold holds an exclusive ``flock`` on :data:`LOCK_NAME` while it swaps the files, and each
collection (:class:`LockedMultiProcessCollector`) a shared one while it reads them. Only
these files are touched: the live workers write their own as before. All the bot's gauges
are ``live*`` modes, whose files prometheus_client itself removes at a worker's exit
(``mark_process_dead``).

prometheus_client's ``MmapedDict`` (its module ``mmap_dict``) reads and writes the files: the
format its own collector reads, not a copy of it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.multiprocess import MultiProcessCollector

log = logging.getLogger(__name__)

DIRECTORY_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
# Beside the ``*.db`` files the collector reads, and not one of them.
LOCK_NAME = "tttbot-metrics.lock"
# The kinds whose values are kept past a worker's exit, and so are folded.
FOLDED_KINDS = ("counter", "histogram")
FOLDED_OWNER = "folded"
# How long a fold waits for the scrapes reading the files (each a few milliseconds), and a
# scrape for a fold (one worker's files rewritten: a millisecond or so), before going on
# without the lock; and how often the lock is tried meanwhile.
FOLD_PATIENCE = 2.0
SCRAPE_PATIENCE = 2.0
LOCK_POLL = 0.005


def folded_file(directory: Path, kind: str) -> Path:
    """Where the counts of ``kind`` of every worker that exited are kept."""
    return directory / f"{kind}_{FOLDED_OWNER}.db"


@contextlib.contextmanager
def _locked(directory: Path, operation: int, patience: float) -> Iterator[bool]:
    """The lock taken (True), or not within ``patience`` seconds (False): its holder may be a
    process stopped midway (SIGSTOP, a debugger), and gunicorn's master must not wait on one
    of its workers for good, as it could no longer replace it."""
    descriptor = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + patience
        while True:
            try:
                fcntl.flock(descriptor, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(LOCK_POLL)
            else:
                yield True
                return
    finally:
        os.close(descriptor)  # and the lock with it


def fold_exited_worker(directory: Path, pid: int) -> None:
    """Add the counts of worker ``pid``, which exited, into the folded files, and delete its
    own (in gunicorn's master, as it reaps the worker: before a worker that could be given
    the same pid starts)."""
    with _locked(directory, fcntl.LOCK_EX, FOLD_PATIENCE) as locked:
        if not locked:
            # Left as they are, its files are counted as before: one more pair a scrape.
            log.warning("did not fold the counts of worker %s: a scrape held the lock", pid)
            return
        for kind in FOLDED_KINDS:
            own = directory / f"{kind}_{pid}.db"
            if not own.exists():
                continue  # it exited before counting any of this kind
            folded = folded_file(directory, kind)
            totals: defaultdict[str, float] = defaultdict(float)
            for path in (folded, own):
                if path.exists():
                    for key, value, _timestamp, _position in _values(path):
                        totals[key] += value
            # Written whole under a name the collector does not read, then put in place.
            fresh = folded.with_name(f"{folded.name}.new")
            fresh.unlink(missing_ok=True)
            written = MmapedDict(str(fresh))  # type: ignore[no-untyped-call]
            try:
                for key, value in totals.items():
                    written.write_value(key, value, 0.0)  # type: ignore[no-untyped-call]
            finally:
                written.close()  # type: ignore[no-untyped-call]
            os.replace(fresh, folded)
            own.unlink()
    log.debug("folded the counts of worker %s into %s", pid, directory)


def _values(path: Path) -> Iterable[tuple[str, float, float, int]]:
    values: Iterable[tuple[str, float, float, int]] = MmapedDict.read_all_values_from_file(  # type: ignore[no-untyped-call]
        str(path)
    )
    return values


class LockedMultiProcessCollector(MultiProcessCollector):
    """prometheus_client's collector of the workers' files, reading them while no fold swaps
    them (the module says why)."""

    def __init__(self, registry: object) -> None:
        # The directory prometheus_client writes this process's own values in.
        self._directory = Path(os.environ[DIRECTORY_VARIABLE])
        super().__init__(registry, str(self._directory))  # type: ignore[no-untyped-call]

    def collect(self) -> Iterable[Metric]:
        with _locked(self._directory, fcntl.LOCK_SH, SCRAPE_PATIENCE) as locked:
            if not locked:
                # gunicorn's master stopped midway through a fold: read the files as they are
                # (a worker counted twice, or not at all, until it goes on) rather than never.
                log.warning("read the workers' metrics files while a fold held the lock")
            # Read whole inside the lock: merge returns every metric already summed.
            collected: Iterable[Metric] = list(super().collect())  # type: ignore[no-untyped-call]
        return collected
