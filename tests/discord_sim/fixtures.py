"""Pytest fixtures for the Discord simulator (imported into ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .seed import Seed, seed_default
from .server import DiscordSim


@pytest.fixture
async def sim() -> AsyncIterator[DiscordSim]:
    """A started sim with the standard seed (``sim.seed``); fails the test at teardown if
    the bot broke any Discord rule (``sim.violations``)."""
    server = DiscordSim()
    seed_default(server)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
    if server.violations:
        listing = "\n  - ".join(server.violations)
        pytest.fail(f"the bot broke Discord rules:\n  - {listing}", pytrace=False)


@pytest.fixture
def seed(sim: DiscordSim) -> Seed:
    """The standard world of ``sim`` (guild, channels, alice, bob, carol, ...)."""
    return sim.seed
