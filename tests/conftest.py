"""Shared pytest configuration: the fixtures every test file may use, and CI's skip rule."""

from __future__ import annotations

import os
import sys
from collections.abc import Generator

import pytest

# sim and seed (the local Discord-compatible server), harness (the real bot against it), and
# postgres_cluster and fresh_postgres_database (a throwaway PostgreSQL server of the session).
pytest_plugins = [
    "tests.discord_sim.fixtures",
    "tests.bot_harness",
    "tests.postgres_cluster",
]


def pytest_configure(config: pytest.Config) -> None:
    """Python's bytecode cache on, for this process and those the tests start, even where the
    environment turns it off (PYTHONDONTWRITEBYTECODE): each ``python -m bot`` a test starts,
    and each load of the bot's extensions (discord.py executes an extension's module anew at
    every start), would otherwise compile the bot's source again."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked ``slow`` first (each keeping its order): spread over several processes
    (pytest-xdist), the longest then run beside the others rather than alone at the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


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
