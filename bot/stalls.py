"""Watches the event loop for stalls: while anything blocks it, no interaction is answered."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)

# How often the watcher wakes while the loop works: the finest stall it can see.
TICK = 0.01
# How often it wakes once the loop has had nothing to do for IDLE_AFTER seconds. Each wake-up
# of an idle process is dear: 100 a second took 19 ms of CPU a second, whatever the process
# (tttbot, each HTTP worker, the bare bot; 2026-11-29), and 10 take 2.5. A stall that starts
# while the loop is idle is seen from when its tick was due: up to IDLE_TICK short.
IDLE_TICK = 0.1
IDLE_AFTER = 1.0
# The loop counts as working over a tick in which its thread ran this long or longer (the
# watcher's own wake-up takes a tenth to a fifth of it), or in which it stalled.
WORKING = 0.001
# Stalls from this long are logged at DEBUG (the load benchmark reads them) ...
NOTICEABLE = 0.01
# ... and from this long at WARNING: a third of Discord's 3 s deadline gone at once.
SEVERE = 1.0


class CpuWait:
    """How long the thread that opened it has waited for a CPU while ready to run, from
    Linux's ``/proc/.../schedstat``: the part of a stall a busy machine caused, rather than
    anything the loop ran or waited on (a blocking call, the GIL). ``seconds()`` is None
    where the kernel does not report it."""

    def __init__(self) -> None:
        path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        try:
            self._fd: int | None = os.open(path, os.O_RDONLY)
        except OSError:
            self._fd = None

    def seconds(self) -> float | None:
        if self._fd is None:
            return None
        # "<ns on a CPU> <ns waiting on a run queue> <time slices>"; read again at offset 0,
        # the kernel writes the current figures each time.
        return int(os.pread(self._fd, 128, 0).split()[1]) / 1e9

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> CpuWait:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class Pace:
    """How long the watcher sleeps next: TICK while the loop works, IDLE_TICK once it has
    had nothing to do for IDLE_AFTER seconds. Told after each tick how long the loop's thread
    ran during it, and how long the loop stalled (blocked, it may run nothing)."""

    def __init__(self, now: float) -> None:
        self._worked_at = now  # start-up counts as work: the first second is watched closely

    def tick(self, now: float, ran: float, stall: float) -> float:
        if ran >= WORKING or stall >= NOTICEABLE:
            self._worked_at = now
        return TICK if now - self._worked_at < IDLE_AFTER else IDLE_TICK


async def watch_stalls(on_stall: Callable[[float], None] | None = None) -> None:
    """Log every stall of the running loop of at least ``NOTICEABLE`` seconds, and how much
    of it the loop's thread spent waiting for a CPU, until cancelled; ``on_stall`` hears each
    one's length in seconds (the metrics count them). Wakes every TICK while the loop works,
    every IDLE_TICK while it is idle (:class:`Pace`)."""
    with CpuWait() as cpu_wait:
        pace = Pace(time.perf_counter())
        tick, ran_before = TICK, time.thread_time()
        while True:
            before, waited_before = time.perf_counter(), cpu_wait.seconds()
            await asyncio.sleep(tick)
            after, ran = time.perf_counter(), time.thread_time()
            stall = after - before - tick
            tick, ran_before = pace.tick(after, ran - ran_before, stall), ran
            if stall < NOTICEABLE:
                continue
            if on_stall is not None:
                on_stall(stall)
            waited_after = cpu_wait.seconds()
            waited = (
                ""
                if waited_before is None or waited_after is None
                else f", {(waited_after - waited_before) * 1e3:.1f} ms of it waiting for a CPU"
            )
            if stall >= SEVERE:
                log.warning("the event loop stalled for %.0f ms%s", stall * 1e3, waited)
            else:
                log.debug("the event loop stalled for %.1f ms%s", stall * 1e3, waited)
