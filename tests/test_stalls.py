"""``bot.stalls``: a blocked loop is logged, with how much of the stall was a wait for a CPU,
in the form the load benchmark reads."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import time

import pytest

from bench.bot_load import STALL_LINE
from bot.stalls import CpuWait, watch_stalls


async def test_a_blocked_loop_is_logged_with_its_wait_for_a_cpu(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.stalls")
    watcher = asyncio.create_task(watch_stalls())
    await asyncio.sleep(0.05)  # the watcher is asleep in its tick
    # Blocks the loop, as a blocking call would; a sleeping thread waits for no CPU.
    time.sleep(0.1)  # noqa: ASYNC251
    await asyncio.sleep(0.05)
    watcher.cancel()
    stalls = [STALL_LINE.fullmatch(r.getMessage().encode()) for r in caplog.records]
    assert stalls, "no stall logged"
    assert all(stalls), [r.getMessage() for r in caplog.records]
    stalled, waited = max((float(m[1]), float(m[2])) for m in stalls if m is not None)
    assert stalled >= 80
    assert waited < stalled / 2


def _spin(seconds: float) -> None:
    os.sched_setaffinity(0, {0})
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_cpu_wait_is_the_time_spent_ready_while_others_held_the_cpu() -> None:
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})  # this thread and two spinners share one CPU
    spawn = multiprocessing.get_context("spawn")
    spinners = [spawn.Process(target=_spin, args=(1.5,)) for _ in range(2)]
    try:
        with CpuWait() as cpu_wait:
            for spinner in spinners:
                spinner.start()
            time.sleep(0.5)  # both spinners are running by now
            waited_before, ran_before = cpu_wait.seconds(), time.thread_time()
            start = time.perf_counter()
            while time.perf_counter() - start < 0.3:
                pass
            wall = time.perf_counter() - start
            waited_after, ran = cpu_wait.seconds(), time.thread_time() - ran_before
        assert waited_before is not None
        assert waited_after is not None
        waited = waited_after - waited_before
        # Never asleep, so every moment it was either running or waiting; three tasks ready
        # on one CPU take turns, so it waited about twice as long as it ran.
        assert waited == pytest.approx(wall - ran, abs=0.03)
        assert waited >= 1.5 * ran
    finally:
        os.sched_setaffinity(0, allowed)
        for spinner in spinners:
            spinner.join()
