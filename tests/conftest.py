"""Shared pytest configuration."""

# The Discord simulator's fixtures (sim, seed), available to every test.
from tests.discord_sim.fixtures import seed, sim

__all__ = ["seed", "sim"]
