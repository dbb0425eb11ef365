"""Shared pytest configuration: the fixtures every test file may use, and CI's skip rule."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest
from xdist.scheduler import LoadGroupScheduling  # type: ignore[import-untyped]

# sim and seed (the local Discord-compatible server), harness (the real bot against it), and
# postgres_cluster and fresh_postgres_database (a throwaway PostgreSQL server of the session).
pytest_plugins = [
    "tests.discord_sim.fixtures",
    "tests.bot_harness",
    "tests.postgres_cluster",
]


# A filesystem in memory (Linux's /dev/shm), where the machine has one with room for a run: a
# PostgreSQL cluster for each process (some 50 MB each) and the tests' files (some 25 MB), with
# plenty to spare (a container's default /dev/shm is 64 MB).
MEMORY_FILESYSTEM = Path("/dev/shm")
MEMORY_FILESYSTEM_ROOM = 1 << 30


def _room_in(path: Path) -> int:
    try:
        stats = os.statvfs(path)
    except OSError:
        return 0
    return stats.f_bavail * stats.f_frsize


def pytest_configure(config: pytest.Config) -> None:
    """Python's bytecode cache on, for this process and those the tests start, even where the
    environment turns it off (PYTHONDONTWRITEBYTECODE): each ``python -m bot`` a test starts,
    and each load of the bot's extensions (discord.py executes an extension's module anew at
    every start), would otherwise compile the bot's source again.

    And the tests' temporary files (``tmp_path``, the SQLite files, each process's PostgreSQL
    cluster) in memory where it can be: they are thrown away, and on this machine's disk a
    PostgreSQL test waited on writes, not on the CPU (a fresh database took 0.35 s to make
    there and 0.04 s in memory; the storage tests on PostgreSQL took 36 s, then 17 s)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    if (
        os.access(MEMORY_FILESYSTEM, os.W_OK | os.X_OK)
        and _room_in(MEMORY_FILESYSTEM) >= MEMORY_FILESYSTEM_ROOM
    ):
        os.environ["TMPDIR"] = str(MEMORY_FILESYSTEM)
        tempfile.tempdir = None  # read TMPDIR again


# The longest slow tests, longest first, by the start of their ids (CPU seconds alone,
# 2026-11-27): every position of 5x5's first three moves checked exactly (about 130), the soak
# (a minute), the early drills judged by the exact search (about 20 each), 2,000 positions
# from games checked exactly (about 20).
LONGEST_FIRST = (
    "test_engine_exact.py::test_minimax_keeps_the_value_of_every_position_of_the_first_three",
    "test_bot_soak.py::test_soak",
    "test_engine_drills.py::test_early_5x5_answers_are_the_exact_searchs_in_every_cell",
    "test_engine_exact.py::test_minimax_keeps_the_value_of_a_seeded_sample",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first, the longest of them first (each keeping its order
    otherwise): pytest-xdist (``--dist loadgroup``) hands tests out in this order as its
    processes come free, so the longest run beside the others rather than alone at the end."""

    def rank(item: pytest.Item) -> tuple[bool, int]:
        slow = item.get_closest_marker("slow") is not None
        test_id = item.nodeid.removeprefix("tests/")
        longest = (i for i, start in enumerate(LONGEST_FIRST) if test_id.startswith(start))
        return not slow, next(longest, len(LONGEST_FIRST))

    items.sort(key=rank)


# The test files that run in one process, each as a whole: a module's costly fixture or cache,
# played once for all its tests rather than once in each process its tests land in (the ladder's
# games 0.44 s of CPU, the ultimate review 0.15 s, the 256 players' event 0.3 s).
ONE_PROCESS_FILES = (
    "tests/test_engine_ladder.py",
    "tests/test_tournament_messages.py",
    "tests/test_ultimate_review.py",
)


class FilesInOneProcess(LoadGroupScheduling):  # type: ignore[misc]
    """``--dist loadgroup`` with :data:`ONE_PROCESS_FILES` a group each. pytest-xdist's own
    ``xdist_group`` mark is silently ignored with pytest 9.2 (pytest-xdist issue 1386: it
    rewrites a node id that pytest no longer reads), so the groups are told apart here, in the
    controller, by the node ids' files."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        if path in ONE_PROCESS_FILES:
            return path
        scope: str = super()._split_scope(nodeid)
        return scope


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    if config.getvalue("dist") != "loadgroup":
        return None
    return FilesInOneProcess(config, log)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    """On CI (``CI=true``) a skipped test is a failed one: a skip there means a service the
    suite needs (PostgreSQL, say) was not set up, and that must not pass unnoticed."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") == "true" and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped on CI, which counts as a failure: {reason}"
