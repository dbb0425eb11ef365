"""A process that keeps one CPU busy, for tests of CPU contention. Kept apart from the tests
themselves, so that a spawned child imports next to nothing before it spins."""

from __future__ import annotations

import os
import time
from multiprocessing.synchronize import Event


def spin(cpu: int, seconds: float, spinning: Event) -> None:
    """Run on ``cpu`` alone for ``seconds``, setting ``spinning`` once under way."""
    os.sched_setaffinity(0, {cpu})
    spinning.set()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
