"""``bot.stalls``: a blocked loop is logged, with how much of the stall was a wait for a CPU,
in the form the load benchmark reads."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import multiprocessing
import os
import time

import pytest

from bench.bot_load import STALL_LINE
from bot import stalls
from bot.stalls import (
    IDLE_AFTER,
    IDLE_TICK,
    NOTICEABLE,
    TICK,
    WORKING,
    CpuWait,
    Pace,
    watch_stalls,
)
from tests.spinner import spin


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
    with contextlib.suppress(asyncio.CancelledError):
        await watcher
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.stalls"]
    stalls = [STALL_LINE.fullmatch(line.encode()) for line in lines]
    assert stalls, "no stall logged"
    assert all(stalls), lines
    stalled, waited = max((float(m[1]), float(m[2])) for m in stalls if m is not None)
    assert stalled >= 80
    assert waited < stalled / 2


def test_the_watcher_wakes_less_often_once_the_loop_is_idle() -> None:
    pace = Pace(now=100.0)
    assert pace.tick(100.0 + TICK, ran=0.0, stall=0.0) == TICK  # start-up counts as work
    assert pace.tick(100.0 + IDLE_AFTER - TICK, ran=WORKING / 2, stall=0.001) == TICK
    assert pace.tick(100.0 + IDLE_AFTER, ran=WORKING / 2, stall=0.001) == IDLE_TICK
    assert pace.tick(100.0 + IDLE_AFTER + 5, ran=0.0, stall=0.0) == IDLE_TICK
    # Work brings the close watch back at once, for IDLE_AFTER; so does a stall, in which
    # the loop's thread may have run nothing (a blocking call).
    for ran, stall in ((WORKING, 0.0), (0.0, NOTICEABLE)):
        pace = Pace(now=100.0)
        assert pace.tick(200.0, ran=ran, stall=stall) == TICK
        assert pace.tick(200.0 + IDLE_AFTER - TICK, ran=0.0, stall=0.0) == TICK
        assert pace.tick(200.0 + IDLE_AFTER, ran=0.0, stall=0.0) == IDLE_TICK


async def test_an_idle_loop_is_watched_less_often_and_its_stalls_still_seen(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the loop has been idle for IDLE_AFTER (shortened here), the watcher sleeps
    IDLE_TICK between wake-ups; a stall then is seen from when its tick was due (at most
    IDLE_TICK short), and brings back the tick of TICK."""
    caplog.set_level(logging.DEBUG, logger="bot.stalls")
    monkeypatch.setattr(stalls, "IDLE_AFTER", 0.3)
    paced: list[tuple[float, float]] = []  # (when, the sleep paced next)

    class Recorded(Pace):
        def tick(self, now: float, ran: float, stall: float) -> float:
            paced.append((now, super().tick(now, ran, stall)))
            return paced[-1][1]

    monkeypatch.setattr(stalls, "Pace", Recorded)
    watcher = asyncio.create_task(watch_stalls())
    await asyncio.sleep(1.3)
    time.sleep(0.3)  # noqa: ASYNC251
    await asyncio.sleep(0.05)
    watcher.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await watcher
    assert IDLE_TICK in [pace for _, pace in paced]
    # Each sleep as long as it was paced (a busy machine may make it longer, never shorter).
    for (woke, pace), (next_woke, _) in itertools.pairwise(paced):
        assert next_woke - woke >= pace * 0.99
    stalled = [
        float(match[1])
        for record in caplog.records
        if record.name == "bot.stalls"
        and (match := STALL_LINE.fullmatch(record.getMessage().encode())) is not None
    ]
    assert max(stalled) >= (300 - IDLE_TICK * 1e3) * 0.9
    assert max(stalled) <= 600  # what the block took, and a busy machine's wait for a CPU
    assert paced[-1][1] == TICK


def test_cpu_wait_is_the_time_spent_ready_while_others_held_the_cpu() -> None:
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    os.sched_setaffinity(0, {cpu})  # this thread and two spinners share one CPU
    spawn = multiprocessing.get_context("spawn")
    started = [spawn.Event() for _ in range(2)]
    spinners = [spawn.Process(target=spin, args=(cpu, 3.0, event)) for event in started]
    try:
        with CpuWait() as cpu_wait:
            for spinner in spinners:
                spinner.start()
            for event in started:
                assert event.wait(timeout=30)
            # The wall-clock window encloses the other two, so they cannot add up to more.
            start = time.perf_counter()
            waited_before, ran_before = cpu_wait.seconds(), time.thread_time()
            while time.perf_counter() - start < 0.3:
                pass
            waited_after, ran = cpu_wait.seconds(), time.thread_time() - ran_before
            wall = time.perf_counter() - start
        assert waited_before is not None
        assert waited_after is not None
        waited = waited_after - waited_before
        # Never asleep, so every moment it was running or waiting (less what the hypervisor
        # took, which neither counts); three tasks ready on one CPU take turns, so it waited
        # about twice as long as it ran.
        assert 0.8 * wall <= ran + waited <= wall + 0.001  # two clocks: allow them a little
        assert waited >= 1.5 * ran
    finally:
        os.sched_setaffinity(0, allowed)
        for spinner in spinners:
            spinner.terminate()
            spinner.join()
